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
// shards is not costed).
func (pl *Plan) checkHybrid(m transformer.Spec, written asWritten) error {
	nm, _, _ := m.Kinds()
	ng, _ := m.MixerKinds()
	if !(m.Hybrid() && nm > 0) && !(m.Mixed() && ng > 0) {
		return nil
	}
	switch {
	case pl.Run.Eager || pl.Titan():
		return fmt.Errorf("strategy %s: a hybrid model's Mamba-2 or Gated DeltaNet layers are costed as Megatron-Core runs them: not under an eager or torchtitan stack", written)
	case pl.CP > 1:
		return fmt.Errorf("strategy %s: cp=%d with Mamba-2 or Gated DeltaNet layers: placer does not cost a context-parallel scan", written, pl.CP)
	}
	return nil
}

// HybridExpertsFit refuses, in one line, a hybrid model with blocks of
// experts (transformer.KindExperts: Nemotron 3, transformers 5.24.0's
// NemotronHConfig defaults): read and counted (its parameters and model
// FLOPs), not yet priced by the planner, whose MoE layers are attention
// and experts in one block and whose hybrid layers are single mixers.
func HybridExpertsFit(m transformer.Spec) error {
	if !m.Hybrid() || !m.MoE() {
		return nil
	}
	return fmt.Errorf("workload %s: a hybrid's layers of experts (E) are read and counted, not priced: the planner prices Mamba-2, attention and MLP layers of a hybrid, and experts in attention blocks", m)
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
