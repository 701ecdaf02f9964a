package plans

import (
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// recipeBase is a plan of 8 GPUs (tp 2 x dp 4) of recipeModel's batch of
// 16 (dp 4 x mbs 1 x 4 micro-batches), to which each case adds its
// memory-recipe keys.
const recipeBase = "tp=2,pp=1,dp=4,mbs=1,mb=4,sp=on,distopt=on"

func recipeModel(t *testing.T) transformer.Spec {
	t.Helper()
	m, err := transformer.Parse("llama:layers=8,hidden=64,heads=8,kv_heads=4,ffn=192,seq=64,vocab=128,batch=16")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func recipeStrategy(t *testing.T, keys string) plan.Strategy {
	t.Helper()
	base := recipeBase
	if strings.Contains(keys, "distopt=") {
		base = strings.Replace(base, ",distopt=on", "", 1)
	}
	s, err := plan.ParseStrategy(base + "," + keys)
	if err != nil {
		t.Fatalf("%s: %v", keys, err)
	}
	return s
}

// lines is args as MegatronScript writes them, a flag and its values a
// line.
func lines(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		l := args[i]
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			i++
			l += " " + args[i]
		}
		out = append(out, l)
	}
	return out
}

// Each memory-recipe key Megatron-LM core_v0.16.1 has an argument for
// writes exactly its lines (and none without the key); each it has none
// for is refused in one line naming the key.
func TestMegatronRecipeKeys(t *testing.T) {
	m := recipeModel(t)
	base, err := MegatronArgs(m, recipeStrategy(t, "fp8=delayed"), 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		keys  string
		lines []string // added to the plan's lines without the keys
		err   string   // the refusal's words ("": written)
	}{
		{keys: "fp8=delayed,fp8-params=on", lines: []string{"--fp8-param-gather"}},
		{keys: "fp8=delayed,hidden-dropout=0", lines: []string{"--hidden-dropout 0"}},
		{keys: "fp8=delayed,offload-layers=3", lines: []string{"--cpu-offloading-num-layers 3"}},
		// graph-pool=layers is what the graphs' lines run
		// (make_graphed_callables): nothing beside them.
		{keys: "fp8=delayed,cuda-graphs=dense,graph-pool=layers", lines: []string{"--cuda-graph-impl transformer_engine", "--cuda-graph-scope attn mlp"}},
		{keys: "fp8=delayed,fp8-dpa=on", err: "fp8-dpa=on: Megatron-LM core_v0.16.1's pretrain_gpt.py has no argument for TransformerConfig's fp8_dot_product_attention"},
		{keys: "fp8=delayed,fp8-activation=on", err: "fp8-activation=on: Megatron-LM core_v0.16.1's pretrain_gpt.py has no argument for TransformerConfig's activation_func_fp8_input_store"},
		{keys: "fp8=delayed,fp8-params=on,fp8-transpose-cache=off", err: "fp8-transpose-cache=off: Megatron-LM core_v0.16.1's pretrain_gpt.py has no argument for TransformerConfig's disable_parameter_transpose_cache"},
		{keys: "fp8=delayed,memory-fraction=0.9", err: "memory-fraction=0.9: Megatron-LM core_v0.16.1 has no argument"},
		// gc-threshold is the script's environment line
		// (TestScriptAllocatorEnvironment).
		{keys: "fp8=delayed,gc-threshold=0.6"},
		{keys: "fp8=delayed,fp8-params=on,distopt=off", err: "fp8-params=on without distopt=on"},
	} {
		args, err := MegatronArgs(m, recipeStrategy(t, c.keys), 8)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: got %v, want one line with %q", c.keys, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.keys, err)
			continue
		}
		var added []string
		for _, l := range lines(args) {
			if !slices.Contains(lines(base), l) {
				added = append(added, l)
			}
		}
		if !slices.Equal(added, c.lines) {
			t.Errorf("%s: added %q, want %q", c.keys, added, c.lines)
		}
	}
}

// fp8-params=on under fp4=nvfp4 is core_v0.16.1's --fp4-param-gather
// (TransformerConfig.fp4_param), not --fp8-param-gather; under
// fp8=mxfp8 it is --fp8-param-gather (fp8_param, with --fp8-recipe
// mxfp8).
func TestMegatronBlockScaledParams(t *testing.T) {
	m := recipeModel(t)
	for _, c := range []struct{ keys, want, not string }{
		{"fp4=nvfp4,fp8-params=on", "--fp4-param-gather", "--fp8-param-gather"},
		{"fp8=mxfp8,fp8-params=on", "--fp8-param-gather", "--fp4-param-gather"},
		{"fp4=nvfp4", "", "--fp4-param-gather"},
	} {
		args, err := MegatronArgs(m, recipeStrategy(t, c.keys), 8)
		if err != nil {
			t.Errorf("%s: %v", c.keys, err)
			continue
		}
		if c.want != "" && !slices.Contains(args, c.want) || slices.Contains(args, c.not) {
			t.Errorf("%s: %q, want %q and not %q", c.keys, args, c.want, c.not)
		}
	}
}

// A config.json's model has --hidden-dropout 0 written by its settings
// (megatronModel): hidden-dropout=0 writes it once.
func TestMegatronHiddenDropoutOnce(t *testing.T) {
	m := recipeModel(t)
	m.Config.ModelType = "llama"
	args, err := MegatronArgs(m, recipeStrategy(t, "hidden-dropout=0"), 8)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range args {
		if a == "--hidden-dropout" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("--hidden-dropout written %d times, want 1: %q", n, args)
	}
}

// Each memory-recipe key Megatron-Bridge 0.5.0 has a setting for writes
// exactly its overrides; fp8-params=on is the FP8 recipe's own (no
// override: bf16_with_fp8_delayed_scaling_mixed sets fp8_param_gather);
// gc-threshold is the script's environment line; the others are refused
// in one line.
func TestBridgeRecipeKeys(t *testing.T) {
	m := recipeModel(t)
	base, err := BridgeOverrides(m, recipeStrategy(t, "fp8=delayed"), 8)
	if err != nil {
		t.Fatal(err)
	}
	lora, err := BridgeOverrides(m, recipeStrategy(t, "peft=lora,lora-rank=8"), 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		keys  string
		lines []string
		err   string
	}{
		{keys: "fp8=delayed,fp8-params=on"},
		{keys: "fp8=delayed,fp8-activation=on", lines: []string{"model.activation_func_fp8_input_store=true"}},
		{keys: "fp8=delayed,fp8-params=on,fp8-transpose-cache=off", lines: []string{"model.disable_parameter_transpose_cache=true"}},
		{keys: "fp8=delayed,hidden-dropout=0", lines: []string{"model.hidden_dropout=0"}},
		{keys: "fp8=delayed,offload-layers=3", lines: []string{"model.cpu_offloading=true", "model.cpu_offloading_num_layers=3"}},
		{keys: "fp8=delayed,cuda-graphs=dense,graph-pool=layers", lines: []string{"model.cuda_graph_impl=transformer_engine", "model.cuda_graph_scope=[attn,mlp]"}},
		{keys: "fp8=delayed,gc-threshold=0.6"},
		{keys: "peft=lora,lora-rank=8,lora-dropout=0.1", lines: []string{"+peft.dropout=0.1"}},
		{keys: "peft=lora,lora-rank=8,lora-dropout=0.1,lora-dropout-recompute=on", err: "lora-dropout-recompute=on has no megatron-bridge setting"},
		{keys: "fp8=delayed,fp8-dpa=on", err: "fp8-dpa=on: Megatron-Bridge 0.5.0's mixed-precision recipes hold fp8_dot_product_attention False"},
		{keys: "fp8=delayed,memory-fraction=0.9", err: "memory-fraction=0.9: Megatron-Bridge 0.5.0 has no setting"},
	} {
		o, err := BridgeOverrides(m, recipeStrategy(t, c.keys), 8)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: got %v, want one line with %q", c.keys, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.keys, err)
			continue
		}
		from := base
		if strings.HasPrefix(c.keys, "peft") {
			from = lora
		}
		var added, removed []string
		for _, l := range o {
			if !slices.Contains(from, l) {
				added = append(added, l)
			}
		}
		for _, l := range from {
			if !slices.Contains(o, l) && !strings.HasPrefix(l, "model.cuda_graph_impl=") {
				removed = append(removed, l)
			}
		}
		if !slices.Equal(added, c.lines) || len(removed) > 0 {
			t.Errorf("%s: added %q, removed %q; want added %q", c.keys, added, removed, c.lines)
		}
	}
}

// gc-threshold is written to both Megatron scripts as the environment
// line PyTorch's caching allocator reads (PYTORCH_CUDA_ALLOC_CONF),
// before the array; a plan without it has no such line.
func TestScriptAllocatorEnvironment(t *testing.T) {
	m := recipeModel(t)
	for _, target := range []string{"megatron", "megatron-bridge"} {
		for _, c := range []struct {
			keys, want string
		}{
			{"gc-threshold=0.6", "export PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6\n"},
			{"gc-threshold=0.85", "export PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.85\n"},
			{"fp8=delayed", ""},
		} {
			s := recipeStrategy(t, c.keys)
			var script, array string
			if target == "megatron" {
				args, err := MegatronArgs(m, s, 8)
				if err != nil {
					t.Fatal(err)
				}
				script, array = MegatronScript(m, s.String(), 8, 8, args), "PLACER_ARGS=("
			} else {
				o, err := BridgeOverrides(m, s, 8)
				if err != nil {
					t.Fatal(err)
				}
				script, array = BridgeScript(m, s.String(), s, 8, 8, o), "PLACER_OVERRIDES=("
			}
			got := ""
			for _, l := range strings.SplitAfter(script, "\n") {
				if strings.Contains(l, "PYTORCH_CUDA_ALLOC_CONF") {
					got += l
				}
			}
			if got != c.want {
				t.Errorf("%s --to %s: %q, want %q", c.keys, target, got, c.want)
			}
			if c.want != "" && strings.Index(script, c.want) > strings.Index(script, array) {
				t.Errorf("%s --to %s: the environment line is not before %s", c.keys, target, array)
			}
		}
	}
}

// hidden-dropout=0 is what torchtitan's decoders run (they have no
// dropout): the file is the one without the key but for the plan named
// in its header; the other memory-recipe keys a torchtitan stack takes
// are refused in one line naming the key.
func TestTorchTitanRecipeKeys(t *testing.T) {
	m := recipeModel(t)
	for _, version := range []string{"0.2", "0.3"} {
		s := recipeStrategy(t, "distopt=off,fsdp=on,stack=torchtitan-0.2")
		base, err := TorchTitanTransformer(m, s, 8, version)
		if err != nil {
			t.Fatal(err)
		}
		s.NoHiddenDropout = true
		out, err := TorchTitanTransformer(m, s, 8, version)
		if err != nil {
			t.Fatalf("%s: hidden-dropout=0: %v", version, err)
		}
		a, b := strings.Split(string(base), "\n"), strings.Split(string(out), "\n")
		var diff []string
		for i := range max(len(a), len(b)) {
			if i >= len(a) || i >= len(b) || a[i] != b[i] {
				diff = append(diff, strings.Join(b[i:min(i+1, len(b))], ""))
			}
		}
		if len(diff) != 1 || !strings.Contains(diff[0], "hidden-dropout=0") || !strings.HasPrefix(diff[0], "#") {
			t.Errorf("torchtitan %s: hidden-dropout=0 changed %q, want the header's plan only", version, diff)
		}
		for _, keys := range []string{"offload-layers=2", "gc-threshold=0.6", "memory-fraction=0.9"} {
			_, err := TorchTitanTransformer(m, recipeStrategy(t, "distopt=off,fsdp=on,stack=torchtitan-0.2,"+keys), 8, version)
			if err == nil || !strings.Contains(err.Error(), keys+" has no torchtitan setting") || strings.Contains(err.Error(), "\n") {
				t.Errorf("torchtitan %s: %s: got %v, want one line naming it", version, keys, err)
			}
		}
	}
}

// fp8-output-proj=on (fp8=mxfp8) writes Megatron-Core 0.18.0's
// model.fp8_output_proj, which Bridge 0.5.0's recipes do not set (not a
// MixedPrecisionConfig field): the one line more than the same plan
// without it.
func TestBridgeMXFP8OutputProj(t *testing.T) {
	m := recipeModel(t)
	without, err := BridgeOverrides(m, recipeStrategy(t, "fp8=mxfp8"), 8)
	if err != nil {
		t.Fatal(err)
	}
	with, err := BridgeOverrides(m, recipeStrategy(t, "fp8=mxfp8,fp8-output-proj=on"), 8)
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, l := range with {
		if !slices.Contains(without, l) {
			added = append(added, l)
		}
	}
	if len(with) != len(without)+1 || !slices.Equal(added, []string{"model.fp8_output_proj=true"}) {
		t.Errorf("added %q (%d lines, %d without); want model.fp8_output_proj=true alone", added, len(with), len(without))
	}
}
