package atomicfile

import (
	"bytes"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteThroughWhatThePathNames: a regular file is
// replaced atomically, a link's target is written and the link kept, a
// FIFO is written into and stays a FIFO, "-" is standard output, and a
// folder or a socket is refused; each by hand.
func TestWriteThroughWhatThePathNames(t *testing.T) {
	d := t.TempDir()
	mk := func(name, content string) string {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(name, to string) string {
		p := filepath.Join(d, name)
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(d, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(d, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	folder := filepath.Join(d, "folder")
	os.Mkdir(folder, 0o755)

	type check struct {
		path, want string // the file read back after the write, its content
	}
	cases := []struct {
		name    string
		path    string
		wantErr string
		reads   []check
		links   []string // paths that must still be symbolic links
	}{
		{name: "new file", path: filepath.Join(d, "new"), reads: []check{{filepath.Join(d, "new"), "data"}}},
		{name: "existing file", path: mk("old", "old"), reads: []check{{filepath.Join(d, "old"), "data"}}},
		{name: "link to a file", path: link("lnk", "tgt"), reads: []check{{mk("tgt", "old"), "data"}}, links: []string{filepath.Join(d, "lnk")}},
		{name: "link of a link", path: link("lnk2", "lnk3"), reads: []check{{filepath.Join(d, "tgt2"), "data"}}, links: []string{filepath.Join(d, "lnk2"), link("lnk3", mk("tgt2", "x"))}},
		{name: "dangling link: its target made", path: link("dang", "made"), reads: []check{{filepath.Join(d, "made"), "data"}}, links: []string{filepath.Join(d, "dang")}},
		{name: "folder", path: folder, wantErr: "is a folder"},
		{name: "link to a folder", path: link("lnkdir", "folder"), wantErr: "is a folder"},
		{name: "socket", path: sock, wantErr: "is a socket"},
		{name: "link loop", path: link("loop", "loop"), wantErr: "too many levels of symbolic links"},
	}
	for _, tc := range cases {
		err := WriteBytes(tc.path, []byte("data"))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for _, c := range tc.reads {
			if got, _ := os.ReadFile(c.path); string(got) != c.want {
				t.Errorf("%s: %s holds %q, want %q", tc.name, c.path, got, c.want)
			}
		}
		for _, l := range tc.links {
			if fi, err := os.Lstat(l); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("%s: %s is no longer a link", tc.name, l)
			}
		}
	}

	// A FIFO: written into, not replaced.
	got := make(chan string)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	if err := WriteBytes(fifo, []byte("through the fifo")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the fifo" {
		t.Errorf("the FIFO's reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}

	// "-": standard output.
	var buf bytes.Buffer
	Stdout = &buf
	defer func() { Stdout = os.Stdout }()
	if err := WriteBytes("-", []byte("to stdout")); err != nil || buf.String() != "to stdout" {
		t.Errorf(`"-": %q, %v`, buf.String(), err)
	}
	if _, err := os.Stat(filepath.Join(d, "-")); err == nil {
		t.Error(`"-" made a file named -`)
	}
}

// TestWriteErrorsReported: a write that fails half-way (the FIFO's reader
// gone: EPIPE) is an error, not a success.
func TestWriteErrorsReported(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			return
		}
		f.Read(make([]byte, 1))
		f.Close() // the reader goes after one byte
	}()
	big := bytes.Repeat([]byte("x"), 1<<22) // more than a pipe holds
	err := WriteBytes(fifo, big)
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("err = %v, want broken pipe", err)
	}
}
