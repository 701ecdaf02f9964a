// Command testsummary reads `go test -json` on its standard input and
// writes what `go test` writes without -v (each package's ok, FAIL or "no
// test files" line, and the whole output of a failed test or build), plus
// one line for each skipped test with its reason, so that a run shows what
// it did not test:
//
//	--- SKIP: TestZoo (github.com/placer/placer/workloads/export): no zoo graphs in ../../out/zoo (make zoo)
//
// It exits with status 1 when a test, a package or a build failed. make
// test pipes the suite through it.
//
// With -top N it prints the N slowest top-level tests at the end (go test
// -json's Elapsed: wall seconds); with -cpu FILE, the packages by the CPU
// seconds that exec.sh (go test -exec tools/dev/testsummary/exec.sh, with
// PLACER_TEST_CPU=FILE) wrote for each test binary and the processes it
// waited for. phase.sh times make test's phases (wall and CPU) and prints
// their table.
//
// May import: no other placer package
package main
