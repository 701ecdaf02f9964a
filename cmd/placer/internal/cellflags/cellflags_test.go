package cellflags

import (
	"errors"
	"testing"

	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs/grid"
)

func TestCellFlags(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name    string
		f       Flags
		dir     string
		noRun   bool
		mode    grid.Mode // 0 = no Work
		cell    int
		wantDir string
		err     string
	}{
		{name: "nothing", dir: "d", wantDir: "d"},
		{name: "list, no dir", f: Flags{List: true}, mode: grid.List, wantDir: "."},
		{name: "cell", f: Flags{Cell: "3"}, dir: "d", mode: grid.One, cell: 3, wantDir: "d"},
		{name: "worker", f: Flags{Worker: true}, dir: "d", mode: grid.Worker, wantDir: "d"},
		{name: "slurm", f: Flags{Getenv: env("SLURM_ARRAY_TASK_ID", "7")}, dir: "d", mode: grid.One, cell: 7, wantDir: "d"},
		{name: "kubernetes", f: Flags{Getenv: env("JOB_COMPLETION_INDEX", "0")}, dir: "d", mode: grid.One, wantDir: "d"},
		{name: "--cell beats the environment", f: Flags{Cell: "2", Getenv: env("SLURM_ARRAY_TASK_ID", "7")}, dir: "d", mode: grid.One, cell: 2, wantDir: "d"},
		{name: "--cell all ignores the environment", f: Flags{Cell: "all", Getenv: env("SLURM_ARRAY_TASK_ID", "7")}, dir: "d", wantDir: "d"},
		{name: "--no-run ignores the environment", f: Flags{Getenv: env("SLURM_ARRAY_TASK_ID", "7")}, dir: "d", noRun: true, wantDir: "d"},
		{name: "cell without dir", f: Flags{Cell: "1"}, err: "--cell and --worker (and an array task's index) need --dir: the folder every worker shares"},
		{name: "task without dir", f: Flags{Getenv: env("JOB_COMPLETION_INDEX", "1")}, err: "--cell and --worker (and an array task's index) need --dir: the folder every worker shares"},
		{name: "bad cell", f: Flags{Cell: "x"}, dir: "d", err: `--cell "x": want a cell index (0, 1, 2 ...; --list-cells lists them) or all`},
		{name: "negative cell", f: Flags{Cell: "-1"}, dir: "d", err: `--cell "-1": want a cell index (0, 1, 2 ...; --list-cells lists them) or all`},
		{name: "bad task index", f: Flags{Getenv: env("SLURM_ARRAY_TASK_ID", "1,2")}, dir: "d", err: `SLURM_ARRAY_TASK_ID="1,2": want a cell index (the task's index in its array job); --cell all runs every cell`},
		{name: "two modes", f: Flags{Cell: "1", Worker: true}, dir: "d", err: "--list-cells, --cell and --worker: give one"},
		{name: "with --no-run", f: Flags{Worker: true}, dir: "d", noRun: true, err: "--no-run reads the cells kept in --dir: it takes no --list-cells, --cell or --worker"},
		{name: "short lease", f: Flags{Worker: true, Lease: 1}, dir: "d", err: "--lease 1ns: want at least 100ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.f.Getenv == nil {
				tc.f.Getenv = env()
			}
			dir := tc.dir
			w, err := tc.f.Work(&dir, tc.noRun)
			if tc.err != "" {
				var u fail.Usage
				if err == nil || err.Error() != tc.err || !errors.As(err, &u) {
					t.Fatalf("error %v, want usage error %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (w == nil) != (tc.mode == 0) || (w != nil && (w.Mode != tc.mode || w.Cell != tc.cell)) || dir != tc.wantDir {
				t.Fatalf("work %+v, dir %q", w, dir)
			}
		})
	}
}
