package export

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The torch plan in other frameworks' configuration files: what a
// decision of a graph from PyTorch is (stages, replicas, sharding,
// micro-batches, schedule) written as a torchtitan job configuration or
// a DeepSpeed configuration, for the strategies each expresses; what it
// cannot express is refused in one line naming its field. Each export is
// for a named release of its framework (--to torchtitan@0.3,
// torchtitan@0.2, deepspeed@0.19) and is checked by that release's own
// code (tools/dev/frameworks: torchtitan 0.3.0's and 0.2.2's ConfigManager,
// ParallelDims, pipeline split and schedule; DeepSpeed 0.19.8's
// DeepSpeedConfig and PipelineModule).

// Release is a release an export is written for (--to
// NAME@Version) and the release whose code checks it (tools/dev/frameworks).
type Release struct{ Version, Checked string }

// frameworkVersions are the releases each framework's export is written
// for, the default first.
var frameworkVersions = map[string][]Release{
	"torchtitan": {{"0.3", "0.3.0"}, {"0.2", "0.2.2"}},
	"deepspeed":  {{"0.19", "0.19.8"}},
}

// frameworkRefused are releases placer knows and does not write, and why.
var frameworkRefused = map[string]string{
	"torchtitan@0.1": "torchtitan 0.1's TOML names other fields (pipeline_parallel_split_points, [float8]); placer writes 0.3's config function (--to torchtitan@0.3) and 0.2's TOML (--to torchtitan@0.2)",
}

// SplitFormat splits --to's FORMAT[@VERSION]: the format in lower case
// and, for torchtitan and deepspeed, the release the export is written
// for (the default, torchtitan 0.3 and DeepSpeed 0.19, without @:
// torchtitan's current release, the one pip installs, which reads no
// 0.2 TOML). A
// release placer does not write, or a version on another format, is a
// one-line error.
func SplitFormat(to string) (format, version string, err error) {
	format, version, at := strings.Cut(strings.ToLower(strings.TrimSpace(to)), "@")
	vs, ok := frameworkVersions[format]
	if !ok {
		if at {
			return "", "", fmt.Errorf("export: --to %s: only torchtitan and deepspeed take a version (torchtitan@0.2, deepspeed@0.19)", to)
		}
		return format, "", nil
	}
	if !at {
		return format, vs[0].Version, nil
	}
	for _, v := range vs {
		if version == v.Version || version == v.Checked {
			return format, v.Version, nil
		}
	}
	if why, ok := frameworkRefused[format+"@"+version]; ok {
		return "", "", fmt.Errorf("export: --to %s: %s", to, why)
	}
	var known []string
	for _, v := range vs {
		known = append(known, fmt.Sprintf("%s@%s (checked against %s)", format, v.Version, v.Checked))
	}
	return "", "", fmt.Errorf("export: --to %s: placer writes %s only", to, strings.Join(known, ", "))
}

// CheckedRelease is the release of framework name whose code checks the
// export for version (its first listed when version is "").
func CheckedRelease(name, version string) (Release, error) {
	vs := frameworkVersions[name]
	if version == "" {
		return vs[0], nil
	}
	for _, v := range vs {
		if v.Version == version {
			return v, nil
		}
	}
	_, _, err := SplitFormat(name + "@" + version)
	if err == nil {
		err = fmt.Errorf("export: %s@%s: no such release", name, version)
	}
	return Release{}, err
}

// TorchTitanConfig writes plan p as a torchtitan job configuration for
// release version ("" = 0.3): for 0.3 a Python module of config
// functions (torchtitan03.go: the settings below on the user's model),
// for 0.2 torchtitan 0.2.2's TOML (--job.config_file;
// torchtitan/config/job_config.py): [training] local_batch_size (B / R)
// and global_batch_size (B); [parallelism] data_parallel_replicate_degree
// (R for DDP, else 1), data_parallel_shard_degree (R for FSDP and ZeRO-2,
// else 1), fsdp_reshard_after_forward ("never" for ZeRO-2: FSDP2 keeps
// the gathered parameters from the forward to the backward and shards
// gradients and optimizer state only), pipeline_parallel_degree (S),
// pipeline_parallel_schedule ("GPipe" or "1F1B"),
// pipeline_parallel_microbatch_size (B / (R x M)) and
// module_fqns_per_model_part (each stage's modules as torchtitan's split,
// pipeline_module_split, keeps them: the model's top-level modules, and
// the items of a top-level nn.ModuleList or nn.ModuleDict, which it
// keeps item by item); [activation_checkpoint] mode "none". classes are
// the model's module classes by path (the exporter's meta); without
// them a top-level module is taken for a plain module, and the file says
// so. Refused: a batch the replicas or micro-batches do not divide
// (local_batch_size, pipeline_parallel_microbatch_size), 1F1B with fewer
// micro-batches than stages (torch's Schedule1F1B, which torchtitan runs,
// refuses it), a parameter read on two stages or a top-level module (or
// container item) whose modules run on different stages
// (module_fqns_per_model_part: torchtitan's split gives each stage its
// own whole modules), a graph without batch information that splits it.
func TorchTitanConfig(p *TorchPlan, version string, classes map[string]string) ([]byte, error) {
	rel, err := CheckedRelease("torchtitan", version)
	if err != nil {
		return nil, err
	}
	g, err := titanGraphOf(p, classes)
	if err != nil {
		return nil, err
	}
	if rel.Version == "0.3" {
		return titan03Graph(p, g, rel, len(classes) == 0), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# torchtitan %s job configuration (TOML for --job.config_file; checked with torchtitan %s) written by placer export from its torch plan of %s\n", rel.Version, rel.Checked, p.Graph)
	titanGraphWorld(&b, p)
	b.WriteString("# [model]: your model's train spec (placer writes none)\n")
	if p.BucketBytes > 0 {
		fmt.Fprintf(&b, "# DDP gradient bucket %d bytes: torchtitan has no field for it (replicate's bucket_cap_mb in code)\n", p.BucketBytes)
	}
	if g.stages > 1 && len(classes) == 0 {
		b.WriteString("# the exporter's meta names no module classes: each top-level module is listed whole (a ModuleList or ModuleDict must be listed by its items)\n")
	}
	if g.batch {
		b.WriteString("\n[training]\n")
		fmt.Fprintf(&b, "local_batch_size = %d\nglobal_batch_size = %d\n", g.local, g.global)
	}
	b.WriteString("\n[parallelism]\n")
	fmt.Fprintf(&b, "data_parallel_replicate_degree = %d\ndata_parallel_shard_degree = %d\n", g.replicate, g.shard)
	if g.zero2 {
		b.WriteString("fsdp_reshard_after_forward = \"never\"\n")
	}
	b.WriteString("tensor_parallel_degree = 1\n")
	fmt.Fprintf(&b, "pipeline_parallel_degree = %d\n", g.stages)
	if g.stages > 1 {
		fmt.Fprintf(&b, "pipeline_parallel_schedule = %q\n", g.schedule)
		if g.micro > 0 {
			fmt.Fprintf(&b, "pipeline_parallel_microbatch_size = %d\n", g.micro)
		}
		b.WriteString(TOMLParts(g.parts))
	}
	b.WriteString("\n[activation_checkpoint]\nmode = \"none\"\n")
	return []byte(b.String()), nil
}

// titanGraph is a graph plan's torchtitan settings, whichever release
// writes them.
type titanGraph struct {
	batch            bool // the graph says its batch: local and global are set
	local, global    int  // training.local_batch_size, global_batch_size
	replicate, shard int  // the data-parallel degrees
	zero2            bool // fsdp_reshard_after_forward "never"
	stages           int  // pipeline_parallel_degree
	schedule         string
	micro            int // pipeline_parallel_microbatch_size (0: the graph has no batch)
	parts            [][]string
}

// titanGraphOf is plan p's torchtitan settings, or the one-line refusal
// of what torchtitan cannot say (TorchTitanConfig's list).
func titanGraphOf(p *TorchPlan, classes map[string]string) (titanGraph, error) {
	R, M, S := p.Replicas, p.MicroBatches, len(p.Stages)
	g := titanGraph{replicate: R, shard: 1, zero2: p.Shard == "zero2", stages: S}
	if p.Shard != "" {
		g.replicate, g.shard = 1, R
	}
	var err error
	if S > 1 {
		if g.parts, err = titanParts(p, classes); err != nil {
			return g, err
		}
	}
	if p.Batch > 0 {
		if p.Batch%R != 0 {
			return g, fmt.Errorf("export: torchtitan: training.local_batch_size: the batch of %d does not split into %d replicas", p.Batch, R)
		}
		g.batch, g.local, g.global = true, p.Batch/R, p.Batch
	} else if R*M > 1 {
		return g, fmt.Errorf("export: torchtitan: training.local_batch_size: graph %s has no batch information to split", p.Graph)
	}
	if S == 1 {
		if M > 1 {
			return g, fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_microbatch_size: %d micro-batches without a pipeline (gradient accumulation) has no torchtitan field", M)
		}
		return g, nil
	}
	if len(p.Shared) > 0 {
		sh := p.Shared[0]
		return g, fmt.Errorf("export: torchtitan: parallelism.module_fqns_per_model_part: parameter %s is read on stages %s; torchtitan's pipeline split gives each stage its own modules", sh.Param, joinInts(sh.Stages))
	}
	g.schedule = map[string]string{"gpipe": "GPipe", "1f1b": "1F1B"}[p.Schedule]
	if g.schedule == "" {
		return g, fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_schedule: schedule %q", p.Schedule)
	}
	if g.schedule == "1F1B" && M < S {
		return g, fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_schedule: 1F1B with %d micro-batches on %d stages: torch's Schedule1F1B, which torchtitan runs, needs at least as many micro-batches as stages (mb=%d, or schedule=gpipe)", M, S, S)
	}
	if p.Batch > 0 {
		if (p.Batch/R)%M != 0 {
			return g, fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_microbatch_size: a replica's %d samples do not split into %d micro-batches", p.Batch/R, M)
		}
		g.micro = p.Batch / R / M
	}
	return g, nil
}

// titanGraphWorld writes the header's line on the plan's GPUs.
func titanGraphWorld(b *strings.Builder, p *TorchPlan) {
	R, S := p.Replicas, len(p.Stages)
	fmt.Fprintf(b, "# NGPU = %d (%d data-parallel x %d pipeline stages)", R*S, R, S)
	if R*S < p.GPUs {
		fmt.Fprintf(b, "; placer's prediction had %d GPUs, %d of them idle", p.GPUs, p.GPUs-R*S)
	}
	b.WriteString("\n")
}

// TOMLParts is module_fqns_per_model_part, one model part a line.
func TOMLParts(parts [][]string) string {
	var b strings.Builder
	b.WriteString("module_fqns_per_model_part = [\n")
	for _, q := range parts {
		s := make([]string, len(q))
		for i, m := range q {
			s[i] = strconv.Quote(m)
		}
		fmt.Fprintf(&b, "  [%s],\n", strings.Join(s, ", "))
	}
	b.WriteString("]\n")
	return b.String()
}

// isContainer reports whether class is one torchtitan's split keeps item
// by item (pipeline_module_split: nn.ModuleList and nn.ModuleDict).
func isContainer(class string) bool { return class == "ModuleList" || class == "ModuleDict" }

// titanParts lists each stage's modules as torchtitan's split keeps
// them: a top-level module, or an item ("layers.3") of a top-level
// ModuleList or ModuleDict, each whole on one stage, in forward order.
func titanParts(p *TorchPlan, classes map[string]string) ([][]string, error) {
	const field = "export: torchtitan: parallelism.module_fqns_per_model_part"
	unit := func(m string) string {
		top, rest, nested := strings.Cut(m, ".")
		if nested && isContainer(classes[top]) {
			item, _, _ := strings.Cut(rest, ".")
			return top + "." + item
		}
		return top
	}
	stagesOf := map[string][]int{} // unit -> the stages its modules run on
	example := map[string]map[int]string{}
	for _, st := range p.Stages {
		for _, m := range st.Modules {
			if name, _, ok := strings.Cut(m, "#"); ok {
				return nil, fmt.Errorf("%s: module %s is applied several times and its calls run on different stages (%s on stage %d); torchtitan splits at whole modules", field, name, m, st.Stage)
			}
			u := unit(m)
			if example[u] == nil {
				example[u] = map[int]string{}
			}
			if _, ok := example[u][st.Stage]; !ok {
				example[u][st.Stage] = m
				stagesOf[u] = append(stagesOf[u], st.Stage)
			}
		}
	}
	parts := make([][]string, len(p.Stages))
	seen := map[string]bool{}
	for i, st := range p.Stages {
		for _, m := range st.Modules {
			u := unit(m)
			if ss := stagesOf[u]; len(ss) > 1 {
				sort.Ints(ss)
				kind := "top-level module"
				if strings.Contains(u, ".") {
					kind = classes[u[:strings.IndexByte(u, '.')]] + " item"
				}
				return nil, fmt.Errorf("%s: %s %s runs on stages %s (%s on stage %d, %s on stage %d); torchtitan's split keeps top-level modules and the items of top-level ModuleLists and ModuleDicts whole",
					field, kind, u, joinInts(ss), example[u][ss[0]], ss[0], example[u][ss[1]], ss[1])
			}
			if !seen[u] {
				seen[u] = true
				parts[i] = append(parts[i], u)
			}
		}
	}
	for i, q := range parts {
		if len(q) == 0 {
			return nil, fmt.Errorf("%s: stage %d has no modules", field, i)
		}
	}
	return parts, nil
}

// DeepSpeedConfig writes plan p as a DeepSpeed configuration (JSON) for
// release version ("" = 0.19), with only keys DeepSpeed reads:
// train_batch_size (B), train_micro_batch_size_per_gpu (B / (R x M)),
// gradient_accumulation_steps (M), zero_optimization.stage (0 for DDP, 2
// for ZeRO-2, 3 for FSDP) and, under ZeRO, reduce_bucket_size (the
// strategy's bucket in FP32 elements; DeepSpeed's DDP all-reduce bucket,
// stage 0, is no configuration key). DeepSpeed's pipeline is no
// configuration key either (its engine reads none of "pipeline"'s keys
// that would say the stages): it is deepspeed.pipe.PipelineModule in the
// user's code. With S > 1 stages, pipeline is that code: a Python module
// (written beside the configuration, DeepSpeedPipelinePath) that builds
// PipelineModule(layers, num_stages=S, partition_method="uniform") over
// one layer per stage, which DeepSpeed's partition_uniform splits as the
// plan does; the plan's world is S x R (the data-parallel degree
// DeepSpeed infers from the world size over S). Refused: a batch that is
// not R x M x b (train_micro_batch_size_per_gpu), a pipeline with ZeRO-2
// or FSDP (zero_optimization.stage: DeepSpeed's pipeline engine runs
// stage 0 or 1), a GPipe pipeline (pipeline: its engine runs 1F1B), a
// parameter read on two stages (tied layers are DeepSpeed's
// TiedLayerSpec, which placer does not write), a module applied on two
// stages or cut between stages, a graph without batch information.
// configName is the configuration's file name, which the pipeline module
// names ("" = ds_config.json).
func DeepSpeedConfig(p *TorchPlan, version, configName string) (config, pipeline []byte, err error) {
	rel, err := CheckedRelease("deepspeed", version)
	if err != nil {
		return nil, nil, err
	}
	R, M, S := p.Replicas, p.MicroBatches, len(p.Stages)
	if p.Batch == 0 {
		return nil, nil, fmt.Errorf("export: deepspeed: train_batch_size: graph %s has no batch information", p.Graph)
	}
	if p.Batch%(R*M) != 0 {
		return nil, nil, fmt.Errorf("export: deepspeed: train_micro_batch_size_per_gpu: the batch of %d is not %d replicas x %d micro-batches x a whole micro-batch", p.Batch, R, M)
	}
	stage := map[string]int{"": 0, "zero2": 2, "fsdp": 3}[p.Shard]
	type zero struct {
		Stage            int   `json:"stage"`
		ReduceBucketSize int64 `json:"reduce_bucket_size,omitempty"`
	}
	cfg := struct {
		TrainBatchSize int  `json:"train_batch_size"`
		MicroBatch     int  `json:"train_micro_batch_size_per_gpu"`
		Accumulation   int  `json:"gradient_accumulation_steps"`
		Zero           zero `json:"zero_optimization"`
	}{TrainBatchSize: p.Batch, MicroBatch: p.Batch / (R * M), Accumulation: M, Zero: zero{Stage: stage}}
	if stage > 0 {
		cfg.Zero.ReduceBucketSize = p.BucketBytes / 4
	}
	if S > 1 {
		if stage > 1 {
			return nil, nil, fmt.Errorf("export: deepspeed: zero_optimization.stage: %d with %d pipeline stages; DeepSpeed's pipeline engine runs ZeRO stage 0 or 1", stage, S)
		}
		if p.Schedule != "1f1b" && M > 1 {
			return nil, nil, fmt.Errorf("export: deepspeed: pipeline: schedule %s; DeepSpeed's pipeline engine runs 1F1B (TrainSchedule) only", p.Schedule)
		}
		if len(p.Shared) > 0 {
			sh := p.Shared[0]
			return nil, nil, fmt.Errorf("export: deepspeed: pipeline: parameter %s is read on stages %s; DeepSpeed ties weights across stages with TiedLayerSpec, which placer does not write", sh.Param, joinInts(sh.Stages))
		}
		parts, err := outermostParts(p, "export: deepspeed: pipeline", "DeepSpeed's pipeline takes layers whole")
		if err != nil {
			return nil, nil, err
		}
		if configName == "" {
			configName = "ds_config.json"
		}
		pipeline = deepSpeedPipeline(p, rel, parts, configName)
	}
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	return append(out, '\n'), pipeline, nil
}

// outermostParts lists each stage's outermost modules in forward order.
// Refused (field, why): a module applied several times whose calls run
// on different stages, a module whose part runs on another stage.
func outermostParts(p *TorchPlan, field, why string) ([][]string, error) {
	stageOf := map[string]int{}
	for _, st := range p.Stages {
		for _, m := range st.Modules {
			stageOf[m] = st.Stage
		}
	}
	var parts [][]string
	for _, st := range p.Stages {
		var q []string
		for _, m := range st.Modules {
			if name, _, ok := strings.Cut(m, "#"); ok {
				return nil, fmt.Errorf("%s: module %s is applied several times and its calls run on different stages (%s on stage %d); %s", field, name, m, st.Stage, why)
			}
			outer := true
			for a := m; strings.Contains(a, "."); {
				a = a[:strings.LastIndexByte(a, '.')]
				if s, ok := stageOf[a]; ok {
					if s != st.Stage {
						return nil, fmt.Errorf("%s: module %s runs on stage %d and its part %s on stage %d; %s", field, a, s, m, st.Stage, why)
					}
					outer = false
				}
			}
			if outer {
				q = append(q, m)
			}
		}
		parts = append(parts, q)
	}
	return parts, nil
}

// DeepSpeedPipelinePath is where the pipeline module of a DeepSpeed
// export written to out goes: beside it, out's name without its
// extension, as a Python identifier, then "_pipeline.py"
// (ds_config.json: ds_config_pipeline.py).
func DeepSpeedPipelinePath(out string) string {
	base := filepath.Base(out)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	name := []byte(base)
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			name[i] = '_'
		}
	}
	return filepath.Join(filepath.Dir(out), string(name)+"_pipeline.py")
}

// PyString is s as a Python string literal (JSON's is one).
func PyString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// deepSpeedPipeline is the Python module that builds plan p's
// PipelineModule for DeepSpeed release rel: one layer per stage, which
// partition_method="uniform" gives stage i layer i.
func deepSpeedPipeline(p *TorchPlan, rel Release, parts [][]string, configName string) []byte {
	S, R := len(p.Stages), p.Replicas
	var b strings.Builder
	fmt.Fprintf(&b, `"""DeepSpeed %s pipeline of placer's plan of %s (written by placer export
beside its DeepSpeed configuration; checked with deepspeed %s).

%d pipeline stages x %d data-parallel replicas: DeepSpeed's world size is %d
(its PipelineModule takes the data-parallel degree as the world size over
the stages), %d micro-batches of %d samples per step in DeepSpeed's 1F1B
(TrainSchedule). DeepSpeed reads no stage boundaries from its
configuration: they are this module's PipelineModule, one layer per stage,
which partition_method="uniform" (deepspeed.runtime.utils.partition_uniform
with as many layers as stages) gives stage i layer i.

    import deepspeed
    net = pipeline_module(stage_layers(model), loss_fn=loss_fn)  # this module's
    engine, _, _, _ = deepspeed.initialize(model=net, config=config_path(),
                                           model_parameters=net.parameters())
    loss = engine.train_batch(data_iter)
"""

import os

DEEPSPEED = %s
CONFIG = %s  # the configuration, beside this file
NUM_STAGES = %d
WORLD_SIZE = %d

# Each stage's modules, the model's module paths (outermost), in forward
# order.
STAGE_MODULES = [
`, rel.Version, p.Graph, rel.Checked, S, R, S*R, p.MicroBatches, p.Batch/(R*p.MicroBatches), PyString(rel.Version), PyString(configName), S, S*R)
	for _, q := range parts {
		s := make([]string, len(q))
		for i, m := range q {
			s[i] = PyString(m)
		}
		fmt.Fprintf(&b, "    [%s],\n", strings.Join(s, ", "))
	}
	b.WriteString(`]


def config_path():
    """The DeepSpeed configuration written with this module."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), CONFIG)


def stage_layers(model):
    """One torch.nn.Sequential per stage of model's STAGE_MODULES, for a model
    whose listed modules run one after the other (PipelineModule runs each
    layer on the previous one's output); a model that does not chain them
    passes pipeline_module its own layer per stage."""
    import torch.nn as nn

    return [nn.Sequential(*[model.get_submodule(m) for m in mods]) for mods in STAGE_MODULES]


def pipeline_module(layers, **kwargs):
    """deepspeed.pipe.PipelineModule of the plan's stages: layers holds one
    layer per stage; kwargs go to PipelineModule (loss_fn,
    activation_checkpoint_interval, ...)."""
    from deepspeed.pipe import PipelineModule

    layers = list(layers)
    if len(layers) != NUM_STAGES:
        raise ValueError("placer's plan has %d stages: want one layer per stage, got %d" % (NUM_STAGES, len(layers)))
    return PipelineModule(layers=layers, num_stages=NUM_STAGES, partition_method="uniform", **kwargs)
`)
	return []byte(b.String())
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " and ")
}
