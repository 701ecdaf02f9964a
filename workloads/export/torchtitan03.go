package export

import (
	"fmt"
	"strconv"
	"strings"
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

// Titan03 collects a torchtitan 0.3 configuration: each setting as
// apply_plan's assignment and as its command-line override.
type Titan03 struct {
	Assign []string // Python statements, config.SECTION.FIELD = VALUE
	args   []string // the overrides, in order
	ac     string   // activation-checkpoint subcommand ("" = none written)
}

// Int sets an integer field.
func (t *Titan03) Int(field string, v int) {
	t.Assign = append(t.Assign, fmt.Sprintf("config.%s = %d", field, v))
	t.args = append(t.args, "--"+field, strconv.Itoa(v))
}

// Str sets a string field.
func (t *Titan03) Str(field, v string) {
	t.Assign = append(t.Assign, fmt.Sprintf("config.%s = %s", field, strconv.Quote(v)))
	t.args = append(t.args, "--"+field, v)
}

// Bool sets a boolean field: tyro's flag --SECTION.FIELD for true,
// --SECTION.no-FIELD for false.
func (t *Titan03) Bool(field string, v bool) {
	section, name, _ := strings.Cut(field, ".")
	if v {
		t.Assign = append(t.Assign, fmt.Sprintf("config.%s = True", field))
		t.args = append(t.args, "--"+field)
		return
	}
	t.Assign = append(t.Assign, fmt.Sprintf("config.%s = False", field))
	t.args = append(t.args, "--"+section+".no-"+name)
}

// Parts sets parallelism.module_fqns_per_model_part: a Python list of
// lists, and on the command line each part's modules joined by commas,
// the parts as separate arguments (torchtitan's rule for list[str],
// ConfigManager.register_tyro_rules).
func (t *Titan03) Parts(parts [][]string) {
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
	t.Assign = append(t.Assign, b.String())
}

// Checkpoint sets activation checkpointing: "full" (FullAC) or "none".
func (t *Titan03) Checkpoint(mode string) {
	if mode == "full" {
		t.Assign = append(t.Assign, "config.activation_checkpoint = FullAC.Config()")
	} else {
		t.Assign = append(t.Assign, "config.activation_checkpoint = None")
	}
	t.ac = mode
}

// Overrides is the command line, the subcommand last (tyro reads the
// parent's options before a subcommand only).
func (t *Titan03) Overrides() []string {
	out := append([]string(nil), t.args...)
	if t.ac != "" {
		out = append(out, "activation-checkpoint:"+t.ac)
	}
	return out
}

// Titan03Run writes the header's lines on running the file.
func Titan03Run(b *strings.Builder, gpus int) {
	b.WriteString("# Run: this file as plan.py in the working directory (its module name is --module's), on each node\n")
	if gpus <= 8 {
		fmt.Fprintf(b, "#   PYTHONPATH=. torchrun --nproc_per_node=%d -m torchtitan.train --module plan --config placer_plan\n", gpus)
	} else {
		fmt.Fprintf(b, "#   PYTHONPATH=. torchrun --nnodes=NODES --nproc_per_node=PER_NODE (NODES x PER_NODE = %d) --rdzv_backend=c10d --rdzv_endpoint=HOST:PORT -m torchtitan.train --module plan --config placer_plan\n", gpus)
	}
	b.WriteString("# Or your own config function with the plan: return apply_plan(config) from it, or give OVERRIDES after its --module and --config.\n")
}

// Titan03Overrides writes OVERRIDES, a few arguments a line.
func Titan03Overrides(b *strings.Builder, args []string) {
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

// Titan03Stub writes a base_config that says which model to name.
func Titan03Stub(b *strings.Builder, why string) {
	fmt.Fprintf(b, "    \"\"\"Your model's torchtitan config function (a Trainer.Config with its model_spec): %s.\"\"\"\n", why)
	b.WriteString("    raise NotImplementedError(\"plan.py: base_config: return your model's torchtitan Trainer.Config here, or call apply_plan(config) from your own config function\")\n")
}

// Titan03Apply writes apply_plan and placer_plan.
func Titan03Apply(b *strings.Builder, assign []string) {
	b.WriteString("\n\ndef apply_plan(config: Trainer.Config) -> Trainer.Config:\n    \"\"\"The plan's settings on config.\"\"\"\n")
	for _, a := range assign {
		fmt.Fprintf(b, "    %s\n", a)
	}
	b.WriteString("    return config\n\n\ndef placer_plan() -> Trainer.Config:\n    return apply_plan(base_config())\n")
}

// titan03Graph is TorchTitanConfig for torchtitan 0.3: a graph plan's
// settings (titanGraph's) on the user's model, whose config function
// base_config stands for.
func titan03Graph(p *TorchPlan, g titanGraph, rel Release, noClasses bool) []byte {
	var t Titan03
	if g.batch {
		t.Int("training.local_batch_size", g.local)
		t.Int("training.global_batch_size", g.global)
	}
	if g.stages > 1 {
		t.Bool("training.disable_cuda_graphs", true)
	}
	t.Int("parallelism.data_parallel_replicate_degree", g.replicate)
	t.Int("parallelism.data_parallel_shard_degree", g.shard)
	reshard := "default"
	if g.zero2 {
		reshard = "never"
	}
	t.Str("parallelism.fsdp_reshard_after_forward", reshard)
	t.Int("parallelism.tensor_parallel_degree", 1)
	t.Int("parallelism.pipeline_parallel_degree", g.stages)
	if g.stages > 1 {
		t.Str("parallelism.pipeline_parallel_schedule", g.schedule)
		if g.micro > 0 {
			t.Int("parallelism.pipeline_parallel_microbatch_size", g.micro)
		}
		t.Parts(g.parts)
	}
	t.Checkpoint("none")

	var b strings.Builder
	fmt.Fprintf(&b, "# torchtitan %s configuration (a config function for torchtitan.train's --module and --config; checked with torchtitan %s) written by placer export from its torch plan of %s\n", rel.Version, rel.Checked, p.Graph)
	titanGraphWorld(&b, p)
	if p.BucketBytes > 0 {
		fmt.Fprintf(&b, "# DDP gradient bucket %d bytes: torchtitan has no field for it\n", p.BucketBytes)
	}
	if noClasses && g.stages > 1 {
		b.WriteString("# the exporter's meta names no module classes: each top-level module is listed whole (a ModuleList or ModuleDict must be listed by its items)\n")
	}
	Titan03Run(&b, p.Replicas*len(p.Stages))
	b.WriteString("\nfrom torchtitan.trainer import Trainer\n")
	Titan03Overrides(&b, t.Overrides())
	b.WriteString("\n\ndef base_config() -> Trainer.Config:\n")
	Titan03Stub(&b, "the model of "+p.Graph+", which placer knows as an op graph")
	Titan03Apply(&b, t.Assign)
	return []byte(b.String())
}
