// Command placer decides where, in what order and fused with what the ops
// of an ML training graph run on a cluster of GPUs. See README.md.
//
// One file per command: an options struct, its flags bound with cobra,
// and one call into jobs; the table or JSON printed with report. Exit
// codes are decided in one place (internal/fail).
//
// May import: jobs/..., report, internal/...
package main
