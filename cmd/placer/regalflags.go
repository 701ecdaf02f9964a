package main

// regal train's and regal imitate's raw flag values parsed and checked
// into their jobs.

import (
	"io"
	"math"
	"strings"
	"time"

	"github.com/placer/placer/cmd/placer/internal/cellflags"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs/regaltrain"
	"github.com/placer/placer/methods/regal"
	"github.com/placer/placer/optimize"
)

// regalSetFlags are the training-set flags of regal train and regal
// imitate besides regaltrain.Job's own: the built-in workloads, the tasks
// and the objective.
type regalSetFlags struct {
	Workloads string // comma-separated
	Tasks     string // comma-separated tasks
	Objective string
}

// parseRegalSetFlags checks the flags, fills j's workloads and tasks,
// and returns the objective.
func parseRegalSetFlags(j *regaltrain.Job, f regalSetFlags) (optimize.Objective, error) {
	if f.Workloads != "" {
		j.Workloads = strings.Split(f.Workloads, ",")
	}
	if j.GraphsDir == "" && len(j.Workloads) == 0 {
		return 0, fail.Usagef("give --graphs DIR or --workloads LIST")
	}
	if j.Copies < 0 {
		return 0, fail.Usagef("--copies must not be negative")
	}
	var err error
	if j.Tasks, err = optimize.ParseTasks(f.Tasks); err != nil {
		return 0, fail.Usagef("--tasks: %v", err)
	}
	obj, err := optimize.ParseObjective(f.Objective)
	if err != nil {
		return 0, fail.Usagef("--objective: %v", err)
	}
	return obj, nil
}

// regalTrainFlags are regal train's flags besides regaltrain.Job's own.
type regalTrainFlags struct {
	Set  regalSetFlags
	Init string // --init: the model file to start from ("" = a new network)
	Out  string // --out: the model file to write (the checkpoint)
	// ListCells (--list-cells) and Cell (--cell: an index, "all", or ""
	// = the array index of arrayIndexVars when one is set, else all) run
	// the training in rounds as cells; Stdout receives the list; Getenv
	// reads the environment (nil = os.Getenv).
	ListCells bool
	Cell      string
	Stdout    io.Writer
	Getenv    func(string) string
}

// parseRegalTrainFlags checks j as regal train's flags give it, fills its
// objective, starting model and checkpoint from f, and turns the flags'
// conventions into Train's (--entropy 0 is none, --checkpoint-every 0
// only on stop and at the end).
func parseRegalTrainFlags(j *regaltrain.Job, f regalTrainFlags) error {
	var err error
	if j.Train.Objective, err = parseRegalSetFlags(j, f.Set); err != nil {
		return err
	}
	if f.Out == "" {
		return fail.Usagef("give --out MODEL (the model file to write)")
	}
	t := &j.Train
	if t.Steps < 0 || t.Time < 0 || t.Samples < 0 || t.Batch < 0 || t.Evaluations < 0 || t.SelfImitation < 0 {
		return fail.Usagef("--steps, --time, --samples, --batch, --evaluations and --self-imitation must not be negative")
	}
	if err := t.Config.Check(); err != nil {
		return fail.Usagef("%v", err)
	}
	if f.Init != "" {
		if t.Resume != "" {
			return fail.Usagef("give --init or --resume, not both")
		}
		if t.Model, err = regal.Load(f.Init); err != nil {
			return err
		}
	}
	t.Checkpoint = f.Out
	if t.Entropy == 0 {
		t.Entropy = -1
	}
	if t.CheckpointEvery == 0 {
		t.CheckpointEvery = math.MaxInt
	}
	return parseRegalRounds(j, f)
}

// parseRegalRounds checks --workers, --rounds, --lease, --list-cells and
// --cell (or the array index a cluster gives a task): in rounds, the
// cells are the steps.
func parseRegalRounds(j *regaltrain.Job, f regalTrainFlags) error {
	t := &j.Train
	cell := strings.TrimSpace(f.Cell)
	switch {
	case f.ListCells && cell != "":
		return fail.Usagef("--list-cells and --cell: give one")
	case (f.ListCells || (cell != "" && cell != "all")) && j.Workers == 0:
		return fail.Usagef("--list-cells and --cell: training runs as cells in synchronous rounds: give --workers K --rounds DIR --steps N")
	case j.Workers == 0 && j.Rounds == "":
		return nil // the environment's array index is not ours to read
	case j.Workers < 1 || j.Rounds == "":
		return fail.Usagef("--workers K and --rounds DIR go together: K steps a round, in the folder DIR every worker shares")
	case t.Steps < 1 || t.Time > 0:
		return fail.Usagef("--workers: give --steps (the steps in all) and no --time: the model must not depend on how fast a worker is")
	case t.Resume != "":
		return fail.Usagef("--workers: no --resume: the rounds folder is the checkpoint (a worker started again goes on from its last round)")
	case t.SelfImitation > 0:
		return fail.Usagef("--workers: no --self-imitation: its best actions are not part of a round's state")
	case j.Lease < 0 || (j.Lease > 0 && j.Lease < 100*time.Millisecond):
		return fail.Usagef("--lease %v: want at least 100ms", j.Lease)
	}
	if f.ListCells {
		j.ListCells = f.Stdout
		return nil
	}
	var err error
	j.OneCell, j.Cell, err = cellflags.RoundsCell(cell, f.Getenv, t.Steps, "step")
	return err
}

// regalImitateFlags are regal imitate's flags besides
// regaltrain.ImitateJob's own.
type regalImitateFlags struct {
	Set   regalSetFlags
	Genes string // --genes: the gene groups imitated, placement and/or priority
}

// parseRegalImitateFlags checks j as regal imitate's flags give it and fills its
// objective and targets from f.
func parseRegalImitateFlags(j *regaltrain.ImitateJob, f regalImitateFlags) error {
	im := &j.Imitation
	var err error
	if im.Objective, err = parseRegalSetFlags(&j.Set, f.Set); err != nil {
		return err
	}
	if j.Out == "" {
		return fail.Usagef("give --out MODEL (the model file to write)")
	}
	if im.Teachers < 1 || im.TeacherEvaluations < 1 || im.Epochs < 1 || im.Targets.Spread < 0 || !(im.LearningRate > 0) {
		return fail.Usagef("--teachers, --teacher-evaluations, --epochs and --lr must be positive, --spread not negative")
	}
	im.Targets.SkipPlacement, im.Targets.SkipPriority = true, true
	for _, g := range strings.Split(f.Genes, ",") {
		switch strings.TrimSpace(g) {
		case "placement":
			im.Targets.SkipPlacement = false
		case "priority":
			im.Targets.SkipPriority = false
		default:
			return fail.Usagef("--genes: %q is not a gene group (placement, priority)", g)
		}
	}
	if err := im.Config.Check(); err != nil {
		return fail.Usagef("%v", err)
	}
	j.Set.Train.Seed = im.Seed // the augmented copies draw from it
	return nil
}
