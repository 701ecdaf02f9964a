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
//	go run ./tools/dev/readme -placer bin/placer -write README.md   # make readme
//	go run ./tools/dev/readme -placer bin/placer -check README.md   # fails on drift
//
// A block of commands the reader is told to paste is an indented block
// right under "<!-- readme: sh -->": -check (and the test) runs it with sh
// -e and fails when a line fails.
//
// Every command block of README.md and docs/*.md runs as written (docs.go):
// a fenced or indented block with a line that runs placer or make. The
// HTML comment right above a block says how it is checked:
//
//	(none)                       make test runs it; it must exit 0
//	<!-- docs: long -->          make docs-long runs it (its page names that target beside it)
//	<!-- docs: fails 2 "TEXT" --> it must exit 2 and print TEXT
//	<!-- docs: skip KIND "WHY" --> never run: gpu, cluster, placeholder, record, synopsis, setup, index, experiment
//	<!-- docs: pending NAME -->  checked inverted until the change NAME lands (then the test says to remove it)
//
// long, fails and pending combine; a page whose every block is a record
// says so once, <!-- docs-page: skip record "WHY" -->. A block that runs
// make must be marked (make test runs no make target). Blocks run page by
// page, in order, each page in a scratch folder of its own, placer on
// PATH, then the virtualenv's bin (its python3 has torch).
//
//	go run ./tools/dev/readme -placer bin/placer -docs -list README.md docs/*.md   # the blocks, how each is checked
//	go run ./tools/dev/readme -placer bin/placer -docs README.md docs/*.md         # the quick ones (TestDocsCommands)
//	go run ./tools/dev/readme -placer bin/placer -docs -long README.md docs/*.md   # make docs-long
//
// Each command runs in a scratch folder that links the checkout's top-level
// entries, so the files a command writes (-o x.json) land there, not in the
// checkout.
//
// May import: internal/atomicfile, internal/torchenv
package main
