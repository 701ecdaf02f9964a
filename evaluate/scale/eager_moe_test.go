package scale

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
)

// exporterOps runs tools/profile/eagerops.py with args and sums its ops
// as sumOps does.
func exporterOps(t *testing.T, py string, args ...string) map[opKey]opSum {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "tools", "profile", "eagerops.py")
	cmd := exec.Command(py, append([]string{script}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("eagerops.py %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var got struct {
		Ops []struct {
			Type, Class, DType string
			FLOPs              float64
			Read, Written      float64
			Backward           bool
		} `json:"ops"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	exp := map[opKey]opSum{}
	for _, o := range got.Ops {
		k := opKey{bwd: o.Backward, typ: o.Type, class: o.Class, dtype: o.DType}
		s := exp[k]
		s.n++
		s.flops += o.FLOPs
		s.read += o.Read
		s.written += o.Written
		exp[k] = s
	}
	return exp
}

// compareOps reports every op key whose count, FLOPs (unless noFLOPs
// says the key's are not compared), bytes read or bytes written differ.
func compareOps(t *testing.T, exp, mine map[opKey]opSum, noFLOPs func(opKey) bool) {
	t.Helper()
	keys := map[opKey]bool{}
	for k := range exp {
		keys[k] = true
	}
	for k := range mine {
		keys[k] = true
	}
	var bad []string
	for k := range keys {
		e, g := exp[k], mine[k]
		if e.n != g.n || (!noFLOPs(k) && e.flops != g.flops) || e.read != g.read || e.written != g.written {
			bad = append(bad, fmt.Sprintf("bwd=%v %s %s %s: exporter %d ops %.0f FLOPs %.0f/%.0f B, list %d ops %.0f FLOPs %.0f/%.0f B",
				k.bwd, k.typ, k.class, k.dtype, e.n, e.flops, e.read, e.written, g.n, g.flops, g.read, g.written))
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestEagerMoEOpsMatchExporter holds EagerMoEOps against the exporter's
// record of the real blocks (tools/profile/eagerops.py --layer hf-moe:
// transformers' Qwen3MoeSparseMoeBlock with experts_implementation
// "eager"; titan-moe: its re-implementation of torchtitan v0.2.0's MoE),
// routing forced balanced (eagerops.py _route: the router's weight [I |
// 0] and each token's input carrying its experts' scores, so that token
// t goes to experts t*TopK ... t*TopK+TopK-1 mod Experts and each expert
// receives tokens x TopK / Experts copies): for every ATen op, class and
// dtype, in each direction, the same count, FLOPs, bytes read and bytes
// written.
func TestEagerMoEOpsMatchExporter(t *testing.T) {
	py := torchPython()
	if py == "" {
		t.Skip("no PyTorch virtualenv (make venv, or TORCH_PY): the exporter cannot run")
	}
	cases := []struct {
		impl                                    MoEImpl
		hidden, experts, topk, effn, seq, batch int
		bf16, loop                              bool
		shared                                  int
	}{
		{MoEHFLoop, 64, 4, 2, 32, 16, 2, true, false, 0},
		{MoEHFLoop, 64, 4, 2, 32, 16, 2, false, false, 0},
		{MoEHFLoop, 96, 8, 3, 48, 16, 1, true, false, 0},
		// torchtitan's MoE (BF16 weights as FSDP2 runs it), torch._grouped_mm:
		// 16 copies an expert (a multiple of 8), 6 (padded to 8), and one
		// shared expert.
		{MoETitan, 64, 4, 2, 32, 16, 2, true, false, 0},
		{MoETitan, 96, 8, 3, 48, 16, 1, true, false, 0},
		{MoETitan, 64, 4, 2, 32, 16, 2, true, false, 1},
	}
	for _, tc := range cases {
		layer := [...]string{MoEHFLoop: "hf-moe", MoETitan: "titan-moe"}[tc.impl]
		name := fmt.Sprintf("%s-h%d-e%d-k%d-f%d-s%d-b%d-bf16%v-loop%v-shared%d", layer, tc.hidden, tc.experts, tc.topk, tc.effn, tc.seq, tc.batch, tc.bf16, tc.loop, tc.shared)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prec := "autocast"
			if tc.bf16 {
				prec = "bf16"
			}
			args := []string{"--layer", layer, "--hidden", strconv.Itoa(tc.hidden), "--heads", "1", "--kv-heads", "1", "--ffn", "1",
				"--seq", strconv.Itoa(tc.seq), "--batch", strconv.Itoa(tc.batch), "--experts", strconv.Itoa(tc.experts),
				"--topk", strconv.Itoa(tc.topk), "--expert-ffn", strconv.Itoa(tc.effn), "--shared-experts", strconv.Itoa(tc.shared),
				"--precision", prec}
			if tc.impl == MoETitan && !tc.loop {
				args = append(args, "--grouped")
			}
			exp := exporterOps(t, py, args...)
			m := transformer.Spec{Layers: 1, Hidden: tc.hidden, Heads: 1, KVHeads: 1, FFN: tc.effn, Vocab: 1024, Seq: tc.seq, Batch: tc.batch,
				Family: "llama", Experts: tc.experts, TopK: tc.topk, ExpertFFN: tc.effn, SharedExperts: tc.shared}
			mine := sumOps(EagerMoEOps(m, EagerMoEShape{Tokens: tc.seq * tc.batch, Local: tc.experts, FP32Weights: !tc.bf16, Impl: tc.impl, Loop: tc.loop}))
			compareOps(t, exp, mine, func(k opKey) bool { return k.typ == "_grouped_mm" })
		})
	}
}
