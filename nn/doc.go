// Package nn is the neural-network toolkit every learned method shares,
// below graphsage, transformerxl, policy and ppo: the dense numeric kernels
// the GO/GDP policy network is built of: a float32 matrix multiply
// with an AVX2/FMA micro-kernel, a parallel-for with fixed chunking,
// element-wise activations with a fast float32 exp, parameters with their
// gradients, an arena for activations, and the dense layer with feature
// modulation (parameter superposition) together with its hand-derived
// backward pass; the LSTM (backpropagation through time) and content-based
// attention of the 2017 placer's sequence-to-sequence controller; and the
// optimizer pieces of training: Adam and gradient clipping by global norm.
//
// Everything is generic over the element type: float32 is the fast path the
// policy runs on; float64 runs the identical code so that gradients can be
// checked against finite differences, and the tests check both against a
// gorgonia reference.
//
// Matrices are row-major slices with an explicit leading dimension, as in
// BLAS. Every function that writes a result writes disjoint rows or columns
// per worker and reduces in a fixed order, so results do not depend on the
// number of workers or on scheduling.
//
// May import: no other placer package
package nn
