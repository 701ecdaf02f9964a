// Package defaultmodel embeds the default REGAL model that the methods
// regal and regal-zero-shot use when none is given. The file is
// data/default.regal, written by `make regal-model`; a build without it
// has no default model and Load says how to get one.
package defaultmodel

import (
	"embed"
	"errors"
	"io/fs"
	"sync"

	"github.com/placer/placer/regal"
)

//go:embed data
var files embed.FS

// Path is where `make regal-model` writes the model, relative to the
// module root.
const Path = "regal/defaultmodel/data/default.regal"

// ErrMissing is Load's error when this build embeds no default model.
var ErrMissing = errors.New("no default REGAL model in this build: build one with 'make regal-model' and rebuild")

// Available reports whether this build embeds a default model.
func Available() bool {
	_, err := fs.Stat(files, "data/default.regal")
	return err == nil
}

var load = sync.OnceValues(func() (*regal.Model, error) {
	f, err := files.Open("data/default.regal")
	if err != nil {
		return nil, ErrMissing
	}
	defer f.Close()
	return regal.Read(f)
})

// Load returns the embedded default model (read once; callers must not
// modify it), or ErrMissing.
func Load() (*regal.Model, error) { return load() }
