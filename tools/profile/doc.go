// Package profiletool holds placer profile's Python measurements
// (measure.py, llama.py), embedded so that the placer binary runs them
// from anywhere: jobs.Profile writes them to a temporary folder and runs
// measure.py in the torch virtualenv.
//
// May import: no other placer package
package profiletool
