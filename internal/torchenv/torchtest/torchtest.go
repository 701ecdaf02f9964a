package torchtest

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/placer/placer/internal/torchenv"
)

// RequireEnv is the variable that turns a skip into a failure.
const RequireEnv = "PLACER_REQUIRE_TORCH"

var (
	mu      sync.Mutex
	checked = map[string][]string{} // python + modules -> missing
)

// Python returns the torch python when it imports torch and modules;
// otherwise it skips t (fails it when $PLACER_REQUIRE_TORCH is 1) with
// what is missing and how to install it.
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	py := torchenv.Python()
	mods := append([]string{"torch"}, modules...)
	var missing []string
	if py == "" {
		missing = mods
	} else {
		key := py + "\x00" + strings.Join(mods, " ")
		mu.Lock()
		m, ok := checked[key]
		if !ok {
			m = torchenv.Missing(py, mods...)
			checked[key] = m
		}
		mu.Unlock()
		missing = m
	}
	if len(missing) == 0 {
		return py
	}
	msg := "no " + strings.Join(missing, ", ") + " in " + torchenv.Where() + ": make deps installs it"
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg + " ($" + RequireEnv + "=1: make test requires it)")
		return ""
	}
	t.Skip(msg)
	return ""
}
