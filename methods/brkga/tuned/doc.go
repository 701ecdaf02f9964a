// Package tuned is REGAL's tuned-BRKGA baseline (seeds/regal-iclr2020.txt
// §5.2 "Tuned BRKGA: apply grid search to BRKGA's hyperparameters on the
// training set and pick the best", A.10: the Beta distribution's two
// scalars and the numbers of chromosomes, elites and mutants): BRKGA with
// hyperparameters grid-searched on REGAL's synthetic training set, one
// setting per objective. The settings live in params.json beside this
// file, written by `make brkga-tune` (Tune) and embedded in the binary;
// the registry's "brkga-tuned" entry reads them.
//
// May import: methods/brkga, optimize
package tuned
