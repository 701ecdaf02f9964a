package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/report/placements"
)

// TestRowFile: a row's file name is its method made safe for a file
// system, unique in its folder without regard to case, never the index's.
func TestRowFile(t *testing.T) {
	used := map[string]bool{placements.RowsIndex: true}
	for _, c := range []struct{ method, want string }{
		{"single", "single.json"},
		{"go-scored dp=2,shard=fsdp,bucket=1MiB", "go-scored_dp=2,shard=fsdp,bucket=1MiB.json"},
		{"tf-default+gp-dfs", "tf-default+gp-dfs.json"},
		{"metis@2gpu", "metis@2gpu.json"},
		{"../x/y", "_x_y.json"},
		{".hidden", "hidden.json"},
		{"rows", "rows-2.json"},
		{"Single", "Single-2.json"},
		{"", "row.json"},
		{"a:b*c", "a_b_c.json"},
	} {
		if got := rowFile(c.method, used); got != c.want {
			t.Errorf("rowFile(%q) = %q, want %q", c.method, got, c.want)
		}
	}
}

// TestBaselinesRows: baselines --rows writes every row's decision of the
// table, for an op graph without a meta file too; eval of each file is
// its row's figure, and a second run into the same folder removes the
// files of the rows it no longer has.
func TestBaselinesRows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rows")
	for _, c := range []struct {
		graph   string
		methods []string
	}{
		{torchCNN, nil},
		{"../examples/mlp.json", []string{"single", "metis", "m-etf", "expert"}},
		{torchCNN, []string{"single", "gpipe"}},
	} {
		gs, cs := inputs.GraphSpec{Path: c.graph}, inputs.ClusterSpec{GPUs: 2}
		b, err := Baselines(context.Background(), BaselinesOptions{Graph: gs, Cluster: cs, Methods: c.methods, Budget: 20, Seed: 1, Rows: dir})
		if err != nil {
			t.Fatal(err)
		}
		idx, err := placements.ReadRows(filepath.Join(dir, placements.RowsIndex))
		if err != nil {
			t.Fatal(err)
		}
		if b.RowsDir != dir || len(idx.Rows) != len(b.Rows) || idx.Answer != "" {
			t.Fatalf("%s: rows dir %q, %d rows in the index, %d in the table, answer %q", c.graph, b.RowsDir, len(idx.Rows), len(b.Rows), idx.Answer)
		}
		want := []string{placements.RowsIndex}
		for i, e := range idx.Rows {
			row := b.Rows[i]
			if e.Method != row.Method || (e.File == "") != (row.Error != "") {
				t.Errorf("%s: index row %d %+v, table's %s (error %q)", c.graph, i, e, row.Method, row.Error)
				continue
			}
			if e.File == "" {
				if e.Note != row.Error {
					t.Errorf("%s: row %s: note %q, the table's %q", c.graph, e.Method, e.Note, row.Error)
				}
				continue
			}
			want = append(want, e.File)
			ev, err := EvalGraph(context.Background(), GraphEvalOptions{Graph: gs, Cluster: cs, Placement: filepath.Join(dir, e.File)})
			if err != nil {
				t.Fatalf("%s: row %s: %v", c.graph, e.Method, err)
			}
			if ev.StepTime != row.StepTime || e.StepTime != row.StepTime {
				t.Errorf("%s: row %s: table %v s, index %v s, eval of its file %v s", c.graph, e.Method, row.StepTime, e.StepTime, ev.StepTime)
			}
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: folder holds %v, want %v", c.graph, got, want)
		}
	}
}

// TestEvalStrategyProgramOrder (held-out item 8): for a graph from
// PyTorch, eval of a placement without a priority list runs each
// device's ops in program order, as the torch plan does, with a
// strategy too: --placement single --strategy dp=N[,shard=...] is the
// ddp, fsdp and zero2 rows to the bit, and says so.
func TestEvalStrategyProgramOrder(t *testing.T) {
	gs := inputs.GraphSpec{Path: torchCNN}
	for _, gpus := range []int{2, 4} {
		cs := inputs.ClusterSpec{GPUs: gpus}
		b, err := Baselines(context.Background(), BaselinesOptions{Graph: gs, Cluster: cs, Methods: []string{"single", "ddp", "fsdp", "zero2"}, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		strategy := map[string]string{"single": "", "ddp": fmt.Sprintf("dp=%d", gpus),
			"fsdp": fmt.Sprintf("dp=%d,shard=fsdp", gpus), "zero2": fmt.Sprintf("dp=%d,shard=zero2", gpus)}
		for _, row := range b.Rows {
			e, err := EvalGraph(context.Background(), GraphEvalOptions{Graph: gs, Cluster: cs, Placement: "single", Strategy: strategy[row.Method]})
			if err != nil {
				t.Fatal(err)
			}
			if e.StepTime != row.StepTime || !strings.HasPrefix(e.Schedule, "program order") {
				t.Errorf("%d GPUs: eval --placement single --strategy %q: %v s, schedule %q; the %s row %v s",
					gpus, strategy[row.Method], e.StepTime, e.Schedule, row.Method, row.StepTime)
			}
		}
	}
}
