package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// megatronLayers is Megatron-Core's get_num_layers_to_build and
// get_transformer_layer_offset (megatron/core/transformer/
// transformer_block.py and transformer_layer.py, Megatron-LM at
// d98e8a64, core_v0.15.0rc7-2333) for even stages with the embedding
// (e) and the loss (l) counted as layers: model chunk vp of pipeline
// rank pp holds layers [offset, offset + n), written as Megatron-Core
// does, not as placer does, to check placer against it.
func megatronLayers(layers, P, V int, e, l bool, pp, vp int) (offset, n int) {
	num := layers
	if e {
		num++
	}
	if l {
		num++
	}
	perRank := num / P
	n = perRank / V
	first, last := pp == 0 && vp == 0, pp == P-1 && vp == V-1
	if e && first {
		n--
	}
	if l && last {
		n--
	}
	offset = vp*(num/V) + pp*(perRank/V)
	if e && !first {
		offset--
	}
	return offset, n
}

// TestUnitLayers: with the embedding and the loss counted as layers
// (embedding-layer=on, loss-layer=on) each stage's layers, by hand, and
// every chunk's against Megatron-Core's own arithmetic.
func TestUnitLayers(t *testing.T) {
	for _, c := range []struct {
		layers, P int
		e, l      bool
		want      []int
	}{
		// Qwen3-235B-A22B's 94 layers: 96 units over 8 stages of 12.
		{94, 8, true, true, []int{11, 12, 12, 12, 12, 12, 12, 11}},
		// Over 32 stages of 3 (with vp=3, one unit a chunk).
		{94, 32, true, true, append(append([]int{2}, slices.Repeat([]int{3}, 30)...), 2)},
		{95, 8, true, false, []int{11, 12, 12, 12, 12, 12, 12, 12}},
		{95, 8, false, true, []int{12, 12, 12, 12, 12, 12, 12, 11}},
		// A stage of the embedding alone and one of the loss alone.
		{6, 8, true, true, []int{0, 1, 1, 1, 1, 1, 1, 0}},
	} {
		s := plan.Strategy{Pipeline: c.P, EmbeddingLayer: c.e, LossLayer: c.l}
		got, err := s.StageLayers(c.layers)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%d layers, %s: %v, %v; want %v", c.layers, s, got, err, c.want)
		}
	}
	// Every chunk of every plan of a model with dense layers first, as
	// Megatron-Core builds it: the layers' count and which are dense.
	m := mustSpec(t, "llama:layers=94,hidden=512,heads=8,seq=512,vocab=1024,batch=768,experts=8,topk=2,expert_ffn=256,dense_layers=5")
	p, _ := plan.PodOf("dgx-h100", 768)
	checked := 0
	for _, P := range []int{2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96} {
		for _, V := range []int{1, 2, 3, 4, 6, 8} {
			for _, ends := range [][2]bool{{true, true}, {true, false}, {false, true}} {
				s := plan.Strategy{Pipeline: P, Virtual: V, EmbeddingLayer: ends[0], LossLayer: ends[1], Experts: 8}
				pl, err := plan.Resolve(m, s, p)
				units := m.Layers
				if ends[0] {
					units++
				}
				if ends[1] {
					units++
				}
				if units%P != 0 || (units/P)%V != 0 {
					if err == nil {
						t.Errorf("%s: resolves, Megatron-Core refuses it", s)
					}
					continue
				}
				if err != nil {
					if !strings.Contains(err.Error(), "multiple of pp") {
						t.Errorf("%s: %v", s, err)
					}
					continue
				}
				checked++
				for i := range P {
					total, dense := 0, 0
					for v := range V {
						off, n := megatronLayers(m.Layers, P, V, ends[0], ends[1], i, v)
						if got := pl.ChunkLayers(i, v); got != n {
							t.Errorf("%s: stage %d chunk %d: %d layers, Megatron-Core %d", s, i, v, got, n)
						}
						total += n
						dense += max(0, min(off+n, m.DenseLayers)-off)
					}
					if pl.Stages[i] != total {
						t.Errorf("%s: stage %d: %d layers, Megatron-Core %d", s, i, pl.Stages[i], total)
					}
					if d, _ := pl.DenseOn(&m, i); d != dense {
						t.Errorf("%s: stage %d: %d dense layers, Megatron-Core %d", s, i, d, dense)
					}
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("%d plans checked", checked)
	}
}

// TestUnitLayersQwen3: Megatron-MoE-ModelZoo's Qwen3-235B-A22B plan of
// 32 stages of 3 chunks, refused with first=2,last=2 (2 layers under 3
// chunks), resolves with the embedding and the loss counted as layers
// (first=2,last=2 then agree with the split, and are not written back);
// at 8 stages of 4 chunks it costs what first=11,last=11 costs, its
// layers the same. Errors in one line naming the key.
func TestUnitLayersQwen3(t *testing.T) {
	m := mustSpec(t, "qwen3-235b-a22b:seq=4096,batch=2048")
	p, _ := plan.PodOf("dgx-h100", 256)
	const zoo = "tp=2,pp=32,vp=3,ep=8,etp=1,dp=4,mbs=1,sp=on,distopt=on"
	eval := func(text string) (Result, error) {
		s, err := plan.ParseStrategy(text)
		if err != nil {
			return Result{}, err
		}
		return Evaluate(m, s, p)
	}
	if _, err := eval(zoo + ",first=2,last=2"); err == nil || !strings.Contains(err.Error(), "fewer than vp=3 model chunks") {
		t.Errorf("first=2,last=2: %v", err)
	}
	r, err := eval(zoo + ",first=2,last=2,embedding-layer=on,loss-layer=on")
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]int{2}, slices.Repeat([]int{3}, 30)...), 2); !slices.Equal(r.Plan.Stages, want) {
		t.Errorf("stages %v", r.Plan.Stages)
	}
	if got := r.Plan.String(); strings.Contains(got, "first=") || !strings.Contains(got, "embedding-layer=on,loss-layer=on") {
		t.Errorf("written %s", got)
	}
	back, err := eval(r.Plan.String())
	if err != nil || back.Step != r.Step || back.Memory != r.Memory {
		t.Errorf("%s reads back: %v, %g s, %d bytes", r.Plan, err, back.Step, back.Memory)
	}
	if r.Plan.ChunkLayers(0, 0) != 0 || r.Plan.ChunkLayers(31, 2) != 0 || r.Plan.ChunkLayers(0, 1) != 1 {
		t.Errorf("the first chunk holds the embedding alone, the last the loss alone")
	}
	const pp8 = "tp=2,pp=8,vp=4,ep=32,etp=1,dp=16,mbs=1,sp=on,distopt=on,epoverlap=on"
	a, err1 := eval(pp8 + ",embedding-layer=on,loss-layer=on")
	b, err2 := eval(pp8 + ",first=11,last=11")
	if err1 != nil || err2 != nil || a.Step != b.Step || a.Memory != b.Memory {
		t.Errorf("pp=8: units %g s %d bytes (%v), first=11,last=11 %g s %d bytes (%v)", a.Step, a.Memory, err1, b.Step, b.Memory, err2)
	}
	for _, c := range []struct{ text, want string }{
		{"tp=2,ep=8,dp=128,sp=on,embedding-layer=on", "embedding-layer=on with one pipeline stage"},
		{"tp=2,pp=8,vp=5,ep=8,dp=16,sp=on,embedding-layer=on,loss-layer=on", "vp=5 does not divide a stage's 12 units"},
		{"tp=2,pp=16,ep=8,dp=8,sp=on,loss-layer=on", "loss-layer=on: the 94 layers and the loss are 95 units, which do not split evenly over pp=16"},
		{"tp=2,pp=8,vp=4,ep=8,dp=16,sp=on,embedding-layer=on,loss-layer=on,first=12", "first=12, last=0 with embedding-layer=on and loss-layer=on: the split puts 11 layers on the first stage"},
		{"tp=2,pp=8,ep=8,dp=16,sp=on,embedding-layer=maybe", `embedding-layer: "maybe" is not on or off`},
	} {
		_, err := eval(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.text, err, c.want)
		}
	}
}

// TestUnitLayersAlone: a stage of the embedding alone and one of the loss
// alone cost their ends only, and FSDP over them divides by no layer.
func TestUnitLayersAlone(t *testing.T) {
	m := mustSpec(t, "gpt:layers=6,hidden=256,heads=8,seq=512,vocab=1024,batch=64")
	p, _ := plan.PodOf("dgx-h100", 16)
	for _, text := range []string{"pp=8,dp=2,embedding-layer=on,loss-layer=on", "pp=8,dp=2,embedding-layer=on,loss-layer=on,fsdp=on"} {
		s, _ := plan.ParseStrategy(text)
		r, err := Evaluate(m, s, p)
		if err != nil || !(r.Step > 0) || r.Memory <= 0 || r.Plan.Stages[0] != 0 || r.Plan.Stages[7] != 0 {
			t.Errorf("%s: %v, %g s, %d bytes, stages %v", text, err, r.Step, r.Memory, r.Plan.Stages)
		}
	}
}
