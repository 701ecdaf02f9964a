package planner

import (
	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/cost"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// This file is docs/stacks.md's worked example of adding a stack: a new
// eager code base (its op list), its layer costs and its stack's row in
// one file (this one), and one registration line (addLayers' call in
// TestAddedStack; in the package, a line of layerCosters).
//
// The example is made up, not a code base placer models: layers.py's
// Block (eager.LayerLlamaPy) with its MLP's gate and up projections run
// as two GEMMs, as transformers' LlamaMLP writes them (gate_proj,
// up_proj), in place of layers.py's one gate-up GEMM and the cat of its
// two gradients.

// splitMLPCode is the example's code base, written with eager.Writer's
// parts: layers.py's attention half and loss, an MLP of two GEMMs.
type splitMLPCode struct{}

func (splitMLPCode) Name() string { return "layers.py's Block with gate and up apart" }

// Traits are layers.py's: its norm, rotary tables and [seq, batch]
// layout; two GEMMs in the attention half (QKV, output).
func (splitMLPCode) Traits() eager.Traits { return eager.LayerLlamaPy.Traits() }

func (splitMLPCode) Loss(w eager.Writer, v, vl float64) { eager.LayerLlamaPy.Loss(w, v, vl) }

// Recomputed is torchtitan's per-op policy on the example's GEMMs: of
// the QKV GEMM wk's share and the output projection (layers.py's), then
// gate (w1) saved, up (w3) run again, down (w2) saved.
func (splitMLPCode) Recomputed(i int, heads, kv float64) float64 {
	return [...]float64{kv / (heads + 2*kv), 1, 0, 1, 0}[i]
}

// Layer is layers.py's Block (eager's llamaPyLayer) with the MLP apart:
// forward gate GEMM, silu, up GEMM, mul, down GEMM, each output saved
// as layers.py's gate-up GEMM, silu and mul outputs are; backward as
// transformers' LlamaMLP's (Writer.SplitMLPB: the down GEMM's, the
// product's two muls, up's, silu's, gate's, the two input gradients
// added) in place of layers.py's cat and one gate-up GEMM.
func (splitMLPCode) Layer(w eager.Writer) {
	d := w.Dims()
	h, f, N, b := d.Hidden, d.FFN, d.Tokens, d.BF16
	Eq, Ek := N*d.Heads*d.HeadDim, N*d.KVHeads*d.HeadDim
	w.Norm()
	w.Op(w.Linear(h, (d.Heads+2*d.KVHeads)*d.HeadDim, true, eager.TPBefore)).Keep = eager.KeepSaved
	q := w.RotaryHalves(d.Heads)
	k := w.RotaryHalves(d.KVHeads)
	w.SDPACasts(q, k)
	sdpa := w.Attention(Ek)
	if !w.NoMLP() {
		w.Op(w.Linear(h, f, true, eager.TPBefore)).Keep = eager.KeepSaved
		w.Add("silu", graph.ClassElementwise, graph.BF16, N*f, N*f*b, N*f*b).Keep = eager.KeepSaved
		w.Op(w.Linear(h, f, true, eager.TPNone)).Keep = eager.KeepSaved
		w.Add("mul", graph.ClassElementwise, graph.BF16, N*f, 2*N*f*b, N*f*b).Keep = eager.KeepSaved
		w.Linear(f, h, false, eager.TPAfter)
	}
	w.CloseBlock()
	w.SplitMLPB()
	w.AttentionB(sdpa, Ek)
	w.SDPACastsB()
	w.RotaryHalvesB(d.KVHeads)
	w.RotaryHalvesB(d.Heads)
	w.Clone(d.KVHeads, Ek)
	w.Clone(d.KVHeads, Ek)
	w.Clone(d.Heads, Eq)
	w.Add("cat", graph.ClassDataMovement, graph.BF16, 0, (Eq+2*Ek)*b, (Eq+2*Ek)*b)
	w.LinearB(h, (d.Heads+2*d.KVHeads)*d.HeadDim, true, eager.TPBefore, eager.TPBwdBefore)
	w.NormB(true)
}

// splitMLPLayers are the example's layer costs: its code base's layers
// priced as every eager stack's (codebases.Eager), layers.py's Experts for
// an MoE block, and its stack's row (stackRows). Not a stepTracer: its
// one-GPU memory is not traced, having no measured error of its own.
type splitMLPLayers struct{ codebases.Eager }

var _ codebases.EagerStack = splitMLPLayers{}

func (splitMLPLayers) Name() string { return "llama.py-split-mlp" }

// When is the example's declaration: a stack run eager whose layers are
// its.
func (splitMLPLayers) When() cost.When {
	return cost.When{cost.Setting("compile=off", func(st *plan.Settings) bool { return st.Eager }),
		cost.Setting("layers=llama.py-split-mlp", func(st *plan.Settings) bool { return st.Layers == "llama.py-split-mlp" })}
}

func (l splitMLPLayers) MoE(b cost.Blocks) (fwd, bwd phase) {
	impl, loop := l.Experts(b.Base().Plan.Run)
	return l.MoEWith(b, impl, loop)
}

func (splitMLPLayers) Experts(plan.Settings) (eager.MoEImpl, bool) { return eager.MoELlamaPy, false }

func (splitMLPLayers) Stacks() []plan.NamedStack {
	return []plan.NamedStack{{Name: "torch-eager-split-mlp",
		Settings: plan.Settings{Dispatcher: plan.DispatcherAllToAll, Graphs: plan.GraphsOff, Eager: true, Layers: "llama.py-split-mlp"},
		Source:   "the worked example of docs/stacks.md: torch-eager-bf16 with the MLP's gate and up projections two GEMMs"}}
}

// addLayers registers layer costs lc and the stacks they bring for the
// test, as their line in codebases.Registered does in the package, undone when
// the test ends.
func addLayers(t *testing.T, lc LayerCoster) {
	t.Helper()
	stacks, costers := slices.Clip(plan.Stacks), *codebases.Registered
	t.Cleanup(func() { plan.Stacks, *codebases.Registered = stacks, costers })
	if err := codebases.Registered.Register(lc); err != nil {
		t.Fatal(err)
	}
	if err := codebases.AddStacks(lc); err != nil {
		t.Fatal(err)
	}
}

// opTotals are an op list's launches, GEMM FLOPs and bytes, forward
// (0) and backward (1).
type opTotals struct{ launches, gemmFLOPs, read, written [2]float64 }

func totals(ops []eager.Op) opTotals {
	var t opTotals
	for _, o := range ops {
		d := 0
		if o.Backward {
			d = 1
		}
		t.launches[d] += float64(o.Launches)
		t.read[d] += o.Read
		t.written[d] += o.Written
		if o.Class == graph.ClassMatMul && !o.Attn {
			t.gemmFLOPs[d] += o.FLOPs
		}
	}
	return t
}

// TestExampleOps: the example's op list differs from layers.py's by its
// MLP alone, worked by hand at hidden h 256, FFN f 512, N = 2 x 64 =
// 128 tokens, BF16 weights (b 2 bytes, no casts), one GPU.
//   - forward: one GEMM more (gate and up for gate-up): +1 launch; the
//     same FLOPs (2Nhf twice for 2N·h·2f), the norm's output read
//     twice: +N·h·b = 65,536 bytes read, the same written;
//   - backward: layers.py's cat (2Nfb read, 2Nfb written) and one
//     weight-gradient GEMM pair with its copy_ into the .grad, for two
//     pairs with two copy_s and the add of the two input gradients
//     (N·h elements: 2Nhb read, Nhb written): -1 + 3 + 1 = +3 launches;
//     the same FLOPs; the weight-gradient GEMMs read the layer's input
//     once more (+Nhb), the input-gradient GEMMs write two N·h
//     gradients for one (+Nhb); the copy_s the same bytes. Read
//     -2Nfb + 2Nhb + Nhb = -262,144 + 196,608 = -65,536 bytes, written
//     -2Nfb + Nhb + Nhb = -131,072.
//
// Under autocast (FP32 weights) each GEMM casts its weight and its
// input: one weight cast, one input cast more forward, one gradient
// cast and one input-gradient cast more backward (+2, +2 more launches
// than the above).
func TestExampleOps(t *testing.T) {
	m := mustSpec(t, "llama3-8b:seq=64,batch=2")
	m.Hidden, m.Heads, m.KVHeads, m.FFN, m.Seq = 256, 4, 2, 512, 64
	for _, c := range []struct {
		fp32                   bool
		launches, read, writes [2]float64
	}{
		{false, [2]float64{1, 3}, [2]float64{65536, -65536}, [2]float64{0, -131072}},
		{true, [2]float64{3, 5}, [2]float64{0, 0}, [2]float64{0, 0}},
	} {
		sh := eager.Shape{T: 1, Batch: 2, Seq: 64, FP32Weights: c.fp32, Layer: eager.LayerLlamaPy}
		parent := totals(eager.LayerOps(m, sh))
		sh.Layer = splitMLPCode{}
		split := totals(eager.LayerOps(m, sh))
		for d, dir := range []string{"forward", "backward"} {
			if got := split.launches[d] - parent.launches[d]; got != c.launches[d] {
				t.Errorf("fp32 %t %s: %+g launches, want %+g", c.fp32, dir, got, c.launches[d])
			}
			if split.gemmFLOPs[d] != parent.gemmFLOPs[d] {
				t.Errorf("fp32 %t %s: GEMM FLOPs %g, want layers.py's %g", c.fp32, dir, split.gemmFLOPs[d], parent.gemmFLOPs[d])
			}
			if c.fp32 {
				continue // the casts' bytes: not worked by hand here
			}
			if got := split.read[d] - parent.read[d]; got != c.read[d] {
				t.Errorf("%s: %+g bytes read, want %+g", dir, got, c.read[d])
			}
			if got := split.written[d] - parent.written[d]; got != c.writes[d] {
				t.Errorf("%s: %+g bytes written, want %+g", dir, got, c.writes[d])
			}
		}
	}
}

// TestAddedStack: a stack added in one file and one registration is
// chosen by stack=NAME and costs a plan from its code base's op list.
// Llama 3 8B at seq 8192 and batch 16 on one Grand Teton node, dp=8 and
// mbs 2 (one micro-batch a GPU; memory not traced, so the same model
// of it as torch-eager-bf16's): its layers launch 1 kernel more forward
// and 3 more backward than torch-eager-bf16's (TestExampleOps), its
// memory is torch-eager-bf16's, its stack line says it is a plain
// PyTorch loop's, and its step is not torch-eager-bf16's.
func TestAddedStack(t *testing.T) {
	addLayers(t, splitMLPLayers{codebases.Eager{Code: splitMLPCode{}}})
	m := mustSpec(t, "llama3-8b:seq=8192,batch=16")
	p, err := plan.ParsePod("grand-teton:1,power=off")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(strategy string) Result {
		s, err := plan.ParseStrategy(strategy)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base, split := eval("dp=8,mbs=2,stack=torch-eager-bf16"), eval("dp=8,mbs=2,stack=torch-eager-split-mlp")
	counts := regexp.MustCompile(`(\d+) kernels forward and (\d+) backward a layer`)
	kernels := func(r Result) (fwd, bwd int) {
		sm := counts.FindStringSubmatch(r.LayerCosting)
		if sm == nil {
			t.Fatalf("layer costing %q: no kernel counts", r.LayerCosting)
		}
		fwd, _ = strconv.Atoi(sm[1])
		bwd, _ = strconv.Atoi(sm[2])
		return fwd, bwd
	}
	bf, bb := kernels(base)
	sf, sb := kernels(split)
	if sf-bf != 1 || sb-bb != 3 {
		t.Errorf("kernels a layer %d + %d, want torch-eager-bf16's %d + %d and 1 + 3 more", sf, sb, bf, bb)
	}
	if !strings.Contains(split.LayerCosting, "layers.py's Block with gate and up apart, BF16 weights") {
		t.Errorf("layer costing %q does not name the example's code base", split.LayerCosting)
	}
	if split.Memory != base.Memory {
		t.Errorf("memory %d, want torch-eager-bf16's %d", split.Memory, base.Memory)
	}
	if split.Step == base.Step || split.LayerForward == base.LayerForward || split.LayerBackward == base.LayerBackward {
		t.Errorf("step %g s (a layer %g + %g), the same as torch-eager-bf16's: the op list is not the example's", split.Step, split.LayerForward, split.LayerBackward)
	}
	if got, want := split.Plan.Stack().String(), "torch-eager-split-mlp: a plain PyTorch loop, eager: its layers costed as the ATen ops eager PyTorch issues"; got != want {
		t.Errorf("stack line %q, want %q", got, want)
	}
}

// TestAddedStackRefused: the registration refuses the example's layer
// costs twice, its stack's name twice (brought by other layer costs, or
// already a stack), and a row that does not run the layer costs that
// bring it; the registries are as before each refusal.
func TestAddedStackRefused(t *testing.T) {
	addLayers(t, splitMLPLayers{codebases.Eager{Code: splitMLPCode{}}})
	n, ns := codebases.Registered.Names(), len(plan.Stacks)
	if err := codebases.Registered.Register(splitMLPLayers{}); err == nil || !strings.Contains(err.Error(), `"llama.py-split-mlp" registered twice`) {
		t.Errorf("the layer costs again: %v", err)
	}
	if err := codebases.AddStacks(splitMLPLayers{}); err == nil || !strings.Contains(err.Error(), `stack "torch-eager-split-mlp" named twice`) {
		t.Errorf("the stack again: %v", err)
	}
	if err := plan.AddStack(plan.NamedStack{Name: "hf-eager"}); err == nil || !strings.Contains(err.Error(), `stack "hf-eager" named twice`) {
		t.Errorf("an in-tree stack's name: %v", err)
	}
	if err := plan.AddStack(plan.NamedStack{Name: "Torch-Eager-X"}); err == nil {
		t.Error("a name in upper case added")
	}
	if err := codebases.AddStacks(wrongRow{}); err == nil || !strings.Contains(err.Error(), `runs layers "transformers"`) {
		t.Errorf("a row running other layers: %v", err)
	}
	if codebases.Registered.Names() != n || len(plan.Stacks) != ns {
		t.Errorf("layer costs %s and %d stacks after the refusals, want %s and %d", codebases.Registered.Names(), len(plan.Stacks), n, ns)
	}
}

// wrongRow is layer costs whose row names transformers' layers.
type wrongRow struct{ splitMLPLayers }

func (wrongRow) Name() string { return "wrong-row" }

func (wrongRow) Stacks() []plan.NamedStack {
	return []plan.NamedStack{{Name: "torch-eager-wrong", Settings: plan.Settings{Eager: true, Layers: plan.LayersHF}}}
}
