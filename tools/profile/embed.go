// Package profiletool holds placer profile's Python measurements
// (measure.py, llama.py), embedded so that the placer binary runs them
// from anywhere: jobs.Profile writes them to a temporary folder and runs
// measure.py in the torch virtualenv.
package profiletool

import "embed"

// Scripts are measure.py and llama.py.
//
//go:embed measure.py llama.py
var Scripts embed.FS
