package plan

import (
	"strings"
	"testing"
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

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
