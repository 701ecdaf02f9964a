package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/report"
)

// lazyBar is a progress bar on stderr, started on its first step (when the
// run knows its total).
type lazyBar struct {
	w    io.Writer
	what string
	unit string // what the steps count ("" = steps)
	bar  *report.Progress
}

// step moves the bar to step of total (0 = unknown) with desc beside it.
func (l *lazyBar) step(total, step int, desc string) {
	if l.bar == nil {
		if total == 0 {
			total = -1
		}
		l.bar = report.NewProgress(l.w, total, l.what)
	}
	if l.unit != "" {
		l.bar.StepIn(step, total, l.unit, desc)
		return
	}
	l.bar.Step(step, desc)
}

// finish clears the bar if it was started.
func (l *lazyBar) finish() {
	if l.bar != nil {
		l.bar.Finish()
	}
}

// warnOOM says plainly, before a result's summary, when the best decision
// found does not fit in device memory.
func warnOOM(s *streams, oom bool) {
	if oom {
		w, flush := report.FitLines(s.Out)
		defer flush()
		fmt.Fprintln(w, "NOTHING FITS: no decision found fits in device memory; the result below is the best out-of-memory one (more GPUs, --memory, or a smaller graph)")
	}
}

// errNothingFits is the error (exit 1: the run failed, the README's
// rule) of an op-level search, inference or fine-tuning whose best
// decision runs out of device memory, as "no plan fits" is at cluster
// scale: its table, summary and out-of-memory result are still printed
// and written (marked oom), so what came closest can be read.
var errNothingFits = errors.New("nothing fits: no decision found fits in device memory (more GPUs, --memory, or a smaller graph)")

// oomFails is err, or errNothingFits where the run ended without error
// (or interrupted: its own status stands) with an out-of-memory best.
func oomFails(err error, oom bool) error {
	if err == nil && oom {
		return errNothingFits
	}
	return err
}

// progressTo is where a command's progress goes: stderr, or nowhere with
// -q.
func progressTo(s *streams, quiet bool) io.Writer {
	if quiet {
		return io.Discard
	}
	return s.Err
}

// plural is "1 step", "2 steps".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// keptResult is streams.kept for a run that writes a result file.
func keptResult(what, out string, have bool) string {
	switch {
	case !have:
		return "nothing found yet, nothing written"
	case out != "":
		return what + " so far written to " + out
	}
	return what + " so far printed on standard output"
}

// searchStep describes a search step for a progress bar: the best step
// time so far against the reference, the rollout's mean reward and the
// evaluation rate.
func searchStep(pt gdp.Point, ref float64) string {
	best := "best -"
	if pt.BestStep > 0 {
		// ref is in the objective's units, as pt.Best (pt.BestStep for
		// curves without it).
		v := pt.Best
		if v <= 0 {
			v = pt.BestStep
		}
		best = fmt.Sprintf("best %s (%.2fx ref)", report.Seconds(pt.BestStep), ref/v)
	}
	rate := 0.0
	if pt.Elapsed > 0 {
		rate = float64(pt.Evaluations) / pt.Elapsed
	}
	return fmt.Sprintf("%s reward %.3f %.1f eval/s", best, pt.MeanReward, rate)
}

// pretrainStep describes a pre-training step for a progress bar.
func pretrainStep(pt gdp.PretrainPoint) string {
	switch pt.Phase {
	case "ppo":
		return fmt.Sprintf("%s reward %.3f (best %.3f, %.0f%% valid)", pt.Graph, pt.MeanReward, pt.BestReward, 100*pt.Valid)
	}
	return fmt.Sprintf("%s imitate log-lik %.3f", pt.Graph, pt.LogProb)
}

// phaseBars shows one progress bar per phase of a run of several phases;
// a progress line written through it clears the current bar first.
type phaseBars struct {
	w   io.Writer
	key string
	bar *lazyBar
}

// Write implements io.Writer for progress lines.
func (p *phaseBars) Write(b []byte) (int, error) {
	p.finish()
	return p.w.Write(b)
}

// step moves phase's bar (a new one when the phase changed).
func (p *phaseBars) step(phase string, total, step int, desc string) {
	if phase != p.key {
		p.finish()
		p.key, p.bar = phase, &lazyBar{w: p.w, what: phase}
	}
	p.bar.step(total, step, desc)
}

// finish clears the current bar.
func (p *phaseBars) finish() {
	if p.bar != nil {
		p.bar.finish()
		p.key, p.bar = "", nil
	}
}

// emit prints a long run's report, as JSON or with write, and passes on
// the run's error: a cancelled run (Ctrl-C, SIGTERM) still prints what it
// has, unless it has nothing (empty).
func emit(s *streams, asJSON bool, rep any, write func() error, err error, empty ...bool) error {
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if err != nil && len(empty) > 0 && empty[0] {
		return err
	}
	if asJSON {
		if jerr := report.JSON(s.Out, rep); jerr != nil {
			return jerr
		}
		return err
	}
	if werr := write(); werr != nil {
		return werr
	}
	return err
}
