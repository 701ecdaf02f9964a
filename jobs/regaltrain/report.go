package regaltrain

// REGAL's training jobs as the CLI reports them: regal train
// (Job.RunReport) and regal imitate (ImitateJob).

import (
	"cmp"
	"context"
	"fmt"

	"github.com/placer/placer/methods/regal"
)

// Report is what `placer regal train` prints.
type Report struct {
	Model     string             `json:"model"`
	Objective string             `json:"objective"`
	Seed      uint64             `json:"seed"`
	Steps     int                `json:"steps"`
	Elapsed   float64            `json:"elapsed_s"`
	Status    string             `json:"status"`
	Uniform   map[string]float64 `json:"uniform_brkga_objective"`
	Curve     []regal.Point      `json:"curve"`
}

// RunReport trains (Run) and reports the model written to
// Train.Checkpoint. It returns nil when nothing was trained (the error
// says why); a run stopped by ctx returns its report with ctx's error.
//
// With ListCells it lists the cells and returns nil, nil; a cell that
// did not end the last round reports no model (Model "") and says so in
// Status.
func (j *Job) RunReport(ctx context.Context) (*Report, error) {
	if j.ListCells != nil {
		return nil, j.listCells()
	}
	r, err := j.Run(ctx)
	if r == nil {
		return nil, err
	}
	if j.Workers > 0 && r.Model == nil && err == nil && ctx.Err() == nil {
		return &Report{Objective: j.Train.Objective.String(), Seed: r.Seed, Steps: r.Step, Elapsed: r.Elapsed.Seconds(), Uniform: r.Uniform, Curve: r.Curve,
			Status: fmt.Sprintf("cell %d kept; %d of %d steps in finished rounds, the model is the last round's cell's to write", j.Cell, r.Step, j.Train.Steps)}, nil
	}
	if j.Workers > 0 && r.Model == nil {
		// Stopped: the rounds folder holds what was done.
		return nil, cmp.Or(err, ctx.Err())
	}
	rep := &Report{Model: j.Train.Checkpoint, Objective: j.Train.Objective.String(), Seed: r.Seed, Steps: r.Step, Elapsed: r.Elapsed.Seconds(),
		Status: r.Status.String(), Uniform: r.Uniform, Curve: r.Curve}
	if err == nil {
		err = ctx.Err()
	}
	return rep, err
}

// ImitateJob is regal imitate: REGAL's network fitted to the genes
// of long BRKGA runs on a training set built as regal train builds it.
type ImitateJob struct {
	// Set is the training set (its Train is unused but for the seed,
	// Imitation's, that the augmented copies draw from). Its Progress
	// also gets a line when the teachers start.
	Set       Job
	Imitation regal.Imitation
	Out       string // the model file to write
}

// ImitateReport is what `placer regal imitate` prints.
type ImitateReport struct {
	Model              string                 `json:"model"`
	Objective          string                 `json:"objective"`
	Seed               uint64                 `json:"seed"`
	Teachers           int                    `json:"teachers"`
	TeacherEvaluations int                    `json:"teacher_evaluations"`
	TeacherSeconds     float64                `json:"teacher_s"`
	TeacherAgreement   float64                `json:"teacher_agreement"`
	FitSeconds         float64                `json:"fit_s"`
	Status             string                 `json:"status"`
	Teacher            map[string]float64     `json:"teacher_objective"`
	Curve              []regal.ImitationPoint `json:"curve"`
}

// Run builds the training set, runs the teachers, fits the network and
// writes the model to Out. It returns nil when no model was written (the
// error says why, ctx's when stopped before the fit began); a run stopped
// during the fit writes what it fitted and returns its report with ctx's
// error.
func (j *ImitateJob) Run(ctx context.Context) (*ImitateReport, error) {
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
	rep := &ImitateReport{Model: j.Out, Objective: im.Objective.String(), Seed: im.Seed, Teachers: im.Teachers,
		TeacherEvaluations: im.TeacherEvaluations, TeacherSeconds: r.TeacherTime.Seconds(), TeacherAgreement: r.Agreement, FitSeconds: r.FitTime.Seconds(),
		Status: r.Status.String(), Teacher: r.Teacher, Curve: r.Curve}
	if err == nil {
		err = ctx.Err()
	}
	return rep, err
}
