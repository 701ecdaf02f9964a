package jobs

// The CLI's REGAL training commands: regal train (RegalTrainJob) and regal
// imitate (RegalImitateJob), from their flags to their reports.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/methods/regal"
	"github.com/placer/placer/optimize"
)

// RegalPoint is one step of REGAL's training (a progress callback's
// argument and a row of RegalTrainReport's curve).
type RegalPoint = regal.Point

// RegalImitation is REGAL's imitation fit: its knobs (seed, teachers,
// epochs, network) are regal imitate's flags.
type RegalImitation = regal.Imitation

// RegalImitationPoint is one epoch of the imitation fit.
type RegalImitationPoint = regal.ImitationPoint

// RegalSetFlags are the training-set flags of regal train and regal
// imitate besides RegalTrainJob's own: the built-in workloads, the tasks
// and the objective.
type RegalSetFlags struct {
	Workloads string // comma-separated
	Tasks     string // comma-separated tasks
	Objective string
}

// parseSetFlags checks the flags, fills j's workloads and tasks, and
// returns the objective.
func (j *RegalTrainJob) parseSetFlags(f RegalSetFlags) (Objective, error) {
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

// RegalTrainFlags are regal train's flags besides RegalTrainJob's own.
type RegalTrainFlags struct {
	Set  RegalSetFlags
	Init string // --init: the model file to start from ("" = a new network)
	Out  string // --out: the model file to write (the checkpoint)
	// ListCells (--list-cells) and Cell (--cell: an index, "all", or ""
	// = the array index of ArrayIndexVars when one is set, else all) run
	// the training in rounds as cells; Stdout receives the list; Getenv
	// reads the environment (nil = os.Getenv).
	ListCells bool
	Cell      string
	Stdout    io.Writer
	Getenv    func(string) string
}

// ParseFlags checks j as regal train's flags give it, fills its
// objective, starting model and checkpoint from f, and turns the flags'
// conventions into Train's (--entropy 0 is none, --checkpoint-every 0
// only on stop and at the end).
func (j *RegalTrainJob) ParseFlags(f RegalTrainFlags) error {
	var err error
	if j.Train.Objective, err = j.parseSetFlags(f.Set); err != nil {
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
	return j.parseRounds(f)
}

// parseRounds checks --workers, --rounds, --lease, --list-cells and
// --cell (or the array index a cluster gives a task): in rounds, the
// cells are the steps.
func (j *RegalTrainJob) parseRounds(f RegalTrainFlags) error {
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
	j.OneCell, j.Cell, err = roundsCell(cell, f.Getenv, t.Steps, "step")
	return err
}

// RegalTrainReport is what `placer regal train` prints.
type RegalTrainReport struct {
	Model     string             `json:"model"`
	Objective string             `json:"objective"`
	Seed      uint64             `json:"seed"`
	Steps     int                `json:"steps"`
	Elapsed   float64            `json:"elapsed_s"`
	Status    string             `json:"status"`
	Uniform   map[string]float64 `json:"uniform_brkga_objective"`
	Curve     []RegalPoint       `json:"curve"`
}

// RunReport trains (Run) and reports the model written to
// Train.Checkpoint. It returns nil when nothing was trained (the error
// says why); a run stopped by ctx returns its report with ctx's error.
//
// With ListCells it lists the cells and returns nil, nil; a cell that
// did not end the last round reports no model (Model "") and says so in
// Status.
func (j *RegalTrainJob) RunReport(ctx context.Context) (*RegalTrainReport, error) {
	if j.ListCells != nil {
		return nil, j.listCells()
	}
	r, err := j.Run(ctx)
	if r == nil {
		return nil, err
	}
	if j.Workers > 0 && r.Model == nil && err == nil && ctx.Err() == nil {
		return &RegalTrainReport{Objective: j.Train.Objective.String(), Seed: r.Seed, Steps: r.Step, Elapsed: r.Elapsed.Seconds(), Uniform: r.Uniform, Curve: r.Curve,
			Status: fmt.Sprintf("cell %d kept; %d of %d steps in finished rounds, the model is the last round's cell's to write", j.Cell, r.Step, j.Train.Steps)}, nil
	}
	if j.Workers > 0 && r.Model == nil {
		// Stopped: the rounds folder holds what was done.
		return nil, cmp.Or(err, ctx.Err())
	}
	rep := &RegalTrainReport{Model: j.Train.Checkpoint, Objective: j.Train.Objective.String(), Seed: r.Seed, Steps: r.Step, Elapsed: r.Elapsed.Seconds(),
		Status: r.Status.String(), Uniform: r.Uniform, Curve: r.Curve}
	if err == nil {
		err = ctx.Err()
	}
	return rep, err
}

// RegalImitateJob is regal imitate: REGAL's network fitted to the genes
// of long BRKGA runs on a training set built as regal train builds it.
type RegalImitateJob struct {
	// Set is the training set (its Train is unused but for the seed,
	// Imitation's, that the augmented copies draw from). Its Progress
	// also gets a line when the teachers start.
	Set       RegalTrainJob
	Imitation RegalImitation
	Out       string // the model file to write
}

// RegalImitateFlags are regal imitate's flags besides RegalImitateJob's
// own.
type RegalImitateFlags struct {
	Set   RegalSetFlags
	Genes string // --genes: the gene groups imitated, placement and/or priority
}

// ParseFlags checks j as regal imitate's flags give it and fills its
// objective and targets from f.
func (j *RegalImitateJob) ParseFlags(f RegalImitateFlags) error {
	im := &j.Imitation
	var err error
	if im.Objective, err = j.Set.parseSetFlags(f.Set); err != nil {
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

// RegalImitateReport is what `placer regal imitate` prints.
type RegalImitateReport struct {
	Model              string                `json:"model"`
	Objective          string                `json:"objective"`
	Seed               uint64                `json:"seed"`
	Teachers           int                   `json:"teachers"`
	TeacherEvaluations int                   `json:"teacher_evaluations"`
	TeacherSeconds     float64               `json:"teacher_s"`
	TeacherAgreement   float64               `json:"teacher_agreement"`
	FitSeconds         float64               `json:"fit_s"`
	Status             string                `json:"status"`
	Teacher            map[string]float64    `json:"teacher_objective"`
	Curve              []RegalImitationPoint `json:"curve"`
}

// Run builds the training set, runs the teachers, fits the network and
// writes the model to Out. It returns nil when no model was written (the
// error says why, ctx's when stopped before the fit began); a run stopped
// during the fit writes what it fitted and returns its report with ctx's
// error.
func (j *RegalImitateJob) Run(ctx context.Context) (*RegalImitateReport, error) {
	gs, err := j.Set.Graphs()
	if err != nil {
		return nil, err
	}
	im := &j.Imitation
	im.Graphs = gs
	if j.Set.Progress != nil {
		fmt.Fprintf(j.Set.Progress, "regal imitate: %d graphs x %d teachers at %d evaluations\n", len(gs), im.Teachers, im.TeacherEvaluations)
	}
	r, err := im.Run(ctx)
	if r == nil {
		return nil, err
	}
	if len(r.Curve) == 0 { // stopped during the teachers: nothing fitted
		return nil, ctx.Err()
	}
	if err := r.Model.Save(j.Out); err != nil {
		return nil, err
	}
	rep := &RegalImitateReport{Model: j.Out, Objective: im.Objective.String(), Seed: im.Seed, Teachers: im.Teachers,
		TeacherEvaluations: im.TeacherEvaluations, TeacherSeconds: r.TeacherTime.Seconds(), TeacherAgreement: r.Agreement, FitSeconds: r.FitTime.Seconds(),
		Status: r.Status.String(), Teacher: r.Teacher, Curve: r.Curve}
	if err == nil {
		err = ctx.Err()
	}
	return rep, err
}
