package published

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/plan"
)

// TestMoEGlueMeasured: the H100's measured MoE glue reads (five presets,
// four parts each), and placer's cost of a permutation is its traffic by
// hand: Qwen3-30B-A3B at 4,096 tokens reads 4,096 x 2,048 BF16 and
// writes its 8 copies, forward; the backward twice that; each pass at
// the data-movement class's share of the HBM bandwidth, plus a launch.
// Plain PyTorch's glue (argsort, index_select, index_add) is slower than
// the fused kernels placer costs: each measured part is above placer's.
func TestMoEGlueMeasured(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "measurements", "2026-11-26-h100-b", "kb-moe.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := ReadMoEBench(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 20 {
		t.Fatalf("%d parts, want 5 presets x 4", len(ms))
	}
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	h := p.Hardware
	for _, c := range CheckMoE(ms, &p) {
		if c.Part == "host_sync" {
			if c.Predicted != 0 || c.Measured <= 0 {
				t.Errorf("%s host_sync: %+v", c.Model, c)
			}
			continue
		}
		if !(c.Measured > c.Predicted) {
			t.Errorf("%s %s: plain PyTorch %g s, placer's fused %g s", c.Model, c.Part, c.Measured, c.Predicted)
		}
		if c.Model == "qwen3-30b-a3b" && c.Part == "permute" {
			bytes := 4096*2048*2.0 + 8*4096*2048*2.0
			bw := h.MemBandwidth * h.MemEff[graph.ClassDataMovement]
			if want := 2*h.Launch + 3*bytes/bw; math.Abs(c.Predicted/want-1) > 1e-9 {
				t.Errorf("qwen3-30b-a3b permute: %g s, want %g", c.Predicted, want)
			}
		}
	}
}

// TestReadMoEBenchErrors: what cannot be read is said, naming the line.
func TestReadMoEBenchErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{`{"kind": "moe", "name": "x.router", "model": "nope", "tokens": 1}`, `model "nope" is not a preset`},
		{`{"kind": "moe", "name": "m.router", "model": "mixtral-8x7b", "hidden": 1, "experts": 8, "topk": 2, "tokens": 1}`, "not mixtral-8x7b's"},
		{`{"kind": "moe", "name": "m.fold", "model": "mixtral-8x7b", "hidden": 4096, "experts": 8, "topk": 2, "tokens": 4}`, `part "fold"`},
		{`{"kind": "moe", "name": "m.permute", "model": "mixtral-8x7b", "hidden": 4096, "experts": 8, "topk": 2, "tokens": 4, "fwd_seconds": 0}`, "want a time above 0"},
		{`{"kind": "moe", "name": "m.host_sync", "model": "mixtral-8x7b", "hidden": 4096, "experts": 8, "topk": 2, "tokens": 0}`, "tokens 0"},
	} {
		if _, err := ReadMoEBench(strings.NewReader(c.text)); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "line 1") {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}

// FuzzReadMoEBench: any input is read or refused with an error, never a
// panic; what is read is a known part with times not below 0.
func FuzzReadMoEBench(f *testing.F) {
	f.Add(`{"kind": "moe", "name": "qwen3-30b-a3b.permute", "model": "qwen3-30b-a3b", "hidden": 2048, "experts": 128, "topk": 8, "tokens": 4096, "fwd_seconds": 0.00016, "fwd_bwd_seconds": 0.0007, "bwd_seconds": 0.00057}`)
	f.Add(`{"kind": "moe", "name": "mixtral-8x7b.host_sync", "model": "mixtral-8x7b", "hidden": 4096, "experts": 8, "topk": 2, "tokens": 4096, "seconds": 8e-05}`)
	f.Add(`{"kind": "moe", "name": "x", "error": "RuntimeError"}` + "\n" + `{"kind": "gemm"}`)
	f.Fuzz(func(t *testing.T, text string) {
		ms, err := ReadMoEBench(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, m := range ms {
			switch m.Part {
			case "router", "permute", "unpermute", "host_sync":
			default:
				t.Fatalf("part %q read", m.Part)
			}
			if m.Fwd < 0 || m.Bwd < 0 || m.Seconds < 0 || m.Tokens <= 0 {
				t.Fatalf("read %+v", m)
			}
		}
	})
}

// A moehost line of Qwen3-30B-A3B's row as one GPU sees it: 8,192 tokens,
// 16 local experts, measured by hand-picked times.
const qwenHostLine = `{"kind": "moehost", "name": "qwen3-30b-a3b.loop", "model": "qwen3-30b-a3b", "hidden": 2048, "ffn": 768, "experts": 128, "topk": 8, "ep": 8, "local_experts": 16, "tokens": 8192, "wall_fwd_seconds": 0.004, "wall_seconds": 0.012, "kernel_seconds": 0.003, "kernels": 300, "busy_share": 0.25, "tflops_wall": 50}`

// TestMoEHost: a whole eager MoE layer reads and is checked: its busy
// share is the GPU's busy time over the wall time (3 ms of 12: 25%), a
// line without a GPU's profile has none, and placer's cost of the layer
// is the same for both expert modes (it costs grouped GEMMs) and doubles
// with twice the tokens to within the launches' fixed share (all its
// kernels scale with the tokens but the experts' weights).
func TestMoEHost(t *testing.T) {
	cpu := strings.NewReplacer(`"name": "qwen3-30b-a3b.loop"`, `"name": "qwen3-30b-a3b.grouped"`, `, "kernel_seconds": 0.003, "kernels": 300, "busy_share": 0.25`, "").Replace(qwenHostLine)
	double := strings.Replace(qwenHostLine, `"tokens": 8192`, `"tokens": 16384`, 1)
	ms, err := ReadMoEHostBench(strings.NewReader(qwenHostLine + "\n" + cpu + "\n" + double + "\n" + `{"kind": "moe", "name": "x.router"}` + "\n" + `{"kind": "moehost", "name": "x.loop", "error": "OutOfMemoryError"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[0].Busy != 0.003 || ms[0].Kernels != 300 || ms[1].Mode != "grouped" || ms[1].Busy != 0 {
		t.Fatalf("read %+v", ms)
	}
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	cs := CheckMoEHost(ms, &p)
	if cs[0].BusyShare != 0.25 || cs[1].BusyShare != 0 || cs[0].Wall != 0.012 || cs[0].LocalExperts != 16 {
		t.Errorf("checks %+v", cs)
	}
	if !(cs[0].Predicted > 0) || cs[0].Predicted != cs[1].Predicted {
		t.Errorf("placer's layer: %g (loop) and %g (grouped), want the same, above 0", cs[0].Predicted, cs[1].Predicted)
	}
	if r := cs[2].Predicted / cs[0].Predicted; !(r > 1.8 && r <= 2) {
		t.Errorf("twice the tokens: %gx placer's time", r)
	}
	for _, c := range []struct{ text, want string }{
		{strings.Replace(qwenHostLine, `"model": "qwen3-30b-a3b"`, `"model": "nope"`, 1), `model "nope" is not a preset`},
		{strings.Replace(qwenHostLine, `"ffn": 768`, `"ffn": 64`, 1), "not qwen3-30b-a3b's"},
		{strings.Replace(qwenHostLine, `qwen3-30b-a3b.loop`, `qwen3-30b-a3b.fused`, 1), `mode "fused"`},
		{strings.Replace(qwenHostLine, `"local_experts": 16`, `"local_experts": 3`, 1), "local_experts 3"},
		{strings.Replace(qwenHostLine, `"wall_seconds": 0.012`, `"wall_seconds": 0.002`, 1), "the whole layer's above its forward's"},
		{strings.Replace(qwenHostLine, `"kernel_seconds": 0.003`, `"kernel_seconds": 0`, 1), "kernel_seconds 0"},
		{strings.Replace(qwenHostLine, `"tokens": 8192`, `"tokens": 0`, 1), "tokens 0"},
	} {
		if _, err := ReadMoEHostBench(strings.NewReader(c.text)); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "line 1") {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}

// FuzzReadMoEHostBench: any input is read or refused with an error,
// never a panic; what is read is a known mode with a wall time above its
// forward's and a busy time not below 0.
func FuzzReadMoEHostBench(f *testing.F) {
	f.Add(qwenHostLine)
	f.Add(`{"kind": "moehost", "name": "gpt-oss-120b.grouped", "model": "gpt-oss-120b", "hidden": 2880, "ffn": 2880, "experts": 128, "topk": 4, "ep": 8, "local_experts": 16, "tokens": 16384, "wall_fwd_seconds": 0.01, "wall_seconds": 0.03}`)
	f.Add(`{"kind": "moehost", "name": "x", "error": "RuntimeError"}` + "\n" + `{"kind": "gemm"}`)
	f.Fuzz(func(t *testing.T, text string) {
		ms, err := ReadMoEHostBench(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, m := range ms {
			if (m.Mode != "loop" && m.Mode != "grouped") || !(m.Wall > m.WallFwd) || m.WallFwd <= 0 || m.Busy < 0 || m.Tokens <= 0 || m.LocalExperts <= 0 {
				t.Fatalf("read %+v", m)
			}
		}
	})
}
