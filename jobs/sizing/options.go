package sizing

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/report/plans"
)

// Options are placer size's inputs.
type Options struct {
	// Workload is the model as placer search takes it, with the run's
	// sequence length and global batch ("llama3.1-405b:seq=8192,batch=2048");
	// with Phases, its seq= and batch= are the phases'.
	Workload string
	// Tokens is the tokens to train (with the workload's seq and batch);
	// Phases, where set, is the schedule instead:
	// "seq=8192,batch=512,tokens=1T;seq=8192,batch=2048,tokens=14T".
	Tokens float64
	Phases string
	// Clusters are the candidates, separated by spaces or ';': each
	// PRESET:NODES (dgx-h100:64), PRESET:A..B (every doubling of A up to
	// B, and B), PRESET:N,M,... (those node counts), PRESET the word all
	// (every preset), with the pod's overrides after (,nics=4).
	Clusters string
	// For, Strat, AllowTight, MemoryMargin: as placer search's.
	For          string
	Strat        string
	AllowTight   bool
	MemoryMargin float64
	// Deadline is the longest time to train, seconds, and MaxCost the
	// most it may cost, in the price table's currency (0: none).
	Deadline float64
	MaxCost  float64
	// Prices is a price table file ("" = the default: prices.csv here);
	// Provider keeps only its rows of that provider ("" = the cheapest
	// row of each preset).
	Prices   string
	Provider string
	// Goodput is the share of wall time that trains (0: DefaultGoodput).
	Goodput float64
	// Choose is which candidate of those meeting the deadline and budget
	// is the answer: ChooseCheapest (the default) or ChooseFastest.
	Choose string
	// Out writes the chosen candidate's plan as placer search -o does
	// (its phase of the most tokens); Plot draws time against cost.
	Out  string
	Plot string
	// Progress, where set, is called after each candidate's search.
	Progress func(done, total int, cluster string)
}

// ChooseCheapest and ChooseFastest are --choose's values.
const (
	ChooseCheapest = "cheapest"
	ChooseFastest  = "fastest"
)

// DefaultGoodput is the share of wall time that trains when none is
// given: Meta's Llama 3 405B pre-training, "higher than 90% effective
// training time" over a 54-day snapshot with 466 job interruptions on
// 16K H100s (The Llama 3 Herd of Models, arXiv 2407.21783, section
// 3.3.4). It covers restarts after failures and checkpointing; Meta's
// figure is a lower bound ("higher than"), so 0.90 errs long.
const (
	DefaultGoodput       = 0.90
	DefaultGoodputSource = "Llama 3 405B's >90% effective training time on 16K H100s, arXiv 2407.21783 section 3.3.4"
)

// ParseTokens reads a token count: 15T, 800B, 2.5M, 1.2e12 or a plain
// number.
func ParseTokens(s string) (float64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'T', 't':
			mult, t = 1e12, t[:n-1]
		case 'B', 'b', 'G', 'g':
			mult, t = 1e9, t[:n-1]
		case 'M', 'm':
			mult, t = 1e6, t[:n-1]
		case 'K', 'k':
			mult, t = 1e3, t[:n-1]
		}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || !(x > 0) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a number of tokens above 0 (15T, 800B, 1.2e12)", s)
	}
	return x * mult, nil
}

// ParseDuration reads a deadline: a Go duration (720h, 90m) or days
// (54d, 1.5d).
func ParseDuration(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if d, ok := strings.CutSuffix(t, "d"); ok {
		x, err := strconv.ParseFloat(d, 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("%q is not a duration above 0 (54d, 720h)", s)
		}
		return x * 86400, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a duration above 0 (54d, 720h)", s)
	}
	return d.Seconds(), nil
}

// phases is the run's schedule: the workload's own seq and batch for
// o.Tokens, or o.Phases.
func (o Options) phases() ([]plans.SizePhase, error) {
	if o.Phases == "" {
		if !(o.Tokens > 0) {
			return nil, fail.Usagef("--tokens: give the tokens to train (15T), or --phases")
		}
		return []plans.SizePhase{{Tokens: o.Tokens}}, nil
	}
	if o.Tokens > 0 {
		return nil, fail.Usagef("--tokens and --phases: give one (the phases name their tokens)")
	}
	var out []plans.SizePhase
	for i, part := range strings.Split(o.Phases, ";") {
		var ph plans.SizePhase
		for _, kv := range strings.Split(strings.TrimSpace(part), ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			var err error
			switch k {
			case "seq":
				ph.Seq, err = strconv.Atoi(v)
			case "batch":
				ph.Batch, err = strconv.Atoi(v)
			case "tokens":
				ph.Tokens, err = ParseTokens(v)
			default:
				err = fmt.Errorf("unknown key %q (seq, batch, tokens)", k)
			}
			if err != nil {
				return nil, fail.Usagef("--phases: phase %d: %s: %v", i+1, kv, err)
			}
		}
		if ph.Seq < 1 || ph.Batch < 1 || !(ph.Tokens > 0) {
			return nil, fail.Usagef("--phases: phase %d %q: want seq=N,batch=N,tokens=T, each above 0", i+1, part)
		}
		out = append(out, ph)
	}
	return out, nil
}

// phaseWorkload is workload with its seq= and batch= replaced by ph's
// (ph.Seq 0: the workload as given).
func phaseWorkload(workload string, ph plans.SizePhase) string {
	if ph.Seq == 0 {
		return workload
	}
	keys := fmt.Sprintf("seq=%d,batch=%d", ph.Seq, ph.Batch)
	i := strings.LastIndex(workload, ":")
	if i < 0 || !strings.Contains(workload[i+1:], "=") {
		return workload + ":" + keys
	}
	var kept []string
	for _, kv := range strings.Split(workload[i+1:], ",") {
		k, _, _ := strings.Cut(kv, "=")
		if k != "seq" && k != "batch" {
			kept = append(kept, kv)
		}
	}
	return workload[:i+1] + strings.Join(append(kept, keys), ",")
}

// Candidates reads a clusters list (Options.Clusters) into pods written
// PRESET:NODES[,overrides], in the order given.
func Candidates(text string) ([]string, error) {
	items := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ';' || r == '\t' || r == '\n' })
	if len(items) == 0 {
		return nil, fail.Usagef("--clusters: name at least one, e.g. dgx-h100:16..2048 or all:64")
	}
	var out []string
	for _, it := range items {
		head, sizes, ok := strings.Cut(it, ":")
		if !ok {
			return nil, fail.Usagef("--clusters: %q: write PRESET:NODES (dgx-h100:64, dgx-h100:16..2048, all:8)", it)
		}
		var nodes []int
		var opts []string
		for _, part := range strings.Split(sizes, ",") {
			if strings.Contains(part, "=") {
				opts = append(opts, part)
				continue
			}
			ns, err := nodeCounts(part)
			if err != nil {
				return nil, fail.Usagef("--clusters: %q: %v", it, err)
			}
			nodes = append(nodes, ns...)
		}
		if len(nodes) == 0 {
			return nil, fail.Usagef("--clusters: %q: no node count", it)
		}
		presets := []string{head}
		if head == "all" {
			presets = plan.PodPresets()
		}
		for _, p := range presets {
			for _, n := range nodes {
				c := fmt.Sprintf("%s:%d", p, n)
				if len(opts) > 0 {
					c += "," + strings.Join(opts, ",")
				}
				if _, err := plan.ParsePod(c); err != nil {
					return nil, fail.Usagef("--clusters: %v", err)
				}
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// nodeCounts reads N or A..B (A, 2A, 4A, ... below B, then B).
func nodeCounts(s string) ([]int, error) {
	lo, hi, isRange := strings.Cut(s, "..")
	a, err := strconv.Atoi(lo)
	if err != nil || a < 1 {
		return nil, fmt.Errorf("%q is not a node count of at least 1", lo)
	}
	if !isRange {
		return []int{a}, nil
	}
	b, err := strconv.Atoi(hi)
	if err != nil || b < a {
		return nil, fmt.Errorf("%q is not a node count of at least %d", hi, a)
	}
	var out []int
	for n := a; n < b; n *= 2 {
		out = append(out, n)
	}
	return append(out, b), nil
}
