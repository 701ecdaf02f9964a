package roofline

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

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
