package search

import (
	"sort"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// divisors are n's divisors, ascending.
func divisors(n int) []int {
	var d []int
	for i := 1; i*i <= n; i++ {
		if n%i == 0 {
			d = append(d, i)
			if i*i != n {
				d = append(d, n/i)
			}
		}
	}
	sort.Ints(d)
	return d
}

// tensorDegrees are the tensor-parallel degrees Search tries: the
// divisors of a node's GPUs that divide the heads and the key/value heads.
func tensorDegrees(m transformer.Spec, p plan.Pod) []int {
	var out []int
	for _, T := range divisors(p.PerNode) {
		if m.Heads%T == 0 && m.KVHeads%T == 0 {
			out = append(out, T)
		}
	}
	return out
}

// expertMesh is an expert-parallel and expert-tensor-parallel degree
// (Strategy's Experts and ExpertTensor; 0 and 0 in a dense model).
type expertMesh struct{ ep, etp int }

// denseMesh is a dense model's one mesh: no experts'.
var denseMesh = []expertMesh{{}}

// expertMeshes are the experts' meshes Search tries in a stage of T x C
// x D GPUs: every expert-parallel degree EP dividing the experts, with
// the expert-tensor-parallel degree 1 or T (Megatron-Core's default),
// ETP x EP dividing T x C x D. A dense model has one, no experts'.
func expertMeshes(m transformer.Spec, T, C, D int) []expertMesh {
	if !m.MoE() {
		return denseMesh
	}
	var out []expertMesh
	inner := max(T, 1) * C * D
	etps := []int{1}
	if T > 1 && m.ExpertFFN%T == 0 {
		etps = append(etps, T)
	}
	for _, etp := range etps {
		for _, ep := range divisors(m.Experts) {
			if inner%(ep*etp) == 0 {
				out = append(out, expertMesh{ep: ep, etp: etp})
			}
		}
	}
	return out
}
