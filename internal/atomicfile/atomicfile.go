package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Stdout is where an output named "-" goes: the process's standard
// output (a test sets its own).
var Stdout io.Writer = os.Stdout

// maxLinks is how many symbolic links Write follows from one path
// before it gives up (Linux's MAXSYMLINKS).
const maxLinks = 40

// Write writes the output of fill to what path names (one
// helper for every output of every command):
//
//   - "-": standard output (Stdout);
//   - a regular file, or a path that is not there: atomically, into a
//     temporary file beside it, synced, then renamed over it;
//   - a symbolic link: its target, the same way; the link is kept;
//   - a character device (/dev/null, a terminal) or a FIFO: directly,
//     never replaced;
//   - anything else (a folder, a socket, a block device): refused.
//
// Every write, sync and close is checked: a full disk, a closed
// descriptor or a reader gone is an error, never a quiet success.
func Write(path string, fill func(w io.Writer) error) (err error) {
	if path == "-" {
		if err := fill(Stdout); err != nil {
			return fmt.Errorf("cannot write standard output: %w", unwrapPath(err))
		}
		return nil
	}
	target, fi, err := Resolve(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if fi != nil && !fi.Mode().IsRegular() {
		if err := writeDirect(target, fi, fill); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	if err := writeAtomic(target, fill); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Resolve is what Write writes for path, and that file's information
// (nil where it is not there yet): a character device or FIFO, path
// itself, opened through whatever links name it (/dev/stdout); a
// regular file, the file its links name in the end; a path not there,
// the name its links lead to (a link to a file not yet written), else
// path. A folder, a socket or a block device is an error saying what it
// is.
func Resolve(path string) (string, fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err == nil {
		if err := kindError(fi); err != nil {
			return "", nil, err
		}
		if !fi.Mode().IsRegular() {
			return path, fi, nil
		}
		t, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", nil, unwrapPath(err)
		}
		return t, fi, nil
	}
	if !notThere(err) {
		return "", nil, unwrapPath(err)
	}
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		switch {
		case notThere(err):
			return p, nil, nil
		case err != nil:
			return "", nil, unwrapPath(err)
		case fi.Mode()&fs.ModeSymlink == 0:
			// Not there through Stat, there through Lstat: a race;
			// the rename writes p.
			return p, nil, nil
		}
		to, err := os.Readlink(p)
		if err != nil {
			return "", nil, unwrapPath(err)
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(p), to)
		}
		p = to
	}
	return "", nil, fmt.Errorf("more than %d symbolic links", maxLinks)
}

// notThere says whether err is a path that does not exist (or whose
// folder is a file).
func notThere(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// kindError says why fi is no output, nil where it can be one.
func kindError(fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular(), m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		return nil
	case m.IsDir():
		return errors.New("is a folder")
	case m&fs.ModeSocket != 0:
		return errors.New("is a socket, not a file (an output is a file, a link to one, a character device, a FIFO, or - for standard output)")
	case m&fs.ModeDevice != 0:
		return errors.New("is a block device, not a file (an output is a file, a link to one, a character device, a FIFO, or - for standard output)")
	}
	return fmt.Errorf("is a %v, not a file", m.Type())
}

// writeDirect writes fill's output into the character device or FIFO
// path, opened for writing as it is (not created, not truncated).
func writeDirect(path string, fi fs.FileInfo, fill func(w io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return unwrapPath(err)
	}
	if err := fill(f); err != nil {
		f.Close()
		return unwrapPath(err)
	}
	return unwrapPath(f.Close())
}

// writeAtomic writes fill's output to the regular file path (made where
// it is not there) through a temporary file beside it and a rename.
func writeAtomic(path string, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = fill(tmp); err != nil {
		return unwrapPath(err)
	}
	if err = tmp.Sync(); err != nil {
		return unwrapPath(err)
	}
	if err = tmp.Close(); err != nil {
		return unwrapPath(err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// RemoveStale removes the temporary files a writer of path killed before
// its rename left behind (".NAME.tmp-*" beside path); best effort.
func RemoveStale(path string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+globEscape(filepath.Base(path))+".tmp-*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

func globEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		if r == '*' || r == '?' || r == '[' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// WriteBytes writes data to path as Write does.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}
