// Package regaltrain holds REGAL's training jobs as the CLI runs them:
// regal train (Job: REGAL's training set of native graphs and augmented
// copies of built-in workloads, trained, Job.RunReport's report) and
// regal imitate (ImitateJob: REGAL's network fitted to the genes of long
// BRKGA runs on a training set built as regal train builds it). A run in
// rounds lists its cells as jobs/grid's RoundCell lines, as pre-training
// does.
//
// May import: evaluate/roofline, inputs, jobs/grid, methods/regal,
// optimize, workloads
package regaltrain
