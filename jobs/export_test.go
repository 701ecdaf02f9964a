package jobs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/jobs/inputs"
)

// TestExportExpertRoundTrip writes a round-robin placement of an
// msr-fiddle graph as expert JSON (node ids, not op indices), reads it back
// as a placement and checks that the decision is the same.
func TestExportExpertRoundTrip(t *testing.T) {
	graphPath := "../workloads/msrfiddle/testdata/small.json"
	dir := t.TempDir()
	expert := filepath.Join(dir, "expert.json")
	out, err := Export(ExportOptions{Graph: inputs.GraphSpec{Path: graphPath}, GPUs: 2, Placement: "round-robin", To: "msr-fiddle", Out: expert})
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		FPGAs []struct{ Nodes []int64 } `json:"fpgas"`
	}
	if err := json.Unmarshal(out, &e); err != nil || len(e.FPGAs) != 2 {
		t.Fatalf("expert file %s: %v", out, err)
	}
	dec := filepath.Join(dir, "d.json")
	if _, err := Export(ExportOptions{Graph: inputs.GraphSpec{Path: graphPath}, Placement: expert, To: "decision", Out: dec}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(dec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := decision.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := inputs.Graph(inputs.GraphSpec{Path: graphPath})
	if err != nil {
		t.Fatal(err)
	}
	if want := decision.RoundRobin(g, 2); !slices.Equal(f.Device, want) {
		t.Errorf("read back %v, want %v", f.Device, want)
	}
	if _, err := Export(ExportOptions{Graph: inputs.GraphSpec{Path: graphPath}, To: "yaml"}); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("unknown format: %v", err)
	}
}
