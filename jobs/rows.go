package jobs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
)

// writeRows writes every row's decision into folder dir (search and
// baselines --rows): for each row of the table that has one, a result
// file in the format --out writes for the answer (resultOf: eval and
// export read it as a placement), named by the row's method (rowFile),
// and last the index dir/rows.json (report.Rows), every row in table
// order with its figures and file, or why it has none. rows are the
// table's rows in b.Rows' order (b.Rows[i] is rows[i]'s line; each line
// written gets its file's path); answer names the row whose decision is
// the search's answer ("" for baselines). Each file is written
// atomically; the files an earlier index in dir listed and this one
// does not are removed, so the folder holds one run's rows.
//
// For a graph from PyTorch the file holds the realized decision (what
// its torch plan runs: export --to torch-plan writes that plan, eval
// scores it to the row's figure); a row whose decision no plan realizes
// gets no file, and its note says why.
func writeRows(dir string, p *optimize.Problem, b *placements.Baselines, rows []anchored.Row, answer string, seed uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--rows %s: %w", dir, err)
	}
	index := filepath.Join(dir, placements.RowsIndex)
	var stale []string
	if old, err := placements.ReadRows(index); err == nil {
		for _, e := range old.Rows {
			if e.File != "" && filepath.Base(e.File) == e.File {
				stale = append(stale, e.File)
			}
		}
	}
	g := p.Graph
	idx := placements.Rows{
		Format: placements.RowsFormat, Version: placements.RowsVersion, Graph: g.Name(), Ops: g.NumOps(),
		Hardware: b.Hardware, Devices: b.Devices, Topology: b.Topology, Objective: p.Objective.String(), Seed: seed,
		Answer: answer,
	}
	used := map[string]bool{placements.RowsIndex: true}
	written := map[string]bool{}
	for i, r := range rows {
		e := placements.RowEntry{Method: r.Name}
		if r.Result == nil {
			e.Note = tableRow(r, p).Error
			if e.Note == "" {
				e.Note = "no decision"
			}
			idx.Rows = append(idx.Rows, e)
			continue
		}
		res := *r.Result
		if p.Realize != nil {
			d, err := p.Realize(res.Decision)
			if err != nil {
				e.Note = "no torch plan runs its decision: " + err.Error()
				idx.Rows = append(idx.Rows, e)
				continue
			}
			res.Decision = d
		}
		e.StepTime, e.Objective, e.Valid = res.Eval.StepTime, p.Objective.Of(&res.Eval), p.Objective.Valid(&res.Eval)
		e.Strategy = res.Decision.Strategy.String()
		e.File = rowFile(r.Name, used)
		path := filepath.Join(dir, e.File)
		out := resultOf(p, *b, r.Name, &res, seed)
		if err := atomicfile.Write(path, func(w io.Writer) error { return report.JSON(w, out) }); err != nil {
			return err
		}
		written[e.File] = true
		if i < len(b.Rows) && b.Rows[i].Method == r.Name {
			b.Rows[i].File = path
		}
		idx.Rows = append(idx.Rows, e)
	}
	if err := atomicfile.Write(index, func(w io.Writer) error { return report.JSON(w, idx) }); err != nil {
		return err
	}
	for _, f := range stale {
		if !written[f] {
			os.Remove(filepath.Join(dir, f))
		}
	}
	b.RowsDir = dir
	return nil
}

// rowFile is the file name of the row called method in a --rows folder:
// the method with every character but letters, digits and - _ . + = , @
// replaced by _ ("go-scored dp=2,shard=fsdp" -> "go-scored_dp=2,shard=fsdp.json"),
// no leading dot, and -2, -3, ... after a name used already (compared
// without case: the folder may be on a case-insensitive file system).
// used holds the names taken, in lower case, and gets this one.
func rowFile(method string, used map[string]bool) string {
	var b strings.Builder
	for _, c := range method {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune("-_.+=,@", c):
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	base := strings.TrimLeft(b.String(), ".")
	if base == "" {
		base = "row"
	}
	name := base + ".json"
	for k := 2; used[strings.ToLower(name)]; k++ {
		name = fmt.Sprintf("%s-%d.json", base, k)
	}
	used[strings.ToLower(name)] = true
	return name
}
