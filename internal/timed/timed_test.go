package timed

import (
	"testing"
	"time"
)

// recorder is a testing.TB that keeps what Bound says.
type recorder struct {
	testing.TB
	errors, logs int
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.errors++ }
func (r *recorder) Logf(string, ...any)   { r.logs++ }

func TestBound(t *testing.T) {
	for _, tc := range []struct {
		env        string
		took       time.Duration
		errs, logs int
	}{
		{"", time.Second, 0, 1},
		{"", 3 * time.Second, 0, 1},
		{"1", time.Second, 0, 1},
		{"1", 3 * time.Second, 1, 0},
		{"0", 3 * time.Second, 0, 1},
	} {
		t.Setenv(Env, tc.env)
		r := &recorder{TB: t}
		Bound(r, "x", tc.took, 2*time.Second)
		if r.errors != tc.errs || r.logs != tc.logs {
			t.Errorf("%s=%q, %v against 2s: %d errors and %d logs, want %d and %d", Env, tc.env, tc.took, r.errors, r.logs, tc.errs, tc.logs)
		}
	}
}
