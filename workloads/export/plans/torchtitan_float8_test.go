package plans

import (
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestTitanRowwiseExport: fp8=rowwise and fp8=rowwise_with_gw_hp as
// torchtitan writes them, by hand from torchtitan 0.2.2's job_config.py
// (Float8Linear: recipe_name "tensorwise", "rowwise" or
// "rowwise_with_gw_hp"; filter_fqns) and 0.3.0's
// components/quantization/float8.py (Float8LinearConverter.Config:
// recipe_name, filter_fqns, model_compile_enabled) with model_registry's
// converters (models/llama3/__init__.py); Megatron-LM's arguments refuse
// them in one line, and torchtitan 0.3 still refuses tensorwise.
func TestTitanRowwiseExport(t *testing.T) {
	tiny, err := transformer.Parse("llama:layers=2,hidden=64,heads=4,seq=16,vocab=128,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	l8b, err := transformer.Parse("llama3-8b:seq=8192,batch=32")
	if err != nil {
		t.Fatal(err)
	}
	rowwise := plan.Strategy{Replicas: 8, MicroBatchSize: 1, FSDP: true, FP8: plan.FP8Rowwise, Software: plan.Software{Stack: "torchtitan-0.2", Compile: plan.On}}
	gwhp := rowwise
	gwhp.FP8, gwhp.Software.Compile = plan.FP8RowwiseGWHP, plan.Off
	gather := rowwise
	gather.FP8, gather.FP8Gather = plan.FP8Current, true
	for _, c := range []struct {
		name, version string
		m             transformer.Spec
		s             plan.Strategy
		want          []string // lines the file holds, in order (a run of them where the file has them together)
		err           string
	}{
		{"0.2 rowwise", "0.2", tiny, rowwise, []string{"[model]", `converters = ["quantize.linear.float8"]`, "", "[quantize.linear.float8]", `recipe_name = "rowwise"`, `filter_fqns = ["output"]`}, ""},
		{"0.2 rowwise_with_gw_hp", "0.2", tiny, gwhp, []string{"[quantize.linear.float8]", `recipe_name = "rowwise_with_gw_hp"`, `filter_fqns = ["output"]`}, ""},
		{"0.2 tensorwise, float8 all-gather", "0.2", tiny, gather, []string{"[quantize.linear.float8]", "enable_fsdp_float8_all_gather = true", "precompute_float8_dynamic_scale_for_fsdp = true"}, ""},
		{"0.3 rowwise, llama3 8B", "0.3", l8b, rowwise, []string{
			"from torchtitan.components.quantization import Float8LinearConverter",
			`    config.model_spec = model_registry("8B", converters=[Float8LinearConverter.Config(recipe_name="rowwise", filter_fqns=["lm_head"], model_compile_enabled=True)])`}, ""},
		{"0.3 rowwise_with_gw_hp, any shape", "0.3", tiny, gwhp, []string{
			"from torchtitan.components.quantization import Float8LinearConverter",
			`    model = Float8LinearConverter.Config(recipe_name="rowwise_with_gw_hp", filter_fqns=["lm_head"], model_compile_enabled=False).build().convert(model)`}, ""},
		{"0.3 tensorwise", "0.3", tiny, func() plan.Strategy { s := rowwise; s.FP8 = plan.FP8Current; return s }(), nil,
			"fp8=current has no torchtitan 0.3.0 recipe (its float8 recipes are rowwise and rowwise_with_gw_hp"},
	} {
		got, err := TorchTitanTransformer(c.m, c.s, 8, c.version)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error %v, want one line with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if c.s.FP8Gather && strings.Contains(string(got), "recipe_name") {
			t.Errorf("%s: recipe_name beside enable_fsdp_float8_all_gather, which torchtitan 0.2 refuses:\n%s", c.name, got)
		}
		if !linesInOrder(string(got), c.want) {
			t.Errorf("%s: want the lines\n%s\nin this order in\n%s", c.name, strings.Join(c.want, "\n"), got)
		}
	}
	m := rowwise
	m.Software = plan.Software{}
	if _, err := megatronArgs(tiny, m, 8); err == nil || !strings.Contains(err.Error(), "--fp8-recipe: fp8=rowwise is torchao's recipe; Megatron-LM's are tensorwise, delayed, mxfp8 and blockwise") {
		t.Errorf("megatron: fp8=rowwise: %v", err)
	}
}

// linesInOrder is whether text holds want's lines whole, each after the
// one before it.
func linesInOrder(text string, want []string) bool {
	lines := strings.Split(text, "\n")
	i := 0
	for _, l := range lines {
		if i < len(want) && l == want[i] {
			i++
		}
	}
	return i == len(want)
}
