package timed

import (
	"os"
	"testing"
	"time"
)

// Env is the variable that turns the bounds into assertions.
const Env = "PLACER_TEST_TIMED"

// On reports whether the bounds are asserted (PLACER_TEST_TIMED=1).
func On() bool { return os.Getenv(Env) == "1" }

// Bound checks that took, the wall time of what, is at most limit: an
// error under PLACER_TEST_TIMED=1, else a log line with the figure.
func Bound(t testing.TB, what string, took, limit time.Duration) {
	t.Helper()
	if took <= limit {
		t.Logf("timed: %s took %v (at most %v)", what, took.Round(time.Millisecond), limit)
		return
	}
	if On() {
		t.Errorf("timed: %s took %v, over its bound %v", what, took.Round(time.Millisecond), limit)
		return
	}
	t.Logf("timed: %s took %v, over its bound %v (not asserted: %s=1, make bench-timed, asserts it)", what, took.Round(time.Millisecond), limit, Env)
}
