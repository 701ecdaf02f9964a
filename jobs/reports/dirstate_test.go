package reports

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// dirState is every file under dir: its path, size, modification time
// and contents. A cell run writes its file (atomically: a new file, a new
// modification time), so a run that ran nothing leaves it as it was.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		st[p] = fmt.Sprintf("%d %d %x", info.Size(), info.ModTime().UnixNano(), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// sameDir fails t when dir's files differ from before's (dirState): what
// ran wrote a file.
func sameDir(t *testing.T, what, dir string, before map[string]string) {
	t.Helper()
	after := dirState(t, dir)
	if reflect.DeepEqual(before, after) {
		return
	}
	for p := range after {
		if before[p] != after[p] {
			t.Errorf("%s wrote %s: it ran something", what, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s removed %s", what, p)
		}
	}
}
