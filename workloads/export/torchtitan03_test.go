package export

import (
	"strings"
	"testing"

	"github.com/placer/placer/workloads/export/internal/exporttest"
)

// TestTorchTitan03Graph: a graph's 2-stage 1F1B plan over FSDP 2 as
// torchtitan 0.3's module on the user's model, and ZeRO-2 as FSDP2
// keeping the gathered parameters (fsdp_reshard_after_forward "never").
func TestTorchTitan03Graph(t *testing.T) {
	list := map[string]string{"layers": "ModuleList", "layers.0": "Block", "layers.1": "Block", "head": "Linear"}
	got, err := TorchTitanConfig(handPlan(16, 2, 2, "1f1b", "fsdp", []string{"layers.0", "layers.0.attn"}, []string{"layers.1", "head"}), "0.3", list)
	if err != nil {
		t.Fatal(err)
	}
	assign, overrides := exporttest.Titan03Parts(t, string(got))
	want := []string{
		"config.training.local_batch_size = 8",
		"config.training.global_batch_size = 16",
		"config.training.disable_cuda_graphs = True",
		"config.parallelism.data_parallel_replicate_degree = 1",
		"config.parallelism.data_parallel_shard_degree = 2",
		`config.parallelism.fsdp_reshard_after_forward = "default"`,
		"config.parallelism.tensor_parallel_degree = 1",
		"config.parallelism.pipeline_parallel_degree = 2",
		`config.parallelism.pipeline_parallel_schedule = "1F1B"`,
		"config.parallelism.pipeline_parallel_microbatch_size = 4",
		`config.parallelism.module_fqns_per_model_part = [["layers.0"],["layers.1", "head"],]`,
		"config.activation_checkpoint = None",
	}
	if strings.Join(assign, "\n") != strings.Join(want, "\n") {
		t.Errorf("apply_plan\n%s\nwant\n%s", strings.Join(assign, "\n"), strings.Join(want, "\n"))
	}
	if w := "--training.local_batch_size 8 --training.global_batch_size 16 --training.disable_cuda_graphs --parallelism.data_parallel_replicate_degree 1 --parallelism.data_parallel_shard_degree 2 --parallelism.fsdp_reshard_after_forward default --parallelism.tensor_parallel_degree 1 --parallelism.pipeline_parallel_degree 2 --parallelism.pipeline_parallel_schedule 1F1B --parallelism.pipeline_parallel_microbatch_size 4 --parallelism.module_fqns_per_model_part layers.0 layers.1,head activation-checkpoint:none"; overrides != w {
		t.Errorf("OVERRIDES\n%s\nwant\n%s", overrides, w)
	}
	if !strings.HasPrefix(string(got), "# torchtitan 0.3 configuration (a config function for torchtitan.train's --module and --config; checked with torchtitan 0.3.0) written by placer export from its torch plan of ") ||
		!strings.Contains(string(got), "raise NotImplementedError(") {
		t.Errorf("header or base_config\n%s", got)
	}
	got, err = TorchTitanConfig(handPlan(16, 4, 1, "gpipe", "zero2", []string{"layers.0", "layers.1", "head"}), "0.3", list)
	if err != nil {
		t.Fatal(err)
	}
	if assign, _ := exporttest.Titan03Parts(t, string(got)); !strings.Contains(strings.Join(assign, "\n"), "config.parallelism.data_parallel_shard_degree = 4\nconfig.parallelism.fsdp_reshard_after_forward = \"never\"\n") {
		t.Errorf("zero2\n%s", got)
	}
	if _, err := TorchTitanConfig(handPlan(16, 2, 1, "1f1b", "", []string{"layers.0"}, []string{"layers.1", "head"}), "0.3", list); err == nil || !strings.Contains(err.Error(), "1F1B with 1 micro-batches on 2 stages") {
		t.Errorf("1f1b, 1 micro-batch: %v", err)
	}
}
