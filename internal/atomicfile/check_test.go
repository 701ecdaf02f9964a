package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: each way an output path can be wrong, and the ways it is
// right, by hand.
func TestCheck(t *testing.T) {
	d := t.TempDir()
	file := filepath.Join(d, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(d, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	readOnly := os.Getuid() != 0 // root writes anywhere
	for _, tc := range []struct {
		name   string
		check  func(string) error
		path   string
		want   string // "" = no error
		rootOK bool   // root passes this one
	}{
		{"file in a folder", CheckFile, filepath.Join(d, "x.json"), "", false},
		{"file over a file", CheckFile, file, "", false},
		{"file in a missing folder", CheckFile, filepath.Join(d, "nodir", "x.json"), "folder " + filepath.Join(d, "nodir") + " does not exist", false},
		{"file under a file", CheckFile, filepath.Join(file, "x.json"), file + " is not a folder", false},
		{"file that is a folder", CheckFile, d, "is a folder", false},
		{"file in a read-only folder", CheckFile, filepath.Join(ro, "x.json"), "cannot write in " + ro + ": permission denied", true},
		{"folder that exists", CheckFolder, d, "", false},
		{"folder to make", CheckFolder, filepath.Join(d, "a", "b"), "", false},
		{"folder that is a file", CheckFolder, file, "is a file, not a folder", false},
		{"folder under a file", CheckFolder, filepath.Join(file, "a"), file + " is a file, not a folder", false},
		{"folder under a read-only folder", CheckFolder, filepath.Join(ro, "a"), "cannot write in " + ro + ": permission denied", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if tc.rootOK && !readOnly {
				want = ""
			}
			err := tc.check(tc.path)
			switch {
			case want == "" && err != nil:
				t.Fatalf("%s: %v", tc.path, err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Fatalf("%s: error %v, want %q", tc.path, err, want)
			}
		})
	}
	if left, _ := filepath.Glob(filepath.Join(d, ".placer-check-*")); len(left) > 0 {
		t.Errorf("checks left %v behind", left)
	}
}
