package hw

// The per-kernel launch time fitted with the efficiencies (calibrate
// --from-profile): a framework's measured op times hold a fixed cost per
// op that the efficiencies cannot explain.

import (
	"fmt"
	"math"
	"slices"

	"github.com/placer/placer/evaluate/roofline"
)

// launchGrid is how many launch times, spaced evenly in log between a
// thousandth of the shortest measured time and the longest,
// FitEfficienciesLaunch tries before refining around the best.
const launchGrid = 40

// FitEfficienciesLaunch is FitEfficiencies with h's per-kernel launch
// time (Hardware.Launch) fitted too: for each launch time tried, the
// per-class efficiencies are fitted at it (FitEfficiencies), and the
// launch time whose fit predicts ts with the smallest RMS log error
// (RMSLogError, the error calibrate reports) wins. The times tried are 0,
// h's own, launchGrid times evenly in log from a thousandth of the
// shortest measured time to the longest, then a golden-section search
// in log between the best grid time's neighbours. h's own launch time is
// among them, so the error is never above FitEfficiencies' at h's launch.
// It returns the fitted hardware and one ClassFit per class, as
// FitEfficiencies does.
func FitEfficienciesLaunch(h roofline.Hardware, ts []KernelTiming) (roofline.Hardware, []ClassFit, error) {
	type trial struct {
		launch, err float64
		h           roofline.Hardware
		fits        []ClassFit
	}
	var failed error
	at := func(l float64) trial {
		hh := h
		hh.Launch = l
		fh, fits, err := FitEfficiencies(hh, ts)
		if err != nil {
			failed = err
			return trial{launch: l, err: math.Inf(1)}
		}
		return trial{launch: l, err: RMSLogError(&fh, ts), h: fh, fits: fits}
	}
	lo, hi := math.Inf(1), 0.0
	for _, t := range ts {
		if t.Seconds > 0 && !math.IsInf(t.Seconds, 0) {
			lo, hi = min(lo, t.Seconds), max(hi, t.Seconds)
		}
	}
	if hi == 0 {
		return FitEfficiencies(h, ts)
	}
	lo, hi = lo*1e-3, min(hi, roofline.MaxLatency)
	grid := []float64{0, h.Launch}
	for i := range launchGrid + 1 {
		grid = append(grid, math.Exp(math.Log(lo)+float64(i)*(math.Log(hi)-math.Log(lo))/launchGrid))
	}
	slices.Sort(grid)
	grid = slices.Compact(grid)
	trials := make([]trial, len(grid))
	best := 0
	for i, l := range grid {
		trials[i] = at(l)
		if trials[i].err < trials[best].err {
			best = i
		}
	}
	if math.IsInf(trials[best].err, 1) {
		return h, nil, fmt.Errorf("hw: fit: %w", failed)
	}
	// Refine in log between the best grid time's neighbours (above 0).
	a, b := grid[max(best-1, 0)], grid[min(best+1, len(grid)-1)]
	if a <= 0 {
		a = min(lo, b) * 1e-3
	}
	if b > a {
		_, _, tc, td := goldenLog(math.Log(a), math.Log(b), 30, at, func(t trial) float64 { return t.err })
		for _, t := range []trial{tc, td} {
			if t.err < trials[best].err {
				trials = append(trials, t)
				best = len(trials) - 1
			}
		}
	}
	return trials[best].h, trials[best].fits, nil
}

// seconds writes a short duration for a note: "2.00 us", "1.234 ms".
func seconds(s float64) string {
	switch {
	case s >= 1e-3:
		return fmt.Sprintf("%.3f ms", s*1e3)
	case s >= 1e-6:
		return fmt.Sprintf("%.2f us", s*1e6)
	}
	return fmt.Sprintf("%.1f ns", s*1e9)
}
