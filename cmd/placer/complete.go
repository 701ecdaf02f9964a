package main

import (
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/workloads"
	"github.com/spf13/cobra"
)

// addCompletions registers shell completion of flag values on every
// command that has the flag: workload names, hardware presets (or a
// .json profile), topologies, methods, graph formats and file kinds.
func addCompletions(c *cobra.Command) {
	fixed := func(vals ...string) cobra.CompletionFunc {
		return func(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return withPrefix(vals, typed), cobra.ShellCompDirectiveNoFileComp
		}
	}
	files := func(ext ...string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(ext) == 0 {
				return nil, cobra.ShellCompDirectiveDefault
			}
			return ext, cobra.ShellCompDirectiveFilterFileExt
		}
	}
	presetsOrFile := func(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return withPrefix(roofline.Presets(), typed), cobra.ShellCompDirectiveDefault // presets, then files
	}
	methodList := func(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		// Complete the last element of a comma-separated list.
		prefix := ""
		if i := strings.LastIndex(typed, ","); i >= 0 {
			prefix = typed[:i+1]
		}
		var out []string
		for _, m := range methods.Methods() {
			out = append(out, prefix+m)
		}
		return withPrefix(out, typed), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	byFlag := map[string]cobra.CompletionFunc{
		"workload":  fixed(workloads.Names()...),
		"hardware":  presetsOrFile,
		"base":      fixed(roofline.Presets()...),
		"topology":  fixed(roofline.Topologies...),
		"methods":   methodList,
		"graph":     files("json", "pb", "pbtxt"),
		"graphs":    files(),
		"placement": fixed("single", "round-robin", "expert"),
		"schedule":  fixed("fifo"),
		"fusion":    fixed("none", "default"),
		"model":     files("json", "model"),
		"policy":    fixed("default", "small"),
		"trace":     files("json"),
		"plot":      files("png", "svg", "pdf"),
		"tasks":     fixed("placement", "scheduling", "fusion", "placement,scheduling,fusion"),
	}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for name, f := range byFlag {
			if cmd.Flags().Lookup(name) != nil {
				_ = cmd.RegisterFlagCompletionFunc(name, f)
			}
		}
		if cmd.Name() == "export" && cmd.Parent() != nil && cmd.Parent().Name() == "workloads" {
			cmd.ValidArgsFunction = fixed(workloads.Names()...)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(c)
}

// withPrefix keeps the values that start with typed.
func withPrefix(vals []string, typed string) []string {
	var out []string
	for _, v := range vals {
		if strings.HasPrefix(v, typed) {
			out = append(out, v)
		}
	}
	return out
}
