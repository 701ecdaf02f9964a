package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// The memory of a recipe (DESIGN.md §14, every run that ran fits): how a recipe holds its
// weights and the activations its backward reads, each a strategy key
// where a recipe switches it, so that a plan that ran is counted as it
// ran. The memory model (planner/memory) counts each; the
// caching allocator's settings go to evaluate/alloc's simulator.
//
//   - fp8-params=on: the blocks' linear weights are FP8 tensors of one
//     byte, no BF16 copy (Transformer Engine's fp8_model_init, under
//     which Float8Tensor parameters are built: NeMo's fp8_params,
//     Megatron-LM's --fp8-param-gather). TransformerEngine v1.6
//     transformer_engine/pytorch/module/linear.py _Linear.forward:
//     "if primary_weights_in_fp8: # Weight is already in FP8 ...
//     weight_fp8 = weight" (no cast into a BF16 weight's FP8
//     workspace), and _Linear.backward takes the weight's transpose,
//     one byte an element, with weight.transpose_2d(cache=...), cached
//     on the tensor. The distributed optimizer keeps the FP32 master
//     copy of a trained weight (its 12 bytes); a frozen one (LoRA's
//     base) has none.
//   - fp8-activation=on: the MLP activation's input stored in FP8 for
//     its backward (Megatron-Core's activation_func_fp8_input_store,
//     NeMo's fp8_activation_input_store: "Store the input of MLP
//     activation function in FP8 for backprop to save memory").
//   - fp8-transpose-cache=off: with fp8-params, the FP8 weights'
//     transposes are not cached (NeMo's and Megatron-Core's
//     disable_parameter_transpose_cache: Megatron-Core's TE layers pass
//     is_first_microbatch None, "None if self.disable_parameter_transpose_cache
//     else self.is_first_microbatch", and TE v1.6 _Linear.backward
//     makes the transpose with transpose_2d(cache=False)): each is made
//     for its GEMM in the backward and freed after it.
//   - hidden-dropout=0: the blocks' hidden dropout (and the
//     embedding's) at probability 0 (NeMo's hidden_dropout 0.0, as
//     Megatron-Bridge's llama providers set it): no dropout mask is kept
//     (at p = 0 PyTorch's dropout returns its input).
//   - fp8-dpa=on: Transformer Engine's FP8 dot-product attention
//     (fp8_dot_product_attention, with NVTE_FP8_DPA_BWD=1, its
//     default): FusedAttnFunc.forward (TransformerEngine v1.6
//     transformer_engine/pytorch/attention.py) saves q_fp8, k_fp8,
//     v_fp8 and out_fp8, one byte an element, and the softmax's
//     statistics (aux_ctx_tensors), not the BF16 q, k, v and output
//     ("qkvo_tensors = (q, k, v, out_save) if not ctx.fp8 else (None,
//     None, None, None)").
//   - offload-layers=N: N layers of each model chunk offload the
//     activations they keep to the host (Transformer Engine's
//     get_cpu_offload_context, NeMo's cpu_offloading with
//     cpu_offloading_num_layers): memory.offloadedLayers' count.
//   - graph-pool=layers: Transformer Engine's make_graphed_callables
//     over every transformer layer, one graph a layer, model chunk and
//     micro-batch (NeMo's enable_cuda_graph, LAYER_CUDA_GRAPH: NVIDIA's
//     MLPerf v4.0 GPT-3 custom_callbacks.py builds a sample input of one
//     hidden state, "torch.ones((slen, micro_batch_size, hidden))", for
//     each, get_num_microbatches() of them a layer, and captures them in
//     the schedule's order, _order). Each graph keeps for its lifetime
//     (TransformerEngine v1.6 graph.py _make_graphed_callables) its
//     sample input, its static output, its static output gradient
//     (torch.empty_like) and its static input gradient: four hidden
//     states (memory.graphBuffers); the activations it saves between
//     its forward and backward are in the graphs' shared pool, captured
//     in the order they run, and counted as without graphs.
//   - gc-threshold=F and memory-fraction=F: PyTorch's caching
//     allocator's garbage_collection_threshold
//     (PYTORCH_CUDA_ALLOC_CONF) and the process's memory fraction
//     (torch.cuda.set_per_process_memory_fraction), as evaluate/alloc
//     replays them: the threshold acts only where a fraction is set
//     (c10/cuda/CUDACachingAllocator.cpp malloc: "if (set_fraction &&
//     garbage_collection_threshold() > 0.0)
//     garbage_collect_cached_blocks").
type MemoryRecipe struct {
	// FP8Params: fp8-params=on.
	FP8Params bool `json:",omitempty"`
	// NoTransposeCache: fp8-transpose-cache=off.
	NoTransposeCache bool `json:",omitempty"`
	// NoHiddenDropout: hidden-dropout=0.
	NoHiddenDropout bool `json:",omitempty"`
	// FP8Activation: fp8-activation=on.
	FP8Activation bool `json:",omitempty"`
	// FP8OutputProj: fp8-output-proj=on (recipe.go's check; the output
	// layer's costs: planner/outputproj.go).
	FP8OutputProj bool `json:",omitempty"`
	// FP8DPA: fp8-dpa=on.
	FP8DPA bool `json:",omitempty"`
	// OffloadLayers: offload-layers=N (0: none offloaded).
	OffloadLayers int `json:",omitempty"`
	// GraphPool: graph-pool=layers ("": no graphs' static buffers).
	GraphPool string `json:",omitempty"`
	// GCThreshold and MemoryFraction: gc-threshold=F, memory-fraction=F
	// (0: not set).
	GCThreshold    float64 `json:",omitempty"`
	MemoryFraction float64 `json:",omitempty"`
}

// GraphPoolLayers is graph-pool=layers.
const GraphPoolLayers = "layers"

// fraction reads a share above 0 and below 1 (at most 1 where whole).
func fraction(v string, whole bool) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0 && (f < 1 || whole && f <= 1)) {
		if whole {
			return 0, fmt.Errorf("%q is not a share above 0, at most 1", v)
		}
		return 0, fmt.Errorf("%q is not a share above 0, below 1 (PyTorch refuses 1 and above)", v)
	}
	return f, nil
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

// InBF16 is pl with its transformer layers outside the low-precision
// recipe, as Megatron-Core builds and runs a layer it keeps in BF16
// (fp8_utils.py get_fp8_context, fp4_utils.py get_fp4_context: no
// quantized_model_init around its build, no autocast around its
// forward): BF16 GEMMs (no FP8 recipe), BF16 weights (no FP8 or NVFP4
// primary weights, so no transpose cache to drop), BF16 attention (no
// fp8-dpa). The MLP activation's FP8 input store is Megatron-Core's own
// cast, not Transformer Engine's autocast: kept. What the framework
// costs a stage's BF16 layers as (cost.HighPrecisionLayers).
func (pl Plan) InBF16() Plan {
	pl.FP8 = ""
	pl.FP8Params, pl.NoTransposeCache, pl.FP8DPA = false, false, false
	return pl
}
