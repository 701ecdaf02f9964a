package planner

import (
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestFSDPExperts: FSDP in a model with experts (Megatron-FSDP's two
// meshes), the small MoE on 8 H100s, tp 1, ep 4, dp 8 (expert-DP 2),
// micro-batch 1 (one micro-batch), by hand. Its 16,798,720 parameters a
// GPU (TestMoELayerMemory) are 6,291,456 of experts, sharded over the 2
// expert-data-parallel ranks, and 10,507,264 of the rest, sharded over
// the 8 data-parallel ones; a block is 7,350,272 (attention and norms
// 4,196,352, the router 8,192, two local experts 3,145,728), two of them
// gathered (the one running and the next) and one's FP32 gradient before
// its reduce-scatter. Activations are the distributed optimizer's. Each
// micro-batch: the rest's weights all-gathered over the node's 8 GPUs
// (ring: 7/8 of 21,014,528 bytes at the node's bus bandwidth, 7
// latencies) and the experts' over 2 GPUs (1/2 of 12,582,912 bytes, a
// latency), beside the forward; both again and the FP32 gradients
// reduce-scattered (twice the bytes) beside the backward.
func TestFSDPExperts(t *testing.T) {
	m := mustSpec(t, smallMoE)
	p, _ := plan.PodOf("dgx-h100", 8)
	r := evalText(t, m, p, "dp=8,ep=4,mbs=1,fsdp=on")
	zero1 := evalText(t, m, p, "dp=8,ep=4,mbs=1,distopt=on")
	dense, experts, block := 10507264.0, 6291456.0, 7350272.0
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"weights", r.Weights, int64(dense*2/8 + experts*2/2 + 2*block*2)},
		{"gradients", r.Grads, int64(dense*4/8 + experts*4/2 + block*4)},
		{"optimizer", r.OptState, int64(dense*12/8 + experts*12/2)},
		{"activations", r.Activations, zero1.Activations},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, c.got, c.want)
		}
	}
	// The exposure, from the stage's forward and backward windows.
	pl := r.Plan
	k := stageKit{c: newCoster(m, pl, &p, 1, 1024)}
	k.kitPhases = k.c.phases(nil)
	var st stageCost
	st.assemble(&k, &m, &pl, 0, float64(transformer.LayerParams(m)))
	if st.Params != dense+experts || st.Experts != experts {
		t.Fatalf("stage parameters %g, experts %g", st.Params, st.Experts)
	}
	bw, lat := p.Intra()
	ring := func(n, bytes float64) float64 { return (n-1)/n*bytes/bw + (n-1)*lat }
	ag := ring(8, dense*2) + ring(2, experts*2)
	rs := ring(8, dense*4) + ring(2, experts*4)
	stages := []stageCost{st}
	smBound(registered, registered.Contention.Plugins()[0], &m, &pl, &p, nil, 1024, stages)
	st = stages[0]
	g8, g2 := plan.Group{PerNode: 8, Nodes: 1}, plan.Group{PerNode: 2, Nodes: 1}
	agC := p.BesideComm(roofline.AllGather, g8, dense*2, ring(8, dense*2)).Plus(p.BesideComm(roofline.AllGather, g2, experts*2, ring(2, experts*2)))
	rsC := p.BesideComm(roofline.ReduceScatter, g8, dense*4, ring(8, dense*4)).Plus(p.BesideComm(roofline.ReduceScatter, g2, experts*4, ring(2, experts*4)))
	if agC.Time != ag || agC.Plus(rsC).Time != ag+rs {
		t.Fatalf("gathers %g s, with the reductions %g; want %g, %g", agC.Time, agC.Plus(rsC).Time, ag, ag+rs)
	}
	want := p.BesideIn(agC, st.fwdWindow()) + p.BesideIn(agC.Plus(rsC), st.bwdWindow())
	if !nearRel(r.DPExposed, want) {
		t.Errorf("exposed %g s, want %g", r.DPExposed, want)
	}
	if c, _ := p.Collective(roofline.AllGather, plan.Group{PerNode: 8, Nodes: 1}, dense*2); !nearRel(c, ring(8, dense*2)) {
		t.Errorf("the pod's all-gather %g s, by hand %g", c, ring(8, dense*2))
	}
}
