package jobs

import (
	"fmt"
	"time"

	"github.com/placer/placer/evaluate/roofline"
)

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
	return fmt.Sprintf("host issue %v per op, %v per further launch (measured on a lent H100's host)", time.Duration(roofline.MeasuredIssue*1e9), time.Duration(roofline.MeasuredLaunch*1e12)/1000)
}

// HostModel is the host-side model of HostOn and Dispatch, the --host and
// --dispatch flags (nil: none): with dispatch above 0 every op takes it,
// else roofline.MeasuredIssue, and roofline.MeasuredLaunch for each
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
		h.Issue[ph] = roofline.MeasuredIssue
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
