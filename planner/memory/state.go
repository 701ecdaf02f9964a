package memory

import (
	"strings"

	"github.com/placer/placer/planner/plan"
)

// stageState is stage s's weights, FP8 weight copies, gradients and
// optimizer state, bytes, on one of its GPUs (stageMemory's).
func (c *counter) stageState(s int, st *Stage) (w, fp8, g, o float64) {
	m, pl := &c.m, &c.pl
	if pl.FSDP && pl.Titan() {
		w, g, o = c.fsdp2State(s, st)
		return w, 0, g, o
	}
	if pl.Run.Eager && !pl.Titan() && !pl.FSDP && !pl.DistOpt && pl.FP8 == "" {
		return c.eagerState(st)
	}
	gb := pl.GradBytes()
	w = st.Params * bf16
	g = st.Params * gb
	o = st.Params * 12
	if pl.DistOpt {
		o /= float64(pl.DP * pl.CP) // sharded over the data-parallel and context ranks
		if pl.Run.LAMB && !m.MoE() && c.pod != nil {
			o = st.Params * distLAMBState / distLAMBShards(pl, c.pod, s)
		}
		if m.MoE() {
			o = (st.Params-st.Experts)*12/float64(pl.DP*pl.CP) + st.Experts*12/float64(pl.EDP)
		}
	}
	if pl.FP8 != "" {
		fp8 = lowPrecisionCopyBytes(pl.FP8) * st.Layers // the blocks' FP8 weights, row- and column-wise
		// On a GPU that runs FP8 GEMMs in every layout (Blackwell:
		// pod.NonTNFP8), a per-tensor-scaled FP8 weight has no
		// transposed copy: one byte, not two.
		noT := !plan.BlockScaled(pl.FP8) && c.pod.NonTNFP8()
		if noT {
			fp8 = st.Layers
		}
		switch {
		case (bridgeBlockParams(pl) || pl.FP8Params && plan.BlockScaled(pl.FP8)) && !pl.FSDP:
			// Block-scaled primary weights (Bridge's MXFP8 and late
			// NVFP4 recipes, or fp8-params=on with fp8=mxfp8 or
			// fp4=nvfp4: Transformer Engine's quantized_model_init,
			// plan/recipe.go): the blocks' weights are their rowwise
			// and columnwise copies alone (NVFP4Tensor: FP4 packed two
			// to a byte and an E4M3 scale a 16-element block, each
			// usage; TransformerEngine d0067d0
			// transformer_engine/pytorch/tensor/nvfp4_tensor.py
			// NVFP4Quantizer.inner_tensor_specs). The embedding and
			// the output layer stay BF16 (st.Params - st.Layers).
			w -= st.Layers * bf16
		case (bridgeFP8Params(pl) || pl.FP8Params) && !pl.FSDP:
			// FP8 primary weights (Bridge's FP8 current-scaling runs,
			// or fp8-params=on: plan/recipe.go): the blocks' weights
			// are FP8 (one byte) with their transpose (one byte; none
			// on Blackwell), no BF16 copy.
			w -= st.Layers * (bf16 - 1)
			fp8 = st.Layers
			if pl.NoTransposeCache {
				fp8 = c.transposeInFlight() // recipe.go
			}
			if noT {
				fp8 = 0
			}
		}
	}
	if pl.FSDP {
		// Sharded over the C x D ranks (a model with experts: its
		// experts' over the expert-data-parallel ones), but for two
		// layers' weights gathered (the one running and the next,
		// prefetched: Megatron-FSDP's unit is a layer) and one layer's
		// gradient before its reduce-scatter.
		D := float64(pl.DP * pl.CP)
		var layer float64
		if l := pl.Stages[s]; l > 0 {
			layer = st.Layers / float64(l)
		}
		if m.MoE() {
			E := float64(pl.EDP)
			dense := st.Params - st.Experts
			w = dense*bf16/D + st.Experts*bf16/E
			if pl.FP8 != "" {
				fp8 = lowPrecisionCopyBytes(pl.FP8) * ((st.Layers-st.Experts)/D + st.Experts/E)
			}
			g = dense*gb/D + st.Experts*gb/E
			o = dense*12/D + st.Experts*12/E
			return w + 2*layer*bf16, fp8, g + layer*gb, o
		}
		w, g, o = w/D+2*layer*bf16, g/D+layer*gb, st.Params*12/D
		fp8 /= D
	}
	return w, fp8, g, o
}

// eagerState is a plain PyTorch stage's weights, gradients and
// optimizer state (the torch-eager and hf-eager stacks: a hand-written
// or Hugging Face loop, DDP, torch.optim.AdamW): the weights and their
// gradients in the weights' dtype, and AdamW's two moments as its
// parameters are (torch/optim/adamw.py: zeros_like the parameter). Under
// autocast over FP32 weights that is 4 + 4 + 8 bytes a parameter, and
// autocast's BF16 copy of each block weight its GEMMs read, saved for
// their backward (2 bytes a block parameter, counted with the weights:
// one micro-batch's, as a step without a pipeline holds one); with BF16
// weights 2 + 2 + 4. Megatron's count (2 + 4 + 12) is 18 against 18
// under autocast and 8 with BF16 weights.
func (c *counter) eagerState(st *Stage) (w, fp8, g, o float64) {
	if c.pl.Run.FP32Weights {
		return st.Params*4 + st.Layers*bf16, 0, st.Params * 4, st.Params * 8
	}
	return st.Params * bf16, 0, st.Params * bf16, st.Params * 2 * bf16
}

// fsdp2State is stage s's weights, gradients and optimizer state under
// torchtitan's FSDP2 (fully_shard of every block and of the model,
// MixedPrecisionPolicy BF16 parameters, reduce in FP32 or BF16;
// pytorch/torchtitan torchtitan/parallelisms/parallelize_llama.py
// apply_fsdp at 9dec370): the parameters are sharded FP32 over the
// C x D ranks with their FP32 gradients and AdamW's two FP32 moments (16
// bytes a parameter over C x D); a block's BF16 weights are gathered for
// its forward and its backward, the running block's and the next one,
// prefetched. With a pipeline torchtitan does not reshard after the
// forward (reshard_after_forward=not pp_enabled), so every block of the
// stage stays gathered, and torch's pipelining runs every micro-batch
// but the last without gradient sync (stage.py
// backward_maybe_with_nosync): FSDP2 accumulates the unsharded
// gradients in the reduce dtype. Without a pipeline one block's BF16
// gradient and its reduce-dtype copy wait for the reduce-scatter.
// Float8's weight casts are activations, not state (titanFP8Weights).
func (c *counter) fsdp2State(s int, st *Stage) (w, g, o float64) {
	pl := &c.pl
	D := float64(pl.DP * pl.CP)
	rd := pl.GradBytes() // the reduce dtype
	var layer float64
	if l := pl.Stages[s]; l > 0 {
		layer = st.Layers / float64(l)
	}
	w, g, o = st.Params*4/D, st.Params*4/D, st.Params*8/D
	if pl.PP > 1 {
		return w + st.Params*bf16, g + st.Params*rd, o
	}
	// The root (the embedding, the final norm, the output layer) is not
	// resharded after the forward (FSDP2 sets the root's
	// reshard_after_forward to False) and its BF16 gradients wait for
	// the root's reduce-scatter at the end of the backward.
	root := st.Params - st.Layers
	return w + 2*layer*bf16 + root*bf16, g + layer*(bf16+rd) + root*bf16, o
}

// bridgeBlockParams is whether plan pl keeps block-scaled primary
// weights, as Megatron-Bridge's runs do under its MXFP8 recipe in every
// release and under its NVFP4 recipe from 26.04.01 (fp4ParamStacks): its
// blocks' weights are Transformer Engine quantized tensors, their
// rowwise and columnwise copies with their scales (plan.BlockCopyBytes), no
// BF16 copy; the distributed optimizer keeps the FP32 master (its 12
// bytes).
//   - MXFP8: bf16_with_mxfp8_mixed sets fp8_param_gather, which sets
//     fp8_param (src/megatron/bridge/training/mixed_precision.py,
//     v0.3.0 to v0.5.0; the post-init asserts
//     reuse_grad_buf_for_mxfp8_param_ag with it), so Megatron-Core builds
//     the blocks' linear weights under fp8_model_init with the MXFP8
//     recipe (NVIDIA/Megatron-LM core_v0.16.0 megatron/core/fp8_utils.py
//     get_fp8_context, is_init: config.fp8_param): MXFP8Tensor
//     parameters. With reuse_grad_buf_for_mxfp8_param_ag the distributed
//     optimizer's parameter buffer is the gradient buffer
//     (distributed/param_and_grad_buffer.py: "Create a shared buffer for
//     param AG and grad RS", param_data = shared_buffer, and param.data
//     not remapped onto it): the BF16 all-gather lands in the gradient
//     buffer and is copied into the MXFP8 parameters
//     (param.data.copy_(param_slice)), so no BF16 weight stays.
//   - NVFP4: bf16_with_nvfp4_mixed sets fp4_param_gather (and with it
//     fp4_param) from v0.4.2 (26.04.01) on, fp8_param_gather False and
//     no FP4 parameters before (v0.3.0 to v0.4.0): Megatron-Core
//     core_v0.17.0 fp4_utils.py get_fp4_context builds the weights under
//     fp8_model_init with the NVFP4 recipe where config.fp4_param.
func bridgeBlockParams(pl *plan.Plan) bool {
	if !strings.HasPrefix(pl.Software.Stack, "megatron-bridge-") {
		return false
	}
	return pl.FP8 == plan.FP8MX || pl.FP8 == plan.FP4NV && fp4ParamStacks[pl.Software.Stack]
}

// fp4ParamStacks are the Megatron-Bridge stacks whose NVFP4 recipe keeps
// NVFP4 primary weights: v0.4.2 (26.04.01) and v0.5.0 (26.06)
// mixed_precision.py bf16_with_nvfp4_mixed, fp4_param_gather = True.
var fp4ParamStacks = map[string]bool{"megatron-bridge-26.04.01": true, "megatron-bridge-26.06": true}

// bridgeFP8Params is whether plan pl keeps FP8 primary weights, as
// Megatron-Bridge's FP8 current-scaling runs do: their performance
// scripts take bf16_with_fp8_current_scaling_mixed
// (scripts/performance/utils/helpers.py get_precision_config "fp8_cs"),
// which sets fp8_param_gather = True and with it fp8_param
// (src/megatron/bridge/training/mixed_precision.py), in every tag from
// v0.1.0rc3 to v0.5.1 (NVIDIA-NeMo/Megatron-Bridge): Megatron-Core then
// builds the blocks' weights under Transformer Engine's fp8_model_init,
// FP8 tensors of one byte, the distributed optimizer keeping the FP32
// master copy (its 12 bytes); on Hopper the dgrad GEMM reads their
// transpose, one byte more.
func bridgeFP8Params(pl *plan.Plan) bool {
	return pl.FP8 == "current" && strings.HasPrefix(pl.Software.Stack, "megatron-bridge-")
}

// lowPrecisionCopyBytes is the bytes a block weight's low-precision
// copies take per element under recipe: the FP8 recipes' row- and
// column-wise bytes (one each), the block-scaled ones' with their
// scales (plan.BlockCopyBytes).
func lowPrecisionCopyBytes(recipe string) float64 {
	if plan.BlockScaled(recipe) {
		return plan.BlockCopyBytes(recipe)
	}
	return 2
}

// distLAMBState is the bytes a parameter of apex's DistributedFusedLAMB
// shard (contrib/optimizers/distributed_fused_lamb.py, 7972dd2,
// _lazy_init_stage1): its FP32 master weights, two moments and update
// term (_fp32_p, _fp32_m, _fp32_v, _fp32_u), 4 x 4.
const distLAMBState = 16

// distLAMBShards is the GPUs DistributedFusedLAMB shards its state over:
// its group, one node's GPUs (`self._group_size =
// torch.cuda.device_count()` where dwu_group_size is 0, as NVIDIA's MLPerf
// BERT configs leave it), at most the replicas; not every replica
// (mechanisms.DistLAMBShards, the step's share).
func distLAMBShards(pl *plan.Plan, pod *plan.Pod, s int) float64 {
	_, dpG := pl.Groups(*pod, s)
	return float64(max(1, min(dpG.PerNode, pl.DP*pl.CP)))
}
