package rounds

import (
	"path/filepath"
	"testing"
)

// TestCreateFileCells: a file is created once (a second CreateFile keeps
// the first), and a round's cells are numbered and named as Cells says.
func TestCreateFileCells(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	if made, err := CreateFile(path, []byte("x\n")); !made || err != nil {
		t.Fatal(made, err)
	}
	if made, err := CreateFile(path, nil); made || err != nil {
		t.Fatal("a second CreateFile:", made, err)
	}
	if c := Cells(2, 3, "s-%d"); len(c) != 3 || c[2] != (Cell{Index: 2, Round: 1, File: filepath.Join("round-1", "s-2")}) {
		t.Fatalf("cells %+v", c)
	}
}
