package graph

import "testing"

// TestDeriveSteps: a cuDNN RNN op's Steps is its sequence (the output's
// dimension beside the batch's) times its layers (its weight_hh_l<k>
// parameters, the "_reverse" ones not counted), and 0 where either cannot
// be read.
func TestDeriveSteps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		typ    string
		batch  int
		shape  []int64
		params []string
		want   int
	}{
		{"batch first, 2 layers", "_cudnn_rnn", 20, []int64{20, 35, 650}, []string{"lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.weight_hh_l1", "lstm.bias_hh_l1"}, 70},
		{"sequence first, 1 layer", "_cudnn_rnn", 64, []int64{128, 64, 1024}, []string{"rnn.weight_hh_l0"}, 128},
		{"backward op", "_cudnn_rnn_backward", 8, []int64{8, 10, 32}, []string{"gru.weight_hh_l0", "gru.weight_hh_l1", "gru.weight_hh_l2"}, 30},
		{"bidirectional: reverse weights run beside", "_cudnn_rnn", 4, []int64{4, 9, 64}, []string{"lstm.weight_hh_l0", "lstm.weight_hh_l0_reverse", "lstm.weight_hh_l1", "lstm.weight_hh_l1_reverse"}, 18},
		{"sequence as long as the batch: unknown", "_cudnn_rnn", 16, []int64{16, 16, 64}, []string{"lstm.weight_hh_l0"}, 0},
		{"no batch information", "_cudnn_rnn", 0, []int64{16, 10, 64}, []string{"lstm.weight_hh_l0"}, 0},
		{"no recurrent weights named", "_cudnn_rnn", 16, []int64{16, 10, 64}, []string{"w0"}, 0},
		{"not an RNN", "mm", 16, []int64{16, 10, 64}, []string{"lstm.weight_hh_l0"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuilder("g")
			b.SetBatch(tc.batch)
			rnn := b.AddOp(Op{Name: "rnn", Type: tc.typ, Class: ClassMatMul, DType: F32, Shape: tc.shape, FLOPs: 1e6})
			for _, p := range tc.params {
				q := b.AddOp(Op{Name: "param:" + p, Type: "Parameter", Class: ClassDataMovement, DType: F32, Alias: true})
				b.AddTensor(q, 64, rnn)
			}
			g, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Op(rnn).Steps; got != tc.want {
				t.Errorf("Steps = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestDepthwiseTaps: a convolution whose weight is [C, 1, kh, kw] (C > 1)
// is depthwise with kh x kw taps, forward and backward, also where it
// reads autocast's BF16 cast of the weight (a _to_copy of the Parameter,
// as the exporter records a convolution under --autocast bf16); a grouped
// or dense one, a single-channel one, an op of another class, or a cast
// of something else than a Parameter, or to another shape, is not.
func TestDepthwiseTaps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		class  Class
		weight []int64
		cast   string // "": the Parameter itself; "w": a _to_copy of it; "act": a _to_copy of an activation; "shape": a _to_copy to another shape
		want   int
	}{
		{"3x3 depthwise", ClassConv, []int64{72, 1, 3, 3}, "", 9},
		{"5x5 depthwise", ClassConv, []int64{240, 1, 5, 5}, "", 25},
		{"1x7 depthwise", ClassConv, []int64{32, 1, 1, 7}, "", 7},
		{"grouped, 2 channels a group", ClassConv, []int64{48, 2, 3, 3}, "", 0},
		{"dense", ClassConv, []int64{64, 64, 3, 3}, "", 0},
		{"one channel", ClassConv, []int64{1, 1, 3, 3}, "", 0},
		{"a matmul's 4-D parameter", ClassMatMul, []int64{72, 1, 3, 3}, "", 0},
		{"3x3 depthwise under autocast", ClassConv, []int64{72, 1, 3, 3}, "w", 9},
		{"5x5 depthwise under autocast", ClassConv, []int64{240, 1, 5, 5}, "w", 25},
		{"dense under autocast", ClassConv, []int64{64, 64, 3, 3}, "w", 0},
		{"a cast activation of a weight's shape", ClassConv, []int64{72, 1, 3, 3}, "act", 0},
		{"a cast to another shape", ClassConv, []int64{72, 1, 3, 3}, "shape", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuilder("g")
			conv := b.AddOp(Op{Name: "conv", Type: "convolution", Class: tc.class, DType: F32, Shape: []int64{8, 72, 28, 28}, FLOPs: 1e6})
			w := b.AddOp(Op{Name: "param:w", Type: "Parameter", Class: ClassDataMovement, DType: F32, Shape: tc.weight, Alias: true})
			switch tc.cast {
			case "":
				b.AddTensor(w, 64, conv)
			default:
				src, shape := w, tc.weight
				if tc.cast == "act" {
					src = b.AddOp(Op{Name: "relu", Type: "relu", Class: ClassElementwise, DType: F32, Shape: tc.weight})
				}
				if tc.cast == "shape" {
					shape = []int64{tc.weight[0], 1, tc.weight[2] * tc.weight[3]}
				}
				c := b.AddOp(Op{Name: "cast", Type: "_to_copy", Class: ClassElementwise, DType: BF16, Shape: shape})
				b.AddTensor(src, 64, c)
				b.AddTensor(c, 32, conv)
			}
			g, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Op(conv).DepthwiseTaps; got != tc.want {
				t.Errorf("DepthwiseTaps = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestDepthwiseGeometry: a depthwise convolution's geometry read from its
// operands, worked by hand. Forward, a 3x3 of 72 channels from [8, 72,
// 56, 56] to [8, 72, 28, 28]: stride 56 / 28 = 2; a 5x5 stride 1 at 7
// wide (7 / 7 = 1); a 3x3 stride 2 at an odd width, 7 to 4 (7 / 4 = 1.75:
// 2). Backward (the input's gradient [8, 72, 56, 56] out, the output's
// gradient [8, 72, 28, 28] and the input in): stride 2. An op that is not
// depthwise, and a backward op whose output is the weight's gradient
// alone, have none.
func TestDepthwiseGeometry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		backward bool
		weight   []int64
		in, out  []int64 // forward input and output
		want     DepthwiseShape
		ok       bool
	}{
		{"3x3 stride 2", false, []int64{72, 1, 3, 3}, []int64{8, 72, 56, 56}, []int64{8, 72, 28, 28}, DepthwiseShape{8, 72, 56, 3, 3, 2}, true},
		{"5x5 stride 1 at 7", false, []int64{480, 1, 5, 5}, []int64{32, 480, 7, 7}, []int64{32, 480, 7, 7}, DepthwiseShape{32, 480, 7, 5, 5, 1}, true},
		{"3x3 stride 2, odd width", false, []int64{96, 1, 3, 3}, []int64{16, 96, 7, 7}, []int64{16, 96, 4, 4}, DepthwiseShape{16, 96, 7, 3, 3, 2}, true},
		{"backward 3x3 stride 2", true, []int64{72, 1, 3, 3}, []int64{8, 72, 56, 56}, []int64{8, 72, 28, 28}, DepthwiseShape{8, 72, 56, 3, 3, 2}, true},
		{"backward, the weight's gradient alone", true, []int64{72, 1, 3, 3}, []int64{8, 72, 56, 56}, []int64{8, 72, 28, 28}, DepthwiseShape{}, false},
		{"dense", false, []int64{64, 64, 3, 3}, []int64{8, 64, 56, 56}, []int64{8, 64, 56, 56}, DepthwiseShape{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuilder("g")
			x := b.AddOp(Op{Name: "x", Type: "relu", Class: ClassElementwise, DType: F16, Shape: tc.in})
			w := b.AddOp(Op{Name: "param:w", Type: "Parameter", Class: ClassDataMovement, DType: F32, Shape: tc.weight, Alias: true})
			shape := tc.out
			if tc.backward {
				shape = tc.in
				if !tc.ok {
					shape = tc.weight
				}
			}
			conv := b.AddOp(Op{Name: "conv", Type: "convolution", Class: ClassConv, DType: F16, Shape: shape, FLOPs: 1e6, Backward: tc.backward})
			b.AddTensor(x, 64, conv)
			b.AddTensor(w, 64, conv)
			if tc.backward {
				gy := b.AddOp(Op{Name: "gy", Type: "relu", Class: ClassElementwise, DType: F16, Shape: tc.out, Backward: true})
				b.AddTensor(gy, 64, conv)
			}
			g, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			got, ok := g.DepthwiseGeometry(conv)
			if ok != tc.ok || got != tc.want {
				t.Errorf("DepthwiseGeometry = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
