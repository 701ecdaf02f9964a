package published

import (
	"math"
	"testing"

	"github.com/placer/placer/graph/transformer"
)

// near: equal to a billionth (of want, where it is above 1).
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

func mustSpec(t testing.TB, text string) transformer.Spec {
	t.Helper()
	m, err := transformer.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// smallMoE is two MoE blocks of hidden 1,024, 8 heads, 8 experts of 512,
// top 2, sequence 1,024, vocabulary 1,024, 8 sequences a step.
const smallMoE = "llama:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=8,experts=8,topk=2,expert_ffn=512"
