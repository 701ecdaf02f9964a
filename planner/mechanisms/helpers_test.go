package mechanisms

import (
	"testing"

	"github.com/placer/placer/graph/transformer"
)

// mustSpec is the model text parses to, or the test's end.
func mustSpec(t testing.TB, text string) transformer.Spec {
	t.Helper()
	m, err := transformer.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
