package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/internal/atomicfile"
)

// Result is what placer profile measured and where it went.
type Result struct {
	// Profile is what was measured (nil: nothing, nothing written).
	*profile.Profile
	// Path is the file written: the --out file, or beside it FILE.partial
	// (saveProfile); "" where nothing was.
	Path string
	// Kept says, for a run stopped by a signal, what it kept and where.
	Kept string
}

// PartialPath is where an incomplete profile goes when the --out file
// out is there already and --force is not given.
func PartialPath(out string) string { return out + ".partial" }

// saveProfile writes data, a profile (complete or not), for the --out
// file out, whole (a temporary file beside it, renamed into place), and
// returns the path written: out, unless the profile is incomplete, out
// exists and force is false: then PartialPath(out), out left as it was.
// An interrupted, budget-cut or failed run so keeps what it measured
// without replacing a profile that may hold more (a typo's re-run, cut
// short, once replaced an 11 KB complete profile with one of no layer).
func saveProfile(out string, data []byte, complete, force bool) (string, error) {
	path := out
	if !complete && !force {
		if _, err := os.Stat(out); err == nil {
			path = PartialPath(out)
		}
	}
	return path, atomicfile.WriteBytes(path, data)
}

// outcome is how the measurements ended, beside what they sent.
type outcome struct {
	interrupted bool
	ctxErr      error  // the cancellation's (a signal), where interrupted
	werr        error  // the measurements' exit
	timedOut    string // why placer's own limit stopped them ("": it did not)
	failure     string // their failure in one line ("": none)
}

// nothing is the end of a run that measured nothing: nothing written.
func (r outcome) nothing() (*Result, error) {
	switch {
	case r.interrupted:
		return &Result{Kept: "nothing measured yet, nothing written"}, r.ctxErr
	case r.failure != "":
		return nil, fmt.Errorf("profile: the measurements failed: %s; nothing measured, nothing written", r.failure)
	case r.timedOut != "":
		return nil, fmt.Errorf("profile: %s before anything was measured; nothing written", r.timedOut)
	}
	return nil, errors.New("profile: the measurements sent nothing; nothing written")
}

// saved is the end of a run whose profile run.Path holds (written for
// the --out file out): on an interruption its Kept and the
// cancellation's error, on a failure or placer's limit an error saying
// where what was measured went; else nil, a line on progress saying so
// where the profile went beside out.
func (r outcome) saved(run *Result, out string, progress io.Writer) (*Result, error) {
	where := run.Path
	if missing := run.Missing(); len(missing) > 0 {
		where += " (complete false; not measured: " + strings.Join(missing, ", ") + ")"
	}
	if run.Path != out {
		where += "; " + out + " is left as it was (--force replaces it)"
	}
	switch {
	case r.interrupted:
		run.Kept = "what was measured written to " + where
		return run, r.ctxErr
	case r.failure != "":
		return run, fmt.Errorf("profile: the measurements failed: %s; what they measured is in %s", r.failure, where)
	case r.timedOut != "":
		return run, fmt.Errorf("profile: %s; what was measured is in %s", r.timedOut, where)
	}
	if run.Path != out && progress != nil {
		fmt.Fprintf(progress, "placer: the budget was spent before the last shape: written to %s\n", where)
	}
	return run, nil
}

// crowded is a warning where a CPU profile's processes (d.Count of
// d.Threads threads each) are more than the cores the run may use: "" where
// they fit or d is a GPU's.
func crowded(d profile.Device, cores int) string {
	if d.Kind != "cpu" || d.Count*max(1, d.Threads) <= cores {
		return ""
	}
	return fmt.Sprintf("%d processes x %d thread(s) on %d cores: they take turns on the cores, so every time measured includes the scheduler's time slices and is slower than %d processes would take on cores of their own; plans priced from this profile hold for runs as crowded (--procs %d fits the cores)",
		d.Count, max(1, d.Threads), cores, d.Count, max(1, cores/max(1, d.Threads)))
}

// pyStderr passes the measurements' standard error on to w line by line,
// but a Python traceback: from its first line ("Traceback (most recent
// call last):") on, nothing more is passed. Everything is kept (the last
// MiB), for the log file failure names.
type pyStderr struct {
	lineWriter
	w       io.Writer
	all     []byte
	inTrace bool
	last    string // the trace's last line that says something: its exception
}

const traceStart = "Traceback (most recent call last):"

// newPyStderr is a pyStderr passing lines on to w (nil: none).
func newPyStderr(w io.Writer) *pyStderr {
	p := &pyStderr{w: w}
	p.lineWriter.line = p.line
	return p
}

func (p *pyStderr) line(l []byte) {
	p.all = append(p.all, l...)
	if len(p.all) > 2<<20 {
		p.all = append([]byte(nil), p.all[len(p.all)-1<<20:]...)
	}
	s := strings.TrimRight(string(l), "\r\n")
	if strings.HasPrefix(strings.TrimSpace(s), traceStart) {
		p.inTrace = true
	}
	if !p.inTrace {
		if p.w != nil {
			p.w.Write(l)
		}
		return
	}
	if meaningful(s) {
		p.last = strings.TrimSpace(s)
	}
}

// meaningful is whether s, a line of a Python traceback, is its
// exception's: not empty, not indented (a frame, its source, its
// carets), not a traceback's own heading (mp.spawn's "-- Process 0
// terminated with the following error:" among them) and not a
// re-raised exception that only says another process failed.
func meaningful(s string) bool {
	if strings.TrimSpace(s) == "" || s[0] == ' ' || s[0] == '\t' {
		return false
	}
	for _, h := range []string{traceStart, "During handling of the above exception", "The above exception was the direct cause",
		"-- Process ", "torch.multiprocessing.spawn.ProcessRaisedException"} {
		if strings.HasPrefix(s, h) {
			return false
		}
	}
	return true
}

// failure is the measurements' failure in one line (werr: their exit):
// a traceback's exception with the log file its whole text was written
// to, else the exit.
func (p *pyStderr) failure(werr error) string {
	if !p.inTrace {
		return fmt.Sprintf("%v", werr)
	}
	why := p.last
	if why == "" {
		why = fmt.Sprintf("a Python traceback (%v)", werr)
	}
	f, err := os.CreateTemp("", "placer-profile-*.log")
	if err != nil {
		return why
	}
	defer f.Close()
	if _, err := f.Write(p.all); err != nil {
		return why
	}
	return fmt.Sprintf("%s (the whole trace: %s)", why, f.Name())
}

// lineWriter is an io.Writer that hands each line written to it, its
// "\n" kept, to line once it is whole (the measurements write their
// standard error in pieces of any length); flush hands on a last line
// left without one, a "\n" added.
type lineWriter struct {
	buf  []byte // a line not yet ended
	line func(l []byte)
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(w.buf[:i+1])
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}

func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.line(append(w.buf, '\n'))
		w.buf = nil
	}
}
