package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// TestSearchJudgesAsAlways: Search, which judges on the caching
// allocator's reservation only the plans it would keep, keeps the plans
// (best, Top) a search judging every plan keeps, on GPUs whose memory is
// squeezed around the fastest plan's (so that plans the count fits are
// set aside on the reservation: OverReserved, which must happen for the
// test to say anything), with and without Top, tight plans kept or set
// aside, and block recomputation searched.
func TestSearchJudgesAsAlways(t *testing.T) {
	models := []transformer.Spec{
		transformer.GPT(8, 2048, 16, 2048, 32000, 16),
		specOf(t, "llama:layers=12,hidden=2048,heads=16,kv_heads=4,ffn=5632,seq=4096,vocab=32000,batch=32"),
		specOf(t, smallMoESpec),
	}
	over := 0
	for _, m := range models {
		for _, gpus := range []int{4, 8} {
			p, err := plan.PodOf("dgx-h100", gpus)
			if err != nil {
				t.Fatal(err)
			}
			free, err := Search(context.Background(), m, p, Space{MaxMBS: 4, MaxVirtual: 2})
			if err != nil || !free.Found {
				t.Fatalf("%d layers on %d GPUs: %v, found %v", m.Layers, gpus, err, free.Found)
			}
			outside := int64(plan.CUDAContext) + plan.NCCLBuffers(&free.Best.Plan)
			for _, share := range []float64{0.55, 0.85, 1.0} {
				q := p
				q.Hardware.Memory = int64(share*float64(free.Best.Memory)) + outside
				for _, sp := range []Space{
					{MaxMBS: 4, MaxVirtual: 2},
					{MaxMBS: 4, MaxVirtual: 2, Top: 3, AllowTight: true},
				} {
					name := fmt.Sprintf("%d layers on %d GPUs of %d bytes, top %d, tight %v", m.Layers, gpus, q.Hardware.Memory, sp.Top, sp.AllowTight)
					lazy, err := searchPasses(context.Background(), m, q, sp, false)
					if err != nil {
						t.Fatal(name, err)
					}
					always, err := searchPasses(context.Background(), m, q, sp, true)
					if err != nil {
						t.Fatal(name, err)
					}
					over += lazy.OverReserved
					if got, want := kept(lazy), kept(always); got != want {
						t.Errorf("%s: kept %s, judging every plan %s", name, got, want)
					}
				}
			}
		}
	}
	if over == 0 {
		t.Error("no plan the count fits was set aside on the reservation: the memories tried do not test the shortcut")
	}
	t.Logf("%d plans set aside on the reservation", over)
}

// kept is what a search keeps, as text: the best plan with its step,
// verdict and the bytes judged, and the Top's.
func kept(r Result) string {
	if !r.Found {
		return "none"
	}
	out := ""
	for _, k := range append([]planner.Result{r.Best}, r.Top...) {
		out += fmt.Sprintf("[%s %.9g s %s %d] ", k.Plan, k.Step, k.Verdict, k.Judged)
	}
	return out
}
