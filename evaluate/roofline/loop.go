// The event loops: loopAsync, the default model's (transfers on the
// channels), and loopSync with dispatchSync, REGAL's synchronous
// transfers.

package roofline

import "fmt"

func (s *Simulator) loop(transferPrio []int) error {
	var now float64
	if s.m.Opts.SyncTransfers {
		now = s.loopSync(transferPrio)
	} else {
		now = s.loopAsync(transferPrio)
	}
	if s.finished != s.kernels {
		return fmt.Errorf("%w: %d of %d kernels ran", ErrDeadlock, s.finished, s.kernels)
	}
	s.res.StepTime = now
	return nil
}

// loopAsync is the event loop of the default model, transfers on the
// channels: it starts work on every idle resource that has some, then
// takes the next events, all those at the same time, and handles the end
// of what their resources ran; until nothing runs. It is the loop of
// every evaluation, so what happens once per event is written out here
// rather than called (about half of its instructions went to calls and
// to reloading the same fields in each). Starting work marks nothing
// dirty, so the dirty list is read from its end (the order in which
// dispatch takes it) and then emptied.
func (s *Simulator) loopAsync(transferPrio []int) float64 {
	m := s.m
	n, d := int32(m.n), int32(m.d)
	rs, ops, ev := rawOf(s.rs), s.r.ops, rawOf(s.ev)
	evMask := len(s.ev) - 1
	now := 0.0
	for {
		for k := len(s.dirty) - 1; k >= 0; k-- {
			res := s.dirty[k]
			r := rs.at(int(res))
			r.dirty = false
			if r.running >= 0 || r.n == 0 {
				continue
			}
			if res < d {
				var u int32
				if r.fifo {
					u = r.popFIFO()
				} else {
					u = r.popHeap()
				}
				// startUnit, written out, with costOf's test and
				// evPush: this runs once per kernel.
				var dur float64
				var alloc int64
				if ops.at(int(u)).next != u {
					us := s.r.units.at(int(*s.r.uslot.at(int(u))))
					dur, alloc = us.dur, us.alloc
				} else {
					dur, alloc = s.costAlone(int(u))
				}
				t := s.charge(res, u, dur, alloc, now)
				i := (s.evHead + s.evN) & evMask
				for k := s.evN; k > 0; k-- {
					j := (i - 1) & evMask
					p := ev.at(j)
					if t > p.t || t == p.t && res > p.r {
						break
					}
					*ev.at(i) = *p
					i = j
				}
				*ev.at(i) = event{t, res}
				s.evN++
				if s.rec != nil {
					s.recordKernel(res, u, s.kernelStart(res, now), t)
				}
			} else {
				s.startTransfer(res, r.pop()-n, now)
			}
		}
		s.dirty = s.dirty[:0]
		if s.evN == 0 {
			return now
		}
		now = ev.at(s.evHead).t
		for s.evN > 0 {
			e := ev.at(s.evHead)
			if e.t != now {
				break
			}
			res := e.r
			s.evHead = (s.evHead + 1) & evMask
			s.evN--
			r := rs.at(int(res))
			task := r.running
			r.running = -1
			s.listDirty(r, res)
			switch t := int(task); {
			case task >= n:
				s.arrive(task-n, now)
			case ops.at(t).next == task:
				s.finishOp(t, now, transferPrio)
			default:
				s.finishUnit(t, now, transferPrio)
			}
		}
	}
}

// loopSync is the event loop with REGAL's synchronous transfers: loop
// with dispatchSync, which pairs each transfer's sender and receiver.
func (s *Simulator) loopSync(transferPrio []int) float64 {
	now := 0.0
	for {
		s.dispatchSync(now)
		if s.evN == 0 {
			return now
		}
		now = s.evNext()
		for s.evN > 0 && s.evNext() == now {
			s.complete(s.evPop(), now, transferPrio)
		}
	}
}

// complete handles the end of whatever resource res was running (in
// synchronous mode; loopAsync does the same inline).
func (s *Simulator) complete(res int32, now float64, transferPrio []int) {
	m := s.m
	n := int32(m.n)
	task := s.rs[res].running
	s.rs[res].running = -1
	s.markDirty(res)
	if task >= n {
		x := task - n
		if m.Opts.SyncTransfers { // the receiver was blocked too
			r := s.xs[x].dst
			s.rs[r].running = -1
			s.markDirty(r)
		}
		s.arrive(x, now)
		return
	}
	if s.r.ops.at(int(task)).next == task {
		s.finishOp(int(task), now, transferPrio)
		return
	}
	s.finishUnit(int(task), now, transferPrio)
}

// dispatchSync is dispatch for synchronous transfers: a device whose next
// task is a transfer holds it until the receiver is idle; then both run it.
func (s *Simulator) dispatchSync(now float64) {
	m := s.m
	n := int32(m.n)
	s.clearDirty()
	for changed := true; changed; {
		changed = false
		for dv := int32(0); dv < int32(m.d); dv++ {
			if s.rs[dv].running >= 0 {
				continue
			}
			if s.hold[dv] < 0 {
				if s.rs[dv].n == 0 {
					continue
				}
				task := s.pop(dv)
				if task < n {
					s.startUnit(dv, task, now)
					changed = true
					continue
				}
				s.hold[dv] = task
			}
			x := s.hold[dv] - n
			r := s.xs[x].dst
			if s.rs[r].running >= 0 {
				continue
			}
			s.hold[dv] = -1
			s.startTransfer(dv, x, now)
			s.rs[r].running = s.rs[dv].running
			changed = true
		}
	}
	s.clearDirty()
}

func (s *Simulator) clearDirty() {
	s.dirty = s.dirty[:0]
	for k := range s.rs {
		s.rs[k].dirty = false
	}
}
