package roofline

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/placer/placer/evaluate/roofline/convlayout"
	"github.com/placer/placer/graph"
)

// TestDepthwiseMeasured: the h100 preset's depthwise rates are the line
// through the medians, at 9 and 25 taps, of the depthwise convolutions the
// lent H100 timed (shapes.jsonl, kind conv with groups = channels):
// forward per output element, backward per element of the input's
// gradient; and each of those convolutions, costed as the roofline costs
// an op of its shape, comes within 15% forward and a factor of two
// backward of its measured time (the roofline of its FLOPs, before, was 4
// to 50 times too fast).
func TestDepthwiseMeasured(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "measurements", "2026-11-26-h100-c", "shapes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type conv struct {
		Kind, Name                                   string
		Batch, Cin, HW, Cout, Kernel, Stride, Groups int
		FLOPs                                        float64 `json:"flops"`
		Fwd                                          float64 `json:"fwd_seconds"`
		Bwd                                          float64 `json:"bwd_seconds"`
	}
	var convs []conv
	fwd, bwd := map[int][]float64{}, map[int][]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c conv
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Kind != "conv" || c.Groups <= 1 || c.Groups != c.Cin || c.Cin != c.Cout {
			continue
		}
		out := float64(c.Batch * c.Cout * (c.HW / c.Stride) * (c.HW / c.Stride))
		in := float64(c.Batch * c.Cin * c.HW * c.HW)
		taps := c.Kernel * c.Kernel
		fwd[taps], bwd[taps] = append(fwd[taps], c.Fwd/out), append(bwd[taps], c.Bwd/in)
		convs = append(convs, c)
	}
	if len(fwd[9]) == 0 || len(fwd[25]) == 0 {
		t.Fatalf("depthwise convolutions at 9 and 25 taps: %d and %d", len(fwd[9]), len(fwd[25]))
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		if n := len(v); n%2 == 1 {
			return v[n/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	h, _ := Preset("h100")
	for _, c := range []struct {
		name string
		got  [2]float64
		at   map[int][]float64
	}{{"forward", h.Depthwise, fwd}, {"backward", h.DepthwiseBwd, bwd}} {
		m9, m25 := median(c.at[9]), median(c.at[25])
		tap := (m25 - m9) / 16
		want := [2]float64{m9 - 9*tap, tap}
		for i := range want {
			if math.Abs(c.got[i]-want[i]) > 1e-4*want[i] {
				t.Errorf("%s [%d] = %.5g ps, the measurements give %.5g ps", c.name, i, c.got[i]*1e12, want[i]*1e12)
			}
		}
	}
	for _, c := range convs {
		oh := int64(c.HW / c.Stride)
		for _, p := range []struct {
			backward bool
			shape    []int64
			want     float64
			tol      float64
		}{
			{false, []int64{int64(c.Batch), int64(c.Cout), oh, oh}, c.Fwd, 0.15},
			{true, []int64{int64(c.Batch), int64(c.Cin), int64(c.HW), int64(c.HW)}, c.Bwd, 1},
		} {
			op := &graph.Op{Name: c.Name, Type: "convolution", Class: graph.ClassConv, DType: graph.F32, Shape: p.shape,
				FLOPs: c.FLOPs, Backward: p.backward, DepthwiseTaps: c.Kernel * c.Kernel}
			_, got := opDuration(&h, op, 1/(h.MemBandwidth*h.MemEff[graph.ClassConv]), TF32{Conv: true}) // the kernel, no launch
			if r := got / p.want; r > 1+p.tol || r < 1/(1+p.tol) {
				t.Errorf("%s backward %v: %.1f us against %.1f measured", c.Name, p.backward, got*1e6, p.want*1e6)
			}
		}
	}
}

// TestRTX3090Depthwise: the rtx3090 preset carries the H100's depthwise
// rates over by the FP32 rates' ratio, 66.9 / 35.58 = 1.88027: forward
// 6.0616 x 1.88027 = 11.3974 ps + 0.46738 x 1.88027 = 0.87880 ps a tap,
// backward 32.3824 + 4.17937 a tap; up to 25 taps. In NCHW an FP16 3x3
// stride-1 depthwise convolution of 16 channels is PyTorch's own kernel
// (fewer than 32 channels): its output [512, 16, 112, 112], 102,760,448
// elements, takes 102,760,448 x (11.3974 + 9 x 0.87880) ps = 1,983.96 us
// + 5 us launch = 1,988.96 us forward (its 411 MB at 748.8 GB/s, 548.9
// us, less), and backward x (32.3824 + 9 x 4.17937) = 7,192.89 + 5 =
// 7,197.89 us. Of 32 channels it is cuDNN's: the roofline, 2 x 9 x
// 205,520,896 = 3.6994 GFLOP at 71.16 x 0.6 TFLOP/s (86.6 us) under its
// 822,084,160 bytes at 748.8 GB/s: 1,097.87 + 5 = 1,102.87 us, and no
// layout transposes. A 7x7 of 16 channels (49 taps, past the 25 the rates
// hold for) is the roofline's too; unsaid, the 16-channel one keeps the
// rates.
func TestRTX3090Depthwise(t *testing.T) {
	h, err := Preset("rtx3090")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		what      string
		got, want float64
	}{
		{"forward base", h.Depthwise[0], 11.39744e-12}, {"forward a tap", h.Depthwise[1], 0.878801e-12},
		{"backward base", h.DepthwiseBwd[0], 32.38238e-12}, {"backward a tap", h.DepthwiseBwd[1], 4.179370e-12},
	} {
		if math.Abs(f.got-f.want) > 1e-5*f.want {
			t.Errorf("%s = %.6g, want %.6g", f.what, f.got, f.want)
		}
	}
	if h.DepthwiseMaxTaps != 25 {
		t.Errorf("DepthwiseMaxTaps = %d, want 25", h.DepthwiseMaxTaps)
	}
	c, err := NewCluster(h, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	// conv builds a depthwise convolution of ch channels, k x k, at batch
	// 512 and 112 x 112, stride 1, forward or backward, with its weight
	// and activations as the graph reads them.
	conv := func(ch, k int64, backward bool) *graph.Graph {
		b := graph.NewBuilder("dw")
		act := []int64{512, ch, 112, 112}
		elems := 512 * ch * 112 * 112
		x := b.AddOp(graph.Op{Name: "x", Type: "relu", Class: graph.ClassElementwise, DType: graph.F16, Shape: act})
		w := b.AddOp(graph.Op{Name: "param:w", Type: "Parameter", Class: graph.ClassDataMovement, DType: graph.F16, Shape: []int64{ch, 1, k, k}, Alias: true})
		op := graph.Op{Name: "conv", Type: "convolution", Class: graph.ClassConv, DType: graph.F16, Shape: act, Backward: backward,
			FLOPs: float64(2 * k * k * elems), BytesRead: 2*elems + 2*ch*k*k, BytesWritten: 2 * elems}
		if backward {
			op.Type, op.FLOPs, op.BytesRead = "convolution_backward", 2*op.FLOPs, 4*elems+2*ch*k*k
		}
		cv := b.AddOp(op)
		b.AddTensor(x, 2*elems, cv)
		b.AddTensor(w, 2*ch*k*k, cv)
		if backward {
			gy := b.AddOp(graph.Op{Name: "gy", Type: "relu", Class: graph.ClassElementwise, DType: graph.F16, Shape: act, Backward: true})
			b.AddTensor(gy, 2*elems, cv)
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, tc := range []struct {
		what     string
		ch, k    int64
		backward bool
		f        convlayout.Format
		want     float64
	}{
		{"16 channels, PyTorch's kernel", 16, 3, false, convlayout.NCHW, 1988.96e-6},
		{"16 channels backward", 16, 3, true, convlayout.NCHW, 7197.89e-6},
		{"32 channels, cuDNN's", 32, 3, false, convlayout.NCHW, 1102.87e-6},
		{"unsaid format, the rates", 16, 3, false, convlayout.Unsaid, 1988.96e-6},
	} {
		g := conv(tc.ch, tc.k, tc.backward)
		m, err := NewModel(g, c, Options{MemoryFormat: tc.f})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.OpTime(2); math.Abs(got-tc.want) > 0.01e-6 {
			t.Errorf("%s: %.2f us, want %.2f", tc.what, got*1e6, tc.want*1e6)
		}
	}
	// Past 25 taps, the roofline: 7x7 of 16 channels, 2 x 49 x 102,760,448
	// = 10.07 GFLOP at 42.70 TFLOP/s (235.8 us) under its 411,043,360
	// bytes at 748.8 GB/s (548.94 us): 553.94 us.
	m, err := NewModel(conv(16, 7, false), c, Options{MemoryFormat: convlayout.NCHW})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.OpTime(2), 553.94e-6; math.Abs(got-want) > 0.01e-6 {
		t.Errorf("7x7: %.2f us, want %.2f", got*1e6, want*1e6)
	}
}

// TestCarriedDepthwise: the a100, a100-40gb and v100 presets carry the
// H100's depthwise rates over by the ratio of instruction issue rates,
// each GPU's FP32 rate over its SM's FP32 lanes: A100 (66.9 / 128) /
// (19.5 / 64) = 1.715385, V100 (66.9 / 128) / (15.7 / 64) = 2.130573.
// A100 forward 6.0616 x 1.715385 = 10.39798 ps + 0.801736 a tap,
// backward 29.54270 + 3.812871; V100 12.91468 + 0.995787, 36.69316 +
// 4.735732. On the v100 an FP32 3x3 depthwise convolution in NCHW
// (PyTorch's own kernel) of output [512, 32, 112, 112], 205,520,896
// elements, takes 205,520,896 x (12.91468 + 9 x 0.995787) ps = 4,496.13
// us + 5 us launch = 4,501.13 us, over its 1,644,168,320 bytes at 900 x
// 0.8 GB/s (2,283.57 us, the roofline's time before the rates).
func TestCarriedDepthwise(t *testing.T) {
	for _, tc := range []struct {
		preset   string
		fwd, bwd [2]float64
	}{
		{"a100", [2]float64{10.397975e-12, 0.8017365e-12}, [2]float64{29.542697e-12, 3.8128712e-12}},
		{"a100-40gb", [2]float64{10.397975e-12, 0.8017365e-12}, [2]float64{29.542697e-12, 3.8128712e-12}},
		{"v100", [2]float64{12.914683e-12, 0.9957873e-12}, [2]float64{36.693159e-12, 4.7357317e-12}},
	} {
		h, err := Preset(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if math.Abs(h.Depthwise[i]-tc.fwd[i]) > 1e-6*tc.fwd[i] || math.Abs(h.DepthwiseBwd[i]-tc.bwd[i]) > 1e-6*tc.bwd[i] {
				t.Errorf("%s: forward %v backward %v, want %v %v", tc.preset, h.Depthwise, h.DepthwiseBwd, tc.fwd, tc.bwd)
			}
		}
		if h.DepthwiseMaxTaps != 25 {
			t.Errorf("%s: DepthwiseMaxTaps = %d, want 25", tc.preset, h.DepthwiseMaxTaps)
		}
	}
	h, _ := Preset("v100")
	c, err := NewCluster(h, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	const elems = 512 * 32 * 112 * 112
	act := []int64{512, 32, 112, 112}
	b := graph.NewBuilder("dw")
	x := b.AddOp(graph.Op{Name: "x", Type: "relu", Class: graph.ClassElementwise, DType: graph.F32, Shape: act})
	w := b.AddOp(graph.Op{Name: "param:w", Type: "Parameter", Class: graph.ClassDataMovement, DType: graph.F32, Shape: []int64{32, 1, 3, 3}, Alias: true})
	cv := b.AddOp(graph.Op{Name: "conv", Type: "convolution", Class: graph.ClassConv, DType: graph.F32, Shape: act,
		FLOPs: 2 * 9 * elems, BytesRead: 4*elems + 4*32*9, BytesWritten: 4 * elems})
	b.AddTensor(x, 4*elems, cv)
	b.AddTensor(w, 4*32*9, cv)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(g, c, Options{MemoryFormat: convlayout.NCHW})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.OpTime(2), 4501.13e-6; math.Abs(got-want) > 0.01e-6 {
		t.Errorf("v100 FP32 3x3 depthwise: %.2f us, want %.2f", got*1e6, want*1e6)
	}
}
