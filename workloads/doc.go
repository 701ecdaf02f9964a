// Package workloads builds the benchmark graphs of the GDP, GO, HDP and
// REGAL papers as TensorFlow-granularity training steps (forward pass,
// gradients, optimizer updates), generates REGAL's synthetic graphs, and
// computes the human-expert placements the papers compare against.
//
// The registry (Names, Lookup, Build) holds the named workloads: rnnlm2/4/8,
// gnmt2/4/8, trxl2/4/8, inception (= inception_b64), inception_b32,
// amoebanet, wavenet2x18, wavenet4x36, wavenet5 and wavenet10. Each family
// has a builder (BuildRNNLM, BuildGNMT, BuildTRXL, BuildInception,
// BuildAmoebaNet, BuildWaveNet) configured by a Config whose zero fields
// take the family's defaults.
//
// Graphs are generated the way TensorFlow 1.x's tf.gradients builds them:
// forward ops are recorded on a tape, and every forward op gets its own
// gradient ops, named "gradients/<forward op>_grad/..." and marked
// Backward (ForwardOf recovers the forward op from the name). Every
// variable is a VariableV2 op, a read Identity and one update op
// (ApplyAdam, ApplyRMSProp, ApplyGradientDescent) with its slot variables,
// all in the co-location group "loc:@<variable>"; the update op holds the
// variable's resident bytes (weights, gradient, slots) as ParamBytes.
//
// Every built graph knows its batch (graph.Graph.Batch = Config.Batch):
// each tensor says which dimension holds it and each op which parts of
// its cost do not scale with it (batch.go), so that graph.AtBatch gives
// the same workload at a micro-batch. REGAL's synthetic graphs and
// Augment's copies have no batch information.
//
// Expert places a built graph the way the papers' human experts did.
// Synthetic, Augment and WriteSynthetic implement REGAL's random graph
// data set (appendix A.1.4) and its augmentation.
//
// The formulas, model configurations and their sources are in
// docs/workloads.md.
//
// May import: graph, decision, internal/...
package workloads
