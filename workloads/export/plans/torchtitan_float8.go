package plans

import (
	"fmt"

	"github.com/placer/placer/planner/plan"
)

// torchtitan's float8 settings for a plan's fp8= recipe: torchao's
// Float8Linear with the recipe torchao's Float8LinearConfig.from_recipe_name
// names (tensorwise: fp8=current; rowwise and rowwise_with_gw_hp: the
// rowwise recipes, plan/rowwise.go).

// titanFloat8Recipe is the recipe_name torchtitan's float8 converter
// takes for fp8 recipe r; ok false: torchtitan has none.
func titanFloat8Recipe(r string) (name string, ok bool) {
	switch r {
	case plan.FP8Current:
		return "tensorwise", true
	case plan.FP8Rowwise, plan.FP8RowwiseGWHP:
		return r, true
	}
	return "", false
}

// titan02Float8 is torchtitan 0.2.2's TOML for plan s's float8 recipe
// ("" without one): the model converter quantize.linear.float8 and its
// [quantize.linear.float8] recipe_name (config/job_config.py
// Float8Linear: "tensorwise", "rowwise" or "rowwise_with_gw_hp"). Under
// the rowwise recipes the output layer is filtered out (filter_fqns
// ["output"]), as placer costs it (BF16) and as torchtitan's own float8
// configurations filter it. With fp8gather=on, torchao's float8
// all-gather: enable_fsdp_float8_all_gather and
// precompute_float8_dynamic_scale_for_fsdp, and no recipe_name, which
// torchtitan refuses beside them (components/quantization/float8.py at
// v0.2.0, Float8LinearConverter.__init__: its default config is
// tensorwise).
func titan02Float8(s plan.Strategy) string {
	name, ok := titanFloat8Recipe(s.FP8)
	if !ok {
		return ""
	}
	const head = "\n[model]\nconverters = [\"quantize.linear.float8\"]\n\n[quantize.linear.float8]\n"
	if s.FP8Gather {
		return head + "enable_fsdp_float8_all_gather = true\nprecompute_float8_dynamic_scale_for_fsdp = true\n"
	}
	out := head + fmt.Sprintf("recipe_name = %q\n", name)
	if plan.Rowwise(s.FP8) {
		out += "filter_fqns = [\"output\"]\n"
	}
	return out
}

// titan03Float8 is torchtitan 0.3.0's model converter for plan s's
// float8 recipe ("" without one): components/quantization/float8.py's
// Float8LinearConverter.Config, whose recipe_name is "rowwise" or
// "rowwise_with_gw_hp" (0.2's tensorwise is gone), the output projection
// (lm_head in 0.3) filtered out as config_registry.llama3_405b filters
// it, and model_compile_enabled as the plan compiles the model.
func titan03Float8(s plan.Strategy) string {
	if !plan.Rowwise(s.FP8) {
		return ""
	}
	compiled := "False"
	if s.TPOverlap || s.Software.Compile == plan.On {
		compiled = "True"
	}
	return fmt.Sprintf("Float8LinearConverter.Config(recipe_name=%q, filter_fqns=[\"lm_head\"], model_compile_enabled=%s)", s.FP8, compiled)
}
