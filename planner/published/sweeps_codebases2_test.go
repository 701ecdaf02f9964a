package published

import (
	"math"
	"slices"
	"testing"
)

// TestCodebases2Rows: nanotron's and fms-fsdp's rows as their readings,
// by hand from runs.csv's columns.
//
// nanotron-024 (1.34B on one node: DP 4, PP 2, GAS 16, MBS 4, ZeRO-1):
// nanotron's get_flops a token at sequence 4,096 is 3 x (16 layers x
// (QKV 6h^2 = 25,165,824 + attention 4sh = 33,554,432 + out 2h^2 =
// 8,388,608 + MLP 6h x 8,192 = 100,663,296) + LM head 2h x 131,072 =
// 536,870,912) = 9,663,676,416; MFU 44.32% of 989.5 TFLOP/s over it is
// 45,380.9 tokens a second a GPU.
//
// fms-fsdp-003 (13b eager on 128 A100s, "Selective AC"): HFU/MFU =
// 0.59/0.51, p = 3 x (0.59/0.51 - 1) = 0.4706, 0.4706 x 40 blocks = 18.8:
// 19 blocks recomputed.
func TestCodebases2Rows(t *testing.T) {
	nt := nanotronSweeps()
	if len(nt) != 4 || nt[1].Set != SetNanotronValidation || nt[0].Set != SetNanotron || nt[2].Set != SetNanotron || nt[3].Set != SetNanotron {
		t.Fatalf("nanotron: %d sweeps, want 1.34B (development), 3.57B (validation), 8.86B and 80B (development)", len(nt))
	}
	n := 0
	for _, s := range nt {
		n += len(s.Rows)
	}
	if n != 26 || len(nt[3].Rows) != 5 {
		t.Errorf("nanotron: %d rows (80B %d), want 26 (80B 5)", n, len(nt[3].Rows))
	}
	r := nt[0].Rows[6]
	if r.Workload != "llama:layers=16,hidden=2048,heads=32,kv_heads=32,ffn=8192,seq=4096,vocab=131072,batch=256,tied=true" ||
		r.Cluster != "dgx-h100:1,attention=flash" || r.Strategy != "tp=1,pp=2,dp=4,mbs=4,connections=1,fp32-accum-add=on,first=11,last=5,distopt=on,distopt-allreduce=on" || math.Abs(r.Measured-45380.9) > 0.05 {
		t.Errorf("nanotron 1.34B on 1 node: %+v", r)
	}
	if r := nt[2].Rows[0]; r.Strategy != "tp=4,pp=1,dp=128,mbs=2,connections=1,fp32-accum-add=on,sp=on" || r.Workload[len(r.Workload)-9:] != "batch=256" {
		t.Errorf("nanotron 8.86B on 64 nodes (ZeRO-0, untied): %+v", r)
	}
	fs := fmsSweeps()
	if len(fs) != 4 || fs[3].Set != SetFMSFSDPValidation || slices.ContainsFunc(fs[:3], func(s Sweep) bool { return s.Set != SetFMSFSDP }) {
		t.Fatalf("fms-fsdp: %d sweeps, want three development then the compiled H100 column", len(fs))
	}
	r = fs[0].Rows[1]
	if r.Workload != "llama:layers=40,hidden=5120,heads=40,kv_heads=40,ffn=13824,seq=4096,vocab=32000,batch=256" ||
		r.Cluster != "dgx-a100:16,attention=flash,nics=4,nic-gbps=100" || r.Measured != 1800 ||
		r.Strategy != "dp=128,mbs=2,fsdp=on,stack=torchtitan-0.2,recompute=full,recompute-layers=19" {
		t.Errorf("fms-fsdp 13b eager on A100: %+v", r)
	}
	// Each set's rows are counted as their own code base's; torchtitan's
	// named by its stack.
	for _, c := range []struct {
		s    Sweep
		want string
	}{{nt[0], "nanotron"}, {nt[1], "nanotron"}, {fs[0], "fms-fsdp"}, {fs[3], "fms-fsdp"},
		{Sweep{Set: SetInternEvo}, "internevo"}, {Sweep{Set: SetFlashAttnValidation}, "flash-attention"}, {Sweep{Set: SetTorchtitanH200}, ""}} {
		if got := c.s.CodeBase(); got != c.want {
			t.Errorf("%s: code base %q, want %q", c.s.Set, got, c.want)
		}
	}
	if !slices.Contains(CodebaseValidationSets(), SetNanotronValidation) || !slices.Contains(CodebaseValidationSets(), SetFMSFSDPValidation) {
		t.Error("the new validation sets are not in CodebaseValidationSets")
	}
}

// TestNanotronStages: nanotron's build_model split by hand. A decoder
// layer's cost 4 x heads x head_dim x hidden + 3 x ffn x hidden, the LM
// head's vocab x hidden:
//   - 1.34B (16 layers, hidden 2,048, ffn 8,192): a layer 67,108,864,
//     the head 268,435,456 = 4 layers, the total 20 layers' worth; at
//     pp 2 the first threshold is 10 layers, which layer 10 reaches but
//     does not exceed, so layer 11 stays on stage 0: 11 and 5 (the head
//     on stage 1), written first=11,last=5;
//   - 80B (80 layers, hidden 8,192, 64 heads, ffn 28,672): a layer
//     973,078,528, the head 1,073,741,824, the total 78,920,024,064; at
//     pp 4 the thresholds are 20.28, 40.55 and 60.83 layers' worth, so
//     stages 0-2 end after layers 21, 41 and 61: 21, 20, 20, 19,
//     written first=21,last=19;
//   - 8.86B (32 layers, hidden 4,096, ffn 14,336) at pp 4: 9, 9, 8, 6,
//     which first= and last= cannot write (the middle stages differ): "";
//   - 1.34B at pp 4: the head alone on the last stage (6, 5, 5, 0): nil;
//   - an even split (8.86B at pp 1): one stage, "".
func TestNanotronStages(t *testing.T) {
	for _, c := range []struct {
		name                           string
		layers, hidden, heads, ffn, pp int
		want                           []int
		ends                           string
	}{
		{"1.34B pp 2", 16, 2048, 32, 8192, 2, []int{11, 5}, ",first=11,last=5"},
		{"80B pp 4", 80, 8192, 64, 28672, 4, []int{21, 20, 20, 19}, ",first=21,last=19"},
		{"8.86B pp 4", 32, 4096, 32, 14336, 4, []int{9, 9, 8, 6}, ""},
		{"1.34B pp 4", 16, 2048, 32, 8192, 4, nil, ""},
		{"8.86B pp 1", 32, 4096, 32, 14336, 1, []int{32}, ""},
	} {
		got := nanotronStages(c.layers, c.hidden, c.heads, c.ffn, 131072, c.pp)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: stages %v, want %v", c.name, got, c.want)
		}
		if e := nanotronEnds(got); e != c.ends {
			t.Errorf("%s: written %q, want %q", c.name, e, c.ends)
		}
	}
}
