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
	return "host dispatch per op class (the graph's profiled times where it has them)"
}

// HostModel is the host-side model of HostOn and Dispatch, the --host and
// --dispatch flags (nil: none): with dispatch above 0 every op takes it
// (the graph's profiled times ignored), else the graph's profiled
// dispatch times where it has some and roofline's defaults elsewhere.
// dispatch alone turns the model on.
func HostModel(on bool, dispatch time.Duration) *roofline.Host {
	if !on && dispatch <= 0 {
		return nil
	}
	h := &roofline.Host{}
	if dispatch > 0 {
		h.IgnoreProfile = true // the dispatch is for every op
		for c := range h.Dispatch {
			h.Dispatch[c] = dispatch.Seconds()
		}
	}
	return h
}
