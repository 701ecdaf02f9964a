// Package timed holds the tests' wall-clock bounds out of make test: a
// test that measures how long something took calls Bound, which fails the
// test only under PLACER_TEST_TIMED=1 (make bench-timed) and otherwise
// logs the figure. What the test checks besides the clock (a budget's
// status, nothing run, the cells read back) stays an assertion in make
// test; a bound on a wall time is met in a benchmark target, where a
// shared machine's load is in view, not in the suite a user's first run
// has to pass on whatever machine they have (numbers are met in
// benchmarks, not in timed tests).
//
// May import: no other placer package
package timed
