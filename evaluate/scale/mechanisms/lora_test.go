package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
)

// TestLoRADropoutByHand: a llama block of hidden 512 (8 heads of 64, as
// many key-value heads) at tp=2 with sequence parallelism, LoRA on qkv
// and proj, one micro-batch of n = 1,024 tokens on the GPU. With
// lora-dropout=0.1 each adapter's input dropout adds one kernel forward
// and one backward, worked by hand:
//   - qkv (column-parallel): its input is the norm's output, the GPU's
//     sequence shard of it: 1,024 / 2 tokens x 512 = 262,144 elements;
//   - proj (row-parallel): its input shard, 1,024 tokens x 512 / 2 =
//     262,144 elements;
//   - forward each reads 2 bytes an element and writes 2 + 1 (output and
//     mask), backward reads 2 + 1 and writes 2.
//
// Without sequence parallelism the qkv input is whole (524,288
// elements). Without dropout nothing is added.
func TestLoRADropoutByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=1024,vocab=1000,batch=8")
	k := func(elems, read, write float64) float64 {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: elems, Read: elems * read, Writes: elems * write}.Time(&p.Hardware)
	}
	adapters := func(strategy string) (fwd, bwd cost.Phase) {
		t.Helper()
		s, err := plan.ParseStrategy(strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		return lora{&cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 2, Nodes: 1}, Tokens: 1024}}.loraAdapters()
	}
	const lo = "tp=2,dp=4,mbs=1,peft=lora,lora-rank=16,lora-targets=qkv+proj"
	for _, c := range []struct {
		name, strategy string
		fwd, bwd       float64
		launches       float64
	}{
		{"sp", lo + ",sp=on,lora-dropout=0.1", 2 * k(262144, 2, 3), 2 * k(262144, 3, 2), 2},
		{"no sp", lo + ",lora-dropout=0.1", k(524288, 2, 3) + k(262144, 2, 3), k(524288, 3, 2) + k(262144, 3, 2), 2},
		{"no dropout", lo + ",sp=on", 0, 0, 0},
	} {
		base := lo
		if c.name == "sp" || c.name == "no dropout" {
			base += ",sp=on"
		}
		f0, b0 := adapters(base)
		f1, b1 := adapters(c.strategy)
		if math.Abs(f1.Busy-f0.Busy-c.fwd) > 1e-15 || math.Abs(b1.Busy-b0.Busy-c.bwd) > 1e-15 {
			t.Errorf("%s: dropout adds %g s forward, %g s backward; want %g, %g", c.name, f1.Busy-f0.Busy, b1.Busy-b0.Busy, c.fwd, c.bwd)
		}
		if f1.Launches-f0.Launches != c.launches || b1.Launches-b0.Launches != c.launches {
			t.Errorf("%s: dropout adds %g and %g launches; want %g each", c.name, f1.Launches-f0.Launches, b1.Launches-b0.Launches, c.launches)
		}
	}
	// Sanity of the hand figure: the forward pass over the qkv shard moves
	// 262,144 x 5 bytes, no faster than the preset's peak memory rate.
	if floor := 262144 * 5 / p.Hardware.MemBandwidth; k(262144, 2, 3) < floor {
		t.Errorf("dropout kernel %g s, under its bytes' %g s at peak", k(262144, 2, 3), floor)
	}
}
