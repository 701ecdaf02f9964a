package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// megatronGroups is Megatron-Core's generate_masked_orthogonal_rank_groups
// (megatron/core/parallel_state.py, Megatron-LM at d98e8a64): the rank
// groups of the dimensions masked in, sizes in rank order (the first
// fastest), as its RankGenerator lays out every parallel group.
func megatronGroups(sizes []int, mask []bool) [][]int {
	world := 1
	for _, s := range sizes {
		world *= s
	}
	stride := make([]int, len(sizes))
	for i, acc := 0, 1; i < len(sizes); i++ {
		stride[i], acc = acc, acc*sizes[i]
	}
	var inShape, inStride, outShape, outStride []int
	for i, s := range sizes {
		if mask[i] {
			inShape, inStride = append(inShape, s), append(inStride, stride[i])
		} else {
			outShape, outStride = append(outShape, s), append(outStride, stride[i])
		}
	}
	decompose := func(index int, shape []int) []int {
		idx := make([]int, len(shape))
		for i, d := 0, 1; i < len(shape); i++ {
			idx[i], d = (index/d)%shape[i], d*shape[i]
		}
		return idx
	}
	dot := func(a, b []int) int {
		s := 0
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	size := 1
	for _, s := range inShape {
		size *= s
	}
	var out [][]int
	for g := 0; g < world/size; g++ {
		base := dot(decompose(g, outShape), outStride)
		var ranks []int
		for r := range size {
			ranks = append(ranks, dot(decompose(r, inShape), inStride)+base)
		}
		out = append(out, ranks)
	}
	return out
}

// shapeOf is a rank group's place on nodes of perNode GPUs as placer's
// Group writes it, and whether every node holds as many of its ranks.
func shapeOf(ranks []int, perNode int) (plan.Group, bool) {
	count := map[int]int{}
	for _, r := range ranks {
		count[r/perNode]++
	}
	n := count[ranks[0]/perNode]
	for _, c := range count {
		if c != n {
			return plan.Group{}, false
		}
	}
	return plan.Group{PerNode: n, Nodes: len(count)}, true
}

// TestExpertFolding: MoE Parallel Folding (arXiv 2504.14960) as
// Megatron-Core lays it out: the attention's groups from one rank
// generator (order tp-cp-ep-dp-pp, ep 1) and the experts' from another
// over the same world (tp = ETP, ep = EP, dp = expert-DP, cp 1), the
// pipeline the slowest in both, so each stage's T x C x D GPUs hold its
// ETP x EP x expert-DP mesh. Every group of every fold below, expert
// parallelism across tensor ranks, expert tensor parallelism other than
// TP (above it too), with context parallelism, sits on the nodes where
// placer's groups and ExpertGroups put it, every node of a group
// holding as many of its ranks: its all-to-alls and collectives cross
// the nodes Megatron-Core's do.
func TestExpertFolding(t *testing.T) {
	m := mustSpec(t, "llama:layers=32,hidden=1024,heads=16,kv_heads=8,seq=2048,vocab=1024,batch=512,experts=32,topk=2,expert_ffn=512")
	for _, c := range []struct{ T, C, P, D, EP, ETP int }{
		{2, 1, 8, 16, 32, 1}, // Megatron-MoE-ModelZoo's Qwen3-235B rows on 256 GPUs
		{2, 1, 1, 128, 8, 1},
		{2, 1, 32, 4, 8, 1},
		{4, 1, 8, 8, 8, 1},
		{1, 1, 2, 16, 4, 2}, // ETP above TP
		{4, 1, 1, 8, 4, 4},  // Megatron-Core's default ETP = TP
		{2, 2, 2, 4, 8, 1},  // EP across the context ranks
		{8, 1, 1, 4, 2, 1},  // EP inside a tensor group
		{8, 1, 1, 4, 4, 8},
		{2, 1, 1, 64, 32, 2},
	} {
		world := c.T * c.C * c.P * c.D
		name := fmt.Sprintf("tp=%d,cp=%d,pp=%d,dp=%d,ep=%d,etp=%d", c.T, c.C, c.P, c.D, c.EP, c.ETP)
		s := plan.Strategy{Tensor: c.T, Context: c.C, Pipeline: c.P, Replicas: c.D, Experts: c.EP, ExpertTensor: c.ETP, SequenceParallel: c.T > 1}
		p, _ := plan.PodOf("dgx-h100", world)
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		edp := c.T * c.C * c.D / (c.EP * c.ETP)
		dense := []int{c.T, c.C, 1, c.D, c.P}     // tp, cp, ep, dp, pp
		expert := []int{c.ETP, 1, c.EP, edp, c.P} // tp, cp, ep, dp, pp
		mask := func(dims string) []bool {        // of tp-cp-ep-dp-pp
			var out []bool
			for _, d := range []string{"tp", "cp", "ep", "dp", "pp"} {
				out = append(out, strings.Contains(dims, d))
			}
			return out
		}
		tpG, dpG := pl.Groups(p, 0)
		etpG, epG, edpG := pl.ExpertGroups(p)
		stage := c.T * c.C * c.D
		for _, g := range []struct {
			what  string
			sizes []int
			dims  string
			want  plan.Group
		}{
			{"tensor", dense, "tp", tpG},
			{"data-parallel x context", dense, "cp-dp", dpG},
			{"expert-tensor", expert, "tp", etpG},
			{"expert", expert, "ep", epG},
			{"expert-data", expert, "dp", edpG},
		} {
			for _, ranks := range megatronGroups(g.sizes, mask(g.dims)) {
				got, even := shapeOf(ranks, p.PerNode)
				if !even || got != g.want {
					t.Errorf("%s: %s group %v: %+v (even %v), placer %+v", name, g.what, ranks, got, even, g.want)
					break
				}
				for _, r := range ranks {
					if r/stage != ranks[0]/stage {
						t.Errorf("%s: %s group %v crosses pipeline stages", name, g.what, ranks)
						break
					}
				}
			}
		}
	}
}
