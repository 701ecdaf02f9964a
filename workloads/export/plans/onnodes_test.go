package plans

import "testing"

// TestOnNodes: one node is not "each of the 1 nodes".
func TestOnNodes(t *testing.T) {
	for _, tc := range []struct {
		nodes int
		want  string
	}{{1, "on the one node"}, {2, "on each of the 2 nodes"}, {16, "on each of the 16 nodes"}} {
		if got := onNodes(tc.nodes); got != tc.want {
			t.Errorf("onNodes(%d) = %q, want %q", tc.nodes, got, tc.want)
		}
	}
}
