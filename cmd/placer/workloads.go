package main

import (
	"fmt"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/report"
	"github.com/placer/placer/workloads"
	"github.com/spf13/cobra"
)

func init() { register(newWorkloadsCmd) }

func newWorkloadsCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workloads",
		Short: "The papers' benchmark graphs, REGAL's synthetic graphs and the transformer presets",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newWorkloadsListCmd(s), newWorkloadsExportCmd(s), newWorkloadsSynthCmd(s))
	return cmd
}

func newWorkloadsListCmd(s *streams) *cobra.Command {
	var asJSON, quiet bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in workloads (op graphs with their size, FLOPs and memory; the transformer presets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var bar *report.Progress
			onBuild := func(name string) {
				if quiet {
					return
				}
				if bar == nil {
					bar = report.NewProgress(s.Err, -1, "workloads")
				}
				bar.Step(0, "building "+name)
			}
			rows, err := jobs.WorkloadsList(cmd.Context(), onBuild)
			if bar != nil {
				bar.Finish()
			}
			if err != nil {
				return err
			}
			presets := jobs.TransformerPresets()
			if asJSON {
				return report.JSON(s.Out, report.WorkloadsList{Graphs: rows, Presets: presets})
			}
			if err := report.WriteWorkloads(s.Out, rows, roofline.DefaultHardware); err != nil {
				return err
			}
			fmt.Fprintln(s.Out)
			return report.WritePresets(s.Out, presets)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the table as JSON")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

func newWorkloadsExportCmd(s *streams) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:     "export NAME",
		Short:   "Write a workload as a native graph file (docs/graph-format.md)",
		Example: "  placer workloads export gnmt4 -o gnmt4.json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkWorkloadName(args[0]); err != nil {
				return err
			}
			g, err := jobs.WorkloadExport(args[0], out, s.Out)
			if err == nil && out != "" && out != "-" {
				fmt.Fprintf(s.Err, "wrote %s (%d ops) to %s\n", g.Name(), g.NumOps(), out)
			}
			return err
		},
	}
	addOut(cmd, &out, "write the graph to `FILE` (default: standard output)")
	return cmd
}

func newWorkloadsSynthCmd(s *streams) *cobra.Command {
	var o jobs.SynthOptions
	cmd := &cobra.Command{
		Use:   "synth --family er|ba|ws|sbm|all --count N --seed S [--nodes MIN-MAX] -o DIR",
		Short: "Write REGAL's synthetic graphs (train/valid/test) to a folder",
		Example: `  placer workloads synth --family ba --count 120 --seed 1 -o synth/
  # Graphs twice the largest of REGAL's (400 nodes; 50-200 by default), another seed:
  placer workloads synth --family all --count 8 --seed 2000001 --nodes 400 -o synth-2x/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSynth(o); err != nil {
				return err
			}
			if err := jobs.Synth(o); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "wrote %d %s graphs to %s (train/valid/test)\n", o.Count, o.Family, o.Dir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Family, "family", "all", "er (Erdos-Renyi), ba (Barabasi-Albert), ws (Watts-Strogatz), sbm (stochastic block model) or all")
	f.IntVar(&o.Count, "count", 100, "number of graphs")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed")
	f.StringVar(&o.Nodes, "nodes", jobs.DefaultSynthNodes, "random-graph nodes per graph, drawn uniformly from `MIN-MAX` (REGAL's 50-200; 100-400 is twice as large)")
	addOut(cmd, &o.Dir, "write the graphs under `DIR`")
	return cmd
}

// checkWorkloadName is a usage error unless name is a built-in workload.
func checkWorkloadName(name string) error {
	if _, ok := workloads.Lookup(name); !ok {
		return fail.Usagef("unknown workload %q (placer workloads list)", name)
	}
	return nil
}

// checkSynth checks workloads synth's flags.
func checkSynth(o jobs.SynthOptions) error {
	if o.Dir == "" {
		return fail.Usagef("give the output folder with -o/--out DIR")
	}
	if o.Count < 1 {
		return fail.Usagef("--count %d: must be at least 1", o.Count)
	}
	if _, err := workloads.ParseNodeRange(o.Nodes); err != nil {
		return fail.Usagef("--nodes: %v", err)
	}
	return nil
}
