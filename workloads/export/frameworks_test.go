package export

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// plan is a hand-made torch plan of net: stages of modules, in order.
func plan(batch, R, M int, sched, shard string, stages ...[]string) *TorchPlan {
	p := &TorchPlan{Format: TorchPlanFormat, Version: TorchPlanVersion, Graph: "net", Batch: batch, Devices: len(stages), GPUs: R * len(stages),
		Replicas: R, MicroBatches: M, Schedule: sched, Shard: shard}
	for i, m := range stages {
		p.Stages = append(p.Stages, TorchStage{Stage: i, Device: i, Modules: m})
	}
	return p
}

// TestTorchTitanConfig: the configurations by hand (B / R samples per
// replica, B / (R x M) per micro-batch; DDP replicates, FSDP and ZeRO-2
// shard, ZeRO-2 without resharding after the forward), and the one-line
// refusals naming torchtitan's field.
func TestTorchTitanConfig(t *testing.T) {
	head := "# torchtitan job configuration written by placer export from its torch plan of net\n"
	tail := "\n[activation_checkpoint]\nmode = \"none\"\n"
	shared := plan(32, 1, 2, "1f1b", "", []string{"a"}, []string{"b"})
	shared.Shared = []TorchShared{{Param: "a.weight", Stages: []int{0, 1}}}
	for _, c := range []struct {
		name string
		p    *TorchPlan
		want string // the configuration, or the error's text
	}{
		{"ddp", plan(32, 4, 1, "gpipe", "", []string{"a", "b"}), head + "# NGPU = 4 (4 data-parallel x 1 pipeline stages)\n" +
			"\n[training]\nlocal_batch_size = 8\nglobal_batch_size = 32\n" +
			"\n[parallelism]\ndata_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 1\ntensor_parallel_degree = 1\npipeline_parallel_degree = 1\n" + tail},
		{"zero2", plan(64, 8, 1, "gpipe", "zero2", []string{"a"}), head + "# NGPU = 8 (8 data-parallel x 1 pipeline stages)\n" +
			"\n[training]\nlocal_batch_size = 8\nglobal_batch_size = 64\n" +
			"\n[parallelism]\ndata_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 8\nfsdp_reshard_after_forward = \"never\"\ntensor_parallel_degree = 1\npipeline_parallel_degree = 1\n" + tail},
		{"pipeline", plan(32, 2, 4, "1f1b", "", []string{"a"}, []string{"b", "c"}), head + "# NGPU = 4 (2 data-parallel x 2 pipeline stages)\n" +
			"\n[training]\nlocal_batch_size = 16\nglobal_batch_size = 32\n" +
			"\n[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 1\ntensor_parallel_degree = 1\npipeline_parallel_degree = 2\n" +
			"pipeline_parallel_schedule = \"1F1B\"\npipeline_parallel_microbatch_size = 4\nmodule_fqns_per_model_part = [\n  [\"a\"],\n  [\"b\", \"c\"],\n]\n" + tail},
		{"fsdp gpipe", plan(16, 2, 2, "gpipe", "fsdp", []string{"a"}, []string{"b"}), head + "# NGPU = 4 (2 data-parallel x 2 pipeline stages)\n" +
			"\n[training]\nlocal_batch_size = 8\nglobal_batch_size = 16\n" +
			"\n[parallelism]\ndata_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 2\ntensor_parallel_degree = 1\npipeline_parallel_degree = 2\n" +
			"pipeline_parallel_schedule = \"GPipe\"\npipeline_parallel_microbatch_size = 4\nmodule_fqns_per_model_part = [\n  [\"a\"],\n  [\"b\"],\n]\n" + tail},
		{"batch", plan(30, 4, 1, "gpipe", "", []string{"a"}), "training.local_batch_size: the batch of 30 does not split into 4 replicas"},
		{"micro-batch", plan(32, 2, 3, "1f1b", "", []string{"a"}, []string{"b"}), "parallelism.pipeline_parallel_microbatch_size: a replica's 16 samples do not split into 3 micro-batches"},
		{"accumulation", plan(32, 1, 4, "gpipe", "", []string{"a"}), "parallelism.pipeline_parallel_microbatch_size: 4 micro-batches without a pipeline"},
		{"shared", shared, "parallelism.module_fqns_per_model_part: parameter a.weight is read on stages 0 and 1"},
		// layers.0 and its children on stage 0 list as layers.0.
		{"outermost", plan(8, 1, 2, "1f1b", "", []string{"layers.0", "layers.0.attn", "layers.0.mlp"}, []string{"layers.1.attn", "head"}), head + "# NGPU = 2 (1 data-parallel x 2 pipeline stages)\n" +
			"\n[training]\nlocal_batch_size = 8\nglobal_batch_size = 8\n" +
			"\n[parallelism]\ndata_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 1\ntensor_parallel_degree = 1\npipeline_parallel_degree = 2\n" +
			"pipeline_parallel_schedule = \"1F1B\"\npipeline_parallel_microbatch_size = 4\nmodule_fqns_per_model_part = [\n  [\"layers.0\"],\n  [\"layers.1.attn\", \"head\"],\n]\n" + tail},
		{"cut inside a module", plan(8, 1, 2, "1f1b", "", []string{"layers.0.attn"}, []string{"layers.0", "layers.0.mlp"}),
			"parallelism.module_fqns_per_model_part: module layers.0 runs on stage 1 and its part layers.0.attn on stage 0"},
	} {
		got, err := TorchTitanConfig(c.p)
		if strings.HasPrefix(c.want, "#") {
			if err != nil || string(got) != c.want {
				t.Errorf("%s: got %v\n%s\nwant\n%s", c.name, err, got, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

// TestDeepSpeedConfig: the configurations by hand (train_batch_size = B
// = micro-batch x accumulation x replicas; ZeRO stage 0, 2, 3 for DDP,
// ZeRO-2, FSDP; the pipeline's stages), and the one-line refusals.
func TestDeepSpeedConfig(t *testing.T) {
	bucket := plan(32, 4, 1, "gpipe", "", []string{"a"})
	bucket.BucketBytes = 4 << 20
	for _, c := range []struct {
		name string
		p    *TorchPlan
		want string // the configuration (JSON), or the error's text
	}{
		{"ddp", plan(32, 4, 1, "gpipe", "", []string{"a", "b"}),
			`{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 0}}`},
		{"ddp bucket", bucket,
			`{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 0, "reduce_bucket_size": 1048576}}`},
		{"fsdp", plan(64, 8, 2, "gpipe", "fsdp", []string{"a"}),
			`{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2, "zero_optimization": {"stage": 3}}`},
		{"zero2", plan(64, 8, 1, "gpipe", "zero2", []string{"a"}),
			`{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}}`},
		{"pipeline", plan(32, 2, 4, "1f1b", "", []string{"a"}, []string{"b", "c"}),
			`{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4, "zero_optimization": {"stage": 0},
			  "pipeline": {"stages": 2, "stage_modules": [["a"], ["b", "c"]]}}`},
		{"batch", plan(30, 4, 1, "gpipe", "", []string{"a"}), "train_micro_batch_size_per_gpu: the batch of 30 is not 4 replicas x 1 micro-batches"},
		{"no batch", plan(0, 1, 1, "gpipe", "", []string{"a"}), "train_batch_size: graph net has no batch information"},
		{"gpipe", plan(32, 1, 4, "gpipe", "", []string{"a"}, []string{"b"}), "pipeline: schedule gpipe; DeepSpeed's pipeline engine runs 1F1B"},
		{"fsdp pipeline", plan(32, 2, 4, "1f1b", "fsdp", []string{"a"}, []string{"b"}), "zero_optimization.stage: 3 with 2 pipeline stages"},
	} {
		got, err := DeepSpeedConfig(c.p)
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
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}
