// Package earlysig starts catching SIGINT and SIGTERM when the program is
// initialized, before the heavier packages' initialization and main, so
// that a signal sent the moment the process starts is still handled (the
// run stops cleanly, exit 130) instead of killing it. Import it first
// from package main and read the signals from C.
package earlysig

import (
	"os"
	"os/signal"
	"syscall"
)

// C receives SIGINT and SIGTERM from the moment the package is
// initialized.
var C = make(chan os.Signal, 4)

func init() { signal.Notify(C, os.Interrupt, syscall.SIGTERM) }
