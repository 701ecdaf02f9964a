package iopaths

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/placer/placer/internal/fail"
)

// Path is a file a command reads or writes and the flag that names it.
// Given is what the flag's value spells (hf:q2.json:seq=8192 for the file
// q2.json), for the error line; empty when it is Path itself.
type Path struct {
	Flag, Path, Given string
	// Folder: an output folder the command fills (--rows, --plot-dir):
	// no other output may be in it.
	Folder bool
}

func (p Path) given() string {
	if p.Given != "" {
		return p.Given
	}
	return p.Path
}

// Check is a usage error (exit 2) naming the first output of outputs that
// is the same file as an input of inputs (Same), or the first two
// outputs on one path (checkOutputs), nil when none is.
func Check(inputs, outputs []Path) error {
	for _, out := range outputs {
		for _, in := range inputs {
			if in.Path == "" || out.Path == "" || in.Path == "-" || out.Path == "-" {
				continue
			}
			if same, how := Same(in.Path, out.Path); same {
				return fail.Usagef("--%s %s would overwrite --%s's input %s%s: an output is never an input (name another file for --%s)",
					out.Flag, out.given(), in.Flag, in.given(), how, out.Flag)
			}
		}
	}
	return checkOutputs(outputs)
}

// checkOutputs is a usage error naming the first two outputs that share
// a path: one file through any spelling or link, both "-"
// (standard output), or a file or folder inside an output folder.
func checkOutputs(outputs []Path) error {
	for i, a := range outputs {
		for _, b := range outputs[i+1:] {
			if a.Path == "" || b.Path == "" || (a.Path == "-") != (b.Path == "-") {
				continue
			}
			if a.Path == "-" {
				return fail.Usagef("--%s - and --%s - both write standard output: one output a path (name a file for --%s)", a.Flag, b.Flag, b.Flag)
			}
			how := ""
			var same bool
			switch {
			case a.Folder && Within(b.Path, a.Path):
				same, how = true, " (in its folder)"
			case b.Folder && Within(a.Path, b.Path):
				same, how = true, " (in its folder)"
			default:
				same, how = Same(a.Path, b.Path)
			}
			if same {
				return fail.Usagef("--%s %s and --%s %s are one path%s: each output its own (name another for --%s)",
					a.Flag, a.given(), b.Flag, b.given(), how, b.Flag)
			}
		}
	}
	return nil
}

// Within says whether path is folder or inside it, links of existing
// folders resolved.
func Within(path, folder string) bool {
	if same, _ := Same(path, folder); same {
		return true
	}
	rel, err := filepath.Rel(resolve(folder), resolve(path))
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Same says whether a and b name one file: os.SameFile when both exist
// (a symbolic link and its target, two hard links of one file), else
// their absolute cleaned paths, with the folders' links resolved, are
// equal. how is " (the same file, through a link)" where the spellings
// differ after cleaning, else "".
func Same(a, b string) (same bool, how string) {
	ca, cb := resolve(linkEnd(a)), resolve(linkEnd(b))
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		same = os.SameFile(sa, sb)
	} else {
		same = ca == cb
	}
	if same && abs(a) != abs(b) {
		how = " (the same file, through a link)"
	}
	return same, how
}

// linkEnd is the path a symbolic link to a file not yet written leads
// to (the file a write through it makes), path where it is no link.
func linkEnd(path string) string {
	p := path
	for range 40 {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return p
		}
		to, err := os.Readlink(p)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(p), to)
		}
		p = to
	}
	return path
}

// abs is path absolute and clean, as written.
func abs(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return filepath.Clean(path)
}

// resolve is path absolute and clean, its folder's symbolic links
// resolved where the folder exists (the file itself may not yet).
func resolve(path string) string {
	dir, base := filepath.Split(abs(path))
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(d, base)
	}
	return abs(path)
}

// CheckReadable is the one line for an input that is not there, the
// first of inputs whose Path does not exist or cannot be looked at:
// "--plan p.json: cannot read it: no such file or directory" (Given
// where the flag spells more than the path: "--workload hf:c.json:seq=8:
// cannot read c.json: ..."), a failed input (exit 1), nil when all are.
// Every command says a missing file so, before any work.
func CheckReadable(inputs []Path) error {
	for _, in := range inputs {
		if in.Path == "" || in.Path == "-" {
			continue
		}
		if _, err := os.Stat(in.Path); err != nil {
			return ReadError(in, err)
		}
	}
	return nil
}

// ReadError is the line for input in that could not be read for err.
func ReadError(in Path, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if in.Given != "" && in.Given != in.Path {
		return fmt.Errorf("--%s %s: cannot read %s: %v", in.Flag, in.Given, in.Path, err)
	}
	return fmt.Errorf("--%s %s: cannot read it: %v", in.Flag, in.Path, err)
}
