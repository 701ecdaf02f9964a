package planner

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/plan"
)

// TestGroupedByTokensPerExpert: the grouped expert GEMMs of five MoE
// presets' local experts, measured on a lent H100 at 8 to 4,096 tokens
// per expert (kernelbench --only tpe, measurements/2026-11-26-h100-c/
// shapes.jsonl: torch._grouped_mm, BF16, the up-and-gate projection
// [T, h] x [E, h, 2f] and the down projection [T, f] x [E, f, h]), against
// the dgx-h100 pod's cost of the same kernel: the roofline of its FLOPs
// over GroupedEff (whole waves of tiles at GroupedGEMM, which was set from
// one point of each preset, 8,192 tokens: TestH100GroupedMeasured) and its
// bytes, the experts' weights included. What it achieves over the 100
// points, not a target met: mean |error| 10.3%, the worst -31% (the down
// projection at 8 to 64 tokens an expert, where the weights' read binds
// and the kernel reaches 70% of the bandwidth); each point within 35%,
// the mean within 12%.
func TestGroupedByTokensPerExpert(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "measurements", "2026-11-26-h100-c", "shapes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The kernels were timed in bursts on a rested GPU: predicted at
	// the same clock.
	p, _ := plan.PodOf("dgx-h100", 8)
	p = p.AtBurst()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var sum float64
	var n int
	for sc.Scan() {
		var l struct {
			Kind    string  `json:"kind"`
			Name    string  `json:"name"`
			Model   string  `json:"model"`
			Hidden  float64 `json:"hidden"`
			FFN     float64 `json:"ffn"`
			Local   float64 `json:"local_experts"`
			TPE     float64 `json:"tokens_per_expert"`
			Seconds float64 `json:"seconds"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Kind != "tpe" || l.Seconds <= 0 {
			continue
		}
		h, fe, local := l.Hidden, l.FFN, l.Local
		rows := l.TPE * local
		var k kernel
		switch l.Name {
		case l.Model + ".fc1.grouped":
			k = kernel{Class: graph.ClassMatMul, FLOPs: 2 * rows * h * 2 * fe, Read: rows*h*bf16 + local*h*2*fe*bf16, Writes: rows * 2 * fe * bf16}
			k.FLOPs /= p.Kernels.GroupedEff(local, l.TPE, 2*fe)
		case l.Model + ".fc2.grouped":
			k = kernel{Class: graph.ClassMatMul, FLOPs: 2 * rows * fe * h, Read: rows*fe*bf16 + local*fe*h*bf16, Writes: rows * h * bf16}
			k.FLOPs /= p.Kernels.GroupedEff(local, l.TPE, h)
		default:
			continue
		}
		e := k.Time(&p.Hardware)/l.Seconds - 1
		if math.Abs(e) > 0.35 {
			t.Errorf("%s at %g tokens an expert: predicted %.1f us, measured %.1f (%+.0f%%)", l.Name, l.TPE, 1e6*k.Time(&p.Hardware), 1e6*l.Seconds, 100*e)
		}
		sum += math.Abs(e)
		n++
	}
	if n != 100 {
		t.Fatalf("%d grouped GEMMs measured, want 5 presets x 10 sizes x 2 projections", n)
	}
	if mean := sum / float64(n); mean > 0.12 {
		t.Errorf("mean |error| %.1f%% over %d grouped GEMMs, want at most 12%%", 100*mean, n)
	} else {
		t.Logf("mean |error| %.1f%% over %d grouped GEMMs", 100*mean, n)
	}
}
