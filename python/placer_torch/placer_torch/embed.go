package placertorch

import "embed"

// Files are the package's Python sources (*.py), its subpackage
// profile's (placer profile --workload's measurements) included.
//
//go:embed *.py profile/*.py
var Files embed.FS
