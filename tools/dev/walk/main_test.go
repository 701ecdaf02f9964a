package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// TestWalk measures testdata/opts, a module whose walk is counted by hand
// in the comments below: cli.Run hands o.S to job.Prepare (job/prep.go,
// leading to no end: a leaf) and o to job.Do (job/do.go), which calls
// check in its own file, eval.New (the end, eval/eval.go) and finish
// (job/finish.go, a leaf); helper gets no option and Prepare, read
// already, is not read again.
func TestWalk(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		files   []Count
		folders int
		entries int
		climbs  int
		funcs   int
		short   int
	}{
		{
			// cli.go (opened), prep.go, cli.go (climb), do.go, eval.go,
			// do.go (climb), finish.go, do.go (climb), cli.go (climb):
			// entries are the opening and the calls into another file,
			// climbs the returns.
			name:  "leaves",
			files: []Count{{"cli/cli.go", 1}, {"eval/eval.go", 1}, {"job/do.go", 1}, {"job/finish.go", 1}, {"job/prep.go", 1}},
			// cli, job, eval
			folders: 3, entries: 5, climbs: 4, funcs: 6, short: 2,
		},
		{
			// cli.go (opened), do.go, eval.go, do.go (climb), cli.go
			// (climb)
			name:    "no leaves",
			args:    []string{"--leaves=false"},
			files:   []Count{{"cli/cli.go", 1}, {"eval/eval.go", 1}, {"job/do.go", 1}},
			folders: 3, entries: 3, climbs: 2, funcs: 3, short: 2,
		},
		{
			// cli.go (opened), do.go, finish.go, do.go (climb), cli.go
			// (climb)
			name:    "to finish",
			args:    []string{"--to", `^job\.finish$`, "--leaves=false"},
			files:   []Count{{"cli/cli.go", 1}, {"job/do.go", 1}, {"job/finish.go", 1}},
			folders: 2, entries: 3, climbs: 2, funcs: 3, short: 2,
		},
	}
	for _, algo := range []string{"vta", "cha"} {
		for _, c := range cases {
			args := append([]string{"--dir", "testdata/opts", "--json", "--callgraph", algo, "--from", `^cli\.Run$`, "--to", `^eval\.New$`}, c.args...)
			var out bytes.Buffer
			if err := run(args, &out); err != nil {
				t.Fatalf("%s %s: %v", algo, c.name, err)
			}
			var w Walk
			if err := json.Unmarshal(out.Bytes(), &w); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(w.Files, c.files) {
				t.Errorf("%s %s: files %v, want %v", algo, c.name, w.Files, c.files)
			}
			if len(w.Folders) != c.folders || w.Entries != c.entries || w.Climbs != c.climbs || w.Funcs != c.funcs || len(w.Shortest)-1 != c.short {
				t.Errorf("%s %s: %d folders, %d entries, %d climbs, %d functions, shortest %d calls; want %d, %d, %d, %d, %d",
					algo, c.name, len(w.Folders), w.Entries, w.Climbs, w.Funcs, len(w.Shortest)-1, c.folders, c.entries, c.climbs, c.funcs, c.short)
			}
		}
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--from", "("},
		{"--callgraph", "pta", "--dir", "testdata/opts"},
		{"--dir", "testdata/opts", "--from", "^nothing$"},
		{"--dir", "testdata/opts", "--from", `^cli\.Run$`, "--to", `^cli\.helper$`}, // no option reaches it
		{"extra"},
	} {
		if err := run(args, &bytes.Buffer{}); err == nil {
			t.Errorf("walk %q: no error", args)
		}
	}
}
