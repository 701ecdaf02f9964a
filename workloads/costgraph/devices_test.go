package costgraph

import (
	"strings"
	"testing"
)

func TestEncodeWithDevices(t *testing.T) {
	g, err := Read("testdata/regal_small.pbtxt")
	if err != nil {
		t.Fatal(err)
	}
	dev := make([]int, g.NumOps())
	for i := range dev {
		dev[i] = i % 3
	}
	out, err := EncodeWithDevices(g, dev)
	if err != nil {
		t.Fatal(err)
	}
	// Each node names its device, in op order, right after its name.
	lines := strings.Split(string(out), "\n")
	k := 0
	for j, l := range lines {
		if strings.HasPrefix(l, "  name: ") {
			if want := `  device: "/device:GPU:` + string(rune('0'+dev[k])) + `"`; lines[j+1] != want {
				t.Errorf("node %d: %q, want %q", k, lines[j+1], want)
			}
			k++
		}
	}
	if k != g.NumOps() {
		t.Fatalf("%d nodes, want %d", k, g.NumOps())
	}
	// The device fields do not change what the graph reads back as.
	h, err := Decode(out, g.Name())
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := Encode(g)
	again, _ := Encode(h)
	if string(plain) != string(again) {
		t.Error("graph with devices reads back differently")
	}
	if _, err := EncodeWithDevices(g, dev[1:]); err == nil {
		t.Error("short placement accepted")
	}
}
