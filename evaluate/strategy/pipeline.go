package strategy

import (
	"fmt"

	"github.com/placer/placer/decision"
)

// Stage is one pipeline stage's cost per micro-batch: its forward and
// backward time, and the time its forward output (activations) takes to
// reach the next stage and the gradient of its input to come back from it.
type Stage struct {
	Forward, Backward float64 // seconds per micro-batch
	// SendForward is the time the activations take to the next stage;
	// SendBackward the time the gradients take from the next stage back
	// to this one. Zero for the last stage.
	SendForward, SendBackward float64
}

// PipelineResult is a pipeline's timing.
type PipelineResult struct {
	Makespan float64 // from the first forward to the last backward
	// Busy and InFlight are per stage: the time it computes, and the most
	// micro-batches it holds activations of at once (forward done,
	// backward not yet).
	Busy     []float64
	InFlight []int
	// Start and Finish hold every task's times, for traces: index
	// (stage*M + micro-batch)*2, +0 forward, +1 backward.
	Start, Finish []float64
}

// Bubble is the share of the makespan stage s is idle.
func (r *PipelineResult) Bubble(s int) float64 {
	if r.Makespan == 0 {
		return 0
	}
	return 1 - r.Busy[s]/r.Makespan
}

// task is one forward or backward of one micro-batch on one stage.
type task struct {
	mb  int
	bwd bool
}

// Order is the order in which stage s of S runs the forwards and
// backwards of M micro-batches under schedule sched.
//
//   - GPipe (Huang et al., NeurIPS'19, as torch.distributed.pipelining's
//     ScheduleGPipe runs it): every forward in micro-batch order, then every
//     backward in micro-batch order.
//   - 1F1B (PipeDream-Flush; Narayanan et al., SC'21): min(S-s-1, M) warm-up
//     forwards, then one forward and one backward in turn, then the
//     remaining backwards: stage s holds at most S-s micro-batches.
func Order(sched decision.Schedule, s, S, M int) []task {
	out := make([]task, 0, 2*M)
	switch sched {
	case decision.OneFOneB:
		warm := min(S-s-1, M)
		for m := 0; m < warm; m++ {
			out = append(out, task{m, false})
		}
		for i := 0; i < M-warm; i++ {
			out = append(out, task{warm + i, false}, task{i, true})
		}
		for m := M - warm; m < M; m++ {
			out = append(out, task{m, true})
		}
	default:
		for m := 0; m < M; m++ {
			out = append(out, task{m, false})
		}
		for m := 0; m < M; m++ {
			out = append(out, task{m, true})
		}
	}
	return out
}

// Pipeline times M micro-batches through stages under schedule sched: a
// stage runs its tasks in Order, each as soon as the stage is free and its
// inputs are there (a forward after the previous stage's forward of the
// micro-batch and its send; a backward after its own forward and the next
// stage's backward and send back).
func Pipeline(stages []Stage, M int, sched decision.Schedule) (*PipelineResult, error) {
	S := len(stages)
	if S == 0 || M < 1 {
		return nil, fmt.Errorf("pipeline: %d stages, %d micro-batches", S, M)
	}
	orders := make([][]task, S)
	for s := range orders {
		orders[s] = Order(sched, s, S, M)
	}
	r := &PipelineResult{Busy: make([]float64, S), InFlight: make([]int, S), Start: make([]float64, 2*S*M), Finish: make([]float64, 2*S*M)}
	done := make([]bool, 2*S*M)
	idx := func(s, m int, bwd bool) int {
		k := (s*M + m) * 2
		if bwd {
			k++
		}
		return k
	}
	next := make([]int, S)     // next task of each stage
	free := make([]float64, S) // when each stage is free
	held := make([]int, S)     // micro-batches in flight
	left := 2 * S * M
	for left > 0 {
		progressed := false
		for s := 0; s < S; s++ {
			for next[s] < len(orders[s]) {
				t := orders[s][next[s]]
				ready, ok := 0.0, true
				if !t.bwd {
					if s > 0 {
						p := idx(s-1, t.mb, false)
						ok, ready = done[p], r.Finish[p]+stages[s-1].SendForward
					}
				} else {
					f := idx(s, t.mb, false)
					ok, ready = done[f], r.Finish[f]
					if s < S-1 {
						n := idx(s+1, t.mb, true)
						ok = ok && done[n]
						if ok {
							ready = max(ready, r.Finish[n]+stages[s].SendBackward)
						}
					}
				}
				if !ok {
					break
				}
				k := idx(s, t.mb, t.bwd)
				d := stages[s].Forward
				if t.bwd {
					d = stages[s].Backward
					held[s]--
				} else {
					held[s]++
					r.InFlight[s] = max(r.InFlight[s], held[s])
				}
				r.Start[k] = max(free[s], ready)
				r.Finish[k] = r.Start[k] + d
				free[s] = r.Finish[k]
				r.Busy[s] += d
				r.Makespan = max(r.Makespan, r.Finish[k])
				done[k] = true
				next[s]++
				left--
				progressed = true
			}
		}
		if !progressed {
			return nil, fmt.Errorf("pipeline: schedule %s deadlocked with %d tasks left (a bug)", sched, left)
		}
	}
	return r, nil
}
