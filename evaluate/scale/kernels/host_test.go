package kernels

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestHostMeasured: H100's host rates are what kernelbench's
// host section measured on the lent H100
// (measurements/2026-11-26-h100-c/host.jsonl), to four figures.
func TestHostMeasured(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "..", "measurements", "2026-11-26-h100-c", "host.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Name   string   `json:"name"`
			Host   *float64 `json:"host_seconds"`
			Added  *float64 `json:"added_seconds"`
			Replay *float64 `json:"host_seconds_per_replay"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		switch {
		case l.Host != nil:
			got[l.Name] = *l.Host
		case l.Added != nil:
			got[l.Name] = *l.Added
		case l.Replay != nil:
			got[l.Name] = *l.Replay
		}
	}
	h := H100.Host
	for _, c := range []struct {
		name string
		want float64
	}{{"issue.mul_autograd", h.Issue}, {"issue.backward_node", h.IssueBwd}, {"sync.behind_kernel", h.Sync}, {"graph.add_", h.Replay}, {"issue.add_", h.Launch}} {
		m, ok := got[c.name]
		if !ok || math.Abs(m-c.want) > 5e-4*m {
			t.Errorf("%s: measured %g s, H100 has %g", c.name, m, c.want)
		}
	}
}
