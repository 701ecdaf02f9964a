// Package anchored is placer's search, the optimizer `placer search`
// runs: quick references first, then a search method anchored on the best
// of them, the joint space of strategies around searched placements, and
// the rule that the answer is never worse than a row of its own table.
// Search assembles the stages in one function (Search.Run), one comment
// each, as a scheduler's stack reads; each stage is a function of its own
// file: the references (references.go: the quick methods, their
// compositions with TensorFlow's placement, the fewer-GPU rows and the
// fusion variants), the strategies users run, the joint space (joint.go).
// Its results are rows, {Name, *optimize.Result}; the caller (jobs) makes
// the report's table of them.
//
// May import: graph, decision, evaluate/..., optimize, methods/...
package anchored
