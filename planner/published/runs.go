package published

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
)

// readRuns is a runs.csv's records by column name.
func readRuns(name string, b []byte) []map[string]string {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		panic(fmt.Sprintf("measurements/%s/runs.csv: %v", name, err)) // embedded, checked by its test
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out
}

func mustInt(name string, r map[string]string, k string) int {
	v, err := strconv.Atoi(r[k])
	if err != nil {
		panic(fmt.Sprintf("measurements/%s/runs.csv: %s %q: %v", name, k, r[k], err))
	}
	return v
}

func mustFloat(name string, r map[string]string, k string) float64 {
	v, err := strconv.ParseFloat(r[k], 64)
	if err != nil {
		panic(fmt.Sprintf("measurements/%s/runs.csv: %s %q: %v", name, k, r[k], err))
	}
	return v
}

// bySweep groups rows into sweeps by their sweep column, in order, each
// sweep's set by its part.
func bySweep(rows []map[string]string, dev, val, source, stack string, row func(map[string]string) SweepRow) []Sweep {
	var out []Sweep
	at := map[string]int{}
	for _, r := range rows {
		i, ok := at[r["sweep"]]
		if !ok {
			set := dev
			if r["part"] == "validation" {
				set = val
			}
			at[r["sweep"]], i = len(out), len(out)
			out = append(out, Sweep{Name: r["sweep"], Set: set, Source: source, Unit: TokensPerGPU, Stack: stack})
		}
		out[i].Rows = append(out[i].Rows, row(r))
	}
	return out
}
