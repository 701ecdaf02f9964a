package jobs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/inputs"
	exportjob "github.com/placer/placer/jobs/export"
)

// TestSearchSwitches: placer search names the recipe switches it turned
// on (Switches, "switches" in --json and in -o's file), keeps one the
// --strategy fixes, and placer export of its plan file (--plan) writes
// them. Llama 2 70B LoRA (MLPerf's shape, FP8) on 72 GB300 GPUs, nine
// sequences: CP 2 under TP 4 with Transformer Engine's all-to-all
// exchange and FP8 primary weights (no cast of the frozen base), which
// Megatron-Bridge writes as model.cp_comm_type=a2a and as its FP8
// recipe's own fp8_param_gather; with cp-comm-type=p2p written the ring
// is kept, and its launches (a call and two sends a ring step) keep the
// Grace host behind the GPU, so the search turns Transformer Engine's
// per-layer CUDA graphs on (with their buffers counted), which Bridge
// writes as model.cuda_graph_impl=transformer_engine.
func TestSearchSwitches(t *testing.T) {
	const workload = "llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,vocab=32000,seq=8192,batch=9"
	const lora = "peft=lora,lora-rank=16,lora-alpha=32,lora-targets=qkv+proj,fp8=delayed"
	dir := t.TempDir()
	for _, c := range []struct {
		name, keep string
		switches   []string
		want       string // in the export
	}{
		{"chosen", lora, []string{"fp8-params=on", "cp-comm-type=a2a"}, "model.cp_comm_type=a2a"},
		{"kept", lora + ",cp-comm-type=p2p", []string{"fp8-params=on", "cuda-graphs=dense", "graph-pool=layers"}, "model.cuda_graph_impl=transformer_engine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name+".json")
			o := ScaleOptions{Workload: workload, Cluster: "gb300-nvl72:1", Strat: c.keep, For: "megatron-bridge", Out: out}
			rep, err := ScaleSearch(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rep.Switches, c.switches) {
				t.Errorf("best %s: switches %v, want %v", rep.Best.Strategy, rep.Switches, c.switches)
			}
			for _, sw := range c.switches {
				if !strings.Contains(","+rep.Best.Strategy+",", ","+sw+",") {
					t.Errorf("best %s lacks its switch %s", rep.Best.Strategy, sw)
				}
			}
			file, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.switches) > 0 && !strings.Contains(string(file), `"switches": [`) {
				t.Errorf("%s has no switches", out)
			}
			sh := filepath.Join(dir, c.name+".sh")
			if _, err := exportjob.Run(exportjob.Options{World: inputs.ClusterScale, To: "megatron-bridge", Plan: out, Out: sh,
				Scale: exportjob.ScaleOptions{Workload: workload, Pod: inputs.PodSpec{Pod: "gb300-nvl72:1"}}}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(sh)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "\n  "+c.want+"\n") || !strings.Contains(string(b), "mixed_precision=bf16_with_fp8_delayed_scaling_mixed") ||
				c.name == "kept" && strings.Contains(string(b), "cp_comm_type=a2a") {
				t.Errorf("export lacks %s:\n%s", c.want, b)
			}
		})
	}
}
