package planner

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/torchenv/torchtest"
	"github.com/placer/placer/planner/eager"
)

// exporterCases runs placer_torch.profile.eagerops once for every case
// (--cases: each case's arguments a JSON line on its input, one result a
// line on its output; torch, transformers and the exporter imported once
// instead of once a case) and returns each case's ops summed as sumOps
// does, with the error the exporter gave where a case failed ("" where it
// did not). A python that does not run or answers for another number of
// cases fails t.
func exporterCases(t *testing.T, py string, cases [][]string) (ops []map[opKey]opSum, errs []string) {
	t.Helper()
	var in strings.Builder
	for _, args := range cases {
		line, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(line)
		in.WriteByte('\n')
	}
	cmd := exec.Command(py, "-m", "placer_torch.profile.eagerops", "--cases")
	// python -m runs it with the folder it starts in (placer_torch's) on
	// the import path; go test runs in this package's folder (a path
	// from the source file's name would not do: -trimpath drops it).
	cmd.Dir = filepath.Join("..", "python", "placer_torch")
	cmd.Stdin = strings.NewReader(in.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("placer_torch.profile.eagerops --cases (%d cases): %v\n%s", len(cases), err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("placer_torch.profile.eagerops --cases: %d results for %d cases\n%s", len(lines), len(cases), stderr.String())
	}
	for _, line := range lines {
		var got struct {
			Ops []struct {
				Type, Class, DType string
				FLOPs              float64
				Read, Written      float64
				Backward           bool
			} `json:"ops"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("placer_torch.profile.eagerops --cases: %v in %.200q", err, line)
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
		ops = append(ops, exp)
		errs = append(errs, got.Error)
	}
	return ops, errs
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

// TestEagerMoEOpsMatchExporter holds eager.MoEOps against the exporter's
// record of the real blocks (placer_torch.profile.eagerops --layer hf-moe:
// transformers' Qwen3MoeSparseMoeBlock with experts_implementation
// "eager"; titan-moe: its re-implementation of torchtitan v0.2.0's MoE),
// routing forced balanced (eagerops.py _route: the router's weight [I |
// 0] and each token's input carrying its experts' scores, so that token
// t goes to experts t*TopK ... t*TopK+TopK-1 mod Experts and each expert
// receives tokens x TopK / Experts copies): for every ATen op, class and
// dtype, in each direction, the same count, FLOPs, bytes read and bytes
// written.
func TestEagerMoEOpsMatchExporter(t *testing.T) {
	py := torchtest.Python(t, "transformers")
	cases := []struct {
		impl                                    eager.MoEImpl
		hidden, experts, topk, effn, seq, batch int
		bf16                                    bool
		shared                                  int
		loop                                    bool // torchtitan's for-loop
	}{
		{eager.MoEHFLoop, 64, 4, 2, 32, 16, 2, true, 0, false},
		{eager.MoEHFLoop, 64, 4, 2, 32, 16, 2, false, 0, false},
		{eager.MoEHFLoop, 96, 8, 3, 48, 16, 1, true, 0, false},
		// transformers' grouped_mm form (5.24's default).
		{eager.MoEHFGrouped, 64, 4, 2, 32, 16, 2, true, 0, false},
		{eager.MoEHFGrouped, 64, 4, 2, 32, 16, 2, false, 0, false},
		{eager.MoEHFGrouped, 96, 8, 3, 48, 16, 1, true, 0, false},
		// torchtitan's MoE (BF16 weights as FSDP2 runs it), torch._grouped_mm:
		// 16 copies an expert (a multiple of 8), 6 (padded to 8), and one
		// shared expert.
		{eager.MoETitan, 64, 4, 2, 32, 16, 2, true, 0, false},
		{eager.MoETitan, 96, 8, 3, 48, 16, 1, true, 0, false},
		{eager.MoETitan, 64, 4, 2, 32, 16, 2, true, 1, false},
		// torchtitan's for-loop experts (use_grouped_mm=False).
		{eager.MoETitan, 64, 4, 2, 32, 16, 2, true, 0, true},
		{eager.MoETitan, 96, 8, 3, 48, 16, 1, true, 0, true},
		// placer_torch.profile.layers' Experts (its own forced balance),
		// BF16 and autocast.
		{eager.MoELlamaPy, 64, 4, 2, 32, 16, 2, true, 0, false},
		{eager.MoELlamaPy, 64, 4, 2, 32, 16, 2, false, 0, false},
		{eager.MoELlamaPy, 96, 8, 3, 48, 16, 1, false, 0, false},
	}
	layerName := func(impl eager.MoEImpl) string {
		return [...]string{eager.MoEHFLoop: "hf-moe", eager.MoETitan: "titan-moe", eager.MoELlamaPy: "llama-moe", eager.MoEHFGrouped: "hf-moe-grouped"}[impl]
	}
	var args [][]string
	for _, tc := range cases {
		prec := "autocast"
		if tc.bf16 {
			prec = "bf16"
		}
		a := []string{"--layer", layerName(tc.impl), "--hidden", strconv.Itoa(tc.hidden), "--heads", "1", "--kv-heads", "1", "--ffn", "1",
			"--seq", strconv.Itoa(tc.seq), "--batch", strconv.Itoa(tc.batch), "--experts", strconv.Itoa(tc.experts),
			"--topk", strconv.Itoa(tc.topk), "--expert-ffn", strconv.Itoa(tc.effn), "--shared-experts", strconv.Itoa(tc.shared),
			"--precision", prec}
		if tc.impl == eager.MoETitan && !tc.loop {
			a = append(a, "--grouped")
		}
		args = append(args, a)
	}
	recorded, errs := exporterCases(t, py, args)
	for i, tc := range cases {
		name := fmt.Sprintf("%s-h%d-e%d-k%d-f%d-s%d-b%d-bf16%v-shared%d-loop%v", layerName(tc.impl), tc.hidden, tc.experts, tc.topk, tc.effn, tc.seq, tc.batch, tc.bf16, tc.shared, tc.loop)
		t.Run(name, func(t *testing.T) {
			if errs[i] != "" {
				t.Fatal(errs[i])
			}
			m := transformer.Spec{Layers: 1, Hidden: tc.hidden, Heads: 1, KVHeads: 1, FFN: tc.effn, Vocab: 1024, Seq: tc.seq, Batch: tc.batch,
				Family: "llama", Experts: tc.experts, TopK: tc.topk, ExpertFFN: tc.effn, SharedExperts: tc.shared}
			mine := sumOps(eager.MoEOps(m, eager.MoEShape{Tokens: tc.seq * tc.batch, Local: tc.experts, FP32Weights: !tc.bf16, Impl: tc.impl, Loop: tc.loop}))
			compareOps(t, recorded[i], mine, func(k opKey) bool { return k.typ == "_grouped_mm" })
		})
	}
}

// TestEagerMoEOpsByHand holds a tiny MoE block's list by hand: hidden
// 64, 4 experts of FFN 32, top-2, routing balanced (each expert's tokens
// = tokens x 2 / 4), BF16 weights.
func TestEagerMoEOpsByHand(t *testing.T) {
	m := transformer.Spec{Layers: 1, Hidden: 64, Heads: 1, KVHeads: 1, FFN: 32, Vocab: 1024, Seq: 32, Batch: 1, Family: "llama",
		Experts: 4, TopK: 2, ExpertFFN: 32}
	cases := []struct {
		name   string
		impl   eager.MoEImpl
		loop   bool
		tokens int
		// Forward and backward launches, the forward GEMMs' FLOPs, the
		// bytes select_backward writes.
		fwd, bwd     int
		gemm, selBwd float64
	}{
		// transformers' loop, 32 tokens (16 a expert). Forward: the
		// router 8 (mm, cast, softmax, topk, sum, clone, div_, cast), the
		// mask and experts hit 7 (zeros_like, aminmax, zeros, scatter_,
		// sum, gt, nonzero), 10 an expert (eq, nonzero, index, mm, silu,
		// mul, mm, index, mul, index_add_): 55. Backward: 18 an expert
		// and 4 sums of the other experts' gradients (top-k weights,
		// down, gate-up, input) for each but the first, the two 3-D
		// weights' copy_, the router's 14: 4 x 18 + 3 x 4 + 2 + 14 = 100.
		// GEMMs: the router 2 x 32 x 64 x 4 = 16,384, the experts 6 x
		// 64 copies x 64 x 32 = 786,432. select_backward: each of 4
		// experts writes both whole weights, 4 x (4 x 128 x 64 + 4 x 64 x
		// 32) x 2 bytes = 196,608.
		{"hf-loop-32", eager.MoEHFLoop, false, 32, 55, 100, 16384 + 786432, 196608},
		// transformers' grouped_mm form, 32 tokens: the router 8, sort,
		// floor_divide, the copies' and weights' index, the ids' cast,
		// histc, cumsum, 2 grouped GEMMs with silu and mul, the weights'
		// mul, arange, index_put_ (the inverse order), index, sum: 24
		// (empty_like allocates). Backward 34: clone, new_zeros,
		// index_put, mul, mul, sum, 2 grouped GEMMs and a copy_, mul,
		// mul, silu_backward, cat, 2 grouped GEMMs and a copy_, the
		// weights' and the tokens' new_zeros and index_put, the router's
		// 14. GEMMs as the loop's.
		{"hf-grouped-32", eager.MoEHFGrouped, false, 32, 24, 34, 16384 + 786432, 0},
		// torchtitan's grouped path, 32 tokens: forward the router 10
		// (mm, cast, softmax, add of the bias, topk, gather, sum, add,
		// div, mul), the counts and order 7 (histc x 2, add_, sort,
		// index, floor_divide, gather), generate_permute_indices 12, the
		// padded permutation 4 (new_zeros, cat, index, cumsum), the
		// experts 5 (3 grouped GEMMs, silu, mul), index_put_, the combine
		// 5 (zeros_like, cast, mul, cast, scatter_add): 44. The grouped
		// GEMMs cover 16 rows an expert (a multiple of 8): 786,432.
		{"titan-32", eager.MoETitan, false, 32, 44, 43, 16384 + 786432, 0},
		// 12 tokens: 6 copies an expert, padded to 8: the grouped GEMMs
		// cover 32 rows, 3 x 2 x 32 x 64 x 32 = 393,216; the router 2 x
		// 12 x 64 x 4 = 6,144.
		// torchtitan's for-loop, 32 tokens: the router and order as
		// grouped (17), 5 an expert (mm, silu, mm, mul, mm: 20), cat,
		// the padding's new_zeros, cat, the combine's 5: 45. Backward:
		// the combine's 6, 13 an expert (6 matmuls, 3 select_backward,
		// mul, mul, silu_backward, the copies' join: 52), 3 sums of the
		// weights' gradients for each but the first (9), the 3 copy_,
		// cat and slice_backward, the gather's new_zeros and
		// scatter_add, the scores' 14, the router's 2 mm, the input's
		// add, its copy_: 92. select_backward: 3 weights x 4 experts x
		// 4 x 64 x 32 x 2 bytes = 196,608.
		{"titan-loop-32", eager.MoETitan, true, 32, 45, 92, 16384 + 786432, 196608},
		{"titan-12", eager.MoETitan, false, 12, 44, 43, 6144 + 393216, 0},
		// layers.py's Experts, 32 tokens: forward the router 4 (mm, cast,
		// softmax, topk), the forced routing and order 4 (arange,
		// remainder, sort, floor_divide), index_select, 2 bmm with silu
		// and mul between, zeros_like, index_copy, the weights' cast, mul,
		// sum: 18, whatever the experts. Backward: mul, mul, sum, cast,
		// index_select, 2 bmm and a copy_, mul, mul, silu_backward, cat,
		// 2 bmm and a copy_, new_zeros, index_add, new_zeros, scatter,
		// softmax's, cast, 2 mm, the input's add, the router's copy_: 25.
		{"llama-32", eager.MoELlamaPy, false, 32, 18, 25, 16384 + 786432, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var fwd, bwd int
			var gemm, sel float64
			for _, o := range eager.MoEOps(m, eager.MoEShape{Tokens: tc.tokens, Local: 4, Impl: tc.impl, Loop: tc.loop}) {
				if o.Backward {
					bwd += o.Launches
				} else {
					fwd += o.Launches
					if o.Class.String() == "matmul" {
						gemm += o.FLOPs
					}
				}
				if o.Type == "select_backward" {
					sel += o.Written
				}
			}
			if fwd != tc.fwd || bwd != tc.bwd || gemm != tc.gemm || sel != tc.selBwd {
				t.Errorf("launches %d/%d, forward GEMM FLOPs %.0f, select_backward %.0f B; want %d/%d, %.0f, %.0f",
					fwd, bwd, gemm, sel, tc.fwd, tc.bwd, tc.gemm, tc.selBwd)
			}
		})
	}
}
