package placements

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/placer/placer/report"
)

// ParallelBetter is how much faster than the best strategy users run
// placer's answer must be to count as better: at least 5% (a ratio of at
// most 0.95).
const ParallelBetter = 0.95

// ParallelUser are the strategies users run without placer, whose best
// (among those that fit) placer's answer is measured against.
var ParallelUser = []string{"ddp", "fsdp", "zero2", "gpipe", "1f1b", "pipedream"}

// Parallel is `placer report parallel`: for each graph, GPU count and
// topology, the strategies a user would run and placer's answer, at the
// same global batch, in the roofline model.
type Parallel struct {
	Hardware   string         `json:"hardware"`
	Method     string         `json:"method"`                // placer's search
	Evals      int            `json:"evaluations"`           // its budget per cell (0: none)
	CPU        float64        `json:"cpu_seconds,omitempty"` // its CPU budget per cell (0: none)
	Seed       uint64         `json:"seed"`
	GPUs       []int          `json:"gpus"`
	Topologies []string       `json:"topologies"`
	Cells      []ParallelCell `json:"cells"`
	// Summary is one entry per GPU count and topology that has cells.
	Summary []ParallelGroup `json:"summary"`
	Missing int             `json:"missing_cells,omitempty"` // not run (yet)
}

// ParallelCell is one graph on one GPU count and topology.
type ParallelCell struct {
	Graph    string        `json:"graph"`
	Ops      int           `json:"ops"`
	Batch    int           `json:"batch"` // the global batch (0 = no batch information)
	GPUs     int           `json:"gpus"`
	Topology string        `json:"topology"`
	Capacity int64         `json:"capacity_bytes"` // per GPU
	Rows     []ParallelRow `json:"rows"`
	// BestUser is the fastest of the user strategies that fit (""
	// = none fits), Ratio placer's step time over its (0 = none).
	BestUser string  `json:"best_user,omitempty"`
	Ratio    float64 `json:"placer_ratio,omitempty"`
	// Evaluations are placer's search's (the quick baselines' and
	// strategies' besides), Wall and CPU the cell's wall and process CPU
	// seconds.
	Evaluations int     `json:"evaluations"`
	Wall        float64 `json:"wall_s"`
	CPU         float64 `json:"cpu_s"`
}

// ParallelRow is one strategy in a cell.
type ParallelRow struct {
	Strategy string `json:"strategy"` // single, best quick, ddp, ..., placer
	// From is the method the row came from: best quick's baseline, or
	// the table row placer's answer is (or the search's method when it
	// is its own).
	From       string  `json:"from,omitempty"`
	StepTime   float64 `json:"step_time_s,omitempty"`
	PeakMemory int64   `json:"max_peak_memory,omitempty"` // the largest per GPU
	OOM        bool    `json:"oom,omitempty"`
	Fits       bool    `json:"fits"`
	// Chose is the decision's strategy ("" = one replica, one
	// micro-batch), Replicas its replicas and GPUsPerReplica the GPUs one
	// replica's placement uses.
	Chose          string `json:"chose,omitempty"`
	Replicas       int    `json:"replicas,omitempty"`
	GPUsPerReplica int    `json:"gpus_per_replica,omitempty"`
	// Note says why the row is absent (no decision): no batch
	// information, not built yet, the method's error.
	Note   string `json:"note,omitempty"`
	Placer bool   `json:"placer,omitempty"`
}

// Absent reports whether the row has no decision.
func (r *ParallelRow) Absent() bool { return r.Note != "" || r.StepTime <= 0 }

// ParallelGroup summarizes one GPU count and topology over its graphs.
type ParallelGroup struct {
	GPUs     int    `json:"gpus"`
	Topology string `json:"topology"`
	Graphs   int    `json:"graphs"` // cells with a ratio
	// GeoMean is the geometric mean of placer's ratio to the best user
	// strategy over those cells (0 = none).
	GeoMean float64 `json:"geomean_ratio,omitempty"`
	// NotBetter are the cells where placer's answer is not at least 5%
	// faster than the best user strategy (ratio above ParallelBetter),
	// and NoUser the cells where no user strategy fits.
	NotBetter []string `json:"not_5pct_better,omitempty"`
	NoUser    []string `json:"no_user_strategy,omitempty"`
}

// Placer is the cell's placer row (a zero row when there is none).
func (c *ParallelCell) Placer() ParallelRow {
	for _, r := range c.Rows {
		if r.Placer {
			return r
		}
	}
	return ParallelRow{}
}

// SetRatio fills BestUser and Ratio from the rows.
func (c *ParallelCell) SetRatio() {
	c.BestUser, c.Ratio = "", 0
	best := math.Inf(1)
	for _, r := range c.Rows {
		if !r.Placer && isUser(r.Strategy) && !r.Absent() && r.Fits && r.StepTime < best {
			best, c.BestUser = r.StepTime, r.Strategy
		}
	}
	if p := c.Placer(); c.BestUser != "" && p.Fits && p.StepTime > 0 {
		c.Ratio = p.StepTime / best
	}
}

func isUser(s string) bool {
	for _, u := range ParallelUser {
		if s == u {
			return true
		}
	}
	return false
}

// Summarize fills p.Summary: per GPU count and topology, in the order of
// p.GPUs and p.Topologies.
func (p *Parallel) Summarize() {
	p.Summary = nil
	for _, n := range p.GPUs {
		for _, t := range p.Topologies {
			g := ParallelGroup{GPUs: n, Topology: t}
			logs, any := 0.0, false
			for i := range p.Cells {
				c := &p.Cells[i]
				if c.GPUs != n || c.Topology != t {
					continue
				}
				any = true
				if c.Ratio <= 0 {
					g.NoUser = append(g.NoUser, c.Graph)
					continue
				}
				g.Graphs++
				logs += math.Log(c.Ratio)
				if c.Ratio > ParallelBetter {
					g.NotBetter = append(g.NotBetter, fmt.Sprintf("%s %.3f", c.Graph, c.Ratio))
				}
			}
			if !any {
				continue
			}
			if g.Graphs > 0 {
				g.GeoMean = math.Exp(logs / float64(g.Graphs))
			}
			p.Summary = append(p.Summary, g)
		}
	}
}

// WriteParallel prints one row per cell and strategy: step time, its
// ratio to the best user strategy, peak memory per GPU, whether it fits
// and what it chose; then per GPU count and topology the geometric mean
// of placer's ratio and the cells where placer is not at least 5% better.
func WriteParallel(w io.Writer, p Parallel) error {
	w, flush := report.FitLines(w)
	defer flush()
	budget := fmt.Sprintf("--evals %d", p.Evals)
	switch {
	case p.CPU > 0 && p.Evals > 0:
		budget = fmt.Sprintf("--cpu %gs --evals %d", p.CPU, p.Evals)
	case p.CPU > 0:
		budget = fmt.Sprintf("--cpu %gs", p.CPU)
	}
	fmt.Fprintf(w, "strategies at the same global batch on %s (roofline model); placer = placer search --method %s %s, seed %d\n",
		p.Hardware, p.Method, budget, p.Seed)
	header := []string{"cell", "strategy", "step ms", "vs best", "peak GiB", "chose", "GPUs", "from"}
	var rows [][]string
	for _, c := range p.Cells {
		best := 0.0
		for _, r := range c.Rows {
			if r.Strategy == c.BestUser && !r.Placer {
				best = r.StepTime
			}
		}
		for i, r := range c.Rows {
			row := make([]string, len(header))
			if i == 0 {
				row[0] = fmt.Sprintf("%s %d %s", c.Graph, c.GPUs, c.Topology)
			}
			row[1] = r.Strategy
			if r.Strategy == c.BestUser && !r.Placer {
				row[1] += " *"
			}
			if r.Absent() {
				row[2], row[5] = "-", "absent: "+r.Note
				rows = append(rows, row)
				continue
			}
			row[2] = fmt.Sprintf("%.1f", r.StepTime*1e3)
			if best > 0 {
				row[3] = fmt.Sprintf("%.3f", r.StepTime/best)
				if r.Placer && r.StepTime/best > ParallelBetter {
					row[3] += " !"
				}
			}
			row[4] = fmt.Sprintf("%.2f", float64(r.PeakMemory)/(1<<30))
			if !r.Fits {
				row[4] += " OOM"
			}
			row[5] = cmp.Or(r.Chose, "one replica")
			row[6] = fmt.Sprint(r.GPUsPerReplica)
			if r.Replicas > 1 {
				row[6] = fmt.Sprintf("%d x %d", r.Replicas, r.GPUsPerReplica)
			}
			if r.Placer {
				row[7] = r.From
			}
			rows = append(rows, row)
		}
	}
	if err := report.TableFit(w, header, rows, []int{7}); err != nil {
		return err
	}
	fmt.Fprintf(w, "step: the global batch's training step; vs best: step / the fastest of %s that fits\n", strings.Join(ParallelUser, ", "))
	fmt.Fprintf(w, "(* = it; ! = placer's answer not at least %.0f%% faster); peak: the largest per GPU (OOM: over capacity)\n", 100*(1-ParallelBetter))
	fmt.Fprintln(w, "chose: the decision's strategy; GPUs: replicas x the GPUs one replica's placement uses")
	fmt.Fprintln(w, "from: the row placer's answer is (its search's method when the search found it)")
	if n, wall, cpu := p.totals(); n > 0 {
		fmt.Fprintf(w, "%d cells, %s wall and %s CPU in all (the quick baselines, the strategies and the search)\n", n, report.Seconds(wall), report.Seconds(cpu))
	}
	if len(p.Summary) > 0 {
		var srows [][]string
		for _, g := range p.Summary {
			gm, better, not := "-", "-", "-"
			if g.GeoMean > 0 {
				gm = fmt.Sprintf("%.3f", g.GeoMean)
				better = fmt.Sprintf("%d of %d", g.Graphs-len(g.NotBetter), g.Graphs)
			}
			var names []string
			for _, nb := range g.NotBetter {
				names = append(names, strings.Fields(nb)[0])
			}
			if len(names) > 0 {
				not = strings.Join(names, ", ")
			}
			if len(g.NoUser) > 0 {
				not += "; none of the user strategies fits: " + strings.Join(g.NoUser, ", ")
			}
			srows = append(srows, []string{fmt.Sprint(g.GPUs), g.Topology, gm, better, not})
		}
		fmt.Fprintln(w)
		if err := report.Table(w, []string{"GPUs", "topology", "placer / best user (geomean)", "5% faster on", "not 5% faster on (ratio above 0.95)"}, srows); err != nil {
			return err
		}
	}
	if p.Missing > 0 {
		fmt.Fprintf(w, "%d cells not run yet (not kept in --dir)\n", p.Missing)
	}
	return nil
}

// totals are the cells' count and their wall and CPU seconds.
func (p *Parallel) totals() (n int, wall, cpu float64) {
	for _, c := range p.Cells {
		n, wall, cpu = n+1, wall+c.Wall, cpu+c.CPU
	}
	return n, wall, cpu
}

// ParallelBars draws placer's ratio to the best user strategy: a group
// per graph, a bar per GPU count and topology, 1 = the best user
// strategy.
func ParallelBars(p Parallel) report.BarPlot {
	bp := report.BarPlot{Title: "placer's answer / best of " + strings.Join(ParallelUser, ", ") + " (" + p.Hardware + ")",
		YLabel: "step / best user strategy (lower is better)", Ref: 1, RefName: "best user strategy"}
	// Room above the bars for a legend of up to seven entries.
	bp.Headroom = 1.35 + 0.06*float64(max(len(p.GPUs)*len(p.Topologies)-2, 0))
	var graphs []string
	for _, c := range p.Cells {
		if !contains(graphs, c.Graph) {
			graphs = append(graphs, c.Graph)
		}
	}
	bp.Groups = graphs
	for _, n := range p.GPUs {
		for _, t := range p.Topologies {
			s := report.BarSeries{Name: fmt.Sprintf("%d GPUs %s", n, t), Values: make([]float64, len(graphs))}
			any := false
			for _, c := range p.Cells {
				if c.GPUs == n && c.Topology == t {
					for i, g := range graphs {
						if g == c.Graph {
							s.Values[i], any = c.Ratio, true
						}
					}
				}
			}
			if any {
				bp.Series = append(bp.Series, s)
			}
		}
	}
	return bp
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// WriteParallelPlot writes ParallelBars to path.
func WriteParallelPlot(path string, p Parallel) error {
	return report.WriteBarPlot(path, ParallelBars(p))
}
