package plan

import (
	"fmt"

	"github.com/placer/placer/graph/transformer"
)

// checkHybrid refuses, in one line, the plans of a hybrid model
// (transformer.Spec.Pattern: Nemotron-H) that placer does not cost: its
// Mamba-2 layers are costed as Megatron-Core's MambaMixer runs them
// (planner/layers.go's hybridLayer), not as an eager stack's modules, and without
// context parallelism (the scan's state handed along the sequence's
// shards is not costed); LoRA (checkHybridLoRA); its blocks of experts
// (checkHybridExperts).
func (pl *Plan) checkHybrid(m transformer.Spec, written asWritten) error {
	if err := pl.checkHybridLoRA(m, written); err != nil {
		return err
	}
	nm, _, _ := m.Kinds()
	ng, _ := m.MixerKinds()
	if !(m.Hybrid() && (nm > 0 || m.MoE())) && !(m.Mixed() && ng > 0) {
		return nil
	}
	switch {
	case (pl.Run.Eager || pl.Titan()) && nm == 0 && ng == 0:
		return fmt.Errorf("strategy %s: a hybrid model's layers of experts (E) are costed as Megatron-Core runs them: not under an eager or torchtitan stack", written)
	case pl.Run.Eager || pl.Titan():
		return fmt.Errorf("strategy %s: a hybrid model's Mamba-2 or Gated DeltaNet layers are costed as Megatron-Core runs them: not under an eager or torchtitan stack", written)
	case pl.CP > 1:
		return fmt.Errorf("strategy %s: cp=%d with Mamba-2 or Gated DeltaNet layers: placer does not cost a context-parallel scan", written, pl.CP)
	}
	return pl.checkHybridExperts(m, written)
}

// checkHybridExperts refuses, in one line, what placer does not price
// of a plan of a hybrid with blocks of experts (transformer.KindExperts,
// E: Nemotron 3, transformers 5.24.0's NemotronHConfig defaults), whose
// blocks it prices as Megatron-Core's MambaStack runs them
// (NVIDIA/Megatron-LM core_v0.16.1, 55ac7082; planner's hybridLayer,
// memory's hybridStageParams):
//   - virtual pipeline stages: MambaStack asserts there are none
//     (megatron/core/ssm/mamba_block.py,
//     _select_layers_for_pipeline_parallel: "The Mamba hybrid model does
//     not currently support virtual/interleaved pipeline parallelism");
//   - epoverlap=on: the combined 1F1B schedule that overlaps the
//     experts' all-to-alls (pipeline_parallel/schedules.py,
//     overlap_moe_expert_parallel_comm) asks the model's
//     build_schedule_plan, which GPTModel has and MambaModel has not
//     (models/mamba/mamba_model.py; core_v0.18.0 alike);
//
// (LoRA: checkHybridLoRA, whatever the hybrid's blocks.)
func (pl *Plan) checkHybridExperts(m transformer.Spec, written asWritten) error {
	if !m.Hybrid() || !m.MoE() {
		return nil
	}
	switch {
	case pl.VP > 1:
		return fmt.Errorf("strategy %s: vp=%d with a hybrid's layers of experts (E): Megatron-Core's MambaStack runs no virtual pipeline stages", written, pl.VP)
	case pl.EPOverlap:
		return fmt.Errorf("strategy %s: epoverlap=on with a hybrid's layers of experts (E): Megatron-Core's MambaModel has no schedule plan for the combined 1F1B overlap", written)
	}
	return nil
}

// checkHybridLoRA refuses, in one line, LoRA on a hybrid model (a
// pattern of Mamba-2, attention, MLP and expert blocks: Nemotron-H).
// Megatron-Bridge 0.5.0's PEFT of Nemotron-H (recipes/nemotronh:
// nemotronh_*_peft_config, nemotron_3_nano_peft_config) adapts
// linear_qkv, linear_proj, linear_fc1, linear_fc2, in_proj and out_proj
// (the Mamba-2 mixers' two projections; the routed experts through
// linear_fc1 and linear_fc2); placer prices a hybrid's blocks whole
// (planner's hybridLayer), without LoRA's frozen base or the adapters,
// so such a plan would be priced as (almost) full training: not priced.
func (pl *Plan) checkHybridLoRA(m transformer.Spec, written asWritten) error {
	if !m.Hybrid() || !pl.LoRA() {
		return nil
	}
	return fmt.Errorf("strategy %s: LoRA on a hybrid (Mamba) model is not priced: its blocks are priced whole, without LoRA's frozen base or the adapters Megatron-Bridge's Nemotron-H PEFT puts on in_proj, out_proj, linear_qkv, linear_proj, linear_fc1 and linear_fc2", written)
}

// ssmFits checks a tensor-parallel degree T (named name) against a
// hybrid's Mamba-2 heads and groups, which Megatron-Core's MambaMixer
// splits over the tensor group (each rank whole heads and whole groups).
func ssmFits(m transformer.Spec, T int, name string) error {
	nm, _, _ := m.Kinds()
	ng, _ := m.MixerKinds()
	switch {
	case ng > 0 && (m.GDN.KHeads%T != 0 || m.GDN.VHeads%T != 0):
		return fmt.Errorf("%s does not divide the %d key and %d value heads of the Gated DeltaNet", name, m.GDN.KHeads, m.GDN.VHeads)
	case nm == 0:
		return nil
	case m.SSM.Heads%T != 0:
		return fmt.Errorf("%s does not divide the %d Mamba-2 heads", name, m.SSM.Heads)
	case m.SSM.Groups%T != 0:
		return fmt.Errorf("%s does not divide the %d Mamba-2 groups", name, m.SSM.Groups)
	}
	return nil
}
