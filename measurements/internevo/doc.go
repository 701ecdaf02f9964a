// Package internevo embeds InternEvo's published training throughputs as
// tools/measure/codebases/codebases_bench.py read them (README.md: the source, its
// commit and licence, and the validation part).
//
// May import: no other placer package
package internevo

import _ "embed"

// RunsCSV is runs.csv as committed.
//
//go:embed runs.csv
var RunsCSV []byte
