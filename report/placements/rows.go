package placements

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/report"
)

// RowsFormat and RowsVersion identify the index of a table's rows'
// decisions (placer search and baselines --rows DIR: DIR/rows.json).
const (
	RowsFormat  = "placer-rows"
	RowsVersion = 1
	// RowsIndex is the index's file name in its folder.
	RowsIndex = "rows.json"
)

// Rows is the index of the folder --rows writes: one result file per
// row of the comparison table that has a decision (the format the
// answer's --out has, so `placer eval --placement` and `placer export
// --placement` read each), and for every row its method, its figures and
// its file, or why it has none.
type Rows struct {
	Format    string `json:"format"`
	Version   int    `json:"version"`
	Graph     string `json:"graph"`
	Ops       int    `json:"ops"`
	Hardware  string `json:"hardware"`
	Devices   int    `json:"devices"`
	Topology  string `json:"topology"`
	Objective string `json:"objective"`
	Seed      uint64 `json:"seed"`
	// Answer names the row whose decision is the search's answer (the
	// search's own row, or the row it did not improve on); "" for
	// baselines, which answer nothing.
	Answer string `json:"answer,omitempty"`
	// Rows are the table's rows in its order.
	Rows []RowEntry `json:"rows"`
}

// RowEntry is one row of the table in the index.
type RowEntry struct {
	Method string `json:"method"`
	// StepTime is the row's predicted step time (its result file's
	// step_time_s, and placer eval's of that file), Objective its value
	// of the table's objective, Valid whether it fits; zero without a
	// decision.
	StepTime  float64 `json:"step_time_s,omitempty"`
	Objective float64 `json:"objective,omitempty"`
	Valid     bool    `json:"valid"`
	// Strategy is the decision's strategy (decision.Strategy's spelling,
	// e.g. "dp=4,shard=fsdp"; "" for one replica).
	Strategy string `json:"strategy,omitempty"`
	// File is the row's result file, a name in the index's folder; ""
	// when the row has no decision (Note says why).
	File string `json:"file,omitempty"`
	Note string `json:"note,omitempty"`
}

// ReadRows reads an index written by --rows (DIR/rows.json).
func ReadRows(path string) (Rows, error) {
	data, err := bounded.ReadFile(path, bounded.Decision, "a rows index")
	if err != nil {
		return Rows{}, err
	}
	var r Rows
	if err := json.Unmarshal(data, &r); err != nil {
		return Rows{}, fmt.Errorf("%s: %w", path, err)
	}
	if r.Format != RowsFormat {
		return Rows{}, fmt.Errorf("%s: format %q, want %q", path, r.Format, RowsFormat)
	}
	if r.Version < 1 || r.Version > RowsVersion {
		return Rows{}, fmt.Errorf("%s: version %d, this placer reads %d", path, r.Version, RowsVersion)
	}
	return r, nil
}

// WriteRowsNote writes the line that says where b's rows' decisions went
// (--rows), nothing when they were not written.
func WriteRowsNote(w io.Writer, b Baselines) error {
	w, flush := report.FitLines(w)
	defer flush()
	if b.RowsDir == "" {
		return nil
	}
	n := 0
	for _, r := range b.Rows {
		if r.File != "" {
			n++
		}
	}
	_, err := fmt.Fprintf(w, "rows' decisions written to %s (%d of %d rows, one result file each; index %s)\n",
		b.RowsDir, n, len(b.Rows), filepath.Join(b.RowsDir, RowsIndex))
	return err
}
