package gdp

import "math/rand/v2"

// The head trains each round on replayBatch examples drawn from the most
// recent replayCap.
const (
	replayCap   = 1024
	replayBatch = 64
)

// replayBuffer is go-scored's replay of recent examples: the rows of the
// moves evaluated and their targets, in a ring of replayCap, and the
// training pass a minibatch of them runs in.
type replayBuffer struct {
	x     []float32
	y     []float32
	n     int // examples held, at most replayCap
	at    int // examples added so far
	train headPass
	// positives is the examples that paid, seen so far.
	positives int
}

// init makes room for replayCap examples.
func (r *replayBuffer) init() {
	r.x = make([]float32, replayCap*MoveFeatures)
	r.y = make([]float32, replayCap)
}

// add keeps an example: row x, target y (paid: the move paid).
func (r *replayBuffer) add(x []float32, y float32, paid bool) {
	at := r.at % replayCap
	copy(r.x[at*MoveFeatures:(at+1)*MoveFeatures], x)
	r.y[at] = y
	if paid {
		r.positives++
	}
	r.at++
	r.n = min(r.n+1, replayCap)
}

// batch draws a minibatch of up to replayBatch examples, the newest 8
// first, then random older ones (rng), into the training pass: its rows
// and their targets.
func (r *replayBuffer) batch(rng *rand.Rand) (*headPass, []float32) {
	n := min(replayBatch, r.n)
	r.train.resize(n)
	y := make([]float32, n)
	for j := 0; j < n; j++ {
		// The newest examples first, then random older ones.
		var i int
		if j < 8 {
			i = (r.at - 1 - j) % replayCap
			if i < 0 {
				i += replayCap
			}
		} else {
			i = rng.IntN(r.n)
		}
		copy(r.train.x[j*MoveFeatures:(j+1)*MoveFeatures], r.x[i*MoveFeatures:(i+1)*MoveFeatures])
		y[j] = r.y[i]
	}
	return &r.train, y
}
