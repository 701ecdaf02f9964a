package bounded

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The limits, by kind of input: each far above the largest such file
// placer writes or reads in its tests, and far below a machine's memory.
const (
	// Config is a plan, a hardware profile, a cluster, a strategy or a
	// policy's configuration: a few KiB written by placer or by hand.
	Config int64 = 64 << 20
	// Decision is a decision, result, placement or cost table of one
	// graph: some tens of bytes an op (a 2,000,000-op graph's are tens of
	// MiB).
	Decision int64 = 256 << 20
	// Model is a learned model or its checkpoint: a GDP policy, a move
	// head, a REGAL model, their training states and teacher files. The
	// default policy is 254 KiB (methods/gdp/defaultmodel/data); a
	// checkpoint adds its optimizer's two moments. 1 GiB holds a policy
	// thousands of times larger.
	Model int64 = 1 << 30
	// Graph is a graph file, read as a stream (docs/robustness.md: a
	// 2,000,000-op chain).
	Graph int64 = 8 << 30
)

// TooLarge is the error of an input past its limit.
type TooLarge struct {
	Limit int64
	Kind  string
}

func (e *TooLarge) Error() string {
	return fmt.Sprintf("more than %s, the most %s may be (a device or an endless stream?)", size(e.Limit), e.Kind)
}

// size is n in the largest binary unit that divides it.
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile is path's content, at most limit bytes: a regular file
// larger is refused before it is read, anything else (a device, a FIFO)
// once limit+1 bytes have come. kind names the input in the error ("a
// plan file").
func ReadFile(path string, limit int64, kind string) ([]byte, error) {
	f, err := Open(path, limit, kind)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Open opens path for a reader that fails past limit bytes (an
// *fs.PathError of a *TooLarge); a regular file larger is refused at
// once.
func Open(path string, limit int64, kind string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		f.Close()
		return nil, tooLarge(path, limit, kind)
	}
	return &reader{f: f, left: limit, tl: tooLarge(path, limit, kind)}, nil
}

// Reader is r read at most limit bytes, failing with *TooLarge past it.
func Reader(r io.Reader, limit int64, kind string) io.Reader {
	return &reader{r: r, left: limit, tl: &TooLarge{Limit: limit, Kind: kind}}
}

// tooLarge is the error of path past limit, as the os package's are
// (*fs.PathError: "read PATH: more than ...").
func tooLarge(path string, limit int64, kind string) error {
	return &fs.PathError{Op: "read", Path: path, Err: &TooLarge{Limit: limit, Kind: kind}}
}

type reader struct {
	f    *os.File
	r    io.Reader
	left int64
	tl   error
}

func (r *reader) Read(p []byte) (int, error) {
	if r.left < 0 {
		return 0, r.tl
	}
	// Read one byte past the limit: that it comes is what says the
	// input is too large.
	if int64(len(p)) > r.left+1 {
		p = p[:r.left+1]
	}
	var n int
	var err error
	if r.f != nil {
		n, err = r.f.Read(p)
	} else {
		n, err = r.r.Read(p)
	}
	r.left -= int64(n)
	if r.left < 0 {
		return n - 1, r.tl
	}
	return n, err
}

func (r *reader) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

// IsTooLarge says whether err is an input past its limit.
func IsTooLarge(err error) bool {
	var tl *TooLarge
	return errors.As(err, &tl)
}
