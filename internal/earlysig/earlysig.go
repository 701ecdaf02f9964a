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
