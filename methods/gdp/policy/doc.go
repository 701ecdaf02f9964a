// Package policy is the GO/GDP policy network: a GraphSAGE encoder
// (package graphsage), segment-recurrent Transformer-XL attention with
// parameter superposition (package transformerxl), and GO's multi-task
// recurrent attention heads (GO §4.4) that emit, for every node at once, a
// device, a scheduling priority level and a fusion priority level, refined
// non-autoregressively over T iterations (GO eq. 2), plus a value head.
//
// A forward pass runs once per graph; all K sampled decisions of a PPO
// rollout come from it (Output.Sample). LogProb, Entropy and Value of the
// same pass have gradients with respect to every weight: PPOLoss
// computes GDP's clipped-surrogate loss for a batch of decisions and adds
// its gradient to Params(), ready for an optimizer such as Adam.
//
// # Architecture
//
//	features (graphsage.Features, per-graph normalized, no node ids)
//	-> GraphSAGE, L layers, max-pool aggregator over K sampled neighbours
//	-> graph embedding g = [mean, max of node embeddings, graph statistics,
//	   one-hot device count]  -> Conditioner -> one modulation vector per
//	   dense layer (superposition), and the value head
//	-> input projection -> Transformer-XL layers (segments in topological
//	   order, memory = previous segment, gradient stopped)  = X
//	-> for iteration t = 1..RefineSteps, for task k = placement, scheduling,
//	   fusion:
//	      H_k = LN_k(H_{k-1} + A_{k-1} E_k)       (= LN(concat(A, H) [E; I]))
//	      A_k = softmax(FC_k(H_k + MHA(H_k)))      (MHA shared by all tasks)
//	   with H_0 = X and A_0 the previous iteration's actions: all three
//	   tasks' distributions of iteration t-1, or at t = 1 the one-hot
//	   decision the Input was conditioned on (Input.WithInitial), or none.
//
// # Refinement (GO eq. 2)
//
// GO samples all nodes' actions in parallel and repeats the step T times,
// each step conditioned on the previous step's actions. Policy.Refine does
// exactly that across forward passes, feeding each pass the decision drawn
// from the one before (Input.WithInitial); the log-probabilities of the
// final pass's decisions are then exact, which PPO needs. Config.RefineSteps
// adds differentiable iterations inside one pass, conditioned on the
// previous iteration's distributions; it defaults to 1 because each
// iteration costs as much as the three task heads.
//
// The placement head emits MaxDevices logits and masks those beyond the
// cluster's device count, so one set of weights serves 2..MaxDevices
// devices; the device count also enters the graph embedding.
//
// # Numerics
//
// The network is hand-written over dense row-major float32 matrices
// (package nn: an AVX2/FMA matrix-multiply kernel, fixed-chunk parallel
// loops, hand-derived backward passes), because a gorgonia expression
// graph over an 84,000-node graph is far too slow and too large. The same
// generic code instantiated with float64 is checked against finite
// differences, and each layer against a gorgonia reference, in the tests.
// Results are deterministic: the same seed gives the same weights, the
// same samples and bit-identical gradients, whatever the number of
// workers.
//
// # Co-location coarsening
//
// With Config.Coarsen the nodes are co-location groups (ops outside every
// group stay single): the network makes one decision per group and every
// op of the group gets it, which honours co-location by construction and
// shrinks large graphs.
//
// May import: graph, decision, nn/..., internal/...
package policy
