package graph

import (
	"bytes"
	"strings"
	"testing"
)

// TestLaunchesField: an op's "launches" (a profile's count of what it put
// on the GPU's stream) read by both decoders, written back, and out of
// range an error naming the field; absent, the op has none.
func TestLaunchesField(t *testing.T) {
	doc := func(v string) string {
		return `{"format": "placer-graph", "version": 1, "ops": [{"name": "a", "type": "convolution", "class": "conv"` + v +
			`}, {"name": "b", "class": "elementwise"}], "tensors": [{"producer": "a", "consumers": ["b"], "bytes": 4}]}`
	}
	for _, c := range []struct {
		field string
		has   bool
		n     int
		err   string
	}{
		{`, "launches": 7`, true, 7, ""},
		{`, "launches": 0`, true, 0, ""},
		{``, false, 0, ""},
		{`, "launches": -1`, false, 0, "launches"},
		{`, "launches": 1048577`, false, 0, "launches"},
	} {
		for name, dec := range map[string]func([]byte) (*Graph, error){"fast": Decode, "reference": decodeRef} {
			g, err := dec([]byte(doc(c.field)))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("%s %q: error %v, want one naming %q", name, c.field, err, c.err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %q: %v", name, c.field, err)
			}
			op := g.Op(0)
			if op.HasLaunches != c.has || op.Launches != c.n || g.Op(1).HasLaunches {
				t.Errorf("%s %q: launches %v %d, want %v %d", name, c.field, op.HasLaunches, op.Launches, c.has, c.n)
			}
			var buf bytes.Buffer
			if err := Write(&buf, g); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(buf.String(), `"launches"`); got != c.has {
				t.Errorf("%s %q: written with launches %v, want %v", name, c.field, got, c.has)
			}
		}
	}
}
