// Result filling: per-device busy time, peak memory and capacity, the
// out-of-memory flag and co-location violations.

package roofline

func (s *Simulator) fillResult(device []int) {
	m := s.m
	d := m.d
	r := &s.res
	r.DeviceBusy = growF(r.DeviceBusy, d)
	r.PeakMemory = growI(r.PeakMemory, d)
	r.Capacity = growI(r.Capacity, d)
	r.OOM = false
	for k := 0; k < d; k++ {
		r.DeviceBusy[k] = s.busy[k]
		r.PeakMemory[k] = s.peak[k]
		r.Capacity[k] = m.Cluster.Hardware.Memory
		if !m.Opts.IgnoreMemory && s.peak[k] > r.Capacity[k] {
			r.OOM = true
		}
	}
	r.Kernels = s.kernels
	r.ColocationViolations = s.colocViolations(device)
}

func (s *Simulator) colocViolations(device []int) int {
	g := s.m.G
	k := g.NumColocationGroups()
	if k == 0 {
		return 0
	}
	if cap(s.bucket) < k {
		s.bucket = make([]int32, k)
	}
	first := s.bucket[:k]
	for i := range first {
		first[i] = -1
	}
	bad := 0
	for _, i := range s.m.colocOps {
		c, dv := g.Colocation(int(i)), int32(device[i])
		if first[c] < 0 {
			first[c] = dv
		} else if first[c] != dv {
			bad++
		}
	}
	return bad
}

func growF(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func growI(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}
