package nn

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
)

// TrainState is the state of a network trained with Adam, as a
// checkpoint or a round of synchronous training keeps it: its
// parameters' weights and its Adam optimizer's moments (nil = a fresh
// Adam) and step count.
type TrainState struct {
	W, M, V [][]float32
	T       int
}

// Encode is s as a file: the magic line, T, the parameter count, then
// per parameter its length, whether moments follow, W (and M, V), all
// little-endian.
func (s TrainState) Encode(magic string) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
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

// ReadTrainState reads a file written by Encode with magic; what names the
// reader in errors.
func ReadTrainState(path, magic, what string) (TrainState, error) {
	var s TrainState
	data, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	bad := func(why string) (TrainState, error) {
		return TrainState{}, fmt.Errorf("%s: %s: not a round's state (%s)", what, path, why)
	}
	if !bytes.HasPrefix(data, []byte(magic)) {
		return bad("no header")
	}
	r := bytes.NewReader(data[len(magic):])
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

// MeanTrainState is the mean of states, parameter by parameter and moment by
// moment in order (in float64, rounded once to float32), with the
// largest of their Adam step counts; fresh gives it a fresh Adam.
func MeanTrainState(states []TrainState, fresh bool) TrainState {
	mean := func(get func(TrainState) [][]float32) [][]float32 {
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
	out := TrainState{W: mean(func(s TrainState) [][]float32 { return s.W })}
	if fresh {
		return out
	}
	out.M = mean(func(s TrainState) [][]float32 { return s.M })
	out.V = mean(func(s TrainState) [][]float32 { return s.V })
	for _, s := range states {
		out.T = max(out.T, s.T)
	}
	return out
}

// TrainStateOf is params' weights and opt's state, copied: a step's or a
// round's state of a network trained with Adam.
func TrainStateOf(params Params[float32], opt *Adam) TrainState {
	var s TrainState
	for _, p := range params {
		s.W = append(s.W, append([]float32(nil), p.W...))
	}
	m, v, t := opt.State()
	for i := range m {
		s.M = append(s.M, append([]float32(nil), m[i]...))
		s.V = append(s.V, append([]float32(nil), v[i]...))
	}
	s.T = t
	return s
}

// Apply copies s's weights into params (clearing their gradients) and
// returns an Adam with s's moments and step count; what names the
// trainer in errors ("pretrain", "regal: train").
func (s TrainState) Apply(what string, params Params[float32]) (*Adam, error) {
	if len(params) != len(s.W) {
		return nil, fmt.Errorf("%s: a round's state has %d parameters, the network %d", what, len(s.W), len(params))
	}
	for i, p := range params {
		if len(p.W) != len(s.W[i]) {
			return nil, fmt.Errorf("%s: a round's state: parameter %s has %d weights, want %d", what, p.Name, len(s.W[i]), len(p.W))
		}
		copy(p.W, s.W[i])
		clear(p.G)
	}
	opt := &Adam{}
	var m, v [][]float32
	if s.M != nil {
		m, v = make([][]float32, len(s.M)), make([][]float32, len(s.V))
		for i := range s.M {
			m[i], v[i] = append([]float32(nil), s.M[i]...), append([]float32(nil), s.V[i]...)
		}
	}
	opt.SetState(m, v, s.T)
	return opt, nil
}
