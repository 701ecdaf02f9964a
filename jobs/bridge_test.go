package jobs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/inputs"
	exportjob "github.com/placer/placer/jobs/export"
)

// TestBridgeQuickStart: the quick start's three commands for
// Megatron-Bridge, for each fine-tuning mode and precision it writes:
// placer search --for megatron-bridge keeping the setting, placer eval
// of its best plan, placer export --to megatron-bridge of it; the export
// holds the setting's overrides and eval's step is the search's.
func TestBridgeQuickStart(t *testing.T) {
	const workload = "hf:../graph/transformer/testdata/hf/llama3-8b.json:seq=8192,batch=256"
	dir := t.TempDir()
	for _, c := range []struct {
		name, pod, keep string
		want            []string // in the export
	}{
		{"pre-training", "dgx-h100:4", "", []string{"mixed_precision=bf16_mixed", "model.seq_length=8192"}},
		{"lora", "dgx-h100:4", "peft=lora,lora-rank=8", []string{"+peft.dim=8", "+peft.alpha=32", "+peft.target_modules=[linear_qkv,linear_proj,linear_fc1,linear_fc2]", "dataset.packed_sequence_specs=null"}},
		{"packed", "dgx-h100:4", "pack=on,pack-len=1024:2048", []string{"dataset.packed_sequence_specs.packed_sequence_size=8192", "dataset.seq_length=8192"}},
		{"lora, packed", "dgx-h100:4", "peft=lora,pack=on,pack-len=4096", []string{"+peft.dim=16", "dataset.packed_sequence_specs.packed_sequence_size=8192"}},
		{"fp8 current", "dgx-h100:4", "fp8=current", []string{"mixed_precision=bf16_with_fp8_current_scaling_mixed"}},
		{"mxfp8 on B200", "dgx-b200:4", "fp8=mxfp8", []string{"mixed_precision=bf16_with_mxfp8_mixed"}},
		{"nvfp4 on B200", "dgx-b200:4", "fp4=nvfp4", []string{"mixed_precision=bf16_with_nvfp4_mixed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := ScaleOptions{Workload: workload, Cluster: c.pod, Strat: c.keep, For: "megatron-bridge"}
			rep, err := ScaleSearch(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range strings.Split(c.keep, ",") {
				if k != "" && !strings.Contains(","+rep.Best.Strategy+",", ","+k+",") {
					t.Fatalf("best %s does not keep %s", rep.Best.Strategy, k)
				}
			}
			ev, err := ScaleEval(context.Background(), ScaleOptions{Workload: workload, Cluster: c.pod, Strat: rep.Best.Strategy})
			if err != nil {
				t.Fatal(err)
			}
			if ev.Result.Step != rep.Best.Result.Step {
				t.Errorf("eval %g s a step, the search %g s", ev.Result.Step, rep.Best.Result.Step)
			}
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".sh")
			if _, err := exportjob.Run(exportjob.Options{World: inputs.ClusterScale, To: "megatron-bridge", Strategy: rep.Best.Strategy, Out: out,
				Scale: exportjob.ScaleOptions{Workload: workload, Pod: inputs.PodSpec{Pod: c.pod}}}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(string(b), "\n  "+w+"\n") && !strings.Contains(string(b), "\n  '"+w+"'\n") {
					t.Errorf("export lacks %s:\n%s", w, b)
				}
			}
		})
	}
}
