package scale

// llamaPyLayers are a plain PyTorch loop's layers (torch-eager,
// torch-eager-bf16, compile=off on a stack without eager layers of its
// own): tools/profile/llama.py's Block as eager PyTorch issues it
// (LayerLlamaPy) and its Experts, a bmm over the local experts at forced
// balance (MoELlamaPy, no host sync).
type llamaPyLayers struct{ eagerLayers }

var _ eagerStack = llamaPyLayers{}

func (llamaPyLayers) Name() string { return LayersLlamaPy }

func (l llamaPyLayers) MoE(c coster) (fwd, bwd phase) {
	impl, loop := l.experts(c.pl.Run)
	return l.moe(c, impl, loop)
}

func (llamaPyLayers) experts(Settings) (MoEImpl, bool) { return MoELlamaPy, false }
