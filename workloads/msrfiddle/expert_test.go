package msrfiddle

import (
	"slices"
	"strings"
	"testing"
)

// expertGraph: forward nodes 10 and 20, backward nodes 30 (of 20) and 40
// (of 10), sharing colorClasses with their forward nodes.
const expertGraph = `{"maxSizePerFPGA": 1000, "maxFPGAs": 2, "maxCPUs": 1,
 "nodes": [{"id": 10, "fpgaLatency": 1, "colorClass": 1, "isBackwardNode": 0},
           {"id": 20, "fpgaLatency": 1, "colorClass": 2, "isBackwardNode": 0},
           {"id": 30, "fpgaLatency": 1, "colorClass": 2, "isBackwardNode": 1},
           {"id": 40, "fpgaLatency": 1, "colorClass": 1, "isBackwardNode": 1}],
 "edges": [{"sourceId": 10, "destId": 20, "cost": 1}, {"sourceId": 20, "destId": 30, "cost": 1},
           {"sourceId": 30, "destId": 40, "cost": 1}]}`

func TestExpert(t *testing.T) {
	g, _, ids, err := DecodeWithIDs([]byte(expertGraph), "x")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []int64{10, 20, 30, 40}) {
		t.Fatalf("ids %v", ids)
	}
	// A forward-only split: the backward nodes follow their colorClass.
	dev, err := ReadExpert([]byte(`{"fpgas": [{"nodes": [10]}, {"nodes": [20]}], "cpus": [{"nodes": []}]}`), g, ids)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 1, 0}; !slices.Equal(dev, want) {
		t.Errorf("devices %v, want %v", dev, want)
	}
	out, err := WriteExpert(g, dev, 2, ids)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"fpgas":[{"nodes":[10,40]},{"nodes":[20,30]}],"cpus":[{"nodes":[]}]}` + "\n"; string(out) != want {
		t.Errorf("wrote %s, want %s", out, want)
	}
	back, err := ReadExpert(out, g, ids)
	if err != nil || !slices.Equal(back, dev) {
		t.Errorf("read back %v, %v", back, err)
	}
	for _, c := range []struct{ file, want string }{
		{`{"fpgas": [{"nodes": [10, 20]}, {"nodes": [20]}]}`, "node id 20 is placed twice"},
		{`{"fpgas": [{"nodes": [10, 99]}]}`, "node id 99 is not in graph x"},
		{`{"fpgas": [{"nodes": [10]}], "cpus": [{"nodes": [20]}]}`, "node id 20 is on a CPU"},
		{`{"fpgas": [{"nodes": [20]}]}`, `node id 10 (op "node10") is on no device`},
		{`{"fpgas": []}`, "no fpgas"},
		{`{"fpgas": [{"nodes": [10]}`, "msrfiddle expert"},
	} {
		_, err := ReadExpert([]byte(c.file), g, ids)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.file, err, c.want)
		}
	}
}
