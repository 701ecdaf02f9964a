package export

import (
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/scale"
	"github.com/placer/placer/graph/transformer"
)

func TestNewTransformerPlan(t *testing.T) {
	m := transformer.GPT(4, 32, 4, 8, 64, 8)
	s := scale.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Schedule: decision.OneFOneB, SequenceParallel: true}
	tp, err := NewTransformerPlan(m, s, 8)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Format != TransformerPlanFormat || tp.Version != TransformerPlanVersion || len(tp.Stages) != 2 || !tp.Stages[0].Embedding || tp.Stages[0].Output || !tp.Stages[1].Output ||
		len(tp.Stages[1].Layers) != 2 || tp.Stages[1].Layers[0] != 2 || tp.Transformer.FFN != 128 || !tp.Transformer.Tied {
		t.Errorf("plan %+v", tp)
	}
	// One degree written per stage is the same plan.
	one := s
	one.Tensor, one.TensorStages = 0, []int{2, 2}
	if t1, err := NewTransformerPlan(m, one, 8); err != nil || !reflect.DeepEqual(t1, tp) {
		t.Errorf("stage-tp=2:2: %+v, %v; want %+v", t1, err, tp)
	}
	// Uneven stages: 3 layers on the first stage, 1 on the last.
	u := s
	u.FirstLayers, u.LastLayers = 3, 1
	tu, err := NewTransformerPlan(m, u, 8)
	if err != nil {
		t.Fatal(err)
	}
	if got := [][]int{tu.Stages[0].Layers, tu.Stages[1].Layers}; len(got[0]) != 3 || got[0][2] != 2 || len(got[1]) != 1 || got[1][0] != 3 {
		t.Errorf("uneven stages %v, want [0 1 2] [3]", got)
	}
	for _, c := range []struct {
		s    scale.Strategy
		gpus int
		want string
	}{
		{scale.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, FirstLayers: 3, LastLayers: 3}, 8, "first=3 + last=3 is not the 4 layers"},
		{s, 16, "is not the 16 GPUs"},
		{scale.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 1, MicroBatches: 2}, 8, "is not the batch of 8"},
		{scale.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Virtual: 2}, 8, "no interleaving"},
		{scale.Strategy{Tensor: 1, Pipeline: 8, Replicas: 1, MicroBatchSize: 1, MicroBatches: 8}, 8, "pp=8 does not divide the 4 layers"},
		{scale.Strategy{Tensor: 2, Context: 2, Pipeline: 2, Replicas: 1, MicroBatchSize: 2, MicroBatches: 4}, 8, "torch plan: cp=2: tools/torchplan does not split sequences"},
		{scale.Strategy{TensorStages: []int{4, 2}, Pipeline: 2, Replicas: 1, MicroBatchSize: 2, MicroBatches: 4}, 6, "torch plan: stage-tp=4:2: a tensor-parallel degree per stage cannot be exported (tools/torchplan runs one tensor-parallel degree)"},
	} {
		if _, err := NewTransformerPlan(m, c.s, c.gpus); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v on %d GPUs: %v; want %q", c.s, c.gpus, err, c.want)
		}
	}
}
