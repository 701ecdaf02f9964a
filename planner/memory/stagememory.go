package memory

// stageMemory is stage s's memory by part on one of its GPUs, bytes, at
// c's tensor-parallel degree; lm is c's layerMemory.
func (c *counter) stageMemory(s int, st *Stage, lm *layerMem) stageMem {
	var sm stageMem
	sm.acts, sm.logits = c.stageActivations(s, st, lm)
	sm.weights, sm.fp8, sm.grads, sm.opt = c.stageState(s, st)
	return c.loraMemory(s, st, sm)
}

// highCounters counts a step's stages as plan.Plan.InBF16 (the layers
// outside the low-precision recipe), made the first time a stage has
// such layers.
type highCounters struct {
	cs  []counter
	lms []layerMem
}

// blend is step's stage s's memory sm (counted under the plan's recipe) with
// st.BF16Layers of its st's layers counted as InBF16 counts them: each
// part that a layer's precision moves (the weights, their low-precision
// copies, the activations) the plan's over its other layers and
// InBF16's over those, the layers being alike; the embedding's, the
// output layer's and the logits' parts, the gradients and the optimizer
// state are the same either way. The output layer's MXFP8 copies
// (fp8-output-proj) are not of a layer: a plan of both is refused
// (the key that runs layers in BF16 refuses it).
func (h *highCounters) blend(step *Step, s int, st *Stage, sm stageMem) stageMem {
	if h.cs == nil {
		bf := Step{Model: step.Model, Plan: step.Plan.InBF16(), Pod: step.Pod}
		h.cs = bf.counters(nil)
		for i := range h.cs {
			h.lms = append(h.lms, h.cs[i].layerMemory())
		}
	}
	k := counterOf(h.cs, step.Plan.TPs[s])
	lo := *st
	lo.BF16Layers = 0
	bf := h.cs[k].stageMemory(s, &lo, &h.lms[k])
	f := float64(st.BF16Layers) / float64(step.Plan.Stages[s])
	sm.weights += f * (bf.weights - sm.weights)
	sm.fp8 += f * (bf.fp8 - sm.fp8)
	sm.acts += f * (bf.acts - sm.acts)
	return sm
}
