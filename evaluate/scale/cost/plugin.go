package cost

// Plugin is a family, a code base or a mechanism registered by name: its
// Name, the name a figure's provenance gives it (Result's PricedBy), and
// Prices, whether it priced the step of shard s (a mechanism whose
// condition s's plan or model does not meet leaves the step as it was).
type Plugin interface {
	Name() string
	Prices(s *Shard) bool
}

// RingMsg is what a GPU's context-parallel exchange moves and merges: KV
// the bytes of its K and V as the ring exchanges them (BF16; the query
// heads' count of them where the model repeats its key-value heads
// before the kernel), Out the elements of its attention output (and of
// dQ).
type RingMsg struct{ KV, Out float64 }

// CPAttention is the extension point of a layer's attention with its
// context-parallel exchange: fused attention call f (the GPU's whole
// share of the scores), forward or backward, with the exchange of msg
// between the plan's CP ranks as the plan's stack runs it; without
// context parallelism, the kernel alone.
type CPAttention interface {
	Plugin
	Attention(s *Shard, f FusedAttn, backward bool, msg RingMsg) Phase
}
