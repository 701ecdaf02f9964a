package export

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// handPlan is a hand-made torch plan of net: stages of modules, in order.
func handPlan(batch, R, M int, sched, shard string, stages ...[]string) *TorchPlan {
	p := &TorchPlan{Format: TorchPlanFormat, Version: TorchPlanVersion, Graph: "net", Batch: batch, Devices: len(stages), GPUs: R * len(stages),
		Replicas: R, MicroBatches: M, Schedule: sched, Shard: shard}
	for i, m := range stages {
		p.Stages = append(p.Stages, TorchStage{Stage: i, Device: i, Modules: m})
	}
	return p
}

// titanBody is a torchtitan configuration after its header's comment
// lines.
func titanBody(out []byte) string {
	body := string(out)
	for strings.HasPrefix(body, "#") {
		body = body[strings.IndexByte(body, '\n')+1:]
	}
	return body
}

// TestTorchTitanConfig: the configurations by hand (B / R samples per
// replica, B / (R x M) per micro-batch; DDP replicates, FSDP and ZeRO-2
// shard, ZeRO-2 without resharding after the forward), and the one-line
// refusals naming torchtitan's field. module_fqns_per_model_part lists
// what torchtitan 0.2.2's pipeline_module_split keeps: top-level
// modules, and the items of a top-level ModuleList or ModuleDict
// (tools/dev/frameworks checks these files with torchtitan's own code).
func TestTorchTitanConfig(t *testing.T) {
	tail := "\n[activation_checkpoint]\nmode = \"none\"\n"
	shared := handPlan(32, 1, 2, "1f1b", "", []string{"a"}, []string{"b"})
	shared.Shared = []TorchShared{{Param: "a.weight", Stages: []int{0, 1}}}
	list := map[string]string{"": "Net", "layers": "ModuleList", "layers.0": "Block", "layers.1": "Block", "head": "Linear"}
	for _, c := range []struct {
		name    string
		p       *TorchPlan
		classes map[string]string
		want    string // the configuration after its comments, or the error's text
	}{
		{"ddp", handPlan(32, 4, 1, "gpipe", "", []string{"a", "b"}), nil,
			"\n[training]\nlocal_batch_size = 8\nglobal_batch_size = 32\n" +
				"\n[parallelism]\ndata_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 1\ntensor_parallel_degree = 1\npipeline_parallel_degree = 1\n" + tail},
		{"zero2", handPlan(64, 8, 1, "gpipe", "zero2", []string{"a"}), nil,
			"\n[training]\nlocal_batch_size = 8\nglobal_batch_size = 64\n" +
				"\n[parallelism]\ndata_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 8\nfsdp_reshard_after_forward = \"never\"\ntensor_parallel_degree = 1\npipeline_parallel_degree = 1\n" + tail},
		{"pipeline", handPlan(32, 2, 4, "1f1b", "", []string{"a"}, []string{"b", "c"}), nil,
			"\n[training]\nlocal_batch_size = 16\nglobal_batch_size = 32\n" +
				"\n[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 1\ntensor_parallel_degree = 1\npipeline_parallel_degree = 2\n" +
				"pipeline_parallel_schedule = \"1F1B\"\npipeline_parallel_microbatch_size = 4\nmodule_fqns_per_model_part = [\n  [\"a\"],\n  [\"b\", \"c\"],\n]\n" + tail},
		{"fsdp gpipe", handPlan(16, 2, 2, "gpipe", "fsdp", []string{"a"}, []string{"b"}), nil,
			"\n[training]\nlocal_batch_size = 8\nglobal_batch_size = 16\n" +
				"\n[parallelism]\ndata_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 2\ntensor_parallel_degree = 1\npipeline_parallel_degree = 2\n" +
				"pipeline_parallel_schedule = \"GPipe\"\npipeline_parallel_microbatch_size = 4\nmodule_fqns_per_model_part = [\n  [\"a\"],\n  [\"b\"],\n]\n" + tail},
		{"batch", handPlan(30, 4, 1, "gpipe", "", []string{"a"}), nil, "training.local_batch_size: the batch of 30 does not split into 4 replicas"},
		{"micro-batch", handPlan(32, 2, 3, "1f1b", "", []string{"a"}, []string{"b"}), nil, "parallelism.pipeline_parallel_microbatch_size: a replica's 16 samples do not split into 3 micro-batches"},
		// torch's Schedule1F1B refuses fewer micro-batches than stages.
		{"1f1b, 1 micro-batch", handPlan(32, 2, 1, "1f1b", "", []string{"a"}, []string{"b"}), nil, "parallelism.pipeline_parallel_schedule: 1F1B with 1 micro-batches on 2 stages"},
		{"accumulation", handPlan(32, 1, 4, "gpipe", "", []string{"a"}), nil, "parallelism.pipeline_parallel_microbatch_size: 4 micro-batches without a pipeline"},
		{"shared", shared, nil, "parallelism.module_fqns_per_model_part: parameter a.weight is read on stages 0 and 1"},
		// layers.0 and its children on stage 0 list as layers.0; layers.1's
		// attention alone on stage 1 lists as layers.1 (it was
		// "layers.1.attn", which torchtitan's split, keeping the items of
		// the top-level ModuleList by index, keeps nothing of).
		{"items of a ModuleList", handPlan(8, 1, 2, "1f1b", "", []string{"layers.0", "layers.0.attn", "layers.0.mlp"}, []string{"layers.1.attn", "head"}), list,
			"\n[training]\nlocal_batch_size = 8\nglobal_batch_size = 8\n" +
				"\n[parallelism]\ndata_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 1\ntensor_parallel_degree = 1\npipeline_parallel_degree = 2\n" +
				"pipeline_parallel_schedule = \"1F1B\"\npipeline_parallel_microbatch_size = 4\nmodule_fqns_per_model_part = [\n  [\"layers.0\"],\n  [\"layers.1\", \"head\"],\n]\n" + tail},
		// Without the classes, layers is a plain module: whole on one stage.
		{"no classes", handPlan(8, 1, 2, "1f1b", "", []string{"layers.0", "layers.0.attn"}, []string{"layers.1.attn", "head"}), nil,
			"parallelism.module_fqns_per_model_part: top-level module layers runs on stages 0 and 1"},
		{"cut inside an item", handPlan(8, 1, 2, "1f1b", "", []string{"layers.0.attn"}, []string{"layers.0", "layers.0.mlp"}), list,
			"parallelism.module_fqns_per_model_part: ModuleList item layers.0 runs on stages 0 and 1 (layers.0.attn on stage 0, layers.0 on stage 1)"},
		{"a plain module's child", handPlan(8, 1, 2, "1f1b", "", []string{"head.a"}, []string{"head.b"}), list,
			"parallelism.module_fqns_per_model_part: top-level module head runs on stages 0 and 1"},
	} {
		got, err := TorchTitanConfig(c.p, "0.2", c.classes)
		if strings.HasPrefix(c.want, "\n") {
			if err != nil || titanBody(got) != c.want {
				t.Errorf("%s: got %v\n%s\nwant\n%s", c.name, err, got, c.want)
			}
			if err == nil && !strings.HasPrefix(string(got), "# torchtitan 0.2 job configuration (TOML for --job.config_file; checked with torchtitan 0.2.2)") {
				t.Errorf("%s: header\n%s", c.name, got)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

// TestSplitFormat: --to FORMAT[@VERSION], the release by default, and
// the one-line refusals of a release placer does not write.
func TestSplitFormat(t *testing.T) {
	for _, c := range []struct{ to, format, version, err string }{
		{"torchtitan", "torchtitan", "0.3", ""},
		{"torchtitan@0.3", "torchtitan", "0.3", ""},
		{"torchtitan@0.3.0", "torchtitan", "0.3", ""},
		{"TorchTitan@0.2", "torchtitan", "0.2", ""},
		{"torchtitan@0.2.2", "torchtitan", "0.2", ""},
		{"deepspeed", "deepspeed", "0.19", ""},
		{"deepspeed@0.19.8", "deepspeed", "0.19", ""},
		{"torch-plan", "torch-plan", "", ""},
		{"nonsense", "nonsense", "", ""},
		{"torchtitan@0.9", "", "", "--to torchtitan@0.9: placer writes torchtitan@0.3 (checked against 0.3.0), torchtitan@0.2 (checked against 0.2.2) only"},
		{"torchtitan@0.1", "", "", "--to torchtitan@0.1: torchtitan 0.1's TOML names other fields"},
		{"deepspeed@0.14", "", "", "placer writes deepspeed@0.19 (checked against 0.19.8) only"},
		{"megatron@0.12", "", "", "only torchtitan and deepspeed take a version"},
	} {
		f, v, err := SplitFormat(c.to)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error %v, want one line containing %q", c.to, err, c.err)
			}
			continue
		}
		if err != nil || f != c.format || v != c.version {
			t.Errorf("%s: %q %q %v, want %q %q", c.to, f, v, err, c.format, c.version)
		}
	}
	for out, want := range map[string]string{"ds_config.json": "ds_config_pipeline.py", "out/llama-8b.v2.json": "out/llama_8b_v2_pipeline.py", "cfg": "cfg_pipeline.py"} {
		if got := DeepSpeedPipelinePath(out); got != want {
			t.Errorf("DeepSpeedPipelinePath(%s) = %s, want %s", out, got, want)
		}
	}
}

// TestDeepSpeedConfig: the configurations by hand (train_batch_size = B
// = micro-batch x accumulation x replicas; ZeRO stage 0, 2, 3 for DDP,
// ZeRO-2, FSDP), the pipeline's PipelineModule in Python, and the
// one-line refusals. Only keys DeepSpeed reads: no pipeline section (its
// engine reads none of it that says the stages; they were in
// pipeline.stages and pipeline.stage_modules), and no reduce_bucket_size
// at stage 0 (DeepSpeed's DDP all-reduce takes no bucket from its
// configuration).
func TestDeepSpeedConfig(t *testing.T) {
	bucket := handPlan(32, 4, 1, "gpipe", "", []string{"a"})
	bucket.BucketBytes = 4 << 20
	zero2bucket := handPlan(32, 4, 1, "gpipe", "zero2", []string{"a"})
	zero2bucket.BucketBytes = 4 << 20
	shared := handPlan(32, 2, 4, "1f1b", "", []string{"a"}, []string{"b"})
	shared.Shared = []TorchShared{{Param: "a.weight", Stages: []int{0, 1}}}
	for _, c := range []struct {
		name string
		p    *TorchPlan
		want string // the configuration (JSON), or the error's text
		py   []string
	}{
		{"ddp", handPlan(32, 4, 1, "gpipe", "", []string{"a", "b"}),
			`{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 0}}`, nil},
		{"ddp bucket", bucket,
			`{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 0}}`, nil},
		{"zero2 bucket", zero2bucket,
			`{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2, "reduce_bucket_size": 1048576}}`, nil},
		{"fsdp", handPlan(64, 8, 2, "gpipe", "fsdp", []string{"a"}),
			`{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2, "zero_optimization": {"stage": 3}}`, nil},
		{"zero2", handPlan(64, 8, 1, "gpipe", "zero2", []string{"a"}),
			`{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}}`, nil},
		{"pipeline", handPlan(32, 2, 4, "1f1b", "", []string{"a"}, []string{"b", "b.x", "c"}),
			`{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4, "zero_optimization": {"stage": 0}}`,
			[]string{`"""DeepSpeed 0.19 pipeline of placer's plan of net`, "checked with deepspeed 0.19.8", "NUM_STAGES = 2\n", "WORLD_SIZE = 4\n", "CONFIG = \"ds.json\"",
				"STAGE_MODULES = [\n    [\"a\"],\n    [\"b\", \"c\"],\n]\n", `partition_method="uniform"`}},
		{"batch", handPlan(30, 4, 1, "gpipe", "", []string{"a"}), "train_micro_batch_size_per_gpu: the batch of 30 is not 4 replicas x 1 micro-batches", nil},
		{"no batch", handPlan(0, 1, 1, "gpipe", "", []string{"a"}), "train_batch_size: graph net has no batch information", nil},
		{"gpipe", handPlan(32, 1, 4, "gpipe", "", []string{"a"}, []string{"b"}), "pipeline: schedule gpipe; DeepSpeed's pipeline engine runs 1F1B", nil},
		{"fsdp pipeline", handPlan(32, 2, 4, "1f1b", "fsdp", []string{"a"}, []string{"b"}), "zero_optimization.stage: 3 with 2 pipeline stages", nil},
		{"shared", shared, "pipeline: parameter a.weight is read on stages 0 and 1; DeepSpeed ties weights across stages with TiedLayerSpec", nil},
		{"cut", handPlan(32, 2, 4, "1f1b", "", []string{"a.x"}, []string{"a"}), "pipeline: module a runs on stage 1 and its part a.x on stage 0", nil},
	} {
		got, py, err := DeepSpeedConfig(c.p, "", "ds.json")
		if strings.HasPrefix(c.want, "{") {
			var g, w any
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(c.want), &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s: got %s, want %s", c.name, got, c.want)
			}
			if (py != nil) != (c.py != nil) {
				t.Errorf("%s: pipeline module %q", c.name, py)
			}
			for _, w := range c.py {
				if !strings.Contains(string(py), w) {
					t.Errorf("%s: pipeline module lacks %q:\n%s", c.name, w, py)
				}
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}
