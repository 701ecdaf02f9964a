package jobs

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
)

// sigintAfter is a progress writer that cancels its context with a
// SIGINT's cause at the n-th finished row: the search is stopped where a
// person's Ctrl-C would stop it, at a known row.
type sigintAfter struct {
	n      int
	cancel context.CancelCauseFunc
}

func (c *sigintAfter) Write(b []byte) (int, error) {
	if c.n -= bytes.Count(b, []byte("\n")); c.n <= 0 {
		c.cancel(fail.Interrupted{Signal: syscall.SIGINT})
	}
	return len(b), nil
}

// TestSearchInterruptedSaysSo: a search stopped by SIGINT says so in
// its table's text and its --json twin (it said "(budget reached)" or
// nothing, and left out the rows not run without a word), names the rows
// not run (every reference with no row, the strategies users run, the
// joint space), each exactly once and none that has a row, and still
// returns its best so far.
func TestSearchInterruptedSaysSo(t *testing.T) {
	for _, after := range []int{0, 3} {
		ctx, cancel := context.WithCancelCause(context.Background())
		if after == 0 {
			cancel(fail.Interrupted{Signal: syscall.SIGINT})
		}
		rep, err := SearchGraph(ctx, GraphSearchOptions{Graph: inputs.GraphSpec{Workload: "trxl2"}, Cluster: inputs.ClusterSpec{GPUs: 2},
			Evals: 200, Progress: &sigintAfter{n: after, cancel: cancel}})
		cancel(nil)
		if err == nil || rep.Result.Method == "" {
			t.Fatalf("after %d rows: %v, answer %q; want the interruption and the best so far", after, err, rep.Result.Method)
		}
		if rep.Interrupted != "interrupted by SIGINT" {
			t.Errorf("after %d rows: Interrupted %q", after, rep.Interrupted)
		}
		var rows []string
		for _, r := range rep.Comparison.Rows {
			rows = append(rows, r.Method)
		}
		for _, want := range []string{"ddp", "fsdp", "the joint space"} {
			if !slices.Contains(rep.NotRun, want) {
				t.Errorf("after %d rows: not run %v, want %q in it (rows %v)", after, rep.NotRun, want, rows)
			}
		}
		for _, name := range rep.NotRun {
			if slices.Contains(rows, name) {
				t.Errorf("after %d rows: %q is said not run and has a row", after, name)
			}
		}
		if after == 0 && !slices.Contains(rep.NotRun, "single") {
			t.Errorf("stopped before any row: not run %v, want every reference", rep.NotRun)
		}
		if after == 3 && (slices.Contains(rep.NotRun, "single") || !slices.Contains(rep.NotRun, "m-etf")) {
			t.Errorf("stopped after 3 rows (%v): not run %v, want the rest of the references", rows, rep.NotRun)
		}
		var text bytes.Buffer
		if err := rep.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		out := text.String()
		if !strings.Contains(out, "INTERRUPTED by SIGINT: the table holds the rows that finished") || !strings.Contains(out, "not run:") || strings.Contains(out, "budget reached") {
			t.Errorf("after %d rows: the text does not say it was interrupted and what did not run:\n%s", after, out)
		}
	}
}
