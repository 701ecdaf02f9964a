package gdp

import (
	"math"
	"time"

	"github.com/placer/placer/evaluate"
)

// scoredCurve is go-scored's learning curve: the evaluations, the best
// step so far, and the points, each the mean of 16 rounds.
type scoredCurve struct {
	start time.Time
	evals int
	best  float64
	curve []Point
	// The point's sums over its rounds so far.
	sum Point
	n   int
	// This point's picks by kind (uniform, head) and those that improved.
	picks, hits [2]int
}

// observe adds a round: its results, their gains, how many of them were
// picked uniformly (the first explored), and the move it took (-1: none).
// (The round's evaluations are the caller's to count.)
func (c *scoredCurve) observe(res []evaluate.Result, gains []float64, explored, taken int) {
	for i := range res {
		c.sum.MeanReward += gains[i] / float64(len(res))
		c.sum.BestReward = math.Max(c.sum.BestReward, gains[i])
		if res[i].Valid() {
			c.sum.Valid += 1 / float64(len(res))
		}
	}
	if taken >= 0 && res[taken].Valid() {
		c.best = math.Min(c.best, res[taken].StepTime)
	}
	for i := range res {
		kind := 1 // the head's
		if i < explored {
			kind = 0
		}
		c.picks[kind]++
		if gains[i] > 0 {
			c.hits[kind]++
		}
	}
	c.n++
}

// point ends the point at round round: it appends it to the curve and
// returns it.
func (c *scoredCurve) point(round int) Point {
	pt := Point{Step: round, Elapsed: time.Since(c.start).Seconds(), Evaluations: c.evals, BestStep: c.best,
		MeanReward: c.sum.MeanReward / float64(c.n), BestReward: c.sum.BestReward, Valid: c.sum.Valid / float64(c.n)}
	if c.picks[0] > 0 {
		pt.ExploreHit = float64(c.hits[0]) / float64(c.picks[0])
	}
	if c.picks[1] > 0 {
		pt.HeadHit = float64(c.hits[1]) / float64(c.picks[1])
	}
	c.picks, c.hits = [2]int{}, [2]int{}
	c.curve = append(c.curve, pt)
	c.sum, c.n = Point{}, 0
	return pt
}
