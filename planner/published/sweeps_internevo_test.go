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
			"batch=64", "dgx-a100:1,attention=flash,nics=4,nic-gbps=100", "tp=1,dp=8,mbs=2,distopt=on,hybrid-zero=8,loss-fusion=on", 4062},
		// 1,024 GPUs at tp 2, micro_bsz 4 x 4: dp 512, batch 4 x 4 x 512 = 8,192.
		{"InternEvo throughput: 7B, tp=2, zero1=4", "1024 GPUs, micro_bsz 4 x 4, zero1=4",
			"batch=8192", "dgx-a100:128,attention=flash,nics=4,nic-gbps=100", "tp=2,dp=512,mbs=4,distopt=on,hybrid-zero=4,loss-fusion=on", 3486},
		// The checkpointed FLOPS row at 1,024 GPUs, micro_bsz 2 x 1: batch 2,048 (4M tokens).
		{"InternEvo FLOPS test: 7B, packed, activation checkpointing on", "1024 GPUs, micro_bsz 2 x 1, zero1=8",
			"batch=2048", "dgx-a100:128,attention=flash,nics=4,nic-gbps=100", "tp=1,dp=1024,mbs=2,distopt=on,hybrid-zero=8,recompute=full,loss-fusion=on", 2341},
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

// isCodebaseSet: the code bases read from measurements/ (their own
// tests: TestInternEvoRows, TestCodebaseRows).
func isCodebaseSet(set string) bool {
	switch set {
	case SetInternEvo, SetInternEvoValidation, SetFlashAttn, SetFlashAttnValidation, SetTorchtitanH200, SetTorchtitanH200Validate,
		SetNanotron, SetNanotronValidation, SetFMSFSDP, SetFMSFSDPValidation:
		return true
	}
	return false
}

// TestCodebaseRows: flash-attention's five rows and torchtitan's two H200
// rows as their readings, by hand from runs.csv's columns: GPT3-760M is
// 24 layers of 1,536 with 16 heads, batch 16 a GPU of a 256-sequence
// batch under ZeRO-1 with the fused loss, 245k tokens a second over 8 GPUs = 30,625; the
// 8-node H200 row is batch 2 x 64 = 128, 10,753 tokens a second per GPU.
func TestCodebaseRows(t *testing.T) {
	fa, th := flashAttnSweeps(), titanH200Sweeps()
	if len(fa) != 2 || len(fa[0].Rows) != 3 || len(fa[1].Rows) != 2 || fa[0].Set != SetFlashAttn || fa[1].Set != SetFlashAttnValidation {
		t.Fatalf("flash-attention: %d sweeps, want 3 development rows then 2 validation rows", len(fa))
	}
	r := fa[0].Rows[2]
	if r.Label != "GPT3-760M" || r.Workload != "gpt:layers=24,hidden=1536,heads=16,seq=2048,vocab=50264,batch=256" ||
		r.Cluster != "dgx-a100:1,attention=flash" || r.Strategy != "dp=8,mbs=16,distopt=on,loss-fusion=on" || r.Measured != 30625 {
		t.Errorf("flash-attention GPT3-760M: %+v", r)
	}
	if r := fa[0].Rows[0]; r.Strategy != "dp=8,mbs=32,loss-fusion=on" || r.Measured != 163750 {
		t.Errorf("flash-attention GPT3-125M (DDP, batch 32 a GPU): %+v", r)
	}
	if len(th) != 2 || th[0].Set != SetTorchtitanH200 || th[1].Set != SetTorchtitanH200Validate {
		t.Fatalf("torchtitan H200: %d sweeps, want the 4-node row then the 8-node row", len(th))
	}
	r = th[1].Rows[0]
	if r.Workload != "llama3-8b:seq=8192,batch=128" || r.Cluster != "dgx-h200:8,attention=flash" || r.Measured != 10753 || r.PeakGiB != 46.97 ||
		r.Strategy != "dp=64,mbs=2,fsdp=on,recompute=selective,fp8=current,fp8gather=on,stack=torchtitan-0.2,compile=on" {
		t.Errorf("torchtitan H200, 8 nodes: %+v", r)
	}
}
