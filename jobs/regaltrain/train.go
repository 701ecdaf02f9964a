package regaltrain

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/jobs/grid"
	"github.com/placer/placer/methods/regal"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/workloads"
)

// Job is REGAL's training set assembled and trained: the native JSON
// graphs under GraphsDir (REGAL's synthetic graphs from `placer workloads
// synth`, or any others) and Copies augmented copies of each built-in
// workload of Workloads (each tensor size and op time times its own
// U(0.5, 1.5), REGAL §5.1 and A.1.2: workloads.Augment), all on one
// cluster.
type Job struct {
	GraphsDir string
	Workloads []string
	// Copies is the number of augmented copies per workload; 0 = 4.
	Copies int
	// Cluster is the cluster every graph is placed on (GPUs 0 = 2, REGAL's
	// two devices).
	Cluster inputs.ClusterSpec
	// SyncTransfers is REGAL's performance model: a transfer blocks its
	// sender and receiver (A.4).
	SyncTransfers bool
	// Tasks are the problems' tasks; zero = placement and scheduling
	// (REGAL's).
	Tasks optimize.Tasks
	// Train holds the training knobs; its Graphs are filled by Run.
	Train regal.Train
	// Workers runs the steps in synchronous rounds of Workers shared by
	// any number of processes through the folder Rounds (regal.Rounds:
	// same seed and Workers, same model; 1 = the one-process model);
	// Lease is a claim's lease (0 = 1m).
	Workers int
	Rounds  string
	Lease   time.Duration
	// ListCells, with Workers, receives the run's cells (one per step,
	// JSON lines) and nothing runs; OneCell runs cell Cell only
	// (regal.Rounds.One): a task of a cluster's array job.
	ListCells io.Writer
	OneCell   bool
	Cell      int
	// Progress, if set, receives one line per graph as the set is built.
	Progress io.Writer
}

// Graphs builds the training set.
func (j *Job) Graphs() ([]regal.TrainGraph, error) {
	cs := j.Cluster
	if cs.GPUs == 0 {
		cs.GPUs = 2
	}
	tasks := j.Tasks
	if tasks == (optimize.Tasks{}) {
		tasks = optimize.Tasks{Placement: true, Scheduling: true}
	}
	copies := j.Copies
	if copies == 0 {
		copies = 4
	}
	if copies < 0 {
		return nil, fmt.Errorf("regal: train: copies %d, want at least 1", copies)
	}
	var out []regal.TrainGraph
	add := func(spec inputs.GraphSpec, name string, aug []uint64) error {
		g, meta, err := inputs.Graph(spec)
		if err != nil {
			return fmt.Errorf("regal: train: %s: %w", name, err)
		}
		c, err := inputs.Cluster(cs, meta)
		if err != nil {
			return fmt.Errorf("regal: train: %s: %w", name, err)
		}
		if aug == nil {
			aug = []uint64{0}
		}
		for _, s := range aug {
			gg := g
			if s != 0 {
				gg = workloads.Augment(g, s)
			}
			m, err := roofline.NewModel(gg, c, roofline.Options{SyncTransfers: j.SyncTransfers})
			if err != nil {
				return fmt.Errorf("regal: train: %s: %w", name, err)
			}
			p := optimize.NewProblem(gg, m, roofline.NewEvaluator(m))
			p.Tasks = tasks
			out = append(out, regal.TrainGraph{Name: gg.Name(), Problem: p})
			if j.Progress != nil {
				fmt.Fprintf(j.Progress, "regal train: %-36s %6d ops\n", gg.Name(), gg.NumOps())
			}
		}
		return nil
	}
	if j.GraphsDir != "" {
		var files []string
		err := filepath.WalkDir(j.GraphsDir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".json") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("regal: train: %w", err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("regal: train: no .json graphs under %s", j.GraphsDir)
		}
		slices.Sort(files)
		for _, f := range files {
			if err := add(inputs.GraphSpec{Path: f, Format: "native"}, f, nil); err != nil {
				return nil, err
			}
		}
	}
	for wi, w := range j.Workloads {
		aug := make([]uint64, copies)
		for k := range aug {
			aug[k] = regal.AugmentSeed(j.Train.Seed, wi, k) // never 0: every copy is augmented
		}
		if err := add(inputs.GraphSpec{Workload: w}, w, aug); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("regal: train: no graphs (give a graphs folder or workloads)")
	}
	return out, nil
}

// Run builds the training set and trains.
func (j *Job) Run(ctx context.Context) (*regal.TrainResult, error) {
	gs, err := j.Graphs()
	if err != nil {
		return nil, err
	}
	t := j.Train
	t.Graphs = gs
	if j.Workers > 0 {
		t.Rounds = &regal.Rounds{Workers: j.Workers, Dir: j.Rounds, Lease: j.Lease, One: j.OneCell, Cell: j.Cell}
	}
	return t.Run(ctx)
}

// listCells writes the cells of j's rounds to j.ListCells: as
// pretrain's, with the method regal-train-step and the budget the
// BRKGA runs' evaluations.
func (j *Job) listCells() error {
	enc := json.NewEncoder(j.ListCells)
	for _, c := range (&regal.Rounds{Workers: j.Workers}).Cells(j.Train.Steps) {
		l := grid.RoundCell{Index: c.Index, Round: c.Round, Method: "regal-train-step", Budget: fmt.Sprintf("%d-evals", cmp.Or(j.Train.Evaluations, 1000)), Seed: j.Train.Seed, File: c.File}
		if j.Rounds != "" {
			l.File = filepath.Join(j.Rounds, c.File)
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}
