package main

import (
	"fmt"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/worldflags"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/sizing"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/plans"
	"github.com/spf13/cobra"
)

type sizeOptions struct {
	sizing.Options
	tokens, deadline string
	JSON, quiet      bool
}

func init() { register(newSizeCmd) }

func newSizeCmd(s *streams) *cobra.Command {
	o := &sizeOptions{}
	cmd := &cobra.Command{
		Use:   "size --workload MODEL:seq=S,batch=B (--tokens N | --phases LIST) --clusters LIST",
		Short: "How many GPUs, which, for how long, at what cost: a training run's size on each candidate cluster",
		Long: `For so many tokens of one transformer, each candidate cluster's best plan
(placer search's: the same search, the same --for), its step time,
tokens per second, time to train, GPU-hours, energy and cost, each with
the band of the step's stated error (the 90th percentile of |error| on
published runs of its regime) carried through. The time is the steps'
over a goodput (--goodput, the share of wall time that trains: restarts,
checkpointing, evaluation; default 0.90, Llama 3 405B's ">90% effective
training time", arXiv 2407.21783). Energy is the GPUs at their power
limit (the presets'); cost is GPU-hours at a price table's rate per
GPU-hour (--prices FILE, default jobs/sizing/prices.csv: public prices
per GPU-hour, each row with its source and date; the answer names the
row it used; a preset without a row has no cost).

--clusters lists the candidates, separated by spaces: PRESET:NODES
(dgx-h100:64), PRESET:A..B (every doubling of A up to B, and B),
PRESET:N,M (those node counts), all:NODES (every preset). --phases gives
a schedule instead of --tokens: "seq=8192,batch=1024,tokens=2T;seq=8192,
batch=2048,tokens=13T". The chosen candidate is the cheapest (--choose
fastest: the fastest) that meets --deadline and --max-cost; -o writes its
plan as placer search -o does (placer export and eval read it); --plot
draws time against cost, the Pareto front marked and the candidates that
miss the deadline or the budget grey (docs/sizing.md).`,
		Example: `  placer size --workload llama3-70b:seq=8192,batch=1024 --tokens 15T --clusters "dgx-h100:64..512 dgx-b200:64..512"
  placer size --workload llama3.1-405b:seq=8192,batch=2048 --tokens 15.6T --clusters all:256..2048 --deadline 90d --max-cost 200e6 --plot size.svg -o plan.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.tokens != "" {
				t, err := sizing.ParseTokens(o.tokens)
				if err != nil {
					return usagef("--tokens: %v", err)
				}
				o.Tokens = t
			}
			if o.deadline != "" {
				d, err := sizing.ParseDuration(o.deadline)
				if err != nil {
					return usagef("--deadline: %v", err)
				}
				o.Deadline = d
			}
			if o.Plot != "" {
				if err := report.CheckPlotPath(o.Plot); err != nil {
					return usagef("--plot: %v", err)
				}
			}
			if !o.quiet {
				bar := &lazyBar{w: s.Err, what: "size", unit: "candidates"}
				o.Progress = func(done, total int, cluster string) { bar.step(total, done, cluster) }
				defer bar.finish()
			}
			rep, err := sizing.Run(cmd.Context(), o.Options)
			return emit(s, o.JSON, rep, func() error { return plans.WriteSizing(s.Out, rep) }, err, true)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Workload, "workload", "", "the transformer as placer search takes it, with the run's sequence and global batch (llama3-70b:seq=8192,batch=1024; gpt:..., llama:..., hf:PATH:...)")
	f.StringVar(&o.tokens, "tokens", "", "the tokens to train (15T, 800B, 1.2e12), at the workload's seq and batch")
	f.StringVar(&o.Phases, "phases", "", "a schedule instead of --tokens: phases separated by ';', each seq=N,batch=N,tokens=T")
	f.StringVar(&o.Clusters, "clusters", "", "the candidates, separated by spaces: PRESET:NODES, PRESET:A..B (doublings), PRESET:N,M, all:NODES (presets "+strings.Join(jobs.PodPresets(), ", ")+")")
	f.StringVar(&o.deadline, "deadline", "", "the longest time to train (54d, 720h): candidates past it are marked late")
	f.Float64Var(&o.MaxCost, "max-cost", 0, "the budget, in the price table's currency (USD by default): candidates above it are marked over budget (0 = none)")
	f.StringVar(&o.Prices, "prices", "", "price table `FILE` (CSV: preset,provider,offer,usd_per_gpu_hour,source,date; default: jobs/sizing/prices.csv)")
	f.StringVar(&o.Provider, "provider", "", "price every preset at this provider's row (default: the cheapest row of each preset)")
	f.Float64Var(&o.Goodput, "goodput", 0, fmt.Sprintf("the share of wall time that trains: restarts, checkpointing, evaluation take the rest (default %.2f: %s)", sizing.DefaultGoodput, sizing.DefaultGoodputSource))
	f.StringVar(&o.Choose, "choose", sizing.ChooseCheapest, "which candidate meeting --deadline and --max-cost is the answer: "+sizing.ChooseCheapest+" or "+sizing.ChooseFastest)
	f.StringVar(&o.For, "for", "", "the framework the plans are for, as placer search's --for: "+strings.Join(jobs.SearchTargets, ", ")+" (default "+jobs.DefaultSearchTarget+")")
	worldflags.Strategy(f, "what every search keeps as given, as placer search's --strategy (fp8=current,grads=bf16; tp=8)", &o.Strat)
	f.BoolVar(&o.AllowTight, "allow-tight", false, "keep plans whose memory is tight, as placer search --allow-tight")
	f.Float64Var(&o.MemoryMargin, "memory-margin", jobs.DefaultMemoryMargin, "the share of each GPU's memory a plan leaves free, as placer search's")
	f.StringVar(&o.Plot, "plot", "", "plot time to train against cost to `FILE` (.png, .svg or .pdf): the Pareto front marked, candidates missing the deadline or budget grey")
	f.StringVarP(&o.Out, "out", "o", "", "write the chosen candidate's plan to `FILE` as placer search -o does")
	f.BoolVar(&o.JSON, "json", false, "print the answer as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	_ = cmd.MarkFlagRequired("workload")
	_ = cmd.MarkFlagRequired("clusters")
	return cmd
}
