package opcheck

import "github.com/placer/placer/graph"

// Casts is what torch.autocast adds to a step as kernels of its own: the
// casts between float32 and autocast's dtype that the graph records
// (torchexport --autocast records each as the ATen _to_copy that autocast
// issues: an FP32 input of an op on the low-precision list cast down each
// call, an FP32 weight once per forward from autocast's cache, a
// low-precision input of an op on the float32 list cast up; autograd's
// ToCopyBackward0 casts each one's gradient back in the backward;
// torch 2.14.1 aten/src/ATen/autocast_mode.h, cached_cast), their bytes,
// their GPU time and their host's issue as Check costs every kernel.
//
// What autocast adds to the host beyond these casts' own issue is not
// counted: its wrapper (the Autocast dispatch key's guard and
// cached_cast's checks) took 0.13 us a call on this project's CPU, a
// cached weight 0.19 us (tools/dev/torchexport/dispatch.py --autocast, median
// of three runs), against 14 us to issue an op on the lent H100's host
// (roofline.MeasuredIssue). A cast issued by autocast from C++ took 1.69
// us there against 2.46 us for the same cast called from Python: each
// cast is issued here at MeasuredIssue, a Python op's, until
// kernelbench's issue.conv2d_autograd_autocast is measured on a GPU.
type Casts struct {
	DType    string `json:"dtype"`
	Forward  int    `json:"forward"`
	Backward int    `json:"backward"`
	// Bytes the casts read and write in all.
	Bytes int64 `json:"bytes"`
	// GPU is the casts' kernel time and Share its part of the step's GPU
	// time; Issue the host's time to issue them.
	GPU   float64 `json:"gpu_s"`
	Share float64 `json:"share"`
	Issue float64 `json:"host_issue_s"`
}

// IsAutocastCast says whether op i of g is one of autocast's casts: g
// runs under autocast (its execution settings) and op i is a _to_copy
// between float32 and autocast's dtype, either way.
func IsAutocastCast(g *graph.Graph, i int) bool {
	e := g.Execution()
	if e == nil {
		return false
	}
	low, on := e.AutocastDType()
	op := g.Op(i)
	if !on || op.Type != "_to_copy" || (op.DType != low && op.DType != graph.F32) {
		return false
	}
	for _, p := range g.Preds(i) {
		in := g.Op(int(p)).DType
		if in != op.DType && (in == low || in == graph.F32) {
			return true
		}
	}
	return false
}

// castsOf sums g's autocast casts (IsAutocastCast) at their GPU times and
// host issue (by op), the step's GPU time being total; nil where g does
// not run under autocast.
func castsOf(g *graph.Graph, times, issue []float64, total float64) *Casts {
	e := g.Execution()
	if e == nil {
		return nil
	}
	low, on := e.AutocastDType()
	if !on {
		return nil
	}
	c := &Casts{DType: low.String()}
	for i := range g.NumOps() {
		if !IsAutocastCast(g, i) {
			continue
		}
		op := g.Op(i)
		if op.Backward {
			c.Backward++
		} else {
			c.Forward++
		}
		c.Bytes += op.BytesRead + op.BytesWritten
		c.GPU += times[i]
		c.Issue += issue[i]
	}
	if total > 0 {
		c.Share = c.GPU / total
	}
	return c
}
