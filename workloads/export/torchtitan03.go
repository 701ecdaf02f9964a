package export

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// torchtitan 0.3 reads no TOML job file: a job is a config function, one
// returning a Trainer.Config, in a Python module that torchtitan.train
// imports by --module (a name on PYTHONPATH) and calls by --config, whose
// dataclass fields command-line arguments then override
// (torchtitan/config/manager.py ConfigManager.parse_args: tyro.cli over
// the function's config; torchtitan 0.3.0 from PyPI). The model,
// Trainer.Config.model_spec, is set by the function only (it is
// tyro.conf.Suppress: no override names it).
//
// placer writes that module: apply_plan(config) sets the plan's fields on
// a Trainer.Config, base_config() is the model's own config function
// (torchtitan's llama3 8B, 70B or 405B where the plan's shape is one of
// them, else llama3 built at the plan's shape by placer_model(), else,
// for a model that is not torchtitan's llama3, a stub saying to name
// it), placer_plan() is
// apply_plan(base_config()), and OVERRIDES is apply_plan's settings as
// command-line overrides, for a config function of the user's own.
// Field names and values are torchtitan 0.3.0's: config/configs.py
// (TrainingConfig, ParallelismConfig, CompileConfig),
// distributed/activation_checkpoint.py (ActivationCheckpointingConfig:
// the subcommands activation-checkpoint:full and :none, FullAC.Config()
// and None in Python), trainer.py (Trainer.Config.__post_init__: a
// pipeline needs training.disable_cuda_graphs).

// titan03 collects a torchtitan 0.3 configuration: each setting as
// apply_plan's assignment and as its command-line override.
type titan03 struct {
	assign []string // Python statements, config.SECTION.FIELD = VALUE
	args   []string // the overrides, in order
	ac     string   // activation-checkpoint subcommand ("" = none written)
}

// int sets an integer field.
func (t *titan03) int(field string, v int) {
	t.assign = append(t.assign, fmt.Sprintf("config.%s = %d", field, v))
	t.args = append(t.args, "--"+field, strconv.Itoa(v))
}

// str sets a string field.
func (t *titan03) str(field, v string) {
	t.assign = append(t.assign, fmt.Sprintf("config.%s = %s", field, strconv.Quote(v)))
	t.args = append(t.args, "--"+field, v)
}

// bool sets a boolean field: tyro's flag --SECTION.FIELD for true,
// --SECTION.no-FIELD for false.
func (t *titan03) bool(field string, v bool) {
	section, name, _ := strings.Cut(field, ".")
	if v {
		t.assign = append(t.assign, fmt.Sprintf("config.%s = True", field))
		t.args = append(t.args, "--"+field)
		return
	}
	t.assign = append(t.assign, fmt.Sprintf("config.%s = False", field))
	t.args = append(t.args, "--"+section+".no-"+name)
}

// parts sets parallelism.module_fqns_per_model_part: a Python list of
// lists, and on the command line each part's modules joined by commas,
// the parts as separate arguments (torchtitan's rule for list[str],
// ConfigManager.register_tyro_rules).
func (t *titan03) parts(parts [][]string) {
	var b strings.Builder
	b.WriteString("config.parallelism.module_fqns_per_model_part = [\n")
	t.args = append(t.args, "--parallelism.module_fqns_per_model_part")
	for _, q := range parts {
		s := make([]string, len(q))
		for i, m := range q {
			s[i] = strconv.Quote(m)
		}
		fmt.Fprintf(&b, "        [%s],\n", strings.Join(s, ", "))
		t.args = append(t.args, strings.Join(q, ","))
	}
	b.WriteString("    ]")
	t.assign = append(t.assign, b.String())
}

// checkpoint sets activation checkpointing: "full" (FullAC) or "none".
func (t *titan03) checkpoint(mode string) {
	if mode == "full" {
		t.assign = append(t.assign, "config.activation_checkpoint = FullAC.Config()")
	} else {
		t.assign = append(t.assign, "config.activation_checkpoint = None")
	}
	t.ac = mode
}

// overrides is the command line, the subcommand last (tyro reads the
// parent's options before a subcommand only).
func (t *titan03) overrides() []string {
	out := append([]string(nil), t.args...)
	if t.ac != "" {
		out = append(out, "activation-checkpoint:"+t.ac)
	}
	return out
}

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
func titan03Transformer(m transformer.Spec, s plan.Strategy, gpus int, rel frameworkVersion) ([]byte, error) {
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
	var t titan03
	// Trainer.train_step: global / (local x data-parallel degree) passes
	// of local_batch_size samples a step, as in 0.2; with a pipeline the
	// local batch is cut into micro-batches of
	// pipeline_parallel_microbatch_size.
	local := m.Batch / D
	if P == 1 {
		local = s.MicroBatchSize
	}
	t.int("training.local_batch_size", local)
	t.int("training.global_batch_size", m.Batch)
	t.int("training.seq_len", m.Seq)
	// torchtitan 0.3 captures each step's forward and backward in a CUDA
	// graph unless training.disable_cuda_graphs (trainer.py:
	// wrap_with_cuda_graph; refused with a pipeline and with expert
	// parallelism's synchronizing dispatchers, Trainer.Config
	// _validate_cuda_graphs). placer costs torchtitan's stack without
	// graphs, each kernel launched by the host: the file runs that.
	t.bool("training.disable_cuda_graphs", true)
	// A replicate degree beside a shard degree of 1 is fully_shard
	// replicating (llama3's parallelize applies FSDP2 over the
	// dp_replicate x dp_shard mesh whatever the degrees): DDP's
	// arithmetic, beside tensor and pipeline parallelism too.
	t.int("parallelism.data_parallel_replicate_degree", replicate)
	t.int("parallelism.data_parallel_shard_degree", shard)
	t.int("parallelism.tensor_parallel_degree", T)
	if T > 1 {
		t.bool("parallelism.enable_sequence_parallel", s.SequenceParallel)
	}
	t.int("parallelism.context_parallel_degree", C)
	t.int("parallelism.expert_parallel_degree", s.ExpertDegree())
	t.int("parallelism.pipeline_parallel_degree", P)
	if P > 1 {
		sched := "1F1B"
		switch {
		case V > 1:
			sched = "Interleaved1F1B"
		case titanGPipe(s, micro):
			sched = "GPipe"
		}
		t.str("parallelism.pipeline_parallel_schedule", sched)
		t.int("parallelism.pipeline_parallel_microbatch_size", s.MicroBatchSize)
		parts, err := titanLayerParts(stages, V)
		if err != nil {
			return nil, err
		}
		// torchtitan 0.3's decoders name the output projection lm_head
		// (0.2's output).
		last := parts[len(parts)-1]
		last[len(last)-1] = "lm_head"
		t.parts(parts)
	}
	// The layers compiled as placer costed them: compile=on (torchtitan's
	// stack as search --for torchtitan and export cost it) or async
	// tensor parallelism, which CompileConfig refuses uncompiled; eager
	// otherwise, written so that a config function of the user's that
	// compiles does not run another plan than the one costed.
	// CompileConfig.components is left at its default, the model and the
	// loss.
	t.bool("compile.enable", s.TPOverlap || s.Software.Compile == plan.On)
	t.bool("compile.enable_async_tensor_parallel", s.TPOverlap)
	mode := "none"
	if s.Recompute == plan.FullRecompute {
		mode = "full"
	}
	t.checkpoint(mode)

	model, margs, hasArgs, err := titanModelArgs(m, rel)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# torchtitan %s configuration (a config function for torchtitan.train's --module and --config; checked with torchtitan %s) written by placer export for %s\n", rel.Version, rel.Checked, m)
	fmt.Fprintf(&b, "# plan %s on %d GPUs (torchtitan's world size: torchrun's nodes x processes per node)\n", s, gpus)
	titan03Run(&b, gpus)
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
	titan03Overrides(&b, t.overrides())
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
		titan03Stub(&b, fmt.Sprintf("%s (%s)", why, m))
	}
	titan03Apply(&b, t.assign)
	return []byte(b.String()), nil
}

// titan03Run writes the header's lines on running the file.
func titan03Run(b *strings.Builder, gpus int) {
	b.WriteString("# Run: this file as plan.py in the working directory (its module name is --module's), on each node\n")
	if gpus <= 8 {
		fmt.Fprintf(b, "#   PYTHONPATH=. torchrun --nproc_per_node=%d -m torchtitan.train --module plan --config placer_plan\n", gpus)
	} else {
		fmt.Fprintf(b, "#   PYTHONPATH=. torchrun --nnodes=NODES --nproc_per_node=PER_NODE (NODES x PER_NODE = %d) --rdzv_backend=c10d --rdzv_endpoint=HOST:PORT -m torchtitan.train --module plan --config placer_plan\n", gpus)
	}
	b.WriteString("# Or your own config function with the plan: return apply_plan(config) from it, or give OVERRIDES after its --module and --config.\n")
}

// titan03Overrides writes OVERRIDES, a few arguments a line.
func titan03Overrides(b *strings.Builder, args []string) {
	b.WriteString("\n# apply_plan's settings as torchtitan.train's command-line overrides (module_fqns_per_model_part: a model part's modules joined by commas, the parts as arguments; the activation-checkpoint subcommand last)\n")
	b.WriteString("OVERRIDES = [\n")
	for i := 0; i < len(args); {
		n := 1
		if strings.HasPrefix(args[i], "--") {
			for n < len(args)-i && !strings.HasPrefix(args[i+n], "--") && !strings.HasPrefix(args[i+n], "activation-checkpoint:") {
				n++
			}
		}
		q := make([]string, n)
		for j := range n {
			q[j] = strconv.Quote(args[i+j])
		}
		fmt.Fprintf(b, "    %s,\n", strings.Join(q, ", "))
		i += n
	}
	b.WriteString("]\n")
}

// titan03Stub writes a base_config that says which model to name.
func titan03Stub(b *strings.Builder, why string) {
	fmt.Fprintf(b, "    \"\"\"Your model's torchtitan config function (a Trainer.Config with its model_spec): %s.\"\"\"\n", why)
	b.WriteString("    raise NotImplementedError(\"plan.py: base_config: return your model's torchtitan Trainer.Config here, or call apply_plan(config) from your own config function\")\n")
}

// titan03Apply writes apply_plan and placer_plan.
func titan03Apply(b *strings.Builder, assign []string) {
	b.WriteString("\n\ndef apply_plan(config: Trainer.Config) -> Trainer.Config:\n    \"\"\"The plan's settings on config.\"\"\"\n")
	for _, a := range assign {
		fmt.Fprintf(b, "    %s\n", a)
	}
	b.WriteString("    return config\n\n\ndef placer_plan() -> Trainer.Config:\n    return apply_plan(base_config())\n")
}

// titan03Graph is TorchTitanConfig for torchtitan 0.3: a graph plan's
// settings (titanGraph's) on the user's model, whose config function
// base_config stands for.
func titan03Graph(p *TorchPlan, g titanGraph, rel frameworkVersion, noClasses bool) []byte {
	var t titan03
	if g.batch {
		t.int("training.local_batch_size", g.local)
		t.int("training.global_batch_size", g.global)
	}
	if g.stages > 1 {
		t.bool("training.disable_cuda_graphs", true)
	}
	t.int("parallelism.data_parallel_replicate_degree", g.replicate)
	t.int("parallelism.data_parallel_shard_degree", g.shard)
	reshard := "default"
	if g.zero2 {
		reshard = "never"
	}
	t.str("parallelism.fsdp_reshard_after_forward", reshard)
	t.int("parallelism.tensor_parallel_degree", 1)
	t.int("parallelism.pipeline_parallel_degree", g.stages)
	if g.stages > 1 {
		t.str("parallelism.pipeline_parallel_schedule", g.schedule)
		if g.micro > 0 {
			t.int("parallelism.pipeline_parallel_microbatch_size", g.micro)
		}
		t.parts(g.parts)
	}
	t.checkpoint("none")

	var b strings.Builder
	fmt.Fprintf(&b, "# torchtitan %s configuration (a config function for torchtitan.train's --module and --config; checked with torchtitan %s) written by placer export from its torch plan of %s\n", rel.Version, rel.Checked, p.Graph)
	titanGraphWorld(&b, p)
	if p.BucketBytes > 0 {
		fmt.Fprintf(&b, "# DDP gradient bucket %d bytes: torchtitan has no field for it\n", p.BucketBytes)
	}
	if noClasses && g.stages > 1 {
		b.WriteString("# the exporter's meta names no module classes: each top-level module is listed whole (a ModuleList or ModuleDict must be listed by its items)\n")
	}
	titan03Run(&b, p.Replicas*len(p.Stages))
	b.WriteString("\nfrom torchtitan.trainer import Trainer\n")
	titan03Overrides(&b, t.overrides())
	b.WriteString("\n\ndef base_config() -> Trainer.Config:\n")
	titan03Stub(&b, "the model of "+p.Graph+", which placer knows as an op graph")
	titan03Apply(&b, t.assign)
	return []byte(b.String())
}
