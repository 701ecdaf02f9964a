// The pending events, one per busy resource: a ring sorted by time.

package roofline

import "math/bits"

// event: resource r finishes at time t.
type event struct {
	t float64
	r int32
}

// evPush adds the event that resource res finishes at t. The events are
// few (one per busy resource, about 11 on the 80,000-op benchmark) and
// kept sorted in a ring, earliest first. A new event is inserted from the
// tail: about five moves. The comparison tests the times alone and only
// looks at the resources when they are equal, which is rare: one branch
// per step, the same that ends the loop. (A winner tree over the
// resources, tried, costs more: six levels for the 36 resources of 8
// cube-mesh GPUs, or two trees' paths of 3 and 5 levels, twice per
// event. So does an unordered array scanned for the earliest event.)
func (s *simState) evPush(res int32, t float64) {
	h := rawOf(s.ev)
	mask := len(s.ev) - 1
	i := (s.evHead + s.evN) & mask
	for k := s.evN; k > 0; k-- {
		j := (i - 1) & mask
		p := h.at(j)
		if t > p.t || t == p.t && res > p.r {
			break
		}
		*h.at(i) = *p
		i = j
	}
	*h.at(i) = event{t, res}
	s.evN++
}

// evNext is the time of the next event; there must be one.
func (s *simState) evNext() float64 { return s.ev[s.evHead].t }

// evPop removes and returns the resource of the next event.
func (s *simState) evPop() int32 {
	r := s.ev[s.evHead].r
	s.evHead = (s.evHead + 1) & (len(s.ev) - 1)
	s.evN--
	return r
}

// ringSize is the smallest power of two >= n.
func ringSize(n int) int {
	return 1 << bits.Len(uint(n-1))
}
