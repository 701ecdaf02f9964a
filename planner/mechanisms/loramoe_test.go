package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// TestExpertAdaptersByHand: a llama MoE block of hidden 512, 8 experts of
// FFN 256 (SwiGLU: fc1 writes 512), rank r = 16, the experts' grouped
// GEMMs over rows = 4,096 on one GPU of an 8-GPU node, worked by hand:
//   - fc1's shared adapter: A 2 x 4,096 x 512 x 16 = 67,108,864 FLOPs
//     (reads 4,096 x 512 + 512 x 16 BF16, writes 4,096 x 16), B as many
//     (reads 4,096 x 16 + 16 x 512, writes 4,096 x 512), the scaling
//     (4,096 x 512 elements, 2 bytes read and 2 written) and the add (4
//     read, 2 written); fc2's: A 2 x 4,096 x 256 x 16 = 33,554,432, B
//     67,108,864, scale and add over 4,096 x 512;
//   - forward: the two adapters, 8 launches; backward each GEMM twice and
//     the scaling, 10 launches;
//   - ep=8: the adapters' gradients, 16 x (512 + 512) + 16 x (256 + 512)
//     = 28,672 BF16 (57,344 bytes), all-reduced over the 8 expert ranks,
//     exposed, a launch for each of the 4 weights; ep=1: none;
//   - lora-targets=qkv+proj (the experts frozen, not adapted): nothing.
func TestExpertAdaptersByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=1024,vocab=1000,batch=8,experts=8,topk=2,expert_ffn=256")
	const rows = 4096.0
	for _, c := range []struct {
		name, strategy string
		adapted, sync  bool
	}{
		{"ep=8", "tp=1,dp=8,ep=8,mbs=1,peft=lora,lora-rank=16", true, true},
		{"ep=1", "tp=1,dp=8,mbs=1,peft=lora,lora-rank=16", true, false},
		{"experts frozen", "tp=1,dp=8,ep=8,mbs=1,peft=lora,lora-rank=16,lora-targets=qkv+proj", false, false},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		sh := &cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: 1024}
		run := func(k cost.Kernel) float64 { return sh.Run(k).Busy }
		ew := func(e, read, write float64) float64 {
			return run(cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: e * read, Writes: e * write})
		}
		e := rows * 512
		a1 := run(sh.GEMM(67108864, (rows*512+512*16)*2, rows*16*2))
		b1 := run(sh.GEMM(67108864, (rows*16+16*512)*2, rows*512*2))
		a2 := run(sh.GEMM(33554432, (rows*256+256*16)*2, rows*16*2))
		b2 := run(sh.GEMM(67108864, (rows*16+16*512)*2, rows*512*2))
		var wf, wb, nf, nb float64
		if c.adapted {
			wf = a1 + b1 + ew(e, 2, 2) + ew(e, 4, 2) + a2 + b2 + ew(e, 2, 2) + ew(e, 4, 2)
			wb = 2*(a1+b1+a2+b2) + 2*ew(e, 2, 2)
			nf, nb = 8, 10
		}
		var ep float64
		if c.sync {
			_, epG, _ := pl.ExpertGroups(p)
			ep, _ = p.Collective(roofline.AllReduce, epG, 57344)
			wb += ep
			nb += 4
		}
		f, b := LoRA{}.ExpertAdapters(sh, rows)
		if math.Abs(f.Busy-wf) > 1e-12 || math.Abs(b.Busy-wb) > 1e-12 || f.Launches != nf || b.Launches != nb || b.EPExposed != ep {
			t.Errorf("%s: forward %g s (%g launches), backward %g s (%g, %g exposed on EP); want %g (%g), %g (%g, %g)",
				c.name, f.Busy, f.Launches, b.Busy, b.Launches, b.EPExposed, wf, nf, wb, nb, ep)
		}
		if c.sync && !(ep > 0) {
			t.Errorf("%s: the gradients' all-reduce over 8 GPUs costs %g s", c.name, ep)
		}
	}
}
