// Package roofline is placer's performance model: hardware presets and
// cluster topologies, the per-op roofline cost, fusion legality and
// fused-kernel cost, a discrete-event simulator that turns a
// decision.Decision into a step time and per-device peak memory, the lower
// bound every result is held against, and a Chrome trace-event timeline.
//
// The semantics are written down in docs/performance-model.md. In short:
//
//   - an op takes launch + max(flops / (peak(dtype, class) * eff_compute(class)),
//     bytes / (mem_bw * eff_mem(class))), or its measured time if it has one;
//   - each device runs one kernel at a time, choosing among its ready ops
//     the one with the highest priority (FIFO by ready time, ties by
//     topological index, when no priorities are given);
//   - a tensor consumed on another device is sent once per destination
//     device after its producer finishes; transfers occupy a channel of the
//     cluster for latency + bytes / bandwidth and queue behind each other
//     on it; they overlap compute (or, in synchronous mode, REGAL's, block
//     both the sending and the receiving device);
//   - parameters are resident for the whole step; an output is allocated
//     when its producer starts and freed when its last local consumer and
//     its last outbound send are done; a received copy is allocated when
//     its transfer starts and freed when its last consumer there is done.
//
// A Model is compiled once per graph and cluster; a Simulator evaluates
// decisions against it without allocating; an Evaluator wraps a pool of
// simulators for concurrent use.
//
// Where things are: evaluate/roofline/hardware (the presets, profiles
// and measured convolutions; hw.go names them here), cluster.go
// (topologies and channels), model.go (the compiled Model, op costs and
// the lower bound), evaluator.go (the pool of simulators) and trace.go
// (timelines and Chrome traces). The simulator is split by concern:
// sim.go holds the Simulator's state, NewSimulator and Run; fuse.go
// places the ops and forms the fused kernels; kernel.go sets up, starts
// and ends kernels and signals their successors; queue.go holds the
// resources' ready queues, events.go the ring of pending events, loop.go
// the event loops, transfer.go the transfers, memory.go the memory
// accounting, readahead.go the cache warming ahead of the loop, and
// result.go the filling of the Result; raw.go (raw_check.go under the
// simcheck tag) has the unchecked slice views of the hot loops.
//
// May import: graph, decision, evaluate, evaluate/roofline/convlayout, evaluate/roofline/hardware, internal/...
package roofline
