package plans

import (
	"fmt"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/workloads/export"
)

// titanFlavor is a torchtitan 0.3.0 llama3 model of a plan's shape: its
// flavor in models/llama3/__init__.py (model_registry) and the config
// function of config_registry.py that trains it.
type titanFlavor struct{ flavor, function string }

// titanFlavorOf names torchtitan 0.3.0's llama3 flavor of shape m, if
// one is: dim, n_layers, n_heads, n_kv_heads and vocab_size as
// models/llama3/__init__.py's _8b, _70b and _405b set them, the MLP
// compute_ffn_hidden_dim(dim, multiple_of, ffn_dim_multiplier) of
// theirs (14,336, 28,672 and 53,248), untied, dense. The flavors without
// a config function of their own (debugmodel, 1B, 3B) are not named.
func titanFlavorOf(m transformer.Spec) (titanFlavor, bool) {
	type shape struct{ layers, hidden, heads, kv, ffn, vocab int }
	flavors := map[shape]titanFlavor{
		{32, 4096, 32, 8, 14336, 128256}:    {"8B", "llama3_8b"},
		{80, 8192, 64, 8, 28672, 128256}:    {"70B", "llama3_70b"},
		{126, 16384, 128, 8, 53248, 128256}: {"405B", "llama3_405b"},
	}
	if m.Family != "llama" || m.Tied || m.Experts > 0 || m.KVLoRA > 0 || m.MTP > 0 || m.Window > 0 || m.Act != "" || m.Norms > 2 || m.Chunk > 0 || (m.Head != 0 && m.Head != m.Hidden/m.Heads) {
		return titanFlavor{}, false
	}
	f, ok := flavors[shape{m.Layers, m.Hidden, m.Heads, m.KVHeads, m.FFN, m.Vocab}]
	return f, ok
}

// titan03Transformer is TorchTitanTransformer for torchtitan 0.3, after
// the checks both releases make of the GPUs and the batch: the
// same settings and refusals, except that 0.3 writes plain data
// parallelism beside the others (fully_shard over dp_replicate x
// dp_shard) and sp=off (enable_sequence_parallel), its sequence rule is
// the trainer's (tp with sequence parallelism x 2 cp), experts may borrow
// tensor-parallel ranks (ep dividing dp_shard x cp x tp, etp 1), the
// last model part ends in lm_head, and every FP8 recipe but the rowwise
// ones is refused (0.3.0's float8 recipes are rowwise only: written as
// the model's converter, titan03Float8).
func titan03Transformer(m transformer.Spec, s plan.Strategy, gpus int, rel export.Release) ([]byte, error) {
	T, P, D, C, V := s.TensorDegree(), s.PipelineDegree(), s.ReplicaCount(), s.ContextDegree(), s.VirtualStages()
	micro := m.Batch / D / s.MicroBatchSize
	// Trainer.__init__ (trainer.py): the sequence splits over tp with
	// sequence parallelism and over 2 x cp with context parallelism.
	div := 1
	if T > 1 && s.SequenceParallel {
		div = T
	}
	if C > 1 {
		div *= 2 * C
	}
	runs := titanRunsErr(s, P, V, micro, rel.Checked)
	switch {
	case s.DistOpt && !s.FSDP:
		return nil, fmt.Errorf("export: torchtitan: parallelism.data_parallel_shard_degree: distopt=on (the distributed optimizer, ZeRO-1) has no torchtitan setting (FSDP2 shards parameters and gradients too): use fsdp=on or distopt=off")
	case m.Seq%div != 0:
		return nil, fmt.Errorf("export: torchtitan: training.seq_len: %d is not a multiple of %d (tp with sequence parallelism x 2 cp), which torchtitan %s's trainer asserts", m.Seq, div, rel.Checked)
	case s.Recompute == plan.SelectiveRecompute:
		return nil, fmt.Errorf("export: torchtitan: activation_checkpoint: recompute=selective (the attention core) is not torchtitan's selective checkpointing (SelectiveAC: per op)")
	case s.Recompute == plan.FullRecompute && s.RecomputeLayers > 0:
		return nil, fmt.Errorf("export: torchtitan: activation_checkpoint: recompute-layers=%d (some layers of each chunk) has no torchtitan setting", s.RecomputeLayers)
	case runs != nil:
		return nil, runs
	case s.FP8 == plan.FP8MX || s.FP8 == plan.FP4NV:
		return nil, fmt.Errorf("export: torchtitan: model_spec converters: %s: placer writes no torchtitan MX or NVFP4 converter", plan.PrecisionKey(s.FP8))
	case s.FP8 != "" && !plan.Rowwise(s.FP8):
		// components/quantization/float8.py: Float8LinearConverter.Config
		// recipe_name is "rowwise" or "rowwise_with_gw_hp"; 0.2's
		// "tensorwise" is gone (emulate=True, for tests, alone keeps it).
		return nil, fmt.Errorf("export: torchtitan: model_spec converters (Float8LinearConverter.Config.recipe_name): fp8=%s has no torchtitan %s recipe (its float8 recipes are rowwise and rowwise_with_gw_hp; 0.2's tensorwise is current scaling: --to torchtitan@0.2)", s.FP8, rel.Checked)
	}
	shard, replicate := 1, D
	if s.FSDP {
		shard, replicate = D, 1
	}
	if ep := s.ExpertDegree(); ep > 1 {
		etp := s.ExpertTensor
		if etp == 0 {
			etp = T
		}
		// ParallelismConfig.expert_parallel_degree: the experts borrow
		// the dense region's ranks, dp_shard x cp x tp = efsdp x ep; no
		// expert tensor parallelism.
		switch {
		case etp > 1:
			return nil, fmt.Errorf("export: torchtitan: parallelism.expert_parallel_degree: ep=%d with etp=%d: torchtitan %s's experts borrow the tensor-parallel ranks whole (no expert tensor parallelism): give etp=1", ep, etp, rel.Checked)
		case (shard*C*T)%ep != 0:
			return nil, fmt.Errorf("export: torchtitan: parallelism.expert_parallel_degree: ep=%d does not divide dp_shard x cp x tp = %d x %d x %d, the ranks torchtitan %s's experts borrow", ep, shard, C, T, rel.Checked)
		}
	}
	if err := unwritten("torchtitan", s, torchtitanKeys); err != nil {
		return nil, err
	}
	stages, err := s.StageLayers(m.Layers)
	if err != nil {
		return nil, fmt.Errorf("export: torchtitan: parallelism.module_fqns_per_model_part: %w", err)
	}
	var t export.Titan03
	// Trainer.train_step: global / (local x data-parallel degree) passes
	// of local_batch_size samples a step, as in 0.2; with a pipeline the
	// local batch is cut into micro-batches of
	// pipeline_parallel_microbatch_size.
	local := m.Batch / D
	if P == 1 {
		local = s.MicroBatchSize
	}
	t.Int("training.local_batch_size", local)
	t.Int("training.global_batch_size", m.Batch)
	t.Int("training.seq_len", m.Seq)
	// torchtitan 0.3 captures each step's forward and backward in a CUDA
	// graph unless training.disable_cuda_graphs (trainer.py:
	// wrap_with_cuda_graph; refused with a pipeline and with expert
	// parallelism's synchronizing dispatchers, Trainer.Config
	// _validate_cuda_graphs). placer costs torchtitan's stack without
	// graphs, each kernel launched by the host: the file runs that.
	t.Bool("training.disable_cuda_graphs", true)
	// A replicate degree beside a shard degree of 1 is fully_shard
	// replicating (llama3's parallelize applies FSDP2 over the
	// dp_replicate x dp_shard mesh whatever the degrees): DDP's
	// arithmetic, beside tensor and pipeline parallelism too.
	t.Int("parallelism.data_parallel_replicate_degree", replicate)
	t.Int("parallelism.data_parallel_shard_degree", shard)
	t.Int("parallelism.tensor_parallel_degree", T)
	if T > 1 {
		t.Bool("parallelism.enable_sequence_parallel", s.SequenceParallel)
	}
	t.Int("parallelism.context_parallel_degree", C)
	t.Int("parallelism.expert_parallel_degree", s.ExpertDegree())
	t.Int("parallelism.pipeline_parallel_degree", P)
	if P > 1 {
		sched := "1F1B"
		switch {
		case V > 1:
			sched = "Interleaved1F1B"
		case titanGPipe(s, micro):
			sched = "GPipe"
		}
		t.Str("parallelism.pipeline_parallel_schedule", sched)
		t.Int("parallelism.pipeline_parallel_microbatch_size", s.MicroBatchSize)
		parts, err := titanLayerParts(stages, V)
		if err != nil {
			return nil, err
		}
		// torchtitan 0.3's decoders name the output projection lm_head
		// (0.2's output).
		last := parts[len(parts)-1]
		last[len(last)-1] = "lm_head"
		t.Parts(parts)
	}
	// The layers compiled as placer costed them: compile=on (torchtitan's
	// stack as search --for torchtitan and export cost it) or async
	// tensor parallelism, which CompileConfig refuses uncompiled; eager
	// otherwise, written so that a config function of the user's that
	// compiles does not run another plan than the one costed.
	// CompileConfig.components is left at its default, the model and the
	// loss.
	t.Bool("compile.enable", s.TPOverlap || s.Software.Compile == plan.On)
	t.Bool("compile.enable_async_tensor_parallel", s.TPOverlap)
	mode := "none"
	if s.Recompute == plan.FullRecompute {
		mode = "full"
	}
	t.Checkpoint(mode)

	model, margs, hasArgs, err := titanModelArgs(m, rel)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# torchtitan %s configuration (a config function for torchtitan.train's --module and --config; checked with torchtitan %s) written by placer export for %s\n", rel.Version, rel.Checked, m)
	fmt.Fprintf(&b, "# plan %s on %d GPUs (torchtitan's world size: torchrun's nodes x processes per node)\n", s, gpus)
	export.Titan03Run(&b, gpus)
	if hasArgs {
		titanArgsComment(&b, model, margs, rel)
	}
	b.WriteString("\nfrom torchtitan.trainer import Trainer\n")
	if mode == "full" {
		b.WriteString("from torchtitan.distributed.activation_checkpoint import FullAC\n")
	}
	why := titan03Builds(m)
	if hasArgs && model != "llama3" {
		why = fmt.Sprintf("torchtitan's %s at the model args above (placer builds torchtitan's llama3 only)", model)
	}
	f, known := titanFlavorOf(m)
	known = known && (!hasArgs || titanFlavorSettings(m.Config))
	if !known && why == "" {
		b.WriteString("from torchtitan.protocols.model_spec import ModelSpec\n")
	}
	if known {
		fmt.Fprintf(&b, "from torchtitan.models.llama3 import model_registry\nfrom torchtitan.models.llama3.config_registry import %s\n", f.function)
	}
	conv := titan03Float8(s)
	if conv != "" && (known || why == "") {
		b.WriteString("from torchtitan.components.quantization import Float8LinearConverter\n")
	}
	export.Titan03Overrides(&b, t.Overrides())
	switch {
	case known && conv != "":
		b.WriteString("\n\ndef base_config() -> Trainer.Config:\n")
		fmt.Fprintf(&b, "    \"\"\"torchtitan's llama3 %s, the plan's shape: config_registry.%s with model_registry(%q)'s model, its linears (lm_head but) torchao's float8 %s.\"\"\"\n", f.flavor, f.function, f.flavor, s.FP8)
		fmt.Fprintf(&b, "    config = %s()\n    config.model_spec = model_registry(%q, converters=[%s])\n    return config\n", f.function, f.flavor, conv)
	case known:
		b.WriteString("\n\ndef base_config() -> Trainer.Config:\n")
		fmt.Fprintf(&b, "    \"\"\"torchtitan's llama3 %s, the plan's shape: config_registry.%s with model_registry(%q)'s model (no model converters).\"\"\"\n", f.flavor, f.function, f.flavor)
		fmt.Fprintf(&b, "    config = %s()\n    config.model_spec = model_registry(%q)\n    return config\n", f.function, f.flavor)
	case why == "":
		titan03Model(&b, m, conv)
	default:
		b.WriteString("\n\ndef base_config() -> Trainer.Config:\n")
		if conv != "" {
			why += "; its model_spec built with converters=[" + conv + "] (components/quantization)"
		}
		export.Titan03Stub(&b, fmt.Sprintf("%s (%s)", why, m))
	}
	export.Titan03Apply(&b, t.Assign)
	return []byte(b.String()), nil
}
