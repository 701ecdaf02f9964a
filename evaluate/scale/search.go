package scale

import (
	"context"
	"sort"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
)

// Space bounds what Search enumerates; its zero value is the whole space.
type Space struct {
	// MaxMBS is the largest micro-batch size tried (0 = 8).
	MaxMBS int
	// MaxVirtual is the most model chunks per device tried (0 = 8).
	MaxVirtual int
	// Keep, when not nil, keeps only the plans it returns true for (a
	// published configuration's stated degrees, with its unstated knobs
	// searched).
	Keep func(Plan) bool
	// Top is how many of the fastest fitting plans to keep besides the
	// best (Searched.Top; 0 = none).
	Top int
}

// Searched is what Search found: the fastest plan that fits, how many
// plans it evaluated and how many of them fit.
type Searched struct {
	Best      Result
	Found     bool
	Evaluated int
	Fitting   int
	// Top are the fastest fitting plans, fastest first, Space.Top of them
	// at most (the best among them).
	Top []Result
}

// Search evaluates every plan of model m on pod p: tensor-parallel degree
// T dividing the heads and a node; pipeline stages P and virtual stages V
// whose product divides the layers; the micro-batch size; sequence
// parallelism (with T > 1); recomputation (none, selective, full); the
// distributed optimizer (with D > 1). It returns the fastest plan that
// fits the GPU's memory (ties: fewer GPUs per model replica, then the
// order of enumeration). The space is small enough (thousands of plans for
// the largest models) to be searched exhaustively: no plan of it is
// better than the one returned.
func Search(ctx context.Context, m transformer.Spec, p Pod, sp Space) (Searched, error) {
	if err := m.Check(); err != nil {
		return Searched{}, err
	}
	maxMBS, maxV := sp.MaxMBS, sp.MaxVirtual
	if maxMBS <= 0 {
		maxMBS = 8
	}
	if maxV <= 0 {
		maxV = 8
	}
	n := p.GPUs()
	var out Searched
	better := func(r Result) bool {
		if !out.Found {
			return true
		}
		if r.Step != out.Best.Step {
			return r.Step < out.Best.Step
		}
		return r.Plan.T*r.Plan.P < out.Best.Plan.T*out.Best.Plan.P
	}
	for _, T := range divisors(p.PerNode) {
		if m.Heads%T != 0 || m.KVHeads%T != 0 {
			continue
		}
		for _, P := range divisors(m.Layers) {
			if n%(T*P) != 0 {
				continue
			}
			if err := ctx.Err(); err != nil {
				return out, err
			}
			D := n / (T * P)
			for mbs := 1; mbs <= maxMBS; mbs *= 2 {
				if m.Batch%(D*mbs) != 0 {
					continue
				}
				M := m.Batch / (D * mbs)
				for _, V := range divisors(m.Layers / P) {
					if V > maxV || (V > 1 && (P == 1 || M%P != 0)) {
						continue
					}
					for _, tpc := range []int{0, 1, 2} { // no sequence parallelism; it, its communication overlapped
						seq, overlap := tpc > 0, tpc == 2
						if seq && T == 1 {
							continue
						}
						for _, rc := range []decision.Recompute{decision.NoRecompute, decision.SelectiveRecompute, decision.FullRecompute} {
							for _, dist := range []bool{false, true} {
								if dist && D == 1 {
									continue
								}
								// Overlapping the tensor-parallel communication takes SMs
								// from the GEMMs beside it (Kernels.OverlapSMs): it is
								// searched, not assumed.
								s := decision.Strategy{Tensor: T, Pipeline: P, Replicas: D, MicroBatchSize: mbs,
									Virtual: V, SequenceParallel: seq, TPOverlap: overlap, Recompute: rc}
								if V == 1 {
									s.Virtual = 0
								}
								if dist {
									s.Shard = decision.OptimizerShard
								}
								pl, err := Resolve(m, s, p)
								if err != nil || (sp.Keep != nil && !sp.Keep(pl)) {
									continue
								}
								r := evaluate(m, pl, p)
								out.Evaluated++
								if !r.Fits {
									continue
								}
								out.Fitting++
								if better(r) {
									out.Best, out.Found = r, true
								}
								if sp.Top > 0 {
									out.Top = keepTop(out.Top, r, sp.Top)
								}
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}

// keepTop inserts r into top, kept sorted by step time (stable: earlier
// plans first among equals) and at most k long.
func keepTop(top []Result, r Result, k int) []Result {
	i := sort.Search(len(top), func(i int) bool { return top[i].Step > r.Step })
	if i >= k {
		return top
	}
	top = append(top, Result{})
	copy(top[i+1:], top[i:])
	top[i] = r
	if len(top) > k {
		top = top[:k]
	}
	return top
}

// divisors are n's divisors, ascending.
func divisors(n int) []int {
	var d []int
	for i := 1; i*i <= n; i++ {
		if n%i == 0 {
			d = append(d, i)
			if i*i != n {
				d = append(d, n/i)
			}
		}
	}
	sort.Ints(d)
	return d
}
