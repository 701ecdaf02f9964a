package graph

import (
	"fmt"
	"strings"
)

// Class is the cost class of an op: it selects the peak throughput and
// efficiency the performance model uses, and whether the op may be fused.
type Class uint8

// The op classes. ClassUnknown ops (imported graphs with measured times)
// are never fused.
const (
	ClassUnknown      Class = iota // no cost class: measured time only, never fused
	ClassMatMul                    // dense matrix multiply (tensor-core eligible by dtype)
	ClassConv                      // convolution (tensor-core eligible by dtype)
	ClassElementwise               // pointwise arithmetic and activations
	ClassReduction                 // sums, means, softmax normalizers, norms
	ClassDataMovement              // reshapes, concats, slices, transposes, copies
	ClassEmbedding                 // gathers and scatters of embedding rows
	numClasses
)

var classNames = [...]string{"unknown", "matmul", "conv", "elementwise", "reduction", "datamove", "embedding"}

// NumClasses is the number of op classes.
const NumClasses = int(numClasses)

// String returns the class's name as used in the JSON format.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", c)
}

// ParseClass returns the class named s ("matmul", "elementwise", ...).
func ParseClass(s string) (Class, error) {
	for i, n := range classNames {
		if strings.EqualFold(n, s) {
			return Class(i), nil
		}
	}
	return 0, fmt.Errorf("unknown op class %q (want one of %s)", s, strings.Join(classNames[:], ", "))
}

// Classes lists every class in order.
func Classes() []Class {
	cs := make([]Class, numClasses)
	for i := range cs {
		cs[i] = Class(i)
	}
	return cs
}

// DType is the element type of an op's output (and of its arithmetic).
type DType uint8

// The element types.
const (
	F32 DType = iota
	F16
	BF16
	F64
	I32
	I64
	I8
	Bool
	numDTypes
)

var dtypeNames = [...]string{"f32", "f16", "bf16", "f64", "i32", "i64", "i8", "bool"}
var dtypeSizes = [...]int64{4, 2, 2, 8, 4, 8, 1, 1}

// NumDTypes is the number of element types.
const NumDTypes = int(numDTypes)

// String returns the dtype's name as used in the JSON format.
func (t DType) String() string {
	if int(t) < len(dtypeNames) {
		return dtypeNames[t]
	}
	return fmt.Sprintf("dtype(%d)", t)
}

// Size is the size of one element in bytes.
func (t DType) Size() int64 {
	if int(t) < len(dtypeSizes) {
		return dtypeSizes[t]
	}
	return 0
}

// ParseDType returns the dtype named s ("f32", "bf16", ...).
func ParseDType(s string) (DType, error) {
	for i, n := range dtypeNames {
		if strings.EqualFold(n, s) {
			return DType(i), nil
		}
	}
	return 0, fmt.Errorf("unknown dtype %q (want one of %s)", s, strings.Join(dtypeNames[:], ", "))
}

// Op is one operation of the graph. Sizes are in bytes, FLOPs in floating
// point operations (a multiply-add counts two), times in seconds.
type Op struct {
	Name  string  // unique within the graph
	Type  string  // framework op type, e.g. "MatMul", "Sigmoid", "ApplyAdam"
	Class Class   // cost class
	DType DType   // element type of its arithmetic and first output
	Shape []int64 // shape of its first output (may be nil)

	FLOPs        float64 // floating point operations
	BytesRead    int64   // bytes read from device memory (inputs, parameters)
	BytesWritten int64   // bytes written to device memory (outputs, updates)
	ParamBytes   int64   // resident state owned by the op (weights, gradients, optimizer slots)
	TempBytes    int64   // scratch memory held only while the op runs

	// HasTime says that Time is a measured run time that replaces the
	// roofline estimate (imported, profiled graphs).
	HasTime bool
	Time    float64

	// HasDispatch says that Dispatch is the measured CPU time to dispatch
	// the op (the framework's dispatcher and the kernel launch, from a
	// profile of a GPU run): the host-side model (roofline Options.Host)
	// takes it in place of its per-class default.
	HasDispatch bool
	Dispatch    float64

	// HasLaunches says that Launches is how many times the op put work on
	// the GPU's stream in a profiled run (kernels, memsets and copies
	// under its profiler event: torchexport --profile on a GPU, the meta
	// file's kernel names counted): the host model (roofline Host) issues
	// each launch at its measured cost. Without it roofline.Launches's
	// rule stands in (a view launches nothing, a cuDNN convolution
	// several).
	HasLaunches bool
	Launches    int

	// Colocation names the group of ops that must run on the same device
	// ("" = none), e.g. a variable and the ops that update it.
	Colocation string

	// Backward marks ops of the backward pass (informational; used by
	// features and expert placements).
	Backward bool

	// Alias says that the op's outputs are views of its first input
	// (Identity, Reshape, Squeeze, ...): they take no device memory of
	// their own, though moving one to another device moves its bytes.
	Alias bool

	// The parts of FLOPs, BytesRead, BytesWritten and TempBytes that do
	// not depend on the batch, in a graph with batch information
	// (Graph.Batch > 0; they must be zero in one without): an optimizer
	// update or a parameter op is all fixed, a matmul's weight read and a
	// weight gradient's write are fixed parts; the rest of each count is
	// proportional to the batch (activations, per-sample compute).
	// Zero: all of it scales. ParamBytes never scales. AtBatch reads
	// them; each is at most its total.
	FixedFLOPs        float64
	FixedBytesRead    int64
	FixedBytesWritten int64
	FixedTempBytes    int64

	// Steps is how many dependent steps the op runs one after another
	// inside itself (0: not known or not serial): a cuDNN RNN's time
	// steps times its layers, each step waiting on the one before, so
	// that however small its arithmetic the op takes at least Steps
	// steps' latency. Build derives it (serialSteps); it is not a field
	// of the graph file.
	Steps int

	// DepthwiseTaps is a depthwise convolution's kernel taps (kh x kw; 0:
	// not depthwise): a convolution op, forward or backward, whose weight
	// is [C, 1, kh, kw] with C > 1 (each channel its own filter). Build
	// derives it from the op's parameter input; not a field of the file.
	DepthwiseTaps int

	// GroupedFLOPs is a grouped convolution's forward FLOPs, 2 x its
	// forward output's elements x channels per group x kernel taps (0:
	// not grouped, or not known): a convolution op, forward or backward,
	// whose weight is [Cout, Cin/G, kh, kw] with 1 < Cin/G < Cin. The
	// roofline prices such a convolution by shape from measured ones
	// (roofline Hardware.Grouped), whatever FLOPs the graph counts for it
	// (torch's flop counter counted a grouped weight gradient as
	// ungrouped before torchexport's own formula). Build derives it; not
	// a field of the file.
	GroupedFLOPs float64

	// DenseConv is a dense convolution's forward shape (one group: its
	// weight [Cout, Cin, kh, kw] reads all Cin channels of its input), a
	// convolution op forward or backward; zero: not dense, or not known.
	// The roofline prices such a convolution by its nearest measured
	// shape (roofline Hardware.DenseConv). Build derives it; not a field
	// of the file.
	DenseConv ConvShape
}

// ConvShape is a convolution's forward shape: batch, input and output
// channels, kernel taps (kh x kw) and output pixels (H x W).
type ConvShape struct {
	Batch, Cin, Cout, Taps, Pixels int64
}

// FLOPs is the convolution's forward FLOPs (one group): 2 x batch x
// output pixels x output channels x input channels x taps.
func (c ConvShape) FLOPs() float64 {
	return 2 * float64(c.Batch) * float64(c.Pixels) * float64(c.Cout) * float64(c.Cin) * float64(c.Taps)
}

// NoBatch is the BatchDim of a tensor without a batch dimension (weights,
// weight gradients, optimizer state).
const NoBatch = -1

// MaxBatchDim is the largest batch dimension index a tensor may name.
const MaxBatchDim = 255

// Tensor is a value produced by one op and consumed by zero or more ops.
type Tensor struct {
	Name      string // optional
	Producer  int    // index of the producing op
	Consumers []int  // indices of consuming ops, without duplicates
	Bytes     int64  // size in bytes

	// BatchDim is the dimension of the tensor's shape that holds the
	// graph's batch (its size is proportional to the batch, so that its
	// bytes are), or NoBatch (-1). Only a graph with batch information
	// (Graph.Batch > 0) reads it: in one without, Build sets it to
	// NoBatch, so that a zero Tensor{} means nothing there.
	BatchDim int

	// HasTransferTime says that TransferTime is a measured time to move the
	// tensor between two devices; it replaces the link's bandwidth model.
	HasTransferTime bool
	TransferTime    float64
}

// Edge is a control dependency: To may start only after From has finished.
type Edge struct {
	From, To int
}
