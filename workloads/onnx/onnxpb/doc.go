// Package onnxpb holds the Go types generated from ../onnx.proto: the
// messages of an ONNX model (ModelProto, GraphProto, NodeProto, TensorProto,
// ValueInfoProto, ...) with ONNX's field names and numbers, in the proto
// package placer.onnx. Regenerate with `make proto`.
//
// May import: no other placer package
package onnxpb
