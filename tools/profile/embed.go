package profiletool

import "embed"

// Scripts are measure.py and llama.py.
//
//go:embed measure.py llama.py
var Scripts embed.FS
