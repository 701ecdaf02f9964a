package gdp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/nn"
)

// MoveFeatures is the number of features go-scored's head reads per
// candidate move (see moveFeatures).
const MoveFeatures = policyFeatures + 6 + 2 + 5 + 4 + 1 + 5

// moveHidden is the width of the head's hidden layer.
const moveHidden = 32

// MoveHead is go-scored's move-scoring head: a two-layer perceptron that
// reads a candidate move's features (the GO network's outputs for the
// unit it changes, the move, the devices' loads, the bytes it would stop
// or start sending, what earlier moves of the unit gave) and predicts the
// move's gain, in units of the run's typical gain. A new head's output
// layer is zero, so every move scores alike and picking is uniform: a new
// head that never learns is plain anchored local search.
type MoveHead struct {
	L1, L2 *nn.Linear[float32]
	// Moments of the features, for standardizing: a head carries them
	// from the graphs it was trained on (Updates > 0 means trained).
	Updates int
}

// NewMoveHead returns a new head: the hidden layer Glorot-initialized from
// seed, the output layer zero.
func NewMoveHead(seed uint64) *MoveHead {
	r := rand.New(rand.NewPCG(seed, 0x5c0ed))
	h := &MoveHead{L1: nn.NewLinear[float32]("move.l1", MoveFeatures, moveHidden, true, r), L2: nn.NewLinear[float32]("move.l2", moveHidden, 1, true, r)}
	h.L2.W.Fill(0)
	return h
}

// Params lists the head's parameters.
func (h *MoveHead) Params() nn.Params[float32] { return append(h.L1.Params(), h.L2.Params()...) }

// Clone returns a deep copy of the head.
func (h *MoveHead) Clone() *MoveHead {
	c := NewMoveHead(0)
	_ = nn.CopyValues(c.Params(), h.Params())
	c.Updates = h.Updates
	return c
}

// headPass holds one forward pass's activations for rows moves.
type headPass struct {
	rows int
	x    []float32 // rows x MoveFeatures
	hid  []float32 // rows x moveHidden (after ReLU)
	out  []float32 // rows
}

func (p *headPass) resize(rows int) {
	p.rows = rows
	p.x = grow(p.x, rows*MoveFeatures)
	p.hid = grow(p.hid, rows*moveHidden)
	p.out = grow(p.out, rows)
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// forward scores p.x's rows into p.out.
func (h *MoveHead) forward(p *headPass) {
	h.L1.Forward(p.x, p.rows, h.L1.W.W, p.hid, false)
	nn.ReLU(p.hid)
	h.L2.Forward(p.hid, p.rows, h.L2.W.W, p.out, false)
}

// backward adds the gradient of the loss whose derivative by p.out is
// dout to the head's parameters.
func (h *MoveHead) backward(ar *nn.Arena[float32], p *headPass, dout []float32) {
	dhid := ar.Alloc(p.rows * moveHidden)
	h.L2.Backward(ar, p.hid, p.rows, nil, h.L2.W.W, dout, dhid, nil)
	nn.ReLUBackward(dhid, p.hid)
	h.L1.Backward(ar, p.x, p.rows, nil, h.L1.W.W, dhid, nil, nil)
}

// loss is the mean squared error of p.out against y, and its derivative
// by p.out in dout.
func headLoss(p *headPass, y, dout []float32) float64 {
	l := 0.0
	n := float64(p.rows)
	for i := 0; i < p.rows; i++ {
		d := float64(p.out[i] - y[i])
		l += d * d / n
		dout[i] = float32(2 * d / n)
	}
	return l
}

// moveHeadFile is a head on disk.
type moveHeadFile struct {
	Format   string      `json:"format"`
	Version  int         `json:"version"`
	Features int         `json:"features"`
	Hidden   int         `json:"hidden"`
	Updates  int         `json:"updates"`
	Weights  [][]float32 `json:"weights"` // L1.W, L1.B, L2.W, L2.B
}

// MoveHeadFormat names the head's file format.
const MoveHeadFormat = "placer-move-head"

// Save writes the head to path atomically (a temporary file renamed).
func (h *MoveHead) Save(path string) error {
	f := moveHeadFile{Format: MoveHeadFormat, Version: 1, Features: MoveFeatures, Hidden: moveHidden, Updates: h.Updates}
	for _, p := range h.Params() {
		f.Weights = append(f.Weights, p.W)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, b)
}

// DecodeMoveHead reads a head saved by Save; a malformed one is an error
// naming what is wrong.
func DecodeMoveHead(b []byte) (*MoveHead, error) {
	var f moveHeadFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("move head: %w", err)
	}
	if f.Format != MoveHeadFormat || f.Version != 1 {
		return nil, fmt.Errorf("move head: format %q version %d, want %q version 1", f.Format, f.Version, MoveHeadFormat)
	}
	if f.Features != MoveFeatures || f.Hidden != moveHidden {
		return nil, fmt.Errorf("move head: %d features, hidden %d; this build reads %d and %d", f.Features, f.Hidden, MoveFeatures, moveHidden)
	}
	h := NewMoveHead(0)
	ps := h.Params()
	if len(f.Weights) != len(ps) {
		return nil, fmt.Errorf("move head: %d weight matrices, want %d", len(f.Weights), len(ps))
	}
	for i, p := range ps {
		if len(f.Weights[i]) != len(p.W) {
			return nil, fmt.Errorf("move head: %s has %d weights, want %d", p.Name, len(f.Weights[i]), len(p.W))
		}
		for _, w := range f.Weights[i] {
			if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
				return nil, errors.New("move head: " + p.Name + " has a weight that is not finite")
			}
		}
		copy(p.W, f.Weights[i])
	}
	h.Updates = f.Updates
	return h, nil
}

// LoadMoveHead reads a head from path.
func LoadMoveHead(path string) (*MoveHead, error) {
	b, err := bounded.ReadFile(path, bounded.Model, "a move head file")
	if err != nil {
		return nil, err
	}
	h, err := DecodeMoveHead(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}
