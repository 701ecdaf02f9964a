package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// tieWorkload is a small Llama on one DGX H100 whose search ends in a
// tie: six plans within 3% of the fastest, closer than dense BF16 DP's
// error, the fastest (mbs=8) not the cheapest to run (smaller
// micro-batches take less memory).
const tieWorkload = "llama:layers=16,hidden=2048,heads=16,seq=4096,vocab=32000,batch=64"

// searchJSON is placer search --json's answer, runners up and tie.
type searchJSON struct {
	Best    struct{ Strategy string } `json:"best"`
	Runners []struct {
		Strategy string
		Step     float64 `json:"step_s"`
	} `json:"runners_up"`
	Tied int `json:"tied_within_error"`
	Tie  *struct {
		Order []struct {
			Strategy string
			Step     float64 `json:"step_s"`
		}
		Answer string
	}
}

// TestSearchTie: placer search --tie end to end. By default the answer
// is the fastest plan and the tie is ordered by what is cheaper to run;
// --tie cheapest makes the tie's first the answer, what -o writes and
// what eval --placement then costs, the fastest back among the runners
// up; a bad value is a usage error.
func TestSearchTie(t *testing.T) {
	args := []string{"search", "--workload", tieWorkload, "--cluster", "dgx-h100:1", "--json", "-q"}
	var runs [2]searchJSON
	out := filepath.Join(t.TempDir(), "plan.json")
	for i, extra := range [][]string{nil, {"--tie", "cheapest", "-o", out}} {
		code, stdout, stderr := placer(t, append(args, extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		if err := json.Unmarshal([]byte(stdout), &runs[i]); err != nil {
			t.Fatal(err)
		}
		if runs[i].Tie == nil || runs[i].Tied < 2 || len(runs[i].Tie.Order) != runs[i].Tied {
			t.Fatalf("%v: no tie: %.400s", extra, stdout)
		}
	}
	fast, cheap := runs[0], runs[1]
	if fast.Tie.Answer != "fastest" || cheap.Tie.Answer != "cheapest" {
		t.Errorf("answers %q, %q", fast.Tie.Answer, cheap.Tie.Answer)
	}
	if fast.Tie.Order[0].Strategy == fast.Best.Strategy {
		t.Fatalf("the tie's cheapest is its fastest, %s: no test of --tie", fast.Best.Strategy)
	}
	if cheap.Best.Strategy != fast.Tie.Order[0].Strategy || cheap.Best.Strategy == fast.Best.Strategy {
		t.Errorf("--tie cheapest answers %s; the tie's cheapest is %s, the fastest %s", cheap.Best.Strategy, fast.Tie.Order[0].Strategy, fast.Best.Strategy)
	}
	if len(cheap.Runners) == 0 || cheap.Runners[0].Strategy != fast.Best.Strategy {
		t.Errorf("--tie cheapest: the fastest %s not the first runner up: %+v", fast.Best.Strategy, cheap.Runners)
	}
	code, stdout, stderr := placer(t, "eval", "--workload", tieWorkload, "--cluster", "dgx-h100:1", "--placement", out, "--json")
	if code != 0 || !strings.Contains(stdout, `"strategy": "`+cheap.Best.Strategy+`"`) {
		t.Errorf("eval --placement of -o: exit %d %s: not %s: %.300s", code, stderr, cheap.Best.Strategy, stdout)
	}
}
