package defaultmodel

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"

	"github.com/placer/placer/methods/regal"
	"github.com/placer/placer/optimize"
)

//go:embed data
var files embed.FS

// Path is where `make regal-model` writes the step-time model, relative to
// the module root.
const Path = "methods/regal/defaultmodel/data/default.regal"

// PathFor is where the default model for objective o lives, relative to
// the module root ("" for an objective without one).
func PathFor(o optimize.Objective) string {
	if f := fileFor(o); f != "" {
		return "methods/regal/defaultmodel/data/" + f
	}
	return ""
}

// fileFor is o's file name under data/, and target the make target that
// writes it.
func fileFor(o optimize.Objective) string {
	file, _ := filesFor(o)
	return file
}

func filesFor(o optimize.Objective) (file, target string) {
	switch o {
	case optimize.StepTime:
		return "default.regal", "regal-model"
	case optimize.PeakMemory:
		return "peak-memory.regal", "regal-model-memory"
	}
	return "", ""
}

// ErrMissing is what LoadFor's error wraps when this build embeds no
// default model for the objective.
var ErrMissing = errors.New("defaultmodel: no default REGAL model in this build")

// Available reports whether this build embeds the step-time default model.
func Available() bool { return AvailableFor(optimize.StepTime) }

// AvailableFor reports whether this build embeds a default model for o.
func AvailableFor(o optimize.Objective) bool {
	f := fileFor(o)
	if f == "" {
		return false
	}
	_, err := fs.Stat(files, path.Join("data", f))
	return err == nil
}

var loads = map[optimize.Objective]func() (*regal.Model, error){}

func init() {
	for _, o := range optimize.Objectives {
		loads[o] = sync.OnceValues(func() (*regal.Model, error) { return load(o) })
	}
}

func load(o optimize.Objective) (*regal.Model, error) {
	file, target := filesFor(o)
	data, err := files.ReadFile(path.Join("data", file))
	if err != nil {
		return nil, fmt.Errorf("%w for %s: build one with 'make %s' and rebuild", ErrMissing, o, target)
	}
	m, err := regal.ReadNamed(bytes.NewReader(data), PathFor(o))
	if err != nil {
		return nil, err
	}
	if m.Objective != o {
		return nil, fmt.Errorf("regal: %s was trained for %s, want %s", PathFor(o), m.Objective, o)
	}
	return m, nil
}

// LoadFor returns the embedded default model trained for objective o
// (read once; callers must not modify it), or an error wrapping
// ErrMissing that names the make target which builds it.
func LoadFor(o optimize.Objective) (*regal.Model, error) {
	l, ok := loads[o]
	if !ok {
		return nil, fmt.Errorf("regal: no default model for %s", o)
	}
	return l()
}

// SHA256For is the hex sha256 of the embedded default model file for o
// ("" when there is none): what a kept result names as the model it ran
// with, so that a rebuilt model runs the result again.
func SHA256For(o optimize.Objective) string {
	f := fileFor(o)
	if f == "" {
		return ""
	}
	data, err := files.ReadFile(path.Join("data", f))
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
