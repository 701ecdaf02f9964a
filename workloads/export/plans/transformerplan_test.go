package plans

import (
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/workloads/export"
)

func TestNewTransformerPlan(t *testing.T) {
	m := transformer.GPT(4, 32, 4, 8, 64, 8)
	s := plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Schedule: decision.OneFOneB, SequenceParallel: true}
	tp, err := NewTransformerPlan(m, s, 8)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Format != export.TransformerPlanFormat || tp.Version != export.TransformerPlanVersion || len(tp.Stages) != 2 || !tp.Stages[0].Embedding || tp.Stages[0].Output || !tp.Stages[1].Output ||
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
		s    plan.Strategy
		gpus int
		want string
	}{
		{plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, FirstLayers: 3, LastLayers: 3}, 8, "first=3 + last=3 is not the 4 layers"},
		{s, 16, "is not the 16 GPUs"},
		{plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 1, MicroBatches: 2}, 8, "is not the batch of 8"},
		{plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Virtual: 2}, 8, "no interleaving"},
		{plan.Strategy{Tensor: 1, Pipeline: 8, Replicas: 1, MicroBatchSize: 1, MicroBatches: 8}, 8, "pp=8 does not divide the 4 layers"},
		{plan.Strategy{Tensor: 2, Context: 2, Pipeline: 2, Replicas: 1, MicroBatchSize: 2, MicroBatches: 4}, 8, "torch plan: cp=2: tools/dev/torchplan does not split sequences"},
		{plan.Strategy{TensorStages: []int{4, 2}, Pipeline: 2, Replicas: 1, MicroBatchSize: 2, MicroBatches: 4}, 6, "torch plan: stage-tp=4:2: a tensor-parallel degree per stage cannot be exported (tools/dev/torchplan runs one tensor-parallel degree)"},
	} {
		if _, err := NewTransformerPlan(m, c.s, c.gpus); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v on %d GPUs: %v; want %q", c.s, c.gpus, err, c.want)
		}
	}
}

// TestNewTransformerPlanExperts: a model with experts gets its experts and
// their mesh (the EP 2 x DP 2 on 4 GPUs: dp=4, ep=2, expert-DP 2);
// what tools/dev/torchplan cannot run with experts is refused.
func TestNewTransformerPlanExperts(t *testing.T) {
	m, err := transformer.Parse("gpt:layers=2,hidden=16,heads=2,seq=8,vocab=64,batch=8,experts=4,topk=2,expert_ffn=32")
	if err != nil {
		t.Fatal(err)
	}
	s := plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 4, MicroBatchSize: 1, MicroBatches: 2, Experts: 2}
	tp, err := NewTransformerPlan(m, s, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := export.TransformerSpec{Layers: 2, Hidden: 16, Heads: 2, KVHeads: 2, FFN: 64, Seq: 8, Vocab: 64, Batch: 8, Tied: true,
		Norm: "layernorm", Activation: "gelu", Experts: 4, TopK: 2, ExpertFFN: 32}
	if tp.Transformer != want || tp.ExpertParallel != 2 || tp.ExpertTensor != 1 || tp.ExpertData != 2 {
		t.Errorf("plan %+v, want transformer %+v, expert mesh 1 x 2 x 2", tp, want)
	}
	data, err := tp.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := export.DecodePlan(data); err != nil || !reflect.DeepEqual(got, &tp) {
		t.Errorf("read back %+v, %v", got, err)
	}
	// A dense model's plan has no expert fields.
	dense, _ := NewTransformerPlan(transformer.GPT(2, 16, 2, 8, 64, 8), plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 4, MicroBatchSize: 1, MicroBatches: 2}, 4)
	if data, _ := dense.Encode(); strings.Contains(string(data), "expert") {
		t.Errorf("dense plan mentions experts:\n%s", data)
	}
	shared, _ := transformer.Parse("gpt:layers=2,hidden=16,heads=2,seq=8,vocab=64,batch=8,experts=4,topk=2,expert_ffn=32,shared=1")
	for _, c := range []struct {
		m    transformer.Spec
		s    plan.Strategy
		gpus int
		want string
	}{
		{m, plan.Strategy{Tensor: 2, Pipeline: 1, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Experts: 2, SequenceParallel: true}, 4, "tp=2, pp=1, etp=2 with experts"},
		{m, plan.Strategy{Tensor: 1, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Experts: 2}, 4, "tp=1, pp=2, etp=1 with experts"},
		{m, plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Experts: 4}, 2, "ep=4 does not divide the 4 experts and dp=2"},
		{shared, s, 4, "no shared experts"},
		{transformer.GPT(2, 16, 2, 8, 64, 8), s, 4, "ep=2, etp=0 on a model without experts"},
		{transformer.GPT(2, 16, 2, 8, 64, 8), plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 4, MicroBatchSize: 1, MicroBatches: 2, GradBF16: true}, 4, "grads=bf16"},
		{m, plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 4, MicroBatchSize: 1, MicroBatches: 2, Experts: 2, EPOverlap: true}, 4, "epoverlap=on"},
	} {
		if _, err := NewTransformerPlan(c.m, c.s, c.gpus); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: %v; want %q", c.m, c.s, err, c.want)
		}
	}
	for _, c := range []struct{ from, to, want string }{
		{`"expert_parallel": 2`, `"expert_parallel": 3`, "expert_tensor 1 x expert_parallel 3 x expert_data 2 is not tensor x replicas = 1 x 4"},
		{`"topk": 2`, `"topk": 5`, "want 1 <= topk <= experts"},
		{`"experts": 4,`, ``, "an expert mesh without transformer.experts"},
		{`"expert_data": 2`, `"expert_data": 1`, "is not tensor x replicas"},
	} {
		bad := strings.Replace(string(data), c.from, c.to, 1)
		if _, err := export.DecodePlan([]byte(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: %v; want %q", c.from, c.to, err, c.want)
		}
	}
}
