package defaultmodel

import (
	"errors"
	"testing"
)

func TestLoad(t *testing.T) {
	m, err := Load()
	if !Available() {
		if !errors.Is(err, ErrMissing) {
			t.Fatalf("no default model: error %v, want ErrMissing", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	// The model of make regal-model: two devices, the default network.
	if c := m.Config(); c.Devices != 2 || c.Layers != 2 || c.Dim != 32 || c.MeanBuckets != 5 || c.VarBuckets != 5 {
		t.Fatalf("default model config %+v", c)
	}
}
