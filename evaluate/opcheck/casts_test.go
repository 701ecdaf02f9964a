package opcheck

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// mlpUnderAutocast is a two-layer MLP's step (Linear 8 -> 16, ReLU,
// Linear 16 -> 4, batch 2, loss output.float().sum()) as torchexport
// --autocast bf16 records it (python/placer_torch's
// test_two_layer_mlp): six casts forward (the input, both weights and
// biases, the loss's .float()), five backward (the loss's gradient to
// bf16, the weights' and biases' gradients to f32), each 1 us of GPU
// time; the matmuls, the ReLU and the loss 10 us each. Besides, an index
// cast i64 -> f32 and an f16 cast, which are not autocast's in a bf16
// step.
func mlpUnderAutocast(t *testing.T, autocast string) *graph.Graph {
	t.Helper()
	b := graph.NewBuilder("mlp")
	add := func(name, typ string, dt graph.DType, back bool, read, written int64, from ...int) int {
		op := graph.Op{Name: name, Type: typ, Class: graph.ClassDataMovement, DType: dt, Backward: back,
			BytesRead: read, BytesWritten: written, HasTime: true, Time: 1e-6}
		switch typ {
		case "Input", "Parameter":
			op.HasTime, op.Time = false, 0
		case "addmm", "mm":
			op.Class, op.Time = graph.ClassMatMul, 10e-6
		case "relu", "sum":
			op.Class, op.Time = graph.ClassElementwise, 10e-6
		}
		i := b.AddOp(op)
		for _, f := range from {
			b.AddTensor(f, 4, i)
		}
		return i
	}
	x := add("x", "Input", graph.F32, false, 0, 0)
	w1 := add("w1", "Parameter", graph.F32, false, 0, 0)
	b1 := add("b1", "Parameter", graph.F32, false, 0, 0)
	w2 := add("w2", "Parameter", graph.F32, false, 0, 0)
	b2 := add("b2", "Parameter", graph.F32, false, 0, 0)
	cx := add("cx", "_to_copy", graph.BF16, false, 64, 32, x)
	cw1 := add("cw1", "_to_copy", graph.BF16, false, 512, 256, w1)
	cb1 := add("cb1", "_to_copy", graph.BF16, false, 64, 32, b1)
	h := add("l1", "addmm", graph.BF16, false, 0, 0, cx, cw1, cb1)
	r := add("relu", "relu", graph.BF16, false, 0, 0, h)
	cw2 := add("cw2", "_to_copy", graph.BF16, false, 256, 128, w2)
	cb2 := add("cb2", "_to_copy", graph.BF16, false, 16, 8, b2)
	y := add("l2", "addmm", graph.BF16, false, 0, 0, r, cw2, cb2)
	yf := add("float", "_to_copy", graph.F32, false, 16, 32, y)
	s := add("loss", "sum", graph.F32, false, 0, 0, yf)
	gy := add("gy", "_to_copy", graph.BF16, true, 32, 16, s)
	gw2 := add("gw2", "mm", graph.BF16, true, 0, 0, gy, r)
	gh := add("gh", "mm", graph.BF16, true, 0, 0, gy, cw2)
	add("gw2f", "_to_copy", graph.F32, true, 128, 256, gw2)
	add("gb2f", "_to_copy", graph.F32, true, 8, 16, gy)
	gw1 := add("gw1", "mm", graph.BF16, true, 0, 0, gh, cx)
	add("gw1f", "_to_copy", graph.F32, true, 256, 512, gw1)
	add("gb1f", "_to_copy", graph.F32, true, 32, 64, gh)
	ids := add("ids", "Input", graph.I64, false, 0, 0)
	add("idsf", "_to_copy", graph.F32, false, 16, 16, ids)
	add("half", "_to_copy", graph.F16, false, 16, 8, x)
	b.SetExecution(&graph.Execution{Device: "cuda", Autocast: autocast})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestCasts(t *testing.T) {
	// Under bf16 autocast: 6 casts forward, 5 backward, bytes read and
	// written 928 + 488 forward and 456 + 864 backward = 2736; GPU 11 x 1
	// us of a step of 13 x 1 us (the two casts that are not autocast's
	// count in the step) + 7 x 10 us (l1, relu, l2, loss, gw2, gh, gw1) +
	// the six Input and Parameter ops at the h100 preset's 5 us launch (the
	// roofline's time of an op without work, as Check counts the
	// exporter's datamove state ops) = 113 us: 9.73%; issued at one op
	// each (a _to_copy launches one kernel): 6 x roofline.MeasuredIssue
	// forward, 5 x roofline.MeasuredIssueBwd backward (14.04 and 17.86 us:
	// 173.54 us).
	g := mlpUnderAutocast(t, "bf16")
	r := Check(g, modelOf(t, g, "h100"), "h100", nil)
	c := r.Casts
	if c == nil {
		t.Fatal("no casts under autocast bf16")
	}
	if c.DType != "bf16" || c.Forward != 6 || c.Backward != 5 || c.Bytes != 2736 {
		t.Errorf("casts = %s, %d forward, %d backward, %d bytes; want bf16, 6, 5, 2736", c.DType, c.Forward, c.Backward, c.Bytes)
	}
	for _, x := range []struct {
		name      string
		got, want float64
	}{
		{"GPU", c.GPU, 11e-6},
		{"share", c.Share, 11.0 / 113},
		{"issue", c.Issue, 6*roofline.MeasuredIssue + 5*roofline.MeasuredIssueBwd},
	} {
		if math.Abs(x.got-x.want) > 1e-9*max(1, x.want) {
			t.Errorf("%s = %g, want %g", x.name, x.got, x.want)
		}
	}
	// The same graph without autocast: no casts reported.
	for _, ac := range []string{"", "off"} {
		g := mlpUnderAutocast(t, ac)
		if r := Check(g, modelOf(t, g, "h100"), "h100", nil); r.Casts != nil {
			t.Errorf("autocast %q: casts %+v, want none", ac, *r.Casts)
		}
	}
}
