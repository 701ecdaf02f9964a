package export

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/workloads/export"
)

// TestExportExpertRoundTrip writes a round-robin placement of an
// msr-fiddle graph as expert JSON (node ids, not op indices), reads it back
// as a placement and checks that the decision is the same.
func TestExportExpertRoundTrip(t *testing.T) {
	graphPath := "../../workloads/msrfiddle/testdata/small.json"
	dir := t.TempDir()
	expert := filepath.Join(dir, "expert.json")
	out, err := Run(Options{OpGraph: GraphOptions{Graph: inputs.GraphSpec{Path: graphPath}, Cluster: inputs.ClusterSpec{GPUs: 2}}, Placement: "round-robin", To: "msr-fiddle", Out: expert})
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
	if _, err := Run(Options{OpGraph: GraphOptions{Graph: inputs.GraphSpec{Path: graphPath}}, Placement: expert, To: "decision", Out: dec}); err != nil {
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
	if _, err := Run(Options{OpGraph: GraphOptions{Graph: inputs.GraphSpec{Path: graphPath}}, To: "yaml"}); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("unknown format: %v", err)
	}
}

// TestExportTransformerPlanReads: what `placer export --to torch-plan`
// writes for a transformer by its shape is a placer-transformer-plan, and
// the plan reader reads it back.
func TestExportTransformerPlanReads(t *testing.T) {
	for _, c := range []struct {
		workload, strategy string
		gpus               int
		want               string
	}{
		{"gpt:layers=4,hidden=32,heads=4,seq=8,vocab=64,batch=8", "tp=2,pp=2,dp=2,mbs=2,sp=on", 8, ""},
		// Experts split over EP 2 x expert-DP 2, the rest data parallel
		// over the 4 GPUs (docs/cluster-scale.md; tools/dev/torchplan/experts.py
		// runs it).
		{"gpt:layers=2,hidden=16,heads=2,seq=8,vocab=64,batch=8,experts=4,topk=2,expert_ffn=32", "ep=2,dp=4", 4,
			`"expert_parallel": 2,
  "expert_tensor": 1,
  "expert_data": 2,`},
	} {
		out, err := Run(Options{World: inputs.ClusterScale, Scale: ScaleOptions{Workload: c.workload,
			Pod: inputs.PodSpec{GPUs: c.gpus}}, Strategy: c.strategy, To: "torch-plan"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := export.DecodePlan(out)
		if err != nil || p.PlanFormat() != export.TransformerPlanFormat {
			t.Fatalf("%v, %v", p, err)
		}
		if again, err := p.Encode(); err != nil || !bytes.Equal(again, out) {
			t.Errorf("written again:\n%s\nwant\n%s", again, out)
		}
		if !bytes.Contains(out, []byte(c.want)) || (c.want == "") == bytes.Contains(out, []byte(`"experts"`)) {
			t.Errorf("%s %s: plan\n%s\nwant %s", c.workload, c.strategy, out, c.want)
		}
	}
}
