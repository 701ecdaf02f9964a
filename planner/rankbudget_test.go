package planner

import (
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestRankBudgetPlans: rank-capacity=F on a plan, by hand. A SwiGLU
// model of 2 layers, hidden 1024, 16 experts of FFN 512, top-2, seq
// 4,096, on one DGX B200 at ep=8, dp=8, mbs=1, dispatcher=hybridep: each
// GPU dispatches 4,096 x 2 = 8,192 token copies a micro-batch and, at
// rank-capacity=1.25, keeps a buffer of 10,240 rows (int(8,192 x 1.25),
// a multiple of 256). The experts' saved tensors are counted at the
// stated load (imbalance 1: 8,192 rows) without the key and at the
// buffer's 10,240 rows with it: FC1's input (1,024), FC1's output (2 x
// 512), FC2's input (512) and FC2's output (1,024) a row, 3,584 BF16
// elements, 7,168 bytes: 2,048 rows x 7,168 x 2 layers = 29,360,128
// bytes more activations. cuda-graphs=full, refused over the dropless
// layer without the budget, is taken with it, and hides the host: the
// GPU waits on its host less than with the attention alone graphed
// (cuda-graphs=dense), at 256 tokens a micro-batch. Refused in one line: the budget without HybridEP,
// with capacity routing, with grouped-gemm=off, below the stated
// imbalance, on a model without experts.
func TestRankBudgetPlans(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=4096,batch=8,experts=16,topk=2,expert_ffn=512")
	p, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(s string) (Result, error) {
		st, err := plan.ParseStrategy(s)
		if err != nil {
			t.Fatal(err)
		}
		return Evaluate(m, st, p)
	}
	const base = "ep=8,dp=8,mbs=1,dispatcher=hybridep,imbalance=1"
	without, err := eval(base)
	if err != nil {
		t.Fatal(err)
	}
	with, err := eval(base + ",rank-capacity=1.25")
	if err != nil {
		t.Fatal(err)
	}
	if d := with.Activations - without.Activations; d != 29360128 {
		t.Errorf("rank-capacity=1.25: %d bytes more activations, want 29,360,128", d)
	}
	if _, err := eval(base + ",cuda-graphs=full"); err == nil || !strings.Contains(err.Error(), "rank-capacity") {
		t.Errorf("cuda-graphs=full over dropless MoE without the budget: %v, want the refusal naming rank-capacity", err)
	}
	// The host: at 256 tokens a micro-batch the layers are the host's.
	m = mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=256,batch=8,experts=16,topk=2,expert_ffn=512")
	dense, err := eval(base + ",rank-capacity=1.25,cuda-graphs=dense")
	if err != nil {
		t.Fatal(err)
	}
	full, err := eval(base + ",rank-capacity=1.25,cuda-graphs=full")
	if err != nil {
		t.Fatal(err)
	}
	if !(full.HostExposed < dense.HostExposed) || !(full.Step < dense.Step) {
		t.Errorf("graphed whole layers: host %g s, step %g s; attention alone: %g s, %g s", full.HostExposed, full.Step, dense.HostExposed, dense.Step)
	}
	for _, c := range []struct{ strategy, words string }{
		{"ep=8,dp=8,mbs=1,rank-capacity=1.25", "without dispatcher=hybridep"},
		{base + ",rank-capacity=1.25,routing=capacity:1", "with routing=capacity:1"},
		{base + ",rank-capacity=1.25,grouped-gemm=off", "grouped-gemm=off"},
		{"ep=8,dp=8,mbs=1,dispatcher=hybridep,imbalance=1.5,rank-capacity=1.25", "below imbalance=1.5"},
	} {
		_, err := eval(c.strategy)
		if err == nil || !strings.Contains(err.Error(), c.words) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming %q", c.strategy, err, c.words)
		}
	}
	dm := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=4096,batch=8")
	st, err := plan.ParseStrategy("dp=8,mbs=1,rank-capacity=1.25")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Evaluate(dm, st, p); err == nil || !strings.Contains(err.Error(), "rank-capacity on a model without experts") {
		t.Errorf("a dense model: %v", err)
	}
}
