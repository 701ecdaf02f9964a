package plan

// torchao's float8 rowwise recipes (fp8=rowwise, fp8=rowwise_with_gw_hp)
// as the plan language reads them: their keys, their refusal on stacks
// that do not run torchao, and the speed of their GEMMs; what they cost
// besides is planner/mechanisms' (rowwise.go).
//
// torchao's Float8LinearConfig.from_recipe_name (pytorch/ao
// torchao/float8/config.py at 36027d8, v0.18.0-rc1+48), which torchtitan's
// float8 converter calls with its recipe_name:
//   - "rowwise": the input, the weight and the output's gradient each cast
//     to E4M3 with one scale per row along the GEMM's reduction dimension
//     (ScalingGranularity.AXISWISE), the scales rounded down to powers of
//     two (round_scales_to_power_of_2); all three GEMMs in FP8, the
//     output GEMM with fast accumulation (gemm_config_output
//     use_fast_accum=True), the two gradients' without (the default
//     Float8GemmConfig);
//   - "rowwise_with_gw_hp": the forward as rowwise, the input gradient's
//     GEMM from the output gradient cast per row and the weight cast per
//     tensor, and the weight gradient's GEMM in BF16
//     (cast_config_input_for_grad_weight and
//     cast_config_grad_output_for_grad_weight ScalingType.DISABLED).
//
// torchao's Float8Linear swaps any nn.Linear (convert_to_float8_training),
// so a plain PyTorch loop and transformers' layers run it as torchtitan
// does; Megatron-LM and Megatron-Bridge run Transformer Engine's recipes
// (--fp8-recipe tensorwise, delayed, mxfp8, blockwise), which have no
// rowwise one: refused there.
const (
	FP8Rowwise     = "rowwise"
	FP8RowwiseGWHP = "rowwise_with_gw_hp"
)

// Rowwise is whether recipe is one of torchao's rowwise recipes.
func Rowwise(recipe string) bool { return recipe == FP8Rowwise || recipe == FP8RowwiseGWHP }

// rowwiseFits refuses a rowwise recipe on a stack that does not run
// torchao (Megatron-LM's and Megatron-Bridge's: Transformer Engine).
func rowwiseFits(s Strategy) error {
	if !Rowwise(s.FP8) || s.Software.Framework() != FrameworkMegatron {
		return nil
	}
	stack := s.Software.Stack
	if stack == "" {
		stack = "placer's default (Megatron-Core)"
	}
	return strategyError("fp8=%s on stack %s: Megatron-LM and Megatron-Bridge have no rowwise recipe (Transformer Engine's --fp8-recipe is tensorwise, delayed, mxfp8 or blockwise); torchao's rowwise runs with stack=torchtitan-0.2 or torch-eager", s.FP8, stack)
}

// fp8Recipes lists the fp8 key's values for its error.
const fp8Recipes = "current, delayed, blockwise, mxfp8, rowwise or rowwise_with_gw_hp (fp4: nvfp4)"

// checkFP8 refuses an fp8 value that is no recipe, or a rowwise one on
// a stack without it.
func checkFP8(s Strategy) error {
	switch s.FP8 {
	case "", FP8Current, FP8Delayed, FP8Blockwise, FP8MX, FP4NV, FP8Rowwise, FP8RowwiseGWHP:
	default:
		return strategyError("fp8 %q: want %s", s.FP8, fp8Recipes)
	}
	return rowwiseFits(s)
}

// KeepsFP8Inputs is whether the GEMMs of recipe keep their inputs for
// the backward as FP8 copies (one byte an element) rather than BF16:
// every FP8 recipe but torchao's rowwise ones.
func KeepsFP8Inputs(recipe string) bool { return recipe != "" && !Rowwise(recipe) }

// KeepsFP8Weights is whether torchtitan's float8 linears under recipe
// hold an FP8 weight from the forward to the backward (the memory model's titanFP8Weights):
// not under the rowwise recipes.
func KeepsFP8Weights(recipe string) bool { return KeepsFP8Inputs(recipe) }
