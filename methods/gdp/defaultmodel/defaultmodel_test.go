package defaultmodel

import (
	"errors"
	"testing"
)

func TestLoad(t *testing.T) {
	p, err := Load()
	if !Available() {
		if !errors.Is(err, ErrMissing) {
			t.Fatalf("no default model: error %v, want ErrMissing", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	// The model of make default-model: the small policy, placement,
	// scheduling and fusion, one decision per co-location group.
	c := p.Config()
	if c.DModel != 32 || c.SageLayers != 2 || c.NoScheduling || c.NoFusion || !c.Coarsen || c.MaxDevices != 8 {
		t.Fatalf("default model config %+v", c)
	}
}
