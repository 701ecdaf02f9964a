package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
)

// ParseStrategy reads a plan written as comma-separated key=value pairs,
// each key one of Keys (by its name or an alias: what it takes, its
// default and what it does are declared there, keys.go). The keys only
// an op graph's strategy has (bucket; shard=fsdp or zero2) are refused,
// each in one line. "" is the zero plan.
func ParseStrategy(text string) (Strategy, error) {
	var s Strategy
	pairs, err := SplitStrategy(text)
	if err != nil {
		return s, err
	}
	seen := map[string]bool{}
	for _, kv := range pairs {
		k, v := kv.Key, kv.Value
		if k == "shard" && seen["distopt"] {
			return s, fmt.Errorf("strategy %q: distopt and shard both given (distopt=on is shard=zero1)", text)
		}
		seen[k] = true
		if err := s.setKey(text, k, v, seen); err != nil {
			return s, err
		}
	}
	if err := s.FineTune.finish(seen); err != nil {
		return s, fmt.Errorf("strategy %q: %w", text, err)
	}
	if s.RecomputeModules != 0 {
		// The modules are selective recomputation's: alone they mean it.
		if !seen["recompute"] {
			s.Recompute = SelectiveRecompute
		}
		if s.RecomputeModules == RecomputeCoreAttn && s.Recompute == SelectiveRecompute {
			s.RecomputeModules = 0 // recompute=selective's own
		}
	}
	// A degree of 1 is the default's: written back it is left out. Not
	// dp's and mb's: left out, they are what the GPUs and the batch leave
	// (Resolve), so dp=1 and mb=1 are kept as written, never replaced.
	for _, d := range []*int{&s.Tensor, &s.Pipeline, &s.Virtual, &s.Context, &s.Experts} {
		if *d == 1 {
			*d = 0
		}
	}
	if err := s.Check(); err != nil {
		return s, fmt.Errorf("strategy %q: %w", text, err)
	}
	return s, nil
}

// Check reports the first field out of range, or two that do not go
// together, as a one-line error. What depends on the model and the pod is
// Resolve's.
func (s Strategy) Check() error {
	switch {
	case s.Replicas < 0:
		return strategyError("replicas %d: want at least 1", s.Replicas)
	case s.MicroBatches < 0:
		return strategyError("micro_batches %d: want at least 1", s.MicroBatches)
	case s.Tensor < 0:
		return strategyError("tensor %d: want at least 1", s.Tensor)
	case s.Pipeline < 0:
		return strategyError("pipeline %d: want at least 1", s.Pipeline)
	case s.Virtual < 0:
		return strategyError("virtual_stages %d: want at least 1", s.Virtual)
	case s.MicroBatchSize < 0:
		return strategyError("micro_batch_size %d: want at least 1", s.MicroBatchSize)
	case s.FirstLayers < 0 || s.LastLayers < 0:
		return strategyError("first_stage_layers %d, last_stage_layers %d: want at least 1", s.FirstLayers, s.LastLayers)
	case s.RecomputeLayers < 0:
		return strategyError("recompute_layers %d: want at least 1", s.RecomputeLayers)
	case s.RecomputeLayers > 0 && s.Recompute != FullRecompute:
		return strategyError("recompute-layers without recompute=full: it counts the layers that recompute their whole forward")
	case (s.FirstLayers > 0 || s.LastLayers > 0) && s.PipelineDegree() == 1:
		return strategyError("first= or last= with one pipeline stage: they set the end stages of a pipeline")
	case s.Virtual > 1 && s.PipelineDegree() == 1:
		return strategyError("vp=%d with one pipeline stage: virtual stages interleave a pipeline", s.Virtual)
	case s.TensorStages != nil && s.Tensor > 0:
		return strategyError("tp=%d and stage-tp=%s both given: stage-tp sets every stage's degree", s.Tensor, stageTP(s.TensorStages))
	case s.TensorStages != nil && len(s.TensorStages) != s.PipelineDegree():
		return strategyError("stage-tp=%s names %d stages, pp=%d has %d", stageTP(s.TensorStages), len(s.TensorStages), s.PipelineDegree(), s.PipelineDegree())
	case s.Context < 0:
		return strategyError("context %d: want at least 1", s.Context)
	case s.Context > 1 && s.TensorStages != nil:
		return strategyError("cp=%d with stage-tp=%s: context parallelism is modelled with one tensor-parallel degree (use tp=)", s.Context, stageTP(s.TensorStages))
	case s.TensorStages != nil && slices.Min(s.TensorStages) < 1:
		return strategyError("stage-tp=%s: want every degree at least 1", stageTP(s.TensorStages))
	case s.SequenceParallel && s.MaxTensor() == 1:
		return strategyError("sp=on with tp=1: sequence parallelism splits over the tensor-parallel GPUs")
	case s.TPOverlap && !s.SequenceParallel:
		return strategyError("tpoverlap=on without sp=on: tensor-parallel communication overlaps its GEMMs as all-gathers and reduce-scatters")
	case s.AmaxSync != "" && s.FP8 != FP8Delayed:
		return strategyError("amax-sync=%s without fp8=delayed: the amaxes reduced are delayed scaling's", s.AmaxSync)
	case s.QueueAhead && !s.OneQueue:
		return strategyError("queue-ahead=on without connections=1: it says how the run overlaps at one hardware queue")
	case s.OneQueue && s.FSDP:
		return strategyError("connections=1 with fsdp=on: Megatron's FSDP asserts CUDA_DEVICE_MAX_CONNECTIONS is not 1 (megatron/training/arguments.py)")
	case s.NoGradOverlap && s.FSDP:
		return strategyError("grad-overlap=off with fsdp=on: FSDP reduces each layer's gradients beside the backward (modelled so only)")
	case s.Experts < 0 || s.ExpertTensor < 0:
		return strategyError("ep %d, etp %d: want at least 1", s.Experts, s.ExpertTensor)
	case s.FSDP && s.DistOpt:
		return strategyError("fsdp=on and distopt=on: FSDP shards the optimizer state too (one or the other)")
	case s.FSDP && s.Replicas == 1 && s.ContextDegree() == 1:
		return strategyError("fsdp=on with one replica: sharding needs replicas to shard over")
	case (s.EmbeddingLayer || s.LossLayer) && s.PipelineDegree() == 1:
		return strategyError("%s with one pipeline stage: the embedding and the loss count as layers of a pipeline's split", s.unitKeys())
	case s.RecomputeModules != 0 && s.Recompute != SelectiveRecompute:
		return strategyError("recompute-modules=%s without recompute=selective: the modules are selective recomputation's (Megatron-Core's --recompute-granularity selective)", s.RecomputeModules)
	case s.RecomputeModules >= 1<<len(recomputeNames):
		return strategyError("recompute-modules %#x: not a set of Megatron-Core's modules", uint8(s.RecomputeModules))
	case s.EPOverlap && s.Recomputes().Has(RecomputeMoE):
		return strategyError("epoverlap=on with recompute-modules=%s: Megatron-Core's all-to-all overlap runs without the moe module's recomputation", s.RecomputeModules)
	case s.EPOverlap && s.Recompute == FullRecompute:
		return strategyError("epoverlap=on with recompute=full: Megatron-Core's all-to-all overlap runs without full recomputation")
	case s.Imbalance != 0 && !(s.Imbalance >= 1 && s.Imbalance <= 64):
		return strategyError("imbalance %g: want the most loaded rank's tokens over the mean, from 1 to 64", s.Imbalance)
	}
	if err := s.Software.check(); err != nil {
		return err
	}
	if err := checkFP8(s); err != nil {
		return err
	}
	if err := fp8GatherFits(s); err != nil {
		return err
	}
	if err := s.MemoryRecipe.check(s); err != nil {
		return err
	}
	switch s.Recompute {
	case NoRecompute, SelectiveRecompute, FullRecompute:
	default:
		return strategyError("recompute %q: want none, selective or full", s.Recompute)
	}
	switch s.Schedule {
	case "", decision.GPipe, decision.OneFOneB:
	default:
		return strategyError("schedule %q: want gpipe or 1f1b", s.Schedule)
	}
	// dp may be left to the GPUs the other degrees leave; Resolve checks
	// it then. The context ranks hold the same weights as the replicas:
	// sharding runs over both (dp=1,cp=8,fsdp=on shards over 8).
	if s.DistOpt && s.Replicas == 1 && s.ContextDegree() == 1 {
		return strategyError("shard zero1 with one replica: sharding needs replicas to shard over")
	}
	return nil
}

// check is sw's first setting out of range, as a one-line error.
func (sw Software) check() error {
	if sw.Stack != "" {
		if _, err := LookupStack(sw.Stack); err != nil {
			return strategyError("%v", err)
		}
	}
	switch sw.Dispatcher {
	case "", DispatcherAllToAll, DispatcherAllGather, DispatcherFlex, DispatcherHybridEP:
	default:
		return strategyError("dispatcher %q: want alltoall, allgather, flex (deepep) or hybridep", sw.Dispatcher)
	}
	switch sw.Graphs {
	case "", GraphsOff, GraphsDense, GraphsFull:
	default:
		return strategyError("cuda-graphs %q: want off, dense or full", sw.Graphs)
	}
	if sw.GraphSync < 0 {
		return strategyError("graph-sync %d: want the steps of one graph, at least 1", sw.GraphSync)
	}
	switch {
	case sw.Routing == RoutingCapacity && !(sw.Capacity > 0 && sw.Capacity <= 64):
		return strategyError("routing capacity:%g: want a capacity factor above 0, at most 64", sw.Capacity)
	case sw.Routing != RoutingCapacity && sw.Capacity != 0:
		return strategyError("capacity %g without routing=capacity", sw.Capacity)
	case sw.Routing != "" && sw.Routing != RoutingDropless && sw.Routing != RoutingCapacity:
		return strategyError("routing %q: want dropless or capacity:F", sw.Routing)
	case sw.RankCapacity != 0 && !(sw.RankCapacity >= 1 && sw.RankCapacity <= 64):
		return strategyError("rank-capacity %g: want a budget factor from 1 to 64", sw.RankCapacity)
	}
	switch sw.CPRotate {
	case "", CPRingAllGather, CPRingAllToAll:
	default:
		return strategyError("cp-rotate %q: want allgather or alltoall", sw.CPRotate)
	}
	switch sw.CPComm {
	case "", CPCommP2P, CPCommAllGather, CPCommA2A:
	default:
		return strategyError("cp-comm-type %q: want p2p, all_gather or a2a", sw.CPComm)
	}
	for _, t := range []Toggle{sw.PermuteFusion, sw.RouterFusion, sw.GroupedGEMM, sw.Compile, sw.Expandable, sw.LossFusion} {
		if t > Off {
			return strategyError("a fusion, grouped-gemm or allocator setting %d: want on or off", t)
		}
	}
	return nil
}

// check refuses a memory-recipe key that plan s cannot take, in one
// line: the FP8 keys need a Transformer Engine FP8 recipe (fp8=delayed
// or current: the per-tensor ones whose weights TE 1.x-2.x builds as
// Float8Tensor; the block-scaled recipes hold their own weights,
// blockscaled.go), on a Megatron-Core stack (not torchtitan's or a plain
// PyTorch loop's, which run torchao's or autocast's linears).
func (r MemoryRecipe) check(s Strategy) error {
	var fp8Keys []string
	for _, kv := range []struct {
		k  string
		on bool
	}{{"fp8-params=on", r.FP8Params}, {"fp8-activation=on", r.FP8Activation}, {"fp8-dpa=on", r.FP8DPA}} {
		if kv.on {
			fp8Keys = append(fp8Keys, kv.k)
		}
	}
	// Under a block-scaled recipe (fp8=mxfp8, fp4=nvfp4) fp8-params=on
	// is Megatron-Core's fp8_param/fp4_param: the blocks' weights built
	// under Transformer Engine's quantized_model_init with that recipe
	// (TransformerEngine d0067d0 (v2.18)
	// transformer_engine/pytorch/quantization.py quantized_model_init:
	// modules "hold only quantized copies of its parameters", named for
	// "LoRA-like fine-tuning, where the main parameters of the model do
	// not change"), MXFP8Tensor or NVFP4Tensor parameters
	// (memory/state.go); fp8-activation=on is Megatron-Core's
	// activation_func_fp8_input_store, a plain cast of the activation's
	// saved input whatever the GEMMs' recipe (NVIDIA/Megatron-LM b1030e9
	// megatron/core/fusions/fused_bias_swiglu.py BiasSwiGLUFunction
	// .forward: input.to(torch.float8_e4m3fn) if fp8_input_store).
	// fp8-dpa=on is taken under fp4=nvfp4: Megatron-Core builds the
	// NVFP4 recipe with it (NVIDIA/Megatron-LM d98e8a6
	// megatron/core/fp4_utils.py get_fp4_recipe:
	// NVFP4BlockScaling(fp8_dpa=config.fp8_dot_product_attention)), and
	// Transformer Engine from v2.8 runs that attention in per-tensor FP8
	// beside NVFP4 linears (transformer_engine/pytorch/attention/
	// dot_product_attention/dot_product_attention.py init_fp8_metadata:
	// "elif fp8_recipe.nvfp4() and _dpa_fp8_recipe == ..." builds a
	// DelayedScaling or Float8CurrentScaling recipe for it, chosen by
	// NVTE_DPA_FP8_RECIPE; without that variable it asserts
	// "DotProductAttention does not support NVFP4BlockScaling"), saving
	// Q, K, V and the output in FP8 as the per-tensor recipes do. Under
	// fp8=mxfp8 TE v2.8 has no such recipe for the attention: refused.
	block := BlockScaled(s.FP8) && !(r.FP8DPA && s.FP8 == FP8MX)
	if len(fp8Keys) > 0 {
		keys := strings.Join(fp8Keys, ", ")
		switch {
		case r.FP8DPA && s.FP8 == FP8MX:
			return strategyError("fp8-dpa=on with fp8=mxfp8: Transformer Engine v2.8 runs FP8 attention beside per-tensor FP8 or NVFP4 linears only (use fp8=delayed, current or fp4=nvfp4)")
		case block && r.FP8Params && r.NoTransposeCache:
			return strategyError("fp8-transpose-cache=off with fp8=%s: a block-scaled weight keeps its rowwise and columnwise copies, no transpose to drop", s.FP8)
		case block && strings.HasPrefix(s.Software.Stack, "torchtitan"):
			return strategyError("%s on %s: Transformer Engine's switches (Megatron-Core's stacks), not torchao's", keys, s.Software.Stack)
		case block && s.FSDP && r.FP8Params:
			return strategyError("fp8-params=on with fsdp=on: quantized primary weights are modelled under the distributed optimizer (Megatron-FSDP shards its own)")
		case block:
		case s.FP8 != FP8Delayed && s.FP8 != FP8Current:
			return strategyError("%s without fp8=delayed or fp8=current: Transformer Engine's per-tensor FP8 recipes hold these (fp8=%q)", keys, s.FP8)
		case strings.HasPrefix(s.Software.Stack, "torchtitan"):
			return strategyError("%s on %s: Transformer Engine's switches (Megatron-Core's stacks), not torchao's", keys, s.Software.Stack)
		case s.FSDP && r.FP8Params:
			return strategyError("fp8-params=on with fsdp=on: FP8 primary weights are modelled under the distributed optimizer (Megatron-FSDP shards its own)")
		}
	}
	// Megatron-Core core_v0.18.0 TransformerConfig.__post_init__:
	// "fp8_output_proj must be used together with fp8 mode",
	// "fp8_output_proj requires fp8_recipe='mxfp8'"; the TE layer
	// (TELMHeadColumnParallelLinear) is Megatron-Core's.
	switch {
	case r.FP8OutputProj && s.FP8 != FP8MX:
		return strategyError("fp8-output-proj=on without fp8=mxfp8: Megatron-Core's fp8_output_proj requires fp8_recipe='mxfp8' (fp8=%q)", s.FP8)
	case r.FP8OutputProj && s.Software.Framework() != FrameworkMegatron:
		return strategyError("fp8-output-proj=on on %s: Megatron-Core's TELMHeadColumnParallelLinear", s.Software.Stack)
	}
	if r.NoTransposeCache && !r.FP8Params {
		return strategyError("fp8-transpose-cache=off without fp8-params=on: the transposes are the FP8 primary weights'")
	}
	// Megatron-Core's TransformerConfig.__post_init__ (core_v0.7.0 to
	// core_v0.16.0): "Currently there is no support for Pipeline
	// parallelism with CPU offloading", "CPU offloading does not work
	// when activation recomputation is enabled".
	switch {
	case r.OffloadLayers > 0 && s.PipelineDegree() > 1:
		return strategyError("offload-layers=%d with pp=%d: Megatron-Core offloads activations without a pipeline only", r.OffloadLayers, s.PipelineDegree())
	case r.OffloadLayers > 0 && s.Recompute != NoRecompute:
		return strategyError("offload-layers=%d with recompute=%s: Megatron-Core offloads activations without recomputation only", r.OffloadLayers, s.Recompute)
	case r.GraphPool != "" && (s.Software.Graphs == "" || s.Software.Graphs == GraphsOff):
		return strategyError("graph-pool=%s without cuda-graphs=dense or full: the graphs' buffers are CUDA graphs'", r.GraphPool)
	case r.OffloadLayers > 0 && s.VirtualStages() > 1:
		return strategyError("offload-layers=%d with vp=%d: Megatron-Core offloads activations without a pipeline only", r.OffloadLayers, s.VirtualStages())
	}
	return nil
}

// Written is a plan as a user writes it (--strategy): the strategy
// ParseStrategy reads, and the keys the text names. placer eval takes
// the keys left out at their defaults (tp, cp, pp, vp 1, dp what they
// leave: Resolve); placer search searches them (SpaceOf). A key written
// is the plan's in both: never replaced by another value.
type Written struct {
	Strategy
	keys map[string]bool // the keys named, by their first names (keyName)
}

// ParseWritten reads text as ParseStrategy does and records the keys it
// names.
func ParseWritten(text string) (Written, error) {
	s, err := ParseStrategy(text)
	if err != nil {
		return Written{}, err
	}
	pairs, err := SplitStrategy(text)
	if err != nil {
		return Written{}, err
	}
	w := Written{Strategy: s, keys: map[string]bool{}}
	for _, kv := range pairs {
		w.keys[KeyName(kv.Key)] = true
	}
	return w, nil
}

// Names reports whether the text named key (by its name, KeyName: tp,
// not tensor).
func (w Written) Names(key string) bool { return w.keys[key] }

// Check refuses, in one line, a key of w that no plan of model m on pod
// p has, whatever the keys w leaves out are (Search's plans, every
// degree it tries where a key is left out): a tensor-parallel degree (tp,
// each of stage-tp) that does not divide the heads, the key/value heads
// or a node's GPUs; cp that does not split the sequence; pp above the
// layers; the degrees written whose product does not divide the pod's
// GPUs, or with tp, pp and dp written is not them (context parallelism,
// left out, making up the rest only where Search tries it); dp x mbs
// that does not divide the batch; ep or etp on a dense model, or not
// dividing the experts, a node or the expert FFN; fp8 on GPUs without
// FP8; peft=lora where LoRA is not modelled (FineTuneFits). Each is the
// line Resolve gives for the same mistake. placer eval and placer search
// both check their --strategy with it before anything else, so what one
// refuses for the keys written the other refuses with the same line.
func (w Written) Check(m transformer.Spec, p Pod) error {
	s := w.Strategy
	bad := func(err error) error { return fmt.Errorf("strategy %s: %w", asWritten(s), err) }
	n := p.GPUs()
	if ts := s.TensorStages; ts != nil {
		one := slices.Min(ts) == slices.Max(ts) // Resolve's tp=
		for i, T := range ts {
			name := fmt.Sprintf("stage %d's tp=%d", i, T)
			if one {
				name = fmt.Sprintf("tp=%d", T)
			}
			if err := tensorFits(m, p, T, name); err != nil {
				return bad(err)
			}
		}
	} else if T := s.TensorDegree(); T > 1 {
		if err := tensorFits(m, p, T, fmt.Sprintf("tp=%d", T)); err != nil {
			return bad(err)
		}
	}
	if C := s.ContextDegree(); C > 1 {
		if err := contextFits(m, C); err != nil {
			return bad(err)
		}
		if err := mtpFits(m, C); err != nil {
			return bad(err)
		}
	}
	if w.keys["pp"] {
		eu, lu := s.endUnits()
		if err := pipelineFits(m, s.PipelineDegree(), eu+lu); err != nil {
			return bad(err)
		}
	}
	// The GPUs of the degrees written: a replica's (tp x pp, or the sum
	// of stage-tp), the context's and the replicas'.
	var factors []string
	gpus := 1
	stageTP := s.TensorStages != nil
	for _, d := range []struct {
		key string
		n   int
	}{{"tp", s.TensorDegree()}, {"cp", s.ContextDegree()}, {"pp", s.PipelineDegree()}, {"dp", s.ReplicaCount()}} {
		if w.keys[d.key] && !(stageTP && d.key == "pp") {
			factors, gpus = append(factors, fmt.Sprintf("%s=%d", d.key, d.n)), gpus*d.n
		}
	}
	if stageTP { // Resolve's order: dp first
		sum := 0
		for _, T := range s.TensorStages {
			sum += T
		}
		factors, gpus = append(factors, fmt.Sprintf("the %d GPUs of stage-tp", sum)), gpus*sum
	}
	if w.keys["dp"] && (w.keys["tp"] || stageTP) && (w.keys["pp"] || stageTP) && gpus != n {
		// Only context parallelism is left to make up the GPUs: where it
		// is written, or the rest is not a degree Search tries, the plan
		// has none.
		if rest := n / gpus; w.keys["cp"] || n%gpus != 0 || !slices.Contains(ContextDegrees(m, rest), rest) {
			return bad(worldMismatch(factors, gpus, n, s.ReplicaCount()))
		}
	}
	if len(factors) > 0 && n%gpus != 0 {
		verb := "does"
		if len(factors) == 1 && stageTP {
			verb = "do" // the GPUs of stage-tp
		}
		return bad(fmt.Errorf("%s %s not divide the %d GPUs", strings.Join(factors, " x "), verb, n))
	}
	if w.keys["dp"] {
		if err := batchFits(m, s.ReplicaCount(), max(s.MicroBatchSize, 1)); err != nil {
			return bad(err)
		}
	} else if mbs := s.MicroBatchSize; mbs > 0 && m.Batch%mbs != 0 {
		return bad(fmt.Errorf("the batch of %d is not divisible by mbs=%d", m.Batch, mbs))
	}
	if !m.MoE() {
		if err := expertKeysFit(m, s, asWritten(s)); err != nil {
			return err
		}
	} else if w.keys["ep"] || w.keys["etp"] {
		etp := 1 // left out: 1 or tp, Search tries both
		if w.keys["etp"] {
			etp = max(s.ExpertTensor, 1)
		}
		if err := expertsFit(m, p, s.ExpertDegree(), etp); err != nil {
			return bad(err)
		}
	}
	if err := fp8Fits(s, p); err != nil {
		return bad(err)
	}
	// LoRA on experts or latent attention, a rank over the width, a
	// packed sample over the sequence: Resolve's line, so that search
	// says what eval says rather than that no plan fits.
	if err := FineTuneFits(m, s); err != nil {
		return bad(err)
	}
	return nil
}

// tensorFits checks a tensor-parallel degree T (named name: "tp=8",
// "stage 0's tp=4") against model m and pod p: it divides the heads,
// the key/value heads and a node's GPUs (tensor groups stay inside a
// node).
func tensorFits(m transformer.Spec, p Pod, T int, name string) error {
	switch {
	case m.Heads%T != 0:
		return fmt.Errorf("%s does not divide the %d attention heads", name, m.Heads)
	case m.KVHeads%T != 0:
		return fmt.Errorf("%s does not divide the %d key/value heads", name, m.KVHeads)
	case T > p.PerNode || p.PerNode%T != 0:
		return fmt.Errorf("%s does not divide the %d GPUs of a node (tensor groups stay inside a node)", name, p.PerNode)
	}
	return ssmFits(m, T, name)
}

// contextFits checks a context-parallel degree C against model m: each
// GPU of a context group holds chunks i and 2C-1-i of every sequence
// (load-balanced causal attention), so the sequence splits into 2C equal
// chunks.
func contextFits(m transformer.Spec, C int) error {
	if m.Seq%(2*C) != 0 {
		return fmt.Errorf("cp=%d: the sequence of %d does not split into 2 x cp = %d equal chunks (load-balanced causal attention)", C, m.Seq, 2*C)
	}
	return nil
}

// mtpFits refuses multi-token prediction with context parallelism
// (Megatron-Core's MTP does not support it: its multi_token_prediction
// guide).
func mtpFits(m transformer.Spec, C int) error {
	if m.MTP > 0 && C > 1 {
		return fmt.Errorf("mtp=%d with cp=%d: Megatron-Core's multi-token prediction does not run with context parallelism", m.MTP, C)
	}
	return nil
}

// pipelineFits checks P pipeline stages against model m's layers and the
// units counted as layers beside them (the embedding, the loss).
func pipelineFits(m transformer.Spec, P, units int) error {
	if P > m.Layers+units {
		return fmt.Errorf("pp=%d is more than the %d layers", P, m.Layers+units)
	}
	return nil
}

// batchFits checks that D replicas of micro-batches of mbs samples
// divide model m's batch.
func batchFits(m transformer.Spec, D, mbs int) error {
	// mbs past batch/D first: D x mbs, computed only then, cannot wrap
	// (dp=8,mbs=2^63-1 wrapped to -8, which divided the batch).
	if D < 1 || mbs < 1 || mbs > m.Batch/D || m.Batch%(D*mbs) != 0 {
		return fmt.Errorf("the batch of %d is not divisible by dp=%d x mbs=%d", m.Batch, D, mbs)
	}
	return nil
}

// worldMismatch is the line for a dp written whose plan's GPUs (total,
// the product of factors) are not the pod's n: dp is never replaced by
// what the other degrees leave.
func worldMismatch(factors []string, total, n, dp int) error {
	return fmt.Errorf("%s is %s, the cluster has %d: give tp, cp and pp whose product with dp=%d is %d, or leave dp out (it is then what they leave)",
		strings.Join(factors, " x "), gpusOf(total), n, dp, n)
}

// gpusOf is "1 GPU", "8 GPUs".
func gpusOf(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}

// fp8Fits refuses an FP8 recipe on GPUs without FP8 tensor cores.
func fp8Fits(s Strategy, p Pod) error {
	if s.FP8 != "" && p.Kernels.FP8Peak <= 0 {
		return fmt.Errorf("fp8=%s on %s: its GPUs have no FP8 tensor cores", s.FP8, p.Hardware.Name)
	}
	if err := rocmFits(s, p); err != nil {
		return err
	}
	return blockScaledFits(s, p)
}

// expertKeysFit refuses the experts' keys on model m without experts
// (written: the strategy as its errors name it).
func expertKeysFit(m transformer.Spec, s Strategy, written asWritten) error {
	if !m.MoE() && (s.Experts > 1 || s.ExpertTensor > 0 || s.Imbalance > 1 || s.EPOverlap) {
		return fmt.Errorf("strategy %s: ep, etp, imbalance or epoverlap on a model without experts", written)
	}
	return nil
}

// expertsFit checks an expert-parallel degree ep and an
// expert-tensor-parallel degree etp against model m's experts and pod
// p's nodes.
func expertsFit(m transformer.Spec, p Pod, ep, etp int) error {
	switch {
	case m.Experts%ep != 0:
		return fmt.Errorf("ep=%d does not divide the %d experts", ep, m.Experts)
	case etp > p.PerNode || p.PerNode%etp != 0:
		return fmt.Errorf("etp=%d does not divide the %d GPUs of a node (expert tensor groups stay inside a node)", etp, p.PerNode)
	case m.ExpertFFN%etp != 0:
		return fmt.Errorf("etp=%d does not divide the expert FFN of %d", etp, m.ExpertFFN)
	}
	return nil
}

// MinContextSeq and MinContextTokens bound the context-parallel degrees
// Search tries: none below a sequence of MinContextSeq tokens, and none
// that leaves a GPU fewer than MinContextTokens of each sequence (the
// sequence the node's attention rate was measured at, Kernels; below it
// context parallelism only shrinks the kernels).
const (
	MinContextSeq    = 8192
	MinContextTokens = 4096
)

// ContextDegrees are the context-parallel degrees Search tries on gpus
// GPUs (those a tensor group leaves): 1, and where the sequence is at
// least MinContextSeq the powers of two C dividing gpus that split it
// into 2C equal chunks with at least MinContextTokens tokens a GPU.
func ContextDegrees(m transformer.Spec, gpus int) []int {
	out := []int{1}
	if m.Seq < MinContextSeq {
		return out
	}
	for C := 2; gpus%C == 0 && m.Seq%(2*C) == 0 && m.Seq/C >= MinContextTokens; C *= 2 {
		out = append(out, C)
	}
	return out
}

// FineTuneFits checks the fine-tuning of strategy s against model m:
// LoRA is modelled for standard attention (no latent attention), with
// experts on Megatron-Core's layers only (loramoe.go), its rank under
// the model's width, and
// each packed sample no longer than the model's sequence. The error is
// one line.
func FineTuneFits(m transformer.Spec, s Strategy) error {
	f := s.FineTune
	switch {
	case f.LoRA() && m.MoE() && s.Software.Framework() != FrameworkMegatron:
		return fmt.Errorf("peft=lora with experts on %s: LoRA over experts is modelled on Megatron-Core's layers (Megatron-Bridge's PEFT) only", s.Software.Framework())
	case f.LoRA() && m.MLA():
		return fmt.Errorf("peft=lora with latent attention: LoRA's costs are modelled for standard attention only")
	case f.LoRA() && f.LoRARank >= m.Hidden:
		return fmt.Errorf("lora-rank=%d: not under the model's hidden size %d", f.LoRARank, m.Hidden)
	}
	for _, l := range f.PackLens {
		if l > m.Seq {
			return fmt.Errorf("pack-len=%s: a sample of %d tokens is longer than the packed sequence (seq %d)", stageTP(f.PackLens), l, m.Seq)
		}
	}
	return nil
}

// RecipeFits checks the memory-recipe keys of strategy s against model
// m, in one line: CPU offload of fewer layers than the model's
// (Megatron-Core: "CPU offloading can be done only for layers less than
// num_layers") and of dense blocks of standard attention, FP8 attention
// of standard attention (the memory model counts these blocks' saved
// tensors alone: memory/recipe.go).
func RecipeFits(m transformer.Spec, s Strategy) error {
	r := s.MemoryRecipe
	special := m.MoE() || m.MLA() || m.Hybrid() || m.Mixed()
	switch {
	case r.OffloadLayers >= m.Layers && r.OffloadLayers > 0:
		return fmt.Errorf("offload-layers=%d: CPU offloading can be done only for fewer layers than the model's %d (Megatron-Core)", r.OffloadLayers, m.Layers)
	case r.OffloadLayers > 0 && special:
		return fmt.Errorf("offload-layers=%d: CPU offload is modelled for dense blocks of standard attention only", r.OffloadLayers)
	case r.NoTransposeCache && special:
		return fmt.Errorf("fp8-transpose-cache=off: the transposes in flight are modelled for dense blocks of standard attention only")
	case r.GraphPool != "" && special:
		return fmt.Errorf("graph-pool=%s: the graphs' buffers are modelled for dense blocks of standard attention only", r.GraphPool)
	case r.FP8DPA && special:
		return fmt.Errorf("fp8-dpa=on: FP8 attention is modelled for dense blocks of standard attention only")
	}
	return nil
}
