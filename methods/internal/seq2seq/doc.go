// Package seq2seq is what the learned placers rl17 and hdp share: the
// attentional LSTM sequence-to-sequence controller of Mirhoseini et al.
// (ICML 2017, §3.2) that places a sequence of groups on devices
// (Controller: the encoder, the decoder with Luong attention over the
// encoder's outputs, sampling, the teacher-forced REINFORCE gradient), and
// the REINFORCE training around it (Episode: the budget, the reward
// -sqrt(step / reference) with its failing signal, the moving-average
// baseline and the advantages, gradient clipping and Adam, the learning
// curve and the result of an optimize.Optimizer run).
//
// rl17 feeds the controller one sequence, its co-location groups, read by
// all K samples; hdp feeds it one sequence per sample, the groups of each
// sample's grouping, and shapes its logits (a tanh bound, a temperature,
// noise) through a Logits hook. Everything else is the methods' own:
// rl17's grouping and group features, hdp's grouper and group embeddings.
//
// May import: graph/..., decision, evaluate, optimize, nn/..., internal/...
package seq2seq
