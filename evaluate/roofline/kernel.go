// Kernels, an op alone or a fused group: the sources queued at the start,
// a kernel's queue entry, cost and lazy set-up (initUnit), its start on a
// device, its end (finishOp, finishUnit) and the signals that make its
// successors ready.

package roofline

import "slices"

// queueSources queues the kernels without dependencies, in the order of
// their roots.
func (s *Simulator) queueSources() {
	ops := s.ops
	ready := s.order[:0]
	for _, v := range s.m.sources {
		u := ops[v].unit
		if ops[u].pending == notReady {
			s.initUnit(int(u))
		}
		if ops[u].pending == 0 {
			ops[u].pending = -1 // listed
			ready = append(ready, u)
		}
	}
	slices.Sort(ready) // in order unless fusion made a later source a root
	for _, u := range ready {
		ops[u].pending = 0
		s.push(ops[u].dev, s.readyEntry(u, 0))
	}
	s.order = ready
}

// readyEntry is the queue entry of kernel u, ready at time now.
func (s *Simulator) readyEntry(u int32, now float64) entry {
	prio, topo := int32(0), u
	if s.ops[u].next != u {
		us := &s.units[s.uslot[u]]
		prio, topo = us.prio, us.topo
	} else if s.prio != nil {
		prio = int32(s.prio[u])
	}
	return makeEntry(now, prio, topo, u)
}

// costOf is the duration of kernel u and the bytes it allocates when it
// starts. An op alone costs launch + max(compute, memory traffic / rate)
// (or its measured time, Model.aloneTime) and allocates its temps and
// outputs.
func (s *Simulator) costOf(u int) (dur float64, alloc int64) {
	if int(s.r.ops.at(u).next) != u {
		us := s.r.units.at(int(*s.r.uslot.at(u)))
		return us.dur, us.alloc
	}
	return s.costAlone(u)
}

// costAlone is costOf for an op that runs alone.
func (s *Simulator) costAlone(u int) (dur float64, alloc int64) {
	m := s.m
	mr := &m.r
	if *mr.flags.at(u)&hasTemp != 0 {
		alloc = *mr.temp.at(u)
	}
	for t, end := int(*mr.outStart.at(u)), int(*mr.outStart.at(u + 1)); t < end; t++ {
		alloc += m.memOf(t)
	}
	return m.aloneTime(u), alloc
}

// initUnit computes the state of fused kernel u: its dependencies,
// duration and memory, and which of its tensors reach device memory.
//
// It also writes the kernel's plan, so that finishUnit need not walk the
// members' edges a second time (and sort out again which are internal):
//
//	planIn[pin]:  the number k of external inputs, then k entries: the
//	              tensor t, or ^t for a copy received from another device
//	planOut[pout]: the length of what follows, a sequence of
//	              v, t, mask lo, mask hi, j, then j kernels:
//	                  member v's output t is stored; it goes to the
//	                  devices of mask and wakes the j kernels listed
//	                  (in consumer order) on this device
//	              v, -1: member v signals its control successors
//
// in member order, which is the order finishUnit used to act in.
//
// A fused kernel has one launch, the summed compute time of its ops, and
// only their external memory traffic: a tensor whose consumers are all in
// its producer's group never reaches device memory (neither its write nor
// its reads count), and a read of a tensor from inside the group does not
// count.
func (s *Simulator) initUnit(u int) {
	m := s.m
	mr, sr := &m.r, &s.r
	ops, tref, planIn, planOut := sr.ops, sr.tref, sr.planIn, sr.planOut
	inStart, in, outStart, consStart, cons, tBytes, flags := mr.inStart, mr.in, mr.outStart, mr.consStart, mr.cons, mr.tBytes, mr.flags
	u32 := int32(u)
	dv := ops.at(u).dev
	var us unitState
	us.pin, us.pout = s.nIn, s.nOut
	ki, ko := int(us.pin)+1, int(us.pout)+1 // past the counts
	pending := int32(0)
	comp, memT := 0.0, 0.0
	us.topo = u32
	prio := s.prio
	if prio != nil {
		us.prio = int32(prio[u])
	}
	v := u
	for {
		var internal int64 // bytes of v's traffic that stay on chip
		for k, end := int(*inStart.at(v)), int(*inStart.at(v + 1)); k < end; k++ {
			e := in.at(k)
			t := int(e.t)
			po := ops.at(int(e.p))
			ext := b2i(po.unit != u32)
			pending += ext
			b := *tBytes.at(t)
			if ext != 0 {
				b = 0
			}
			internal += b
			// Branch-free append: an internal input's entry is
			// overwritten by the next one.
			x := e.t
			if po.dev != dv {
				x = ^x
			}
			*planIn.at(ki) = x
			ki += int(ext)
		}
		fl := *flags.at(v)
		if fl&ctrlIn != 0 {
			for k, end := int(*mr.cinStart.at(v)), int(*mr.cinStart.at(v + 1)); k < end; k++ {
				if ops.at(int(*mr.cin.at(k))).unit != u32 {
					pending++
				}
			}
		}
		for t, tend := int(*outStart.at(v)), int(*outStart.at(v + 1)); t < tend; t++ {
			// The entry of t: v, t, the devices it goes to (a mask in two
			// halves), and the kernels it wakes on this device, counted
			// and listed. The list is written branch-free and dropped if
			// t stays on chip.
			cs, ce := int(*consStart.at(t)), int(*consStart.at(t + 1))
			ext := b2i(cs == ce)
			var mask uint64
			k := ko + 5
			for j := cs; j < ce; j++ {
				co := ops.at(int(*cons.at(j)))
				out := b2i(co.unit != u32)
				remote := b2i(co.dev != dv)
				ext |= out
				mask |= uint64(remote) << (uint(co.dev) & 63)
				*planOut.at(k) = co.unit
				k += int(out &^ remote)
			}
			if ext != 0 {
				*tref.at(t) = 0
				us.alloc += m.memOf(t)
				*planOut.at(ko) = int32(v)
				*planOut.at(ko + 1) = int32(t)
				*planOut.at(ko + 2) = int32(uint32(mask))
				*planOut.at(ko + 3) = int32(uint32(mask >> 32))
				*planOut.at(ko + 4) = int32(k - ko - 5)
				ko = k
			} else {
				*tref.at(t) = notMat
				internal += *tBytes.at(t)
			}
		}
		fc := mr.cost.at(v)
		comp += fc.compute
		if b := fc.bytes - internal; b > 0 {
			memT += float64(b) * m.classRate[fl>>classShift]
		}
		if fl&hasTemp != 0 {
			us.temp += *mr.temp.at(v)
		}
		if fl&ctrlOut != 0 {
			*planOut.at(ko) = int32(v)
			*planOut.at(ko + 1) = -1
			ko += 2
		}
		us.topo = min(us.topo, int32(v))
		if prio != nil {
			us.prio = max(us.prio, int32(prio[v]))
		}
		v = int(ops.at(v).next)
		if v == u {
			break
		}
	}
	*planIn.at(int(us.pin)) = int32(ki) - us.pin - 1
	*planOut.at(int(us.pout)) = int32(ko) - us.pout - 1
	s.nIn, s.nOut = int32(ki), int32(ko)
	us.alloc += us.temp
	us.dur = m.launch + max(comp, memT)
	ops.at(u).pending = pending
	slot := len(s.units)
	*sr.uslot.at(u) = int32(slot)
	s.units = s.units[:slot+1] // never grows past its capacity: a fused kernel has at least two ops
	*sr.units.at(slot) = us
}

// finishOp is finishUnit for an op that runs alone: no input or consumer
// is inside its kernel, and all its outputs are materialized.
func (s *Simulator) finishOp(v int, now float64, transferPrio []int) {
	mr := &s.m.r
	ops, tref := s.r.ops, s.r.tref
	m := s.m
	in, consStart, cons := mr.in, mr.consStart, mr.cons
	fl := *mr.flags.at(v)
	dv := ops.at(v).dev
	s.finished++
	var freed int64
	if fl&hasTemp != 0 {
		freed = *mr.temp.at(v)
	}
	for k, end := int(*mr.inStart.at(v)), int(*mr.inStart.at(v + 1)); k < end; k++ {
		e := in.at(k)
		if ops.at(int(e.p)).dev != dv {
			freed += s.releaseCopy(e.t, dv)
			continue
		}
		t := int(e.t)
		rt := tref.at(t)
		r := *rt - 1
		*rt = r
		b := m.memOf(t)
		if r != 0 {
			b = 0
		}
		freed += b
	}
	for t, tend := int(*mr.outStart.at(v)), int(*mr.outStart.at(v + 1)); t < tend; t++ {
		var mask uint64
		local := int32(0)
		for j, ce := int(*consStart.at(t)), int(*consStart.at(t + 1)); j < ce; j++ {
			co := ops.at(int(*cons.at(j)))
			if co.dev != dv {
				mask |= 1 << (uint(co.dev) & 63)
			} else {
				local++
				s.signal(int(co.unit), now)
			}
		}
		ref := local
		if mask != 0 {
			ref += s.send(int32(t), int32(v), dv, mask, now, transferPrio)
		}
		*tref.at(t) = ref
		if ref == 0 {
			freed += m.memOf(t)
		}
	}
	if fl&ctrlOut != 0 {
		s.signalControl(int32(v), int32(v), now)
	}
	s.mem[dv] -= freed
	s.record(dv, now)
}

// signalControl signals the control successors of op v outside unit u.
func (s *Simulator) signalControl(v, u int32, now float64) {
	m := s.m
	for _, c := range m.cout[m.coutStart[v]:m.coutStart[v+1]] {
		if cu := s.ops[c].unit; cu != u {
			s.signal(int(cu), now)
		}
	}
}

// finishUnit releases the external inputs of fused kernel u, sends or
// hands over its stored outputs, and wakes its successors, as listed by
// initUnit. (finishOp is the same for an op that runs alone.)
func (s *Simulator) finishUnit(u int, now float64, transferPrio []int) {
	m := s.m
	ops, tref, planIn, planOut := s.r.ops, s.r.tref, s.r.planIn, s.r.planOut
	dv := ops.at(u).dev
	s.finished++
	us := s.r.units.at(int(*s.r.uslot.at(u)))
	freed := us.temp
	pin, pout := int(us.pin), int(us.pout)
	for k, end := pin+1, pin+1+int(*planIn.at(pin)); k < end; k++ {
		x := *planIn.at(k)
		if x < 0 { // a copy received
			freed += s.releaseCopy(^x, dv)
			continue
		}
		t := int(x)
		rt := tref.at(t)
		r := *rt - 1
		*rt = r
		b := m.memOf(t)
		if r != 0 {
			b = 0
		}
		freed += b
	}
	for k, end := pout+1, pout+1+int(*planOut.at(pout)); k < end; {
		v, t := *planOut.at(k), *planOut.at(k + 1)
		if t < 0 {
			s.signalControl(v, int32(u), now)
			k += 2
			continue
		}
		mask := uint64(uint32(*planOut.at(k + 2))) | uint64(uint32(*planOut.at(k + 3)))<<32
		local := *planOut.at(k + 4)
		k += 5
		for lend := k + int(local); k < lend; k++ {
			s.signal(int(*planOut.at(k)), now)
		}
		ref := local
		if mask != 0 {
			ref += s.send(t, v, dv, mask, now, transferPrio)
		}
		*tref.at(int(t)) = ref
		if ref == 0 {
			freed += m.memOf(int(t))
		}
	}
	s.mem[dv] -= freed
	s.record(dv, now)
}

// signal satisfies one dependency of kernel u; the last one queues it.
func (s *Simulator) signal(u int, now float64) {
	if o := &s.ops[u]; o.pending > 1 { // (a raw view here would make signal too big to inline)
		o.pending--
		return
	}
	s.signalSlow(u, now)
}

// signalSlow is signal for a kernel not set up yet or becoming ready.
func (s *Simulator) signalSlow(u int, now float64) {
	if int32(u) >= s.pfNext {
		s.warm(int32(u))
	}
	o := s.r.ops.at(u)
	if o.pending == notReady {
		s.initUnit(u)
	}
	o.pending--
	if o.pending != 0 {
		return
	}
	e := s.readyEntry(int32(u), now)
	r := &s.rs[o.dev]
	if !r.fifo || int(r.n) == len(r.q) {
		s.push(o.dev, e)
		return
	}
	r.pushFIFO(e)
	s.listDirty(r, o.dev)
}

// startUnit starts kernel u on device dv: it allocates the kernel's
// memory and adds the event of its end. (loopSync's; loopAsync, the loop
// of every default evaluation, writes it out.)
func (s *Simulator) startUnit(dv int32, u int32, now float64) {
	dur, alloc := s.costOf(int(u))
	t := s.charge(dv, u, dur, alloc, now)
	s.evPush(dv, t)
	if s.rec != nil {
		s.recordKernel(dv, u, s.kernelStart(dv, now), t)
	}
}

// charge gives device dv kernel u from now on, lasting dur and
// allocating alloc bytes, and returns when the kernel ends. With a host
// model (Options.Host) the device's host thread dispatches u after the
// kernels before it, and u starts no earlier than that.
func (s *Simulator) charge(dv, u int32, dur float64, alloc int64, now float64) float64 {
	mem := s.mem[dv] + alloc
	s.mem[dv] = mem
	s.peak[dv] = max(s.peak[dv], mem)
	s.busy[dv] += dur
	s.rs[dv].running = u
	if s.hostT != nil {
		h := s.hostT[dv]
		if s.queue != nil {
			h = max(h, s.queueWait(dv, u))
		}
		if s.synced != nil && s.m.orig[u] >= s.m.syncFrom && !s.synced[dv] {
			// GradScaler's .item(): the host waits for what its GPU was
			// given before it dispatches the update (hostSyncFrom).
			s.synced[dv] = true
			h = max(h, now)
		}
		h += s.m.disp[u]
		if s.launched != nil {
			// The first kernel of a captured region on this device waits
			// for the region's graph launch; the rest were launched with it.
			if r := s.m.region[u]; r >= 0 && !s.launched[int(dv)*s.m.regions+int(r)] {
				s.launched[int(dv)*s.m.regions+int(r)] = true
				h += s.m.graphLaunch
			}
		}
		s.hostT[dv] = h
		now = max(now, h)
	}
	end := now + dur
	if s.queue != nil {
		s.launchQueue(dv, u, end)
	}
	return end
}

// launchQueue holds device dv's stream queue: kernel u, ending at end,
// takes its launches' places in it. Its dispatch (charge's host time)
// waited for none; a kernel whose launches find the queue full has its
// host wait, before its dispatch, until the kernel of the launch a
// queue's depth earlier has ended (MeasuredQueueDepth): queueWait.
func (s *Simulator) launchQueue(dv, u int32, end float64) {
	n := int64(s.m.slots[u])
	d := int64(s.m.queueDepth)
	base := int64(dv) * d
	for j := s.queued[dv]; j < s.queued[dv]+n; j++ {
		s.queue[base+j%d] = end
	}
	s.queued[dv] += n
}

// queueWait is when device dv's host may dispatch kernel u, whose
// launches go on the queue next: at once (0) while the queue has room,
// else when the kernel of the launch a queue's depth before u's last one
// ends.
func (s *Simulator) queueWait(dv, u int32) float64 {
	n := int64(s.m.slots[u])
	d := int64(s.m.queueDepth)
	last := s.queued[dv] + n - 1
	if n == 0 || last < d {
		return 0
	}
	return s.queue[int64(dv)*d+last%d]
}

// kernelStart is when the kernel that device dv took at now (charge)
// starts: now, or later when its host dispatched it later.
func (s *Simulator) kernelStart(dv int32, now float64) float64 {
	if s.hostT != nil {
		return max(now, s.hostT[dv])
	}
	return now
}

// recordKernel reports kernel u, run on device dv from start to end, and
// the memory it allocated, to the recorder.
func (s *Simulator) recordKernel(dv, u int32, start, end float64) {
	s.recordMemory(dv, start)
	s.members = s.members[:0]
	v := u
	for {
		s.members = append(s.members, s.m.orig[v])
		v = s.ops[v].next
		if v == u {
			break
		}
	}
	s.rec.Kernel(int(dv), s.members, start, end)
}
