package plans

import (
	"fmt"

	"github.com/placer/placer/planner/plan"
)

// megatronFineTune writes plan s's fine-tuning as Megatron-LM
// core_v0.16.1's arguments, or refuses it in one line:
//   - pack=on is --sft: pretrain_gpt.py then builds SFTDataset
//     (megatron/training/datasets/sft_dataset.py), which packs a jsonl
//     file's conversations into sequences of --seq-length and hands the
//     model their cu_seqlens, so that attention runs within each
//     conversation (get_batch's packed THD format). The mix (pack-len)
//     is the data's own: no flag sets it.
//   - peft=lora has no flag: Megatron-LM trains every parameter (LoRA
//     is Megatron-Bridge's, src/megatron/bridge/peft).
func megatronFineTune(s plan.Strategy, add func(...string)) error {
	if s.LoRA() {
		return fmt.Errorf("megatron arguments: peft=lora: Megatron-LM core_v0.16.1 has no LoRA flag (it trains every parameter; Megatron-Bridge's peft=LoRA(...) runs adapters)")
	}
	if s.Packed() {
		add("--sft")
	}
	return nil
}

// titanFineTuneErr refuses plan s's fine-tuning for torchtitan of
// release version in one line: it has no adapters (v0.2.2's trainer
// trains every parameter of the model; LoRA appears only in its
// experiments' Hugging Face backend), and its block-causal attention
// over packed documents is a model flavour of its own (v0.2.2's
// llama3 "8B_flex" and "8B_varlen": attn_mask_type "block_causal"),
// which placer's export does not choose.
func titanFineTuneErr(s plan.Strategy, version string) error {
	switch {
	case s.LoRA():
		return fmt.Errorf("export: torchtitan: peft=lora: torchtitan %s has no LoRA setting (its trainer trains every parameter)", version)
	case s.Packed():
		return fmt.Errorf("export: torchtitan: pack=on: torchtitan %s: attention within packed documents is a model flavour of its own (v0.2.2's llama3 8B_flex, 8B_varlen: block_causal), which placer does not write", version)
	}
	return nil
}
