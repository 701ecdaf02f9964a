package memory

import (
	"github.com/placer/placer/decision"
	"github.com/placer/placer/planner/plan"
)

// inflight is the micro-batches whose activations stage s holds at
// its peak (stageMemory's): with 1F1B P - s of them at most M;
// interleaved the warm-up's model chunks and the one it runs, each 1/V
// of the stage, (P-s-1)2 + (V-1)P + 1 chunks capped at the step's M V
// (Megatron-Core's schedules.py forward_backward_pipelining_with_interleaving:
// num_warmup_microbatches = (P - rank - 1) 2 + (V - 1)
// microbatch_group_size_per_vp_stage, P by default, at most
// total_num_microbatches; torch's ScheduleInterleaved1F1B the same,
// warmup_ops = (n_local_stages - 1) microbatches_per_round +
// 2 (pp_group_size - 1 - rank)): on the first stage 1 + (P-1)/(P V)
// times P, and with M = P, as torchtitan runs by default, every chunk
// of the step, M micro-batches of the whole stage; on the last
// (V-1)P + 1 chunks, not one micro-batch. Past the first stage this is
// torchtitan's count only: Megatron-Core's stages past the first keep
// 1F1B's P - s, as before, because with its warm-up the published
// Qwen3-235B-A22B plan of the model zoo (TP2 EP8 PP32 VPP3, which ran
// on H100s) is told over memory on its second stage: its MoE
// activations are over-counted elsewhere, and this count waits for
// them. With GPipe all M; with the experts' all-to-alls overlapped one
// model chunk more.
func inflight(pl *plan.Plan, s int) float64 {
	inflight := float64(min(pl.NumMicro, pl.PP-s))
	if V := pl.VP; V > 1 && (s == 0 || pl.Titan()) {
		chunks := min((pl.PP-s-1)*2+(V-1)*pl.PP+1, pl.NumMicro*V)
		inflight = float64(chunks) / float64(V)
	}
	if pl.PP > 1 && pl.Sched() == decision.GPipe {
		inflight = float64(pl.NumMicro)
	}
	if pl.EPOverlap && pl.NumMicro > 1 {
		// A merged pair runs the next forward before the backward before
		// it has freed its activations: one model chunk more.
		inflight += 1 / float64(pl.VP)
	}
	return inflight
}

// chunkShare is the share of stage s's layer activations in flight
// that Megatron-Core's interleaved schedule holds where stage 0's model
// chunks are uneven, against inflight's even count: the embedding counted
// as a layer of its first chunk (embedding-layer=on), or a first stage
// whose blocks do not split evenly over V (first=), leaves its first
// chunk one block fewer (Plan.ChunkLayers: the smaller chunks first), and
// that chunk runs more micro-batches ahead than the others.
// Megatron-Core's schedule (core_v0.16.0 pipeline_parallel/schedules.py
// forward_backward_pipelining_with_interleaving) runs stage 0's
// forwards in groups of microbatch_group_size_per_vp_stage (P by
// default) micro-batches a chunk, chunk 0 to V-1, and holds (P - 1) x 2
// + (V - 1) x P + 1 chunk forwards at the first backward (inflight's
// count): 2P - 1 of chunk 0 and P of each other. Llama 3.1 405B on PP 16
// x VP 4 (stage 0: the embedding and 7 blocks, chunks of 1, 2, 2, 2):
// 31 x 1 + 3 x 16 x 2 = 127 blocks' activations, not 79 / 4 x 7 =
// 138.25. 1 with even chunks, on the stages past the first (inflight
// counts them whole), without interleaving, under torchtitan's schedules
// and with fewer micro-batches than a group. Applied to the layers'
// activations where they are kept whole (no full recomputation, whose
// layers keep their input alone).
func chunkShare(pl *plan.Plan, s int) float64 {
	if s != 0 || pl.VP <= 1 || pl.Titan() || pl.Sched() == decision.GPipe || pl.NumMicro < pl.PP || pl.Stages[0] <= 0 {
		return 1
	}
	uneven := false
	for v := 1; v < pl.VP; v++ {
		uneven = uneven || pl.ChunkLayers(0, v) != pl.ChunkLayers(0, 0)
	}
	if !uneven {
		return 1
	}
	chunks := min((pl.PP-1)*2+(pl.VP-1)*pl.PP+1, pl.NumMicro*pl.VP)
	var held float64
	for k := range chunks {
		held += float64(pl.ChunkLayers(0, k%(pl.PP*pl.VP)/pl.PP))
	}
	return held / (float64(chunks) / float64(pl.VP) * float64(pl.Stages[0]))
}

// replay1F1B runs U units through forward and backward in 1F1B's order
// with n in flight: n-1 forwards of warm-up, then one forward and one
// backward in turn, then the cool-down's backwards. ord, where not nil,
// maps the k-th forward (backward) to its unit; nil: the k-th unit.
func replay1F1B(U, n int, ord func(k int, bwd bool) int, forward, backward func(u int)) {
	unit := func(k int, bwd bool) int {
		if ord == nil {
			return k
		}
		return ord(k, bwd)
	}
	f := 0
	for ; f < n-1; f++ {
		forward(unit(f, false))
	}
	for k := range U {
		if f < U {
			forward(unit(f, false))
			f++
		}
		backward(unit(k, true))
	}
}

// titanUnitOrder is the unit (model chunk times M plus micro-batch) of
// a stage's k-th forward (bwd false) or backward under torch's
// ScheduleInterleaved1F1B as torchtitan runs it
// (torch/distributed/pipelining/schedules.py
// _calculate_single_rank_operations: microbatches_per_round of P
// micro-batches, the forwards' model chunks in turn a round at a time,
// the backwards' from the last chunk; forward_stage_index and
// backward_stage_index): nil, the units in their order, for any other
// stack or schedule, or where M is not a multiple of P.
func titanUnitOrder(pl *plan.Plan) func(k int, bwd bool) int {
	V, P, M := max(pl.VP, 1), pl.PP, pl.NumMicro
	if !pl.Titan() || V == 1 || M%P != 0 {
		return nil
	}
	return func(k int, bwd bool) int {
		round, chunk, mb := k/(P*V), (k/P)%V, k%P
		if bwd {
			chunk = V - 1 - chunk
		}
		return chunk*M + round*P + mb
	}
}
