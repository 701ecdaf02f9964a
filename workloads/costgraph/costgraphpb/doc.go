// Package costgraphpb holds the Go types generated from
// ../costgraph.proto: TensorFlow's CostGraphDef, TensorShapeProto and
// DataType with TensorFlow's field names and numbers, in the proto package
// placer.costgraph. Regenerate with `go generate` in workloads/costgraph.
//
// May import: no other placer package
package costgraphpb
