package hardware

import (
	"math"

	"github.com/placer/placer/graph"
)

// DenseConvRow is one dense (one-group) convolution measured on a GPU:
// its precision (tf32: FP32 on cuDNN's TF32 tensor cores, PyTorch's
// default; bf16), direction (backward: the input's and the weight's
// gradients), forward shape and time.
type DenseConvRow struct {
	Name      string          `json:"name,omitempty"`
	Precision string          `json:"precision"`
	Backward  bool            `json:"backward,omitempty"`
	Shape     graph.ConvShape `json:"shape"`
	Seconds   float64         `json:"seconds"`
}

// h100Dense are the dense convolutions the lent H100 of 2026-11-26 timed
// (measurements/2026-11-26-h100-c/shapes.jsonl, kind conv with groups 1:
// the zoo's pointwise layers of MobileNetV3, EfficientNet and ResNet-50,
// ResNet's 3x3 layers at 56 to 7 px and two stems, at batch 32, NCHW
// (torchvision's default layout), padded to keep the size, FP32 with
// TF32 and BF16; fwd_seconds, and bwd_seconds, forward plus backward
// less forward). BF16 in NCHW is not uniformly faster than TF32: cuDNN
// transposes to NHWC for its BF16 kernels, and at small channel counts
// picks slower ones (pw.32-16x112 59 us against 35; pw.480-80x14 352
// against 13; stem3 backward 409 against 303), where the roofline has
// every BF16 convolution at twice the TF32 rate (TestDenseMeasured). The
// spatial ones (ResNet's 3x3 layers and the stems) are in use, the
// pointwise ones kept as measured (DenseTime says why).
var h100Dense = []DenseConvRow{
	{Name: "pw.32-16x112.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 32, Cout: 16, Taps: 1, Pixels: 12544}, Seconds: 3.521599993109703e-05},
	{Name: "pw.32-16x112.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 32, Cout: 16, Taps: 1, Pixels: 12544}, Seconds: 0.0002473439909517765},
	{Name: "pw.32-16x112.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 32, Cout: 16, Taps: 1, Pixels: 12544}, Seconds: 5.9007998555898666e-05},
	{Name: "pw.32-16x112.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 32, Cout: 16, Taps: 1, Pixels: 12544}, Seconds: 3.800000250339509e-05},
	{Name: "pw.96-24x56.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 96, Cout: 24, Taps: 1, Pixels: 3136}, Seconds: 2.479999978095293e-05},
	{Name: "pw.96-24x56.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 96, Cout: 24, Taps: 1, Pixels: 3136}, Seconds: 0.00010211199801415206},
	{Name: "pw.96-24x56.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 96, Cout: 24, Taps: 1, Pixels: 3136}, Seconds: 1.3119999784976244e-05},
	{Name: "pw.96-24x56.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 96, Cout: 24, Taps: 1, Pixels: 3136}, Seconds: 5.878400010988116e-05},
	{Name: "pw.240-40x28.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 240, Cout: 40, Taps: 1, Pixels: 784}, Seconds: 0.0001987520004622638},
	{Name: "pw.240-40x28.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 240, Cout: 40, Taps: 1, Pixels: 784}, Seconds: 0.00012412799941375854},
	{Name: "pw.240-40x28.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 240, Cout: 40, Taps: 1, Pixels: 784}, Seconds: 7.71200004965067e-06},
	{Name: "pw.240-40x28.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 240, Cout: 40, Taps: 1, Pixels: 784}, Seconds: 0.0001701759984716773},
	{Name: "pw.480-80x14.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 480, Cout: 80, Taps: 1, Pixels: 196}, Seconds: 1.3199999928474426e-05},
	{Name: "pw.480-80x14.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 480, Cout: 80, Taps: 1, Pixels: 196}, Seconds: 0.00014857599884271624},
	{Name: "pw.480-80x14.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 480, Cout: 80, Taps: 1, Pixels: 196}, Seconds: 0.00035243199765682223},
	{Name: "pw.480-80x14.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 480, Cout: 80, Taps: 1, Pixels: 196}, Seconds: 0.00013152000308036798},
	{Name: "pw.1152-192x7.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 1152, Cout: 192, Taps: 1, Pixels: 49}, Seconds: 2.7744000777602196e-05},
	{Name: "pw.1152-192x7.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 1152, Cout: 192, Taps: 1, Pixels: 49}, Seconds: 0.00021323199756443498},
	{Name: "pw.1152-192x7.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 1152, Cout: 192, Taps: 1, Pixels: 49}, Seconds: 1.9519999623298647e-05},
	{Name: "pw.1152-192x7.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 1152, Cout: 192, Taps: 1, Pixels: 49}, Seconds: 0.00018803200125694274},
	{Name: "pw.256-64x56.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 256, Cout: 64, Taps: 1, Pixels: 3136}, Seconds: 5.219200067222118e-05},
	{Name: "pw.256-64x56.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 256, Cout: 64, Taps: 1, Pixels: 3136}, Seconds: 0.00027491198666393753},
	{Name: "pw.256-64x56.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 256, Cout: 64, Taps: 1, Pixels: 3136}, Seconds: 2.8047999367117883e-05},
	{Name: "pw.256-64x56.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 256, Cout: 64, Taps: 1, Pixels: 3136}, Seconds: 0.0001466560009866953},
	{Name: "pw.1024-256x14.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 1024, Cout: 256, Taps: 1, Pixels: 196}, Seconds: 2.4639999493956565e-05},
	{Name: "pw.1024-256x14.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 1024, Cout: 256, Taps: 1, Pixels: 196}, Seconds: 0.00018766399659216404},
	{Name: "pw.1024-256x14.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 1024, Cout: 256, Taps: 1, Pixels: 196}, Seconds: 3.0479999259114267e-05},
	{Name: "pw.1024-256x14.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 1024, Cout: 256, Taps: 1, Pixels: 196}, Seconds: 0.00013142400048673155},
	{Name: "c3.64x56.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 64, Cout: 64, Taps: 9, Pixels: 3136}, Seconds: 8.988799899816513e-05},
	{Name: "c3.64x56.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 64, Cout: 64, Taps: 9, Pixels: 3136}, Seconds: 0.0002571359947323799},
	{Name: "c3.64x56.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 64, Cout: 64, Taps: 9, Pixels: 3136}, Seconds: 5.790399946272373e-05},
	{Name: "c3.64x56.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 64, Cout: 64, Taps: 9, Pixels: 3136}, Seconds: 0.0001967520024627447},
	{Name: "c3.128x28.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 128, Cout: 128, Taps: 9, Pixels: 784}, Seconds: 5.563199892640114e-05},
	{Name: "c3.128x28.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 128, Cout: 128, Taps: 9, Pixels: 784}, Seconds: 0.00021444800123572352},
	{Name: "c3.128x28.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 128, Cout: 128, Taps: 9, Pixels: 784}, Seconds: 3.6671999841928484e-05},
	{Name: "c3.128x28.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 128, Cout: 128, Taps: 9, Pixels: 784}, Seconds: 0.00018531199917197228},
	{Name: "c3.256x14.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 256, Cout: 256, Taps: 9, Pixels: 196}, Seconds: 4.761600121855736e-05},
	{Name: "c3.256x14.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 256, Cout: 256, Taps: 9, Pixels: 196}, Seconds: 0.00019528000429272648},
	{Name: "c3.256x14.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 256, Cout: 256, Taps: 9, Pixels: 196}, Seconds: 3.452799841761589e-05},
	{Name: "c3.256x14.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 256, Cout: 256, Taps: 9, Pixels: 196}, Seconds: 0.00018700800463557243},
	{Name: "c3.512x7.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 512, Cout: 512, Taps: 9, Pixels: 49}, Seconds: 6.188799999654293e-05},
	{Name: "c3.512x7.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 512, Cout: 512, Taps: 9, Pixels: 49}, Seconds: 0.00023079999722540383},
	{Name: "c3.512x7.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 512, Cout: 512, Taps: 9, Pixels: 49}, Seconds: 4.046399891376495e-05},
	{Name: "c3.512x7.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 512, Cout: 512, Taps: 9, Pixels: 49}, Seconds: 0.00018747200071811675},
	{Name: "stem7.3-64x224s2.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 3, Cout: 64, Taps: 49, Pixels: 12544}, Seconds: 0.00033235199749469756},
	{Name: "stem7.3-64x224s2.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 3, Cout: 64, Taps: 49, Pixels: 12544}, Seconds: 0.0008518239706754684},
	{Name: "stem7.3-64x224s2.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 3, Cout: 64, Taps: 49, Pixels: 12544}, Seconds: 0.00033067199587821956},
	{Name: "stem7.3-64x224s2.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 3, Cout: 64, Taps: 49, Pixels: 12544}, Seconds: 0.0008715679943561553},
	{Name: "stem3.3-32x224s2.fp32", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 3, Cout: 32, Taps: 9, Pixels: 12544}, Seconds: 6.182400137186051e-05},
	{Name: "stem3.3-32x224s2.fp32", Precision: "tf32", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 3, Cout: 32, Taps: 9, Pixels: 12544}, Seconds: 0.00030300799757242207},
	{Name: "stem3.3-32x224s2.bf16", Precision: "bf16", Shape: graph.ConvShape{Batch: 32, Cin: 3, Cout: 32, Taps: 9, Pixels: 12544}, Seconds: 5.7679999619722366e-05},
	{Name: "stem3.3-32x224s2.bf16", Precision: "bf16", Backward: true, Shape: graph.ConvShape{Batch: 32, Cin: 3, Cout: 32, Taps: 9, Pixels: 12544}, Seconds: 0.0004087360017001629},
}

// h100DenseName is h100Dense's name in DenseTables: the measurement it
// comes from.
const h100DenseName = "h100-2026-11-26"

// DenseTables are the measured dense convolutions by name
// (Hardware.DenseConv names one).
var DenseTables = map[string][]DenseConvRow{h100DenseName: h100Dense}

// DenseTime is how long a dense spatial convolution (more than one tap)
// of forward shape s takes in precision prec ("tf32" or "bf16") and the
// given direction, by the measured spatial convolution nearest to it
// among rows of that precision and direction: nearest in the sum of
// |log| ratios of input channels, output channels and output pixels (the
// first of equals in rows' order). The time is the nearest one's per
// forward FLOP times s's forward FLOPs (a measured shape gives its own
// time; a batch other than the measured one scales linearly). opFLOPs,
// backward: the op's own FLOPs; where it computes the weight's gradient
// alone (a first layer, whose input needs none: half the measured work)
// the time is scaled by opFLOPs / (2 x forward FLOPs), at most 1; 0: not
// scaled. false where rows measure none of that precision and direction,
// or s is zero or pointwise.
//
// Pointwise (one-tap) convolutions keep the roofline: their measured
// rows are single samples that differ by up to 25 times between TF32 and
// BF16 at neighbouring shapes (pw.240-40x28 at 2.4 and 62 TFLOP/s,
// pw.480-80x14 at 36 and 1.4), and their backward includes what
// kernelbench's loop adds and a step does not: the accumulation of the
// leaf input's gradient into its .grad, three passes over the input's
// bytes (pw.256-64x56: 103 MB, about 115 us of its 275). Mapped by the
// nearest shape they put ResNet-50 at batch 32 at +36% (--host) where it
// was -24%.
func DenseTime(rows []DenseConvRow, prec string, backward bool, s graph.ConvShape, opFLOPs float64) (float64, bool) {
	f := s.FLOPs()
	if !(f > 0) || s.Taps <= 1 {
		return 0, false
	}
	lr := func(a, b int64) float64 { return math.Abs(math.Log(float64(a) / float64(b))) }
	best, dist := -1, math.Inf(1)
	for k, r := range rows {
		if r.Precision != prec || r.Backward != backward || r.Shape.Taps <= 1 || !(r.Seconds > 0) || !(r.Shape.FLOPs() > 0) {
			continue
		}
		if d := lr(s.Cin, r.Shape.Cin) + lr(s.Cout, r.Shape.Cout) + lr(s.Pixels, r.Shape.Pixels); d < dist {
			best, dist = k, d
		}
	}
	if best < 0 {
		return 0, false
	}
	t := f * rows[best].Seconds / rows[best].Shape.FLOPs()
	if backward && opFLOPs > 0 {
		t *= min(1, opFLOPs/(2*f))
	}
	return t, true
}
