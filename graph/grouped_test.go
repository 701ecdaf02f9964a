package graph

import "testing"

// TestGroupedFLOPs: a grouped convolution's forward FLOPs, forward and
// backward, from its weight and activations (RegNetY-1.6GF's first
// grouped layer: 48 channels, 24 a group, 3x3, stride 2 from 112 to 56 px
// at batch 32: 2 x 32 x 48 x 56 x 56 x 24 x 9 = 2,080,899,072), also
// where the weight comes through autocast's cast (a _to_copy of the
// Parameter), and none for a dense or a depthwise one.
func TestGroupedFLOPs(t *testing.T) {
	cases := []struct {
		name     string
		weight   []int64
		acts     [][]int64
		out      []int64
		backward bool
		want     float64
		cast     bool // the convolution reads the weight through a _to_copy (autocast)
	}{
		{"forward", []int64{48, 24, 3, 3}, [][]int64{{32, 48, 112, 112}}, []int64{32, 48, 56, 56}, false, 2080899072, false},
		{"backward", []int64{48, 24, 3, 3}, [][]int64{{32, 48, 112, 112}, {32, 48, 56, 56}}, []int64{32, 48, 112, 112}, true, 2080899072, false},
		{"dense", []int64{64, 64, 3, 3}, [][]int64{{8, 64, 14, 14}}, []int64{8, 64, 14, 14}, false, 0, false},
		{"depthwise", []int64{64, 1, 3, 3}, [][]int64{{8, 64, 14, 14}}, []int64{8, 64, 14, 14}, false, 0, false},
		{"no weight", nil, [][]int64{{8, 64, 14, 14}}, []int64{8, 64, 14, 14}, false, 0, false},
		{"forward under autocast", []int64{48, 24, 3, 3}, [][]int64{{32, 48, 112, 112}}, []int64{32, 48, 56, 56}, false, 2080899072, true},
		{"backward under autocast", []int64{48, 24, 3, 3}, [][]int64{{32, 48, 112, 112}, {32, 48, 56, 56}}, []int64{32, 48, 112, 112}, true, 2080899072, true},
		{"dense under autocast", []int64{64, 64, 3, 3}, [][]int64{{8, 64, 14, 14}}, []int64{8, 64, 14, 14}, false, 0, true},
	}
	for _, c := range cases {
		b := NewBuilder(c.name)
		conv := Op{Name: "conv", Type: "convolution", Class: ClassConv, DType: F32, Shape: c.out, FLOPs: 1, Backward: c.backward}
		var preds []int
		if c.weight != nil {
			w := b.AddOp(Op{Name: "w", Type: "Parameter", Class: ClassDataMovement, Shape: c.weight})
			if c.cast {
				cast := b.AddOp(Op{Name: "w/_to_copy", Type: "_to_copy", Class: ClassElementwise, DType: BF16, Shape: c.weight})
				b.AddTensor(w, 4, cast)
				w = cast
			}
			preds = append(preds, w)
		}
		for k, a := range c.acts {
			preds = append(preds, b.AddOp(Op{Name: "act" + string(rune('0'+k)), Type: "relu", Class: ClassElementwise, Shape: a}))
		}
		i := b.AddOp(conv)
		for _, p := range preds {
			b.AddTensor(p, 4, i)
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Op(i).GroupedFLOPs; got != c.want {
			t.Errorf("%s: grouped FLOPs %g, want %g", c.name, got, c.want)
		}
	}
}

// TestDenseConv: a dense convolution's forward shape, forward and
// backward, with its weight or autocast's cast of it: ResNet-50's 3x3
// layer of 64 channels at 56 x 56 px, batch 32 (out [32, 64, 56, 56]:
// 3,136 pixels, 9 taps; forward FLOPs 2 x 32 x 3,136 x 64 x 64 x 9 =
// 7,398,752,256, kernelbench's c3.64x56); a pointwise 32 -> 16 at 112 px
// (1 tap); a stem's backward of the weight's gradient only (its output
// is the weight's shape; the input [32, 3, 224, 224], stride 2 to 112 x
// 112 = 12,544 pixels); none for a grouped or a depthwise one, or one
// without a weight.
func TestDenseConv(t *testing.T) {
	cases := []struct {
		name     string
		weight   []int64
		acts     [][]int64
		out      []int64
		backward bool
		cast     bool
		want     ConvShape
		flops    float64
	}{
		{"3x3 forward", []int64{64, 64, 3, 3}, [][]int64{{32, 64, 56, 56}}, []int64{32, 64, 56, 56}, false, false,
			ConvShape{32, 64, 64, 9, 3136}, 7398752256},
		{"3x3 backward", []int64{64, 64, 3, 3}, [][]int64{{32, 64, 56, 56}, {32, 64, 56, 56}}, []int64{32, 64, 56, 56}, true, false,
			ConvShape{32, 64, 64, 9, 3136}, 7398752256},
		{"3x3 forward under autocast", []int64{64, 64, 3, 3}, [][]int64{{32, 64, 56, 56}}, []int64{32, 64, 56, 56}, false, true,
			ConvShape{32, 64, 64, 9, 3136}, 7398752256},
		{"pointwise backward under autocast", []int64{16, 32, 1, 1}, [][]int64{{32, 32, 112, 112}, {32, 16, 112, 112}}, []int64{32, 32, 112, 112}, true, true,
			ConvShape{32, 32, 16, 1, 12544}, 411041792},
		{"stem's weight gradient", []int64{64, 3, 7, 7}, [][]int64{{32, 3, 224, 224}, {32, 64, 112, 112}}, []int64{64, 3, 7, 7}, true, false,
			ConvShape{32, 3, 64, 49, 12544}, 7552892928},
		{"grouped", []int64{48, 24, 3, 3}, [][]int64{{32, 48, 112, 112}}, []int64{32, 48, 56, 56}, false, false, ConvShape{}, 0},
		{"depthwise", []int64{64, 1, 3, 3}, [][]int64{{8, 64, 14, 14}}, []int64{8, 64, 14, 14}, false, true, ConvShape{}, 0},
		{"no weight", nil, [][]int64{{8, 64, 14, 14}}, []int64{8, 64, 14, 14}, false, false, ConvShape{}, 0},
	}
	for _, c := range cases {
		b := NewBuilder(c.name)
		var preds []int
		if c.weight != nil {
			w := b.AddOp(Op{Name: "w", Type: "Parameter", Class: ClassDataMovement, Shape: c.weight})
			if c.cast {
				cast := b.AddOp(Op{Name: "w/_to_copy", Type: "_to_copy", Class: ClassDataMovement, DType: BF16, Shape: c.weight})
				b.AddTensor(w, 4, cast)
				w = cast
			}
			preds = append(preds, w)
		}
		for k, a := range c.acts {
			preds = append(preds, b.AddOp(Op{Name: "act" + string(rune('0'+k)), Type: "relu", Class: ClassElementwise, Shape: a}))
		}
		i := b.AddOp(Op{Name: "conv", Type: "convolution", Class: ClassConv, DType: F32, Shape: c.out, FLOPs: 1, Backward: c.backward})
		for _, p := range preds {
			b.AddTensor(p, 4, i)
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		got := g.Op(i).DenseConv
		if got != c.want || got.FLOPs() != c.flops {
			t.Errorf("%s: %+v (%g FLOPs), want %+v (%g)", c.name, got, got.FLOPs(), c.want, c.flops)
		}
	}
}
