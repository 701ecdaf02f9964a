package profile

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/placer/placer/evaluate/hw"
	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/fail"
	placertorch "github.com/placer/placer/python/placer_torch/placer_torch"
)

// ModelOptions are placer profile --model's: the model's training step
// exported as an op graph and timed op by op on the device.
type ModelOptions struct {
	// Model is the model as tools/dev/torchexport names it: a zoo name
	// (placer_torch/zoo.py), package.module:factory or file.py:factory (with
	// InputShapes), torchvision.models:resnet18 among them.
	Model       string
	InputShapes []string // one example's input shape a model input ("3,224,224", "128:int64")
	Batch       int      // 0: the zoo model's, 1 for a factory
	Loss        string   // a factory's loss: cross-entropy, mse or sum ("" = cross-entropy)
	Optimizer   string   // adam, adamw or sgd ("" = adam)
	// Precision is fp32 (TF32 off), tf32 (TF32 matmuls and
	// convolutions) or bf16 (autocast over FP32 weights); "" = bf16 on
	// a GPU, fp32 on a CPU (the only one there).
	Precision string
	// Steps are the profiled steps (default 5), after Warmup unprofiled
	// ones (default 3; -1 none).
	Steps, Warmup int
}

// Precisions are placer profile --model's --precision values.
var Precisions = []string{"fp32", "tf32", "bf16"}

// Optimizers and Losses are --optimizer's and --loss's values
// (placer_torch's exportflags and torchexport choices).
var (
	Optimizers = []string{"adam", "adamw", "sgd"}
	Losses     = []string{"cross-entropy", "mse", "sum"}
)

// profileModel is placer profile --model: it runs placer_torch.opprofile
// (embedded) in the torch virtualenv, which exports the model's training
// step and times each profiled step op by op, and writes the ops
// profile (docs/profile.md, "Op graphs"): each op the profiler matched
// with its median time and, on a GPU, its dispatch time. Interrupted
// (ctx), it writes the steps finished, complete false.
func profileModel(ctx context.Context, o Options, progress io.Writer) (*Result, error) {
	m := o.ModelOptions
	switch o.Device {
	case "", "auto", "cpu", "cuda":
	default:
		return nil, fail.Usagef("--device %q: want auto, cpu or cuda", o.Device)
	}
	if m.Optimizer != "" && !slices.Contains(Optimizers, m.Optimizer) {
		return nil, fail.Usagef("--optimizer %q: want %s", m.Optimizer, strings.Join(Optimizers, ", "))
	}
	if m.Loss != "" && !slices.Contains(Losses, m.Loss) {
		return nil, fail.Usagef("--loss %q: want %s", m.Loss, strings.Join(Losses, ", "))
	}
	if m.Precision != "" && !slices.Contains(Precisions, m.Precision) {
		return nil, fail.Usagef("--precision %q: want %s", m.Precision, strings.Join(Precisions, ", "))
	}
	if o.Device == "cpu" && m.Precision != "" && m.Precision != "fp32" {
		return nil, fail.Usagef("--precision %s: on a GPU (--device cuda); a CPU profile is fp32", m.Precision)
	}
	if m.Batch < 0 || m.Steps < 0 || m.Warmup < -1 {
		return nil, fail.Usagef("--batch %d, --steps %d, --warmup %d: want a batch and steps of at least 1", m.Batch, m.Steps, m.Warmup)
	}
	if err := atomicfile.CheckFile(o.Out); err != nil {
		return nil, fail.Usagef("--out: %v", err)
	}
	if m.Steps == 0 {
		m.Steps = 5
	}
	switch m.Warmup {
	case 0:
		m.Warmup = 3
	case -1:
		m.Warmup = 0
	}
	if o.Budget <= 0 {
		o.Budget = 5 * time.Minute
	}
	dir, err := os.MkdirTemp("", "placer-profile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := writeScripts(dir); err != nil {
		return nil, err
	}
	req := map[string]any{
		"model": m.Model, "input_shapes": m.InputShapes, "batch": m.Batch, "loss": m.Loss, "optimizer": m.Optimizer,
		"precision": m.Precision, "device": o.Device, "steps": m.Steps, "warmup": m.Warmup, "threads": o.Threads,
		"name": modelName(m.Model),
	}
	reqJSON, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	py := o.Python
	if py == "" {
		py = TorchPython()
	}
	trace := newPyStderr(progress)
	stderr := newQuietWriter(trace)
	cmd, out, run, cancel, err := startMeasurements(ctx, o.Budget, py, pythonPath(dir), stderr, "-m", "placer_torch.opprofile", string(reqJSON))
	if err != nil {
		return nil, err
	}
	defer cancel()
	var r stepReader
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	var lerr error
	for sc.Scan() {
		if lerr == nil {
			lerr = r.add(sc.Bytes())
		}
	}
	werr := cmd.Wait()
	stderr.flush()
	trace.flush()
	if lerr != nil {
		return nil, fmt.Errorf("profile: the measurements' line: %w", lerr)
	}
	if werr != nil && ctx.Err() == nil && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 2 {
		return nil, fail.Usagef("profile: %s", cmp.Or(stderr.err, stderr.last)) // the exporter refused a flag
	}
	if r.meta == nil || r.graph == nil {
		if ctx.Err() != nil {
			return &Result{Kept: "nothing measured yet, nothing written"}, ctx.Err()
		}
		if run.Err() != nil {
			return nil, fmt.Errorf("profile --model %s: --budget %v spent while exporting: nothing measured, nothing written", m.Model, o.Budget)
		}
		why := stderr.last
		if werr != nil && trace.inTrace {
			why = trace.failure(werr)
		} else if werr != nil {
			why = strings.TrimSpace(werr.Error() + ": " + why)
		}
		return nil, fmt.Errorf("profile --model %s: nothing measured (%s)", m.Model, strings.TrimSuffix(why, ": "))
	}
	if r.steps == 0 {
		// Exported, nothing timed: no profile (one would price every op
		// by the roofline, and say measured nowhere).
		if ctx.Err() != nil {
			return &Result{Kept: "nothing timed yet, nothing written"}, ctx.Err()
		}
		if run.Err() != nil {
			return nil, fmt.Errorf("profile --model %s: --budget %v spent before the first profiled step: nothing measured, nothing written", m.Model, o.Budget)
		}
		if trace.inTrace {
			return nil, fmt.Errorf("profile --model %s: no step timed: %s", m.Model, trace.failure(werr))
		}
		return nil, fmt.Errorf("profile --model %s: no step timed (%v: %s)", m.Model, werr, stderr.last)
	}
	pr, err := r.profile(m.Model)
	if err != nil {
		return nil, err
	}
	pr.Ops.Warmup = m.Warmup
	pr.Complete = werr == nil && ctx.Err() == nil && pr.Ops.Steps == m.Steps
	data, err := json.MarshalIndent(pr, "", " ")
	if err != nil {
		return nil, err
	}
	if pr, err = profile.Decode(data); err != nil {
		return nil, fmt.Errorf("profile: what was measured does not read back: %w", err)
	}
	path, err := saveProfile(o.Out, append(data, '\n'), pr.Complete, o.Force)
	if err != nil {
		return nil, err
	}
	res := &Result{Profile: pr, Path: path}
	where := path
	if path != o.Out {
		where += "; " + o.Out + " is left as it was (--force replaces it)"
	}
	if ctx.Err() != nil {
		res.Kept = fmt.Sprintf("the %d of %d steps timed written to %s", pr.Ops.Steps, m.Steps, where)
		return res, ctx.Err()
	}
	switch {
	case werr != nil && run.Err() != nil:
		return res, fmt.Errorf("profile: --budget %v spent after %d of %d steps; they are in %s, complete false", o.Budget, pr.Ops.Steps, m.Steps, where)
	case werr != nil && trace.inTrace:
		return res, fmt.Errorf("profile: the measurements failed: %s; the %d steps they timed are in %s, complete false", trace.failure(werr), pr.Ops.Steps, where)
	case werr != nil:
		return res, fmt.Errorf("profile: the measurements stopped (%v); the %d steps they timed are in %s, complete false", werr, pr.Ops.Steps, where)
	}
	if path != o.Out && progress != nil {
		fmt.Fprintf(progress, "placer: %d of %d steps timed: written to %s\n", pr.Ops.Steps, m.Steps, where)
	}
	return res, nil
}

// writeScripts writes placer_torch's sources (its subpackages' in their
// folders) to dir/placer_torch, so that a python with dir on PYTHONPATH
// (pythonPath) runs them as modules (python -m placer_torch.opprofile),
// from an installed binary too.
func writeScripts(dir string) error {
	pkg := filepath.Join(dir, "placer_torch")
	return fs.WalkDir(placertorch.Files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(pkg, path), 0o755)
		}
		data, err := placertorch.Files.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(pkg, path), data, 0o644)
	})
}

// pythonPath is this process's environment with dirs first on PYTHONPATH,
// in order, those empty left out: where writeScripts put placer_torch,
// then a framework's folder (frameworkPath).
func pythonPath(dirs ...string) []string {
	return append(os.Environ(), "PYTHONPATH="+strings.Join(slices.DeleteFunc(append(dirs, os.Getenv("PYTHONPATH")), func(s string) bool { return s == "" }), string(os.PathListSeparator)))
}

// modelName is the graph's name for a model spec: the zoo name, or the
// factory's ("torchvision.models:resnet18": resnet18).
func modelName(spec string) string {
	if _, f, ok := strings.Cut(spec, ":"); ok && f != "" {
		return f
	}
	return spec
}

// stepReader gathers placer_torch.opprofile's lines: the meta, the
// graph, each profiled step's op times.
type stepReader struct {
	meta *struct {
		DType    string           `json:"dtype"`
		Device   profile.Device   `json:"device"`
		Software profile.Software `json:"software"`
	}
	batch int
	graph json.RawMessage
	gmeta json.RawMessage // the exporter's meta of the graph
	times [][]float64     // op -> its times, one a step that matched it
	disp  [][]float64
	steps int
}

func (r *stepReader) add(line []byte) error {
	var probe struct {
		Kind  string          `json:"kind"`
		Batch int             `json:"batch"`
		Graph json.RawMessage `json:"graph"`
		Meta  json.RawMessage `json:"meta"`
		Ops   [][3]float64    `json:"ops"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return err
	}
	switch probe.Kind {
	case "meta":
		r.meta = &struct {
			DType    string           `json:"dtype"`
			Device   profile.Device   `json:"device"`
			Software profile.Software `json:"software"`
		}{}
		return json.Unmarshal(line, r.meta)
	case "graph":
		r.batch, r.graph, r.gmeta = probe.Batch, probe.Graph, probe.Meta
	case "step":
		if r.graph == nil {
			return errors.New("a step before the graph")
		}
		r.steps++
		for _, t := range probe.Ops {
			i := int(t[0])
			if i < 0 || float64(i) != t[0] || i >= 1<<26 {
				return fmt.Errorf("op index %v", t[0])
			}
			for len(r.times) <= i {
				r.times, r.disp = append(r.times, nil), append(r.disp, nil)
			}
			r.times[i] = append(r.times[i], t[1])
			if t[2] >= 0 {
				r.disp[i] = append(r.disp[i], t[2])
			}
		}
	default:
		return fmt.Errorf("kind %q", probe.Kind)
	}
	return nil
}

// profile is the ops profile of what r gathered: the graph with each
// op's median time and dispatch time over the steps that matched it.
func (r *stepReader) profile(model string) (*profile.Profile, error) {
	g, err := graph.Read(bytes.NewReader(r.graph))
	if err != nil {
		return nil, fmt.Errorf("profile: the exported graph: %w", err)
	}
	if len(r.times) > g.NumOps() {
		return nil, fmt.Errorf("profile: a step timed op %d of a graph of %d", len(r.times)-1, g.NumOps())
	}
	times, disp := make([]float64, g.NumOps()), make([]float64, g.NumOps())
	for i := range times {
		times[i], disp[i] = -1, -1
		if i < len(r.times) && len(r.times[i]) > 0 {
			times[i] = hw.Median(r.times[i])
		}
		if i < len(r.disp) && len(r.disp[i]) > 0 {
			disp[i] = hw.Median(r.disp[i])
		}
	}
	if g, err = graph.WithTimes(g, times); err != nil {
		return nil, err
	}
	if g, err = graph.WithDispatch(g, disp); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := graph.Write(&buf, g); err != nil {
		return nil, err
	}
	return &profile.Profile{
		Format: profile.Format, Version: profile.Version, Kind: profile.KindOps,
		Device: r.meta.Device, Software: r.meta.Software, Model: model, DType: r.meta.DType,
		Ops: &profile.OpGraph{Batch: r.batch, Steps: r.steps, Graph: buf.Bytes(), Meta: r.gmeta},
	}, nil
}

// kinetoLine is a line torch.profiler's library (Kineto) logs on its own
// (USDT:, ERROR:, WARNING: with a date): not placer's progress.
var kinetoLine = regexp.MustCompile(`^(USDT|ERROR|WARNING|INFO):\d{4}-\d\d-\d\d `)

// quietWriter passes the measurements' stderr to w, line by line, but
// Kineto's own lines, and keeps the last line passed (the error of a run
// that failed).
type quietWriter struct {
	lineWriter
	w    io.Writer
	last string
	err  string // the measurements' own error line ("error: ..."), held back
}

// newQuietWriter is a quietWriter passing lines on to w (nil: none).
func newQuietWriter(w io.Writer) *quietWriter {
	q := &quietWriter{w: w}
	q.lineWriter.line = q.line
	return q
}

func (q *quietWriter) line(l []byte) {
	if kinetoLine.Match(l) {
		return
	}
	if e, ok := bytes.CutPrefix(l, []byte("error: ")); ok {
		q.err = strings.TrimSpace(string(e)) // placer prints it
		return
	}
	if s := strings.TrimSpace(string(l)); s != "" {
		q.last = strings.TrimPrefix(strings.TrimPrefix(s, "profile: "), "torchexport: ")
	}
	if q.w != nil {
		q.w.Write(l)
	}
}

// Line is placer profile's summary of the profile it wrote (r's
// Profile, to r's Path).
func Line(r *Result) string {
	out, pr := r.Path, r.Profile
	if g := pr.Graph(); g != nil {
		n, timed := 0, 0
		for i := range g.NumOps() {
			op := g.Op(i)
			if profile.StateOp(op) {
				continue
			}
			n++
			if op.HasTime {
				timed++
			}
		}
		return fmt.Sprintf("%s: %s at batch %d, %s, %d of %d ops measured over %d steps on %s %q (torch %s), complete %v",
			out, pr.Model, pr.Ops.Batch, pr.DType, timed, n, pr.Ops.Steps, pr.Device.Kind, pr.Device.Name, pr.Software.Torch, pr.Complete)
	}
	return fmt.Sprintf("%s: %d layer shapes, %d collectives on %d %s (%s), complete %v", out, len(pr.Layers), len(pr.Collectives), pr.Device.Count, pr.Device.Name, pr.Software.Backend, pr.Complete)
}
