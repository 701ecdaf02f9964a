package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/export"
	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
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
	for _, f := range export.Formats {
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
		// The flag's help, wrapped at the tables' width: its line and the
		// indented lines after it.
		var flag string
		in := false
		for _, l := range strings.Split(help, "\n") {
			switch t := strings.TrimSpace(l); {
			case strings.Contains(l, "--workload NAME"):
				flag, in = l, true
			case in && t != "" && !strings.HasPrefix(t, "-"):
				flag += " " + t
			default:
				in = false
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

// TestHelpFlagsFit: every command's flag help, local and global, is
// wrapped at the tables' width (examples are commands to paste, and are
// not wrapped).
func TestHelpFlagsFit(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var out bytes.Buffer
		c.SetOut(&out)
		if err := c.Usage(); err != nil {
			t.Fatal(err)
		}
		in := false
		for _, l := range strings.Split(out.String(), "\n") {
			switch {
			case l == "Flags:" || l == "Global Flags:":
				in = true
			case l == "":
				in = false
			case in && utf8.RuneCountInString(l) > report.MaxWidth:
				t.Errorf("%s --help: a flag's line of %d columns: %q", c.CommandPath(), utf8.RuneCountInString(l), l)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&streams{}))
}

// TestRootHelp: placer --help leads with the cluster planner (what most
// users come for) and puts op placement second, and the cluster planner's
// commands it shows run as written (their files written to a scratch
// folder). The op placement command is README.md's quick start, which go
// test ./tools/dev/readme runs.
func TestRootHelp(t *testing.T) {
	code, help, errs := placer(t, "--help")
	if code != 0 {
		t.Fatalf("placer --help: exit %d: %s", code, errs)
	}
	cluster, ops := strings.Index(help, "The cluster planner."), strings.Index(help, "Op placement.")
	if cluster < 0 || ops < 0 || cluster > ops {
		t.Fatalf("placer --help: want \"The cluster planner.\" before \"Op placement.\":\n%s", help)
	}
	if first := strings.SplitN(help, "\n", 2)[0]; !strings.Contains(first, "cluster of GPUs") {
		t.Errorf("placer --help's first line %q does not say what placer plans", first)
	}
	dir := t.TempDir()
	ran := 0
	for _, line := range strings.Split(help[cluster:ops], "\n") {
		if !strings.HasPrefix(line, "  placer ") {
			continue
		}
		args := strings.Fields(line)[1:]
		for i := range args {
			if i > 0 && (args[i-1] == "-o" || args[i-1] == "--plan") {
				args[i] = filepath.Join(dir, args[i])
			}
		}
		if code, _, errs := placer(t, args...); code != 0 {
			t.Errorf("placer --help's %q: exit %d: %s", line, code, errs)
		}
		ran++
	}
	if ran != 2 {
		t.Errorf("placer --help shows %d cluster planner commands, want the search and its export", ran)
	}
	// Every sentence of the prose reads in one breath: none longer than 60 words.
	prose := help[:strings.Index(help, "Usage:")]
	for _, s := range strings.Split(strings.Join(strings.Fields(prose), " "), ". ") {
		if n := len(strings.Fields(s)); n > 60 {
			t.Errorf("placer --help: a sentence of %d words: %q", n, s)
		}
	}
}
