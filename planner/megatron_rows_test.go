package planner

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// tableRow is a row of Megatron-LM's weak-scaling table on H100s
// (README, Megatron-Core r0.8.0, images/model_table.png; the table
// itself, with its published figures, is planner/published's
// MegatronTable): a GPT of vocabulary 131,072, sequence 4,096 and an
// output layer of its own, and the plan the README states (the table's
// TP and PP, data-parallel size 48, micro-batch 1, the distributed
// optimizer, sequence parallelism and the tensor-parallel overlap with
// TP). The cost model's tests here run on three of its shapes.
type tableRow struct {
	Name     string
	Model    transformer.Spec
	Pod      string
	GPUs     int
	Strategy plan.Strategy
}

func megatronRow(name string, heads, hidden, layers, tp, pp, gpus, batch int) tableRow {
	m := transformer.GPT(layers, hidden, heads, 4096, 131072, batch)
	m.Tied = false
	s := plan.Strategy{Tensor: tp, Pipeline: pp, Replicas: gpus / (tp * pp), MicroBatchSize: 1, DistOpt: true}
	if tp > 1 {
		s.SequenceParallel, s.TPOverlap = true, true
	}
	return tableRow{Name: name, Model: m, Pod: "dgx-h100", GPUs: gpus, Strategy: s}
}

func megatronRow70B() tableRow  { return megatronRow("70B", 64, 8192, 84, 8, 2, 768, 384) }
func megatronRow177B() tableRow { return megatronRow("177B", 96, 12288, 96, 8, 6, 2304, 1152) }
func megatronRow462B() tableRow { return megatronRow("462B", 144, 18432, 112, 8, 16, 6144, 3072) }
