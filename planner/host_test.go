package planner

import (
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestHostExpose: one phase by hand. 1 ms of kernels, 100 launches and a
// synchronization; a host of 14 us a launch forward, 18 us backward and
// 186 us a synchronization. Forward: issue 1.4 ms, 0.4 ms beyond the
// kernels, and the sync's 186 + 14 us: 0.6 ms waited. Backward: 1.8 ms
// of issue, 0.8 ms beyond, 186 + 18 us: 1.004 ms. A host that keeps
// ahead (its zero value) changes nothing, to the bit.
func TestHostExpose(t *testing.T) {
	h := kernels.Host{Issue: 14e-6, IssueBwd: 18e-6, Sync: 186e-6}
	ph := phase{Busy: 1e-3, TPAll: 2e-4, Launches: 100, Syncs: 1}
	for _, c := range []struct {
		bwd  bool
		wait float64
	}{{false, 0.4e-3 + 200e-6}, {true, 0.8e-3 + 204e-6}} {
		got := expose(registered, &h, ph, c.bwd)
		if !near(got.HostExposed, c.wait) || !near(got.Busy, 1e-3+c.wait) || got.TPAll != ph.TPAll {
			t.Errorf("bwd=%v: busy %g, waited %g; want %g, %g", c.bwd, got.Busy, got.HostExposed, 1e-3+c.wait, c.wait)
		}
	}
	// Kernels longer than their issue: only the synchronization waits.
	long := phase{Busy: 5e-3, Launches: 100, Syncs: 2}
	if got := expose(registered, &h, long, false); !near(got.HostExposed, 2*200e-6) {
		t.Errorf("GPU-bound: waited %g, want the two syncs' 400 us", got.HostExposed)
	}
	var none kernels.Host
	if got := expose(registered, &none, ph, true); got != ph {
		t.Errorf("no host: %+v, want the phase unchanged %+v", got, ph)
	}
}

// TestHostStages: a small model (hidden 512, 512 tokens a micro-batch) issues more
// kernel time than it runs (host-bound: the report says so per stage);
// Megatron-LM's 177B row at its published plan does not; a slower host
// never makes a plan faster (random plans of both).
func TestHostStages(t *testing.T) {
	p, _ := plan.PodOf("dgx-h100", 8)
	small := mustSpec(t, "llama:layers=8,hidden=512,heads=8,seq=512,vocab=32000,batch=64")
	s, _ := plan.ParseStrategy("tp=1,dp=8,mbs=1")
	r, err := Evaluate(small, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.HostStages) != 1 || !r.HostStages[0].Bound || !(r.HostStages[0].Exposed > 0) || !(r.HostExposed > 0) {
		t.Errorf("small model: %+v, exposed %g; want host-bound", r.HostStages, r.HostExposed)
	}
	big := megatronRow177B() // 177B: tp 8, pp 6 on 2,304 H100s
	bp, _ := plan.PodOf(big.Pod, big.GPUs)
	br, err := Evaluate(big.Model, big.Strategy, bp)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range br.HostStages {
		if st.Bound {
			t.Errorf("%s: stage %d host-bound (%+v)", big.Name, st.Stage, st)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 40; i++ {
		tp := []int{1, 2, 4, 8}[rng.IntN(4)]
		mbs := []int{1, 2, 4}[rng.IntN(3)]
		st := plan.Strategy{Tensor: tp, Replicas: 8 / tp, MicroBatchSize: mbs, SequenceParallel: tp > 1}
		slow := p
		slow.Kernels.Host.Issue *= 2
		slow.Kernels.Host.IssueBwd *= 2
		a, err1 := Evaluate(small, st, p)
		b, err2 := Evaluate(small, st, slow)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if b.Step < a.Step {
			t.Errorf("tp=%d mbs=%d: a host twice as slow gives %g s, faster than %g", tp, mbs, b.Step, a.Step)
		}
	}
}
