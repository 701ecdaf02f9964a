package main

import (
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/worldflags"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/iopaths"
	"github.com/placer/placer/jobs/export"
	"github.com/placer/placer/methods/gdp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// pathKind is what a flag's value is to the file system.
type pathKind int

const (
	// notPath: a name, a number, a list of names, a path on another
	// machine (a pod's mount).
	notPath pathKind = iota
	// input: a file or folder the command reads.
	input
	// nameOrInput: a preset, method or strategy name, or a file read
	// (one that exists, or a value with a path separator).
	nameOrInput
	// listInput: a comma-separated list of names and files or folders
	// read (--graphs).
	listInput
	// workloadInput: a workload, whose hf:PATH[:keys] reads PATH (or
	// PATH/config.json).
	workloadInput
	// mapInput: KEY=FILE pairs (--test FAMILY=GRAPH).
	mapInput
	// output: a file or folder the command writes (outputFlags).
	output
	// readWrite: read and written on purpose (a checkpoint resumed in
	// place, a cache, the cells' shared folder): not checked.
	readWrite
)

// pathFlags classifies every flag whose value is text by its name; a
// command whose flag of that name means another thing has a row in
// pathFlagsOf. TestEveryFlagClassified fails on a text flag in neither,
// so that a new flag cannot skip the rule "no input is ever an output"
// (checkInputsNotOutputs).
var pathFlags = map[string]pathKind{
	// Written.
	"out": output, "output": output, "trace": output, "plot": output, "plot-dir": output, "rows": output,
	// Read.
	"graph": input, "plan": input, "profile": input, "cost-table": input, "expert": input, "meta": input,
	"from-profile": input, "kernelbench": input, "prices": input, "measured": input, "head": input, "init": input,
	"hardware": nameOrInput, "placement": nameOrInput, "schedule": nameOrInput, "fusion": nameOrInput,
	"policy": nameOrInput, "model": nameOrInput, "placer": nameOrInput, "python": nameOrInput,
	"graphs": listInput, "workload": workloadInput, "test": mapInput,
	// Read and written on purpose.
	"resume": readWrite, "teacher-file": readWrite, "rounds": readWrite, "dir": readWrite,
	// Names, numbers as text, lists of names.
	"base": notPath, "budgets": notPath, "choose": notPath, "clusters": notPath, "deadline": notPath, "phases": notPath, "provider": notPath, "tokens": notPath, "cell": notPath, "claim": notPath, "cluster": notPath,
	"cost-device": notPath, "curve-methods": notPath, "device": notPath, "families": notPath, "family": notPath,
	"for": notPath, "format": notPath, "fp8": notPath, "framework": notPath, "genes": notPath, "gpus-list": notPath,
	"hold-out": notPath, "image": notPath, "input-shape": notPath, "lead": notPath, "loss": notPath,
	"memory-format": notPath, "method": notPath, "methods": notPath, "name": notPath, "namespace": notPath, "nodes": notPath,
	"objective": notPath, "objectives": notPath, "optimizer": notPath, "partition": notPath,
	"plot-format": notPath, "pod-memory": notPath, "precision": notPath, "recompute": notPath,
	"sbatch": notPath, "seeds": notPath, "start": notPath, "strategy": notPath, "tasks": notPath,
	"tf32": notPath, "tie": notPath, "to": notPath, "topologies": notPath, "topology": notPath,
	"train": notPath, "workloads": notPath,
}

// pathFlagsOf are the commands' flags whose name means another thing
// there than in pathFlags.
var pathFlagsOf = map[string]pathKind{
	"placer hw bench --profile": output,  // the profile it measures
	"placer cluster k8s --dir":  notPath, // the volume's mount in each pod
}

// flagPathKind is what f of command c is to the file system, and whether
// it is classified at all.
func flagPathKind(c *cobra.Command, f *pflag.Flag) (pathKind, bool) {
	if k, ok := pathFlagsOf[c.CommandPath()+" --"+f.Name]; ok {
		return k, true
	}
	if f.Annotations[inputAnnotation] != nil {
		return input, true
	}
	k, ok := pathFlags[f.Name]
	return k, ok
}

// checkInputsNotOutputs holds the rule "no input is ever an output" over
// cmd's command line: every file it writes is compared with every file
// it reads (iopaths.Check: the same file, also through links), before
// any work, and one that is both is a usage error (exit 2). must are the
// inputs that must be there (mustExist), for checkInputsReadable.
func checkInputsNotOutputs(cmd *cobra.Command) (missing []iopaths.Path, err error) {
	var ins, outs, must []iopaths.Path
	var seen []pflag.Value
	// The flags typed first, then the defaults: of two names of one
	// value (--out, --output) the line names the one typed, and it is
	// one output, not two on one path.
	visit := func(f *pflag.Flag) {
		k, _ := flagPathKind(cmd, f)
		if k == output {
			if slices.ContainsFunc(seen, func(v pflag.Value) bool { return oneValue(v, f.Value) }) {
				return
			}
			seen = append(seen, f.Value)
		}
		for _, v := range flagValues(f) {
			switch k {
			case output:
				outs = append(outs, iopaths.Path{Flag: f.Name, Path: v, Folder: isFolderFlag(f)})
				outs = append(outs, sideOutputs(cmd, f.Name, v)...)
			default:
				for _, in := range inputPaths(k, v) {
					in.Flag = f.Name
					ins = append(ins, in)
					if mustExist(k, f.Name) {
						must = append(must, in)
					}
				}
			}
		}
	}
	cmd.Flags().Visit(visit)
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Changed {
			visit(f)
		}
	})
	if err := iopaths.Check(ins, outs); err != nil {
		return nil, err
	}
	return must, nil
}

// checkInputsReadable tells an input file of cmd's command line that is
// not there (the inputs checkInputsNotOutputs found), one way for every
// flag of every command (iopaths.CheckReadable), exit 1, after the
// command line's own mistakes (its output paths, a flag of the other
// world) and before any work.
func checkInputsReadable(cmd *cobra.Command, must []iopaths.Path) error {
	// A flag of the other world is a wrong command line, said before
	// the files it names are looked for (worldflags.Check, which the command
	// runs again).
	if w := cmd.Flags().Lookup("workload"); w != nil && worldflags.Has(cmd) {
		if _, err := worldflags.Check(cmd, w.Value.String()); err != nil {
			return err
		}
	}
	if err := iopaths.CheckReadable(must); err != nil {
		return runError{err} // bad input, not a wrong command line: exit 1
	}
	return nil
}

// mustExist says whether an input path of flag name (of kind k) is a
// file that must be there before any work: a flag that names only files,
// an hf: workload's config.json, and a name-or-file flag's value written
// as a file (fileNamed).
func mustExist(k pathKind, name string) bool {
	switch k {
	case input, workloadInput:
		return true
	case nameOrInput:
		// Not a program; not --policy, a network size or its file,
		// whose missing file is a wrong size (exit 2, as a wrong name).
		return name != "python" && name != "placer" && name != "policy"
	}
	// A list's items and a map's values are names or files that their
	// command resolves after its own names (--graphs, --test).
	return false
}

// flagValues is f's value as the texts it holds: a list's items, a
// map's values.
func flagValues(f *pflag.Flag) []string {
	switch v := f.Value.(type) {
	case pflag.SliceValue:
		return v.GetSlice()
	}
	s := f.Value.String()
	if s == "" || s == "[]" {
		return nil
	}
	return []string{s}
}

// inputPaths are the files an input flag's value v reads, each with
// what the flag spells for it (Given: the list's item, hf:PATH:keys).
func inputPaths(k pathKind, v string) []iopaths.Path {
	var out []iopaths.Path
	add := func(given string) func(string, bool) {
		return func(p string, ok bool) {
			if ok {
				out = append(out, iopaths.Path{Path: p, Given: given})
			}
		}
	}
	switch k {
	case input:
		add(v)(v, v != "" && v != "-")
	case nameOrInput:
		add(v)(fileNamed(v))
	case listInput:
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimSpace(item)
			add(item)(fileNamed(item))
		}
	case mapInput:
		for _, kv := range strings.Split(strings.Trim(v, "[]"), ",") {
			if _, file, ok := strings.Cut(kv, "="); ok {
				add(kv)(fileNamed(file))
			}
		}
	case workloadInput:
		add(v)(inputs.WorkloadFile(v))
	}
	return out
}

// fileNamed is v as a file's path where v is one: a file or folder that
// exists, or a text written as a file's (with a path separator, or a
// .json name); a name (a preset, a method) otherwise.
func fileNamed(v string) (string, bool) {
	if v == "" || v == "-" {
		return "", false
	}
	if _, err := os.Stat(v); err == nil || strings.ContainsRune(v, os.PathSeparator) || strings.HasSuffix(strings.ToLower(v), ".json") {
		return v, true
	}
	return "", false
}

// isFolderFlag says whether output flag f names a folder (its usage
// names it DIR or FOLDER) rather than a file.
func isFolderFlag(f *pflag.Flag) bool {
	name, _ := pflag.UnquoteUsage(f)
	return name == "DIR" || name == "FOLDER"
}

// sideOutputs are the files a command writes beside its output flag's
// file v (docs/robustness.md): export --to deepspeed's pipeline and MoE modules,
// a model's state file. They are outputs as v is, checked with them.
func sideOutputs(cmd *cobra.Command, flag, v string) []iopaths.Path {
	if flag != "out" || v == "" || v == "-" {
		return nil
	}
	side := func(p string) iopaths.Path {
		return iopaths.Path{Flag: flag, Path: p, Given: v + " (its side file " + p + ")"}
	}
	switch cmd.CommandPath() {
	case "placer export":
		if to := cmd.Flags().Lookup("to"); to != nil {
			var sides []iopaths.Path
			for _, p := range export.SideFiles(to.Value.String(), v) {
				sides = append(sides, side(p))
			}
			return sides
		}
	case "placer pretrain":
		return []iopaths.Path{side(gdp.CheckpointState(v))}
	}
	return nil
}

// oneValue says whether a and b are one variable under two flag names
// (--out and its hidden --output, hw bench's -o and --profile).
func oneValue(a, b pflag.Value) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}
