package planner

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// cpuProfile is a CPU profile of model over procs processes holding
// layers, an embedding of 0.1 + 0.2 ms and a loss of 0.3 + 0.6 ms at
// tp 1, mbs 1 and the model's sequence, AdamW at 15 ns a parameter,
// written and read back as placer eval reads a file.
func cpuProfile(t *testing.T, model string, procs int, layers []profile.Layer) *profile.Profile {
	t.Helper()
	m, err := transformer.Parse(model)
	if err != nil {
		t.Fatal(err)
	}
	end := func(f, b float64) []profile.Layer {
		return []profile.Layer{{TP: 1, MBS: 1, Seq: m.Seq, Forward: f, Backward: b}}
	}
	p := profile.Profile{Format: profile.Format, Version: profile.Version, Kind: profile.KindLayers, Complete: true,
		Device:   profile.Device{Kind: "cpu", Name: "Intel(R) Xeon(R) Processor", Count: procs, Memory: 6e9, Threads: 1, Cores: 2},
		Software: profile.Software{Torch: "2.14.1", Backend: "gloo", Framework: "pytorch"},
		Model:    m.String(), DType: "fp32", Layers: layers,
		Embedding: end(0.0001, 0.0002), Loss: end(0.0003, 0.0006),
		Optimizer: &profile.Optimizer{Name: "adamw", Params: 1000000, Seconds: 0.015},
		Host:      &profile.Host{Issue: 3e-6, IssueBwd: 4e-6}}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := profile.Decode(data)
	if err != nil {
		t.Fatalf("the test's profile: %v", err)
	}
	if err := pr.Check(m, "cpu"); err != nil {
		t.Fatal(err)
	}
	return pr
}

// dsLike is a DeepSeek-like tiny model: latent attention, 6 layers of
// which the first 2 dense (FFN 40), then 4 with 4 experts of 16, top 2,
// one shared.
const dsLike = "llama:layers=6,hidden=48,heads=4,ffn=40,seq=16,vocab=64,batch=2,head_dim=12,experts=4,topk=2,expert_ffn=16,shared=1,dense_layers=2,q_lora=20,kv_lora=10,rope_dim=4"

// TestProfiledDenseFirst: a model with experts and dense layers before
// them prices its first DenseLayers layers from the profile's dense
// layers and the rest from its MoE layers. A dense layer of 1 + 2 ms,
// an MoE layer of 3 + 6 ms (mbs 1, the whole sequence), the embedding
// 0.1 + 0.2 ms and the loss 0.3 + 0.6: on one process the step's compute
// is each micro-batch's 2 dense and 4 MoE layers, the embedding and the
// loss, summed by hand below. Without the dense entries (a profile
// written before they were timed) the dense layers are the roofline's
// (modelled) and the MoE layers still the profile's.
func TestProfiledDenseFirst(t *testing.T) {
	moe := profile.Layer{TP: 1, MBS: 1, Seq: 16, Recompute: "none", Forward: 0.003, Backward: 0.006, Block: profile.BlockMoE}
	dense := profile.Layer{TP: 1, MBS: 1, Seq: 16, Recompute: "none", Forward: 0.001, Backward: 0.002, Block: profile.BlockDense}
	old := moe
	old.Block = "" // an older profile's entry: the model's own (MoE) layer
	ends := 0.0001 + 0.0002 + 0.0003 + 0.0006
	measured, composed, modelled := profile.Measured, profile.Composed, profile.Modelled
	for _, c := range []struct {
		name     string
		layers   []profile.Layer
		strategy string
		// compute: the step's, by hand (0: the dense layers modelled,
		// checked against the roofline's dense block below).
		compute        float64
		moeSrc, denSrc profile.Source
	}{
		// 2 micro-batches x (2 x (1 + 2) + 4 x (3 + 6) + 1.2) ms = 2 x 43.2 ms.
		{"dense and moe", []profile.Layer{moe, dense}, "tp=1,pp=1,dp=1,mbs=1", 2 * (2*0.003 + 4*0.009 + ends), measured, measured},
		// Full recomputation, composed: each backward plus its forward,
		// 2 x (2 x (1 + 3) + 4 x (3 + 9) + 1.2) ms = 2 x 57.2 ms.
		{"recompute full", []profile.Layer{dense, moe}, "tp=1,pp=1,dp=1,mbs=1,recompute=full", 2 * (2*0.004 + 4*0.012 + ends), composed, composed},
		// One micro-batch of 2: twice the tokens, proportional (composed):
		// 2 x 6 + 4 x 18 + 1.2 x 2 ms (the ends composed alike).
		{"mbs 2", []profile.Layer{moe, dense}, "tp=1,pp=1,dp=1,mbs=2", 2*0.006 + 4*0.018 + 2*ends, composed, composed},
		{"no dense entries", []profile.Layer{old}, "tp=1,pp=1,dp=1,mbs=1", 0, measured, modelled},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr := cpuProfile(t, dsLike, 1, c.layers)
			m := pr.Spec()
			s, err := plan.ParseStrategy(c.strategy)
			if err != nil {
				t.Fatal(err)
			}
			pod := plan.ProfilePod(pr, 1)
			r, err := Evaluate(m, s, pod)
			if err != nil {
				t.Fatal(err)
			}
			if r.Sources == nil || r.Sources.Layers != c.moeSrc || r.Sources.DenseLayers == nil || *r.Sources.DenseLayers != c.denSrc {
				t.Fatalf("sources %+v (dense %v), want layers %s, dense layers %s", r.Sources, r.Sources.DenseLayers, c.moeSrc, c.denSrc)
			}
			want := c.compute
			if want == 0 {
				// The dense layers the roofline's block on the same pod:
				// 2 micro-batches x (2 dense + 4 x 9 ms + 1.2 ms).
				pl, err := plan.Resolve(m, s, pod)
				if err != nil {
					t.Fatal(err)
				}
				cs := newCoster(m, pl, &pod, 1, float64(m.Seq))
				f, b := cs.block(false)
				if !(f.Busy > 0) || !(b.Busy > 0) {
					t.Fatalf("the roofline's dense block %g + %g s", f.Busy, b.Busy)
				}
				if near(f.Busy, 0.001) {
					t.Fatalf("the roofline's dense block is the measured one's %g s: the test cannot tell them apart", f.Busy)
				}
				want = 2 * (2*(f.Busy+b.Busy) + 4*0.009 + ends)
			}
			if math.Abs(r.Compute-want) > 1e-9 {
				t.Errorf("compute %.9g s, want %.9g", r.Compute, want)
			}
		})
	}
}

// TestProfiledMLA: a model with latent attention is priced from its
// profile as any other: its layer measured at the shape timed (2 + 4 ms
// at tp 1, 1.5 + 2.5 ms at tp 2 with sp), composed at another
// micro-batch, the roofline's where no shape answers (tp 4). Its
// layer's parameters are those python/placer_torch/tests/profile/test_mla.py counts of
// layers.py's block of the same shape (12,062).
func TestProfiledMLA(t *testing.T) {
	const mla = "llama:layers=4,hidden=48,heads=4,ffn=40,seq=16,vocab=64,batch=4,head_dim=12,q_lora=20,kv_lora=10,rope_dim=4"
	layers := []profile.Layer{
		{TP: 1, MBS: 1, Seq: 16, Recompute: "none", Forward: 0.002, Backward: 0.004},
		{TP: 2, SP: true, MBS: 1, Seq: 16, Recompute: "none", Forward: 0.0015, Backward: 0.0025},
	}
	pr := cpuProfile(t, mla, 2, layers)
	m := pr.Spec()
	if !m.MLA() || transformer.DenseLayerParams(m) != 12062 {
		t.Fatalf("%s: latent %v, a layer's parameters %d, want 12,062", m, m.MLA(), transformer.DenseLayerParams(m))
	}
	ends := 0.0001 + 0.0002 + 0.0003 + 0.0006
	for _, c := range []struct {
		strategy string
		src      profile.Source
		layer    float64 // one layer's forward + backward alone (LayerForward + LayerBackward); 0: not checked
		compute  float64 // the step's compute by hand (0: not checked)
	}{
		// 4 micro-batches x (4 x 6 ms + 1.2 ms).
		{"tp=1,pp=1,dp=1,mbs=1", profile.Measured, 0.006, 4 * (4*0.006 + ends)},
		// 2 micro-batches of 2: twice the tokens of the one measured.
		{"tp=1,pp=1,dp=1,mbs=2", profile.Composed, 0.012, 2 * (4*0.012 + 2*ends)},
		{"tp=2,pp=1,dp=1,mbs=1,sp=on", profile.Measured, 0.004, 0},
		{"tp=4,pp=1,dp=1,mbs=1,sp=on", profile.Modelled, 0, 0},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			s, err := plan.ParseStrategy(c.strategy)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Evaluate(m, s, plan.ProfilePod(pr, s.TensorDegree()))
			if err != nil {
				t.Fatal(err)
			}
			if r.Sources == nil || r.Sources.Layers != c.src || r.Sources.DenseLayers != nil {
				t.Fatalf("sources %+v, want layers %s and no dense layers", r.Sources, c.src)
			}
			if c.layer > 0 && !near(r.LayerForward+r.LayerBackward, c.layer) {
				t.Errorf("a layer %.9g s, want %.9g", r.LayerForward+r.LayerBackward, c.layer)
			}
			if c.compute > 0 && !near(r.Compute, c.compute) {
				t.Errorf("compute %.9g s, want %.9g", r.Compute, c.compute)
			}
		})
	}
}

// TestProfiledDenseOwnComm: a model with experts' dense layer priced
// from the profile keeps its own block's communication around the
// measured kernels, not an MoE block's: at ep=2 and tp=1 a dense layer
// has no collective, so its phases are the measured 1 + 2 ms alone, no
// expert-parallel time and no host sync (the MoE block's all-to-alls and
// its dispatcher's token-count sync belong to the MoE layers).
func TestProfiledDenseOwnComm(t *testing.T) {
	moe := profile.Layer{TP: 1, EP: 2, MBS: 1, Seq: 16, Recompute: "none", Forward: 0.003, Backward: 0.006, Block: profile.BlockMoE}
	dense := profile.Layer{TP: 1, MBS: 1, Seq: 16, Recompute: "none", Forward: 0.001, Backward: 0.002, Block: profile.BlockDense}
	pr := cpuProfile(t, dsLike, 2, []profile.Layer{moe, dense})
	m := pr.Spec()
	s, err := plan.ParseStrategy("tp=1,pp=1,dp=2,ep=2,mbs=1")
	if err != nil {
		t.Fatal(err)
	}
	pod := plan.ProfilePod(pr, 2)
	pl, err := plan.Resolve(m, s, pod)
	if err != nil {
		t.Fatal(err)
	}
	c := newCoster(m, pl, &pod, 1, float64(m.Seq))
	if mf, _ := c.block(true); !(mf.EPExposed > 0) || !(mf.Syncs > 0) {
		t.Fatalf("the MoE block at ep=2: %g s expert-parallel, %g syncs: the test needs both", mf.EPExposed, mf.Syncs)
	}
	f, b := c.layerCosts().Dense(c.blocks())
	for _, d := range []struct {
		dir  string
		p    phase
		want float64
	}{{"forward", f, 0.001}, {"backward", b, 0.002}} {
		if !near(d.p.Busy, d.want) || d.p.EPExposed != 0 || d.p.TPExposed != 0 || d.p.Syncs != 0 {
			t.Errorf("dense layer %s: %.9g s, %g s expert-parallel, %g s tensor-parallel, %g syncs; want %g s and none",
				d.dir, d.p.Busy, d.p.EPExposed, d.p.TPExposed, d.p.Syncs, d.want)
		}
	}
}
