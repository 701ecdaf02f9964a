// Package nanotron embeds the published training throughputs of
// measurements/nanotron as tools/measure/codebases/codebases_bench.py read them
// (README.md: the source, its commit and licence, and the validation
// part).
//
// May import: no other placer package
package nanotron

import _ "embed"

// RunsCSV is runs.csv as committed.
//
//go:embed runs.csv
var RunsCSV []byte
