// Package earlysig starts catching SIGINT and SIGTERM when the program is
// initialized, before the heavier packages' initialization and main, so
// that a signal sent as the process starts is still handled (the run
// stops cleanly, exit 130) instead of killing it. Import it first from
// package main and read the signals from C.
//
// Before Go's runtime reaches package initialization (1 to 30 ms after
// exec on a loaded 2-core machine, measured with GODEBUG=inittrace=1) a
// signal still has its default effect; no Go code can run earlier.
package earlysig

import (
	"os"
	"os/signal"
	"syscall"
)

// C receives SIGINT and SIGTERM from the moment the package is
// initialized.
var C = make(chan os.Signal, 4)

func init() {
	signal.Notify(C, os.Interrupt, syscall.SIGTERM)
	// Tests time their signals from this moment: the file named by
	// PLACER_TEST_SIGNALS_READY is created once signals are caught.
	if p := os.Getenv("PLACER_TEST_SIGNALS_READY"); p != "" {
		if f, err := os.Create(p); err == nil {
			f.Close()
		}
	}
}
