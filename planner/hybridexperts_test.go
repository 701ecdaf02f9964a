package planner

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/plan"
)

// hybridExperts is hybridShape's small hybrid with experts: 8 routed
// experts of 1,024 (squared ReLU, no gate), top 2, one shared expert of
// 1,024.
const hybridExperts = ",experts=8,topk=2,expert_ffn=1024,shared=1"

// TestHybridExpertsLayer: a hybrid's block of experts (E) is the MoE
// path's block, and the layer the mean of its pattern's blocks. On one
// H100 (ep 1, its kernels alone), pattern ME at 4,096 tokens:
//   - the E block's moeBlock is, kernel for kernel, the one of the MoE
//     model of the same shape without a pattern (its experts' half);
//   - its experts by hand: the 8 local experts' grouped GEMMs over 4,096
//     x 2 = 8,192 rows, FC1 2 x 8,192 x 512 x 1,024 FLOPs (reading the
//     rows and the 8 experts' 512 x 1,024 weights, BF16), the squared
//     ReLU 10 FLOPs an element of 8,192 x 1,024, FC2 as FC1
//     transposed; the shared expert's up and down GEMMs over the 4,096
//     tokens and its activation (6 FLOPs an element);
//   - the layer's forward and backward the mean of the Mamba-2 block's
//     and the E block's.
func TestHybridExpertsLayer(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,ffn=2048,seq=4096,vocab=1000,batch=8,act=relu2,pattern=ME"+
		",ssm_heads=16,ssm_head_dim=64,ssm_state=64,ssm_groups=2,ssm_conv=4,ssm_chunk=128"+hybridExperts)
	c := hybridCoster(t, m)
	plain := hybridCoster(t, mustSpec(t, "llama:layers=2,hidden=512,heads=8,ffn=2048,seq=4096,vocab=1000,batch=8,act=relu2"+hybridExperts))
	ef, eb, er := c.moeBlock()
	pf, pb, pr := plain.moeBlock()
	if ef != pf || eb != pb || er != pr {
		t.Errorf("E block %+v / %+v, want the MoE path's %+v / %+v", ef, eb, pf, pb)
	}
	const n, h, rows, fe, local = 4096.0, 512.0, 8192.0, 1024.0, 8.0
	mm := func(flops, read, write float64) kernel { return c.LGEMM(flops, read, write) }
	ew := func(flops, read, write float64) kernel {
		return kernel{Class: graph.ClassElementwise, FLOPs: flops, Read: read, Writes: write}
	}
	gg := c.Points.GroupedGEMM
	want := gg.Grouped(&c.Shard, mm(2*rows*h*fe, rows*h*2+local*h*fe*2, rows*fe*2), local, rows, fe).Time(c.H) +
		c.Run(ew(10*rows*fe, rows*fe*2, rows*fe*2)).Busy +
		gg.Grouped(&c.Shard, mm(2*rows*fe*h, rows*fe*2+local*fe*h*2, rows*h*2), local, rows, h).Time(c.H) +
		c.Run(mm(2*n*h*fe, n*h*2+h*fe*2, n*fe*2)).Busy + c.Run(ew(6*n*fe, 2*n*fe*2, n*fe*2)).Busy +
		c.Run(mm(2*n*fe*h, n*fe*2+fe*h*2, n*h*2)).Busy
	if got := c.expertWork().fwd.Busy; math.Abs(got/want-1) > 1e-12 {
		t.Errorf("experts' forward %g s, want %g by hand", got, want)
	}
	mf, mb, _ := families.Mamba{}.SSMBlock(&c.Shard)
	f, b := c.layer()
	if w := (mf.Busy + ef.Busy) / 2; math.Abs(f.Busy/w-1) > 1e-12 {
		t.Errorf("forward %g s, want the mean %g", f.Busy, w)
	}
	if w := (mb.Busy + eb.Busy) / 2; math.Abs(b.Busy/w-1) > 1e-12 {
		t.Errorf("backward %g s, want the mean %g", b.Busy, w)
	}
}

// TestNemotronHDefaultsEval: transformers 5.24.0's NemotronHConfig()
// file (pattern ME*-, 8 experts of 7,688, top 2, a shared expert;
// graph/transformer's TestNemotronHDefaultsRead counts it) evaluated end
// to end, its weights on the peak GPU by hand (BF16, 2 bytes a
// parameter; the blocks: Mamba-2 109,640,064, attention 41,947,136, MLP
// 176,164,864, experts 566,857,728 of which an expert 62,980,096 and
// the norm and router 36,864; embedding and the untied head 536,870,912
// each, the final norm 4,096):
//   - one DGX H100 at ep 8: every GPU the whole model but 7 of the 8
//     routed experts, 1,968,355,712 - 7 x 62,980,096 = 1,527,495,040;
//   - four DGX H100 at pp 2, ep 8: stage 0 holds M and E (and the
//     embedding), 109,640,064 + 36,864 + 2 x 62,980,096 + 536,870,912 =
//     772,507,392; stage 1 * and - and the head, 41,947,136 +
//     176,164,864 + 536,870,912 + 4,096 = 754,987,008, the peak GPU's
//     (its logits' activations), and the busiest (its layers and the
//     output layer), with no block of experts: no expert exchange on
//     the step's path.
func TestNemotronHDefaultsEval(t *testing.T) {
	m, err := transformer.ReadHFConfig(filepath.Join("..", "graph", "transformer", "testdata", "hf5", "nemotron_h-defaults.json"))
	if err != nil {
		t.Fatal(err)
	}
	m.Seq, m.Batch = 4096, 256
	for _, c := range []struct {
		cluster, strategy string
		weights           int64
		exchanges         bool // the busiest stage holds a block of experts
	}{
		{"dgx-h100:1", "tp=1,pp=1,dp=8,ep=8,mbs=1", 2 * 1527495040, true},
		{"dgx-h100:4", "tp=1,pp=2,dp=16,ep=8,mbs=1", 2 * 754987008, false},
	} {
		p, err := plan.ParsePod(c.cluster)
		if err != nil {
			t.Fatal(err)
		}
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatalf("%s on %s: %v", c.strategy, c.cluster, err)
		}
		if !(r.Step > 0) || math.IsInf(r.Step, 0) || !(r.MFU > 0 && r.MFU < 1) || !r.Fits || (r.EPExposed > 0) != c.exchanges {
			t.Errorf("%s on %s: step %g s, MFU %g, fits %v, expert exchanges %g s", c.strategy, c.cluster, r.Step, r.MFU, r.Fits, r.EPExposed)
		}
		if r.Weights != c.weights {
			t.Errorf("%s on %s: weights %d bytes a GPU, want %d by hand", c.strategy, c.cluster, r.Weights, c.weights)
		}
	}
}

// TestHybridExpertsKit: a stage's kit of a hybrid with experts costs
// its blocks of experts and its other blocks apart (pattern ME*-, one
// H100, its kernels alone): its layer is the block of experts (the MoE
// block's forward; its backward the MoE block's and the recomputation
// the plan asks, none here), its dense layer the mean of the Mamba-2,
// attention and MLP blocks; so a pipeline stage of M and E costs a
// block of experts and one such mean, a stage of * and - two means.
func TestHybridExpertsKit(t *testing.T) {
	m := mustSpec(t, "llama:layers=4,hidden=512,heads=8,ffn=2048,seq=4096,vocab=1000,batch=8,act=relu2,pattern=ME*-"+
		",ssm_heads=16,ssm_head_dim=64,ssm_state=64,ssm_groups=2,ssm_conv=4,ssm_chunk=128"+hybridExperts)
	c := hybridCoster(t, m)
	ph := c.phases(nil)
	ef, eb, _ := c.moeBlock()
	mf, mb, _ := families.Mamba{}.SSMBlock(&c.Shard)
	af, ab, _ := c.attnBlock()
	ff, fb, _ := c.mlpBlock()
	for _, x := range []struct {
		name      string
		got, want float64
	}{
		{"experts' forward", ph.layerFwd.Busy, ef.Busy},
		{"experts' backward", ph.layerBwd.Busy, eb.Busy},
		{"others' forward", ph.denseFwd.Busy, (mf.Busy + af.Busy + ff.Busy) / 3},
		{"others' backward", ph.denseBwd.Busy, (mb.Busy + ab.Busy + fb.Busy) / 3},
	} {
		if math.Abs(x.got/x.want-1) > 1e-12 {
			t.Errorf("%s %g s, want %g", x.name, x.got, x.want)
		}
	}
}
