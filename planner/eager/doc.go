// Package eager writes the ATen ops an eager PyTorch training step
// issues for one layer of a Llama-style model, as each eager code base
// writes the layer: placer_torch.profile.layers' Block (LayerLlamaPy,
// llamapy.go), transformers' LlamaDecoderLayer (LayerHF, hf.go) and
// torchtitan's TransformerBlock (LayerTitan, titan.go), each a value of
// CodeBase (codebase.go: a code base written elsewhere, beside its layer
// costs, implements it with Writer's parts), their MoE
// blocks (moe.go) and the output layer with its loss, at one GPU's
// shard shape (Shape, MoEShape): forward then backward, each op with
// its class, dtype, FLOPs and bytes as placer_torch.exporter records
// it, the tensor-parallel collective beside each GEMM (TPRole) and how
// long PyTorch holds its output (keep.go). The lists are data, functions
// of the model and the shape alone; the cost model (planner)
// prices them kernel by kernel and traces their memory, and holds them
// against the exporter's record in its tests.
//
// May import: graph/..., evaluate/roofline
package eager
