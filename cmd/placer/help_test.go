package main

import (
	"strings"
	"testing"

	"github.com/placer/placer/jobs"
)

// TestHelpNamesEveryForm: placer --help names every framework export
// writes for; export --help every format; eval, search and export's
// --workload every workload form and preset, and their usage line
// --cluster beside --gpus, neither required; workloads list every preset.
func TestHelpNamesEveryForm(t *testing.T) {
	_, root, _ := placer(t, "--help")
	var exportLine string
	for _, l := range strings.Split(root, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "export ") {
			exportLine = l
		}
	}
	for _, want := range []string{"Megatron-LM", "torchtitan", "DeepSpeed", "torch plan", "module map", "TensorFlow", "msr-fiddle"} {
		if !strings.Contains(exportLine, want) {
			t.Errorf("placer --help's export line %q lacks %s", exportLine, want)
		}
	}
	_, exp, _ := placer(t, "export", "--help")
	for _, f := range jobs.ExportFormats {
		if !strings.Contains(exp, "\n  "+f+" ") {
			t.Errorf("export --help does not describe --to %s", f)
		}
	}
	forms := append([]string{"hf:PATH/config.json:seq=N,batch=N", "gpt:KEYS", "llama:KEYS", "gnmt8"}, jobs.PresetNames()...)
	for _, cmd := range []string{"eval", "search", "export"} {
		_, help, _ := placer(t, cmd, "--help")
		usage := help[strings.Index(help, "Usage:"):]
		usage = usage[:strings.Index(usage, "\n\n")]
		if !strings.Contains(usage, "[--gpus N | --cluster PRESET:NODES]") {
			t.Errorf("%s --help: usage %q, want --gpus and --cluster, both optional", cmd, usage)
		}
		var flag string
		for _, l := range strings.Split(help, "\n") {
			if strings.Contains(l, "--workload NAME") {
				flag = l
			}
		}
		for _, f := range forms {
			if !strings.Contains(flag, f) {
				t.Errorf("%s --help: --workload's help lacks %s: %q", cmd, f, flag)
			}
		}
	}
	_, list, _ := placer(t, "workloads", "list", "-q")
	for _, p := range jobs.PresetNames() {
		if !strings.Contains(list, "│ "+p+" │") && !strings.Contains(list, " "+p+" │") {
			t.Errorf("workloads list lacks the preset %s", p)
		}
	}
}
