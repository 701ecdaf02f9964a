package torchenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Venv is the virtualenv's folder: the one $TORCH_PY's python lives in
// (DIR/bin/python) when TORCH_PY is set, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/placer/torch-venv; "" when neither
// TORCH_PY, XDG_CACHE_HOME nor HOME says where.
func Venv() string {
	if p := os.Getenv("TORCH_PY"); p != "" {
		return filepath.Dir(filepath.Dir(p))
	}
	return DefaultVenv()
}

// DefaultVenv is where make deps puts the virtualenv when VENV is not
// given: ${XDG_CACHE_HOME:-$HOME/.cache}/placer/torch-venv, "" without
// either variable.
func DefaultVenv() string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "placer", "torch-venv")
}

// Python is the python that runs placer's PyTorch tools: $TORCH_PY, else
// the default virtualenv's bin/python when it exists, else "".
func Python() string {
	if p := os.Getenv("TORCH_PY"); p != "" {
		return p
	}
	if v := DefaultVenv(); v != "" {
		p := filepath.Join(v, "bin", "python")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Where says in words where Python looks, for messages that tell a user
// what to set: "$TORCH_PY (X)" or the default virtualenv's python.
func Where() string {
	if p := os.Getenv("TORCH_PY"); p != "" {
		return "$TORCH_PY (" + p + ")"
	}
	if v := DefaultVenv(); v != "" {
		return filepath.Join(v, "bin", "python") + " (make deps creates it; or set TORCH_PY)"
	}
	return "$TORCH_PY (not set, and no home or XDG_CACHE_HOME for the default virtualenv)"
}

// Missing returns the modules that py cannot import, in the order given
// (all of them when py does not run). One python process checks them
// all.
func Missing(py string, modules ...string) []string {
	if len(modules) == 0 {
		return nil
	}
	// Each import in its own try, so that one missing module names
	// itself and not the first one after it.
	var b strings.Builder
	b.WriteString("import importlib, sys\nbad = []\n")
	for _, m := range modules {
		b.WriteString("try:\n    importlib.import_module(" + quote(m) + ")\nexcept Exception:\n    bad.append(" + quote(m) + ")\n")
	}
	b.WriteString("print(' '.join(bad))\n")
	out, err := exec.Command(py, "-c", b.String()).Output()
	if err != nil {
		return append([]string(nil), modules...)
	}
	return strings.Fields(string(out))
}

// quote writes s as a Python string literal (module names: letters,
// digits, dots and underscores; anything else is escaped).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			b.WriteString("?")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
