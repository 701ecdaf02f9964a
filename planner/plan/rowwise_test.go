package plan

import (
	"strings"
	"testing"

	"github.com/placer/placer/planner/kernels"
)

// TestRowwiseParse: fp8=rowwise and fp8=rowwise_with_gw_hp (also
// written with hyphens) are read on the stacks that run torchao
// (torchtitan's, a plain PyTorch loop's, transformers' layers) and
// written back as read; on Megatron's stacks, placer's default among
// them, refused in one line naming the recipe and the stack.
func TestRowwiseParse(t *testing.T) {
	for _, c := range []struct {
		in, fp8, out, err string
	}{
		{"dp=8,fp8=rowwise,stack=torchtitan-0.2", FP8Rowwise, "dp=8,fp8=rowwise,stack=torchtitan-0.2", ""},
		{"dp=8,fp8=ROWWISE_WITH_GW_HP,stack=torchtitan-0.2", FP8RowwiseGWHP, "dp=8,fp8=rowwise_with_gw_hp,stack=torchtitan-0.2", ""},
		{"dp=8,fp8=rowwise-with-gw-hp,stack=torch-eager", FP8RowwiseGWHP, "dp=8,fp8=rowwise_with_gw_hp,stack=torch-eager", ""},
		{"dp=8,fp8=rowwise,stack=hf-eager-bf16", FP8Rowwise, "dp=8,fp8=rowwise,stack=hf-eager-bf16", ""},
		{"dp=8,fp8=rowwise", "", "", "fp8=rowwise on stack placer's default (Megatron-Core): Megatron-LM and Megatron-Bridge have no rowwise recipe"},
		{"dp=8,fp8=rowwise_with_gw_hp,stack=megatron-bridge-25.11", "", "", "fp8=rowwise_with_gw_hp on stack megatron-bridge-25.11: Megatron-LM and Megatron-Bridge have no rowwise recipe"},
		{"dp=8,fp8=rowwise,stack=megatron-core-0.16", "", "", "on stack megatron-core-0.16"},
		{"dp=8,fp8=columnwise,stack=torchtitan-0.2", "", "", `fp8 "columnwise": want current, delayed, blockwise, mxfp8, rowwise or rowwise_with_gw_hp (fp4: nvfp4)`},
	} {
		s, err := ParseStrategy(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error %v, want one line with %q", c.in, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.in, err)
		case s.FP8 != c.fp8 || s.String() != c.out:
			t.Errorf("%s: fp8 %q, written %q; want %q, %q", c.in, s.FP8, s.String(), c.fp8, c.out)
		}
	}
}

// TestRowwiseSpeedups: with measured per-tensor figures the rowwise
// forward speedup is the tensorwise one times the measured
// rowwise-over-tensorwise ratio (1.8655/1.850), by hand at FP8Fwd 2 and
// FP8Bwd 1.5: 2.01676 forward; rowwise's backward the tensorwise one,
// 1.5 (torchao runs it in cuBLAS's tensorwise kernel);
// rowwise_with_gw_hp's backward 2/(1/(1.5 x 1.8655/1.850) + 1) =
// 2/(1/1.51257 + 1) = 1.20400; unmeasured (0), the peaks' ratio each way, 2 (1,978.9 over
// 989.45) and, with the BF16 weight gradient, 2/(1/2 + 1) = 4/3.
func TestRowwiseSpeedups(t *testing.T) {
	for _, c := range []struct {
		k        kernels.Node
		recipe   string
		fwd, bwd float64
	}{
		{kernels.Node{FP8Peak: 1978.9e12, FP8Fwd: 2, FP8Bwd: 1.5}, FP8Rowwise, 2.01676, 1.5},
		{kernels.Node{FP8Peak: 1978.9e12, FP8Fwd: 2, FP8Bwd: 1.5}, FP8RowwiseGWHP, 2.01676, 1.20400},
		{kernels.Node{FP8Peak: 1978.9e12}, FP8Rowwise, 2, 2},
		{kernels.Node{FP8Peak: 1978.9e12}, FP8RowwiseGWHP, 2, 4.0 / 3},
	} {
		f, b := RowwiseSpeedups(c.k, c.recipe, 989.45e12)
		if abs(f-c.fwd) > 1e-5 || abs(b-c.bwd) > 1e-5 {
			t.Errorf("%s at %+v: %.5f, %.5f; by hand %.5f, %.5f", c.recipe, c.k, f, b, c.fwd, c.bwd)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
