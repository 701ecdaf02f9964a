package fail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Exit statuses.
const (
	OK          = 0
	Failed      = 1   // bad input data or a failed run
	UsageStatus = 2   // the command line is wrong
	Interrupt   = 130 // stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report Ctrl-C)
)

// Usage marks a mistake in how the command was called: an unknown flag or
// command, a flag value out of its range, a name (workload, preset,
// format, topology, method) that does not exist.
type Usage struct{ Err error }

func (e Usage) Error() string { return e.Err.Error() }
func (e Usage) Unwrap() error { return e.Err }

// Usagef makes a Usage error.
func Usagef(format string, a ...any) error { return Usage{fmt.Errorf(format, a...)} }

// AsUsage marks err as a usage error (nil stays nil).
func AsUsage(err error) error {
	if err == nil {
		return nil
	}
	return Usage{err}
}

// Interrupted is the cause of a context cancelled by a signal.
type Interrupted struct{ Signal os.Signal }

func (e Interrupted) Error() string { return "interrupted by " + SignalName(e.Signal) }

// Is makes errors.Is(Interrupted{...}, context.Canceled) true: an
// interrupted run is a cancelled one.
func (e Interrupted) Is(target error) bool { return target == context.Canceled }

// SignalName is "SIGINT", "SIGTERM", ...
func SignalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case nil:
		return "a signal"
	}
	return strings.ToUpper(s.String())
}

// Code is the exit status for err, given whether the run was interrupted
// by a signal: 0 for nil (and not interrupted), 130 when interrupted, 2
// for a Usage error, 1 otherwise.
func Code(err error, interrupted bool) int {
	var u Usage
	switch {
	case interrupted:
		return Interrupt
	case err == nil:
		return OK
	case errors.As(err, &u):
		return UsageStatus
	case errors.As(err, new(Interrupted)):
		return Interrupt
	}
	return Failed
}

// Line is err's message as one line: a multi-line message (cobra's "did
// you mean" suggestions) is joined with "; ".
func Line(err error) string {
	var parts []string
	for _, l := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	s := strings.Join(parts, "; ")
	s = strings.ReplaceAll(s, "?;", "?")
	return s
}
