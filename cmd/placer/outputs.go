package main

import (
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// outputFlags are the flags, on any command, that name a file or folder
// the command writes. A folder is one whose usage names it DIR or FOLDER
// (made if missing); any other is a file, whose folder must exist.
var outputFlags = map[string]bool{
	"out": true, "output": true, "trace": true, "plot": true, "plot-dir": true, "rows": true, "profile": true,
}

// inputAnnotation marks a flag of outputFlags' name that a command reads
// instead (eval's and search's --profile, which hw bench writes).
const inputAnnotation = "placer-input"

// checkOutputs checks, before any work, every output path given on cmd's
// command line: a path that cannot be written is a usage error (exit 2)
// now rather than a failure after the search, export or report has run.
// "-" is standard output. A plot's extension must name its format.
func checkOutputs(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		v := f.Value.String()
		if err != nil || !outputFlags[f.Name] || v == "" || v == "-" || f.Annotations[inputAnnotation] != nil {
			return
		}
		check := atomicfile.CheckFile
		if name, _ := pflag.UnquoteUsage(f); name == "DIR" || name == "FOLDER" {
			check = atomicfile.CheckFolder
		}
		if e := check(v); e != nil {
			err = usagef("--%s %s: %v", f.Name, v, e)
		} else if f.Name == "plot" {
			if e := report.CheckPlotPath(v); e != nil {
				err = usagef("--%s: %v", f.Name, e)
			}
		}
	})
	return err
}
