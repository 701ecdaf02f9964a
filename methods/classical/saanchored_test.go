package classical_test

import "testing"

func TestAnchoredAnnealing(t *testing.T) { testAnchored(t, "sa-anchored") }
