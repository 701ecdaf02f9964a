package roofline

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestKernelFloorMeasured: the h100 and h200 presets' kernel floors are
// the means of the near-empty kernels' back-to-back GPU times the lent
// machines measured (kernelbench's host section: issue.add_, issue.add,
// issue.mul_autograd; gpu_seconds), each preset from its own GPU's files;
// and with the host modelled a kernel costs the floor in the launch's
// place (hostHardware), without it the launch.
func TestKernelFloorMeasured(t *testing.T) {
	dir := filepath.Join("..", "..", "measurements")
	for _, c := range []struct {
		preset string
		files  []string
	}{
		{"h100", []string{"2026-11-26-h100-c/host.jsonl", "2026-11-26-h100-d/host-moehost.jsonl"}},
		{"h200", []string{"2026-11-26-h200-b/host.jsonl", "2026-11-26-h200-b/host-after.jsonl"}},
	} {
		sum, n := 0.0, 0
		for _, name := range c.files {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				var r struct {
					Name string  `json:"name"`
					GPU  float64 `json:"gpu_seconds"`
				}
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				switch r.Name {
				case "issue.add_", "issue.add", "issue.mul_autograd":
					sum += r.GPU
					n++
				}
			}
			f.Close()
		}
		if n != 6 {
			t.Fatalf("%s: %d near-empty kernels measured, want 6", c.preset, n)
		}
		h, _ := Preset(c.preset)
		if want := sum / float64(n); math.Abs(h.KernelFloor-want) > 0.001e-6 {
			t.Errorf("%s: kernel floor %.4f us, the measurements' mean %.4f us", c.preset, h.KernelFloor*1e6, want*1e6)
		}
		cl := &Cluster{Hardware: h}
		if got := cl.hostHardware(true).Launch; got != h.KernelFloor {
			t.Errorf("%s: with the host modelled a kernel's launch is %g, want the floor %g", c.preset, got, h.KernelFloor)
		}
		if got := cl.hostHardware(false).Launch; got != h.Launch {
			t.Errorf("%s: without the host a kernel's launch is %g, want %g", c.preset, got, h.Launch)
		}
	}
}
