// Package costgraph imports and exports TensorFlow CostGraphDef graphs in
// protobuf text format, the format of REGAL's released dataset (Paliwal et
// al., ICLR 2020) and of TensorFlow's own cost models.
//
// Each node becomes an op of class graph.ClassUnknown whose measured time
// (Op.HasTime) is compute_cost, converted from microseconds to seconds;
// temporary_memory_size becomes Op.TempBytes and persistent_memory_size
// Op.ParamBytes. Each output_info port becomes a tensor of its size,
// consumed by the nodes whose input_info names (preceding_node,
// preceding_port); control_input becomes control edges; the dtype and
// shape of a node's first output become Op.DType and Op.Shape where placer
// has an equivalent. Encode writes a graph back, so that Decode(Encode(g))
// equals g for every graph Decode returns. docs/importers.md describes the
// mapping, the units and what is ignored. A CostGraphDef does not say which
// dimension is the batch, nor which memory is per example: imported graphs
// have no batch information (graph.Graph.Batch is 0), and Encode writes
// none.
//
// The message declarations (costgraph.proto, generated into the
// costgraphpb package) use TensorFlow's field names and numbers. Unknown
// field names are errors, so that a misspelt field is not silently read as
// zero. Malformed input is reported as a one-line error naming the node and
// field, or the line and column of a syntax error; the decoder never panics.
//
// May import: graph, workloads/costgraph/costgraphpb
package costgraph

//go:generate protoc --go_out=. --go_opt=module=github.com/placer/placer/workloads/costgraph costgraph.proto
