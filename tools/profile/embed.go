package profiletool

import "embed"

// Scripts are measure.py, llama.py and fp8.py.
//
//go:embed measure.py llama.py fp8.py
var Scripts embed.FS
