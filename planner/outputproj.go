package planner

import (
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// outputGEMM is the output layer's logits GEMM of fusedOutput (flops,
// its bytes read and written in BF16) as the plan runs it, forward, and
// its two backward GEMMs (the data and the weight gradient, each as
// many FLOPs), with the casts an MXFP8 output layer adds (phase; zero in
// BF16).
//
// BF16 by default: every FP8 recipe here leaves the output layer BF16
// (mechanisms/blockscaled.go). With fp8-output-proj=on (fp8=mxfp8:
// Megatron-Core core_v0.18.0's fp8_output_proj, "run the LM-head output
// projection with a TE ColumnParallelLinear under the MXFP8 autocast
// context": megatron/core/extensions/transformer_engine.py
// TELMHeadColumnParallelLinear.forward under get_fp8_context) the three
// GEMMs are the blocks' MXFP8 GEMMs (cost.Shard.LGEMM and Back: the
// recipe's published speedups), and Transformer Engine's MXFP8 quantizer
// casts each BF16 operand to its rowwise and columnwise copies
// (mechanisms.BlockCast: 2 bytes read, 2 x (1 + 1/32) written an
// element): forward the layer's input (tokens x hidden) and its weight
// (hidden x vocab/T, a BF16 parameter: cast in every forward, Megatron-Core
// passing no is_first_microbatch to it), backward the logits' gradient
// (tokens x vocab/T).
func (c *coster) outputGEMM(no, h, V, T float64) (fwd, back kernel, casts, castsBack phase) {
	flops, read, write := 2*no*h*V/T, no*h*bf16+h*V/T*bf16, no*V/T*bf16
	if !c.Plan.FP8OutputProj || c.Plan.FP8 != plan.FP8MX || c.FP8Fwd == 0 {
		g := c.GEMM(flops, read, write)
		return g, g, phase{}, phase{}
	}
	fwd = c.LGEMM(flops, read, write)
	casts = c.RunAll(mechanisms.BlockCast(plan.FP8MX, no*h), mechanisms.BlockCast(plan.FP8MX, h*V/T))
	castsBack = c.Run(mechanisms.BlockCast(plan.FP8MX, no*V/T))
	return fwd, c.Back(fwd), casts, castsBack
}
