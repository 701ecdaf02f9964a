package planner

import (
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// TestOverlappedHBM: a GEMM beside a tensor-parallel all-gather with
// tpoverlap=on on a DGX H100 (TP 8), worked by hand. Its FLOPs run on
// the 116 SMs the userbuffers leave (132/116 of its time); its bytes at
// what the gather's HBM traffic leaves of 3.35 TB/s x 0.85.
//   - GEMM-bound: 2 x 4,096 x 4,096 x 1,536 FLOPs and 29 MB: 132/116 of
//     its time, the gather's traffic short of binding.
//   - HBM-bound: 1 GFLOP over 1 GB (a GEMM of few rows): 1e9 / (3.35e12
//     x 0.8) = 373 us of bytes against 1.3 us of FLOPs. The gather of 1
//     GB takes 7/8 x 1e9 / 362e9 + 7 x 6 us = 2.459 ms, moving 7/8 GB
//     in and out of each GPU's HBM (2 bytes each): 1.75e9 / 2.459 ms =
//     712 GB/s of the 2,847.5, so the GEMM's bytes take 1/(1 - 712/2847.5)
//     as long: 5 us + 373 us x 1.333.
func TestOverlappedHBM(t *testing.T) {
	p, _ := plan.PodOf("dgx-h100", 8)
	p.Hardware.ComputeSlowdown = 0 // the burst clock, not the one held under the power limit
	big := transformer.GPT(2, 1024, 16, 512, 1024, 8)
	pl, err := plan.Resolve(big, plan.Strategy{Tensor: 8, SequenceParallel: true, TPOverlap: true}, p)
	if err != nil {
		t.Fatal(err)
	}
	c := &coster{Shard: cost.Shard{M: big, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 8, Nodes: 1}, Tokens: 512}, Points: registered}
	bf16Rate, hbm := 989.4e12*0.756, 3.35e12*0.8
	ct := 7.0/8*1e9/362e9 + 7*6e-6
	for _, k := range []struct {
		name string
		g    kernel
		want float64
	}{
		{"GEMM-bound", c.GEMM(2*4096*4096*1536, 29e6, 0), (5e-6 + 2*4096*4096*1536/bf16Rate) * 132 / 116},
		{"HBM-bound", c.GEMM(1e9, 1e9, 0), 5e-6 + 1e9/hbm/(1-1.75e9/ct/(3.35e12*0.85))},
	} {
		if got := c.Overlapped(k.g, roofline.AllGather, 1e9, ct); !near(got, k.want) {
			t.Errorf("%s: %g s, want %g", k.name, got, k.want)
		}
	}
}
