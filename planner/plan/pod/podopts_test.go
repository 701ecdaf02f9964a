package pod

import (
	"strings"
	"testing"
)

// TestPodAttentionOption: --cluster PRESET:N,attention=B puts the
// measured kernel of backend B first (the one a layer is costed with),
// an unmeasured backend is refused in one line naming the measured ones;
// grand-teton is the H100 with torchtitan's 96 GB of HBM2e at 2.4 TB/s.
func TestPodAttentionOption(t *testing.T) {
	for _, c := range []struct{ text, first string }{
		{"dgx-h100:2", "cudnn"}, {"dgx-h100:2,attention=flash", "flash"}, {"grand-teton:1,attention=flash", "flash"},
		{"grand-teton:1,attention=cudnn,nics=4", "cudnn"},
	} {
		p, err := ParsePod(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Kernels.Attention[0].Backend; got != c.first || len(p.Kernels.Attention) != 2 {
			t.Errorf("%s: attention %s first of %d, want %s of 2", c.text, got, len(p.Kernels.Attention), c.first)
		}
	}
	_, err := ParsePod("dgx-h100:1,attention=sdpa")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "cudnn, flash") {
		t.Errorf("attention=sdpa: %v; want one line naming the measured kernels", err)
	}
	g, _ := ParsePod("grand-teton:2")
	h, _ := ParsePod("dgx-h100:2")
	if g.Hardware.Memory != 95<<30 || g.Hardware.MemBandwidth != 2.4e12 || g.Hardware.FP16Tensor != h.Hardware.FP16Tensor || g.GPUs() != 16 {
		t.Errorf("grand-teton: %d bytes at %g B/s, %g FLOP/s, %d GPUs", g.Hardware.Memory, g.Hardware.MemBandwidth, g.Hardware.FP16Tensor, g.GPUs())
	}
}
