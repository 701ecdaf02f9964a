// Package trainingruns holds published totals of real training runs as
// data: runs.csv, one row per run (its model, schedule of tokens,
// cluster, the plan where it is published, the GPU-hours and days its
// authors report, and the source of each figure with the date it was
// read). README.md in this folder says what each column means and where
// each figure comes from. placer size's check (jobs/sizing) predicts
// each row's GPU-hours and compares.
//
// May import: no other placer package
package trainingruns
