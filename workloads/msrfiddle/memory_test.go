package msrfiddle

import (
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
)

// TestMemoryCountedOnce checks the memory model of docs/importers.md
// ("Memory: a node's size counted once") by hand: a node's size holds its
// outputs, so the edges' sizes add nothing on the producer's device; a
// copy sent to another device is held there while its consumer runs.
func TestMemoryCountedOnce(t *testing.T) {
	// a (size 100) -> b (size 50) -> c (size 30); a's output is 100 bytes
	// (all of a), b's is 40 bytes (less than b's 50).
	const src = `{"maxSizePerFPGA": 1000, "maxFPGAs": 2, "maxCPUs": 1,
	 "nodes": [{"id": 1, "name": "a", "fpgaLatency": 1, "size": 100},
	           {"id": 2, "name": "b", "fpgaLatency": 1, "size": 50},
	           {"id": 3, "name": "c", "fpgaLatency": 1, "size": 30}],
	 "edges": [{"sourceId": 1, "destId": 2, "cost": 0.5, "size": 100},
	           {"sourceId": 2, "destId": 3, "cost": 0.5, "size": 40}]}`
	g, err := Decode([]byte(src), "mem")
	if err != nil {
		t.Fatal(err)
	}
	h, err := roofline.Preset("v100")
	if err != nil {
		t.Fatal(err)
	}
	h.Memory = 1000
	c, err := roofline.NewCluster(h, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := roofline.NewModel(g, c, roofline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		device []int
		peak   []int64
	}{
		// All sizes are resident all step; no tensor adds to them.
		{"one device", []int{0, 0, 0}, []int64{180, 0}},
		// Device 1 holds b's and c's sizes and, while b runs, the copy of
		// a's 100-byte output it received: 50 + 30 + 100.
		{"a alone", []int{0, 1, 1}, []int64{100, 180}},
		// Device 1 holds c's size and the 40-byte copy of b's output.
		{"c alone", []int{0, 0, 1}, []int64{150, 70}},
	} {
		res, _, err := roofline.Simulate(m, decision.Decision{Device: tc.device})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for k, want := range tc.peak {
			if res.PeakMemory[k] != want {
				t.Errorf("%s: device %d peak %d B, want %d", tc.name, k, res.PeakMemory[k], want)
			}
		}
	}
}
