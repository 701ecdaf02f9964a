package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterBadInput: a cluster command without its report, with a flag
// the job sets itself, without --dir, or (k8s) without an image or a
// claim: one line, exit 2.
func TestClusterBadInput(t *testing.T) {
	report := []string{"--", "report", "regal", "--graphs", "synthetic:1", "--evaluations", "100", "--budgets", "100"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "slurm", "--dir", "d"}, "placer: give the report command after --, e.g. -- report equal-time --budgets 1m"},
		{[]string{"cluster", "slurm", "--dir", "d", "--", "search", "--workload", "trxl2"}, "placer: give the report command after --"},
		{[]string{"cluster", "slurm", "report", "regal"}, "placer: give the report command after --, e.g. -- report regal"},
		{append([]string{"cluster", "slurm"}, report...), "placer: give --dir: the folder every task shares"},
		{append([]string{"cluster", "slurm", "--dir", "d"}, append(report, "--dir", "x")...), "placer: --dir: the cluster job sets --dir, --cell and --no-run itself"},
		{append([]string{"cluster", "k8s", "--claim", "c"}, report...), "placer: give --image: the image the pods run"},
		{append([]string{"cluster", "k8s", "--image", "i"}, report...), "placer: give --claim: the PersistentVolumeClaim"},
		{append([]string{"cluster", "k8s", "--image", "i", "--claim", "c", "--dir", "rel"}, report...), `placer: --dir "rel": want the absolute path`},
		{append([]string{"cluster", "k8s", "--image", "i", "--claim", "c", "--name", "Bad_Name"}, report...), `placer: --name "Bad_Name": want lower-case letters`},
	} {
		code, _, errs := placer(t, tc.args...)
		if code != 2 || !strings.HasPrefix(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// k8sReport is a small report for the manifest tests: 6 cells.
var k8sReport = []string{"report", "regal", "--graphs", "synthetic:2", "--methods", "brkga,local-search", "--curve-methods", "brkga",
	"--objectives", "step-time", "--evaluations", "300", "--budgets", "300", "--best-budget", "600"}

// k8sManifests writes the report's manifests into a temporary folder.
func k8sManifests(t *testing.T) (job, table string) {
	t.Helper()
	out := t.TempDir()
	args := append([]string{"cluster", "k8s", "--placer", placerBinary(t), "--image", "registry.example/placer:v1", "--claim", "placer-cells",
		"--parallel", "4", "--cpus-per-task", "2", "--pod-memory", "3Gi", "--out", out, "--"}, k8sReport...)
	if code, _, errs := placer(t, args...); code != 0 {
		t.Fatalf("cluster k8s: exit %d: %s", code, errs)
	}
	return filepath.Join(out, "job.json"), filepath.Join(out, "table-job.json")
}

// TestClusterK8s: the Indexed Job has one completion per cell, the pods
// run the report with the volume at --dir and no --cell (they read
// JOB_COMPLETION_INDEX), and the table Job runs it with --no-run.
func TestClusterK8s(t *testing.T) {
	jobFile, tableFile := k8sManifests(t)
	var job, table struct {
		APIVersion, Kind string
		Spec             struct {
			CompletionMode           string
			Completions, Parallelism int
			Template                 struct {
				Spec struct {
					RestartPolicy string
					Containers    []struct {
						Image, Name   string
						Command, Args []string
						Resources     struct{ Requests, Limits map[string]string }
						VolumeMounts  []struct{ Name, MountPath string }
					}
					Volumes []struct {
						Name                  string
						PersistentVolumeClaim struct{ ClaimName string }
					}
				}
			}
		}
	}
	for _, f := range []struct {
		path string
		v    any
	}{{jobFile, &job}, {tableFile, &table}} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, f.v); err != nil {
			t.Fatal(err)
		}
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || s.CompletionMode != "Indexed" || s.Completions != 6 || s.Parallelism != 4 {
		t.Fatalf("job %+v", job)
	}
	p := s.Template.Spec
	if len(p.Containers) != 1 || len(p.Volumes) != 1 || p.RestartPolicy != "Never" {
		t.Fatalf("pod %+v", p)
	}
	c := p.Containers[0]
	wantArgs := strings.Join(append(k8sReport, "--dir", "/cells"), " ")
	if c.Image != "registry.example/placer:v1" || strings.Join(c.Command, " ") != "placer" || strings.Join(c.Args, " ") != wantArgs {
		t.Errorf("container runs %s %v %v", c.Image, c.Command, c.Args)
	}
	if c.Resources.Requests["cpu"] != "2" || c.Resources.Limits["memory"] != "3Gi" {
		t.Errorf("resources %+v", c.Resources)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/cells" || c.VolumeMounts[0].Name != p.Volumes[0].Name || p.Volumes[0].PersistentVolumeClaim.ClaimName != "placer-cells" {
		t.Errorf("volume %+v mounted as %+v", p.Volumes, c.VolumeMounts)
	}
	ta := table.Spec.Template.Spec.Containers[0].Args
	if table.Spec.CompletionMode != "" || table.Spec.Completions != 1 || strings.Join(ta, " ") != wantArgs+" --no-run -q" {
		t.Errorf("table job %+v runs %v", table.Spec, ta)
	}
}

// TestClusterK8sSchema checks the manifests against Kubernetes' own API
// types: tools/dev/k8scheck (its own module, so that placer does not depend
// on k8s.io/api) decodes each strictly into a batch/v1 Job and applies
// the API server's rules for the fields placer writes. A manifest with a
// misspelt field or a bad quantity is refused. Skipped when the Go module
// proxy cannot be reached to fetch k8s.io/api (kubectl, whose client-side
// dry run needs a cluster's API server, is not used).
func TestClusterK8sSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tools/dev/k8scheck")
	}
	check := filepath.Join("..", "..", "tools", "dev", "k8scheck")
	if out, err := exec.Command("go", "-C", check, "mod", "download").CombinedOutput(); err != nil {
		t.Skipf("SKIP: cannot fetch k8s.io/api for tools/dev/k8scheck (offline?): %v: %s", err, out)
	}
	job, table := k8sManifests(t)
	data, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	misspelt := filepath.Join(dir, "misspelt.json")
	os.WriteFile(misspelt, bytes.Replace(data, []byte(`"completionMode"`), []byte(`"completionMod"`), 1), 0o644)
	quantity := filepath.Join(dir, "quantity.json")
	os.WriteFile(quantity, bytes.Replace(data, []byte(`"3Gi"`), []byte(`"3 GB"`), 1), 0o644)
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	for _, tc := range []struct {
		file string
		ok   bool
	}{{job, true}, {table, true}, {misspelt, false}, {quantity, false}} {
		out, err := exec.Command("go", "-C", check, "run", ".", abs(tc.file)).CombinedOutput()
		if (err == nil) != tc.ok {
			t.Errorf("%s: k8scheck: %v: %s (want valid: %v)", filepath.Base(tc.file), err, out, tc.ok)
		}
	}
}
