package gdp

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/placer/placer/internal/claim"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// Pre-training the GO policy in synchronous rounds (Pretrain.Rounds):
// round r's Workers steps (r*Workers ... r*Workers+Workers-1, each its
// graph and randomness as in one process) all start from round r's state,
// the policy's parameters and Adam's moments and step count; each step
// is claimed and kept as a file, as Rounds does for the move head; the
// next round's state is their mean, parameter by parameter and moment by
// moment in step order (in float64, rounded once to float32), with the
// largest of their Adam step counts; a round that holds the last
// imitation step hands PPO a fresh Adam, as one process does. With
// Workers = 1 the mean of one state is that state, so the policy is the
// one-process run's, to the bit; with more, the same seed and Workers
// give the same policy whichever process ran which step.

// policyState is a round's or a step's state: the policy's parameters
// and its Adam optimizer's moments (nil = a fresh Adam) and step count.
type policyState struct {
	W, M, V [][]float32
	T       int
}

const policyStateMagic = "placer-policy-round-1\n"

// stateOf is pol's parameters and opt's state, copied.
func stateOf(pol *policy.Policy, opt *nn.Adam) policyState {
	var s policyState
	for _, p := range pol.Params() {
		s.W = append(s.W, append([]float32(nil), p.W...))
	}
	m, v, t := opt.State()
	if m != nil {
		for i := range m {
			s.M = append(s.M, append([]float32(nil), m[i]...))
			s.V = append(s.V, append([]float32(nil), v[i]...))
		}
	}
	s.T = t
	return s
}

// apply copies s into pol's parameters and returns an Adam with s's
// moments.
func (s policyState) apply(pol *policy.Policy) (*nn.Adam, error) {
	ps := pol.Params()
	if len(ps) != len(s.W) {
		return nil, fmt.Errorf("pretrain: a round's state has %d parameters, the policy %d", len(s.W), len(ps))
	}
	for i, p := range ps {
		if len(p.W) != len(s.W[i]) {
			return nil, fmt.Errorf("pretrain: a round's state: parameter %s has %d weights, want %d", p.Name, len(s.W[i]), len(p.W))
		}
		copy(p.W, s.W[i])
		clear(p.G)
	}
	opt := &nn.Adam{}
	if s.M != nil {
		m, v := make([][]float32, len(s.M)), make([][]float32, len(s.V))
		for i := range s.M {
			m[i], v[i] = append([]float32(nil), s.M[i]...), append([]float32(nil), s.V[i]...)
		}
		opt.SetState(m, v, s.T)
	} else {
		opt.SetState(nil, nil, s.T)
	}
	return opt, nil
}

// encode is s as a file: the magic line, T, the parameter count, then
// per parameter its length, whether moments follow, W (and M, V), all
// little-endian.
func (s policyState) encode() []byte {
	var b bytes.Buffer
	b.WriteString(policyStateMagic)
	binary.Write(&b, binary.LittleEndian, uint64(s.T))
	binary.Write(&b, binary.LittleEndian, uint32(len(s.W)))
	for i, w := range s.W {
		binary.Write(&b, binary.LittleEndian, uint32(len(w)))
		if s.M == nil {
			b.WriteByte(0)
			binary.Write(&b, binary.LittleEndian, w)
			continue
		}
		b.WriteByte(1)
		binary.Write(&b, binary.LittleEndian, w)
		binary.Write(&b, binary.LittleEndian, s.M[i])
		binary.Write(&b, binary.LittleEndian, s.V[i])
	}
	return b.Bytes()
}

// readPolicyState reads a file written from encode.
func readPolicyState(path string) (policyState, error) {
	var s policyState
	data, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	bad := func(what string) (policyState, error) {
		return policyState{}, fmt.Errorf("pretrain: %s: not a round's state (%s)", path, what)
	}
	if !bytes.HasPrefix(data, []byte(policyStateMagic)) {
		return bad("no header")
	}
	r := bytes.NewReader(data[len(policyStateMagic):])
	var t uint64
	var n uint32
	if binary.Read(r, binary.LittleEndian, &t) != nil || binary.Read(r, binary.LittleEndian, &n) != nil || n > 1<<20 {
		return bad("bad counts")
	}
	s.T = int(t)
	for i := 0; i < int(n); i++ {
		var l uint32
		if binary.Read(r, binary.LittleEndian, &l) != nil || int64(l)*4 > int64(r.Len()) {
			return bad("bad length")
		}
		flag, err := r.ReadByte()
		if err != nil || flag > 1 {
			return bad("bad flag")
		}
		read := func() ([]float32, bool) {
			w := make([]float32, l)
			return w, binary.Read(r, binary.LittleEndian, w) == nil
		}
		w, ok := read()
		if !ok {
			return bad("truncated")
		}
		s.W = append(s.W, w)
		if flag == 1 {
			m, ok1 := read()
			v, ok2 := read()
			if !ok1 || !ok2 {
				return bad("truncated")
			}
			s.M, s.V = append(s.M, m), append(s.V, v)
		}
	}
	if r.Len() != 0 || (s.M != nil && len(s.M) != len(s.W)) {
		return bad("trailing bytes or moments missing")
	}
	return s, nil
}

// meanState is the mean of states (in order, in float64, rounded once);
// fresh gives it a fresh Adam.
func meanState(states []policyState, fresh bool) policyState {
	mean := func(get func(policyState) [][]float32) [][]float32 {
		first := get(states[0])
		if first == nil {
			return nil
		}
		out := make([][]float32, len(first))
		for i := range first {
			out[i] = make([]float32, len(first[i]))
			for j := range out[i] {
				sum := 0.0
				for _, s := range states {
					if x := get(s); x != nil {
						sum += float64(x[i][j])
					}
				}
				out[i][j] = float32(sum / float64(len(states)))
			}
		}
		return out
	}
	out := policyState{W: mean(func(s policyState) [][]float32 { return s.W })}
	if fresh {
		return out
	}
	out.M = mean(func(s policyState) [][]float32 { return s.M })
	out.V = mean(func(s policyState) [][]float32 { return s.V })
	for _, s := range states {
		out.T = max(out.T, s.T)
	}
	return out
}

func (rd *Rounds) policyRound(r int) string {
	return filepath.Join(rd.Dir, fmt.Sprintf("round-%d.policy", r))
}
func (rd *Rounds) policyStep(r, i int) string {
	return filepath.Join(rd.Dir, fmt.Sprintf("round-%d", r), fmt.Sprintf("step-%d.policy", i))
}

// runRounds is Run with pt.Rounds: this process works on the rounds in
// Dir until Steps steps are done (by whichever workers), then writes the
// last round's policy to Checkpoint. With Rounds.One it runs step Cell
// (see Rounds.One); the result's Policy is nil unless that ended the
// last round.
func (pt *Pretrain) runRounds(ctx context.Context) (*PretrainResult, error) {
	rd := pt.Rounds
	if rd.Workers < 1 || rd.Dir == "" {
		return nil, errors.New("pretrain: rounds need a worker count of 1 or more and a folder")
	}
	if pt.Steps < 1 || pt.Time > 0 || pt.Resume != "" {
		return nil, errors.New("pretrain: rounds need a step count (--steps), no time limit and no --resume (the folder is the checkpoint): the policy must not depend on how fast a worker is")
	}
	cellRound := -1
	if rd.One {
		if rd.Cell < 0 || rd.Cell >= pt.Steps {
			return nil, fmt.Errorf("pretrain: cell %d: %w: this run has %d cells (0 to %d), one per step", rd.Cell, ErrCellRange, pt.Steps, pt.Steps-1)
		}
		cellRound = rd.Cell / rd.Workers
	}
	res, names, warm, err := pt.start()
	if err != nil {
		return nil, err
	}
	pol := res.Policy
	gs := make([]prepared, len(pt.Graphs))
	for i := range pt.Graphs {
		if gs[i], err = pt.prepareGraph(ctx, pol, &pt.Graphs[i], res.Seed); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(rd.Dir, 0o755); err != nil {
		return nil, err
	}
	want := roundsFile{Format: "placer-policy-rounds", Seed: res.Seed, Workers: rd.Workers, Graphs: names}
	wb, _ := json.Marshal(want)
	if _, err := createFile(filepath.Join(rd.Dir, "rounds.json"), wb); err != nil {
		return nil, err
	}
	if hb, err := os.ReadFile(filepath.Join(rd.Dir, "rounds.json")); err != nil {
		return nil, err
	} else if !bytes.Equal(hb, wb) {
		return nil, fmt.Errorf("pretrain: %s holds the rounds of another run (%s; this run: %s): use another folder", rd.Dir, hb, wb)
	}
	if _, err := createFile(rd.policyRound(0), stateOf(pol, &nn.Adam{}).encode()); err != nil {
		return nil, err
	}
	owner, poll := rd.Owner, rd.Poll
	if owner == (claim.Owner{}) {
		owner = claim.Self()
	}
	if poll <= 0 {
		poll = time.Second
	}
	kn := pt.knobs()
	start := time.Now()
	res.Status = optimize.BudgetReached
	r := 0
	for {
		for exists(rd.policyRound(r + 1)) {
			r++
		}
		first := r * rd.Workers
		if first >= pt.Steps || (rd.One && r > cellRound) {
			break
		}
		n := min(rd.Workers, pt.Steps-first)
		cur, err := readPolicyState(rd.policyRound(r))
		if err != nil {
			return nil, err
		}
		missing := 0
		for k := 0; k < n; k++ {
			i := first + k
			path := rd.policyStep(r, i)
			if exists(path) || (rd.One && r == cellRound && i != rd.Cell) {
				continue
			}
			if ctx.Err() != nil {
				res.Status = optimize.Cancelled
				return res, nil
			}
			cl, _, err := claim.Take(path, owner, rd.Lease)
			if errors.Is(err, claim.ErrHeld) {
				missing++
				continue
			}
			if err != nil {
				return nil, err
			}
			if exists(path) {
				cl.Release("kept by another worker")
				continue
			}
			lost := false
			stop := cl.Keep(func(error) { lost = true })
			opt, err := cur.apply(pol)
			var pp PretrainPoint
			var gi int
			if err == nil {
				pp, gi, opt, err = pt.stepAt(ctx, i, res.Seed, warm, pol, opt, gs, kn)
			}
			stop()
			if errors.Is(err, optimize.ErrStopped) {
				cl.Release("cancelled")
				res.Status = optimize.Cancelled
				return res, nil
			}
			if err != nil {
				cl.Release(err.Error())
				return nil, err
			}
			if lost || cl.Lost() {
				missing++
				continue
			}
			if _, err := createFile(path, stateOf(pol, opt).encode()); err != nil {
				return nil, err
			}
			if err := cl.Finish(); err != nil {
				return nil, err
			}
			pp.Step, pp.Graph, pp.Elapsed = i+1, gs[gi].g.Name, time.Since(start).Seconds()
			res.Curve = append(res.Curve, pp)
			if pt.OnStep != nil {
				pt.OnStep(pp)
			}
		}
		for k := 0; k < n; k++ {
			if !exists(rd.policyStep(r, first+k)) {
				missing++
			}
		}
		if missing > 0 && rd.One && r == cellRound && exists(rd.policyStep(r, rd.Cell)) {
			break
		}
		if missing > 0 {
			select {
			case <-ctx.Done():
				res.Status = optimize.Cancelled
				return res, nil
			case <-time.After(poll):
			}
			continue
		}
		states := make([]policyState, n)
		for k := range n {
			states[k], err = readPolicyState(rd.policyStep(r, first+k))
			if errors.Is(err, fs.ErrNotExist) && exists(rd.policyRound(r+1)) {
				break // another worker wrote the next round and removed its steps
			}
			if err != nil {
				return nil, err
			}
		}
		if err != nil {
			continue
		}
		// The round that holds the last imitation step hands PPO a fresh
		// Adam, as one process does.
		fresh := first <= warm-1 && warm-1 < first+n
		made, err := createFile(rd.policyRound(r+1), meanState(states, fresh).encode())
		if err != nil {
			return nil, err
		}
		if made {
			// The round's steps (three times the policy's size each, with
			// Adam's moments) are in the next round's state now; their
			// claims stay, the history of who ran each step.
			for k := range n {
				os.Remove(rd.policyStep(r, first+k))
			}
		}
	}
	for exists(rd.policyRound(r + 1)) {
		r++
	}
	res.Elapsed = time.Since(start)
	if r*rd.Workers < pt.Steps {
		res.Policy, res.Step = nil, r*rd.Workers
		return res, nil
	}
	final, err := readPolicyState(rd.policyRound(r))
	if err != nil {
		return nil, err
	}
	if _, err := final.apply(pol); err != nil {
		return nil, err
	}
	res.Step = pt.Steps
	if pt.Checkpoint != "" {
		if err := SaveCheckpoint(pt.Checkpoint, pol, Checkpoint{Step: res.Step, Seed: res.Seed, Graphs: names, Elapsed: res.Elapsed.Seconds(), Warmup: warm}); err != nil {
			return nil, err
		}
	}
	return res, nil
}
