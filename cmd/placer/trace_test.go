package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestTraceDeterministic: the same eval writes the same trace bytes (link
// tracks named in sorted order), with one memory sample per device and
// time, times rounded to nanoseconds, and a flow from each transfer's
// producer kernel to the transfer and from the transfer to its consumers'
// kernels.
func TestTraceDeterministic(t *testing.T) {
	dir := t.TempDir()
	var traces [][]byte
	for i := 0; i < 3; i++ {
		p := filepath.Join(dir, "t.json")
		if code, _, errs := placer(t, "eval", "--workload", "trxl2", "--gpus", "4", "--topology", "hybrid-cube-mesh", "--placement", "round-robin", "--trace", p); code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, data)
	}
	if !bytes.Equal(traces[0], traces[1]) || !bytes.Equal(traces[0], traces[2]) {
		t.Fatal("the same eval wrote different traces")
	}
	// Args of metadata events are strings: decode them leniently.
	var raw struct {
		TraceEvents []json.RawMessage `json:"traceEvents"`
	}
	if err := json.Unmarshal(traces[0], &raw); err != nil {
		t.Fatal(err)
	}
	type key struct {
		tid int
		ts  float64
	}
	seen := map[key]bool{}
	starts, finishes, transfers := map[int]bool{}, map[int]bool{}, 0
	for _, r := range raw.TraceEvents {
		var e struct {
			Ph  string  `json:"ph"`
			TS  float64 `json:"ts"`
			TID int     `json:"tid"`
			ID  int     `json:"id"`
			Cat string  `json:"cat"`
		}
		json.Unmarshal(r, &e)
		if math.Abs(e.TS*1000-math.Round(e.TS*1000)) > 1e-6 {
			t.Fatalf("time %v not rounded to ns", e.TS)
		}
		switch e.Ph {
		case "C":
			k := key{e.TID, e.TS}
			if seen[k] {
				t.Fatalf("two memory samples of GPU %d at %v us", e.TID, e.TS)
			}
			seen[k] = true
		case "s":
			starts[e.ID] = true
		case "f":
			finishes[e.ID] = true
		case "X":
			if e.Cat == "transfer" {
				transfers++
			}
		}
	}
	if transfers == 0 || len(starts) < transfers {
		t.Fatalf("%d transfers, %d flows", transfers, len(starts))
	}
	for id := range starts {
		if !finishes[id] {
			t.Fatalf("flow %d has no end", id)
		}
	}
}
