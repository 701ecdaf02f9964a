package profile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/fail"
)

// tinyGQA is a tiny Llama with 4 heads and 2 key/value heads (the
// issue's): tp 4 divides the heads, not the key/value heads.
const tinyGQA = "llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128,seq=64,vocab=256,batch=4"

// Degrees the model cannot be split by, and values below 1, are refused
// before anything runs: one line naming the flag and the value, exit 2
// (fail.Usage), the --out file untouched. --tp 3 was sent to the
// measurements, which timed no layer and died in a traceback; --tp 4
// with 2 key/value heads timed shapes eval then refuses.
func TestProfileRefusesDegrees(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "keep.json")
	if err := os.WriteFile(out, []byte("a finished profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{TP: []int{3}}, "--tp 3: does not divide the model's 4 attention heads"},
		{Options{TP: []int{1, 4}}, "--tp 4: does not divide the model's 2 key/value heads (eval refuses tp=4 for it)"},
		{Options{TP: []int{0}}, "--tp 0: want at least 1"},
		{Options{TP: []int{}}, "--tp: name at least one"},
		{Options{CP: []int{3}}, "--cp 3: does not divide the model's sequence of 64"},
		{Options{CP: []int{-1}}, "--cp -1: want at least 1"},
		{Options{MBS: []int{1, 0}}, "--mbs 0: want at least 1"},
		{Options{Procs: -2}, "--procs -2: want at least 1 (0: every GPU, or 1 on a CPU)"},
		// The FFN layers.py splits over tp: 90 over tp 4 is not whole, in
		// a dense model and in the dense layers before the experts.
		{Options{Workload: "llama:layers=2,hidden=64,heads=4,kv_heads=4,ffn=90,seq=64,vocab=256,batch=4", TP: []int{4}},
			"--tp 4: does not divide the model's FFN of 90"},
		{Options{Workload: "llama:layers=2,hidden=64,heads=4,seq=64,vocab=256,batch=4,experts=4,topk=2,expert_ffn=32,shared=1,dense_layers=1,ffn=90",
			TP: []int{4}}, "--tp 4: does not divide the model's FFN of 90"},
	} {
		o := c.o
		if o.Workload == "" {
			o.Workload = tinyGQA
		}
		o.Out, o.Device = out, "cpu"
		o.Python = filepath.Join(dir, "no-python") // an option let through fails at starting it
		_, err := Run(context.Background(), o, nil)
		var u fail.Usage
		if !errors.As(err, &u) || err.Error() != c.want {
			t.Errorf("%+v: %v, want the command-line error %q", c.o, err, c.want)
		}
	}
	if data, _ := os.ReadFile(out); string(data) != "a finished profile" {
		t.Errorf("--out after the refusals: %q", data)
	}
}

// The default degrees are those the model takes: with 2 key/value heads
// tp 1 and 2 (4 and 8 left out, as eval refuses them), with 4 heads
// (and 4 key/value heads) 1, 2 and 4; the default context degrees those
// that divide the sequence.
func TestProfileDefaultDegrees(t *testing.T) {
	for _, c := range []struct {
		workload string
		tp, cp   []int
	}{
		{tinyGQA, []int{1, 2}, []int{1, 2}},
		{"llama:layers=2,hidden=64,heads=4,kv_heads=4,ffn=128,seq=63,vocab=256,batch=4", []int{1, 2, 4}, []int{1}},
	} {
		m, err := transformer.Parse(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		var tps, cps []int
		for _, s := range Shapes(m, []int{1, 2, 4, 8}, nil, []int{1}, []int{1, 2}, []string{"none"}) {
			if !s.SP && s.Seq == m.Seq {
				tps = append(tps, s.TP)
			}
		}
		o := Options{}
		if err := checkProfileOptions(m, &o); err != nil {
			t.Fatal(err)
		}
		cps = o.CP
		if !slices.Equal(tps, c.tp) || !slices.Equal(o.TP, c.tp) || !slices.Equal(cps, c.cp) {
			t.Errorf("%s: shapes' tp %v, default --tp %v, --cp %v; want tp %v, cp %v", c.workload, tps, o.TP, cps, c.tp, c.cp)
		}
	}
}

// fakeMeasurements is a python for Profile that prints stdout's lines
// and stderr's text and exits code, as measure.py's process would: what
// placer does with each ending of the measurements, without torch.
func fakeMeasurements(t *testing.T, stdout []string, stderr string, code int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stdout"), []byte(strings.Join(stdout, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stderr"), []byte(stderr), 0o644); err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(dir, "python")
	script := "#!/bin/sh\ncat '" + dir + "/stderr' >&2\ncat '" + dir + "/stdout'\nexit " + strconv.Itoa(code) + "\n"
	if err := os.WriteFile(py, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return py
}

const (
	fakeMeta      = `{"kind": "meta", "dtype": "fp32", "device": {"kind": "cpu", "name": "a CPU", "count": 1, "memory_bytes": 1000000000, "threads": 1, "cores": 2}, "software": {"torch": "2.14.1", "backend": "gloo", "framework": "pytorch"}, "collectives": 0}`
	fakeHost      = `{"kind": "host", "issue_s": 1e-5, "issue_backward_s": 2e-5}`
	fakeEmbedding = `{"kind": "embedding", "tp": 1, "mbs": 1, "seq": 64, "forward_s": 1e-4, "backward_s": 2e-4}`
	fakeLoss      = `{"kind": "loss", "tp": 1, "mbs": 1, "seq": 64, "forward_s": 3e-4, "backward_s": 4e-4}`
	fakeOptimizer = `{"kind": "optimizer", "name": "adamw", "params": 36992, "seconds": 3e-4}`
	fakeLayer     = `{"kind": "layer", "tp": 1, "mbs": 1, "seq": 64, "recompute": "none", "forward_s": 1e-3, "backward_s": 2e-3}`
	fakeTrace     = "profile: 1 CPU process(es), budget 9 s\n" +
		"Traceback (most recent call last):\n  File \"measure.py\", line 582, in <module>\n    main()\n" +
		"  File \"measure.py\", line 395, in worker\n    for i, shape in enumerate(shapes):\n                    ^^^^^^^^^^^^^^^^^\n" +
		"TypeError: 'NoneType' object is not iterable\n"
)

// An existing --out file is never replaced by less than a complete
// profile: a run that fails (a traceback, a non-zero exit) or is cut by
// the budget writes what it measured to FILE.partial beside it (FILE
// where none was there, or with --force); one that measured nothing
// writes nothing. A traceback never reaches the progress: its last line
// is the error's, the whole of it in a log file the error names. Before,
// every one of these replaced FILE (with "0 layer shapes" where nothing
// was measured) and printed the traceback.
func TestProfileKeepsExisting(t *testing.T) {
	const old = "a finished profile"
	for _, c := range []struct {
		name     string
		stdout   []string
		stderr   string
		code     int
		exists   bool
		force    bool
		wantErr  string // "": none
		wantPath string // "keep.json", "keep.json.partial", "": nothing written
		layers   int
	}{
		{"traceback after a layer", []string{fakeMeta, fakeHost, fakeEmbedding, fakeLoss, fakeOptimizer, fakeLayer}, fakeTrace, 1, true, false,
			"profile: the measurements failed: TypeError: 'NoneType' object is not iterable (the whole trace: ", "keep.json.partial", 1},
		{"traceback before anything", []string{fakeMeta, fakeHost}, fakeTrace, 1, true, false,
			"profile: the measurements failed: TypeError: 'NoneType' object is not iterable (the whole trace: ", "", 0},
		{"killed after a layer", []string{fakeMeta, fakeHost, fakeEmbedding, fakeLoss, fakeOptimizer, fakeLayer}, "", 9, true, false,
			"profile: the measurements failed: exit status 9; what they measured is in ", "keep.json.partial", 1},
		{"budget cut", []string{fakeMeta, fakeHost, fakeEmbedding, fakeLoss, fakeOptimizer, fakeLayer}, "", 0, true, false, "", "keep.json.partial", 1},
		{"budget cut, --force", []string{fakeMeta, fakeHost, fakeEmbedding, fakeLoss, fakeOptimizer, fakeLayer}, "", 0, true, true, "", "keep.json", 1},
		{"traceback, no file before", []string{fakeMeta, fakeHost, fakeEmbedding, fakeLoss, fakeOptimizer, fakeLayer}, fakeTrace, 1, false, false,
			"profile: the measurements failed: TypeError", "keep.json", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "keep.json")
			if c.exists {
				if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var progress bytes.Buffer
			// Two layer shapes asked (tp 1 at mbs 1 and 2), one sent.
			o := Options{Workload: tinyGQA, Out: out, Device: "cpu", TP: []int{1}, MBS: []int{1, 2}, CP: []int{1},
				Recompute: []string{"none"}, Force: c.force, Budget: time.Minute,
				Python: fakeMeasurements(t, c.stdout, c.stderr, c.code)}
			r, err := Run(context.Background(), o, &progress)
			switch {
			case c.wantErr == "" && err != nil, c.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), c.wantErr)):
				t.Fatalf("err %v, want %q", err, c.wantErr)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("err %q: more than one line", err)
			}
			if strings.Contains(progress.String(), "Traceback") || strings.Contains(progress.String(), "TypeError") {
				t.Errorf("progress holds the traceback: %q", progress.String())
			}
			if err != nil && strings.Contains(err.Error(), "the whole trace: ") {
				log := strings.TrimSuffix(strings.SplitN(strings.SplitN(err.Error(), "the whole trace: ", 2)[1], ")", 2)[0], ")")
				data, rerr := os.ReadFile(log)
				if rerr != nil || !strings.Contains(string(data), "Traceback (most recent call last):") || !strings.Contains(string(data), "line 395") {
					t.Errorf("log %s: %v, %q", log, rerr, data)
				}
				os.Remove(log)
			}
			if data, _ := os.ReadFile(out); c.exists && c.wantPath != "keep.json" && string(data) != old {
				t.Errorf("keep.json replaced: %.80q", data)
			}
			partial, perr := profile.ReadFile(PartialPath(out))
			switch c.wantPath {
			case "":
				if perr == nil || r != nil && r.Path != "" {
					t.Errorf("something written: %v, %+v", perr, r)
				}
			case "keep.json.partial":
				if perr != nil || partial.Complete || len(partial.Layers) != c.layers || r == nil || r.Path != PartialPath(out) {
					t.Fatalf("keep.json.partial: %v, %+v", perr, r)
				}
				if got := partial.Missing(); len(got) != 1 || got[0] != "1 of 2 layer shapes" {
					t.Errorf("missing %q, want [1 of 2 layer shapes]", got)
				}
				if c.wantErr == "" && !strings.Contains(progress.String(), "written to "+PartialPath(out)+" (complete false; not measured: 1 of 2 layer shapes); "+out+" is left as it was (--force replaces it)") {
					t.Errorf("progress does not say where it went: %q", progress.String())
				}
			case "keep.json":
				got, err := profile.ReadFile(out)
				if err != nil || got.Complete || len(got.Layers) != c.layers || perr == nil {
					t.Errorf("keep.json: %v, %+v; keep.json.partial: %v", err, got, perr)
				}
			}
		})
	}
}

// More processes than cores, on a CPU, is a warning that says what it
// does to the timings; a GPU's processes, or as many as the cores, none.
func TestProfileCrowded(t *testing.T) {
	for _, c := range []struct {
		d     profile.Device
		cores int
		want  string
	}{
		{profile.Device{Kind: "cpu", Count: 4, Threads: 1}, 2, "4 processes x 1 thread(s) on 2 cores: they take turns on the cores, so every time measured includes the scheduler's time slices and is slower than 4 processes would take on cores of their own; plans priced from this profile hold for runs as crowded (--procs 2 fits the cores)"},
		{profile.Device{Kind: "cpu", Count: 2, Threads: 2}, 2, "2 processes x 2 thread(s) on 2 cores: they take turns on the cores, so every time measured includes the scheduler's time slices and is slower than 2 processes would take on cores of their own; plans priced from this profile hold for runs as crowded (--procs 1 fits the cores)"},
		{profile.Device{Kind: "cpu", Count: 2, Threads: 1}, 2, ""},
		{profile.Device{Kind: "cuda", Count: 8}, 2, ""},
	} {
		if got := crowded(c.d, c.cores); got != c.want {
			t.Errorf("%+v on %d cores: %q, want %q", c.d, c.cores, got, c.want)
		}
	}
	// The warning is said once the measurements say their processes.
	meta := strings.Replace(fakeMeta, `"count": 1`, `"count": 4096`, 1)
	var progress bytes.Buffer
	o := Options{Workload: tinyGQA, Out: filepath.Join(t.TempDir(), "p.json"), Device: "cpu", TP: []int{1}, MBS: []int{1}, CP: []int{1},
		Recompute: []string{"none"}, Budget: time.Minute, Python: fakeMeasurements(t, []string{meta, fakeHost, fakeLayer}, "", 0)}
	if _, err := Run(context.Background(), o, &progress); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "placer: warning: 4096 processes x 1 thread(s) on ") {
		t.Errorf("progress %q: no warning", progress.String())
	}
}
