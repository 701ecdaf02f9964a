package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportSaysWhatItWrote: export says on standard error, in one line,
// what it wrote: the file (or standard output), for which framework, and
// at cluster scale the plan, its step time and the stack it is costed on
// (GPT-3 175B's plan of docs/cluster-scale.md: 4.760 s, as eval gives it at the clock its 700 W allow over the controller's window; 4.974 s at the clock of compute alone, 4.484 s at the burst clock);
// of an op graph, the placement's graph and GPUs. Nothing on standard
// output with -o.
func TestExportSaysWhatItWrote(t *testing.T) {
	dir := t.TempDir()
	const plan = "tp=8,pp=6,dp=48,vp=8,mbs=1,sp=on,tpoverlap=on,distopt=on"
	for _, c := range []struct {
		name string
		args []string
		out  string // -o's file ("" = standard output)
		want string // standard error, OUT for the file
	}{
		{"megatron", []string{"--workload", gpt175, "--cluster", "dgx-h100:288", "--strategy", plan, "--to", "megatron"}, "gpt.sh",
			"export: wrote OUT (Megatron-LM's arguments): 4.760 s a step on placer's default stack\n"},
		{"megatron to standard output", []string{"--workload", gpt175, "--cluster", "dgx-h100:288", "--strategy", plan, "--to", "megatron"}, "",
			"export: wrote standard output (Megatron-LM's arguments): 4.760 s a step on placer's default stack\n"},
		{"megatron-bridge", []string{"--workload", gpt175, "--cluster", "dgx-h100:288", "--strategy", plan, "--to", "megatron-bridge"}, "gpt-bridge.sh",
			"export: wrote OUT (Megatron-Bridge 0.5.0's overrides): 4.760 s a step on placer's default stack\n"},
		{"op graph", []string{"--graph", example, "--placement", "single", "--to", "tf-device-map"}, "mlp.json",
			"export: wrote OUT (TensorFlow's device map): the placement of mlp (28 ops) on 1 GPU a replica\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"export"}, c.args...)
			out := ""
			if c.out != "" {
				out = filepath.Join(dir, c.out)
				args = append(args, "-o", out)
			}
			code, stdout, stderr := placer(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if want := strings.ReplaceAll(c.want, "OUT", out); stderr != want {
				t.Errorf("standard error\n%q\nwant\n%q", stderr, want)
			}
			if out == "" {
				if stdout == "" {
					t.Error("nothing on standard output")
				}
				return
			}
			if stdout != "" {
				t.Errorf("standard output %q with -o", stdout)
			}
			if _, err := os.Stat(out); err != nil {
				t.Error(err)
			}
		})
	}
}
