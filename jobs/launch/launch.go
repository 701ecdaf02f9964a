package launch

// placer cluster slurm and placer cluster k8s: a report's cells as a
// cluster's array job (docs/cluster.md). The cells are counted by running
// the report with --list-cells (the placer binary itself parses the
// report's flags: a mistake in them is the report's own error); the
// files written run the same report with --cell (Slurm) or with the
// index Kubernetes gives each pod (JOB_COMPLETION_INDEX), into one
// shared --dir, and a follow-up prints the table with --no-run.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/jobs/grid"
)

// Reports are the report commands a cluster job runs as cells.
var Reports = []string{"equal-time", "learned", "regal", "generalization"}

// Options are the inputs of placer cluster slurm and k8s.
type Options struct {
	// Report is the report command after "placer": "report", its name,
	// and its flags (no --dir, --cell, --worker, --list-cells, --no-run:
	// the cluster job sets them).
	Report []string
	// Dir is the shared folder of the cells: a path every node sees
	// (Slurm), or where the volume is mounted in each pod (Kubernetes).
	Dir string
	// Placer is the placer binary: it lists the cells here, and (Slurm)
	// the nodes run it ("" = this executable).
	Placer string
	// Out is the folder the files are written to ("" = DIR/slurm for
	// Slurm, "k8s" for Kubernetes).
	Out string
	// Parallel is how many cells run at once (0 = all).
	Parallel int
	// CPUs is each task's CPU count (0 = 1).
	CPUs int
	// Time is each task's time limit (0 = from the cells' budgets:
	// twice the largest, plus 10 minutes; an error when they are not
	// times).
	Time time.Duration
	// Name is the job's name ("" = placer-REPORT).
	Name string

	// Slurm: the partition ("" = the cluster's default) and more
	// #SBATCH options (e.g. "--account=ml"), one per entry.
	Partition string
	Sbatch    []string

	// Kubernetes: the image (required), the PersistentVolumeClaim
	// mounted at Dir (required), the memory each pod requests and is
	// limited to ("" = 2Gi), and the namespace ("" = none written).
	Image, Claim, Memory, Namespace string

	// Progress receives what was written and how to submit it.
	Progress io.Writer
}

// Result is what a cluster command wrote.
type Result struct {
	Cells int      `json:"cells"`
	Files []string `json:"files"`
	// Submit is the command that starts it all.
	Submit string `json:"submit"`
}

// RoundsWords is the length of o.Report's command words when it is a
// training run in synchronous rounds (pretrain, regal train), else 0.
func (o *Options) RoundsWords() int {
	r := o.Report
	switch {
	case len(r) > 0 && r[0] == "pretrain":
		return 1
	case len(r) > 1 && r[0] == "regal" && r[1] == "train":
		return 2
	}
	return 0
}

// clusterReport checks o and returns the report's name ("pretrain" or
// "regal-train" for training in rounds). The CLI has checked the
// report's own flags (cmd/placer).
func (o *Options) clusterReport() (string, error) {
	r := o.Report
	name := ""
	switch o.RoundsWords() {
	case 1:
		name = "pretrain"
	case 2:
		name = "regal-train"
	default:
		if len(r) < 2 || r[0] != "report" || !slices.Contains(Reports, r[1]) {
			return "", fmt.Errorf("%q: not a report run as cells (%s), pretrain nor regal train", strings.Join(r, " "), strings.Join(Reports, ", "))
		}
		name = r[1]
	}
	if o.Dir == "" {
		return "", errors.New("no shared folder (Dir) given")
	}
	if o.Parallel < 0 || o.CPUs < 0 || o.Time < 0 {
		return "", fmt.Errorf("parallel %d, CPUs %d, time %v: must not be negative", o.Parallel, o.CPUs, o.Time)
	}
	return name, nil
}

// dirArgs are the flags that give the command its shared folder: --dir
// for a report, --rounds for training in rounds.
func (o *Options) dirArgs() []string {
	if o.RoundsWords() > 0 {
		return []string{"--rounds", o.Dir}
	}
	return []string{"--dir", o.Dir}
}

// listArgs are the command that lists the cells: training's needs its
// folder.
func (o *Options) listArgs() []string {
	if o.RoundsWords() > 0 {
		return append(slices.Clone(o.Report), o.dirArgs()...)
	}
	return o.Report
}

// followArgs are the follow-up job's command: a report's table of the
// cells kept (--no-run); for training in rounds, one more worker (--cell
// all), which runs any step left and writes the model.
func (o *Options) followArgs() []string {
	more := "--no-run"
	if o.RoundsWords() > 0 {
		more = "--cell=all"
	}
	return append(append(slices.Clone(o.Report), o.dirArgs()...), more, "-q")
}

// listCells runs the report with --list-cells and returns its cells.
func listCells(ctx context.Context, placer string, report []string) ([]grid.Listed, error) {
	args := append(slices.Clone(report), "--list-cells", "-q")
	cmd := exec.CommandContext(ctx, placer, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("listing the cells (%s %s --list-cells): %s", placer, strings.Join(report, " "), strings.TrimPrefix(msg, "placer: "))
	}
	var cells []grid.Listed
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l grid.Listed
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("listing the cells: %q: %v", sc.Text(), err)
		}
		cells = append(cells, l)
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("listing the cells: the report has none")
	}
	return cells, sc.Err()
}

// cellTime is a task's time limit: o.Time, or twice the largest budget
// of the cells plus 10 minutes.
func cellTime(o *Options, cells []grid.Listed) (time.Duration, error) {
	if o.Time > 0 {
		return o.Time, nil
	}
	var most time.Duration
	for _, c := range cells {
		d, err := time.ParseDuration(strings.TrimSuffix(c.Budget, "-cpu"))
		if err != nil {
			return 0, &NoTimeError{Cell: c.Index, Budget: c.Budget}
		}
		most = max(most, d)
	}
	return (2*most + 10*time.Minute).Round(time.Minute), nil
}

// NoTimeError is the error of a cluster job given no Time whose cells'
// budgets are not times (evaluation counts): it cannot tell each task's
// time limit.
type NoTimeError struct {
	Cell   int
	Budget string
}

func (e *NoTimeError) Error() string {
	return fmt.Sprintf("cell %d's budget %q is not a time", e.Cell, e.Budget)
}

// placerPath is the placer binary: o.Placer made absolute, or this
// executable.
func placerPath(o *Options) (string, error) {
	if o.Placer != "" {
		if strings.ContainsRune(o.Placer, '/') {
			return filepath.Abs(o.Placer)
		}
		return exec.LookPath(o.Placer)
	}
	return os.Executable()
}

// Slurm writes a Slurm job array running the report's cells
// (cells.sbatch), a follow-up job printing the table (table.sbatch), and
// submit.sh, which submits the array and the follow-up after it
// (--dependency=afterany).
func Slurm(ctx context.Context, o Options) (Result, error) {
	var res Result
	name, err := o.clusterReport()
	if err != nil {
		return res, err
	}
	placer, err := placerPath(&o)
	if err != nil {
		return res, fmt.Errorf("cluster slurm: placer binary: %w", err)
	}
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return res, err
	}
	cells, err := listCells(ctx, placer, o.listArgs())
	if err != nil {
		return res, fmt.Errorf("cluster slurm: %w", err)
	}
	res.Cells = len(cells)
	limit, err := cellTime(&o, cells)
	if err != nil {
		return res, err
	}
	out := o.Out
	if out == "" {
		out = filepath.Join(o.Dir, "slurm")
	}
	if out, err = filepath.Abs(out); err != nil {
		return res, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return res, fmt.Errorf("cluster slurm: %w", err)
	}
	job := o.Name
	if job == "" {
		job = "placer-" + name
	}
	cpus := max(o.CPUs, 1)
	array := fmt.Sprintf("0-%d", len(cells)-1)
	if o.Parallel > 0 {
		array += fmt.Sprintf("%%%d", o.Parallel)
	}
	report := shellJoin(o.Report)
	var sb strings.Builder
	fmt.Fprintf(&sb, "#!/bin/sh\n# Written by placer cluster slurm: the %d cells of\n#   placer %s\n# as a Slurm job array, one task per cell, into the shared folder\n#   %s\n# (docs/cluster.md). Resubmitting it reruns only the cells not kept there.\n", len(cells), report, o.Dir)
	fmt.Fprintf(&sb, "#SBATCH --job-name=%s\n#SBATCH --array=%s\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%d\n#SBATCH --time=%s\n#SBATCH --output=%s\n", job, array, cpus, slurmTime(limit), filepath.Join(out, "cell-%a.out"))
	sbatchExtra(&sb, o)
	fmt.Fprintf(&sb, "set -eu\nexec %s %s %s --cell \"$SLURM_ARRAY_TASK_ID\"\n", shellQuote(placer), report, shellJoin(o.dirArgs()))
	var tb strings.Builder
	fmt.Fprintf(&tb, "#!/bin/sh\n# Written by placer cluster slurm: the table of the cells kept in\n#   %s\n# (after cells.sbatch: submit.sh makes it wait for the array).\n", o.Dir)
	tableTime := "30:00"
	if o.RoundsWords() > 0 {
		tableTime = slurmTime(limit) // it may run steps that no task ran
	}
	fmt.Fprintf(&tb, "#SBATCH --job-name=%s-table\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%d\n#SBATCH --time=%s\n#SBATCH --output=%s\n", job, cpus, tableTime, filepath.Join(out, "table.txt"))
	sbatchExtra(&tb, o)
	fmt.Fprintf(&tb, "set -eu\nexec %s %s\n", shellQuote(placer), shellJoin(o.followArgs()))
	submit := "#!/bin/sh\n# Written by placer cluster slurm: submits the cells' array, then the table's job after it.\nset -eu\ncd \"$(dirname \"$0\")\"\n" +
		"cells=$(sbatch --parsable cells.sbatch)\ncells=${cells%%;*}\n" +
		"table=$(sbatch --parsable --dependency=afterany:\"$cells\" table.sbatch)\n" +
		"echo \"cells: job $cells; table: job ${table%%;*} (" + filepath.Join(out, "table.txt") + ")\"\n"
	for _, f := range []struct{ name, text string }{{"cells.sbatch", sb.String()}, {"table.sbatch", tb.String()}, {"submit.sh", submit}} {
		path := filepath.Join(out, f.name)
		if err := atomicfile.WriteBytes(path, []byte(f.text)); err != nil {
			return res, fmt.Errorf("cluster slurm: %w", err)
		}
		if err := os.Chmod(path, 0o755); err != nil {
			return res, err
		}
		res.Files = append(res.Files, path)
	}
	res.Submit = "sh " + shellQuote(filepath.Join(out, "submit.sh"))
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "cluster slurm: %d cells, %s per task, %d CPUs each; run %s\n", len(cells), slurmTime(limit), cpus, res.Submit)
	}
	return res, nil
}

func sbatchExtra(sb *strings.Builder, o Options) {
	if o.Partition != "" {
		fmt.Fprintf(sb, "#SBATCH --partition=%s\n", o.Partition)
	}
	for _, s := range o.Sbatch {
		fmt.Fprintf(sb, "#SBATCH %s\n", s)
	}
}

// slurmTime is d as Slurm's HOURS:MM:SS.
func slurmTime(d time.Duration) string {
	s := int64(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// The Kubernetes objects of a manifest: the fields placer writes of
// batch/v1 Job and core/v1 PodSpec, under their API names (the test in
// tools/dev/k8scheck decodes the manifest strictly into k8s.io/api's types).
type (
	k8sMeta struct {
		Name      string            `json:"name,omitempty"`
		Namespace string            `json:"namespace,omitempty"`
		Labels    map[string]string `json:"labels,omitempty"`
	}
	k8sJob struct {
		APIVersion string     `json:"apiVersion"`
		Kind       string     `json:"kind"`
		Metadata   k8sMeta    `json:"metadata"`
		Spec       k8sJobSpec `json:"spec"`
	}
	k8sJobSpec struct {
		CompletionMode string         `json:"completionMode,omitempty"`
		Completions    int            `json:"completions"`
		Parallelism    int            `json:"parallelism"`
		BackoffLimit   int            `json:"backoffLimit"`
		Template       k8sPodTemplate `json:"template"`
	}
	k8sPodTemplate struct {
		Metadata k8sMeta    `json:"metadata"`
		Spec     k8sPodSpec `json:"spec"`
	}
	k8sPodSpec struct {
		RestartPolicy string         `json:"restartPolicy"`
		Containers    []k8sContainer `json:"containers"`
		Volumes       []k8sVolume    `json:"volumes"`
	}
	k8sContainer struct {
		Name         string           `json:"name"`
		Image        string           `json:"image"`
		Command      []string         `json:"command"`
		Args         []string         `json:"args"`
		Resources    k8sResources     `json:"resources"`
		VolumeMounts []k8sVolumeMount `json:"volumeMounts"`
	}
	k8sResources struct {
		Requests map[string]string `json:"requests"`
		Limits   map[string]string `json:"limits"`
	}
	k8sVolumeMount struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
	}
	k8sVolume struct {
		Name                  string   `json:"name"`
		PersistentVolumeClaim k8sClaim `json:"persistentVolumeClaim"`
	}
	k8sClaim struct {
		ClaimName string `json:"claimName"`
	}
)

// k8sName is a DNS-1123 label: lower-case letters, digits and '-'.
var k8sName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// K8sJobName is the Kubernetes Job's name, o.Name or placer-REPORT, and
// whether it is a valid one: lower-case letters, digits and '-', at most
// 52 characters.
func (o *Options) K8sJobName() (string, bool) {
	job := o.Name
	if job == "" {
		name, _ := o.clusterReport()
		job = "placer-" + name
	}
	return job, k8sName.MatchString(job) && len(job) <= 52
}

// K8s writes a Kubernetes Indexed Job running the report's cells,
// one pod per cell index (job.json), and a Job printing the table from
// the same volume once they are done (table-job.json). Dir is where the
// PersistentVolumeClaim Claim is mounted in each pod; the image is one
// built from the repository's Dockerfile (placer on the PATH).
func K8s(ctx context.Context, o Options) (Result, error) {
	var res Result
	name, err := o.clusterReport()
	if err != nil {
		return res, err
	}
	if o.Image == "" || o.Claim == "" {
		return res, errors.New("cluster k8s: give the image and the volume claim")
	}
	if !filepath.IsAbs(o.Dir) {
		return res, fmt.Errorf("cluster k8s: %q: the volume's mount point must be absolute", o.Dir)
	}
	job, ok := o.K8sJobName()
	if !ok {
		return res, fmt.Errorf("cluster k8s: %q: not a Kubernetes Job name", job)
	}
	placer, err := placerPath(&o)
	if err != nil {
		return res, fmt.Errorf("cluster k8s: placer binary: %w", err)
	}
	cells, err := listCells(ctx, placer, o.listArgs())
	if err != nil {
		return res, fmt.Errorf("cluster k8s: %w", err)
	}
	res.Cells = len(cells)
	parallel := o.Parallel
	if parallel == 0 || parallel > len(cells) {
		parallel = len(cells)
	}
	cpus, mem := max(o.CPUs, 1), o.Memory
	if mem == "" {
		mem = "2Gi"
	}
	labels := map[string]string{"app.kubernetes.io/name": "placer", "app.kubernetes.io/component": name}
	pod := func(args []string) k8sPodSpec {
		res := map[string]string{"cpu": strconv.Itoa(cpus), "memory": mem}
		return k8sPodSpec{
			RestartPolicy: "Never",
			Containers: []k8sContainer{{
				Name: "placer", Image: o.Image, Command: []string{"placer"}, Args: args,
				Resources:    k8sResources{Requests: res, Limits: res},
				VolumeMounts: []k8sVolumeMount{{Name: "cells", MountPath: o.Dir}},
			}},
			Volumes: []k8sVolume{{Name: "cells", PersistentVolumeClaim: k8sClaim{ClaimName: o.Claim}}},
		}
	}
	// Each pod's cell is its index, JOB_COMPLETION_INDEX, which placer
	// reads when --cell is not given.
	cellsJob := k8sJob{APIVersion: "batch/v1", Kind: "Job", Metadata: k8sMeta{Name: job, Namespace: o.Namespace, Labels: labels},
		Spec: k8sJobSpec{CompletionMode: "Indexed", Completions: len(cells), Parallelism: parallel, BackoffLimit: len(cells),
			Template: k8sPodTemplate{Metadata: k8sMeta{Labels: labels}, Spec: pod(append(slices.Clone(o.Report), o.dirArgs()...))}}}
	tableJob := k8sJob{APIVersion: "batch/v1", Kind: "Job", Metadata: k8sMeta{Name: job + "-table", Namespace: o.Namespace, Labels: labels},
		Spec: k8sJobSpec{Completions: 1, Parallelism: 1, BackoffLimit: 2,
			Template: k8sPodTemplate{Metadata: k8sMeta{Labels: labels}, Spec: pod(o.followArgs())}}}
	out := o.Out
	if out == "" {
		out = "k8s"
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return res, fmt.Errorf("cluster k8s: %w", err)
	}
	for _, f := range []struct {
		name string
		job  k8sJob
	}{{"job.json", cellsJob}, {"table-job.json", tableJob}} {
		path := filepath.Join(out, f.name)
		data, err := json.MarshalIndent(f.job, "", "  ")
		if err != nil {
			return res, err
		}
		if err := atomicfile.WriteBytes(path, append(data, '\n')); err != nil {
			return res, fmt.Errorf("cluster k8s: %w", err)
		}
		res.Files = append(res.Files, path)
	}
	ns := ""
	if o.Namespace != "" {
		ns = " -n " + o.Namespace
	}
	res.Submit = fmt.Sprintf("kubectl%s apply -f %s && kubectl%s wait --for=condition=complete --timeout=-1s job/%s && kubectl%s apply -f %s && kubectl%s logs -f job/%s-table",
		ns, res.Files[0], ns, job, ns, res.Files[1], ns, job)
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "cluster k8s: %d cells, %d pods at once, %d CPUs and %s each; run\n  %s\n", len(cells), parallel, cpus, mem, res.Submit)
	}
	return res, nil
}
