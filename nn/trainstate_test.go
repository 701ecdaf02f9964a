package nn

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestMeanTrainState: the mean is taken in float64 and rounded once (a
// float32 running sum would lose the small terms), moments included,
// Adam's step count the largest; fresh drops the moments; a state
// survives its file; a file of another magic is refused.
func TestMeanTrainState(t *testing.T) {
	big, small := float32(1<<24), float32(1)
	states := []TrainState{
		{W: [][]float32{{big}}, M: [][]float32{{2}}, V: [][]float32{{4}}, T: 3},
		{W: [][]float32{{small}}, M: [][]float32{{4}}, V: [][]float32{{8}}, T: 5},
		{W: [][]float32{{small}}, M: [][]float32{{6}}, V: [][]float32{{12}}, T: 4},
	}
	got := MeanTrainState(states, false)
	want := TrainState{W: [][]float32{{float32((float64(big) + 2) / 3)}}, M: [][]float32{{4}}, V: [][]float32{{8}}, T: 5}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mean %+v, want %+v", got, want)
	}
	if f := MeanTrainState(states, true); f.M != nil || f.V != nil || f.T != 0 {
		t.Fatalf("fresh: %+v", f)
	}
	path := filepath.Join(t.TempDir(), "s")
	if err := os.WriteFile(path, got.Encode("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if back, err := ReadTrainState(path, "x\n", "test"); err != nil || !reflect.DeepEqual(back, got) {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if _, err := ReadTrainState(path, "y\n", "test"); err == nil {
		t.Fatal("another magic read")
	}
}
