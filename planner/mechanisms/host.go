package mechanisms

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// HostIssue is the host that issues a step's kernels against its GPU
// (cost.Host): the launches' and the synchronizations' time on the
// pod's measured host (kernels.Host), and what of it the GPU waits on,
// where the pod has one.
type HostIssue struct{}

var _ cost.Host = HostIssue{}

// Name is the mechanism's registered name.
func (HostIssue) Name() string { return "host-issue" }

// When is the host's declaration: a pod whose host issues its kernels
// at a measured rate or waits on its synchronizations (Expose charges
// it), not priced on its GPU alone (Shard.NoHost).
func (HostIssue) When() cost.When { return hostWhen }

var hostWhen = cost.When{
	cost.GPU("host measured", func(p *plan.Pod) bool {
		h := &p.Kernels.Host
		return h.Issue > 0 || h.IssueBwd > 0 || h.Sync > 0
	}),
	cost.WithHost,
}

// Expose is phase ph with its host's wait in busy (and in hostExposed):
// the launches' issue time beyond the kernels' own over the part of the
// phase before its synchronization's tail (the host keeps ahead where the
// kernels are longer than their issue), each synchronization's Sync plus
// one issue (the GPU idle while the host issues the first kernel after
// it), and the tail's stall (drain: the GPU idle while the host issues
// what follows the synchronization from an empty queue). bwd says which
// rate the launches take.
func (HostIssue) Expose(h *kernels.Host, ph cost.Phase, bwd bool) cost.Phase {
	rate := h.Issue
	if bwd {
		rate = h.IssueBwd
	}
	if rate <= 0 && h.Sync <= 0 {
		return ph
	}
	tl := ph.Tail
	before := (ph.Launches-tl.Launches)*rate + (ph.Calls-tl.Calls)*h.Launch + ph.Replays*h.Replay
	wait := max(0, before-(ph.Busy-tl.Busy)) + ph.Syncs*(h.Sync+rate) + tl.Stall
	ph.Busy += wait
	ph.HostExposed += wait
	return ph
}

// Drain is the tail of steps a host issues, in order, after a
// device-to-host synchronization (forward: Host.Issue a launch,
// Host.Launch a call), with ahead seconds of kernels it queued before
// the synchronization still to run (issued before it, not waited on).
// Each step's launches and calls are issued one by one (a fraction of
// one last), each followed by its share of the step's GPU time; a
// kernel starts when it is issued and the one before it is done. stall is the GPU's idle time
// over the tail beyond the first issue (which Expose charges each
// synchronization): the host's issue where the kernels are shorter than
// it. Zero with no host (its zero value).
func (HostIssue) Drain(h *kernels.Host, ahead float64, steps ...cost.Phase) cost.SyncTail {
	var tl cost.SyncTail
	host, gpu, idle := 0.0, ahead, 0.0
	for _, st := range steps {
		tl.Launches += st.Launches
		tl.Calls += st.Calls
		tl.Busy += st.Busy
		n := st.Launches + st.Calls
		if n <= 0 {
			gpu += st.Busy
			continue
		}
		issue := (st.Launches*h.Issue + st.Calls*h.Launch) / n
		run := st.Busy / n
		for i := 0.0; i < n; i++ {
			part := min(1, n-i) // a half launch: half a split collective
			host += issue * part
			if host > gpu {
				idle += host - gpu
				gpu = host
			}
			gpu += run * part
		}
	}
	tl.Stall = max(0, idle-h.Issue)
	return tl
}

// StageHost is stage st's host against its GPU under host h
// (cost.StageHost).
func (HostIssue) StageHost(h *kernels.Host, st *cost.Stage) cost.StageHost {
	f, b := &st.Fwd, &st.Bwd
	gpu := f.Busy - f.HostExposed + b.Busy - b.HostExposed
	loops := (f.Replays+b.Replays)*h.Replay + (f.Calls+b.Calls)*h.Launch
	issue := f.Launches*h.Issue + b.Launches*h.IssueBwd + loops +
		f.Syncs*(h.Sync+h.Issue) + b.Syncs*(h.Sync+h.IssueBwd)
	return cost.StageHost{Stage: st.Index, GPU: gpu, Issue: issue, Exposed: f.HostExposed + b.HostExposed,
		Launches: f.Launches + b.Launches + f.Calls + b.Calls, Syncs: f.Syncs + b.Syncs,
		Bound: f.Launches*h.Issue+b.Launches*h.IssueBwd+loops > gpu}
}
