package main

import (
	"strings"

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

// checkPathValues holds the rules (docs/robustness.md) on what a path flag's value may
// spell, before the paths are compared and checked: an empty value for
// a file (-o "", --plan "") or for --for is a usage error, not the
// default taken silently; "-" is standard output for a file written
// (never a folder's name, never a file called "-"). Where an output
// other than one whose default is standard output is "-", the command's
// report goes to standard error, so that standard output holds that
// output alone.
func checkPathValues(cmd *cobra.Command, s *streams) error {
	var err error
	dash := false
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		k, _ := flagPathKind(cmd, f)
		v := f.Value.String()
		switch {
		case v == "" && f.Value.Type() == "string" && (k != notPath && k != readWrite || f.Name == "for"):
			err = usagef("--%s is empty: %s", f.Name, emptyHint(k, f))
		case k == output && v == "-" && isFolderFlag(f):
			err = usagef("--%s -: standard output is not a folder (name a folder)", f.Name)
		case k == output && v == "-" && writesStdoutByDefault(f):
			err = f.Value.Set("") // the default: standard output
		case k == output && v == "-":
			dash = true
		}
	})
	if err == nil && dash {
		s.Out = s.Err
	}
	return err
}

// writesStdoutByDefault says whether output flag f's default, left
// empty, is standard output (its usage says so: export -o, workloads
// export -o, hw calibrate -o).
func writesStdoutByDefault(f *pflag.Flag) bool {
	return strings.Contains(f.Usage, "default: standard output") || strings.Contains(f.Usage, "default: stdout")
}

// emptyHint is what to give flag f (of kind k) instead of nothing.
func emptyHint(k pathKind, f *pflag.Flag) string {
	name, _ := pflag.UnquoteUsage(f)
	switch {
	case k == output && isFolderFlag(f):
		return "name a " + name
	case k == output:
		return "name a FILE, or - for standard output"
	case k == input:
		return "name a FILE, or leave the flag out"
	}
	return "give a value, or leave the flag out"
}
