package memory

import (
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestTitanKept: what torch's PipelineStage keeps of each finished
// micro-batch to the step's end (titanKept), by hand: 1,024 tokens of
// hidden 256 a micro-batch, no tensor parallelism, a stage boundary's
// tensor 2 x 1,024 x 256 = 524,288 bytes. At the optimizer (every
// other activation of the step freed) each of two stages holds its M
// receive buffers (titanStageBuffers: the first stage's for its
// outputs' gradients, the last's for its inputs) and, kept, the first
// its M outputs in output_chunks, the last its M inputs' gradients
// (the receive buffers' .grad): 2 M x 524,288, with 4 micro-batches
// (all written) 4,194,304 (2,097,152 before they were kept) and with
// 16 (6 written, tracedMicro; the 10 left out kept from the first
// backward) 16,777,216. Without a pipeline none. The last stage's
// step returns its outputs merged: M x 1,024 x 1,000 logits x 2 bytes,
// 8,192,000 with 4 micro-batches and 32,768,000 with 16, allocated once.
func TestTitanKept(t *testing.T) {
	p, err := plan.ParsePod("grand-teton:1,attention=flash")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		workload, strategy string
		want               [2]int64
		merged             int64
	}{
		{"llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=1024,vocab=1000,batch=16",
			"pp=2,dp=4,mbs=1,fsdp=on,recompute=full,stack=torchtitan-0.2,compile=on", [2]int64{4194304, 4194304}, 8192000},
		{"llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=1024,vocab=1000,batch=64",
			"pp=2,dp=4,mbs=1,fsdp=on,recompute=full,stack=torchtitan-0.2,compile=on", [2]int64{16777216, 16777216}, 32768000},
		{"llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=1024,vocab=1000,batch=16",
			"dp=8,mbs=1,fsdp=on,recompute=full,stack=torchtitan-0.2,compile=on", [2]int64{0}, 0},
	} {
		m := mustSpec(t, c.workload)
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.strategy, err)
		}
		cs, stages := partsOf(m, pl, &p)
		for st := range stages {
			co := &cs[counterOf(cs, pl.TPs[st])]
			tr := co.titanStageTrace(st, &stages[st])
			if st == len(stages)-1 && c.merged > 0 {
				if n := allocsOf(&tr, catLoss, c.merged); n != 1 {
					t.Errorf("%s stage %d: %d allocations of the merged outputs' %d bytes, want 1", c.strategy, st, n, c.merged)
				}
			}
			if got := actsAtOptimizer(&tr); got != c.want[st] {
				t.Errorf("%s (%d micro-batches) stage %d: %d bytes of activations at the optimizer, want %d",
					c.strategy, pl.NumMicro, st, got, c.want[st])
			}
		}
	}
}

// actsAtOptimizer is the activations' bytes live at the trace's last
// optimizer-state allocation (foreach AdamW's square root).
func actsAtOptimizer(tr *memTrace) int64 {
	size := make([]int64, len(tr.cat))
	var live, at int64
	for _, e := range tr.ev {
		c := tr.cat[e.Tensor]
		if e.Free {
			if c == catActs {
				live -= size[e.Tensor]
			}
			continue
		}
		size[e.Tensor] = e.Size
		switch c {
		case catActs:
			live += e.Size
		case catOpt:
			at = live
		}
	}
	return at
}

// allocsOf is how many of the trace's allocations are of part c and
// bytes in size.
func allocsOf(tr *memTrace, c memCat, bytes int64) int {
	n := 0
	for _, e := range tr.ev {
		if !e.Free && tr.cat[e.Tensor] == c && e.Size == bytes {
			n++
		}
	}
	return n
}
