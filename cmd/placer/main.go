package main

import (
	"os"

	// Catches SIGINT and SIGTERM from the start (see signalContext).
	_ "github.com/placer/placer/internal/earlysig"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
