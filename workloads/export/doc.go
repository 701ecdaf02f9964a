// Package export turns a placer placement (a device per op) into what
// frameworks read: a TensorFlow device map ({op name: "/device:GPU:k"}),
// a CostGraphDef with device fields (workloads/costgraph), msr-fiddle's
// expert-placement JSON (workloads/msrfiddle), and, for graphs from the
// PyTorch exporter (tools/torchexport), a module map {module path: device}
// with the split points of torch.distributed.pipelining when the placement
// is a contiguous pipeline. A transformer's plan at cluster scale
// (plan.Strategy, resolved by plan.Resolve: planner/plan) is
// written as Megatron-LM's arguments or a transformer plan for
// tools/torchplan. docs/import.md describes the formats.
//
// May import: graph/..., decision, planner, planner/plan, planner/search, workloads/..., internal/...
package export
