package report

import "testing"

// TestReadableTicks: hand-checked tick sets; labels never repeat.
func TestReadableTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{-1.04, -0.96, []string{"-1.04", "-1.02", "-1.00", "-0.98", "-0.96"}},
		{0, 10, []string{"0", "2", "4", "6", "8", "10"}},
		{-1.3, -0.2, []string{"-1.2", "-1.0", "-0.8", "-0.6", "-0.4", "-0.2"}},
		{-10, -9.999, []string{"-10.0000", "-9.9998", "-9.9996", "-9.9994", "-9.9992", "-9.9990"}},
	} {
		ticks := ReadableTicks{}.Ticks(tc.lo, tc.hi)
		var got []string
		for _, k := range ticks {
			got = append(got, k.Label)
		}
		if len(got) != len(tc.want) {
			t.Errorf("[%g, %g]: %v, want %v", tc.lo, tc.hi, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("[%g, %g]: %v, want %v", tc.lo, tc.hi, got, tc.want)
				break
			}
		}
	}
}
