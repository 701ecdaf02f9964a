package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ioCase is one command line against what its paths name: set makes the
// case's files in dir (a FIFO, a link, an endless stream) and may return
// a check of what was written; sh, where set, runs placer under /bin/sh
// with that redirection or limit (">&-", "ulimit -f 1"). code is the
// exit status wanted, want a text the stderr's one line (or, on success,
// stdout) holds.
type ioCase struct {
	name  string
	set   func(t *testing.T, dir string) func(t *testing.T, r result)
	sh    string
	args  []string
	code  int
	want  string
	limit time.Duration
}

// TestOutputsAndInputsThroughWhatPathsName holds the I/O rules of
// docs/robustness.md on the real binary: an output writes through a link
// (kept), into a FIFO (kept), to standard output for "-"; a closed
// standard output and a write past a file-size limit fail, exit 1; two
// outputs on one path (side files included) and empty path values are
// refused before any work, exit 2; an endless or oversized input is
// refused in one line, exit 1. No case panics, hangs, or answers 0
// wrongly. Nothing is written to a system device: each case makes its
// own FIFO, link, closed descriptor or limit in a temporary folder.
func TestOutputsAndInputsThroughWhatPathsName(t *testing.T) {
	placerBinary(t)
	scale := []string{"--workload", "llama3-8b:seq=8192,batch=256", "--cluster", "dgx-h100:4", "--strategy", "tp=8"}
	evalScale := append([]string{"eval"}, scale...)
	exportScale := append([]string{"export"}, scale...)
	opGraph := []string{"eval", "--workload", "trxl2", "--gpus", "2"}
	with := func(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }
	isJSON := func(path string) func(t *testing.T, r result) {
		return func(t *testing.T, r result) {
			b, err := os.ReadFile(path)
			if err != nil || !json.Valid(b) || !strings.Contains(string(b), `"model"`) {
				t.Errorf("%s holds %.80q (%v), want the eval report", path, b, err)
			}
		}
	}
	cases := []ioCase{
		{name: "link: its target written, the link kept", args: with(evalScale, "-o", "lnk"), code: 0,
			set: func(t *testing.T, dir string) func(*testing.T, result) {
				os.WriteFile(filepath.Join(dir, "tgt"), []byte("old"), 0o644)
				os.Symlink("tgt", filepath.Join(dir, "lnk"))
				check := isJSON(filepath.Join(dir, "tgt"))
				return func(t *testing.T, r result) {
					check(t, r)
					if fi, err := os.Lstat(filepath.Join(dir, "lnk")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
						t.Error("lnk is no longer a link")
					}
				}
			}},
		{name: "FIFO: written into, kept", args: with(evalScale, "-o", "ff"), code: 0,
			set: func(t *testing.T, dir string) func(*testing.T, result) {
				ff := filepath.Join(dir, "ff")
				if err := syscall.Mkfifo(ff, 0o644); err != nil {
					t.Fatal(err)
				}
				got := make(chan []byte, 1)
				go func() {
					f, err := os.Open(ff)
					if err != nil {
						got <- nil
						return
					}
					b, _ := io.ReadAll(f)
					f.Close()
					got <- b
				}()
				return func(t *testing.T, r result) {
					select {
					case b := <-got:
						if !json.Valid(b) || !strings.Contains(string(b), `"model"`) {
							t.Errorf("the FIFO's reader got %.80q", b)
						}
					case <-time.After(5 * time.Second):
						t.Error("nothing came through the FIFO in 5 s")
					}
					if fi, err := os.Lstat(ff); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
						t.Error("the FIFO was replaced")
					}
				}
			}},
		{name: "-o -: the report alone on standard output", args: with(evalScale, "-o", "-"), code: 0, want: `"model"`,
			set: func(t *testing.T, dir string) func(*testing.T, result) {
				return func(t *testing.T, r result) {
					if !json.Valid([]byte(r.stdout)) {
						t.Errorf("stdout is not the JSON report alone: %.80q", r.stdout)
					}
					if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
						t.Error(`a file named "-" was written`)
					}
				}
			}},
		{name: "export -o -: standard output", args: with(exportScale, "--to", "megatron", "-o", "-"), code: 0, want: "# placer: Megatron-LM arguments"},
		{name: "closed standard output", sh: `exec "$0" "$@" >&-`, args: with(exportScale, "--to", "megatron"), code: 1, want: "cannot write standard output: bad file descriptor"},
		{name: "closed standard output, -o -", sh: `exec "$0" "$@" >&-`, args: with(evalScale, "-o", "-"), code: 1, want: "cannot write standard output: bad file descriptor"},
		{name: "closed standard output, a table", sh: `exec "$0" "$@" >&-`, args: opGraph, code: 1, want: "cannot write standard output"},
		{name: "a full file system (RLIMIT_FSIZE): the old file kept", sh: `ulimit -f 1; exec "$0" "$@"`, args: with(evalScale, "-o", "big.json"), code: 1, want: "file too large",
			set: func(t *testing.T, dir string) func(*testing.T, result) {
				os.WriteFile(filepath.Join(dir, "big.json"), []byte("old"), 0o644)
				return func(t *testing.T, r result) {
					if b, _ := os.ReadFile(filepath.Join(dir, "big.json")); string(b) != "old" {
						t.Errorf("big.json holds %.40q after the failed write, want the old content", b)
					}
				}
			}},
		{name: "--trace and -o one file", args: with(opGraph, "--trace", "t.json", "-o", "t.json"), code: 2, want: "--out t.json and --trace t.json are one path"},
		{name: "-o and --plot one file", args: []string{"search", "--workload", "trxl2", "--gpus", "2", "-o", "same.svg", "--plot", "same.svg"}, code: 2, want: "--out same.svg and --plot same.svg are one path"},
		{name: "-o in --rows's folder", args: []string{"search", "--workload", "trxl2", "--gpus", "2", "-o", "rowsd/rows.json", "--rows", "rowsd"}, code: 2, want: "--out rowsd/rows.json and --rows rowsd are one path (in its folder)"},
		{name: "-o and --trace through a link", args: with(opGraph, "-o", "a.json", "--trace", "lnk.json"), code: 2, want: "are one path (the same file, through a link)",
			set: func(t *testing.T, dir string) func(*testing.T, result) {
				os.Symlink("a.json", filepath.Join(dir, "lnk.json"))
				return nil
			}},
		{name: "two outputs on standard output", args: with(opGraph, "-o", "-", "--trace", "-"), code: 2, want: "both write standard output"},
		{name: "a side file over the input plan", args: with(exportScale, "--plan", "ds_moe.py", "--to", "deepspeed", "-o", "ds.json"), code: 2, want: "--out ds.json (its side file ds_moe.py) would overwrite --plan's input ds_moe.py"},
		{name: "-o empty", args: with(evalScale, "-o", ""), code: 2, want: "--out is empty"},
		{name: "--for empty", args: []string{"search", "--workload", "llama3-8b:seq=8192,batch=256", "--cluster", "dgx-h100:4", "--for", ""}, code: 2, want: "--for is empty"},
		{name: "--plan empty", args: with(evalScale, "--plan", ""), code: 2, want: "--plan is empty"},
		{name: "--rows -", args: []string{"search", "--workload", "trxl2", "--gpus", "2", "--rows", "-"}, code: 2, want: "--rows -: standard output is not a folder"},
		{name: "--plan an endless stream", args: []string{"eval", "--workload", "llama3-8b:seq=8192,batch=256", "--cluster", "dgx-h100:4", "--plan", "zeros"}, code: 1, want: "more than 64 MiB, the most a plan file may be",
			set: endless},
		{name: "--model past a model file's limit", args: []string{"infer", "--workload", "trxl2", "--gpus", "2", "--model", "big"}, code: 1,
			want: "more than 1 GiB, the most a policy file may be", set: sparse("big", 1<<30+1)},
		{name: "--placement an endless stream", args: with(opGraph, "--placement", "zeros"), code: 1, want: "more than 256 MiB, the most a decision or result file may be", set: endless, limit: 60 * time.Second},
		{name: "--placement past its size", args: with(opGraph, "--placement", "sparse.json"), code: 1, want: "more than 256 MiB",
			set: func(t *testing.T, dir string) func(*testing.T, result) {
				f, _ := os.Create(filepath.Join(dir, "sparse.json"))
				f.Truncate(1 << 40) // sparse: no disk used
				f.Close()
				return nil
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var check func(*testing.T, result)
			if tc.set != nil {
				check = tc.set(t, dir)
			}
			limit := tc.limit
			if limit == 0 {
				limit = 20 * time.Second
			}
			var r result
			if tc.sh != "" {
				r = runShell(t, dir, limit, tc.sh, tc.args...)
			} else {
				r = runBinary(t, dir, limit, nil, tc.args...)
			}
			errs := strings.TrimSpace(r.stderr)
			switch {
			case r.timedOut:
				t.Fatalf("hung (killed after %v): %v", limit, tc.args)
			case strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic:") || strings.Contains(errs, "fatal error"):
				t.Fatalf("crashed: %.300s", errs)
			case r.code != tc.code:
				t.Fatalf("exit %d, want %d: %q (%v)", r.code, tc.code, errs, tc.args)
			case tc.code != 0 && (strings.Contains(errs, "\n") || !strings.HasPrefix(errs, "placer: ")):
				t.Errorf("stderr is not one 'placer: ' line: %q", errs)
			case tc.code != 0 && !strings.Contains(errs, tc.want):
				t.Errorf("%q does not say %q", errs, tc.want)
			case tc.code == 0 && !strings.Contains(r.stdout, tc.want):
				t.Errorf("stdout %.80q does not hold %q", r.stdout, tc.want)
			}
			if check != nil {
				check(t, r)
			}
		})
	}
}

// sparse makes dir/name a sparse file of n bytes (no disk written):
// a file past a read limit, refused on its size before it is read.
func sparse(name string, n int64) func(*testing.T, string) func(*testing.T, result) {
	return func(t *testing.T, dir string) func(*testing.T, result) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(n); err != nil {
			t.Fatal(err)
		}
		return nil
	}
}

// endless makes dir/zeros a FIFO fed with zeros without end, as
// /dev/zero, until the test ends.
func endless(t *testing.T, dir string) func(*testing.T, result) {
	p := filepath.Join(dir, "zeros")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	// Read-write: the open does not wait for a reader, and the writes
	// wait, not fail, between the command's reads of the file.
	w, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	go func() {
		zero := make([]byte, 1<<16)
		for {
			if _, err := w.Write(zero); err != nil {
				return
			}
		}
	}()
	return nil
}

// runShell runs the binary with args under /bin/sh -c script (script's
// "$0" the binary, "$@" args), in dir, killed after limit.
func runShell(t *testing.T, dir string, limit time.Duration, script string, args ...string) result {
	t.Helper()
	return runBinaryAs(t, dir, limit, "/bin/sh", append([]string{"-c", script, placerBinary(t)}, args...)...)
}
