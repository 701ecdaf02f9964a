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
