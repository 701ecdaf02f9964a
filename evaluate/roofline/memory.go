// Device memory: allocation, the peak, and reports to the Recorder.

package roofline

func (s *simState) alloc(dev int32, bytes int64) {
	m := s.mem[dev] + bytes
	s.mem[dev] = m
	s.peak[dev] = max(s.peak[dev], m)
}

// record reports device dev's memory to the recorder when it changed.
func (s *simState) record(dev int32, now float64) {
	if s.rec != nil {
		s.recordMemory(dev, now)
	}
}

func (s *simState) recordMemory(dev int32, now float64) {
	if s.mem[dev] != s.lastRec[dev] {
		s.lastRec[dev] = s.mem[dev]
		s.rec.Memory(int(dev), now, s.mem[dev])
	}
}
