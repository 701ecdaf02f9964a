package planner

import (
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestOneQueueSends: connections=1 (CUDA_DEVICE_MAX_CONNECTIONS=1, one
// hardware queue) charges each micro-batch's model chunk four exposed
// pipeline transfers (the forward's receive and send, the backward's),
// worked by hand on a toy pod: a NIC of 1e9 B/s and 1 us latency,
// free NVLink. GPT of 8 layers, hidden 64, sequence 32, batch 8 on 4
// nodes of 8: tp=8, pp=4, vp=2, mbs=1, so dp=1 and M=8 micro-batches;
// a stage is one node, every boundary crosses nodes. Each rank sends
// its 1/8 of the activation: 32 tokens x 64 x 2 B / 8 = 512 B, so a
// transfer is 512 / 1e9 + 1e-6 = 1.512 us; the steady state adds
// 4 x M x V = 4 x 8 x 2 = 64 of them, 96.768 us, to the bubble and to
// the step. No replica: no data-parallel traffic to expose.
func TestOneQueueSends(t *testing.T) {
	eval := oneQueueToy(t)
	base := eval("tp=8,pp=4,vp=2,mbs=1")
	one := eval("tp=8,pp=4,vp=2,mbs=1,connections=1")
	if one.Plan.NumMicro != 8 || one.Plan.DP != 1 || !strings.Contains(one.Plan.String(), "connections=1") {
		t.Fatalf("plan %s, M %d", one.Plan, one.Plan.NumMicro)
	}
	want := 64 * (512/1e9 + 1e-6)
	if got := one.Bubble - base.Bubble; !near(got, want) {
		t.Errorf("steady sends %g s, want %g", got, want)
	}
	if got := one.Step - base.Step; !near(got, want) {
		t.Errorf("step grew %g s, want %g", got, want)
	}
	// connections=32 is the default's: nothing added.
	if r := eval("tp=8,pp=4,vp=2,mbs=1,connections=32"); r.Step != base.Step {
		t.Errorf("connections=32: step %g, want %g", r.Step, base.Step)
	}
	// Without interleaving (vp=1) Megatron batches each send with its
	// receive and waits for them at any number of queues: nothing added.
	if a, b := eval("tp=8,pp=4,mbs=1"), eval("tp=8,pp=4,mbs=1,connections=1"); a.Step != b.Step {
		t.Errorf("vp=1: step %g at one queue, want %g", b.Step, a.Step)
	}
}

// TestOneQueueDP: with connections=1 the distributed optimizer's
// reduce-scatter and all-gather are exposed whole (NVIDIA/Megatron-LM#1468's
// trace: nothing overlapped at CUDA_DEVICE_MAX_CONNECTIONS=1),
// where otherwise the backward and the forward hide them: a 0.5 s
// reduce-scatter beside a 10 s idle-free backward window adds 0.5 s at
// one queue and less without; the same for a 0.25 s all-gather.
func TestOneQueueDP(t *testing.T) {
	p, _ := plan.PodOf("dgx-h100", 16)
	c, w := plan.Comm{Time: 0.5}, plan.Window{Busy: 10, Compute: 10}
	ag := plan.Comm{Time: 0.25}
	var one, two plan.Plan
	one.OneQueue = true
	if got := afterBwd(&one, &p, c, w); got != 0.5 {
		t.Errorf("one queue: reduce-scatter adds %g s, want 0.5", got)
	}
	if got := beforeFwd(&one, &p, ag, w); got != 0.25 {
		t.Errorf("one queue: all-gather adds %g s, want 0.25", got)
	}
	if got, hid := afterBwd(&two, &p, c, w), p.BesideIn(c, w); got != hid || got >= 0.5 {
		t.Errorf("more queues: reduce-scatter adds %g s, want BesideIn's %g (< 0.5)", got, hid)
	}
	if got, hid := beforeFwd(&two, &p, ag, w), p.BesideIn(ag, w); got != hid || got >= 0.25 {
		t.Errorf("more queues: all-gather adds %g s, want BesideIn's %g (< 0.25)", got, hid)
	}
}

// TestOneQueueBadInput: a count below 1 or not a count, and FSDP at one
// queue (Megatron's FSDP asserts it is not 1), are one-line errors.
func TestOneQueueBadInput(t *testing.T) {
	for _, text := range []string{"tp=2,connections=0", "tp=2,connections=one", "dp=4,fsdp=on,connections=1"} {
		s, err := plan.ParseStrategy(text)
		if err == nil {
			m := transformer.GPT(4, 64, 8, 32, 128, 8)
			p, _ := plan.PodOf("dgx-h100", 8)
			_, err = Evaluate(m, s, p)
		}
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v, want one line", text, err)
		}
	}
}

// TestOneQueueAhead: queue-ahead=on (the run launches each transfer and
// bucket ahead of the compute hiding it, as NVIDIA's MLPerf GPT-3 code
// does at CUDA_DEVICE_MAX_CONNECTIONS=1) prices one queue as many. On
// TestOneQueueSends' toy pod the 64 steady-state transfers (96.768 us at
// connections=1 alone) add nothing: the step is the default's to the
// bit. On TestOneQueueDP's windows the 0.5 s reduce-scatter and the
// 0.25 s all-gather add BesideIn's share (less than whole), as without
// the key. Bad input: queue-ahead=on without connections=1, or not
// on/off, is a one-line error.
func TestOneQueueAhead(t *testing.T) {
	eval := oneQueueToy(t)
	base := eval("tp=8,pp=4,vp=2,mbs=1")
	one := eval("tp=8,pp=4,vp=2,mbs=1,connections=1")
	ahead := eval("tp=8,pp=4,vp=2,mbs=1,connections=1,queue-ahead=on")
	if got, want := one.Step-base.Step, 64*(512/1e9+1e-6); !near(got, want) {
		t.Errorf("connections=1: step grew %g s, want %g", got, want)
	}
	if ahead.Step != base.Step || ahead.Bubble != base.Bubble {
		t.Errorf("queue-ahead=on: step %g bubble %g, want the default's %g %g", ahead.Step, ahead.Bubble, base.Step, base.Bubble)
	}
	if !strings.Contains(ahead.Plan.String(), "connections=1,queue-ahead=on") {
		t.Errorf("plan %s", ahead.Plan)
	}

	dp, _ := plan.PodOf("dgx-h100", 16)
	c, w, ag := plan.Comm{Time: 0.5}, plan.Window{Busy: 10, Compute: 10}, plan.Comm{Time: 0.25}
	var pl plan.Plan
	pl.OneQueue, pl.QueueAhead = true, true
	if got, hid := afterBwd(&pl, &dp, c, w), dp.BesideIn(c, w); got != hid || got >= 0.5 {
		t.Errorf("queue-ahead: reduce-scatter adds %g s, want BesideIn's %g (< 0.5)", got, hid)
	}
	if got, hid := beforeFwd(&pl, &dp, ag, w), dp.BesideIn(ag, w); got != hid || got >= 0.25 {
		t.Errorf("queue-ahead: all-gather adds %g s, want BesideIn's %g (< 0.25)", got, hid)
	}

	for _, text := range []string{"tp=2,queue-ahead=on", "tp=2,connections=8,queue-ahead=on", "tp=2,connections=1,queue-ahead=soon"} {
		if _, err := plan.ParseStrategy(text); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v, want one line", text, err)
		}
	}
}

// oneQueueToy evaluates a strategy on TestOneQueueSends' toy pod: GPT of
// 8 layers, hidden 64, sequence 32, batch 8 on 4 nodes of 8, a NIC of
// 1e9 B/s and 1 us latency, free NVLink.
func oneQueueToy(t *testing.T) func(string) Result {
	t.Helper()
	m := transformer.GPT(8, 64, 8, 32, 128, 8)
	p, _ := plan.PodOf("dgx-h100", 32)
	p.Hardware = flopHardware()
	p.Hardware.NVLinkLatency = 0
	p.Kernels = kernels.Node{IntraBus: 1e30}
	p.NICBandwidth, p.NICLatency = 1e9, 1e-6
	return func(text string) Result {
		t.Helper()
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}
