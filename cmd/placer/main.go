package main

import (
	"os"

	// Catches SIGINT and SIGTERM from the start (see signalContext).
	_ "github.com/placer/placer/internal/earlysig"

	"github.com/placer/placer/internal/atomicfile"
)

func main() {
	out := stdout()
	atomicfile.Stdout = out // -o -
	os.Exit(run(os.Args[1:], os.Stdin, out, os.Stderr))
}
