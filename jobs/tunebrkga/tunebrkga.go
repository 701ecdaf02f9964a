package tunebrkga

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/methods/brkga/tuned"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
	"github.com/placer/placer/workloads"
)

// Options are the inputs of `placer tune-brkga` (make brkga-tune).
type Options struct {
	Grid tuned.Grid // zero = tuned.DefaultGrid
	// Graphs is the number of training graphs (0 = 4), drawn with
	// jobs.RegalTrainSeed from every family in turn.
	Graphs int
	// Evaluations per BRKGA run (0 = 5,000, the budget the tuned method
	// is compared at).
	Evaluations int
	// Objectives to tune for (nil = both).
	Objectives []optimize.Objective
	Cluster    inputs.ClusterSpec // GPUs 0 = 2
	// Tasks is what BRKGA decides ("" = placement,scheduling, as in
	// placer report regal: the chromosome must be the one compared).
	Tasks string
	Sync  bool   // REGAL's synchronous transfers
	Seed  uint64 // every run's seed
	// Command is recorded in the file.
	Command string
	// Out is where the file is written ("" = nowhere).
	Out      string
	Progress io.Writer
}

// Run grid-searches BRKGA's hyperparameters on REGAL's synthetic
// training set, for each objective: every setting runs once per training
// graph at the same budget and seed, and scores the mean over the graphs
// of its objective value over default BRKGA's; the lowest score wins (the
// default, scoring 1, wins ties, so a setting must beat it to be chosen).
func Run(ctx context.Context, o Options) (*tuned.File, error) {
	if len(o.Grid.Population) == 0 {
		o.Grid = tuned.DefaultGrid
	}
	if o.Graphs == 0 {
		o.Graphs = 4
	}
	if o.Evaluations == 0 {
		o.Evaluations = optimize.DefaultEvaluations
	}
	if len(o.Objectives) == 0 {
		o.Objectives = optimize.Objectives
	}
	if o.Cluster.GPUs == 0 {
		o.Cluster.GPUs = 2
	}
	if o.Graphs < 1 || o.Evaluations < 1 {
		return nil, fmt.Errorf("tune-brkga: graphs %d and evaluations %d must be positive", o.Graphs, o.Evaluations)
	}
	if o.Tasks == "" {
		o.Tasks = "placement,scheduling"
	}
	tasks, err := jobs.ParseTasks(o.Tasks)
	if err != nil {
		return nil, err
	}
	c, err := inputs.Cluster(o.Cluster, inputs.Meta{})
	if err != nil {
		return nil, err
	}
	settings := o.Grid.Settings()
	if len(settings) == 0 {
		return nil, fmt.Errorf("tune-brkga: the grid has no valid setting")
	}
	gs, err := workloads.SyntheticSet("all", o.Graphs, jobs.RegalTrainSeed)
	if err != nil {
		return nil, err
	}
	f := &tuned.File{Format: tuned.Format, Version: tuned.Version, Command: o.Command, Grid: o.Grid,
		Family: "all", Graphs: o.Graphs, Seed: jobs.RegalTrainSeed, Devices: o.Cluster.GPUs, Memory: c.Hardware.Memory, Tasks: tasks.String(), Transfers: "async", Evaluations: o.Evaluations,
		RunSeed: o.Seed, Objectives: map[string]tuned.Tuning{}}
	if o.Sync {
		f.Transfers = "sync"
	}
	start, cpu0 := time.Now(), optimize.ProcessCPU()
	for _, obj := range o.Objectives {
		ps := make([]*optimize.Problem, len(gs))
		for i, g := range gs {
			pp, err := regalProblem(g, o.Cluster, tasks, o.Sync, obj)
			if err != nil {
				return nil, err
			}
			ps[i] = pp
		}
		score := func(q tuned.Params, base []float64) (float64, []float64, error) {
			vals := make([]float64, len(ps))
			sum := 0.0
			for i, p := range ps {
				res, err := q.BRKGA(p).Optimize(ctx, p, &optimize.Settings{Budget: optimize.Budget{Evaluations: o.Evaluations}, Seed: o.Seed})
				if err != nil {
					return 0, nil, err
				}
				if err := ctx.Err(); err != nil {
					return 0, nil, err
				}
				vals[i] = obj.Cost(&res.Eval)
				if base != nil {
					sum += vals[i] / base[i]
				}
			}
			return sum / float64(len(ps)), vals, nil
		}
		_, base, err := score(tuned.Default, nil)
		if err != nil {
			return nil, err
		}
		best := tuned.Tuning{Params: tuned.Default, Score: 1, DefaultScore: 1, Settings: len(settings)}
		for k, q := range settings {
			s, _, err := score(q, base)
			if err != nil {
				return nil, err
			}
			if s < best.Score {
				best.Params, best.Score = q, s
			}
			if o.Progress != nil && ((k+1)%10 == 0 || k+1 == len(settings)) {
				fmt.Fprintf(o.Progress, "tune-brkga: %s: %d/%d settings, best %.4f of default (%+v), %s\n",
					obj, k+1, len(settings), best.Score, best.Params, report.Seconds(time.Since(start).Seconds()))
			}
		}
		f.Objectives[obj.String()] = best
	}
	f.WallSeconds, f.CPUSeconds = time.Since(start).Seconds(), (optimize.ProcessCPU() - cpu0).Seconds()
	if o.Out != "" {
		if err := atomicfile.Write(o.Out, func(w io.Writer) error { return report.JSON(w, f) }); err != nil {
			return f, err
		}
	}
	return f, nil
}

// regalProblem is graph g on the cluster cs with objective obj, deciding
// tasks, FIFO order and no fusion as its base (a synthetic graph has no
// expert placement: the base places every op on GPU 0).
func regalProblem(g *graph.Graph, cs inputs.ClusterSpec, tasks optimize.Tasks, sync bool, obj optimize.Objective) (*optimize.Problem, error) {
	c, err := inputs.Cluster(cs, inputs.Meta{})
	if err != nil {
		return nil, err
	}
	pp, err := jobs.NewSetupOn(g, c, tasks, roofline.Options{SyncTransfers: sync}, nil)
	if err != nil {
		return nil, err
	}
	pp.Objective = obj
	return pp.Problem, nil
}
