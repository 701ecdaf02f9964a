// Package onnx imports ONNX models (.onnx, the protobuf ModelProto) into
// placer's graph IR, so that inference graphs exported from any framework
// can be placed.
//
// Each node becomes an op whose type is the ONNX op_type, with the class,
// FLOPs and bytes read and written of the formulas in docs/importers.md
// (MatMul, Gemm, Conv, BatchNormalization, elementwise ops, Softmax,
// LayerNormalization, reductions and pools, Gather, Concat and Split,
// Reshape, Transpose, Squeeze and the other shape ops as views). Shapes and
// element types come from the graph's value_info, inputs, outputs and
// initializers: a node output without a fully known shape is an error that
// names the node and says to run ONNX shape inference first. Each graph
// input becomes an "Input" op; an initializer used by one node becomes
// that node's resident parameter bytes (Op.ParamBytes), one used by several
// nodes an op of type "Initializer" whose tensor they all read.
//
// An ONNX file holds one inference graph; a training step (backward pass
// and optimizer update) comes from the PyTorch exporter in tools/dev/torchexport
// (docs/import.md). Imported graphs have no batch information
// (graph.Graph.Batch is 0): the shapes are fixed numbers, with nothing to
// say which dimension is the batch, and a Reshape's target shape is a
// constant that holds the batch too (docs/graph-format.md, "Batch
// information"); the PyTorch exporter marks the batch.
//
// The message declarations (onnx.proto, generated into the onnxpb package
// with `make proto`) use ONNX's field names and numbers. Malformed input
// (not a protobuf, a truncated file, an unknown op, a missing shape) is a
// one-line error naming the node and what is wrong; the decoder never
// panics.
//
// May import: graph, workloads/onnx/onnxpb
package onnx
