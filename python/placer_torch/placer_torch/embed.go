package placertorch

import "embed"

// Files are the package's Python sources (*.py).
//
//go:embed *.py
var Files embed.FS
