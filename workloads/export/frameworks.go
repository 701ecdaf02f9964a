package export

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The torch plan in other frameworks' configuration files: what a
// decision of a graph from PyTorch is (stages, replicas, sharding,
// micro-batches, schedule) written as a torchtitan job configuration or
// a DeepSpeed configuration, for the strategies each expresses; what it
// cannot express is refused in one line naming its field.

// TorchTitanConfig writes plan p as a torchtitan job configuration
// (TOML; torchtitan/config/job_config.py): [training] local_batch_size
// (B / R) and global_batch_size (B); [parallelism]
// data_parallel_replicate_degree (R for DDP, else 1),
// data_parallel_shard_degree (R for FSDP and ZeRO-2, else 1),
// fsdp_reshard_after_forward ("never" for ZeRO-2: FSDP2 keeps the
// gathered parameters from the forward to the backward and shards
// gradients and optimizer state only), pipeline_parallel_degree (S),
// pipeline_parallel_schedule ("GPipe" or "1F1B"),
// pipeline_parallel_microbatch_size (B / (R x M)) and
// module_fqns_per_model_part (each stage's modules); [activation_checkpoint]
// mode "none". Refused: a batch the replicas or micro-batches do not
// divide (local_batch_size, pipeline_parallel_microbatch_size), a
// parameter read on two stages or a module whose part runs on another
// stage (module_fqns_per_model_part: torchtitan's split gives each stage
// its own whole modules; each stage lists its outermost ones), a graph
// without batch information that splits it.
func TorchTitanConfig(p *TorchPlan) ([]byte, error) {
	R, M, S := p.Replicas, p.MicroBatches, len(p.Stages)
	var b strings.Builder
	fmt.Fprintf(&b, "# torchtitan job configuration written by placer export from its torch plan of %s\n", p.Graph)
	fmt.Fprintf(&b, "# NGPU = %d (%d data-parallel x %d pipeline stages)", R*S, R, S)
	if R*S < p.GPUs {
		fmt.Fprintf(&b, "; placer's prediction had %d GPUs, %d of them idle", p.GPUs, p.GPUs-R*S)
	}
	b.WriteString("\n")
	if p.BucketBytes > 0 {
		fmt.Fprintf(&b, "# DDP gradient bucket %d bytes: torchtitan has no field for it (replicate's bucket_cap_mb in code)\n", p.BucketBytes)
	}
	if p.Batch > 0 {
		if p.Batch%R != 0 {
			return nil, fmt.Errorf("export: torchtitan: training.local_batch_size: the batch of %d does not split into %d replicas", p.Batch, R)
		}
		b.WriteString("\n[training]\n")
		fmt.Fprintf(&b, "local_batch_size = %d\nglobal_batch_size = %d\n", p.Batch/R, p.Batch)
	} else if R*M > 1 {
		return nil, fmt.Errorf("export: torchtitan: training.local_batch_size: graph %s has no batch information to split", p.Graph)
	}
	b.WriteString("\n[parallelism]\n")
	replicate, shard := R, 1
	if p.Shard != "" {
		replicate, shard = 1, R
	}
	fmt.Fprintf(&b, "data_parallel_replicate_degree = %d\ndata_parallel_shard_degree = %d\n", replicate, shard)
	if p.Shard == "zero2" {
		b.WriteString("fsdp_reshard_after_forward = \"never\"\n")
	}
	b.WriteString("tensor_parallel_degree = 1\n")
	fmt.Fprintf(&b, "pipeline_parallel_degree = %d\n", S)
	if S > 1 {
		if len(p.Shared) > 0 {
			sh := p.Shared[0]
			return nil, fmt.Errorf("export: torchtitan: parallelism.module_fqns_per_model_part: parameter %s is read on stages %s; torchtitan's pipeline split gives each stage its own modules", sh.Param, joinInts(sh.Stages))
		}
		sched := map[string]string{"gpipe": "GPipe", "1f1b": "1F1B"}[p.Schedule]
		if sched == "" {
			return nil, fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_schedule: schedule %q", p.Schedule)
		}
		fmt.Fprintf(&b, "pipeline_parallel_schedule = %q\n", sched)
		if p.Batch > 0 {
			if (p.Batch/R)%M != 0 {
				return nil, fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_microbatch_size: a replica's %d samples do not split into %d micro-batches", p.Batch/R, M)
			}
			fmt.Fprintf(&b, "pipeline_parallel_microbatch_size = %d\n", p.Batch/R/M)
		}
		// torchtitan keeps a part's modules whole: each part lists its
		// outermost modules, and a module whose child runs on another
		// stage cannot be listed.
		stageOf := map[string]int{}
		for _, st := range p.Stages {
			for _, m := range st.Modules {
				stageOf[m] = st.Stage
			}
		}
		b.WriteString("module_fqns_per_model_part = [\n")
		for _, st := range p.Stages {
			var q []string
			for _, m := range st.Modules {
				if name, _, ok := strings.Cut(m, "#"); ok {
					return nil, fmt.Errorf("export: torchtitan: parallelism.module_fqns_per_model_part: module %s is applied several times and its calls run on different stages (%s on stage %d); torchtitan splits at whole modules", name, m, st.Stage)
				}
				outer := true
				for a := m; strings.Contains(a, "."); {
					a = a[:strings.LastIndexByte(a, '.')]
					if s, ok := stageOf[a]; ok {
						if s != st.Stage {
							return nil, fmt.Errorf("export: torchtitan: parallelism.module_fqns_per_model_part: module %s runs on stage %d and its part %s on stage %d; torchtitan splits at whole modules", a, s, m, st.Stage)
						}
						outer = false
					}
				}
				if outer {
					q = append(q, strconv.Quote(m))
				}
			}
			fmt.Fprintf(&b, "  [%s],\n", strings.Join(q, ", "))
		}
		b.WriteString("]\n")
	} else if M > 1 {
		return nil, fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_microbatch_size: %d micro-batches without a pipeline (gradient accumulation) has no torchtitan field", M)
	}
	b.WriteString("\n[activation_checkpoint]\nmode = \"none\"\n")
	return []byte(b.String()), nil
}

// DeepSpeedConfig writes plan p as a DeepSpeed configuration (JSON):
// train_batch_size (B), train_micro_batch_size_per_gpu (B / (R x M)),
// gradient_accumulation_steps (M), zero_optimization.stage (0 for DDP, 2
// for ZeRO-2, 3 for FSDP) and, with S > 1 stages, pipeline.stages (S;
// the module lists of the stages in pipeline.stage_modules, for the
// PipelineModule's layers: DeepSpeed reads the pipeline section's keys
// and ignores the ones it does not use). Refused: a batch that is not R x
// M x b (train_micro_batch_size_per_gpu), a pipeline with ZeRO-2 or FSDP
// (zero_optimization.stage: DeepSpeed's pipeline engine runs stage 0 or
// 1), a GPipe pipeline (pipeline: its engine runs 1F1B), a graph without
// batch information.
func DeepSpeedConfig(p *TorchPlan) ([]byte, error) {
	R, M, S := p.Replicas, p.MicroBatches, len(p.Stages)
	if p.Batch == 0 {
		return nil, fmt.Errorf("export: deepspeed: train_batch_size: graph %s has no batch information", p.Graph)
	}
	if p.Batch%(R*M) != 0 {
		return nil, fmt.Errorf("export: deepspeed: train_micro_batch_size_per_gpu: the batch of %d is not %d replicas x %d micro-batches x a whole micro-batch", p.Batch, R, M)
	}
	stage := map[string]int{"": 0, "zero2": 2, "fsdp": 3}[p.Shard]
	type zero struct {
		Stage            int   `json:"stage"`
		ReduceBucketSize int64 `json:"reduce_bucket_size,omitempty"`
	}
	type pipe struct {
		Stages       int        `json:"stages"`
		StageModules [][]string `json:"stage_modules"`
	}
	cfg := struct {
		TrainBatchSize int   `json:"train_batch_size"`
		MicroBatch     int   `json:"train_micro_batch_size_per_gpu"`
		Accumulation   int   `json:"gradient_accumulation_steps"`
		Zero           zero  `json:"zero_optimization"`
		Pipeline       *pipe `json:"pipeline,omitempty"`
	}{TrainBatchSize: p.Batch, MicroBatch: p.Batch / (R * M), Accumulation: M, Zero: zero{Stage: stage, ReduceBucketSize: p.BucketBytes / 4}}
	if S > 1 {
		if stage > 1 {
			return nil, fmt.Errorf("export: deepspeed: zero_optimization.stage: %d with %d pipeline stages; DeepSpeed's pipeline engine runs ZeRO stage 0 or 1", stage, S)
		}
		if p.Schedule != "1f1b" && M > 1 {
			return nil, fmt.Errorf("export: deepspeed: pipeline: schedule %s; DeepSpeed's pipeline engine runs 1F1B (TrainSchedule) only", p.Schedule)
		}
		cfg.Pipeline = &pipe{Stages: S}
		for _, st := range p.Stages {
			for _, m := range st.Modules {
				if name, _, ok := strings.Cut(m, "#"); ok {
					return nil, fmt.Errorf("export: deepspeed: pipeline: module %s is applied several times and its calls run on different stages (%s on stage %d); DeepSpeed's pipeline takes layers whole", name, m, st.Stage)
				}
			}
			cfg.Pipeline.StageModules = append(cfg.Pipeline.StageModules, st.Modules)
		}
	}
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " and ")
}
