package mechanisms

import (
	"math"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// The token dispatchers and the permutation as the software stack runs
// them (Settings; docs/stacks.md), read from Megatron-Core core_v0.16.0's
// megatron/core/transformer/moe/token_dispatcher.py and moe_utils.py.
// Every dispatcher is counted at the granularity of the default
// (alltoall, fused: what placer costed before): its data-moving kernels
// and its collectives one launch each, the small bookkeeping kernels
// around them (counts, splits, masks) not counted for any dispatcher;
// the unfused permutation and router are counted kernel by kernel, since
// their launches are what the setting changes.

// TokenDispatch is the token dispatchers and the permutation of a layer
// with experts as the plan's stack runs them (Settings.Dispatcher:
// alltoall, allgather, flex's DeepEP, HybridEP; the permutation and the
// router fused or not), the MoE layer's cost.TokenDispatcher: its work
// on a shard is Dispatcher's.
type TokenDispatch struct{}

var (
	_ cost.TokenDispatcher = TokenDispatch{}
	_ cost.Dispatch        = Dispatcher{}
)

// Name is the mechanism's registered name.
func (TokenDispatch) Name() string { return "token-dispatch" }

// When is the dispatch's declaration: a model that routes its tokens to
// experts.
func (TokenDispatch) When() cost.When { return dispatchWhen }

var dispatchWhen = cost.When{cost.MoE}

// On is the dispatch's work on shard s, with router the registered
// plug-ins beside the router's top-k (cost.TokenDispatcher).
func (TokenDispatch) On(s *cost.Shard, router cost.EachPricing[cost.RouterKernels]) cost.Dispatch {
	return Dispatcher{Shard: s, Router: router}
}

// DeepEPSMs is the SMs DeepEP's dispatch and combine kernels run on
// under Megatron-Core's flex dispatcher: TransformerConfig's
// moe_deepep_num_sms, 20 by default (Megatron-LM core_r0.14.0 and
// core_r0.15.0, megatron/core/transformer/transformer_config.py), what
// they take from the computation beside them with epoverlap=on in place
// of NCCL's channels.
const DeepEPSMs = 20

// ExchangeSMs is the SMs pl's exchange kernels take from the
// computation beside them (cost.TokenDispatcher): DeepEP's (DeepEPSMs)
// under the flex dispatcher, none (NCCL's channels) under the others.
func (TokenDispatch) ExchangeSMs(pl *plan.Plan) int {
	if pl.Run.Dispatcher == plan.DispatcherFlex {
		return DeepEPSMs
	}
	return 0
}

// Dispatcher is the token dispatch of a layer with experts on one shard
// (cost.Dispatch), as the MoE layer's composition (planner) asks
// it: the synchronizations (DispatchSyncs), the router's, permutation's
// and multihot map's kernels (Glue, Multihot), the exchange
// (DispatchComm), the all-to-all's bookkeeping (Bookkeeping, a2aCounts),
// the host's issue after the synchronization (Issue). Router is
// the registered mechanisms that add kernels beside the router's top-k
// (cost.RouterKernels), those the shard's record says price its step
// asked, in the order registered.
type Dispatcher struct {
	*cost.Shard
	Router cost.EachPricing[cost.RouterKernels]
}

// dispatchSyncs is the device-to-host synchronizations of one MoE layer's
// forward (the backward reuses what they fetched):
//   - alltoall: one, the tokens per expert for the all-to-all's splits
//     (MoEAlltoAllTokenDispatcher.preprocess: cuda_sync_point
//     "before_ep_alltoall"); none with capacity routing (drop_and_pad:
//     the splits are the capacity, computed on the host);
//   - allgather: two, tokens_per_expert's .cpu() and the masked_select
//     of the local probabilities (MoEAllGatherTokenDispatcher.
//     dispatch_postprocess), capacity routing or not;
//   - flex (DeepEP's normal kernels): one, the host's wait for the
//     received count (DeepEP README: "an implicit CPU wait for GPU
//     received count signal"; csrc/deep_ep.cpp's moe_recv_counter loop);
//     HybridEP's likewise, but none under rank-capacity (RankBudget:
//     the buffer's rows fixed on the host);
//   - and with permute-fusion=off and dropless routing three more: the
//     unfused permute's two masked_selects and the unpermute's one
//     (moe_utils.permute and unpermute, fused=False: a masked_select's
//     size is read on the host);
//   - and on DeepEP's received tokens made into the multihot map
//     unfused three more (unfusedMultihot).
func (c Dispatcher) DispatchSyncs() float64 {
	run := &c.Plan.Run
	n := 1.0
	switch run.Dispatcher {
	case plan.DispatcherAllGather:
		n = 2
	case plan.DispatcherFlex:
		if run.HybridEP && run.RankCapacity > 0 {
			n = 0 // the static budget: setup_metadata's num_permuted_tokens (RankBudget)
		}
	default:
		if run.Capacity > 0 {
			n = 0
		}
	}
	if run.UnfusedPermute && run.Capacity == 0 {
		n += 3
	}
	if c.UnfusedMultihot() {
		n += MultihotSyncs
	}
	return n
}

// unfusedMultihot says the plan's DeepEP dispatch hands its received
// tokens' top-k indices and probabilities to the local permutation
// through _DeepepManager._indices_to_multihot, PyTorch's ops, not the
// fused kernel: Megatron-Core takes the fused one only with
// --enable-experimental and moe_permute_fusion both on
// (megatron/core/transformer/moe/token_dispatcher.py
// get_permuted_hidden_states_by_experts, at 1e057005 and core_v0.16.0),
// so with Settings.UnfusedMultihot or permute-fusion=off. HybridEP's
// manager permutes in its own kernels.
func (c Dispatcher) UnfusedMultihot() bool {
	run := &c.Plan.Run
	return run.Dispatcher == plan.DispatcherFlex && !run.HybridEP && (run.UnfusedMultihot || run.UnfusedPermute)
}

// MultihotSyncs is _indices_to_multihot's device-to-host
// synchronizations, and MultihotRuns its forward's kernels between them
// and multihotLaunchesB its backward's, counted from its code
// (core_v0.16.0 token_dispatcher.py, the same at 1e057005; a boolean
// index runs PyTorch's nonzero, which counts, copies the count to the
// host and waits on it, then selects: aten/src/ATen/native/cuda/Nonzero.cu;
// repeat_interleave by a device tensor without output_size takes its
// cumsum's last element with .item(): aten/src/ATen/native/Repeat.h
// repeat_interleave_common):
//   - before the first: two torch.zeros (the map, the probabilities),
//     indices != -1, and indices[mask]'s nonzero count: 4;
//   - before the second: nonzero's select and the gather of
//     indices[mask], mask.sum(dim=1), torch.arange and
//     repeat_interleave's cumsum: 5;
//   - before the third: repeat_interleave's fill, the map's index_put_
//     and probs[mask]'s nonzero count: 3;
//   - after it: the select and gather of probs[mask], the
//     probabilities' index_put_ and the map's .bool(): 4.
//
// Backward, to the dispatched probabilities DeepEP's combine
// differentiates: the index_put_'s gather and probs[mask]'s zeros and
// index_put_, 3.
const (
	MultihotSyncs     = 3
	multihotLaunchesB = 3
)

var MultihotRuns = [MultihotSyncs + 1]int{4, 5, 3, 4}

// multihot is _indices_to_multihot over recv received tokens, each with
// k top-k slots, into local experts (unfusedMultihot): its forward's
// kernels in MultihotRuns' four runs, the three synchronizations between
// them, and its backward. Each kernel is memory-bound over an even share
// of what the conversion moves: the two maps written and read (an int64
// and an FP32 an expert a token), the indices and probabilities (int64,
// FP32) read, selected and written.
func (c Dispatcher) Multihot(recv, k, local float64) (runs []cost.Phase, bwd cost.Phase) {
	n := 0
	for _, r := range MultihotRuns {
		n += r
	}
	bytes := recv * (2*12*local + 3*12*k)
	runs = make([]cost.Phase, len(MultihotRuns))
	for i, r := range MultihotRuns {
		runs[i] = c.Small(r, bytes*float64(r)/float64(n))
	}
	return runs, c.Small(multihotLaunchesB, recv*(12*local+12*k))
}

// Glue is the router's scores and top-k and the permutation of nl
// tokens to rows expert rows, forward and backward: the default's fused
// kernels (moeGlue's: scores, permute, unpermute), with the permutation
// over the tokens the dispatcher hands the experts (dispatchedTokens),
// and unfused where the stack says so (unfusedRouter, unfusedPermute);
// the scores with the router's load-balancing loss (auxLoss).
func (c Dispatcher) Glue(router, scores, permute, unpermute cost.Kernel, rows, nl float64) cost.Glue {
	t := c.Run
	run := &c.Plan.Run
	h, E := float64(c.M.Hidden), float64(c.M.Experts)
	if src := c.dispatchedTokens(nl); run.Dispatcher == plan.DispatcherAllGather || run.Dispatcher == plan.DispatcherFlex {
		// The permutation runs over the tokens the dispatcher delivers
		// (allgather: every token of the group, each rank picking its
		// experts' rows; flex: DeepEP's received tokens, once per rank,
		// put in expert order by a local permute: _DeepepManager's
		// get_permuted_hidden_states_by_experts).
		read := rows // allgather reads the rows its experts take
		if run.Dispatcher == plan.DispatcherFlex {
			read = src // flex every token it received
		}
		permute = cost.Kernel{Class: graph.ClassDataMovement, Read: read * h * cost.BF16, Writes: rows * h * cost.BF16}
		unpermute = cost.Kernel{Class: graph.ClassElementwise, FLOPs: 2 * rows * h, Read: rows*h*cost.BF16 + rows*4, Writes: src * h * cost.BF16}
	}
	g := cost.Glue{Scores: t(scores), ScoresB: t(cost.Twice(scores)), Permute: t(permute), PermuteB: t(cost.Twice(permute)),
		Unpermute: t(unpermute), UnpermuteB: t(cost.Twice(unpermute))}
	if run.UnfusedRouter {
		g.Scores, g.ScoresB = c.unfusedRouter(scores, nl, E)
	}
	if run.UnfusedPermute {
		c.unfusedPermute(&g, permute, unpermute, rows, nl, h, E)
	}
	if c.UnfusedMultihot() {
		recv, _ := c.DeepEPReceived(nl)
		g.Multihot, g.MultihotB = c.Multihot(recv, float64(c.M.TopK*c.Plan.ETP), E/float64(c.Plan.EP))
	}
	// The router's mechanisms beside its top-k (its load-balancing loss).
	var auxF, auxB cost.Phase
	for p := range c.Router.On(c.Shard) {
		f, b := p.Router(c.Shard, nl)
		auxF, auxB = auxF.Plus(f), auxB.Plus(b)
	}
	g.Scores, g.ScoresB = g.Scores.Plus(auxF), g.ScoresB.Plus(auxB)
	return g
}

// dispatchedTokens is how many tokens the dispatcher delivers to one GPU
// before the local permutation: allgather every token of its
// expert-tensor x expert-parallel group (gather_from_sequence_parallel_region
// over tp_ep_group), flex each token once per GPU that holds one of its
// experts (deepEPReceived), alltoall the GPU's own nl (permuted before
// the exchange).
func (c Dispatcher) dispatchedTokens(nl float64) float64 {
	switch c.Plan.Run.Dispatcher {
	case plan.DispatcherAllGather:
		return nl * float64(c.Plan.ETP*c.Plan.EP)
	case plan.DispatcherFlex:
		recv, _ := c.DeepEPReceived(nl)
		return recv
	}
	return nl
}

// unfusedRouter is the router's top-k without moe_router_fusion
// (moe_utils.topk_routing_with_score_function, fused=False): topk,
// softmax, and the probabilities and the routing map each a zeros_like
// and a scatter, six kernels forward; backward the scatter's gather, the
// softmax's and the top-k's (zeros and a scatter), four. scores is the
// fused kernel (its traffic is the top-k's and softmax's).
func (c Dispatcher) unfusedRouter(scores cost.Kernel, nl, E float64) (fwd, bwd cost.Phase) {
	fwd = c.Run(scores).Plus(c.Small(1, 0)).Plus(c.Small(4, nl*E*3*2))
	bwd = c.Run(cost.Twice(scores)).Plus(c.Small(3, nl*E*2*2))
	return fwd, bwd
}

// unfusedPermute sets g's permutation without moe_permute_fusion
// (moe_utils.permute and unpermute, fused=False, with the routing
// probabilities): permute is the routing map's bool and transpose, an
// arange, two masked_selects (about three kernels each: the mask's
// nonzero, its size read on the host, the gather) and the probabilities'
// transpose around the index_select that moves the tokens (permute's
// pass): eleven kernels; unpermute the probabilities' and the map's
// transposes and a masked_select, the tokens times their probabilities
// (a pass over the rows), a zero fill of the output and the scatter_add
// (unpermute's pass): eight. Backward: the index_select's zeros and
// index_add and the masked_select's masked_scatter (five kernels); the
// scatter_add's gather, the product's two and the masked_select's three
// (six). The transposes and selections move the nl x E map (a byte) and
// probabilities (BF16).
func (c Dispatcher) unfusedPermute(g *cost.Glue, permute, unpermute cost.Kernel, rows, nl, h, E float64) {
	t := c.Run
	ew := func(flops, read, write float64) cost.Kernel {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: flops, Read: read, Writes: write}
	}
	mapBytes := nl * E * 3 * 2 // the map and the probabilities, read and written
	out := unpermute.Writes    // the unpermuted tokens, bytes
	mul := ew(rows*h, rows*h*cost.BF16+rows*cost.BF16, rows*h*cost.BF16)
	zero := ew(0, 0, out)
	g.Permute = t(permute).Plus(c.Small(10, mapBytes))
	g.Unpermute = c.Small(5, mapBytes).Plus(t(mul)).Plus(t(zero)).Plus(t(unpermute))
	g.PermuteB = t(cost.Twice(permute)).Plus(t(ew(0, 0, out))).Plus(c.Small(3, rows*8))
	g.UnpermuteB = t(cost.Twice(unpermute)).Plus(t(mul)).Plus(t(mul)).Plus(c.Small(3, rows*8))
}

// Issue is what the host issues after the dispatcher's synchronization
// in one MoE layer's forward (cost.Dispatch), in Megatron-Core
// core_v0.16.0's order (moe_layer.py MoELayer.forward: the shared
// experts and the router before the dispatch), each run with the GPU's
// queue empty but for what was issued just before it (cost.Drain), from
// the glue g, the exchange comm, the bookkeeping's forward bf and the
// routed experts' forward:
//   - alltoall (token_dispatcher.py MoEAlltoAllTokenDispatcher): the
//     synchronization at "before_ep_alltoall" (the counts copied at
//     "before_permutation_1", so the fused permute of dispatch_preprocess
//     is issued before the host waits: ahead), then the tokens' and
//     probabilities' all-to-alls (and the expert-tensor gathers), the
//     sort into local-expert order, the experts, the restore, the
//     combine and the unpermute;
//   - allgather: the synchronizations in dispatch_postprocess, after the
//     gathers: the permutation, the experts, the unpermutation and the
//     reduce-scatter;
//   - flex: DeepEP's dispatch waits for its received count before its
//     kernel: the dispatch, the permutation, the experts, the
//     unpermutation and the combine; where the plan converts the
//     received indices unfused (UnfusedMultihot) each run of the
//     conversion after one of its synchronizations is issued from an
//     empty queue too (MultihotRuns), the permutation after the last.
//
// The token exchanges are split half before the experts, half after
// (dispatch and combine), the bookkeeping likewise (sort and restore,
// each with its exchange) less the counts' all-gather, which precedes
// the synchronization. The unfused permutation's own synchronizations
// (DispatchSyncs) are charged as before: one issue each, no tail of
// their own.
func (c Dispatcher) Issue(g cost.Glue, comm, bf, routed cost.Phase) []cost.Drain {
	half, bhalf := cost.Scale(comm, 0.5), bf
	if counts := c.a2aCounts().Plus(c.a2aPreprocess()); counts.Launches > 0 && bf.Launches >= counts.Launches {
		bhalf.Launches -= counts.Launches
		bhalf.Busy -= counts.Busy
		bhalf.EPExposed -= counts.EPExposed
	}
	bhalf = cost.Scale(bhalf, 0.5)
	run := func(ahead float64, steps ...cost.Phase) cost.Drain { return cost.Drain{Ahead: ahead, Steps: steps} }
	switch c.Plan.Run.Dispatcher {
	case plan.DispatcherAllGather:
		return []cost.Drain{run(0, g.Permute, routed, g.Unpermute, half)}
	case plan.DispatcherFlex:
		if !c.UnfusedMultihot() {
			return []cost.Drain{run(0, half, g.Permute, routed, g.Unpermute, half)}
		}
		// The dispatch and the conversion's first run follow the
		// received count's wait; each later run follows a
		// synchronization of its own, from an empty queue, the last one
		// on to the combine.
		runs := []cost.Drain{run(0, half, g.Multihot[0])}
		for _, r := range g.Multihot[1:MultihotSyncs] {
			runs = append(runs, run(0, r))
		}
		return append(runs, run(0, g.Multihot[MultihotSyncs], g.Permute, routed, g.Unpermute, half))
	}
	return []cost.Drain{run(g.Permute.Busy, half, bhalf, routed, bhalf, half, g.Unpermute)}
}

// dispatchComm is one MoE layer's expert communication for one
// micro-batch, forward (the backward's the same: a gather's backward is
// a reduce-scatter, an all-to-all's the reverse all-to-all): recv the
// token copies the most loaded GPU receives, rows its expert GEMMs' rows,
// nl its own tokens.
//   - alltoall: the dispatch and the combine all-to-alls over the
//     expert-parallel group, the gather and scatter over the
//     expert-tensor group (what placer costed before);
//   - allgather: the tokens (BF16), the probabilities (BF16) and the
//     routing map (a byte) all-gathered over the expert-tensor x
//     expert-parallel group, the experts' outputs reduce-scattered back
//     (MoEAllGatherTokenDispatcher.token_dispatch and token_combine): the
//     whole group's tokens every time, whatever the routing;
//   - flex: DeepEP's dispatch and combine (deepEPTime).
func (c Dispatcher) DispatchComm(recv, rows, nl float64) cost.Phase {
	pl, p := &c.Plan, c.Pod
	h := float64(c.M.Hidden)
	switch pl.Run.Dispatcher {
	case plan.DispatcherAllGather:
		grp := tpEPGroup(pl, p)
		G := nl * float64(grp.Size())
		ag, _ := p.Collective(roofline.AllGather, grp, G*h*cost.BF16)
		agMap, _ := p.Collective(roofline.AllGather, grp, G*float64(c.M.Experts)*(cost.BF16+1))
		rs, _ := p.Collective(roofline.ReduceScatter, grp, G*h*cost.BF16)
		all := ag + agMap + rs
		return cost.Phase{Busy: all, EPExposed: all, Launches: 4}
	case plan.DispatcherFlex:
		all := c.deepEPTime(nl)
		return cost.Phase{Busy: all, EPExposed: all, Launches: 2}
	}
	etpG, epG, _ := pl.ExpertGroups(*p)
	a2a := p.AllToAll(epG, recv*h*cost.BF16)
	ag, _ := p.Collective(roofline.AllGather, etpG, rows*h*cost.BF16)
	rs, _ := p.Collective(roofline.ReduceScatter, etpG, rows*h*cost.BF16)
	all := 2*a2a + ag + rs // dispatch, gather, scatter, combine
	comm := cost.Phase{Busy: all, EPExposed: all, Launches: 2}
	if pl.ETP > 1 {
		comm.Launches += 2
	}
	return comm
}

// tpEPGroup is the expert-tensor x expert-parallel group of pl on pod p
// (Megatron-Core's tp_ep_group, ETP x EP consecutive GPUs: the experts'
// mesh is ETP innermost, then EP: expertGroups).
func tpEPGroup(pl *plan.Plan, p *plan.Pod) plan.Group {
	g := pl.ETP * pl.EP
	if g <= p.PerNode {
		return plan.Group{PerNode: g, Nodes: 1}
	}
	return plan.Group{PerNode: p.PerNode, Nodes: (g + p.PerNode - 1) / p.PerNode}
}

// DeepEP's normal (training) kernels' measured bottleneck bandwidths
// (deepseek-ai/DeepEP README, "Normal kernels with NVLink and RDMA
// forwarding", V1: now docs/legacy.md at dd758ca): H800s (NVLink at
// "~160 GB/s maximum"), each with a ConnectX-7 400 Gb/s InfiniBand NIC
// ("~50 GB/s maximum"), DeepSeek-V3's pre-training setting (4,096 tokens
// a batch, hidden 7,168, top-8, FP8 dispatch, BF16 combine):
// intranode EP 8 dispatch 153 GB/s and combine 158 GB/s (NVLink);
// internode EP 16 43 and 43, EP 32 58 and 57, EP 64 51 and 50 GB/s
// (RDMA). Bandwidths of the test's own count (tests/test_internode.py:
// the NVLink bytes a GPU receives, recv_x; the RDMA bytes, each token
// once per node it goes to, num_rdma_token_sent, the GPU's own node
// included: "logical" bandwidth, which is why it may pass the NIC's
// 50). placer takes each as a fraction of the link it ran on, the
// NVLink's 160 and the NIC's 50, and applies it to the pod's NVLink bus
// (Pod.intra) and its GPU's NIC line rate: an H100's NVLink is faster
// than an H800's, its NIC the same.
var (
	deepEPIntra = [2]float64{153.0 / 160, 158.0 / 160} // dispatch, combine
	deepEPInter = []struct {
		ep      int
		dispGBs float64
		combGBs float64
	}{{16, 43, 43}, {32, 58, 57}, {64, 51, 50}}
)

// deepEPNIC is the NIC line rate DeepEP's internode figures were
// measured on, bytes/s (ConnectX-7 400 Gb/s: the README's "~50 GB/s").
const deepEPNIC = 50e9

// deepEPReceived is, for nl tokens a GPU dispatches with DeepEP over its
// expert-tensor x expert-parallel group, the tokens the most loaded GPU
// receives (each token once per GPU holding any of its experts: its
// TopK x ETP copies among the group's E x ETP expert shards, uniformly
// at random as the published benchmarks force-balance them: the expected
// distinct GPUs a token reaches, a hypergeometric count) and the tokens
// it sends over RDMA (once per node it reaches, its own included), both
// times the load factor.
func (c Dispatcher) DeepEPReceived(nl float64) (recv, rdma float64) {
	pl, p := &c.Plan, c.Pod
	grp := tpEPGroup(pl, p)
	g := float64(grp.Size())
	k := c.M.TopK * pl.ETP
	E := c.M.Experts * pl.ETP
	distinct := func(units float64) float64 {
		// the expected units of size E/units a token's k picks of E touch
		per := float64(E) / units
		miss := 1.0
		for i := range k {
			miss *= max(0, float64(E)-per-float64(i)) / float64(E-i)
		}
		return units * (1 - miss)
	}
	lf := pl.LoadFactor()
	recv = nl * distinct(g) * lf
	if grp.Nodes > 1 {
		rdma = nl * distinct(float64(grp.Nodes)) * lf
	}
	return recv, rdma
}

// deepEPTime is DeepEP's dispatch and combine of nl tokens from one GPU
// (BF16, hidden H), seconds: each the slower of its NVLink share (the
// tokens received, at deepEPIntra's fraction of the pod's NVLink bus)
// and its RDMA share across nodes (the tokens sent once per node, at the
// measured rate of the nearest measured EP size, scaled by the pod's NIC
// line rate over DeepEP's), each with its link's latency.
func (c Dispatcher) deepEPTime(nl float64) float64 {
	pl, p := &c.Plan, c.Pod
	h := float64(c.M.Hidden)
	recv, rdma := c.DeepEPReceived(nl)
	bi, li := p.Intra()
	grp := tpEPGroup(pl, p)
	var t float64
	for dir := range 2 {
		nvl := recv*h*cost.BF16/(deepEPIntra[dir]*bi) + li
		var net float64
		if grp.Nodes > 1 {
			gbs := deepEPInter[0]
			for _, r := range deepEPInter {
				if math.Abs(float64(r.ep-grp.Size())) < math.Abs(float64(gbs.ep-grp.Size())) {
					gbs = r
				}
			}
			rate := gbs.dispGBs
			if dir == 1 {
				rate = gbs.combGBs
			}
			nic := p.NICBandwidth * float64(p.NICs) / float64(p.PerNode)
			net = rdma*h*cost.BF16/(rate*1e9/deepEPNIC*nic) + p.NICLatency
		}
		t += max(nvl, net)
	}
	return t
}

// megatronAllToAll says the plan's MoE layers run Megatron-Core's
// alltoall dispatcher (MoEAlltoAllTokenDispatcher): a Megatron stack
// (Software.Framework) with its default dispatcher or dispatcher=alltoall.
// torchtitan's expert parallelism, also an all-to-all, is its own code.
func (c Dispatcher) megatronAllToAll() bool {
	d := c.Plan.Run.Dispatcher
	return c.Plan.Software.Framework() == plan.FrameworkMegatron && (d == "" || d == plan.DispatcherAllToAll)
}

// Bookkeeping is what Megatron-Core's alltoall dispatcher runs for one
// MoE layer around its two token exchanges (dispatchComm's), forward and
// backward, read from megatron/core/transformer/moe/token_dispatcher.py
// (MoEAlltoAllTokenDispatcher, core_v0.16.0):
//   - with more than one local expert, the tokens a GPU receives (rows of
//     hidden h, after the expert-tensor gather) sorted from source-rank
//     order into local-expert order with their probabilities
//     (dispatch_postprocess: sort_chunks_by_idxs; with capacity routing a
//     transpose made contiguous, the same pass), and the experts' output
//     put back in source-rank order before the combine
//     (combine_preprocess): two passes over the rows forward, each
//     reading and writing every BF16 element (and the FP32 probability
//     of each row with the first), and their gradients' two inverse
//     passes backward;
//   - the routing probabilities of the copies exchanged by an all-to-all
//     of their own after the tokens' (dispatch_all_to_all's second
//     all_to_all; FP32, 4 bytes a copy: recv of them on the most loaded
//     GPU), all-gathered over the expert-tensor group with ETP > 1, and
//     their gradients sent back the reverse way in the backward;
//   - dropless, each GPU's tokens per expert (E int64 counts)
//     all-gathered over the expert-tensor x expert-parallel group
//     (preprocess: gather_from_sequence_parallel_region over tp_ep_group)
//     before the synchronization, forward only; capacity routing
//     returns before it (drop_and_pad).
//
// The collectives carry a few kilobytes: their time is the links'
// latency, on the layer's path (nothing beside them), and each is a
// launch. None of it runs under the other dispatchers (allgather sorts
// nothing and its probabilities ride its gather; flex permutes what
// DeepEP delivers: Glue).
func (c Dispatcher) Bookkeeping(recv, rows, local float64) (fwd, bwd cost.Phase) {
	if !c.megatronAllToAll() {
		return fwd, bwd
	}
	h := float64(c.M.Hidden)
	if local > 1 {
		sort := c.Run(cost.Kernel{Class: graph.ClassDataMovement, Read: rows * (h*cost.BF16 + 4), Writes: rows * (h*cost.BF16 + 4)})
		restore := c.Run(cost.Kernel{Class: graph.ClassDataMovement, Read: rows * h * cost.BF16, Writes: rows * h * cost.BF16})
		fwd = sort.Plus(restore)
		bwd = fwd
	}
	pl, p := &c.Plan, c.Pod
	fwd = fwd.Plus(c.a2aPreprocess())
	if c.NoComm || pl.EP*pl.ETP <= 1 {
		return fwd, bwd
	}
	etpG, epG, _ := pl.ExpertGroups(*p)
	exch := func(t float64) cost.Phase { return cost.Phase{Busy: t, EPExposed: t, Launches: 1} }
	if pl.EP > 1 {
		a2a := exch(p.AllToAll(epG, recv*4))
		fwd, bwd = fwd.Plus(a2a), bwd.Plus(a2a)
	}
	if pl.ETP > 1 {
		ag, _ := p.Collective(roofline.AllGather, etpG, rows*4)
		rs, _ := p.Collective(roofline.ReduceScatter, etpG, rows*4)
		fwd, bwd = fwd.Plus(exch(ag)), bwd.Plus(exch(rs))
	}
	return fwd.Plus(c.a2aCounts()), bwd
}

// PreprocessKernels and PreprocessCopies are the dropless alltoall
// dispatcher's small kernels and device-to-host copies of one MoE
// layer's forward before its synchronization, counted from
// MoEAlltoAllTokenDispatcher at Megatron-LM d98e8a6
// (megatron/core/transformer/moe/token_dispatcher.py):
//   - with expert or expert-tensor parallelism, preprocess runs
//     routing_map.sum(dim=0) (its .long() is a no-op: a bool tensor's sum
//     is int64), input_splits' sum over the local experts, the gathered
//     counts' slice made contiguous, their sum over the local experts
//     (num_global_tokens_per_rank), its sum over the tensor ranks
//     (output_splits_tp) and the counts' sum to tokens_per_expert: 6
//     kernels (the all-gather between them is a2aCounts'); then
//     _maybe_dtoh_and_synchronize copies tokens_per_expert, input_splits,
//     output_splits and output_splits_tp to the host (num_out_tokens is
//     a Python int when dropless): 4 copies, a fifth
//     (num_global_tokens_per_local_expert) without permute fusion and
//     with more than one local expert;
//   - without either (sync point "before_finish"), the sum alone and
//     tokens_per_expert's copy: 1 and 1.
//
// Capacity routing (drop_and_pad) fills its counts on the host: none.
const (
	PreprocessKernels   = 6
	PreprocessCopies    = 4
	preprocessKernelsEP = 1 // without expert groups
	preprocessCopiesEP  = 1
)

// a2aPreprocess is the dropless alltoall dispatcher's preprocess before
// its synchronization (PreprocessKernels, PreprocessCopies): each a
// launch on the host (the eager forward's issue) and a kernel at the
// launch floor on the GPU, a few kilobytes of counts (the routing map's
// read, nl x E bytes, under a microsecond, is left out). Part of
// Bookkeeping's forward; nothing under the other dispatchers or with
// capacity routing.
func (c Dispatcher) a2aPreprocess() cost.Phase {
	pl := &c.Plan
	if !c.megatronAllToAll() || pl.Run.Capacity != 0 {
		return cost.Phase{}
	}
	if pl.EP*pl.ETP <= 1 {
		return c.Small(preprocessKernelsEP+preprocessCopiesEP, 0)
	}
	n := PreprocessKernels + PreprocessCopies
	if pl.Run.UnfusedPermute && c.M.Experts > pl.EP {
		n++
	}
	return c.Small(n, 0)
}

// a2aCounts is the dropless alltoall dispatcher's all-gather of each
// GPU's tokens per expert over the expert-tensor x expert-parallel group
// before its synchronization (Bookkeeping's last item), forward: a
// launch on the layer's path; nothing with capacity routing, without
// the dispatcher, or without expert groups.
func (c Dispatcher) a2aCounts() cost.Phase {
	pl, p := &c.Plan, c.Pod
	if !c.megatronAllToAll() || c.NoComm || pl.EP*pl.ETP <= 1 || pl.Run.Capacity != 0 {
		return cost.Phase{}
	}
	grp := tpEPGroup(pl, p)
	ag, _ := p.Collective(roofline.AllGather, grp, float64(grp.Size()*c.M.Experts)*8)
	return cost.Phase{Busy: ag, EPExposed: ag, Launches: 1}
}
