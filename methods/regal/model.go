package regal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// Model is a REGAL network with its configuration: what the methods REGAL
// and ZeroShot place with and what Train trains.
type Model struct {
	Seed uint64 // the seed its weights were initialized from
	Net  *Net[float32]
	// Objective is what the model was trained for (what Train's reward
	// measured); REGAL and ZeroShot refuse a problem with another
	// objective. Zero = step time, also what a file written before the
	// field existed reads as.
	Objective optimize.Objective
}

// NewModel returns an untrained model (for step time; set Objective for
// another).
func NewModel(cfg Config, seed uint64) (*Model, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	return &Model{Seed: seed, Net: NewNet[float32](cfg, seed)}, nil
}

// Config is the model's configuration (defaults resolved).
func (m *Model) Config() Config { return m.Net.Cfg }

// Logits runs the network on p (neighbours sampled from seed) and returns
// the input it read and the N x Outputs logits.
func (m *Model) Logits(p *optimize.Problem, seed uint64) (*Input, []float32, error) {
	in, err := NewInput(p, m.Net.Cfg, seed)
	if err != nil {
		return nil, nil, err
	}
	ar := &nn.Arena[float32]{}
	out, _ := m.Net.Forward(ar, nn.Convert[float32](in.X), in.N, in.Nbrs)
	return in, append([]float32(nil), out...), nil
}

// The model file is JSON: a format tag and version, the configuration,
// the seed, the objective it was trained for, and every parameter by name
// and shape with its weights; a training checkpoint adds its state (see
// Train.Checkpoint). A file without "objective" (written before the field
// existed) reads as the checkpoint state's objective if it has one, else
// step time.
const (
	FileFormat  = "placer-regal-model"
	FileVersion = 1
)

type fileParam struct {
	Name string    `json:"name"`
	Rows int       `json:"rows"`
	Cols int       `json:"cols"`
	W    []float32 `json:"w"`
}

type file struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Config  Config `json:"config"`
	Seed    uint64 `json:"seed"`
	// Objective is "step-time" or "peak-memory"; "" = not recorded.
	Objective string      `json:"objective,omitempty"`
	Params    []fileParam `json:"params"`
	Train     *trainState `json:"train,omitempty"`
}

func (m *Model) file(st *trainState) *file {
	f := &file{Format: FileFormat, Version: FileVersion, Config: m.Net.Cfg, Seed: m.Seed, Objective: m.Objective.String(), Train: st}
	for _, p := range m.Net.Params() {
		f.Params = append(f.Params, fileParam{Name: p.Name, Rows: p.Rows, Cols: p.Cols, W: p.W})
	}
	return f
}

// WriteTo writes the model file to w.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	js, err := encode(m.file(nil))
	if err != nil {
		return 0, err
	}
	n, err := w.Write(js)
	return int64(n), err
}

// Save writes the model to path atomically.
func (m *Model) Save(path string) error {
	return atomicfile.Write(path, func(w io.Writer) error { _, err := m.WriteTo(w); return err })
}

// Read reads a model file (or a training checkpoint, whose state it
// ignores).
func Read(r io.Reader) (*Model, error) {
	m, _, err := readFile(r, "model")
	return m, err
}

// ReadNamed reads a model file like Read, naming it name in its errors.
func ReadNamed(r io.Reader, name string) (*Model, error) {
	m, _, err := readFile(r, name)
	return m, err
}

// Load reads the model file at path.
func Load(path string) (*Model, error) {
	f, err := bounded.Open(path, bounded.Model, "a REGAL model")
	if err != nil {
		return nil, fmt.Errorf("regal: %w", err)
	}
	defer f.Close()
	m, _, err := readFile(f, path)
	return m, err
}

func readFile(r io.Reader, name string) (*Model, *trainState, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("regal: %s: %w", name, err)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("regal: %s is not a REGAL model file: %w", name, graph.JSONError(name, data, err))
	}
	if f.Format != FileFormat {
		return nil, nil, fmt.Errorf("regal: %s is not a REGAL model file (format %q, want %q)", name, f.Format, FileFormat)
	}
	if f.Version != FileVersion {
		return nil, nil, fmt.Errorf("regal: %s has version %d; this placer reads version %d", name, f.Version, FileVersion)
	}
	if err := f.Config.Check(); err != nil {
		return nil, nil, fmt.Errorf("regal: %s: %w", name, err)
	}
	obj, err := fileObjective(&f)
	if err != nil {
		return nil, nil, fmt.Errorf("regal: %s: %w", name, err)
	}
	m := &Model{Seed: f.Seed, Net: NewNet[float32](f.Config, f.Seed), Objective: obj}
	ps := m.Net.Params()
	if len(ps) != len(f.Params) {
		return nil, nil, fmt.Errorf("regal: %s has %d parameters, its configuration makes %d", name, len(f.Params), len(ps))
	}
	for i, p := range ps {
		q := f.Params[i]
		if q.Name != p.Name || q.Rows != p.Rows || q.Cols != p.Cols || len(q.W) != len(p.W) {
			return nil, nil, fmt.Errorf("regal: %s: parameter %d is %s %dx%d with %d weights, want %s %dx%d", name, i, q.Name, q.Rows, q.Cols, len(q.W), p.Name, p.Rows, p.Cols)
		}
		for j, v := range q.W {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, nil, fmt.Errorf("regal: %s: parameter %s has a non-finite weight", name, q.Name)
			}
			p.W[j] = v
		}
	}
	return m, f.Train, nil
}

// fileObjective is the objective a model file records: its "objective",
// else its training state's, else step time; an unknown name, or a
// training state that disagrees, is an error.
func fileObjective(f *file) (optimize.Objective, error) {
	name := f.Objective
	if f.Train != nil && f.Train.Objective != "" {
		if name != "" && name != f.Train.Objective {
			return 0, fmt.Errorf("objective %q, but its training state says %q", name, f.Train.Objective)
		}
		name = f.Train.Objective
	}
	if name == "" {
		return optimize.StepTime, nil
	}
	for _, o := range optimize.Objectives {
		if name == o.String() {
			return o, nil
		}
	}
	return 0, fmt.Errorf("objective %q: want step-time or peak-memory", name)
}

// encode is the model file's bytes (an error for non-finite weights).
func encode(f *file) ([]byte, error) {
	js, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("regal: model file: %w", err)
	}
	return append(js, '\n'), nil
}
