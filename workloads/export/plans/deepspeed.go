package plans

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/workloads/export"
)

// DeepSpeedTransformer writes a transformer's plan at cluster scale
// (model m, resolved strategy s on gpus GPUs) for DeepSpeed release
// version ("" = 0.19): the JSON configuration DeepSpeedConfig reads,
// with only keys DeepSpeed reads (train_batch_size B,
// train_micro_batch_size_per_gpu mbs, gradient_accumulation_steps B /
// (D x mbs), bf16.enabled, zero_optimization.stage: 0, 1 with the
// distributed optimizer, 3 with fsdp=on) and, for a model with experts,
// moe: a Python module (written beside the configuration,
// DeepSpeedMoEPath) that builds each MoE layer as DeepSpeed-MoE's
// deepspeed.moe.layer.MoE(hidden, expert, num_experts, ep_size=ep,
// k=topk, drop_tokens=False: dropless, as placer costs it) over the
// family's MLP of expert_ffn, and lists the layers that have one (the
// first dense_layers do not). DeepSpeed's world is the data-parallel
// degree (tp = cp = pp = 1); its experts' expert-data-parallel groups
// are the world over ep. The rest of the model is the user's code.
//
// Refused in one line naming the field: tensor, context or pipeline
// parallelism (DeepSpeed's engine has none of its own for a transformer
// by its shape; its pipeline is a PipelineModule of a PyTorch model's
// layers: placer export --graph ... --to deepspeed), recomputation
// (DeepSpeed's activation checkpointing is the model's own call), FP8,
// grads=bf16 and epoverlap=on (no DeepSpeed setting written), shared
// experts (DeepSpeed-MoE's use_residual mixes a dense MLP in by a
// learned coefficient, not a shared expert added), experts under ZeRO-3
// (DeepSpeed 0.19.8's engine: "Native DeepSpeed MoE is not supported
// with ZeRO Stage 3"). configName is the configuration's file name, which
// the module names ("" = ds_config.json).
func DeepSpeedTransformer(m transformer.Spec, s plan.Strategy, gpus int, version, configName string) (config, moe []byte, err error) {
	rel, err := export.CheckedRelease("deepspeed", version)
	if err != nil {
		return nil, nil, err
	}
	if s.TensorStages != nil || s.TensorDegree() > 1 {
		return nil, nil, fmt.Errorf("export: deepspeed: tp=%d: DeepSpeed's engine shards no layer of a transformer by its shape over GPUs (Megatron-DeepSpeed's tensor parallelism is Megatron's: --to megatron)", s.MaxTensor())
	}
	D, C, P := s.ReplicaCount(), s.ContextDegree(), s.PipelineDegree()
	switch {
	case C > 1:
		return nil, nil, fmt.Errorf("export: deepspeed: sequence_parallel_size: cp=%d: DeepSpeed's sequence parallelism is Ulysses's all-to-all of heads, not the ring of key/value blocks placer costs", C)
	case P > 1:
		return nil, nil, fmt.Errorf("export: deepspeed: pipeline: pp=%d: DeepSpeed's pipeline is a PipelineModule of a PyTorch model's layers (placer export --graph MODEL.json ... --to deepspeed)", P)
	case D != gpus:
		return nil, nil, fmt.Errorf("export: deepspeed: dp=%d is not the %d GPUs", D, gpus)
	case s.MicroBatchSize < 1 || m.Batch%(D*s.MicroBatchSize) != 0:
		return nil, nil, fmt.Errorf("export: deepspeed: train_micro_batch_size_per_gpu: the batch of %d does not split into %d data-parallel ranks of micro-batches of %d", m.Batch, D, s.MicroBatchSize)
	case s.Recompute != plan.NoRecompute:
		return nil, nil, fmt.Errorf("export: deepspeed: activation_checkpointing: recompute=%s: DeepSpeed's activation checkpointing is the model's own call (deepspeed.checkpointing.checkpoint), which placer does not write", s.Recompute)
	case s.FP8 != "":
		return nil, nil, fmt.Errorf("export: deepspeed: %s: DeepSpeed's engine has no FP8 or FP4 training setting (Transformer Engine's layers are the model's)", plan.PrecisionKey(s.FP8))
	case s.GradBF16:
		return nil, nil, fmt.Errorf("export: deepspeed: data_types.grad_accum_dtype: grads=bf16 is not written by placer")
	case s.EPOverlap:
		return nil, nil, fmt.Errorf("export: deepspeed: epoverlap=on: DeepSpeed-MoE runs each micro-batch's all-to-alls in turn")
	}
	if s.ExpertTensor > 1 {
		return nil, nil, fmt.Errorf("export: deepspeed: deepspeed.moe.layer.MoE: etp=%d: DeepSpeed-MoE splits no expert over GPUs", s.ExpertTensor)
	}
	if err := unwritten("deepspeed", s, deepspeedKeys); err != nil {
		return nil, nil, err
	}
	stage := 0
	switch {
	case s.FSDP:
		stage = 3
	case s.DistOpt:
		stage = 1
	}
	if m.MoE() {
		switch {
		case m.SharedExperts > 0:
			return nil, nil, fmt.Errorf("export: deepspeed: deepspeed.moe.layer.MoE: shared=%d: DeepSpeed-MoE's use_residual mixes a dense MLP in by a learned coefficient, not a shared expert added", m.SharedExperts)
		case stage == 3:
			return nil, nil, fmt.Errorf("export: deepspeed: zero_optimization.stage: fsdp=on (ZeRO-3) with experts: DeepSpeed %s's engine refuses its native MoE under ZeRO-3 (\"Native DeepSpeed MoE is not supported with ZeRO Stage 3\"): distopt=on (ZeRO-1)", rel.Checked)
		case D%s.ExpertDegree() != 0:
			return nil, nil, fmt.Errorf("export: deepspeed: deepspeed.moe.layer.MoE: ep=%d does not divide the %d data-parallel ranks (DeepSpeed's expert groups split the world)", s.ExpertDegree(), D)
		}
	}
	type zero struct {
		Stage int `json:"stage"`
	}
	type bf16 struct {
		Enabled bool `json:"enabled"`
	}
	cfg := struct {
		TrainBatchSize int  `json:"train_batch_size"`
		MicroBatch     int  `json:"train_micro_batch_size_per_gpu"`
		Accumulation   int  `json:"gradient_accumulation_steps"`
		BF16           bf16 `json:"bf16"`
		Zero           zero `json:"zero_optimization"`
	}{TrainBatchSize: m.Batch, MicroBatch: s.MicroBatchSize, Accumulation: m.Batch / (D * s.MicroBatchSize), BF16: bf16{true}, Zero: zero{stage}}
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	if m.MoE() {
		if configName == "" {
			configName = "ds_config.json"
		}
		moe = deepSpeedMoE(m, s, gpus, rel, configName)
	}
	return append(out, '\n'), moe, nil
}

// DeepSpeedMoEPath is where the experts' module of a DeepSpeed export
// written to out goes: beside it, out's name without its extension, as a
// Python identifier, then "_moe.py" (ds_config.json: ds_config_moe.py).
func DeepSpeedMoEPath(out string) string {
	p := export.DeepSpeedPipelinePath(out)
	return strings.TrimSuffix(p, "_pipeline.py") + "_moe.py"
}

// deepSpeedMoE is the Python module that builds model m's MoE layers
// under plan s for DeepSpeed release rel.
func deepSpeedMoE(m transformer.Spec, s plan.Strategy, gpus int, rel export.Release, configName string) []byte {
	ep := s.ExpertDegree()
	var b strings.Builder
	fmt.Fprintf(&b, `"""DeepSpeed %s mixture of experts of placer's plan of %s
under %s on %d GPUs (written by placer export beside its DeepSpeed
configuration; checked with deepspeed %s).

Each of the model's layers in MOE_LAYERS replaces its MLP by moe_layer():
DeepSpeed-MoE's deepspeed.moe.layer.MoE of %d experts of the family's MLP
(hidden %d, expert FFN %d), top-%d routing by its linear gate, dropless
(drop_tokens=False: every token reaches its experts, as placer costs it),
expert parallelism %d: each rank holds %d experts, the %d ranks of the
world in expert-parallel groups of %d and expert-data-parallel groups of
%d (deepspeed.utils.groups). The rest of the model (attention, norms,
embedding, output) is the user's code; under ZeRO the optimizer takes
deepspeed.moe.utils.split_params_into_different_moe_groups_for_optimizer
of its parameter groups.

    import deepspeed
    # in the model: self.mlp = moe_layer() for the layers in MOE_LAYERS
    engine, _, _, _ = deepspeed.initialize(model=model, config=config_path(),
                                           model_parameters=params)
"""

import os

DEEPSPEED = %s
CONFIG = %s  # the configuration, beside this file
WORLD_SIZE = %d
HIDDEN = %d
EXPERT_FFN = %d
NUM_EXPERTS = %d
TOP_K = %d
EP_SIZE = %d
GATED = %s  # the family's MLP: SwiGLU (llama), else GeLU with biases (gpt)
`, rel.Version, m, s, gpus, rel.Checked, m.Experts, m.Hidden, m.ExpertFFN, m.TopK, ep, m.Experts/ep, gpus, ep, gpus/ep,
		export.PyString(rel.Version), export.PyString(configName), gpus, m.Hidden, m.ExpertFFN, m.Experts, m.TopK, ep, map[bool]string{true: "True", false: "False"}[m.SwiGLU()])
	fmt.Fprintf(&b, "# The layers with experts (0-based): all but the first %d.\nMOE_LAYERS = list(range(%d, %d))\n", m.DenseLayers, m.DenseLayers, m.Layers)
	b.WriteString(`

def config_path():
    """The DeepSpeed configuration written with this module."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), CONFIG)


def expert():
    """One expert: the family's MLP of EXPERT_FFN."""
    import torch.nn as nn
    import torch.nn.functional as F

    class Expert(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Linear(HIDDEN, EXPERT_FFN, bias=not GATED)
            self.gate = nn.Linear(HIDDEN, EXPERT_FFN, bias=False) if GATED else None
            self.down = nn.Linear(EXPERT_FFN, HIDDEN, bias=not GATED)

        def forward(self, x):
            h = F.silu(self.gate(x)) * self.up(x) if GATED else F.gelu(self.up(x))
            return self.down(h)

    return Expert()


def moe_layer():
    """deepspeed.moe.layer.MoE of the plan: NUM_EXPERTS experts, TOP_K of
    them a token, EP_SIZE ranks of experts, dropless. Its forward returns
    (output, auxiliary loss, expert counts)."""
    from deepspeed.moe.layer import MoE

    return MoE(hidden_size=HIDDEN, expert=expert(), num_experts=NUM_EXPERTS, ep_size=EP_SIZE, k=TOP_K, drop_tokens=False)
`)
	return []byte(b.String())
}
