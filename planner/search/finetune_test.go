package search

import (
	"context"
	"slices"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestSearchKeepsFineTune: the fine-tuning keys of a partial plan are
// settings of the run, as fp8 is: every plan the search proposes keeps
// LoRA's rank and targets and the packed mix as given.
func TestSearchKeepsFineTune(t *testing.T) {
	sp, err := SpaceOf("peft=lora,lora-rank=8,lora-targets=qkv+fc2,pack-len=256:512")
	if err != nil {
		t.Fatal(err)
	}
	m := specOf(t, "llama:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=8")
	p, err := plan.PodOf("dgx-h100", 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Search(context.Background(), m, p, sp)
	if err != nil || !got.Found {
		t.Fatalf("search: %+v, %v", got, err)
	}
	f := got.Best.Plan.FineTune
	if f.LoRARank != 8 || f.Targets() != plan.LoRAQKV|plan.LoRAFC2 || !slices.Equal(f.PackLens, []int{256, 512}) {
		t.Errorf("best plan %s: fine-tuning %+v, want rank 8, qkv+fc2, packs of 256:512", got.Best.Plan, f)
	}
}
