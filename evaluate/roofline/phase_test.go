package roofline

import (
	"fmt"
	"github.com/placer/placer/decision"
	"testing"
)

// BenchmarkSimulateSizes runs the headline benchmark's kind of graph at
// several sizes: the cost per op jumps between 4,000 ops (a run's data
// fits the core's L2) and 8,000 (it does not), then creeps up with the
// devices' drift apart.
func BenchmarkSimulateSizes(b *testing.B) {
	for _, n := range []int{4000, 8000, 20000, 80000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m, d := benchSetupSized(b, n, 4)
			s := NewSimulator(m, nil)
			s.Run(d)
			cpuLoop(b, func() { s.Run(d) })
		})
	}
}

func BenchmarkFloor(b *testing.B) {
	g := layeredDAGSpan(80000, 200, 4, 42, false)
	h, _ := Preset("v100")
	for _, devs := range []int{1, 8} {
		c, _ := NewCluster(h, devs, "")
		m, _ := NewModel(g, c, Options{})
		d := decision.Decision{Device: make([]int, g.NumOps())}
		for i := range d.Device {
			d.Device[i] = (i % 200) / 25 % devs
		}
		s := NewSimulator(m, nil)
		s.Run(d)
		b.Run(fmt.Sprint(devs), func(b *testing.B) { cpuLoop(b, func() { s.Run(d) }) })
	}
}

// BenchmarkPlaceAndFuse times the first phase of a run alone (placing
// the ops and forming the fused kernels, as Run does before its event
// loop) on the headline benchmark's graph at 4,000 and 80,000 ops, per
// graph op, so that the event loop's share is the rest of
// BenchmarkSimulateSizes.
func BenchmarkPlaceAndFuse(b *testing.B) {
	for _, n := range []int{4000, 80000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m, d := benchSetupSized(b, n, 4)
			s := NewSimulator(m, nil)
			if _, err := s.Run(d); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				s.reset(true, true)
				s.fusion = d.Fusion
				if !s.placeAndFuse(d.Device) {
					b.Fatal("a device that does not exist")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/graph-op")
		})
	}
}
