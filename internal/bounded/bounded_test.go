package bounded

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLimits: a file at the limit is read whole; one byte more, as a
// regular file (refused before reading: a sparse file of limit+1 bytes),
// a FIFO fed without end, or a reader, is *TooLarge with the kind.
func TestLimits(t *testing.T) {
	d := t.TempDir()
	const limit = 1000
	at := filepath.Join(d, "at")
	os.WriteFile(at, bytes.Repeat([]byte("x"), limit), 0o644)
	over := filepath.Join(d, "over")
	f, _ := os.Create(over)
	f.Truncate(limit + 1)
	f.Close()
	huge := filepath.Join(d, "huge") // sparse: no disk used
	f, _ = os.Create(huge)
	f.Truncate(1 << 40)
	f.Close()
	fifo := filepath.Join(d, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // an endless writer, as /dev/zero, until the reader goes
		defer close(done)
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		zero := make([]byte, 4096)
		for {
			if _, err := w.Write(zero); err != nil {
				return
			}
		}
	}()
	const want = "more than 1000 bytes, the most a plan file may be (a device or an endless stream?)"
	for _, tc := range []struct {
		path string
		n    int // bytes read, -1 = refused
	}{{at, limit}, {over, -1}, {huge, -1}, {fifo, -1}} {
		b, err := ReadFile(tc.path, limit, "a plan file")
		switch {
		case tc.n >= 0 && (err != nil || len(b) != tc.n):
			t.Errorf("%s: %d bytes, %v; want %d", filepath.Base(tc.path), len(b), err, tc.n)
		case tc.n < 0 && (err == nil || err.Error() != "read "+tc.path+": "+want || !IsTooLarge(err)):
			t.Errorf("%s: %v; want %q", filepath.Base(tc.path), err, want)
		}
	}
	<-done
	if b, err := io.ReadAll(Reader(bytes.NewReader(make([]byte, 64<<20+1)), Config, "a plan file")); err == nil || len(b) != 64<<20 {
		t.Errorf("reader: %d bytes, %v", len(b), err)
	} else if err.Error() != "more than 64 MiB, the most a plan file may be (a device or an endless stream?)" {
		t.Errorf("reader: %v", err)
	}
}
