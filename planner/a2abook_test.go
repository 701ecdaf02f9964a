package planner

import (
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/plan"
)

// TestA2ABookkeeping: what Megatron-Core's alltoall dispatcher runs
// around its token exchanges, by hand. Qwen3-30B-A3B at EP 8 in one node
// (16 local experts), 4,096 tokens a GPU, top-8: 32,768 rows of 2,048
// received. Forward: the sort into local-expert order reads and writes
// 32,768 x (2,048 x 2 + 4) bytes (the rows and their FP32
// probabilities), the restore 32,768 x 2,048 x 2; the probabilities'
// all-to-all of 32,768 x 4 bytes over the 8 GPUs; the counts' all-gather
// of 8 x 128 int64 (8,192 bytes); before the synchronization the
// preprocess's 6 small kernels and 4 device-to-host copies, each a
// launch of a zero-byte kernel (a2aPreprocess): 14 launches. Backward: the two passes
// and the probabilities' all-to-all, 3 launches. Capacity routing drops
// the counts' gather and the preprocess (3 launches); the flex and allgather dispatchers and torchtitan
// run none of it. The small MoE at EP 8 has one expert a GPU: no sort,
// the exchanges and the preprocess alone (1,024 tokens, top-2: 2,048
// copies; 2 + 10 launches). At ETP 2 x EP
// 4 (tp 2) its 4,096 rows (2,048 copies gathered over 2) take the
// probabilities' all-gather over the expert-tensor pair forward and a
// reduce-scatter backward, and 2 local experts sort (5 + 10 launches
// forward).
func TestA2ABookkeeping(t *testing.T) {
	node := plan.Group{PerNode: 8, Nodes: 1}
	for _, tc := range []struct {
		name, model, keys        string
		rows, hidden, recv       float64
		sorts                    bool
		counts                   float64 // the counts' all-gather, bytes (0: none)
		etp                      int
		fwdLaunches, bwdLaunches float64
	}{
		{"dropless", stackMoE, "dp=8,ep=8,mbs=1", 32768, 2048, 32768, true, 8192, 1, 4 + 10, 3},
		{"capacity", stackMoE, "dp=8,ep=8,mbs=1,routing=capacity:1", 32768, 2048, 32768, true, 0, 1, 3, 3},
		{"one expert a GPU", smallMoE, "dp=8,ep=8,mbs=1", 2048, 1024, 2048, false, 8 * 8 * 8, 1, 2 + 10, 1},
		{"etp 2", smallMoE, "tp=2,dp=4,ep=4,etp=2,sp=on,mbs=1", 4096, 1024, 1024, true, 8 * 8 * 8, 2, 5 + 10, 4},
		{"flex", stackMoE, "dp=8,ep=8,mbs=1,dispatcher=flex", 0, 0, 0, false, 0, 1, 0, 0},
		{"allgather", stackMoE, "dp=8,ep=8,mbs=1,dispatcher=allgather", 0, 0, 0, false, 0, 1, 0, 0},
		{"torchtitan", stackMoE, "dp=8,ep=8,mbs=1,stack=torchtitan-0.2,compile=on", 0, 0, 0, false, 0, 1, 0, 0},
	} {
		c := stackCoster(t, tc.model, tc.keys, "dgx-h100:1")
		local := float64(c.M.Experts / c.Plan.EP)
		f, b := dispatcherOf(c.Points, &c.Shard).Bookkeeping(tc.recv, tc.rows, local)
		var wantF, wantB float64
		if tc.sorts {
			r, h := tc.rows, tc.hidden
			sort := kernel{Class: graph.ClassDataMovement, Read: r * (h*2 + 4), Writes: r * (h*2 + 4)}.Time(c.H)
			restore := kernel{Class: graph.ClassDataMovement, Read: r * h * 2, Writes: r * h * 2}.Time(c.H)
			wantF, wantB = sort+restore, sort+restore
		}
		if tc.fwdLaunches > 0 {
			ep := plan.Group{PerNode: c.Plan.EP, Nodes: 1}
			probs := c.Pod.AllToAll(ep, tc.recv*4)
			wantF += probs
			wantB += probs
			if tc.etp > 1 {
				pair := plan.Group{PerNode: tc.etp, Nodes: 1}
				ag, _ := c.Pod.Collective(roofline.AllGather, pair, tc.rows*4)
				rs, _ := c.Pod.Collective(roofline.ReduceScatter, pair, tc.rows*4)
				wantF += ag
				wantB += rs
			}
			if tc.counts > 0 {
				ag, _ := c.Pod.Collective(roofline.AllGather, node, tc.counts)
				wantF += ag
				wantF += 10 * kernel{Class: graph.ClassElementwise}.Time(c.H) // the preprocess
			}
		}
		if !near(f.Busy, wantF) || !near(b.Busy, wantB) || f.Launches != tc.fwdLaunches || b.Launches != tc.bwdLaunches {
			t.Errorf("%s: forward %g s in %g launches, backward %g in %g; want %g in %g, %g in %g", tc.name,
				f.Busy, f.Launches, b.Busy, b.Launches, wantF, tc.fwdLaunches, wantB, tc.bwdLaunches)
		}
		if f.EPExposed > f.Busy || (tc.fwdLaunches > 0 && f.EPExposed <= 0) {
			t.Errorf("%s: exposed exchange %g of %g", tc.name, f.EPExposed, f.Busy)
		}
	}
}

// TestA2APreprocess: the launches of the alltoall dispatcher's
// preprocess before its synchronization (mechanisms.PreprocessKernels,
// PreprocessCopies), by hand from MoEAlltoAllTokenDispatcher at
// d98e8a6: with expert parallelism 6 kernels and 4 copies (10); a fifth
// copy, the counts per local expert, without permute fusion and with
// more than one local expert (11; one expert a GPU: 10); without expert
// or expert-tensor parallelism the sum and its copy alone (2); capacity
// routing, flex and torchtitan none.
func TestA2APreprocess(t *testing.T) {
	for _, tc := range []struct {
		name, model, keys string
		launches, sorts   float64 // the preprocess's; the sort and restore (local experts > 1)
	}{
		{"ep 8", stackMoE, "dp=8,ep=8,mbs=1", 10, 2},
		{"ep 8 unfused permute", stackMoE, "dp=8,ep=8,mbs=1,permute-fusion=off", 11, 2},
		{"one expert a GPU unfused", smallMoE, "dp=8,ep=8,mbs=1,permute-fusion=off", 10, 0},
		{"no expert groups", stackMoE, "dp=8,mbs=1", 2, 2},
		{"capacity", stackMoE, "dp=8,ep=8,mbs=1,routing=capacity:1", 0, 2},
		{"flex", stackMoE, "dp=8,ep=8,mbs=1,dispatcher=flex", 0, 0},
		{"torchtitan", stackMoE, "dp=8,ep=8,mbs=1,stack=torchtitan-0.2,compile=on", 0, 0},
	} {
		c := stackCoster(t, tc.model, tc.keys, "dgx-h100:1")
		local := float64(c.M.Experts / c.Plan.EP)
		with, _ := dispatcherOf(c.Points, &c.Shard).Bookkeeping(0, 0, local)
		c.NoComm = true // the exchanges' launches out: the preprocess and the (zero-row) sorts
		without, _ := dispatcherOf(c.Points, &c.Shard).Bookkeeping(0, 0, local)
		if got := without.Launches - tc.sorts; got != tc.launches || with.Launches < without.Launches {
			t.Errorf("%s: %g preprocess launches (%g with the exchanges); want %g", tc.name, got, with.Launches, tc.launches)
		}
	}
}
