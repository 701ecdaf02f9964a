package mechanisms

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// FirstLastBF16 is Megatron-Core's first and last transformer layers
// kept in BF16 under an FP8 or NVFP4 recipe, switched on by the key it
// declares, first-last-layers-bf16=S:E (S layers at the start, E at the
// end): TransformerConfig's first_last_layers_bf16 with
// num_layers_at_start_in_bf16 and num_layers_at_end_in_bf16, Megatron-LM's
// --first-last-layers-bf16, --num-layers-at-start-in-bf16 and
// --num-layers-at-end-in-bf16 (NVIDIA/Megatron-LM core_v0.16.1, commit
// 55ac708, megatron/core/transformer/transformer_config.py; and at
// d98e8a6). What those layers run, read at core_v0.16.1:
//
//   - their GEMMs in BF16: megatron/core/fp8_utils.py get_fp8_context and
//     fp4_utils.py get_fp4_context return a nullcontext for a layer whose
//     global number is below S or at least num_layers - E
//     (is_first_last_bf16_layer), and transformer_block.py enters that
//     context around each layer's forward (the inner quantization
//     context, used with every recipe but delayed scaling);
//   - their weights in BF16: transformer_block.py build_layer builds each
//     layer under get_fp8_context / get_fp4_context(..., is_init=True),
//     the same nullcontext for those layers, so with fp8-params=on (TE's
//     quantized model init) their weights stay BF16 tensors with no FP8
//     or NVFP4 copy; without it, no low-precision copy of them is cast;
//   - their activations saved in BF16 (no FP8 or NVFP4 copy of a GEMM's
//     input), their attention in BF16 (no fp8-dpa: outside the autocast).
//
// The framework costs those layers as plan.Plan.InBF16 costs a layer,
// stage by stage (cost.HighPrecisionLayers): HighPrecisionLayers counts a
// stage's layers among the first S and the last E of the model (the
// global layer numbers, as Megatron-Core's check of them needs no
// pipeline rank).
//
// Refused where Megatron-Core refuses or ignores it: with fp8=delayed
// (transformer_config.py __post_init__: "Delayed scaling does not support
// first / last layer in BF16."); without an FP8 or FP4 recipe (every layer
// is BF16 already); under an FP8 recipe, S or E above a pipeline stage's
// layers (num_layers // pipeline_model_parallel_size, __post_init__'s
// check; NVFP4 has no such check: there S + E at most the layers);
// outside Megatron-Core (torchtitan, the eager stacks, torchao's rowwise
// recipes). Refused as not costed here: a model whose layers are not
// alike (dense layers before the experts, hybrids, multi-token
// prediction), virtual stages over an uneven split, and fp8-output-proj
// (its output layer's MXFP8 copies are not a layer's). Megatron-Bridge
// 0.5.0 holds these fields in its mixed-precision recipe, named by a
// string whose fields take no override (MixedPrecisionConfig.setup copies
// them over the model's): bf16_with_fp8_current_scaling_mixed sets 1:1,
// nemotron_3_super_bf16_with_nvfp4_mixed 0:14, llama3_8b's NVFP4 recipe
// 0:4 in the recipe function; placer's Bridge export writes no setting
// for the key (refused).
type FirstLastBF16 struct{}

var _ cost.HighPrecisionLayers = FirstLastBF16{}

// firstLastKey is the key FirstLastBF16 declares.
const firstLastKey = "first-last-layers-bf16"

// Name is the mechanism's registered name.
func (FirstLastBF16) Name() string { return "first-last-bf16" }

// Keys declares first-last-layers-bf16=S:E (off: 0:0): what it takes,
// its doc row, the Megatron-LM arguments it writes, and the plans it
// refuses (firstLastFits).
func (FirstLastBF16) Keys() []plan.Key {
	return []plan.Key{plan.ValueKey(plan.Key{Name: firstLastKey, Values: "S:E|off", Default: "off",
		Help:    "under fp8 or fp4, the first S and last E layers in BF16 (Megatron-Core's first_last_layers_bf16)",
		Doc:     "docs/cluster-scale.md",
		Exports: []string{plan.ExportMegatron},
		Writes: map[string]func(string) []string{plan.ExportMegatron: func(v string) []string {
			s, e, _ := strings.Cut(v, ":")
			return []string{"--first-last-layers-bf16", "--num-layers-at-start-in-bf16", s, "--num-layers-at-end-in-bf16", e}
		}},
		Resolved: firstLastFits}, parseFirstLast)}
}

// When is the declaration: the key set.
func (FirstLastBF16) When() cost.When { return firstLastWhen }

// firstLastWhen is made once: every step's decision reads it.
var firstLastWhen = cost.When{cost.Key(firstLastKey, firstLastKey+"=S:E", func(pl *plan.Plan) bool { return pl.Declared.Value(firstLastKey) != "" })}

// HighPrecisionLayers is how many of stage i's layers are among the
// model's first S or last E.
func (FirstLastBF16) HighPrecisionLayers(s *cost.Shard, i int) int {
	S, E := firstLast(s.Plan.Declared.Value(firstLastKey))
	pl := &s.Plan
	L := 0
	for _, l := range pl.Stages {
		L += l
	}
	n := 0
	for j := range L {
		if (j < S || j >= L-E) && layerStage(pl, j) == i {
			n++
		}
	}
	return n
}

// layerStage is the pipeline stage that holds layer j (from 0): the
// stages in order, or with V virtual stages (a uniform split) chunk
// j / (L/(P V)) on stage chunk mod P.
func layerStage(pl *plan.Plan, j int) int {
	if pl.VP > 1 {
		c := pl.Stages[0] / pl.VP
		return (j / c) % pl.PP
	}
	for s, l := range pl.Stages {
		if j < l {
			return s
		}
		j -= l
	}
	return len(pl.Stages) - 1
}

// parseFirstLast reads S:E (whole numbers, not both 0) or off.
func parseFirstLast(v string) (string, error) {
	if v == "off" || v == "0:0" {
		return "", nil
	}
	a, b, ok := strings.Cut(v, ":")
	S, err1 := strconv.Atoi(a)
	E, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || S < 0 || E < 0 {
		return "", fmt.Errorf("%q: want S:E, the layers kept in BF16 at the start and at the end (whole numbers), or off", v)
	}
	return strconv.Itoa(S) + ":" + strconv.Itoa(E), nil
}

// firstLast is S and E of the key's value v (parseFirstLast's).
func firstLast(v string) (S, E int) {
	a, b, _ := strings.Cut(v, ":")
	S, _ = strconv.Atoi(a)
	E, _ = strconv.Atoi(b)
	return S, E
}

// firstLastFits refuses a plan the key does not go with (FirstLastBF16's
// doc says why each).
func firstLastFits(m *transformer.Spec, pl *plan.Plan, v string) error {
	S, E := firstLast(v)
	per := m.Layers / pl.PP
	switch {
	case pl.FP8 == "":
		return errors.New("Megatron-Core keeps layers in BF16 under an FP8 or FP4 recipe (fp8= or fp4=); without one every layer is BF16")
	case pl.FP8 == plan.FP8Delayed:
		return errors.New("Megatron-Core refuses it with fp8=delayed (transformer_config.py: \"Delayed scaling does not support first / last layer in BF16.\")")
	case pl.Software.Framework() != plan.FrameworkMegatron || plan.Rowwise(pl.FP8) || pl.Run.Eager:
		return errors.New("Megatron-Core's setting: not under torchtitan, an eager stack or torchao's recipes")
	case pl.FP8 != plan.FP4NV && (S > per || E > per):
		return fmt.Errorf("Megatron-Core wants each count between 0 and a pipeline stage's layers (%d) under an FP8 recipe (transformer_config.py)", per)
	case S+E > m.Layers:
		return fmt.Errorf("%d layers in BF16, the model has %d", S+E, m.Layers)
	case m.MoE() && m.DenseLayers > 0 || m.Hybrid() || m.Mixed() || m.MTP > 0:
		return fmt.Errorf("placer costs layers in BF16 in a model whose layers are alike: not %s's (dense layers before the experts, a hybrid's mixers, multi-token prediction)", m)
	case pl.VP > 1 && (pl.Stages[0]*pl.PP != m.Layers || pl.Stages[0]%pl.VP != 0 || pl.EmbeddingLayer || pl.LossLayer):
		return errors.New("placer costs layers in BF16 with virtual stages over an even split only")
	case pl.FP8OutputProj:
		return errors.New("with fp8-output-proj=on: not costed together")
	}
	return nil
}
