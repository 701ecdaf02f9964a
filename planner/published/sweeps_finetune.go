package published

// bridgeFineTuneSource is Megatron-Bridge's archive read for its DGX-H100
// fine-tuning rows: the 26.06 NeMo container's "SFT Performance" and
// "LoRA Performance" tables, Llama 3 70B (NVIDIA-NeMo/Megatron-Bridge
// docs/performance-summary-archive.md at 067f987d).
const bridgeFineTuneSource = "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md at 067f987d (26.06 NeMo container, DGX-H100 SFT and LoRA rows of Llama 3 70B)"

// bridgeFineTuneStack is what the rows ran, as Megatron-Bridge v0.5.1's
// performance scripts set it (scripts/performance/configs/llama/
// llama3_llm_finetune.py llama3_70b_sft_config_h100 and
// llama3_70b_lora_config_h100, llama3_workload_base_configs.py
// _LLAMA3_70B_SFT_CONFIG_H100 and LLAMA3_70B_LORA_CONFIG_H100_FP8_CS_V1,
// src/megatron/bridge/recipes/llama/llama3.py llama3_70b_peft_config):
// sequences of 4,096 packed from the recipe's fine-tuning data
// (packed_sequence_specs.packed_sequence_size 4096), FP8 current
// scaling, BF16 gradient reduction, the distributed optimizer, TP
// communication overlap with TP > 1 (CommOverlapConfig tp_comm_overlap);
// LoRA of dim 16, alpha 32 on linear_qkv alone ("Override target_modules
// to only apply LoRA to QKV"). Left out: the SFT row's CUDA graphs over
// the MLP (cuda_graph_scope "mlp": placer graphs the attention and the
// MLP together or nothing).
const bridgeFineTuneStack = "Megatron-Bridge 26.06 (v0.5.1's performance scripts): packed sequences of 4,096, FP8 current scaling, BF16 gradient reduction, the distributed optimizer, TP overlap; LoRA dim 16, alpha 32 on linear_qkv; the SFT row's CUDA graphs over the MLP left out"

// packNote is the rows' assumption about the data: the archive states
// the packed length (4,096), not the samples' lengths; the recipes'
// default data is SQuAD (question-answer pairs of a few hundred tokens),
// read as samples of 256 tokens each, chosen before the rows were
// evaluated, not fitted to them.
const packNote = "samples of 256 tokens packed into each 4,096 (assumed: the archive states the packed length only; the recipe's data is SQuAD's question-answer pairs)"

// bridgeFineTune are the fine-tuning sweeps, one row each (their GPUs
// differ): SFT (every weight trained) and LoRA of Llama 3 70B on
// DGX-H100.
func bridgeFineTune() []Sweep {
	const common = ",mbs=1,sp=on,tpoverlap=on,grads=bf16,fp8=current,pack=on,pack-len=256,stack=megatron-bridge-26.06"
	sweep := func(name string, row SweepRow) Sweep {
		return Sweep{Name: "Megatron-Bridge DGX-H100 26.06 fine-tuning: Llama 3 70B " + name, Set: SetBridgeFineTune, Source: bridgeFineTuneSource,
			Unit: TokensPerGPU, Stack: bridgeFineTuneStack, Rows: []SweepRow{row}}
	}
	return []Sweep{
		sweep("SFT", SweepRow{Label: "SFT FP8: 32 GPUs, TP4 PP4 VP5, MBS 1, GBS 32", Workload: "llama3-70b:seq=4096,batch=32", Cluster: "dgx-h100:4",
			Strategy: "tp=4,pp=4,vp=5,dp=2,distopt=on" + common, Measured: 1638, Note: packNote}),
		// dp=1: nothing to shard, the distributed optimizer is the plain
		// one.
		sweep("LoRA", SweepRow{Label: "LoRA FP8: 8 GPUs, TP2 PP4 VP20, MBS 1, GBS 32", Workload: "llama3-70b:seq=4096,batch=32", Cluster: "dgx-h100:1",
			Strategy: "tp=2,pp=4,vp=20,dp=1,peft=lora,lora-rank=16,lora-alpha=32,lora-targets=qkv" + common, Measured: 2643, Note: packNote}),
	}
}
