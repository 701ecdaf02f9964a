package planner

import (
	"testing"

	"github.com/placer/placer/planner/kernels"
)

// TestDrain: a tail issued from an empty queue, by hand. A host of 10 us
// a launch and 5 us a call; 3 us of kernels still queued (ahead). Two
// launches of 2 us each: issued at 10 and 20 us, the GPU idle 7 and 8
// us before them; four calls of 10 us each: issued at 25, 30, 35 and 40
// us, the first after 3 us idle, the others queued behind it (the GPU
// busy to 65 us); one launch of 1 us issued at 50 us, queued. Idle 18
// us, of which the first issue's 10 are expose's: stall 8 us. Kernels
// longer than their issue behind 20 us of queued work: no stall. No
// host: none.
func TestDrain(t *testing.T) {
	h := kernels.Host{Issue: 10e-6, Launch: 5e-6}
	a := phase{Busy: 4e-6, Launches: 2}
	b := phase{Busy: 40e-6, Calls: 4}
	c := phase{Busy: 1e-6, Launches: 1}
	for _, tc := range []struct {
		name  string
		h     kernels.Host
		ahead float64
		steps []phase
		want  syncTail
	}{
		{"host-bound start", h, 3e-6, []phase{a, b, c}, syncTail{Launches: 3, Calls: 4, Busy: 45e-6, Stall: 8e-6}},
		{"kernels ahead", h, 20e-6, []phase{{Busy: 100e-6, Launches: 2}, b}, syncTail{Launches: 2, Calls: 4, Busy: 140e-6}},
		{"no host", kernels.Host{}, 0, []phase{a, b, c}, syncTail{Launches: 3, Calls: 4, Busy: 45e-6}},
	} {
		got := drain(registered, &tc.h, tc.ahead, tc.steps...)
		if got.Launches != tc.want.Launches || got.Calls != tc.want.Calls || !near(got.Busy, tc.want.Busy) ||
			(tc.want.Stall == 0 && got.Stall != 0) || (tc.want.Stall > 0 && !near(got.Stall, tc.want.Stall)) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestHostExposeTail: a phase with a synchronization's tail, by hand.
// 1 ms of kernels in 100 launches and 16 calls, one synchronization; 40
// launches and all 16 calls after it (0.2 ms of the kernels) stalled the
// GPU 0.3 ms. Host 14 us a launch, 10 us a call, 186 us a sync: before
// the tail 60 x 14 = 840 us of issue against 0.8 ms of kernels, 40 us
// waited; the sync 186 + 14; the stall 300: 540 us. The calls alone,
// without a tail, 100 x 14 + 16 x 10 = 1,560 us of issue: 560 us beyond
// the kernels, 760 with the sync.
func TestHostExposeTail(t *testing.T) {
	h := kernels.Host{Issue: 14e-6, IssueBwd: 18e-6, Sync: 186e-6, Launch: 10e-6}
	tl := phase{Busy: 1e-3, Launches: 100, Calls: 16, Syncs: 1, Tail: syncTail{Launches: 40, Calls: 16, Busy: 0.2e-3, Stall: 0.3e-3}}
	bare := tl
	bare.Tail = syncTail{}
	for _, c := range []struct {
		name string
		ph   phase
		wait float64
	}{{"tail", tl, 40e-6 + 200e-6 + 300e-6}, {"no tail", bare, 560e-6 + 200e-6}} {
		if got := expose(registered, &h, c.ph, false); !near(got.HostExposed, c.wait) || !near(got.Busy, 1e-3+c.wait) {
			t.Errorf("%s: waited %g, busy %g; want %g, %g", c.name, got.HostExposed, got.Busy, c.wait, 1e-3+c.wait)
		}
	}
}

// TestMoEHostTail: what one MoE layer of Qwen3-30B-A3B at EP 8 (16 local
// experts, BF16) issues after its synchronization, by hand
// (token_dispatcher.py MoEAlltoAllTokenDispatcher, core_v0.16.0):
//   - default (alltoall, Transformer Engine's grouped GEMM): the tokens'
//     all-to-all (1), half the bookkeeping less the counts' gather (the
//     probabilities' all-to-all and the sort, 3 / 2), the experts (FC1,
//     the activation, FC2: 3 launches and 2 x 16 calls), the other half
//     (3 / 2), the combine (1) and the unpermute (1): 9 launches, 32
//     calls; forward 32 calls, backward 64 (data and weight gradients);
//     one synchronization forward, none backward (the splits are on the
//     host by then);
//   - grouped-gemm=off: SequentialMLP's 16 x 3 launches and the cat (49)
//     for the grouped 3, no calls: 55 launches;
//   - flex: half of DeepEP's two (1), the permute (1), the experts (3),
//     the unpermute (1), the combine (1): 7;
//   - allgather: the permute, the experts, the unpermute and half of
//     its four collectives (2): 7;
//   - torchtitan (compile=on, torch._grouped_mm; its permutation costed
//     as Megatron-Core's unfused one, three syncs more): the all-to-all's
//     half (1), the experts (3), the unfused unpermute (8) and the other
//     half (1), no bookkeeping, no calls: 13;
//   - capacity routing: no synchronization, no tail;
//   - fp8=current: each grouped GEMM's input cast (amax and cast, 2
//     launches) per expert (split_quantize), 2 x 15 x 2 = 60 calls more
//     each way: 92 forward, 124 backward; the tail's experts 3 + 4
//     launches: 13 launches, 92 calls;
//   - fp8=blockwise: one kernel a cast, 30 calls more: 62 and 94; 3 + 2
//     launches: 11;
//   - fp8=delayed: one fused cast of every split: no calls more, 11
//     launches;
//   - each FP8 recipe pads the experts' rows to the GEMM's alignment
//     (TEGroupedMLP's quantization_padding: the tokens, the
//     probabilities, the output's unpadding): 3 launches more.
func TestMoEHostTail(t *testing.T) {
	for _, c := range []struct {
		keys                    string
		launches, calls, fCalls float64
		bCalls, syncs           float64
	}{
		{"", 9, 32, 32, 64, 1},
		{"grouped-gemm=off", 55, 0, 0, 0, 1},
		{"dispatcher=flex", 7, 32, 32, 64, 1},
		{"dispatcher=allgather", 7, 32, 32, 64, 2},
		{"stack=torchtitan-0.2,compile=on", 13, 0, 0, 0, 4},
		{"routing=capacity:1", 0, 0, 32, 64, 0},
		{"fp8=current", 13 + 3, 92, 92, 124, 1},
		{"fp8=blockwise", 11 + 3, 62, 62, 94, 1},
		{"fp8=delayed", 11 + 3, 32, 32, 64, 1},
	} {
		k := "dp=8,ep=8,mbs=1"
		if c.keys != "" {
			k += "," + c.keys
		}
		cc := stackCoster(t, stackMoE, k, "dgx-h100:1")
		f, b, _ := cc.moe()
		if f.Tail.Launches != c.launches || f.Tail.Calls != c.calls || f.Calls != c.fCalls || b.Calls != c.bCalls ||
			f.Syncs != c.syncs || b.Syncs != 0 || b.Tail != (syncTail{}) {
			t.Errorf("%q: tail %+v, calls %g and %g, syncs %g and %g; want %g launches and %g calls, %g and %g, %g and 0",
				c.keys, f.Tail, f.Calls, b.Calls, f.Syncs, b.Syncs, c.launches, c.calls, c.fCalls, c.bCalls, c.syncs)
		}
	}
}

// TestMoEHostBatches: the tail's stall at two micro-batches of
// Qwen3-30B-A3B at EP 8, the default stack. 4,096 tokens: the permute
// issued before the synchronization and the tokens' all-to-all of
// 32,768 copies of 4 KB outlast every issue after them: no stall. 128
// tokens under a host of 1 ms an issue (launch or call): the 9 launches
// and 32 calls each outlast their kernels (the tail's GPU time under 1
// ms in all), so the GPU waits 41 issues less what it runs between them
// and less the first issue (expose's): 40 ms less at most the tail's
// and the permute's GPU time. Under the H100's measured host (14.04 us
// a launch, 10.61 a call) the small batch stalls, the large does not;
// the stall is in the forward's busy time.
func TestMoEHostBatches(t *testing.T) {
	slow := kernels.Host{Issue: 1e-3, IssueBwd: 1e-3, Launch: 1e-3}
	for _, c := range []struct {
		name, workload string
		host           *kernels.Host
		lo, hi         float64 // the stall's bounds; -1: the tail's and permute's GPU time below 40 ms
	}{
		{"4,096 tokens", stackMoE, nil, 0, 0},
		{"128 tokens, slow host", "qwen3-30b-a3b:seq=128,batch=512", &slow, -1, 40e-3},
		{"128 tokens", "qwen3-30b-a3b:seq=128,batch=512", nil, 1e-6, 1},
	} {
		cc := stackCoster(t, c.workload, "dp=8,ep=8,mbs=1", "dgx-h100:1")
		if c.host != nil {
			cc.Pod.Kernels.Host = *c.host
		}
		f, _, _ := cc.moe()
		_, _, perm, _ := moeGlue(cc.M, cc.Tokens)
		lo := c.lo
		if lo < 0 {
			if f.Tail.Busy >= 1e-3 {
				t.Fatalf("%s: the tail's kernels take %g s, not under 1 ms", c.name, f.Tail.Busy)
			}
			lo = 40e-3 - f.Tail.Busy - perm.Time(cc.H)
		}
		if f.Tail.Stall < lo || f.Tail.Stall > c.hi {
			t.Errorf("%s: stall %g s, want within [%g, %g]", c.name, f.Tail.Stall, lo, c.hi)
		}
		h := &cc.Pod.Kernels.Host
		if e := expose(registered, h, f, false); !(e.HostExposed >= f.Tail.Stall+f.Syncs*(h.Sync+h.Issue)) {
			t.Errorf("%s: exposed %g, below the stall %g and the sync's", c.name, e.HostExposed, f.Tail.Stall)
		}
	}
}
