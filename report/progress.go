package report

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress shows a long run's progress on a stream (stderr): a bar that
// redraws itself on a terminal; on anything else (a log file, a pipe) one
// plain line at the first step and then at most every PlainEvery, so that
// no carriage-return frames end up in logs.
type Progress struct {
	bar *progressbar.ProgressBar

	// plain mode
	w           io.Writer
	what        string
	total       int
	unit        string // what steps count ("" = steps)
	last        time.Time
	step        int
	desc        string
	wroteLatest bool
}

// PlainEvery is how often a plain (non-terminal) progress writes a line.
var PlainEvery = 10 * time.Second

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewProgress starts a bar of total steps (-1 = unknown) on w.
func NewProgress(w io.Writer, total int, what string) *Progress {
	if !isTerminal(w) {
		return &Progress{w: w, what: what, total: total}
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)
	return &Progress{bar: bar, total: total}
}

// Step advances the bar to step and shows desc beside it.
func (p *Progress) Step(step int, desc string) {
	if p.bar == nil {
		p.step, p.desc, p.wroteLatest = step, desc, false
		if now := time.Now(); p.last.IsZero() || now.Sub(p.last) >= PlainEvery {
			p.line()
			p.last = now
		}
		return
	}
	p.bar.Describe(desc)
	p.bar.Set(step)
}

// StepIn advances the bar to done of total counted in unit
// ("evaluations", "CPU s": a search's budget, which may change unit when
// another limit binds first) and shows desc beside it.
func (p *Progress) StepIn(done, total int, unit, desc string) {
	if p.bar == nil {
		p.total, p.unit = total, unit
		p.Step(done, desc)
		return
	}
	if total != p.total && total > 0 {
		p.total = total
		p.bar.ChangeMax(total)
	}
	p.Step(done, unit+": "+desc)
}

func (p *Progress) line() {
	of := ""
	if p.total > 0 {
		of = fmt.Sprintf("/%d", p.total)
	}
	if p.unit != "" {
		fmt.Fprintf(p.w, "%s: %d%s %s: %s\n", p.what, p.step, of, p.unit, p.desc)
	} else {
		fmt.Fprintf(p.w, "%s: step %d%s: %s\n", p.what, p.step, of, p.desc)
	}
	p.wroteLatest = true
}

// Finish clears the bar; in plain mode it writes the last step's line if
// it was not written yet.
func (p *Progress) Finish() {
	if p.bar == nil {
		if !p.wroteLatest && !p.last.IsZero() {
			p.line()
		}
		return
	}
	p.bar.Finish()
}
