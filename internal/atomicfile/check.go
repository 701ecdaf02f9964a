package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// CheckFile says, before any work, whether Write(path, ...) can succeed:
// "-" (standard output); a character device or FIFO that can be opened
// for writing; else a regular file (or a link to one, or a path not
// there yet) whose folder exists and takes a new file. The error names
// what is wrong, not path (the caller names it).
func CheckFile(path string) error {
	if path == "-" {
		return nil
	}
	target, fi, err := Resolve(path)
	if err != nil {
		return err
	}
	if fi != nil && !fi.Mode().IsRegular() {
		if err := syscall.Access(target, 2 /* W_OK */); err != nil {
			return fmt.Errorf("cannot write it: %w", err)
		}
		return nil
	}
	dir := filepath.Dir(target)
	fi, err = os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("folder %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("folder %s: %w", dir, unwrapPath(err))
	case !fi.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	return canCreate(dir)
}

// CheckFolder says, before any work, whether a folder path can be used
// or made (os.MkdirAll) and written: path is a folder, or its nearest
// existing parent is a folder that takes new entries.
func CheckFolder(path string) error {
	p := filepath.Clean(path)
	for {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			if p == filepath.Clean(path) {
				return errors.New("is a file, not a folder")
			}
			return fmt.Errorf("%s is a file, not a folder", p)
		case err == nil:
			return canCreate(p)
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return fmt.Errorf("%s: %w", p, unwrapPath(err))
		}
		up := filepath.Dir(p)
		if up == p {
			return fmt.Errorf("%s does not exist", p)
		}
		p = up
	}
}

// canCreate creates and removes a temporary file in dir, as Write would.
func canCreate(dir string) error {
	f, err := os.CreateTemp(dir, ".placer-check-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// unwrapPath is err without the *fs.PathError's operation and path, which
// the message already names ("permission denied").
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
