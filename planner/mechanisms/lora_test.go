package mechanisms

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// TestAdapterInputByHand: a llama block of hidden 512 (8 heads of 64,
// as many key-value heads) at tp=2, LoRA on qkv (target 0) and proj
// (target 1), one micro-batch of n = 1,024 tokens on the GPU. The work
// around each adapter's input, worked by hand (bytes read + written an
// element: dropout 2 + 3 forward, 3 + 2 backward; the norm output's FP8
// cast 2 + 1; the adapter's gradient added into the layer's 4 + 2):
//   - sp, tpoverlap, fp8, lora-dropout 0.1: qkv's input is the norm
//     output's sequence shard, 1,024 / 2 x 512 = 262,144 elements:
//     dropout and cast forward, dropout and add backward (2 and 2
//     launches); proj's its input shard, 1,024 x 512 / 2 = 262,144:
//     dropout only (1 and 1);
//   - sp without tpoverlap, BF16, dropout: qkv's input the gathered norm
//     output, 1,024 x 512 = 524,288: dropout forward (1), dropout and add
//     backward (2); proj as above;
//   - sp, tpoverlap, BF16, no dropout: qkv the add only (0 and 1), proj
//     nothing;
//   - no sp, on torchtitan's stack: the norm is not TE's, qkv's input
//     (1,024 x 512) has the dropout only;
//   - sp, BF16, dropout recomputed (lora-dropout-recompute=on): as "sp"
//     with no mask, the dropout 2 + 2 each way.
func TestAdapterInputByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=1024,vocab=1000,batch=8")
	k := func(elems, read, write float64) float64 {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: elems, Read: elems * read, Writes: elems * write}.Time(&p.Hardware)
	}
	const lo = "tp=2,dp=4,mbs=1,peft=lora,lora-rank=16,lora-targets=qkv+proj"
	const e, whole = 262144.0, 524288.0
	for _, c := range []struct {
		name, strategy string
		fp8            bool
		target         int
		fwd, bwd       float64
		nf, nb         float64
	}{
		{"qkv sp overlap fp8", lo + ",sp=on,tpoverlap=on,fp8=delayed,lora-dropout=0.1", true, 0, k(e, 2, 3) + k(e, 2, 1), k(e, 3, 2) + k(e, 4, 2), 2, 2},
		{"proj sp overlap fp8", lo + ",sp=on,tpoverlap=on,fp8=delayed,lora-dropout=0.1", true, 1, k(e, 2, 3), k(e, 3, 2), 1, 1},
		{"qkv sp", lo + ",sp=on,lora-dropout=0.1", false, 0, k(whole, 2, 3), k(whole, 3, 2) + k(whole, 4, 2), 1, 2},
		{"proj sp", lo + ",sp=on,lora-dropout=0.1", false, 1, k(e, 2, 3), k(e, 3, 2), 1, 1},
		{"qkv no dropout", lo + ",sp=on,tpoverlap=on", false, 0, 0, k(e, 4, 2), 0, 1},
		{"proj no dropout", lo + ",sp=on,tpoverlap=on", false, 1, 0, 0, 0, 0},
		{"qkv torchtitan", lo + ",stack=torchtitan-0.2,lora-dropout=0.1", false, 0, k(whole, 2, 3), k(whole, 3, 2), 1, 1},
		// thunder's dropout (lora-dropout-recompute): no mask written
		// forward or read backward, 2 + 2 bytes an element each way.
		{"qkv sp recompute", lo + ",sp=on,lora-dropout=0.1,lora-dropout-recompute=on", false, 0, k(whole, 2, 2), k(whole, 2, 2) + k(whole, 4, 2), 1, 2},
		{"proj sp recompute", lo + ",sp=on,lora-dropout=0.1,lora-dropout-recompute=on", false, 1, k(e, 2, 2), k(e, 2, 2), 1, 1},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		sh := &cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 2, Nodes: 1}, Tokens: 1024}
		if c.fp8 {
			sh.FP8Fwd, sh.FP8Bwd = 0.5, 0.5
		}
		f, b := lora{sh}.adapterInput(c.target)
		if math.Abs(f.Busy-c.fwd) > 1e-15 || math.Abs(b.Busy-c.bwd) > 1e-15 || f.Launches != c.nf || b.Launches != c.nb {
			t.Errorf("%s: %g s, %g launches forward, %g s, %g backward; want %g, %g, %g, %g", c.name, f.Busy, f.Launches, b.Busy, b.Launches, c.fwd, c.nf, c.bwd, c.nb)
		}
	}
	// Sanity of the hand figure: the dropout over the qkv shard moves
	// 262,144 x 5 bytes, no faster than the preset's peak memory rate.
	if floor := e * 5 / p.Hardware.MemBandwidth; k(e, 2, 3) < floor {
		t.Errorf("dropout kernel %g s, under its bytes' %g s at peak", k(e, 2, 3), floor)
	}
}

// TestAdapterCommByHand: the same block (hidden 512, 8 heads of 64) at
// tp=2, rank 16, n = 1,024 tokens on the GPU. Each adapter's
// tensor-parallel collectives, by hand from NeMo's ParallelLinearAdapter
// (adapterComm), in BF16 over the two-GPU tensor group:
//   - qkv (column-parallel) with sp and tpoverlap: forward linear_in's
//     output gathered (1,024 x 16 x 2 = 32,768 bytes) and the norm
//     output gathered by the adapter (1,024 x 512 x 2 = 1,048,576);
//     backward linear_out's input gradient all-reduced (32,768) and the
//     norm output's gradient reduce-scattered (1,048,576);
//   - qkv with sp, no tpoverlap: TE returns the norm output gathered and
//     reduces its gradient: the two r-wide collectives only;
//   - qkv without sp: the r-wide ones and, backward, linear_in's input
//     gradient all-reduced (1,048,576);
//   - proj (row-parallel), any: linear_in's output all-reduced forward,
//     linear_out's input gradient backward (32,768 each);
//   - tp=1, or torchtitan's stack: none.
func TestAdapterCommByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=1024,vocab=1000,batch=8")
	g := plan.Group{PerNode: 2, Nodes: 1}
	col := func(k roofline.Collective, bytes float64) float64 {
		ct, _ := p.Collective(k, g, bytes)
		return ct
	}
	const rw, x = 1024 * 16 * 2.0, 1024 * 512 * 2.0
	agR, arR := col(roofline.AllGather, rw), col(roofline.AllReduce, rw)
	const lo = "mbs=1,peft=lora,lora-rank=16,lora-targets=qkv+proj"
	for _, c := range []struct {
		name, strategy string
		target         int
		fwd, bwd       float64
		nf, nb         float64
	}{
		{"qkv sp overlap", "tp=2," + lo + ",sp=on,tpoverlap=on", 0, agR + col(roofline.AllGather, x), arR + col(roofline.ReduceScatter, x), 2, 2},
		{"qkv sp", "tp=2," + lo + ",sp=on", 0, agR, arR, 1, 1},
		{"qkv no sp", "tp=2," + lo, 0, agR, arR + col(roofline.AllReduce, x), 1, 2},
		{"proj sp overlap", "tp=2," + lo + ",sp=on,tpoverlap=on", 1, arR, arR, 1, 1},
		{"proj no sp", "tp=2," + lo, 1, arR, arR, 1, 1},
		{"qkv tp=1", "tp=1," + lo, 0, 0, 0, 0, 0},
		{"qkv torchtitan", "tp=2," + lo + ",stack=torchtitan-0.2", 0, 0, 0, 0, 0},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		sh := &cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: g, Tokens: 1024}
		f, b := lora{sh}.adapterComm(c.target)
		if math.Abs(f.Busy-c.fwd) > 1e-15 || math.Abs(b.Busy-c.bwd) > 1e-15 || f.Launches != c.nf || b.Launches != c.nb ||
			f.TPExposed != f.Busy || b.TPExposed != b.Busy {
			t.Errorf("%s: %g s, %g launches forward, %g s, %g backward (exposed %g, %g); want %g, %g, %g, %g, all exposed",
				c.name, f.Busy, f.Launches, b.Busy, b.Launches, f.TPExposed, b.TPExposed, c.fwd, c.nf, c.bwd, c.nb)
		}
	}
	// Sanity of the hand figures: the norm output's gather is no cheaper
	// than its bytes received (half of them) at the pod's NVLink rate.
	if bw, _ := p.Intra(); col(roofline.AllGather, x) < x/2/bw {
		t.Errorf("all-gather of %g bytes in %g s, under its bytes at %g B/s", x, col(roofline.AllGather, x), bw)
	}
}

// TestAdapterA2AByHand: the same block (hidden 512) at tp=2, rank 16,
// n = 1,024 tokens on the GPU, lora-a2a=on. The projection's adapter
// (row-parallel) returns its output to the sequence shard as NeMo's
// _All2AllHp2Sp does (adapterA2A): linear_out writes 1,024 x 512/2 =
// 262,144 elements on the GPU; forward one all-to-all of those 524,288
// BF16 bytes over the two-GPU tensor group and one torch.cat copy of
// 262,144 elements (2 bytes read, 2 written each); backward the same
// all-to-all, two contiguous copies of 131,072 elements (the gradient
// cut in T = 2 along hidden) and the cat along the sequence (262,144):
// 1 + 1 launches forward, 1 + 2 + 1 backward, the all-to-all exposed.
// Nothing for qkv (column-parallel), without sp, without lora-a2a, at
// tp=1, or on torchtitan's stack.
func TestAdapterA2AByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=1024,vocab=1000,batch=8")
	g := plan.Group{PerNode: 2, Nodes: 1}
	const e = 1024 * 512 / 2.0
	a2a := p.AllToAll(g, e*2)
	cp := func(m float64) float64 {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: m, Read: 2 * m, Writes: 2 * m}.Time(&p.Hardware)
	}
	const lo = "mbs=1,peft=lora,lora-rank=16,lora-targets=qkv+proj"
	for _, c := range []struct {
		name, strategy string
		target         int
		fwd, bwd       float64
		nf, nb         float64
	}{
		{"proj sp a2a", "tp=2," + lo + ",sp=on,lora-a2a=on", 1, a2a + cp(e), a2a + 2*cp(e/2) + cp(e), 2, 4},
		{"proj sp overlap a2a", "tp=2," + lo + ",sp=on,tpoverlap=on,lora-a2a=on", 1, a2a + cp(e), a2a + 2*cp(e/2) + cp(e), 2, 4},
		{"proj sp", "tp=2," + lo + ",sp=on", 1, 0, 0, 0, 0},
		{"proj no sp a2a", "tp=2," + lo + ",lora-a2a=on", 1, 0, 0, 0, 0},
		{"qkv sp a2a", "tp=2," + lo + ",sp=on,lora-a2a=on", 0, 0, 0, 0, 0},
		{"proj tp=1 a2a", "tp=1," + lo + ",lora-a2a=on", 1, 0, 0, 0, 0},
		{"proj torchtitan a2a", "tp=2," + lo + ",sp=on,lora-a2a=on,stack=torchtitan-0.2", 1, 0, 0, 0, 0},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		sh := &cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: g, Tokens: 1024}
		f, b := lora{sh}.adapterA2A(c.target)
		if math.Abs(f.Busy-c.fwd) > 1e-15 || math.Abs(b.Busy-c.bwd) > 1e-15 || f.Launches != c.nf || b.Launches != c.nb ||
			math.Abs(f.TPExposed-min(c.fwd, a2a)) > 1e-15 || math.Abs(b.TPExposed-min(c.bwd, a2a)) > 1e-15 {
			t.Errorf("%s: %g s, %g launches forward, %g s, %g backward (exposed %g, %g); want %g, %g, %g, %g",
				c.name, f.Busy, f.Launches, b.Busy, b.Launches, f.TPExposed, b.TPExposed, c.fwd, c.nf, c.bwd, c.nb)
		}
	}
	// Sanity: the all-to-all is no cheaper than the half of its bytes
	// that leaves the GPU at the pod's NVLink rate.
	if bw, _ := p.Intra(); a2a < e*2/2/bw {
		t.Errorf("all-to-all of %g bytes in %g s, under its bytes at %g B/s", e*2, a2a, bw)
	}
	// loraAdapters with lora-a2a=on, the projection alone: B (16 to 512
	// without it) writes the 1,024 x 256 shard, 2 x 1,024 x 16 x 256
	// FLOPs, reading 1,024 x 16 + 16 x 256 BF16 elements and writing
	// 1,024 x 256; forward the rest as without, plus adapterA2A.
	ad := func(strategy string) (cost.Phase, *cost.Shard) {
		s, err := plan.ParseStrategy(strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		sh := &cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: g, Tokens: 1024}
		f, _ := lora{sh}.loraAdapters()
		return f, sh
	}
	const lp = "tp=2,sp=on,mbs=1,peft=lora,lora-rank=16,lora-targets=proj"
	off, sh := ad(lp)
	on, _ := ad(lp + ",lora-a2a=on")
	bOff := sh.GEMM(2*1024*16*512, (1024*16+16*512)*2, 1024*512*2).Time(&p.Hardware)
	bOn := sh.GEMM(2*1024*16*256, (1024*16+16*256)*2, 1024*256*2).Time(&p.Hardware)
	if want := off.Busy - bOff + bOn + a2a + cp(e); math.Abs(on.Busy-want) > 1e-12 {
		t.Errorf("loraAdapters forward with lora-a2a %g s, want %g", on.Busy, want)
	}
	// The key round-trips and needs peft=lora.
	s, err := plan.ParseStrategy("tp=2,sp=on," + lo + ",lora-a2a=on")
	if err != nil || !s.FineTune.LoRAA2A {
		t.Fatalf("lora-a2a=on not read: %v", err)
	}
	if _, err := plan.ParseStrategy("tp=2,lora-a2a=on"); err == nil || !strings.Contains(err.Error(), "without peft=lora") {
		t.Errorf("lora-a2a without peft=lora: %v, want refused", err)
	}
}

// TestFrozenDgradRSByHand: the same block at tp=2 (n = 1,024 tokens,
// hidden 512: the norm output's gradient 1,024 x 512 x 2 = 1,048,576
// bytes), the qkv data-gradient GEMM (1,024 x 512 by 768 on the GPU).
// Under sequence parallelism with TP overlap the stack prices it with
// its reduce-scatter overlapped (Shard.GEMMComm: the GEMM on the SMs
// the userbuffers leave, the longer of it and the collective plus half
// the shorter); frozen, TE runs the GEMM on every SM and the
// reduce-scatter after it, waited: frozenDgradRS is the first less the
// second (busy, the exposed collective, and the launches: 1 + 2 of the
// overlap less 2). Nothing without TP overlap (the stack already prices
// them one after the other), at tp=1, or off Megatron-Core.
func TestFrozenDgradRSByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=1024,vocab=1000,batch=8")
	g := plan.Group{PerNode: 2, Nodes: 1}
	const n, h, out, act = 1024.0, 512.0, 768.0, 1024 * 512 * 2.0
	const lo = "mbs=1,peft=lora,lora-rank=16,lora-targets=qkv+proj"
	for _, c := range []struct {
		name, strategy string
		zero           bool
	}{
		{"sp overlap", "tp=2," + lo + ",sp=on,tpoverlap=on", false},
		{"sp", "tp=2," + lo + ",sp=on", true},
		{"tp=1", "tp=1," + lo, true},
		{"torchtitan", "tp=2," + lo + ",sp=on,stack=torchtitan-0.2", true},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		sh := &cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: g, Tokens: n}
		gemm := sh.Back(sh.LGEMM(2*n*h*out, n*h*cost.BF16+h*out*cost.BF16, n*out*cost.BF16))
		got := lora{sh}.frozenDgradRS(gemm, act)
		if c.zero {
			if got != (cost.Phase{}) {
				t.Errorf("%s: %+v, want nothing", c.name, got)
			}
			continue
		}
		gt := gemm.Time(&p.Hardware)
		ct, _ := p.Collective(roofline.ReduceScatter, g, act)
		og := sh.Overlapped(gemm, roofline.ReduceScatter, act, ct)
		overlapped := max(og, ct) + min(og, ct)/2
		want := overlapped - (gt + ct)
		if math.Abs(got.Busy-want) > 1e-15 || math.Abs(got.TPExposed-(overlapped-gt-ct)) > 1e-15 || got.Launches != 1 || got.TPAll != 0 {
			t.Errorf("%s: busy %g, exposed %g, all %g, launches %g; want %g, %g, 0, 1", c.name, got.Busy, got.TPExposed, got.TPAll, got.Launches, want, overlapped-gt-ct)
		}
	}
}

// TestAdapterScaleByHand: the same block (hidden 512; qkv 8 + 2 x 8
// heads of 64, 1,536 wide, 768 a GPU at tp=2), n = 1,024 tokens. The
// output scaled by alpha / r, a BF16 element read and written each way:
// qkv's n x 768 = 786,432 elements at tp=2 (1,536 x 1,024 = 1,572,864
// at tp=1); proj's n x 512 = 524,288, or its sequence shard under sp at
// tp=2, 262,144. The add into the layer's output (loraAdapters) runs on
// as many elements.
func TestAdapterScaleByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=1024,vocab=1000,batch=8")
	const lo = "mbs=1,peft=lora,lora-rank=16,lora-targets=qkv+proj"
	for _, c := range []struct {
		name, strategy string
		target         int
		elems          float64
	}{
		{"qkv tp=2", "tp=2," + lo + ",sp=on", 0, 786432},
		{"qkv tp=1", "tp=1," + lo, 0, 1572864},
		{"proj tp=2 sp", "tp=2," + lo + ",sp=on", 1, 262144},
		{"proj tp=2", "tp=2," + lo, 1, 524288},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		sh := &cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: pl.TP, Nodes: 1}, Tokens: 1024}
		want := cost.Kernel{Class: graph.ClassElementwise, FLOPs: c.elems, Read: 2 * c.elems, Writes: 2 * c.elems}
		if got := (lora{sh}).adapterScale(c.target); got != want {
			t.Errorf("%s: %+v, want %+v", c.name, got, want)
		}
	}
}
