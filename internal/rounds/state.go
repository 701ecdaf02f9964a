package rounds

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
)

// State is a network's round state: its parameters and its Adam
// optimizer's moments (nil = a fresh Adam) and step count.
type State struct {
	W, M, V [][]float32
	T       int
}

// Encode is s as a file: the magic line, T, the parameter count, then
// per parameter its length, whether moments follow, W (and M, V), all
// little-endian.
func (s State) Encode(magic string) []byte {
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

// ReadState reads a file written by Encode with magic; what names the
// reader in errors.
func ReadState(path, magic, what string) (State, error) {
	var s State
	data, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	bad := func(why string) (State, error) {
		return State{}, fmt.Errorf("%s: %s: not a round's state (%s)", what, path, why)
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

// MeanState is the mean of states, parameter by parameter and moment by
// moment in order (in float64, rounded once to float32), with the
// largest of their Adam step counts; fresh gives it a fresh Adam.
func MeanState(states []State, fresh bool) State {
	mean := func(get func(State) [][]float32) [][]float32 {
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
	out := State{W: mean(func(s State) [][]float32 { return s.W })}
	if fresh {
		return out
	}
	out.M = mean(func(s State) [][]float32 { return s.M })
	out.V = mean(func(s State) [][]float32 { return s.V })
	for _, s := range states {
		out.T = max(out.T, s.T)
	}
	return out
}
