package jobs

import (
	"context"
	"errors"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/fail"
)

// The shapes a profile times, in the order a budget cuts them: every
// degree at the first micro-batch first (tp 1; 2 and 4 without and with
// sp; 3 divides no head count of 4), then the second micro-batch.
func TestProfileShapes(t *testing.T) {
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=4,ffn=512,seq=256,vocab=1024,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	got := ProfileShapes(m, []int{1, 2, 3, 4}, []int{1, 2}, []int{1, 2}, []string{"none", "full"})
	want := []shape{{1, false, 1, 256, "none"}, {2, false, 1, 256, "none"}, {2, true, 1, 256, "none"}, {4, false, 1, 256, "none"}, {4, true, 1, 256, "none"},
		{1, false, 2, 256, "none"}, {2, false, 2, 256, "none"}, {2, true, 2, 256, "none"}, {4, false, 2, 256, "none"}, {4, true, 2, 256, "none"}}
	// Then every other sequence and setting: 5 degrees x 2 mbs x (2 x 2 - 1).
	if len(got) != len(want)+5*2*3 {
		t.Fatalf("%d shapes, want %d", len(got), len(want)+30)
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("shape %d: %+v, want %+v", i, got[i], w)
		}
	}
}

func TestProfileRefuses(t *testing.T) {
	for _, o := range []ProfileOptions{
		{Workload: "llama:layers=4,hidden=256,heads=4", Out: ""},
		{Workload: "nope:1", Out: "x.json"},
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8", Out: "x.json", Device: "tpu"},
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8", Out: "x.json", Recompute: []string{"some"}},
	} {
		_, err := Profile(context.Background(), o, nil)
		var u fail.Usage
		if !errors.As(err, &u) {
			t.Errorf("%+v: %v, want a command-line error", o, err)
		}
	}
}
