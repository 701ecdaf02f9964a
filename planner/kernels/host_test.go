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
	f, err := os.Open(filepath.Join("..", "..", "measurements", "2026-11-26-h100-c", "host.jsonl"))
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

// TestOnGrace: the H100's measured host issued from a Grace CPU, by
// hand: GraceIssue = 37.08 / 13.48 = 2.750742 (TransformerEngine#2053's
// torch Linear, GB200 against DGX H100); Issue 14.04 x 2.750742 =
// 38.6204 us, IssueBwd 17.86 x = 49.1282 us, Launch 10.61 x = 29.1854
// us, Replay 30.82 x = 84.7779 us; Sync kept at 185.9 us.
func TestOnGrace(t *testing.T) {
	g := h100Host.OnGrace()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"ratio", GraceIssue, 2.750742},
		{"Issue", g.Issue, 38.6204e-6},
		{"IssueBwd", g.IssueBwd, 49.1282e-6},
		{"Launch", g.Launch, 29.1854e-6},
		{"Replay", g.Replay, 84.7779e-6},
		{"Sync", g.Sync, 185.9e-6},
	} {
		if math.Abs(c.got-c.want) > 1e-5*c.want {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	if (Host{}).OnGrace() != (Host{}) {
		t.Error("a host that keeps ahead is still one on Grace")
	}
}
