package regal

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/optimize"
)

// TestModelFileObjective decodes the objective a model file records: the
// top-level "objective", else the training state's, else step time (files
// written before the field existed); unknown names and a disagreeing
// training state are errors.
func TestModelFileObjective(t *testing.T) {
	m, err := NewModel(tiny, 4)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var base map[string]any
	if err := json.Unmarshal(buf.Bytes(), &base); err != nil {
		t.Fatal(err)
	}
	if base["objective"] != "step-time" {
		t.Fatalf("a new model's file records objective %v, want step-time", base["objective"])
	}
	for _, c := range []struct {
		name  string
		obj   any    // the top-level "objective"; nil = absent
		train string // the training state's objective; "" = no training state
		want  optimize.Objective
		err   string // a substring of the error; "" = none
	}{
		{"old file, no record", nil, "", optimize.StepTime, ""},
		{"old checkpoint for peak memory", nil, "peak-memory", optimize.PeakMemory, ""},
		{"old checkpoint for step time", nil, "step-time", optimize.StepTime, ""},
		{"step time", "step-time", "", optimize.StepTime, ""},
		{"peak memory", "peak-memory", "", optimize.PeakMemory, ""},
		{"peak memory checkpoint", "peak-memory", "peak-memory", optimize.PeakMemory, ""},
		{"disagreeing checkpoint", "peak-memory", "step-time", 0, `objective "peak-memory", but its training state says "step-time"`},
		{"flag alias is not a file name", "memory", "", 0, `objective "memory": want step-time or peak-memory`},
		{"unknown", "latency", "", 0, `objective "latency"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := map[string]any{}
			for k, v := range base {
				f[k] = v
			}
			delete(f, "objective")
			if c.obj != nil {
				f["objective"] = c.obj
			}
			if c.train != "" {
				f["train"] = map[string]any{"seed": 1, "step": 0, "elapsed_s": 0, "graphs": []string{}, "objective": c.train,
					"adam_m": nil, "adam_v": nil, "adam_t": 0, "curve": nil}
			}
			js, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadNamed(bytes.NewReader(js), "m.regal")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "m.regal") {
					t.Fatalf("error %v, want one naming m.regal with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Objective != c.want {
				t.Fatalf("objective %s, want %s", got.Objective, c.want)
			}
		})
	}
}

// TestModelObjectiveMustMatch: REGAL and ZeroShot run a model only on a
// problem of the objective it was trained for, and with no Model take
// ModelFor's model for the problem's objective.
func TestModelObjectiveMustMatch(t *testing.T) {
	stepM, _ := NewModel(tiny, 1)
	memM, _ := NewModel(tiny, 2)
	memM.Objective = optimize.PeakMemory
	byObj := func(o optimize.Objective) (*Model, error) {
		if o == optimize.PeakMemory {
			return memM, nil
		}
		return stepM, nil
	}
	s := &optimize.Settings{Budget: optimize.Budget{Evaluations: 100}, Seed: 1}
	for _, c := range []struct {
		name     string
		model    *Model
		modelFor func(optimize.Objective) (*Model, error)
		obj      optimize.Objective
		wantSeed uint64 // the model seed the run records; 0 = an error
		err      string
	}{
		{"step model, step problem", stepM, nil, optimize.StepTime, 1, ""},
		{"peak model, peak problem", memM, nil, optimize.PeakMemory, 2, ""},
		{"step model, peak problem", stepM, byObj, optimize.PeakMemory, 0, "the model was trained for step-time, the problem's objective is peak-memory"},
		{"peak model, step problem", memM, nil, optimize.StepTime, 0, "the model was trained for peak-memory, the problem's objective is step-time"},
		{"picked for step time", nil, byObj, optimize.StepTime, 1, ""},
		{"picked for peak memory", nil, byObj, optimize.PeakMemory, 2, ""},
		{"picked wrongly", nil, func(optimize.Objective) (*Model, error) { return stepM, nil }, optimize.PeakMemory, 0, "trained for step-time"},
		{"no model at all", nil, nil, optimize.StepTime, 0, "no model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := synthProblem(t, "er", 3, 2)
			p.Objective = c.obj
			for _, opt := range []optimize.Optimizer{&REGAL{Model: c.model, ModelFor: c.modelFor}, &ZeroShot{Model: c.model, ModelFor: c.modelFor, Samples: 4}} {
				res, err := opt.Optimize(context.Background(), p, s)
				if c.err != "" {
					if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), opt.Name()+": ") {
						t.Fatalf("%s: error %v, want %q", opt.Name(), err, c.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", opt.Name(), err)
				}
				st := res.Learning.Settings.(Settings)
				if st.Seed != c.wantSeed || st.Objective != c.obj {
					t.Fatalf("%s ran model seed %d for %s, want seed %d for %s", opt.Name(), st.Seed, st.Objective, c.wantSeed, c.obj)
				}
			}
		})
	}
}

// TestTrainRecordsObjective: a model trained for peak memory says so, in
// memory and in its checkpoint, and resuming it for step time fails.
func TestTrainRecordsObjective(t *testing.T) {
	gs := []TrainGraph{{Name: "ws", Problem: synthProblem(t, "ws", 5, 2)}, {Name: "ba", Problem: synthProblem(t, "ba", 6, 2)}}
	ck := filepath.Join(t.TempDir(), "m.regal")
	r, err := (&Train{Graphs: gs, Config: tiny, Seed: 1, Samples: 2, Evaluations: 40, Steps: 1, Objective: optimize.PeakMemory, Checkpoint: ck}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Model.Objective != optimize.PeakMemory {
		t.Fatalf("trained model's objective %s, want peak-memory", r.Model.Objective)
	}
	m, err := Load(ck)
	if err != nil || m.Objective != optimize.PeakMemory {
		t.Fatalf("checkpoint: %v, objective %v", err, m)
	}
	_, err = (&Train{Graphs: gs, Samples: 2, Evaluations: 40, Steps: 2, Objective: optimize.StepTime, Resume: ck}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "was trained for peak-memory, this run asks for step-time") {
		t.Fatalf("resume for another objective: %v", err)
	}
}
