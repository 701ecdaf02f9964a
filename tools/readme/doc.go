// Command readme keeps the README's sample outputs equal to what the
// commands it shows print.
//
// A sample is a fenced block right under a marker line:
//
//	<!-- readme: placer eval --workload gnmt8 --gpus 8 ... | stream=stdout lines=14 volatile="search time,evaluations/s" -->
//	```
//	... the command's output ...
//	```
//
// Before the bar: the command, as the README's reader types it (placer is
// the binary under test). After it, options: stream=stdout|stderr|both
// (default stdout), lines=N (keep the first N lines and end the block with
// "..."), prompt=on (the block starts with "$ " and the command),
// volatile="COL,COL" (table columns whose cells are timings of this
// machine: not compared by -check), mask="REGEXP" (text inside lines that
// is not compared, such as "in [0-9.]+ m?s").
//
//	go run ./tools/readme -placer bin/placer -write README.md   # make readme
//	go run ./tools/readme -placer bin/placer -check README.md   # fails on drift
//
// A block of commands the reader is told to paste is an indented block
// right under "<!-- readme: sh -->": -check (and the test) runs it with sh
// -e and fails when a line fails.
//
// Each command runs in a scratch folder that links the checkout's top-level
// entries, so the files a command writes (-o x.json) land there, not in the
// checkout.
//
// May import: internal/atomicfile
package main
