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
}
