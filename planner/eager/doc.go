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
// Its files, from what every other names to what names the rest: an op
// and its hold (op.go, keep.go); a code base and what it writes into
// (codebase.go: CodeBase, Shape, Writer over the layer's op list); the
// parts every code base's layer has (layer.go) and the MoE blocks
// (moe.go); the in-tree code bases (llamapy.go, hf.go, titan.go: each
// its layer's order and its own parts); Writer's parts for a code base
// written elsewhere (writer.go); and the op lists a caller asks for,
// with the in-tree code bases' values (layerops.go: LayerOps, OutputOps,
// LayerLlamaPy, ...).
//
// May import: graph/..., evaluate/roofline
package eager
