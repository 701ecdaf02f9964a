package defaultmodel

import (
	"embed"
	"errors"
	"io/fs"

	"github.com/placer/placer/methods/gdp/policy"
)

//go:embed data
var files embed.FS

// Path is where `make default-model` writes the model, relative to the
// module root.
const Path = "methods/gdp/defaultmodel/data/default.policy"

// ErrMissing is Load's error when this build embeds no default model.
var ErrMissing = errors.New("defaultmodel: no default model in this build: pass --model FILE (placer pretrain --out FILE) or build one with 'make default-model' and rebuild")

// Available reports whether this build embeds a default model.
func Available() bool {
	_, err := fs.Stat(files, "data/default.policy")
	return err == nil
}

// Load returns the embedded default model, or ErrMissing.
func Load() (*policy.Policy, error) {
	f, err := files.Open("data/default.policy")
	if err != nil {
		return nil, ErrMissing
	}
	defer f.Close()
	return policy.Read(f)
}

// HeadPath is where `make default-head` writes go-scored's move head,
// relative to the module root.
const HeadPath = "methods/gdp/defaultmodel/data/default.head"

// ErrNoHead is LoadHead's error when this build embeds no move head.
var ErrNoHead = errors.New("defaultmodel: no default move head in this build: pass --head FILE (placer pretrain --scored --out FILE) or build one with 'make default-head' and rebuild")

// Head returns the embedded default move head's file (gdp.DecodeMoveHead
// reads it), or ErrNoHead.
func Head() ([]byte, error) {
	b, err := files.ReadFile("data/default.head")
	if err != nil {
		return nil, ErrNoHead
	}
	return b, nil
}
