package profile

import "testing"

// TestOfDevice: a profile belongs to the pod whose GPU its device's name
// holds, but a Grace superchip's GPU is not the bare part of the same
// number (a GB200 profile does not price a DGX B200, nor the reverse).
func TestOfDevice(t *testing.T) {
	for _, c := range []struct {
		name, gpu string
		want      bool
	}{
		{"NVIDIA H100 80GB HBM3", "h100", true},
		{"NVIDIA B200", "b200", true},
		{"NVIDIA GB200", "gb200", true},
		{"NVIDIA GB200", "b200", false},
		{"NVIDIA B200", "gb200", false},
		{"NVIDIA GB300", "b300", false},
		{"NVIDIA H200", "h100", false},
	} {
		p := Profile{Device: Device{Kind: "cuda", Name: c.name}}
		if got := p.OfDevice(c.gpu); got != c.want {
			t.Errorf("%q of %s: %v, want %v", c.name, c.gpu, got, c.want)
		}
	}
}
