package plan

import (
	"fmt"
	"strconv"
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
	// FP8OutputProj: fp8-output-proj=on (MemoryRecipe.check; the output
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
