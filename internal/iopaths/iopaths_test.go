package iopaths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/internal/fail"
)

// TestSame: one file however it is named (relative and absolute, a
// symbolic link to it, a hard link of it, a path through a linked
// folder, a file not yet written), and two files not.
func TestSame(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.json"), write("b.json")
	if err := os.Symlink(a, filepath.Join(dir, "sym.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, filepath.Join(dir, "hard.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		a, b    string
		same    bool
		viaLink bool
	}{
		{a, "a.json", true, false},
		{"./x/../a.json", a, true, false},
		{"sym.json", "a.json", true, true},
		{"hard.json", "a.json", true, true},
		{"real/new.json", "linked/new.json", true, true},
		{"new.json", filepath.Join(dir, "new.json"), true, false},
		{a, b, false, false},
		{"new.json", "other.json", false, false},
		{"real", "linked", true, true},
	}
	for _, tc := range tests {
		same, how := Same(tc.a, tc.b)
		if same != tc.same || (how != "") != tc.viaLink {
			t.Errorf("Same(%q, %q) = %v, %q; want %v, via a link %v", tc.a, tc.b, same, how, tc.same, tc.viaLink)
		}
	}
}

// TestCheck: the line names both flags and what each spells, exit 2; "-"
// and empty paths are no files.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "q2.json")
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Check([]Path{{Flag: "plan", Path: filepath.Join(dir, "other.json")}, {Flag: "workload", Path: p, Given: "hf:" + p + ":seq=8,batch=8"}},
		[]Path{{Flag: "trace", Path: "-"}, {Flag: "out", Path: p}})
	want := "--out " + p + " would overwrite --workload's input hf:" + p + ":seq=8,batch=8: an output is never an input (name another file for --out)"
	if err == nil || err.Error() != want || fail.Code(err, false) != 2 {
		t.Fatalf("Check = %v; want %q, exit 2", err, want)
	}
	if strings.Contains(want, "\n") {
		t.Fatal("not one line")
	}
	if err := Check([]Path{{Flag: "plan", Path: "-"}, {Flag: "graph", Path: ""}}, []Path{{Flag: "out", Path: "-"}, {Flag: "trace", Path: p}}); err != nil {
		t.Errorf("Check of no shared file = %v", err)
	}
}

// TestNoTwoOutputsShareAPath: two outputs of one
// command on one file (however spelled, through a link), both standard
// output, or one inside the other's folder, is exit 2 naming both;
// distinct paths pass.
func TestNoTwoOutputsShareAPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("t.json", []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("t.json", "lnk.json"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.json", "dangling.json"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		outs []Path
		want string // "" = no error
	}{
		{"trace and out", []Path{{Flag: "trace", Path: "t.json"}, {Flag: "out", Path: "t.json"}},
			"--trace t.json and --out t.json are one path: each output its own (name another for --out)"},
		{"through a link", []Path{{Flag: "out", Path: "lnk.json"}, {Flag: "plot", Path: "./t.json"}},
			"--out lnk.json and --plot ./t.json are one path (the same file, through a link): each output its own (name another for --plot)"},
		{"not yet there", []Path{{Flag: "out", Path: "same.svg"}, {Flag: "plot", Path: dir + "/same.svg"}},
			"--out same.svg and --plot " + dir + "/same.svg are one path: each output its own (name another for --plot)"},
		{"file in a folder output", []Path{{Flag: "out", Path: "rowsd/rows.json"}, {Flag: "rows", Path: "rowsd", Folder: true}},
			"--out rowsd/rows.json and --rows rowsd are one path (in its folder): each output its own (name another for --rows)"},
		{"side file", []Path{{Flag: "out", Path: "ds.json"}, {Flag: "out", Path: "ds_pipeline.py", Given: "ds.json (its side file ds_pipeline.py)"}, {Flag: "trace", Path: "ds_pipeline.py"}},
			"--out ds.json (its side file ds_pipeline.py) and --trace ds_pipeline.py are one path: each output its own (name another for --trace)"},
		{"through a link to a file not yet written", []Path{{Flag: "out", Path: "a.json"}, {Flag: "trace", Path: "dangling.json"}},
			"--out a.json and --trace dangling.json are one path (the same file, through a link): each output its own (name another for --trace)"},
		{"both standard output", []Path{{Flag: "out", Path: "-"}, {Flag: "trace", Path: "-"}},
			"--out - and --trace - both write standard output: one output a path (name a file for --trace)"},
		{"distinct", []Path{{Flag: "out", Path: "a.json"}, {Flag: "trace", Path: "-"}, {Flag: "rows", Path: "rowsd", Folder: true}, {Flag: "plot", Path: "rowsd2/p.svg"}}, ""},
	}
	for _, tc := range tests {
		err := Check(nil, tc.outs)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || fail.Code(err, false) != 2):
			t.Errorf("%s: %v; want %q, exit 2", tc.name, err, tc.want)
		}
	}
}
