package plan

// torchao's float8 all-gather under FSDP2 (fp8gather=on): what the
// tensorwise recipe (fp8=current on a torchtitan stack) gathers, as the
// plan language reads it; its costs are planner/mechanisms'
// (torchao.go).
//
// torchtitan's float8 converter (torchtitan/components/quantization/
// float8.py at v0.2.0, Float8LinearConverter.__init__) passes
// enable_fsdp_float8_all_gather to torchao's Float8LinearConfig where
// FSDP shards (parallel_dims.dp_shard_enabled) and only without a
// recipe_name ("using float8_config.enable_fsdp_float8_all_gather
// together with float8_config.recipe_name is not supported"): the
// default config, tensorwise dynamic scaling. torchao's Float8Linear
// then wraps each weight in WeightWithDynamicFloat8CastTensor
// (torchao/float8/float8_linear.py at 890e0ac8, Float8Linear.from_float),
// whose fsdp_pre_all_gather casts the sharded weight to float8 before
// FSDP2 gathers it (torchao/float8/fsdp_utils.py at 890e0ac8): the
// all-gather carries one byte an element of the blocks' linear weights.
// precompute_float8_dynamic_scale_for_fsdp, which the converter's
// post_optimizer_hook runs after each optimizer step, computes every
// weight's scale at once (one all-reduce of their amaxes).

// fp8GatherFits refuses fp8gather=on where torchao does not run it: a
// recipe other than tensorwise, no FSDP, or a stack that is not
// torchtitan's.
func fp8GatherFits(s Strategy) error {
	switch {
	case !s.FP8Gather:
		return nil
	case s.FP8 != FP8Current:
		return strategyError("fp8gather=on with fp8=%q: torchao's float8 all-gather is the tensorwise recipe's (fp8=current); torchtitan refuses it with a recipe_name", s.FP8)
	case !s.FSDP:
		return strategyError("fp8gather=on without fsdp=on: the float8 all-gather is FSDP2's")
	case s.Software.Framework() != FrameworkTorchTitan:
		return strategyError("fp8gather=on on a stack that does not run torchao: the float8 all-gather is torchao's under torchtitan (stack=torchtitan-0.2)")
	}
	return nil
}
