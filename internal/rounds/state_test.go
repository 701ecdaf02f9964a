package rounds

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestMeanState: the mean is taken in float64 and rounded once (a
// float32 running sum would lose the small terms), moments included, Adam's
// step count the largest; fresh drops the moments; a state survives its
// file; a file of another magic is refused.
func TestMeanState(t *testing.T) {
	big, small := float32(1<<24), float32(1)
	states := []State{
		{W: [][]float32{{big}}, M: [][]float32{{2}}, V: [][]float32{{4}}, T: 3},
		{W: [][]float32{{small}}, M: [][]float32{{4}}, V: [][]float32{{8}}, T: 5},
		{W: [][]float32{{small}}, M: [][]float32{{6}}, V: [][]float32{{12}}, T: 4},
	}
	got := MeanState(states, false)
	want := State{W: [][]float32{{float32((float64(big) + 2) / 3)}}, M: [][]float32{{4}}, V: [][]float32{{8}}, T: 5}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mean %+v, want %+v", got, want)
	}
	if f := MeanState(states, true); f.M != nil || f.V != nil || f.T != 0 {
		t.Fatalf("fresh: %+v", f)
	}
	path := filepath.Join(t.TempDir(), "s")
	if made, err := CreateFile(path, got.Encode("x\n")); !made || err != nil {
		t.Fatal(made, err)
	}
	if made, err := CreateFile(path, nil); made || err != nil {
		t.Fatal("a second CreateFile:", made, err)
	}
	if back, err := ReadState(path, "x\n", "test"); err != nil || !reflect.DeepEqual(back, got) {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if _, err := ReadState(path, "y\n", "test"); err == nil {
		t.Fatal("another magic read")
	}
	if c := Cells(2, 3, "s-%d"); len(c) != 3 || c[2] != (Cell{Index: 2, Round: 1, File: filepath.Join("round-1", "s-2")}) {
		t.Fatalf("cells %+v", c)
	}
}
