// Transfers: a tensor sent to the devices of its remote consumers, queued
// on a channel (or the sender), started, and landed; a received copy held
// until its last consumer there is done.

package roofline

import "math/bits"

// xfer is one transfer of a tensor to another device.
type xfer struct {
	t, src, dst int32
	ref         int32 // consumers on dst that have not finished
}

// releaseCopy releases a consumer's hold on the copy of tensor t received
// on device dv and returns the bytes freed.
func (s *Simulator) releaseCopy(t, dv int32) int64 {
	x := s.findXfer(t, dv)
	s.xs[x].ref--
	if s.xs[x].ref == 0 {
		return s.m.tBytes[t]
	}
	return 0
}

// send queues the transfers of tensor t, made by op prod on device src,
// to the devices of mask, and returns their number.
func (s *Simulator) send(t, prod, src int32, mask uint64, now float64, transferPrio []int) int32 {
	s.xbase[t] = int32(len(s.xs))
	n := int32(bits.OnesCount64(mask))
	for mask != 0 {
		dst := int32(bits.TrailingZeros64(mask))
		mask &= mask - 1
		s.newTransfer(t, prod, src, dst, now, transferPrio)
	}
	return n
}

// findXfer finds the transfer of tensor t to device dst.
func (s *Simulator) findXfer(t int32, dst int32) int32 {
	x := s.xbase[t]
	for s.xs[x].dst != dst {
		x++
	}
	return x
}

// newTransfer queues the transfer of tensor t, made by op prod, from src to dst.
func (s *Simulator) newTransfer(t, prod, src, dst int32, now float64, transferPrio []int) {
	m := s.m
	x := int32(len(s.xs))
	s.xs = append(s.xs, xfer{t: t, src: src, dst: dst})
	prio := int32(0)
	if transferPrio != nil {
		prio = int32(transferPrio[int(m.tOrig[t])*m.d+int(dst)])
	}
	e := makeEntry(now, prio, prod, int32(m.n)+x)
	if m.Opts.SyncTransfers {
		s.push(src, e)
	} else {
		s.push(int32(m.d)+m.Cluster.Channel[int(src)*m.d+int(dst)], e)
	}
}

// arrive: transfer x has landed on its destination.
func (s *Simulator) arrive(x int32, now float64) {
	m := s.m
	xf := s.xs[x]
	t := xf.t
	s.tref[t]--
	if s.tref[t] == 0 {
		s.mem[xf.src] -= m.memOf(int(t))
	}
	ref := int32(0)
	for _, c := range m.consumers(t) {
		if o := s.ops[c]; o.dev == xf.dst {
			ref++
			s.signal(int(o.unit), now)
		}
	}
	s.xs[x].ref = ref
	s.record(xf.src, now)
}

// startTransfer starts transfer x on resource res (a channel, or in
// synchronous mode the sending device).
func (s *Simulator) startTransfer(res int32, x int32, now float64) {
	m := s.m
	xf := s.xs[x]
	t, src, dst := xf.t, xf.src, xf.dst
	bytes := m.tBytes[t]
	dur := -1.0
	if m.anyXfer {
		dur = m.tXfer[t]
	}
	if dur < 0 {
		dur = m.Cluster.TransferTime(int(src), int(dst), bytes)
	}
	s.alloc(dst, bytes)
	s.record(dst, now)
	s.rs[res].running = int32(m.n) + x
	s.evPush(res, now+dur)
	s.res.BytesMoved += bytes
	s.res.Transfers++
	s.res.LinkBytes[int(src)*m.d+int(dst)] += bytes
	if s.rec != nil {
		ch := int(m.Cluster.Channel[int(src)*m.d+int(dst)])
		s.rec.Transfer(ch, int(src), int(dst), int(m.tOrig[t]), bytes, now, now+dur)
	}
}
