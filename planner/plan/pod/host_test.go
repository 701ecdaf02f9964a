package pod

import (
	"strings"
	"testing"

	"github.com/placer/placer/planner/kernels"
)

// TestHostKey: host=x86 issues a GB200 rack's kernels at the DGX H100's
// measured Xeon figures (Issue 14.04 us), host=grace a DGX B200's at
// 2.75 times them (37.08 / 13.48 x 14.04 = 38.62 us); a preset whose
// host is neither, or another CPU, is refused in one line.
func TestHostKey(t *testing.T) {
	tests := []struct {
		cluster string
		issue   float64 // seconds; 0: refused
		refusal string
	}{
		{"gb200-nvl72:1", 14.04e-6 * 37.08 / 13.48, ""},
		{"gb200-nvl72:1,host=x86", 14.04e-6, ""},
		{"gb300-nvl72:1,host=x86", 14.04e-6, ""},
		{"dgx-b200:1", 14.04e-6, ""},
		{"dgx-b200:1,host=grace", 14.04e-6 * 37.08 / 13.48, ""},
		{"dgx-h100:1,host=x86", 14.04e-6, ""},
		{"dgx-a100:1,host=x86", 0, "neither the DGX H100's Xeon nor a Grace"},
		{"gb200-nvl72:1,host=arm", 0, "want x86 or grace"},
	}
	for _, tt := range tests {
		p, err := ParsePod(tt.cluster)
		if tt.issue == 0 {
			if err == nil || !strings.Contains(err.Error(), tt.refusal) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v, want one line with %q", tt.cluster, err, tt.refusal)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.cluster, err)
		}
		if d := p.Kernels.Host.Issue/tt.issue - 1; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: issue %.4g s, want %.4g", tt.cluster, p.Kernels.Host.Issue, tt.issue)
		}
		if p.Kernels.Host.Sync != kernels.H100.Host.Sync {
			t.Errorf("%s: sync %.4g s, want the x86 figure %.4g either way", tt.cluster, p.Kernels.Host.Sync, kernels.H100.Host.Sync)
		}
	}
}
