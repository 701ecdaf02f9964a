package hardware

import (
	"math"
	"sort"
)

// GroupedConv is one grouped convolution measured on a GPU: its
// precision (tf32: FP32 on cuDNN's TF32 tensor cores, PyTorch's default;
// bf16), direction (backward: the input's and the weight's gradients),
// forward FLOPs (2 x forward output elements x channels per group x
// taps, graph.Op.GroupedFLOPs) and time.
type GroupedConv struct {
	Name      string  `json:"name,omitempty"`
	Precision string  `json:"precision"`
	Backward  bool    `json:"backward,omitempty"`
	FLOPs     float64 `json:"flops"`
	Seconds   float64 `json:"seconds"`
}

// h100Grouped are the grouped convolutions the lent H100 of 2026-11-26
// timed (measurements/2026-11-26-h100-c/shapes.jsonl, kind conv with 1 <
// groups < channels: RegNetY-1.6GF's 3x3 layers of 24 channels a group at
// batch 32, NCHW, FP32 with TF32 and BF16; fwd_seconds, and bwd_seconds,
// forward plus backward less forward): 10 to 34 TFLOP/s forward, 4 to 21
// backward, where the roofline of their FLOPs on tensor cores is a few
// microseconds (TestGroupedMeasured).
var h100Grouped = []GroupedConv{
	{Name: "g24.48x56.fp32", Precision: "tf32", FLOPs: 2080899072, Seconds: 0.00010177600011229514},
	{Name: "g24.48x56.fp32", Precision: "tf32", Backward: true, FLOPs: 2080899072, Seconds: 0.001031072024255991},
	{Name: "g24.48x56.bf16", Precision: "bf16", FLOPs: 2080899072, Seconds: 6.153599917888641e-05},
	{Name: "g24.48x56.bf16", Precision: "bf16", Backward: true, FLOPs: 2080899072, Seconds: 0.00018867200613021848},
	{Name: "g24.120x28.fp32", Precision: "tf32", FLOPs: 1300561920, Seconds: 7.254400104284287e-05},
	{Name: "g24.120x28.fp32", Precision: "tf32", Backward: true, FLOPs: 1300561920, Seconds: 0.0007044159844517708},
	{Name: "g24.120x28.bf16", Precision: "bf16", FLOPs: 1300561920, Seconds: 5.902400054037571e-05},
	{Name: "g24.120x28.bf16", Precision: "bf16", Backward: true, FLOPs: 1300561920, Seconds: 0.0001382079999893904},
	{Name: "g24.336x14.fp32", Precision: "tf32", FLOPs: 910393344, Seconds: 6.281600147485734e-05},
	{Name: "g24.336x14.fp32", Precision: "tf32", Backward: true, FLOPs: 910393344, Seconds: 0.000171935997903347},
	{Name: "g24.336x14.bf16", Precision: "bf16", FLOPs: 910393344, Seconds: 5.0704000517725946e-05},
	{Name: "g24.336x14.bf16", Precision: "bf16", Backward: true, FLOPs: 910393344, Seconds: 0.00011225599981844425},
	{Name: "g24.888x7.fp32", Precision: "tf32", FLOPs: 601509888, Seconds: 5.780800059437752e-05},
	{Name: "g24.888x7.fp32", Precision: "tf32", Backward: true, FLOPs: 601509888, Seconds: 0.00018377600237727163},
	{Name: "g24.888x7.bf16", Precision: "bf16", FLOPs: 601509888, Seconds: 4.758399911224842e-05},
	{Name: "g24.888x7.bf16", Precision: "bf16", Backward: true, FLOPs: 601509888, Seconds: 0.00010091200284659865},
}

// h100GroupedName is h100Grouped's name in GroupedTables: the
// measurement it comes from.
const h100GroupedName = "h100-2026-11-26"

// GroupedTables are the measured grouped convolutions by name
// (Hardware.Grouped names one).
var GroupedTables = map[string][]GroupedConv{h100GroupedName: h100Grouped}

// GroupedTime is how long a grouped convolution of forward FLOPs flops
// takes in precision prec ("tf32" or "bf16") and the given direction, by
// the measured convolutions of that precision and direction in rows: the
// rate (FLOPs per second) is interpolated linearly in log FLOPs between
// the two measured convolutions whose FLOPs bracket flops, and held at
// the nearest one's beyond them (a measured shape gives its own time).
// false where rows measure none of that precision and direction.
func GroupedTime(rows []GroupedConv, prec string, backward bool, flops float64) (float64, bool) {
	type pt struct{ x, rate float64 }
	var pts []pt
	for _, r := range rows {
		if r.Precision == prec && r.Backward == backward && r.FLOPs > 0 && r.Seconds > 0 {
			pts = append(pts, pt{math.Log(r.FLOPs), r.FLOPs / r.Seconds})
		}
	}
	if len(pts) == 0 || !(flops > 0) {
		return 0, false
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
	x := math.Log(flops)
	rate := pts[0].rate
	switch last := pts[len(pts)-1]; {
	case x >= last.x:
		rate = last.rate
	case x > pts[0].x:
		k := sort.Search(len(pts), func(i int) bool { return pts[i].x >= x })
		a, b := pts[k-1], pts[k]
		rate = a.rate + (b.rate-a.rate)*(x-a.x)/(b.x-a.x)
	}
	return flops / rate, true
}
