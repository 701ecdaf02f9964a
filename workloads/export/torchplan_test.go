package export

import (
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// lm is a hand-made exported graph shaped like a language model's first
// layers: an embedding emb; a block blk whose attention attn reads its
// child attn.out's weight itself (as nn.MultiheadAttention reads
// out_proj's), then the block's residual add; an MLP mlp; a head; the
// root's loss. Batch 8.
func lm(t *testing.T) (*graph.Graph, *TorchMeta) {
	t.Helper()
	b := graph.NewBuilder("lm")
	b.SetBatch(8)
	ops := []struct {
		name, module, phase string
		flops               float64
	}{
		{"input0", "", "input", 0},                                    // 0
		{"param:emb.weight", "emb", "parameter", 0},                   // 1
		{"emb/embedding", "emb", "forward", 100},                      // 2
		{"param:blk.attn.in", "blk.attn", "parameter", 0},             // 3
		{"param:blk.attn.out.weight", "blk.attn.out", "parameter", 0}, // 4
		{"blk.attn/mm", "blk.attn", "forward", 3000},                  // 5
		{"blk.attn/mm_out", "blk.attn", "forward", 1000},              // 6
		{"blk/add", "blk", "forward", 10},                             // 7
		{"param:mlp.weight", "mlp", "parameter", 0},                   // 8
		{"mlp/mm", "mlp", "forward", 4000},                            // 9
		{"param:head.weight", "head", "parameter", 0},                 // 10
		{"head/mm", "head", "forward", 2000},                          // 11
		{"model/loss", "", "forward", 10},                             // 12
	}
	m := &TorchMeta{Format: TorchMetaFormat, Version: 1}
	for _, o := range ops {
		b.AddOp(graph.Op{Name: o.name, FLOPs: o.flops})
		m.Ops = append(m.Ops, TorchOp{Name: o.name, Module: o.module, Phase: o.phase})
	}
	for _, e := range [][2]int{{0, 2}, {1, 2}, {2, 5}, {3, 5}, {5, 6}, {4, 6}, {6, 7}, {7, 9}, {8, 9}, {9, 11}, {10, 11}, {11, 12}} {
		b.AddTensor(e[0], 8, e[1])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g, m
}

// TestTorchPlan: the failing map (attention on device 1, its
// out_proj on 0) gives a plan whose stages are contiguous, with the
// out_proj joined to its attention.
func TestTorchPlan(t *testing.T) {
	g, meta := lm(t)
	s := decision.Strategy{Replicas: 2, MicroBatches: 2, Schedule: decision.OneFOneB}
	for _, c := range []struct {
		name   string
		dev    []int
		stages [][]string
		devs   []int
		split  map[string]string
		moved  []TorchMove
	}{
		{"pipeline", []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1},
			[][]string{{"emb", "blk.attn", "blk.attn.out", "blk"}, {"mlp", "head"}}, []int{0, 1}, map[string]string{"mlp": "BEGINNING"}, nil},
		// The map: the attention on 1, its out_proj on 0, the rest
		// on 0 then 1. Contiguous: emb on 0, then everything on 1 (the
		// block's add, 10 FLOPs, moved from 0).
		{"attention apart", []int{0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1},
			[][]string{{"emb"}, {"blk.attn", "blk.attn.out", "blk", "mlp", "head"}}, []int{0, 1}, map[string]string{"blk": "BEGINNING"},
			[]TorchMove{{Module: "blk", From: 0, To: 1, Share: 0}}},
		// One device: one stage.
		{"single", make([]int, 13), [][]string{{"emb", "blk.attn", "blk.attn.out", "blk", "mlp", "head"}}, []int{0}, map[string]string{}, nil},
		// 1, 0, 1 again: emb (102 of work) and the head (2002) cannot both
		// stay on 1; the most work stays where it was with emb moved to 0.
		{"not contiguous", []int{1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1},
			[][]string{{"emb", "blk.attn", "blk.attn.out", "blk", "mlp"}, {"head"}}, []int{0, 1}, map[string]string{"head": "BEGINNING"},
			[]TorchMove{{Module: "emb", From: 1, To: 0, Share: 0}}},
	} {
		p, err := NewTorchPlan(g, meta, c.dev, 2, s)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var stages [][]string
		var devs []int
		for i, st := range p.Stages {
			if st.Stage != i {
				t.Errorf("%s: stage %d numbered %d", c.name, i, st.Stage)
			}
			stages = append(stages, st.Modules)
			devs = append(devs, st.Device)
		}
		if !reflect.DeepEqual(stages, c.stages) || !reflect.DeepEqual(devs, c.devs) {
			t.Errorf("%s: stages %v on %v, want %v on %v", c.name, stages, devs, c.stages, c.devs)
		}
		if !reflect.DeepEqual(p.SplitPoints, c.split) {
			t.Errorf("%s: split points %v, want %v", c.name, p.SplitPoints, c.split)
		}
		if !reflect.DeepEqual(p.Joined, map[string]string{"blk.attn.out": "blk.attn"}) {
			t.Errorf("%s: joined %v", c.name, p.Joined)
		}
		for i := range p.Moved {
			p.Moved[i].Share = 0
		}
		if !reflect.DeepEqual(p.Moved, c.moved) {
			t.Errorf("%s: moved %+v, want %+v", c.name, p.Moved, c.moved)
		}
		if p.Replicas != 2 || p.MicroBatches != 2 || p.Schedule != "1f1b" || p.GPUs != 4 || p.Batch != 8 {
			t.Errorf("%s: strategy %+v", c.name, p)
		}
	}
	// The module map of the placement puts the out_proj with its
	// attention.
	mm, err := NewModuleMap(g, meta, []int{0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if mm.Modules["blk.attn"] != 1 || mm.Modules["blk.attn.out"] != 1 {
		t.Errorf("module map %v: want blk.attn and blk.attn.out on 1", mm.Modules)
	}
	// Bad strategies: one line each.
	for _, c := range []struct {
		s    decision.Strategy
		want string
	}{
		{decision.Strategy{Replicas: 2, MicroBatches: 8}, "2 replicas x 8 micro-batches is more than the batch of 8 samples"},
		{decision.Strategy{Schedule: "zigzag"}, `schedule "zigzag"`},
	} {
		_, err := NewTorchPlan(g, meta, make([]int, 13), 2, c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line containing %q", c.s, err, c.want)
		}
	}
	if _, err := NewTorchPlan(g, meta, make([]int, 12), 2, s); err == nil {
		t.Error("short placement accepted")
	}
}
