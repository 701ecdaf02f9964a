// Package transformerxl is the attention part of the GO/GDP policy network
// (GDP §3.2-3.3, GO §4.2-4.3): multi-head attention with Transformer-XL
// segment-level recurrence and no positional encoding, the position-wise
// feed-forward layer, layer normalization (composed: there is no fused op),
// residual connections, and parameter superposition (feature modulation).
//
// Nodes arrive in topological order and are cut into segments of a fixed
// length. Each segment attends to itself and to the previous segment's
// input of the same layer (the output of the layer below), whose gradient
// is stopped as in Transformer-XL. Because the memory of segment i at a
// layer is only the layer's input at segment i-1, every segment of a layer
// is computed in one batched pass: one matrix multiply projects all nodes
// to queries, keys and values, and the segments are then attended in
// parallel.
//
// Superposition (GDP eq. 5, GO §4.3): a Conditioner maps the whole graph's
// embedding to one modulation vector per dense layer, and each dense layer
// computes g((c ⊙ x)) instead of g(x). Modulation vectors start at 1.
//
// Every layer has a forward pass that records what its backward pass
// needs, and a hand-derived backward pass that adds into parameter and
// input gradients. All layers are generic over float32 (fast path) and
// float64 (gradient checks).
//
// May import: nn, graph
package transformerxl
