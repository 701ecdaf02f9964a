package mechanisms

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// torch's FSDP2 (fully_shard), as torchtitan runs it, copies every
// parameter and gradient of a step besides gathering and reducing them:
// memory-bound kernels placer's layers leave out. From
// torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py (pytorch
// 010ae4a; torch/distributed/_composable/fsdp/ before 2.6, the same
// functions): per FSDP group (each transformer block, and the root's
// embedding, norm and output),
//   - the all-gather's copy-in (foreach_all_gather, on the
//     all_gather_copy_in_stream): _get_param_all_gather_inputs copies
//     the FP32 sharded parameters into one flat buffer of the parameter
//     dtype (torch._foreach_copy_, the cast to BF16: 4 bytes read and 2
//     written an element of the shard), and all_gather_copy_in copies
//     that into the all-gather's input (torch._foreach_copy_: 2 read, 2
//     written);
//   - the copy-out (foreach_all_gather_copy_out, on the compute stream
//     after it waits for the all-gather's event): split_with_sizes_copy
//     of the gathered buffer into each unsharded parameter (2 bytes read
//     and 2 written an element of the unsharded parameters);
//   - the reduce-scatter's copy-in (foreach_reduce, on the compute stream
//     before reduce_scatter_stream.wait_stream(current_stream)):
//     foreach_reduce_scatter_copy_in's torch._chunk_cat of the BF16
//     unsharded gradients into the reduce dtype's input (2 bytes read,
//     the reduce dtype's written: FP32, torchtitan's
//     mixed_precision_reduce default, 4: the cast is this copy's);
//   - after the reduce-scatter, on its stream: no division (NCCL's AVG
//     for FP32 and BF16: _get_gradient_divide_factors) and no cast (the
//     reduce dtype is the FP32 parameters'); a micro-batch after the
//     first adds its sharded gradient to the one held
//     (sharded_param.grad._local_tensor += new_sharded_grad: 2 reduce
//     dtype elements read, 1 written an element of the shard).
//
// torchtitan's apply_fsdp (torchtitan/models/llama3/infra/parallelize.py
// at v0.2.0) reshards after the forward without a pipeline, so the
// backward gathers again (the second all-gather's copies): each
// micro-batch two all-gathers and a reduce-scatter. With a pipeline
// (reshard_after_forward False) torch.distributed.pipelining's
// backward_maybe_with_nosync keeps the parameters gathered and the
// gradients unsharded until the last micro-batch's backward: one
// all-gather and one reduce-scatter a step, and FSDP2 accumulating the
// micro-batches' BF16 gradients unsharded in the reduce dtype on the
// compute stream (pipelineCopies).

// FSDP2 is torch's FSDP2 (fully_shard) as torchtitan runs it (above):
// its copies on the compute stream (cost.StageKernels) and what it
// gathers, how often, and copies on its side streams (cost.FSDP), in
// place of Megatron-FSDP's.
type FSDP2 struct{}

var (
	_ cost.StageKernels = FSDP2{}
	_ cost.FSDP         = FSDP2{}
)

// Name is the mechanism's registered name.
func (FSDP2) Name() string { return "fsdp2" }

// When is FSDP2's declaration: FSDP on a torchtitan stack (Megatron's
// FSDP is Megatron-FSDP, whose buffers are its own).
func (FSDP2) When() cost.When { return fsdp2When }

var fsdp2When = cost.When{
	cost.Key("fsdp", "fsdp=on", func(pl *plan.Plan) bool { return pl.FSDP }),
	cost.Framework(plan.FrameworkTorchTitan),
}

func fsdp2(pl *plan.Plan) bool {
	return pl.FSDP && pl.Software.Framework() == plan.FrameworkTorchTitan
}

// Gathers is the parameters of stage st's GPU gathered beside its
// forward and again beside its backward, and how many times a step FSDP2
// gathers and reduces them. Without a pipeline: every micro-batch all of
// them forward, and backward the blocks but the last: torchtitan's
// apply_fsdp does not reshard the last block after the forward
// (reshard_after_forward = int(layer_id) < len(model.layers) - 1,
// parallelize_llama.py at 9dec370 and v0.2.0) and FSDP2 never reshards
// the root's (FSDPState._lazy_init: "For the root, do not reshard after
// forward ...", post_forward_mesh_info = None;
// torch/distributed/fsdp/_fully_shard/_fsdp_state.py at 010ae4a). With a
// pipeline (reshard_after_forward False, and
// torch.distributed.pipelining's backward_maybe_with_nosync): once a
// step, forward only.
func (FSDP2) Gathers(s *cost.Shard, st *cost.Stage) (fwd, bwd, times float64) {
	pl := &s.Plan
	if pl.PP > 1 {
		return st.Params, 0, 1
	}
	l := float64(pl.Stages[st.Index])
	return st.Params, st.Layers * (l - 1) / l, float64(pl.NumMicro)
}

// fsdpGroups is how many FSDP groups stage s holds: one a transformer
// block, and the root's (the embedding, the final norm and the output)
// on the first and the last stage.
func fsdpGroups(pl *plan.Plan, s int) float64 {
	g := float64(pl.Stages[s])
	if s == 0 || s == pl.PP-1 {
		g++
	}
	return g
}

// StageKernels is what FSDP2 adds to stage st's forward and backward per
// micro-batch on the compute stream: the copy-out of each all-gather and
// the reduce-scatter's copy-in (and with a pipeline the unsharded
// gradients' accumulation), each a memory-bound kernel at the pod's
// bandwidth, one launch a group. Without a pipeline every micro-batch
// gathers in the forward and again in the backward and reduces in it;
// with one, a step gathers and reduces once and accumulates the
// unsharded gradients between (pipelineCopies). None on a plan not on
// FSDP2.
func (f FSDP2) StageKernels(s *cost.Shard, st *cost.Stage) (fwd, bwd cost.Phase) {
	pl, p := &s.Plan, s.Pod
	u := st.Params // the stage's parameters on this GPU, gathered
	wb, gb := p.WeightBytes(), pl.GradBytes()
	groups := fsdpGroups(pl, st.Index)
	_, again, _ := f.Gathers(s, st)
	copyOut := func(n, lin float64) float64 {
		b := GatheredBytes(pl, p, n, lin)
		return cost.Kernel{Class: graph.ClassElementwise, Read: b, Writes: b}.Time(&p.Hardware)
	}
	out := copyOut(u, st.Layers)
	in := cost.Kernel{Class: graph.ClassElementwise, Read: wb * u, Writes: gb * u}.Time(&p.Hardware)
	fwd = cost.Phase{Busy: out, Launches: groups}
	bwd = cost.Phase{Busy: in, Launches: groups}
	if again > 0 {
		// The blocks but the last gathered again: a group each.
		bwd = cost.Phase{Busy: copyOut(again, again) + in, Launches: groups + float64(pl.Stages[st.Index]-1)}
	}
	if pl.PP > 1 && pl.NumMicro > 1 {
		fwd, bwd = pipelineCopies(out, u, wb, gb, groups, float64(pl.NumMicro), &p.Hardware)
	}
	return fwd, bwd
}

// pipelineCopies is a micro-batch's share of FSDP2's copies on the
// compute stream under a pipeline of m micro-batches (m > 1), for u
// parameters in groups FSDP groups, wb bytes a parameter and gb a
// gradient in the reduce dtype, out the copy-out's time: the forward
// 1/m of one copy-out; the backward 1/m of FSDPParamGroup.post_backward's
// copies in a step (torch/distributed/fsdp/_fully_shard/
// _fsdp_param_group.py and _fsdp_param.py at 010ae4a): the first
// micro-batch's BF16 gradients cast to the reduce dtype
// (to_accumulated_grad_if_needed: wb read, gb written; none where the
// two are one), each later one's added to them
// (accumulate_unsharded_grad_if_needed: gb + wb read, gb written), and
// the last's reduce-scatter copy-in from the accumulated gradients (gb
// read, gb written); one launch a group each.
func pipelineCopies(out, u, wb, gb, groups, m float64, h *roofline.Hardware) (fwd, bwd cost.Phase) {
	var first, n float64
	if gb != wb {
		first, n = cost.Kernel{Class: graph.ClassElementwise, Read: wb * u, Writes: gb * u}.Time(h), 1
	}
	acc := cost.Kernel{Class: graph.ClassElementwise, Read: (gb + wb) * u, Writes: gb * u}.Time(h)
	cat := cost.Kernel{Class: graph.ClassElementwise, Read: gb * u, Writes: gb * u}.Time(h)
	fwd = cost.Phase{Busy: out / m, Launches: groups / m}
	bwd = cost.Phase{Busy: (first + (m-1)*acc + cat) / m, Launches: groups * (n + m) / m}
	return fwd, bwd
}

// SideCopies is what FSDP2 copies beside the compute of stage st on
// its side streams, as Comms: before each all-gather its copy-in
// (gather), and after a micro-batch's reduce-scatter its share of the
// sharded gradient's accumulation (reduce: (M-1)/M of one, the first
// micro-batch's gradient kept as reduced). shard is the parameters of
// the stage one GPU holds sharded; lin of them are the blocks' linear
// weights, in linears linears, which fp8gather=on casts to float8 before
// the gather instead (FP8GatherCopyIn; 0 without it).
func (FSDP2) SideCopies(s *cost.Shard, shard, lin, linears float64) (gather, reduce plan.Comm) {
	pl, p := &s.Plan, s.Pod
	const master = 4 // torchtitan's sharded parameters: FP32
	wb, gb := p.WeightBytes(), pl.GradBytes()
	if !pl.FP8Gather {
		lin, linears = 0, 0
	}
	r, w, launches := FP8GatherCopyIn(lin, linears)
	in := cost.Kernel{Class: graph.ClassElementwise, Read: (master+wb)*(shard-lin) + r, Writes: 2*wb*(shard-lin) + w}
	gather = plan.CopyComm(in.Time(&p.Hardware)+launches*cost.Kernel{Class: graph.ClassElementwise}.Time(&p.Hardware), in.Read+in.Writes)
	if m := float64(pl.NumMicro); m > 1 && pl.PP == 1 {
		acc := cost.Kernel{Class: graph.ClassElementwise, Read: 2 * gb * shard, Writes: gb * shard}
		k := (m - 1) / m
		reduce = plan.CopyComm(k*acc.Time(&p.Hardware), k*(acc.Read+acc.Writes))
	}
	return gather, reduce
}
