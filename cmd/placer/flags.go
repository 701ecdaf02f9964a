package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagRange is the documented range of a numeric flag's value (both ends
// included). docs/inputs.md lists the same table (TestInputsDocListsFlags).
type flagRange struct {
	min, max float64
	note     string
}

const (
	maxCount = 1_000_000_000 // steps, budgets: beyond any run that ends
	year     = 365 * 24 * time.Hour
)

// flagRanges are the ranges of every numeric flag of every command, by
// flag name; a flag given outside its range is a usage error (exit 2).
// Durations are in seconds.
var flagRanges = map[string]flagRange{
	"gpus":             {1, 1 << 20, "GPUs of the cluster: for an op graph at most 64 (the graph file's count, else 1, when not given); at cluster scale the pod's"},
	"extra-gpus":       {1, 64, "each listed GPU count"},
	"memory":           {1, 1 << 50, "device memory in bytes (1 PiB at most)"},
	"gpu":              {0, 63, "CUDA ordinal"},
	"steps":            {0, maxCount, "0 = the command's default"},
	"pretrain-steps":   {0, maxCount, ""},
	"search-steps":     {0, maxCount, ""},
	"finetune-steps":   {0, maxCount, ""},
	"checkpoint-every": {0, maxCount, "0 = only on stop and at the end"},
	"warmup":           {-1, 1_000_000, "-1 = none, 0 = the default"},
	"samples":          {0, 4096, "0 = the command's default"},
	"budget":           {0, maxCount, "0 = each method's default"},
	"evaluations":      {1, maxCount, ""},
	"evals":            {1, maxCount, "left out: the command's default (no budget of 0)"},
	"best-budget":      {0, maxCount, "0 = the larger of 50000 and --budgets"},
	"train-graphs":     {1, 1_000_000, ""},
	"repeats":          {1, 10_000, ""},
	"count":            {1, 1_000_000, ""},
	"epochs":           {1, 1000, ""},
	"minibatches":      {1, 4096, ""},
	"lr":               {math.SmallestNonzeroFloat64, 10, "must be positive"},
	"clip":             {math.SmallestNonzeroFloat64, 100, "must be positive"},
	"entropy":          {0, 1000, "0 = none"},
	"value-coef":       {0, 1000, "0 = none"},
	"max-grad-norm":    {0, 1e9, "0 = none"},
	"target-kl":        {0, 1000, "0 = never"},
	"time":             {0, year.Seconds(), "a duration (90s, 30m); 0 = none"},
	"pretrain-time":    {0, year.Seconds(), "a duration; 0 = none"},
	"search-time":      {0, year.Seconds(), "a duration; 0 = none"},
	"batch":            {0, 4096, "0 = the command's default"},
	"copies":           {1, 1000, "augmented copies per workload"},
	"parallel":         {0, 1_000_000, "0 = every cell at once"},
	"workers":          {0, 1_000_000, "visits a round (pretrain --scored); 0 = one process, in turn"},
	"cpus-per-task":    {1, 4096, ""},
	"lease":            {0, year.Seconds(), "a duration; 0 = the default (1m)"},
	"layers":           {1, 8, "graph network layers"},
	"dim":              {1, 512, "node embedding width"},
	"mean-buckets":     {2, 64, "quantization levels"},
	"var-buckets":      {1, 64, "quantization levels"},
}

// checkFlags checks every flag given on cmd's command line against
// flagRanges.
func checkFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		r, ok := flagRanges[f.Name]
		if !ok {
			return
		}
		err = checkFlag(f, r)
	})
	return err
}

func checkFlag(f *pflag.Flag, r flagRange) error {
	var vals []float64
	switch f.Value.Type() {
	case "duration":
		d, err := time.ParseDuration(f.Value.String())
		if err != nil {
			return usagef("--%s %s: %v", f.Name, f.Value, err)
		}
		vals = []float64{d.Seconds()}
	case "intSlice":
		s := strings.Trim(f.Value.String(), "[]")
		for _, p := range strings.Split(s, ",") {
			if p == "" {
				continue
			}
			v, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return usagef("--%s %s: %v", f.Name, p, err)
			}
			vals = append(vals, v)
		}
	default:
		v, err := strconv.ParseFloat(f.Value.String(), 64)
		if err != nil {
			return usagef("--%s %s: not a number", f.Name, f.Value)
		}
		vals = []float64{v}
	}
	for _, v := range vals {
		if !(v >= r.min && v <= r.max) {
			return usagef("--%s %s: out of range [%s, %s]", f.Name, f.Value, fmtBound(f, r.min), fmtBound(f, r.max))
		}
	}
	return nil
}

func fmtBound(f *pflag.Flag, x float64) string {
	switch {
	case f.Value.Type() == "duration":
		return time.Duration(x * float64(time.Second)).String()
	case x == math.SmallestNonzeroFloat64:
		return "0 (excluded)"
	}
	return fmtNum(x)
}

// flagRangeTable is flagRanges as the rows of docs/inputs.md's table.
func flagRangeTable() []string {
	names := make([]string, 0, len(flagRanges))
	for k := range flagRanges {
		names = append(names, k)
	}
	sort.Strings(names)
	var rows []string
	for _, n := range names {
		r := flagRanges[n]
		lo := fmtNum(r.min)
		if r.min == math.SmallestNonzeroFloat64 {
			lo = "> 0"
		}
		rows = append(rows, fmt.Sprintf("| `--%s` | %s | %s | %s |", n, lo, fmtNum(r.max), r.note))
	}
	return rows
}

// fmtNum writes whole numbers in full (1125899906842624), others short.
func fmtNum(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e18 {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// addOut binds -o/--out, the main output file of every command, to p;
// --output, its old spelling on some commands, is kept as a hidden alias.
func addOut(cmd *cobra.Command, p *string, usage string) {
	f := cmd.Flags()
	f.StringVarP(p, "out", "o", "", usage)
	f.StringVar(p, "output", "", usage)
	_ = f.MarkHidden("output")
}
