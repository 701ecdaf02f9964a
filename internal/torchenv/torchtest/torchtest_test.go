package torchtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skip and Fatal instead of
// stopping the goroutine.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = args[0].(string) }
func (r *recorder) Fatal(args ...any) { r.failed = args[0].(string) }

// A python without a module: a skip that names the module and make deps,
// and a failure instead under PLACER_REQUIRE_TORCH=1.
func TestMissingModuleSkipsOrFails(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no %s: %v", py, err)
	}
	t.Setenv("TORCH_PY", py)
	for _, require := range []string{"", "1"} {
		t.Setenv(RequireEnv, require)
		r := &recorder{TB: t}
		if got := Python(r, "placer_no_such_module"); got != "" {
			t.Errorf("require=%q: Python = %q, want \"\"", require, got)
		}
		msg := r.skipped
		if require == "1" {
			msg = r.failed
			if r.skipped != "" {
				t.Errorf("require=1 skipped: %q", r.skipped)
			}
		} else if r.failed != "" {
			t.Errorf("require unset failed: %q", r.failed)
		}
		if !strings.Contains(msg, "placer_no_such_module") || !strings.Contains(msg, "make deps") {
			t.Errorf("require=%q: message %q names neither the module nor make deps", require, msg)
		}
	}
}

// No python at all: every module is missing, torch first.
func TestNoPython(t *testing.T) {
	t.Setenv("TORCH_PY", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv(RequireEnv, "")
	r := &recorder{TB: t}
	Python(r, "transformers")
	if !strings.HasPrefix(r.skipped, "no torch, transformers in ") {
		t.Errorf("skip = %q", r.skipped)
	}
	if want := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "placer", "torch-venv", "bin", "python"); !strings.Contains(r.skipped, want) {
		t.Errorf("skip %q does not say where it looked (%s)", r.skipped, want)
	}
}
