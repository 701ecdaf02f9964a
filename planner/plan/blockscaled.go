package plan

import (
	"fmt"
	"strings"
)

// The block-scaled formats (fp8=mxfp8, fp4=nvfp4) as the plan language
// reads them: their keys, and their refusal on GPUs without block-scaled
// tensor cores; what they cost is planner/mechanisms' (blockscaled.go).

// BlockScaled is whether recipe is one of the block-scaled formats.
func BlockScaled(recipe string) bool { return recipe == FP8MX || recipe == FP4NV }

// blockScaledFits refuses a block-scaled recipe on GPUs without
// block-scaled tensor cores: those whose hardware has no FP4 tensor
// rate (fifth-generation tensor cores bring MXFP8, MXFP6, MXFP4 and
// NVFP4 together).
func blockScaledFits(s Strategy, p Pod) error {
	if !BlockScaled(s.FP8) || p.Hardware.FP4Tensor > 0 && p.Kernels.FP8Peak > 0 {
		return nil
	}
	key := "fp8"
	if s.FP8 == FP4NV {
		key = "fp4"
	}
	return fmt.Errorf("%s=%s on %s: its GPUs have no block-scaled (MXFP8/NVFP4) tensor cores (Blackwell and the MI355X have them)", key, s.FP8, p.Hardware.Name)
}

// rocmFits refuses NVIDIA's own recipes on a pod running AMD's ROCm
// (Kernels.ROCm): NVFP4 (an NVIDIA format: CDNA 4's FP4 is MXFP4, which
// placer does not price) and blockwise FP8 (no ROCm kernel benchmark of
// it was found). Per-tensor FP8 (OCP FP8: e4m3fnuz on CDNA 3) runs on
// every Instinct pod, MXFP8 on CDNA 4's (blockScaledFits).
func rocmFits(s Strategy, p Pod) error {
	if !p.Kernels.ROCm {
		return nil
	}
	switch s.FP8 {
	case FP4NV:
		return fmt.Errorf("fp4=nvfp4 on %s: NVFP4 is NVIDIA's (AMD's FP4 is MXFP4, not priced); use fp8=current or delayed", p.Hardware.Name)
	case FP8Blockwise:
		return fmt.Errorf("fp8=blockwise on %s: no ROCm blockwise FP8 kernel is priced; use fp8=current or delayed", p.Hardware.Name)
	}
	return nil
}

// parseFP4 reads the fp4 key's value: nvfp4, or none (BF16).
func parseFP4(v string) (string, error) {
	switch v = strings.ToLower(v); v {
	case FP4NV:
		return FP4NV, nil
	case "none", "off", "bf16":
		return "", nil
	}
	return "", fmt.Errorf("%q is not an FP4 recipe (nvfp4 or none)", v)
}

// precisionKey is recipe as a plan's key: fp4=nvfp4, else fp8=recipe.
func precisionKey(recipe string) string {
	if recipe == FP4NV {
		return "fp4=" + recipe
	}
	return "fp8=" + recipe
}

// PrecisionKey is a plan's low-precision recipe (Strategy.FP8) as its
// key: fp4=nvfp4, else fp8=recipe.
func PrecisionKey(recipe string) string { return precisionKey(recipe) }

// BlockCopyBytes is the bytes an element of a block-scaled weight or
// input takes in its rowwise and columnwise copies with their scales.
func BlockCopyBytes(recipe string) float64 {
	if recipe == FP4NV {
		return 2 * (0.5 + 1.0/16)
	}
	return 2 * (1 + 1.0/32)
}

// SavedInputBytes is the bytes an element of a GEMM's input takes as
// Transformer Engine saves it for the weight gradient under recipe: the
// column-wise copy alone with its scales under the block-scaled recipes
// (half of BlockCopyBytes: MXFP8 1 + 1/32, NVFP4 1/2 + 1/16), one byte
// under the FP8 ones. TransformerEngine v2.10
// transformer_engine/pytorch/module/linear.py _Linear.forward
// (inputmat.update_usage(rowwise_usage=False, columnwise_usage=True)
// before saved_inputmat = inputmat), layernorm_linear.py
// _LayerNormLinear.forward (ln_out.update_usage(rowwise_usage=False)
// for MXFP8 and where no sequence-parallel gather needs it, before
// prepare_for_saving(inputmat, ..., ln_out, mu, rsigma)) and
// grouped_linear.py _GroupedLinear.forward (each input likewise).
func SavedInputBytes(recipe string) float64 {
	if BlockScaled(recipe) {
		return BlockCopyBytes(recipe) / 2
	}
	return 1
}
