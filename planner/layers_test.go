package planner

import (
	"github.com/placer/placer/planner/codebases"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// namedLayers is layer costs under another name: fused's under name.
type namedLayers struct {
	codebases.Fused
	name string
}

func (n namedLayers) Name() string { return n.name }

// layerRegistry is a registry of lcs in order (cost.NewRegistry).
func layerRegistry(lcs ...LayerCoster) (*cost.Registry, error) {
	ps := make([]cost.Plugin, len(lcs))
	for i, lc := range lcs {
		ps[i] = lc
	}
	return cost.NewRegistry(ps...)
}

// TestLayerRegistry: the registry takes each name once, refusing a
// second registration of a name (whatever the type) and an empty name,
// and keeps the in-tree stacks' layer costs in order.
func TestLayerRegistry(t *testing.T) {
	for _, c := range []struct {
		name    string
		lcs     []LayerCoster
		want    string // the names registered, or the error's words
		refused bool
	}{
		{"in-tree", []LayerCoster{codebases.Fused{}, codebases.LlamaPy{Eager: codebases.Eager{Code: eager.LayerLlamaPy}}, codebases.HF{Eager: codebases.Eager{Code: eager.LayerHF}}, codebases.Titan{Eager: codebases.Eager{Code: eager.LayerTitan}}},
			"fused, llama.py, transformers, torchtitan", false},
		{"two names", []LayerCoster{codebases.Fused{}, namedLayers{name: "fused-slow"}}, "fused, fused-slow", false},
		{"duplicate type", []LayerCoster{codebases.Fused{}, codebases.Fused{}}, `plug-in "fused" registered twice`, true},
		{"duplicate name, another type", []LayerCoster{codebases.HF{Eager: codebases.Eager{Code: eager.LayerHF}}, namedLayers{name: plan.LayersHF}}, `plug-in "transformers" registered twice`, true},
		{"no name", []LayerCoster{namedLayers{}}, "has no name", true},
	} {
		r, err := layerRegistry(c.lcs...)
		switch {
		case c.refused && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		case !c.refused && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.refused && r.Names() != c.want:
			t.Errorf("%s: registered %q, want %q", c.name, r.Names(), c.want)
		}
	}
	if got, want := codebases.Registered.Names(), "fused, llama.py, transformers, torchtitan, torchtitan-compiled"; got != want {
		t.Errorf("codebases.Registered: %q, want %q", got, want)
	}
}

// TestOneCodeBaseAStack: every named stack, run eager (compile=off) or
// compiled, is run by exactly one registered code base's declaration
// (When.Runs), the one the framework chooses (layerCoster): an eager
// stack's own layers, torchtitan's compiled blocks for torchtitan
// compiled, the fused kernels for every other stack compiled.
func TestOneCodeBaseAStack(t *testing.T) {
	bases := cost.Each[cost.CodeBase](codebases.Registered)
	for _, ns := range plan.Stacks {
		for _, eager := range []bool{false, true} {
			st := ns.Settings
			st.Eager = eager
			var runs []string
			for _, b := range bases {
				if b.When().Runs(&st) {
					runs = append(runs, b.Name())
				}
			}
			want := plan.LayersFused
			switch {
			case eager && st.Layers == "":
				want = plan.LayersLlamaPy
			case eager:
				want = st.Layers
			case st.Layers == plan.LayersTitan:
				want = codebases.LayersTitanCompiled
			}
			if len(runs) != 1 || runs[0] != want || layerCoster(&st).Name() != want {
				t.Errorf("%s, eager %t: run by %q (layerCoster %q), want %q alone", ns.Name, eager, runs, layerCoster(&st).Name(), want)
			}
		}
	}
}

// TestCodeBasePrices: of the registered code bases exactly one prices a
// plan's shard, the one whose layer costs its stack runs: the fused
// kernels' by default, torchtitan's compiled blocks for torchtitan
// compiled (codebases.TitanCompiled, registered as torchtitan-compiled),
// each eager stack's own otherwise.
func TestCodeBasePrices(t *testing.T) {
	for strategy, want := range map[string]string{
		"dp=8":                              plan.LayersFused,
		"dp=8,stack=torch-eager":            plan.LayersLlamaPy,
		"dp=8,stack=hf-eager":               plan.LayersHF,
		"dp=8,fsdp=on,stack=torchtitan-0.2": plan.LayersTitan,
		"dp=8,fsdp=on,stack=torchtitan-0.2,compile=on": codebases.LayersTitanCompiled,
	} {
		c := stackCoster(t, "llama3-8b:seq=8192,batch=16", strategy, "grand-teton:1,attention=flash")
		if got := codebases.Registered.Priced(&c.Shard); !reflect.DeepEqual(got, []string{want}) {
			t.Errorf("%s: priced by %q, want %q alone", strategy, got, want)
		}
	}
}

// TestTitanCompiledOutput: torchtitan compiled (compile=on) compiles its
// TransformerBlocks only, so a plan's blocks are the fused kernels' (with
// the rotary embedding's that Inductor leaves, titanRotary, and its fused
// residual adds and norms, titanResidualNorms) and its output layer and loss torchtitan's eager ones (eagerOutput of
// LayerTitan), with loss_parallel at tp=4 as without tensor parallelism;
// before, the whole model was costed as Megatron-Core's fused layers.
func TestTitanCompiledOutput(t *testing.T) {
	for _, strategy := range []string{"dp=8,fsdp=on,stack=torchtitan-0.2,compile=on", "tp=4,dp=2,sp=on,stack=torchtitan-0.2,compile=on"} {
		c := stackCoster(t, "llama3-8b:seq=8192,batch=16", strategy, "grand-teton:1,attention=flash")
		lc := layerCoster(&c.Plan.Run)
		if _, ok := lc.(codebases.TitanCompiled); !ok {
			t.Fatalf("%s: layer costs %T, want codebases.TitanCompiled", strategy, lc)
		}
		gotF, gotB := lc.Output(c.blocks())
		wantF, wantB := codebases.EagerOutput(c.blocks(), eager.LayerTitan)
		megF, _ := c.fusedOutput()
		if gotF != wantF || gotB != wantB || gotF == megF {
			t.Errorf("%s: output %+v, %+v; want torchtitan's eager %+v, %+v (not Megatron-Core's %+v)", strategy, gotF, gotB, wantF, wantB, megF)
		}
		dF, dB := lc.Dense(c.blocks())
		fF, fB := codebases.Fused{}.Dense(c.blocks())
		rf, rb, _ := codebases.TitanRotary(c.blocks())
		fF, fB = fF.Plus(c.RunAll(rf...)), fB.Plus(c.RunAll(rb...))
		tf, tb, nf, nb := codebases.TitanResidualNorms(c.blocks())
		fF = fF.Plus(c.RunAll(tf...)).Plus(cost.Scale(c.RunAll(nf...), -1))
		fB = fB.Plus(c.RunAll(tb...)).Plus(cost.Scale(c.RunAll(nb...), -1))
		for _, pr := range codebases.TitanProjections(c.blocks()) {
			fF = fF.Plus(c.RunAll(pr.TitanF...)).Plus(cost.Scale(c.RunAll(pr.FusedF...), -1))
			fB = fB.Plus(c.RunAll(pr.TitanB...)).Plus(pr.InNorm).Plus(cost.Scale(c.RunAll(pr.FusedB...), -1))
		}
		ua, uf := codebases.TitanUnfusedBwd(c.blocks())
		fB = fB.Plus(ua).Plus(uf)
		if math.Abs(dF.Busy-fF.Busy) > 1e-12 || math.Abs(dB.Busy-fB.Busy) > 1e-12 || dF.Launches != fF.Launches || dB.Launches != fB.Launches {
			t.Errorf("%s: blocks %+v, %+v; want the fused kernels' and the rotary's %+v, %+v", strategy, dF, dB, fF, fB)
		}
	}
}

// TestTitanSACCompiled: torchtitan's per-op selective checkpointing in a
// compiled block recomputes wk, wo and w3 (every second mm), the norms and
// SwiGLU's product, not SDPA (saved), by hand on Llama 3 8B, BF16, 16,384
// tokens a GPU (hidden 4,096, 8 key-value heads of 128: wk 1,024 wide; FFN
// 14,336): wk 2 x 16,384 x 4,096 x 1,024 FLOPs, wo 2 x 16,384 x 4,096 x
// 4,096, w3 2 x 16,384 x 4,096 x 14,336. With tp=2 and sp=on wo's
// reduce-scatter is saved and wo is not run again, the rest at half width
// on the norms' sequence shard. The backward with recompute=selective is
// the one with recompute=none plus these and, with sp=on, the all-gathers
// of wq's, wk's, wv's and w1's, w3's input for their weight gradients
// (titanUnfusedBwd: none saves the gathered input); Megatron-Core's selective
// recomputation (the core attention) is what it was before.
func TestTitanSACCompiled(t *testing.T) {
	const n, h, kw, f = 16384.0, 4096.0, 1024.0, 14336.0
	for _, c := range []struct {
		strategy string
		T        float64
		wo       bool
	}{
		{"dp=8,mbs=2,fsdp=on,stack=torchtitan-0.2,compile=on", 1, true},
		{"tp=2,dp=4,mbs=2,sp=on,fsdp=on,stack=torchtitan-0.2,compile=on", 2, false},
	} {
		sel := stackCoster(t, "llama3-8b:seq=8192,batch=16", c.strategy+",recompute=selective", "grand-teton:1,attention=flash")
		none := stackCoster(t, "llama3-8b:seq=8192,batch=16", c.strategy, "grand-teton:1,attention=flash")
		sp := 1 / c.T
		act := n * h * 2
		norm := sel.Run(kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp})
		attn := norm.Plus(sel.Run(sel.GEMM(2*n*h*kw/c.T, act+h*kw/c.T*2, n*kw/c.T*2)))
		if c.wo {
			attn = attn.Plus(sel.Pair(sel.GEMM(2*n*h*h, n*h*2+h*h*2, act), roofline.AllReduce, act))
		}
		mlp := norm.Plus(sel.Run(sel.GEMM(2*n*h*f/c.T, act+h*f/c.T*2, n*f/c.T*2))).
			Plus(sel.Run(kernel{Class: graph.ClassElementwise, FLOPs: 6 * n * f / c.T, Read: 2 * n * f / c.T * 2, Writes: n * f / c.T * 2}))
		gotA, gotM := codebases.TitanSAC(sel.blocks())
		if math.Abs(gotA.Busy-attn.Busy) > 1e-12 || math.Abs(gotM.Busy-mlp.Busy) > 1e-12 || gotA.Launches != attn.Launches || gotM.Launches != mlp.Launches {
			t.Errorf("%s: recomputed %+v, %+v; want %+v, %+v", c.strategy, gotA, gotM, attn, mlp)
		}
		_, bSel := layerCoster(&sel.Plan.Run).Dense(sel.blocks())
		_, bNone := layerCoster(&none.Plan.Run).Dense(none.blocks())
		_, _, rr := codebases.TitanRotary(sel.blocks())
		attn = attn.Plus(sel.RunAll(rr...))
		gathers := 0.0
		if c.T > 1 {
			ua, uf := codebases.TitanUnfusedBwd(none.blocks()) // the gathers none does not run, negative
			gathers = -(ua.Busy + uf.Busy)
		}
		// and the copies that lay out the second gathers (TitanSeqCopies:
		// at T > 1 recompute=selective's backward copies them, none's not).
		_, sa, _, sm := codebases.TitanSeqCopies(sel.blocks())
		_, na, _, nm := codebases.TitanSeqCopies(none.blocks())
		gathers += sa.Busy + sm.Busy - na.Busy - nm.Busy
		if want := bNone.Busy + attn.Busy + mlp.Busy + gathers; math.Abs(bSel.Busy-want) > 1e-9 {
			t.Errorf("%s: backward %g, want %g (recompute=none's %g and the recomputed ops)", c.strategy, bSel.Busy, want, bNone.Busy)
		}
	}
	// Megatron-Core's stack recomputes the core attention.
	meg := stackCoster(t, "llama3-8b:seq=8192,batch=16", "dp=8,mbs=2,recompute=selective", "grand-teton:1,attention=flash")
	if _, _, rec := meg.attnBlock(); rec.Busy == 0 {
		t.Error("the default stack's selective recomputation is empty; want the core attention")
	}
}

// TestTitanRotaryByHand lists the kernels Inductor leaves of torchtitan's
// complex rotary embedding and repeat_kv, Llama 3 8B (32 query heads, 8
// key/value heads of 128) at 16,384 tokens a micro-batch (2 x 8,192):
// Q's 67,108,864 elements, K's and V's 16,777,216, freqs_cis 8,192 x 64
// complex64 = 4,194,304 bytes; at tp=2 each half.
func TestTitanRotaryByHand(t *testing.T) {
	const fr = 4194304.0
	ew, red := graph.ClassElementwise, graph.ClassReduction
	k := func(cl graph.Class, x, r, w float64) kernel { return kernel{Class: cl, FLOPs: x, Read: r, Writes: w} }
	for _, c := range []struct {
		strategy     string
		q, kv        float64
		copyF, copyB float64 // TitanSeqCopies' launches
	}{
		{"dp=8,mbs=2,fsdp=on,stack=torchtitan-0.2,compile=on", 67108864, 16777216, 0, 0},
		// tp=2, sp=on, 2 samples a micro-batch: each half copies for its
		// gather and its scatter forward, its output gradient's gather
		// backward (TestTitanSeqCopiesByHand).
		{"tp=2,dp=4,mbs=2,sp=on,fsdp=on,stack=torchtitan-0.2,compile=on", 33554432, 8388608, 4, 2},
	} {
		q, kv := c.q, c.kv
		wantF := []kernel{
			k(ew, q, 2*q, 4*q), k(ew, 3*q, 4*q+fr, 4*q), k(ew, q, 4*q, 2*q), // Q: float, complex mul, type_as
			k(ew, kv, 2*kv, 4*kv), k(ew, 3*kv, 4*kv+fr, 4*kv), k(ew, q, 4*kv, 2*q), // K: its type_as fused with repeat_kv
			k(ew, q, 2*kv, 2*q), // V's repeat_kv
		}
		wantB := []kernel{
			k(red, q, 2*q, 2*kv), // V's repeats summed
			k(red, q, 2*q, 4*kv), // K's summed, cast to FP32
			k(ew, 0, fr, fr),     // conj(freqs_cis) resolved
			k(ew, 3*kv, 4*kv+fr, 4*kv), k(ew, kv, 4*kv, 2*kv),
			k(ew, q, 2*q, 4*q), k(ew, 3*q, 4*q+fr, 4*q), k(ew, q, 4*q, 2*q),
		}
		cs := stackCoster(t, "llama3-8b:seq=8192,batch=16", c.strategy, "grand-teton:1,attention=flash")
		f, b, r := codebases.TitanRotary(cs.blocks())
		if !reflect.DeepEqual(f, wantF) || !reflect.DeepEqual(b, wantB) || !reflect.DeepEqual(r, wantF) {
			t.Errorf("%s:\nforward %v\nwant    %v\nbackward %v\nwant     %v\nrecomputed %v", c.strategy, f, wantF, b, wantB, r)
		}
		// The compiled block runs them; Megatron-Core's fused block does
		// not. With titanResidualNorms' swap: forward 7 + 3 - 4, backward
		// 8 + 2 x 3 - 4 (hidden 4,096 < 8,448: split weight gradients);
		// with titanProjections' separate GEMMs forward 3 - 1 and 2 - 1
		// more, backward 6 - 2 and 4 - 2 (TestTitanProjectionsByHand).
		fc, bc := layerCoster(&cs.Plan.Run).Dense(cs.blocks())
		a, m := cost.Half(cs.attnBlock()), cost.Half(cs.mlpBlock())
		fw, bw := cs.Join(a, m, false)
		if d, w := fc.Launches-fw.Launches, 6.0+3+c.copyF; d != w {
			t.Errorf("%s: forward launches %g more than the fused block's, want %g", c.strategy, d, w)
		}
		// With tp=2 (no recomputation) the two gradients' sums add a
		// launch each half and the all-gathers for the weight gradients,
		// which go, take one each (TestTitanUnfusedBwdByHand).
		if d, w := bc.Launches-bw.Launches, 10.0+6+c.copyB; d != w {
			t.Errorf("%s: backward launches %g more than the fused block's, want %g", c.strategy, d, w)
		}
	}
}

// TestTitanResidualNormsByHand lists a compiled torchtitan block's
// residual adds and RMS norms as Inductor fuses them, and the fused
// blocks' that they replace, by hand: Llama 3 8B (hidden 4,096) at 16,384
// tokens, one activation 16,384 x 4,096 x 2 = 134,217,728 bytes; at tp=2
// sp=on on half the tokens; Llama 3.1 405B (hidden 16,384, at or above
// 8,448) has one weight-gradient kernel a norm, not two.
func TestTitanResidualNormsByHand(t *testing.T) {
	rd, ew := graph.ClassReduction, graph.ClassElementwise
	k := func(cl graph.Class, x, r, w float64) kernel { return kernel{Class: cl, FLOPs: x, Read: r, Writes: w} }
	for _, c := range []struct {
		workload, strategy string
		nh, a              float64 // tokens x hidden on the GPU, one activation's bytes
		split              bool
	}{
		{"llama3-8b:seq=8192,batch=16", "dp=8,mbs=2,fsdp=on,stack=torchtitan-0.2,compile=on", 67108864, 134217728, true},
		{"llama3-8b:seq=8192,batch=16", "tp=2,dp=4,mbs=2,sp=on,fsdp=on,stack=torchtitan-0.2,compile=on", 33554432, 67108864, true},
		{"llama3.1-405b:seq=8192,batch=16", "tp=8,pp=2,dp=1,mbs=1,sp=on,stack=torchtitan-0.2,compile=on", 8192 * 16384 / 8, 8192 * 16384 / 8 * 2, false},
	} {
		nh, a := c.nh, c.a
		norm, resid := k(rd, 8*nh, a, a), k(ew, 3*nh, 2*a, 1.5*a)
		wantTF := []kernel{norm, k(rd, 9*nh, 2*a, 2*a), k(ew, nh, 2*a, a)}
		dx, dw := k(rd, 10*nh, 3*a, a), []kernel{k(rd, 2*nh, 2*a, 0)}
		if c.split {
			dw = append(dw, k(rd, 0, 0, 0))
		}
		wantTB := append(append(append([]kernel{dx}, dw...), dx), dw...)
		wantFF := []kernel{norm, resid, norm, resid}
		wantFB := []kernel{cost.Twice(resid), cost.Twice(norm), cost.Twice(resid), cost.Twice(norm)}
		cluster := "grand-teton:1,attention=flash"
		if !c.split {
			cluster = "grand-teton:2,attention=flash"
		}
		cs := stackCoster(t, c.workload, c.strategy, cluster)
		tf, tb, ff, fb := codebases.TitanResidualNorms(cs.blocks())
		if !reflect.DeepEqual(tf, wantTF) || !reflect.DeepEqual(tb, wantTB) || !reflect.DeepEqual(ff, wantFF) || !reflect.DeepEqual(fb, wantFB) {
			t.Errorf("%s %s:\n%v\n%v\n%v\n%v\nwant\n%v\n%v\n%v\n%v", c.workload, c.strategy, tf, tb, ff, fb, wantTF, wantTB, wantFF, wantFB)
		}
	}
}
