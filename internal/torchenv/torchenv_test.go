package torchenv

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The rule, case by case: TORCH_PY first, then XDG_CACHE_HOME, then
// HOME/.cache; the Makefile's VENV default is the same path.
func TestVenvRule(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name                 string
		torchPy, xdg, home   string
		wantVenv, wantDefVen string
	}{
		{"home only", "", "", "/h", "/h/.cache/placer/torch-venv", "/h/.cache/placer/torch-venv"},
		{"xdg wins over home", "", "/x", "/h", "/x/placer/torch-venv", "/x/placer/torch-venv"},
		{"TORCH_PY wins", "/v/bin/python", "/x", "/h", "/v", "/x/placer/torch-venv"},
		{"nothing set", "", "", "", "", ""},
		{"fresh folder", "", dir, "/h", filepath.Join(dir, "placer", "torch-venv"), filepath.Join(dir, "placer", "torch-venv")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("TORCH_PY", c.torchPy)
			t.Setenv("XDG_CACHE_HOME", c.xdg)
			t.Setenv("HOME", c.home)
			if got := Venv(); got != c.wantVenv {
				t.Errorf("Venv() = %q, want %q", got, c.wantVenv)
			}
			if got := DefaultVenv(); got != c.wantDefVen {
				t.Errorf("DefaultVenv() = %q, want %q", got, c.wantDefVen)
			}
		})
	}
}

// Python is "" where the default virtualenv does not exist, and its
// bin/python once it does; TORCH_PY is taken as given.
func TestPython(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("TORCH_PY", "")
	t.Setenv("XDG_CACHE_HOME", xdg)
	if got := Python(); got != "" {
		t.Fatalf("Python() with no virtualenv = %q, want \"\"", got)
	}
	bin := filepath.Join(xdg, "placer", "torch-venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(bin, "python")
	if err := os.WriteFile(py, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Python(); got != py {
		t.Fatalf("Python() = %q, want %q", got, py)
	}
	t.Setenv("TORCH_PY", "/elsewhere/python")
	if got := Python(); got != "/elsewhere/python" {
		t.Fatalf("Python() with TORCH_PY = %q", got)
	}
}

// Missing names exactly the modules a real python cannot import, in
// order, and all of them when the python does not run.
func TestMissing(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no %s: %v", py, err)
	}
	got := Missing(py, "json", "placer_no_such_module", "os.path", "no_such_either")
	if want := []string{"placer_no_such_module", "no_such_either"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Missing = %q, want %q", got, want)
	}
	if got := Missing(py, "json"); len(got) != 0 {
		t.Errorf("Missing(json) = %q, want none", got)
	}
	if got := Missing(filepath.Join(t.TempDir(), "no-python"), "json", "os"); !reflect.DeepEqual(got, []string{"json", "os"}) {
		t.Errorf("Missing with no python = %q, want both", got)
	}
	if got := Missing(py, "it's"); !reflect.DeepEqual(got, []string{"it's"}) {
		t.Errorf("Missing(it's) = %q: a quote must not break the script", got)
	}
}
