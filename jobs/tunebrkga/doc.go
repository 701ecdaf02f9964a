// Package tunebrkga is placer tune-brkga's job (make brkga-tune):
// BRKGA's hyperparameters grid-searched on REGAL's synthetic training set
// (jobs.RegalTrainSeed), each setting scored against default BRKGA at the
// same budget and seed, the winner per objective written as the file
// brkga-tuned reads (methods/brkga/tuned). It builds its problems with
// jobs' setup (jobs.NewSetupOn, jobs.ParseTasks); nothing in jobs
// imports it.
//
// May import: evaluate/roofline, graph, inputs, internal/..., jobs,
// methods/brkga/tuned, optimize, report, workloads
package tunebrkga
