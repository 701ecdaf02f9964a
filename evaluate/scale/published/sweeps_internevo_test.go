package published

import (
	"strings"
	"testing"
)

// TestInternEvoRows: measurements/internevo/runs.csv read as sweeps:
// 54 rows in six sweeps, the tp=2 throughput rows (16) in the validation
// set, each row's reading by hand from its columns (global batch =
// micro_bsz x micro_num x GPUs / tp).
func TestInternEvoRows(t *testing.T) {
	sweeps := internEvoSweeps()
	rows, val := 0, 0
	for _, sw := range sweeps {
		rows += len(sw.Rows)
		if sw.Set == SetInternEvoValidation {
			val += len(sw.Rows)
			if !strings.Contains(sw.Name, "tp=2") {
				t.Errorf("%s: in the validation set, not a tp=2 sweep", sw.Name)
			}
		}
	}
	if len(sweeps) != 6 || rows != 54 || val != 16 {
		t.Fatalf("%d sweeps, %d rows, %d validation: want 6, 54, 16", len(sweeps), rows, val)
	}
	tests := []struct {
		sweep, label                string
		workload, cluster, strategy string
		measured                    float64
	}{
		// internevo-001: 8 GPUs, tp 1, micro_bsz 2 x 4: batch 2 x 4 x 8 = 64.
		{"InternEvo throughput: 7B, tp=1, zero1=-1", "8 GPUs, micro_bsz 2 x 4, zero1=-1",
			"batch=64", "dgx-a100:1,attention=flash,nics=4,nic-gbps=100", "tp=1,dp=8,mbs=2,distopt=on", 4062},
		// 1,024 GPUs at tp 2, micro_bsz 4 x 4: dp 512, batch 4 x 4 x 512 = 8,192.
		{"InternEvo throughput: 7B, tp=2, zero1=4", "1024 GPUs, micro_bsz 4 x 4, zero1=4",
			"batch=8192", "dgx-a100:128,attention=flash,nics=4,nic-gbps=100", "tp=2,dp=512,mbs=4,distopt=on", 3486},
		// The checkpointed FLOPS row at 1,024 GPUs, micro_bsz 2 x 1: batch 2,048 (4M tokens).
		{"InternEvo FLOPS test: 7B, packed, activation checkpointing on", "1024 GPUs, micro_bsz 2 x 1, zero1=8",
			"batch=2048", "dgx-a100:128,attention=flash,nics=4,nic-gbps=100", "tp=1,dp=1024,mbs=2,distopt=on,recompute=full", 2341},
	}
	for _, tt := range tests {
		found := false
		for _, sw := range sweeps {
			if !strings.HasPrefix(sw.Name, tt.sweep) {
				continue
			}
			for _, r := range sw.Rows {
				if r.Label != tt.label {
					continue
				}
				found = true
				if !strings.HasSuffix(r.Workload, ","+tt.workload) || !strings.HasPrefix(r.Workload, "llama:layers=32,hidden=4096,heads=32,kv_heads=32,ffn=11008,seq=2048,vocab=103168,") ||
					r.Cluster != tt.cluster || r.Strategy != tt.strategy || r.Measured != tt.measured {
					t.Errorf("%s, %s: %s on %s, %s, %g; want %s on %s, %s, %g", sw.Name, r.Label, r.Workload, r.Cluster, r.Strategy, r.Measured,
						tt.workload, tt.cluster, tt.strategy, tt.measured)
				}
			}
		}
		if !found {
			t.Errorf("%s, %s: not read", tt.sweep, tt.label)
		}
	}
}
