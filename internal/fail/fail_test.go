package fail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestCode: the exit-status rule, by hand.
func TestCode(t *testing.T) {
	for _, tc := range []struct {
		err         error
		interrupted bool
		want        int
	}{
		{nil, false, 0},
		{errors.New("graph: op \"x\": bad"), false, 1},
		{Usagef("--gpus %d: out of range", 0), false, 2},
		{fmt.Errorf("wrapped: %w", Usagef("x")), false, 2},
		{Interrupted{Signal: syscall.SIGTERM}, false, 130},
		{nil, true, 130},
		{errors.New("failed while stopping"), true, 130},
		{context.Canceled, true, 130},
	} {
		if got := Code(tc.err, tc.interrupted); got != tc.want {
			t.Errorf("Code(%v, %v) = %d, want %d", tc.err, tc.interrupted, got, tc.want)
		}
	}
	if !errors.Is(Interrupted{Signal: os.Interrupt}, context.Canceled) {
		t.Error("an interrupted run is not a cancelled one")
	}
}

// TestLine: cobra's multi-line suggestion as one line.
func TestLine(t *testing.T) {
	err := errors.New("unknown command \"serch\" for \"placer\"\n\nDid you mean this?\n\tsearch\n")
	if got, want := Line(err), `unknown command "serch" for "placer"; Did you mean this? search`; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	if got := (Interrupted{Signal: syscall.SIGTERM}).Error(); got != "interrupted by SIGTERM" {
		t.Errorf("%q", got)
	}
}
