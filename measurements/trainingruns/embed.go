package trainingruns

import _ "embed"

// RunsCSV is runs.csv as committed.
//
//go:embed runs.csv
var RunsCSV []byte
