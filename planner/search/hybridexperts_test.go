package search

import (
	"context"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestSearchNemotronHDefaults: transformers 5.24.0's NemotronHConfig()
// file (a hybrid with a block of experts, pattern ME*-) has plans that
// fit on one DGX H100 and on four (micro-batches of 1, sequence 4,096),
// and the answer is one Resolve takes and Evaluate prices at the
// search's step; no plan the search keeps asks what checkHybridExperts
// refuses (virtual stages, epoverlap) or checkHybridLoRA (LoRA).
func TestSearchNemotronHDefaults(t *testing.T) {
	m, err := transformer.ReadHFConfig("../../graph/transformer/testdata/hf5/nemotron_h-defaults.json")
	if err != nil {
		t.Fatal(err)
	}
	m.Seq, m.Batch = 4096, 256
	for _, cluster := range []string{"dgx-h100:1", "dgx-h100:4"} {
		p, err := plan.ParsePod(cluster)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := SpaceOf("mbs=1,tp=1")
		if err != nil {
			t.Fatal(err)
		}
		got, err := Search(context.Background(), m, p, sp)
		if err != nil || !got.Found || !got.Best.Fits {
			t.Fatalf("%s: %+v, %v", cluster, got.Best, err)
		}
		text := got.Best.Plan.Strategy.String()
		if strings.Contains(text, "vp=") || strings.Contains(text, "epoverlap") || got.Best.Plan.LoRA() {
			t.Errorf("%s: answer %s asks what is not priced", cluster, text)
		}
		if r := evaluated(t, m, p, text); r.Step != got.Best.Step {
			t.Errorf("%s: %s evaluates to %g s, the search said %g", cluster, text, r.Step, got.Best.Step)
		}
	}
}
