package published

import (
	"context"
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/search"
)

// TestMegatronBridgeRows: every row's stated plan resolves on its pod as
// the table states it (GPUs, TP x CP x PP x DP, EP, micro-batches).
func TestMegatronBridgeRows(t *testing.T) {
	want := []struct{ tp, cp, pp, dp, vp, ep, etp, M int }{
		{1, 1, 1, 8, 1, 1, 1, 16}, {4, 1, 8, 2, 5, 1, 4, 64}, {8, 2, 8, 8, 8, 1, 8, 64},
		{1, 1, 4, 16, 1, 8, 1, 8}, {1, 1, 2, 8, 24, 8, 1, 32}, {2, 1, 8, 16, 4, 32, 1, 128},
	}
	for i, row := range MegatronBridge() {
		p, err := plan.PodOf(row.Pod, row.GPUs)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(row.Model, row.Strategy, p)
		if err != nil {
			t.Errorf("%s: %v", row.Name, err)
			continue
		}
		w := want[i]
		if pl.TP != w.tp || pl.CP != w.cp || pl.PP != w.pp || pl.DP != w.dp || pl.VP != w.vp || pl.EP != w.ep || pl.ETP != w.etp || pl.NumMicro != w.M {
			t.Errorf("%s: %s (EP %d, ETP %d, M %d), want %+v", row.Name, pl, pl.EP, pl.ETP, pl.NumMicro, w)
		}
	}
}

// BenchmarkSearchBridgeLargest: the search of Megatron-Bridge's largest
// rows: Llama 3.1 405B on 1,024 H100s and Qwen3-235B-A22B on 256, FP8
// (at most 10 CPU s each).
//
//	go test -run xxx -bench SearchBridgeLargest -benchtime 1x ./planner
func BenchmarkSearchBridgeLargest(b *testing.B) {
	rows := MegatronBridge()
	for _, row := range []Row{rows[2], rows[5]} {
		b.Run(strings.ReplaceAll(row.Name, " ", "-"), func(b *testing.B) {
			p, err := plan.PodOf(row.Pod, row.GPUs)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				got, err := search.Search(context.Background(), row.Model, p, search.Space{FP8: row.Strategy.FP8})
				if err != nil || !got.Found {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSearchBridgeLargestFor: BenchmarkSearchBridgeLargest's
// searches for Megatron-LM (workloads/export/plans' SearchTarget("megatron"):
// fewer plans) and for any framework (the embedding and loss splits
// added to every plan: more).
//
//	go test -run xxx -bench SearchBridgeLargestFor -benchtime 3x ./planner
func BenchmarkSearchBridgeLargestFor(b *testing.B) {
	rows := MegatronBridge()
	for _, t := range []search.Target{{Name: "megatron", OneTensor: true, EndChunks: true, UnitSplits: true}, {Name: "any", UnitSplits: true}} {
		for _, row := range []Row{rows[2], rows[5]} {
			b.Run(t.Name+"/"+strings.ReplaceAll(row.Name, " ", "-"), func(b *testing.B) {
				p, err := plan.PodOf(row.Pod, row.GPUs)
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					got, err := search.Search(context.Background(), row.Model, p, search.Space{FP8: row.Strategy.FP8, For: t})
					if err != nil || !got.Found {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestBridgeRowsStacks: every row of the Megatron-Bridge by-release
// sweeps names the stack of the release in its label, and the settings
// in effect are its release's with its model's own (by hand, from the
// recipes: 25.09's Qwen3 rows capacity factor 1; Qwen3-30B-A3B the flex
// dispatcher from 26.02 on, DeepEP in 26.02, HybridEP from 26.02.01;
// everything else the all-to-all dispatcher, dropless).
func TestBridgeRowsStacks(t *testing.T) {
	type run struct {
		dispatcher string
		capacity   float64
		hybridEP   bool
	}
	a2a, drop, flex := run{plan.DispatcherAllToAll, 0, false}, run{plan.DispatcherAllToAll, 1, false}, run{plan.DispatcherFlex, 0, false}
	hybrid := run{plan.DispatcherFlex, 0, true}
	wants := map[string]map[string]run{
		"Llama 3 8B":      {"25.09": a2a, "25.11": a2a},
		"Llama 3 70B":     {"25.09": a2a, "25.11": a2a, "26.02": a2a, "26.02.01": a2a, "26.04": a2a, "26.04.01": a2a},
		"Llama 3.1 405B":  {"25.09": a2a, "25.11": a2a, "26.02": a2a, "26.04.01": a2a, "26.06": a2a},
		"GPT-OSS 120B":    {"25.11": a2a, "26.02": a2a, "26.02.01": a2a, "26.04": a2a, "26.04.01": a2a, "26.06": a2a},
		"Qwen3-30B-A3B":   {"25.09": drop, "25.11": a2a, "26.02": flex, "26.02.01": hybrid, "26.04": hybrid, "26.04.01": hybrid, "26.06": hybrid},
		"Qwen3-235B-A22B": {"25.09": drop, "25.11": a2a, "26.02": a2a, "26.02.01": a2a, "26.04": a2a, "26.04.01": a2a},
	}
	const prefix = "Megatron-Bridge DGX-H100 by release: "
	seen := 0
	for _, sw := range publishedSweeps() {
		if !strings.HasPrefix(sw.Name, prefix) {
			continue
		}
		var model string
		for k := range wants {
			if strings.HasPrefix(sw.Name, prefix+k+",") || strings.HasPrefix(sw.Name, prefix+k+" ") {
				model = k
			}
		}
		if model == "" {
			t.Errorf("%s: no expectation", sw.Name)
			continue
		}
		seen++
		if len(sw.Rows) != len(wants[model]) {
			t.Errorf("%s: %d rows, want %d", sw.Name, len(sw.Rows), len(wants[model]))
		}
		for _, r := range sw.Rows {
			rel, _, _ := strings.Cut(r.Label, ":")
			w, ok := wants[model][rel]
			if !ok {
				t.Errorf("%s, %s: release %q not expected", sw.Name, r.Label, rel)
				continue
			}
			s, err := plan.ParseStrategy(r.Strategy)
			if err != nil {
				t.Errorf("%s, %s: %v", sw.Name, r.Label, err)
				continue
			}
			if s.Software.Stack != "megatron-bridge-"+rel {
				t.Errorf("%s, %s: stack %q, want megatron-bridge-%s", sw.Name, r.Label, s.Software.Stack, rel)
			}
			st := s.Software.Settings()
			if st.Dispatcher != w.dispatcher || st.HybridEP != w.hybridEP || st.Capacity != w.capacity || st.Graphs != plan.GraphsOff ||
				st.UnfusedPermute || st.UnfusedRouter || st.ExpertLoop {
				t.Errorf("%s, %s: %+v, want dispatcher %s (HybridEP %v), capacity %g, the rest fused, grouped, no graphs", sw.Name, r.Label, st, w.dispatcher, w.hybridEP, w.capacity)
			}
		}
	}
	if seen != len(wants) {
		t.Errorf("%d Megatron-Bridge sweeps, want %d", seen, len(wants))
	}
}

// TestBridgeGPTOSSRecompute: the DGX-H100 GPT-OSS 120B rows recompute
// what their release's recipe recomputes, by hand from the tags: 25.11
// (v0.2.0) nothing (its helper sets recompute_modules without
// recompute_granularity "selective"); 26.02 on (v0.3.0, v0.3.1, v0.4.0,
// v0.4.2, v0.5.0 gpt_oss_workload_base_configs.py
// GPT_OSS_120B_PRETRAIN_CONFIG_H100_BF16_V1 and utils/overrides.py
// _set_recompute_overrides) the norms and the experts' activation,
// selectively.
func TestBridgeGPTOSSRecompute(t *testing.T) {
	mods := plan.RecomputeLayerNorm | plan.RecomputeMoEAct
	want := map[string]plan.RecomputeModules{"25.11": 0, "26.02": mods, "26.02.01": mods, "26.04": mods, "26.04.01": mods, "26.06": mods}
	seen := 0
	for _, sw := range publishedSweeps() {
		if !strings.HasPrefix(sw.Name, "Megatron-Bridge DGX-H100 by release: GPT-OSS 120B") {
			continue
		}
		for _, r := range sw.Rows {
			rel, _, _ := strings.Cut(r.Label, ":")
			s, err := plan.ParseStrategy(r.Strategy)
			if err != nil {
				t.Fatalf("%s: %v", r.Label, err)
			}
			w, ok := want[rel]
			if !ok {
				t.Errorf("%s: release %q not expected", r.Label, rel)
				continue
			}
			seen++
			if got := s.Recomputes(); got != w {
				t.Errorf("%s: recomputes %v, want %v", r.Label, got, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d GPT-OSS H100 rows, want %d", seen, len(want))
	}
}
