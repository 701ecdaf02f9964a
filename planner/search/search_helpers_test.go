package search

import (
	"math"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// specOf is the model text names, or the test's end.
func specOf(t testing.TB, text string) transformer.Spec {
	t.Helper()
	m, err := transformer.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// smallMoESpec is two MoE blocks of hidden 1,024, 8 heads, 8 experts of
// 512, top 2, sequence 1,024, vocabulary 1,024, 8 sequences a step.
const smallMoESpec = "llama:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=8,experts=8,topk=2,expert_ffn=512"

// evaluated is the evaluation of plan text of m on p, or the test's end.
func evaluated(t *testing.T, m transformer.Spec, p plan.Pod, text string) planner.Result {
	t.Helper()
	s, err := plan.ParseStrategy(text)
	if err != nil {
		t.Fatal(err)
	}
	r, err := planner.Evaluate(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// nearly reports whether got is want to 1e-9 (relative above 1).
func nearly(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// weakRow is a row of Megatron-LM's weak-scaling table on H100s (README,
// Megatron-Core r0.8.0, images/model_table.png; the table with its
// published figures is planner/published's MegatronTable): a GPT
// of vocabulary 131,072, sequence 4,096 and an output layer of its own,
// and the plan the README states (the table's TP and PP, data-parallel
// size 48, micro-batch 1, the distributed optimizer, sequence
// parallelism and the tensor-parallel overlap).
type weakRow struct {
	Model    transformer.Spec
	Pod      string
	GPUs     int
	Strategy plan.Strategy
}

func weakScaling(heads, hidden, layers, tp, pp, gpus, batch int) weakRow {
	m := transformer.GPT(layers, hidden, heads, 4096, 131072, batch)
	m.Tied = false
	s := plan.Strategy{Tensor: tp, Pipeline: pp, Replicas: gpus / (tp * pp), MicroBatchSize: 1, DistOpt: true, SequenceParallel: true, TPOverlap: true}
	return weakRow{Model: m, Pod: "dgx-h100", GPUs: gpus, Strategy: s}
}

// row70B and row462B are the table's 70B and 462B rows.
func row70B() weakRow  { return weakScaling(64, 8192, 84, 8, 2, 768, 384) }
func row462B() weakRow { return weakScaling(144, 18432, 112, 8, 16, 6144, 3072) }
