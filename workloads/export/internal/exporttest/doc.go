// Package exporttest holds what the tests of workloads/export and
// workloads/export/plans both read: the plan examples of
// docs/torch-plan.md and a reader of the torchtitan 0.3 config modules
// the two packages write. Only tests import it.
//
// May import: no other placer package
package exporttest
