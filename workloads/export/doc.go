// Package export turns a placer placement (a device per op) into what
// frameworks read: a TensorFlow device map ({op name: "/device:GPU:k"}),
// a CostGraphDef with device fields (workloads/costgraph), msr-fiddle's
// expert-placement JSON (workloads/msrfiddle), and, for graphs from the
// PyTorch exporter (tools/dev/torchexport), a module map {module path: device}
// with the split points of torch.distributed.pipelining when the placement
// is a contiguous pipeline, a torch plan (the Realizer cuts a decision
// into the plan it runs), and that plan as torchtitan's or DeepSpeed's
// configuration. It also holds what the cluster planner's exports
// (workloads/export/plans) share with these: the framework releases each is
// written for (frameworks.go: SplitFormat, CheckedRelease), the plan
// files' formats (planformat.go: a torch plan, a transformer plan) and
// torchtitan 0.3's config module writer (torchtitan03.go).
// docs/import.md describes the formats.
//
// May import: graph/..., decision, planner/plan, workloads/..., internal/...
package export
