package evaluate

import (
	"context"
	"io"

	"github.com/placer/placer/decision"
)

// Result is the outcome of running one decision for one training step.
// Times are in seconds, sizes in bytes.
type Result struct {
	StepTime   float64   // makespan of the step
	DeviceBusy []float64 // per device: time spent running kernels
	PeakMemory []int64   // per device: peak bytes in use
	Capacity   []int64   // per device: memory capacity
	OOM        bool      // some device's peak exceeds its capacity

	// ColocationViolations counts ops placed away from their co-location
	// group; a decision with any is invalid.
	ColocationViolations int

	BytesMoved int64 // bytes sent between devices, collectives included
	Transfers  int   // number of tensor transfers (collectives not counted)
	// CollectiveBytes is the part of BytesMoved that collectives move
	// (data parallelism's all-reduce, ZeRO's and FSDP's reduce-scatters
	// and all-gathers), summed over the GPUs: the sum of Collective.
	// LinkBytes has the transfers, BytesMoved less CollectiveBytes.
	CollectiveBytes int64
	LinkBytes       []int64 // bytes sent from device s to device d, at s*devices+d
	// Collective is, per device, the bytes it sends in collectives, as
	// many as it receives in them (a ring's all-reduce, reduce-scatter and
	// all-gather send each GPU's share on and receive as much); nil
	// without collectives.
	Collective []int64

	Kernels int // kernels launched (ops after fusion)
}

// Valid reports whether the decision fits in memory and honours
// co-location.
func (r *Result) Valid() bool { return !r.OOM && r.ColocationViolations == 0 }

// Evaluator turns decisions into simulated or measured outcomes: the one
// seam between optimizers and what scores their decisions (the roofline
// model, real GPUs, a test's fake). Every evaluator accepts every decision
// that passes decision.Validate for its graph and cluster;
// invalid-but-well-formed decisions (out of memory, broken co-location)
// are reported in the Result, not as errors.
type Evaluator interface {
	// Evaluate scores one decision.
	Evaluate(ctx context.Context, d decision.Decision) (Result, error)
	// EvaluateBatch scores many decisions at once (in parallel where the
	// evaluator can; a GPU evaluator may run them one by one). out must
	// have len(ds) entries; out[i] receives the result of ds[i].
	EvaluateBatch(ctx context.Context, ds []decision.Decision, out []Result) error
	// Trace scores d once more and writes its timeline to w as Chrome
	// trace-event JSON (Perfetto), so that a trace always comes from the
	// evaluator that produced the result it shows.
	Trace(ctx context.Context, d decision.Decision, w io.Writer) (Result, error)
}

// Serial is EvaluateBatch for evaluators that score one decision at a
// time: it calls e.Evaluate for each of ds in order and stops at the
// first error.
func Serial(ctx context.Context, e Evaluator, ds []decision.Decision, out []Result) error {
	for i := range ds {
		r, err := e.Evaluate(ctx, ds[i])
		if err != nil {
			return err
		}
		out[i] = r
	}
	return nil
}

// Clone returns a deep copy of r (a Simulator's result is reused by its
// next run).
func (r *Result) Clone() Result {
	c := *r
	c.DeviceBusy = append([]float64(nil), r.DeviceBusy...)
	c.PeakMemory = append([]int64(nil), r.PeakMemory...)
	c.Capacity = append([]int64(nil), r.Capacity...)
	c.LinkBytes = append([]int64(nil), r.LinkBytes...)
	if r.Collective != nil {
		c.Collective = append([]int64(nil), r.Collective...)
	}
	return c
}

// MaxPeakFraction is the highest per-device peak memory as a fraction of
// that device's capacity.
func (r *Result) MaxPeakFraction() float64 {
	f := 0.0
	for i, p := range r.PeakMemory {
		if i < len(r.Capacity) && r.Capacity[i] > 0 {
			f = max(f, float64(p)/float64(r.Capacity[i]))
		}
	}
	return f
}

// CostModel is what methods read of a graph's cost on the problem's
// cluster: the estimates heuristics plan with and learned methods take as
// hints, whichever Evaluator scores their decisions. The roofline model
// (roofline.Model) implements it. Cost models and evaluators are separate
// seams: a search on real GPUs plans with the roofline model and is
// scored by measurements.
type CostModel interface {
	// Devices is the number of devices of the cluster.
	Devices() int
	// Capacity is the memory of one device, in bytes.
	Capacity() int64
	// IgnoresMemory reports whether decisions that exceed Capacity are
	// still valid (the out-of-memory check is off).
	IgnoresMemory() bool
	// OpTime is op i's unfused duration on one device, in seconds.
	OpTime(i int) float64
	// OpTimes is every op's OpTime (a fresh slice).
	OpTimes() []float64
	// Fusible reports whether op i may join a fused kernel as its
	// consumer or as its producer.
	Fusible(i int) (consumer, producer bool)
	// LowerBound is a step time no decision can beat (with or without
	// fusion).
	LowerBound(fusion bool) float64
	// TransferTime is how long a transfer of bytes from device s to
	// device d occupies its link channel.
	TransferTime(s, d int, bytes int64) float64
	// Channels is the number of link channels; Channel is the one a
	// transfer from s to d occupies (one transfer at a time each).
	Channels() int
	Channel(s, d int) int
}
