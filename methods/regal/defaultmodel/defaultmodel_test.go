package defaultmodel

import (
	"errors"
	"strings"
	"testing"

	"github.com/placer/placer/optimize"
)

func TestLoadFor(t *testing.T) {
	for _, c := range []struct {
		obj    optimize.Objective
		path   string
		target string // the make target a missing model's error names
	}{
		{optimize.StepTime, "methods/regal/defaultmodel/data/default.regal", "make regal-model"},
		{optimize.PeakMemory, "methods/regal/defaultmodel/data/peak-memory.regal", "make regal-model-memory"},
	} {
		t.Run(c.obj.String(), func(t *testing.T) {
			if got := PathFor(c.obj); got != c.path {
				t.Fatalf("PathFor = %q, want %q", got, c.path)
			}
			m, err := LoadFor(c.obj)
			if !AvailableFor(c.obj) {
				if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), c.target) {
					t.Fatalf("no default model: error %v, want ErrMissing naming %q", err, c.target)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The models of make regal-model and regal-model-memory: two
			// devices, the default network, trained for their objective.
			if cfg := m.Config(); cfg.Devices != 2 || cfg.Layers != 2 || cfg.Dim != 32 || cfg.MeanBuckets != 5 || cfg.VarBuckets != 5 {
				t.Fatalf("default model config %+v", cfg)
			}
			if m.Objective != c.obj {
				t.Fatalf("the default model for %s was trained for %s", c.obj, m.Objective)
			}
		})
	}
	if Path != PathFor(optimize.StepTime) {
		t.Errorf("Path %q, PathFor(step-time) %q", Path, PathFor(optimize.StepTime))
	}
	if _, err := LoadFor(optimize.Objective(7)); err == nil {
		t.Error("LoadFor(objective 7) succeeded")
	}
	if a, b := Available(), AvailableFor(optimize.StepTime); a != b {
		t.Errorf("Available() = %v, AvailableFor(step-time) = %v", a, b)
	}
}
