package planner

import (
	"fmt"
	"math"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// EagerCosting says how plan pl's layers are costed under an eager
// stack: whose layer, its precision, the kernels a layer launches
// forward and backward at its middle stage's shard shape, and what the
// op list was checked against; in a model with experts, the MoE layers'
// the same (their attention half and whose experts' block, with its
// host syncs); "" where the layers are fused (not eager).
func EagerCosting(m transformer.Spec, pl plan.Plan) string {
	es, ok := layerCoster(&pl.Run).(codebases.EagerStack)
	if !ok {
		return ""
	}
	code := es.EagerCode()
	T := pl.TP
	if len(pl.TPs) > 0 {
		T = pl.TPs[len(pl.TPs)/2]
	}
	count := func(ops []eager.Op) (fwd, bwd int) {
		for _, o := range ops {
			if o.Backward {
				bwd += o.Launches
			} else {
				fwd += o.Launches
			}
		}
		return fwd, bwd
	}
	sh := eager.Shape{T: T, SP: pl.SequenceParallel, Batch: pl.MBS, Seq: m.Seq / max(1, pl.CP),
		FP32Weights: pl.Run.FP32Weights, Layer: code}
	prec := "BF16 weights"
	if pl.Run.FP32Weights {
		prec = "autocast BF16 over FP32 weights"
	}
	stack := pl.Software.Stack
	if stack == "" {
		stack = "compile=off"
	}
	var parts []string
	if !m.MoE() || m.DenseLayers > 0 {
		fwd, bwd := count(eager.LayerOps(m, sh))
		parts = append(parts, fmt.Sprintf("%d kernels forward and %d backward a layer", fwd, bwd))
	}
	if m.MoE() {
		sh.NoMLP = true
		af, ab := count(eager.LayerOps(m, sh))
		nl := float64(pl.MBS) * float64(m.Seq) / float64(max(1, pl.CP)) / float64(max(1, T))
		local := max(1, m.Experts/max(1, pl.EP))
		me := m
		me.ExpertFFN = max(1, m.ExpertFFN/max(1, pl.ETP))
		impl, loop := es.Experts(pl.Run)
		syncs := "no host sync"
		switch n := eager.MoESyncs(impl, local, pl.EP, loop); {
		case n == 1:
			syncs = "1 host sync"
		case n > 1:
			syncs = fmt.Sprintf("%.0f host syncs", n)
		}
		mf, mb := count(eager.MoEOps(me, eager.MoEShape{Tokens: max(1, int(math.Round(nl))), Copies: nl * float64(m.TopK) * pl.LoadFactor() * float64(pl.ETP),
			Local: local, FP32Weights: pl.Run.FP32Weights, Impl: impl, Loop: loop}))
		parts = append(parts, fmt.Sprintf("MoE layers eager: the layer's attention half and %s over %d local experts, %d kernels forward (%s) and %d backward an MoE layer",
			eagerMoENames[impl], local, af+mf, syncs, ab+mb))
	}
	return fmt.Sprintf("eager ATen ops (%s): %s, %s, %s, each at its class's roofline rate; "+
		"the op lists held against placer_torch.exporter's record of the layers (TestEagerOpsMatchExporter, TestEagerMoEOpsMatchExporter)",
		stack, code.Name(), prec, strings.Join(parts, "; "))
}

// eagerMoENames are the MoE blocks' names in EagerCosting.
var eagerMoENames = [...]string{eager.MoEHFLoop: "transformers' Qwen3MoeSparseMoeBlock (a loop over the experts)",
	eager.MoETitan: "torchtitan's MoE", eager.MoELlamaPy: "layers.py's Experts (bmm)",
	eager.MoEHFGrouped: "transformers' Qwen3MoeSparseMoeBlock (grouped_mm, 5.24's default)"}
