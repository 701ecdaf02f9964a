package jobs

import (
	"fmt"
	"time"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// eagerHost says whether graph g records that it was exported from an
// eager PyTorch run on a GPU: execution settings (torchexport --device,
// --optimizer-impl, --autocast, ...) neither for a CPU nor under CUDA
// graphs or torch.compile. Such a step is issued op by op by one Python
// thread (the dispatcher, autograd's bookkeeping and a kernel launch per
// op: roofline.MeasuredIssue), which the GPU alone leaves out; eval,
// search and baselines model that host for it unless --host=false. A
// graph without the record (placer's built-in workloads, msr-fiddle,
// ONNX, cost graphs) does not say how it runs and keeps the GPU alone.
func eagerHost(g *graph.Graph) bool {
	e := g.Execution()
	return e != nil && e.Device != "cpu" && e.Compile == "" && !e.CUDAGraphs
}

// HostByGraphNote is what a report adds to the host model's note where
// the graph's record turned it on (eagerHost).
const HostByGraphNote = "by default: the graph records an eager PyTorch run (its execution settings); --host=false for the GPU alone"

// setupHostNote is hostNote of p's host model (dispatch as hostNote's),
// with HostByGraphNote where the graph's record turned it on.
func setupHostNote(p *Setup, dispatch time.Duration) string {
	s := hostNote(p.opts.Host, dispatch)
	if p.hostByGraph {
		s += "; " + HostByGraphNote
	}
	return s
}

// hostNote is what a report's header says of the host model h (nil:
// none, ""), made from dispatch, the CPU time of every op's dispatch (0:
// the graph's profiled times, else per op class).
func hostNote(h *roofline.Host, dispatch time.Duration) string {
	switch {
	case h == nil:
		return ""
	case dispatch > 0:
		return fmt.Sprintf("host dispatch %v per op", dispatch)
	}
	return fmt.Sprintf("host issue %v per op (%v a backward one), %v per further launch (measured on a lent H100's host)",
		time.Duration(roofline.MeasuredIssue*1e9), time.Duration(roofline.MeasuredIssueBwd*1e9), time.Duration(roofline.MeasuredLaunch*1e12)/1000)
}

// HostModel is the host-side model of HostOn and Dispatch, the --host and
// --dispatch flags (nil: none): with dispatch above 0 every op takes it,
// else roofline.MeasuredIssue (roofline.MeasuredIssueBwd for a backward
// op), and roofline.MeasuredLaunch for each
// launch of an op beyond its first (roofline.Launches; the graph's
// profiled dispatch times are not used: torch.profiler's own cost of
// recording each op is in them).
// dispatch alone turns the model on.
func HostModel(on bool, dispatch time.Duration) *roofline.Host {
	if !on && dispatch <= 0 {
		return nil
	}
	h := &roofline.Host{IgnoreProfile: true}
	for ph := range h.Issue {
		h.Issue[ph] = roofline.EagerIssueOf(graph.Phase(ph))
	}
	h.Launch = roofline.MeasuredLaunch
	if dispatch > 0 {
		h.Issue, h.Launch = [3]float64{}, 0
		h.IgnoreProfile = true // the dispatch is for every op
		for c := range h.Dispatch {
			h.Dispatch[c] = dispatch.Seconds()
		}
	}
	return h
}
