// Package earlysig starts catching SIGINT and SIGTERM when the program is
// initialized, before the heavier packages' initialization and main, so
// that a signal sent as the process starts is still handled (the run
// stops cleanly, exit 130) instead of killing it. Import it first from
// package main and read the signals from C.
//
// Before Go's runtime reaches package initialization (1 to 30 ms after
// exec on a loaded 2-core machine, measured with GODEBUG=inittrace=1) a
// signal still has its default effect; no Go code can run earlier.
//
// May import: no other placer package
package earlysig
