package transformer

// The per-GPU widths of a block's linear layers, as LoRA's adapters
// (planner/plan's FineTune) and FP8's casts of them read them.

// BlockLinearWidths are the per-GPU input and output widths of a dense block's
// four linear layers of model m at tensor-parallel degree T (linear_qkv,
// linear_proj, linear_fc1, linear_fc2: the order of planner/plan's
// LoRATargets), and whether each is column-parallel.
func BlockLinearWidths(m *Spec, T float64) (in, out [4]float64, column [4]bool) {
	h, d := float64(m.Hidden), float64(m.HeadDim())
	heads, kv, f := float64(m.Heads), float64(m.KVHeads), float64(m.FFN)
	qd := h // the attention's width
	if m.Head > 0 {
		qd = heads * d
	}
	fc1 := f
	if m.SwiGLU() {
		fc1 = 2 * f
	}
	in = [4]float64{h, qd / T, h, f / T}
	out = [4]float64{(heads + 2*kv) * d / T, h, fc1 / T, h}
	column = [4]bool{true, false, true, false}
	return in, out, column
}

// ExpertLinearWidths are the per-GPU input and output widths of the
// routed experts' linear_fc1 and linear_fc2 at expert-tensor degree
// ETP, in that order, and whether each is column-parallel.
func ExpertLinearWidths(m *Spec, ETP float64) (in, out [2]float64, column [2]bool) {
	h, fe := float64(m.Hidden), float64(m.ExpertFFN)
	up := fe
	if m.SwiGLU() {
		up = 2 * fe
	}
	return [2]float64{h, fe / ETP}, [2]float64{up / ETP, h}, [2]bool{true, false}
}

// SharedExpertLinearWidths are ExpertLinearWidths of the shared experts
// (their FFN the shared experts' together) at tensor-parallel degree T,
// or zero widths without shared experts.
func SharedExpertLinearWidths(m *Spec, T float64) (in, out [2]float64) {
	if m.SharedExperts == 0 {
		return in, out
	}
	s := *m
	s.ExpertFFN = m.SharedExperts * m.ExpertFFN
	in, out, _ = ExpertLinearWidths(&s, T)
	return in, out
}
