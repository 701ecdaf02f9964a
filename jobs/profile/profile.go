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
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/internal/torchenv"
)

// Options are placer profile's.
type Options struct {
	Workload string // the model: llama:..., gpt:..., hf:config.json:...
	Out      string // the profile file
	Python   string // the torch virtualenv's python ("" = TorchPython())
	Device   string // auto (CUDA when present), cpu
	Procs    int    // processes for the collectives (0: every GPU; a CPU: 1)
	Threads  int    // torch threads a process on a CPU (default 1)
	// Budget bounds the whole run (default 5 minutes): shapes past it
	// are left out, in the order Shapes lists them.
	Budget time.Duration
	// TP, MBS, CP and Recompute are the shard shapes timed (nil: the
	// defaults of Shapes).
	TP, MBS, CP []int
	Recompute   []string
	// EP is the expert-parallel degrees timed in a model with experts
	// (nil: 1, 2, 4 and 8, those that divide the experts), at each of
	// its tensor-parallel degrees (TP; nil: 1) and expert-tensor degrees.
	EP []int
	// ETP is the expert-tensor-parallel degrees timed in a model with
	// experts (each expert's FFN split over ETP ranks; nil: 1 and each
	// tensor-parallel degree, Megatron-Core's default etp = tp).
	ETP []int
	// Repeats is the timed loops per shape (default 5).
	Repeats int
	// FP8 is the FP8 recipes (current, delayed, blockwise) each layer
	// shape is timed under too, beside the profile's dtype
	// (placer_torch/profile/fp8.py; nil: none).
	FP8 []string
	// Framework is whose layer --workload times (Frameworks: hf,
	// torchtitan, megatron; "": placer_torch.profile.layers' own).
	Framework string
	// Force lets an incomplete profile (interrupted, cut by the budget,
	// failed) replace an existing Out; without it, it goes to
	// PartialPath(Out) beside it.
	Force bool
	// ModelOptions are --model's (in place of Workload): a model's
	// training step profiled as an op graph.
	ModelOptions
}

// TorchPython is the python that runs placer's PyTorch tools, by
// torchenv's rule ($TORCH_PY, else ${XDG_CACHE_HOME:-~/.cache}/placer/
// torch-venv, what make deps builds), else python3.
func TorchPython() string {
	if p := torchenv.Python(); p != "" {
		return p
	}
	return "python3"
}

type shape struct {
	TP        int    `json:"tp"`
	SP        bool   `json:"sp,omitempty"`
	EP        int    `json:"ep,omitempty"`
	ETP       int    `json:"etp,omitempty"`
	MBS       int    `json:"mbs"`
	Seq       int    `json:"seq"`
	Recompute string `json:"recompute,omitempty"`
}

// Shapes is the shard shapes profiled for m: every tensor degree
// of tp that shards it (tpRefusal: its heads, key/value heads and FFN),
// with and without sequence parallelism
// (in a model with experts, expertDegrees: each tensor degree with
// sequence parallelism above 1, each expert-tensor degree, each
// expert-parallel degree that divides the experts; a micro-batch whose
// token copies do not split evenly over the experts left out), each
// micro-batch of mbs, the sequence over each context degree of cp,
// each recomputation setting; ordered so that a budget cut leaves the
// composition rules the most to work from (docs/profile.md): first each
// degree at the first micro-batch, whole sequence and no recomputation,
// then the other micro-batches, sequences and settings.
func Shapes(m transformer.Spec, tp, ep, mbs, cp []int, recompute []string) []shape {
	return ShapesETP(m, tp, nil, ep, mbs, cp, recompute)
}

// expertDegree is one tensor x expert-tensor x expert-parallel degree of
// a model with experts' layer.
type expertDegree struct{ T, X, E int }

// expertDegrees is the degrees profiled of a model with experts: each
// tensor degree of tp that shards it (tpRefusal: its heads, key/value
// heads, shared experts' FFN and dense layers' FFN), with each expert-tensor degree of etp (nil: 1 and the tensor
// degree, Megatron-Core's default expert_tensor_parallel_size = tp:
// core_v0.16.0 3bec9aa, megatron/core/parallel_state.py) that divides the
// expert FFN, with each expert-parallel degree of ep that divides the
// experts. Above tensor degree 1 the layer runs with sequence
// parallelism only: Megatron-Core's MoELayer.forward refuses training
// with tensor parallelism without it (megatron/core/transformer/moe/
// moe_layer.py, core_v0.16.0 3bec9aa).
func expertDegrees(m transformer.Spec, tp, etp, ep []int) []expertDegree {
	var out []expertDegree
	for _, T := range tp {
		if tpRefusal(m, T) != "" {
			continue
		}
		xs := etp
		if xs == nil {
			xs = []int{1}
			if T > 1 {
				xs = append(xs, T)
			}
		}
		for _, X := range xs {
			if X < 1 || m.ExpertFFN%X != 0 {
				continue
			}
			for _, E := range ep {
				if E >= 1 && m.Experts%E == 0 {
					out = append(out, expertDegree{T, X, E})
				}
			}
		}
	}
	return out
}

// tpRefusal is why tensor degree T cannot shard m's layer as eval runs
// it, "" where it can: T must divide the attention heads and the
// key/value heads (planner's Resolve refuses a plan whose tp does
// not, so a shape at it would never be read), and the FFN that layers.py
// splits over it: the dense MLP's (a model without experts, or the dense
// layers before them) and the shared experts'.
func tpRefusal(m transformer.Spec, T int) string {
	switch {
	case T < 1:
		return "want at least 1"
	case m.Heads%T != 0:
		return fmt.Sprintf("does not divide the model's %d attention heads", m.Heads)
	case cmp.Or(m.KVHeads, m.Heads)%T != 0:
		return fmt.Sprintf("does not divide the model's %d key/value heads (eval refuses tp=%d for it)", m.KVHeads, T)
	case (!m.MoE() || m.DenseLayers > 0) && m.FFN%T != 0:
		return fmt.Sprintf("does not divide the model's FFN of %d", m.FFN)
	case m.MoE() && m.SharedExperts*m.ExpertFFN%T != 0:
		return fmt.Sprintf("does not divide the model's shared experts' FFN of %d", m.SharedExperts*m.ExpertFFN)
	}
	return ""
}

// ShapesETP is Shapes with the expert-tensor degrees etp
// of a model with experts (expertDegrees; nil: its defaults).
func ShapesETP(m transformer.Spec, tp, etp, ep, mbs, cp []int, recompute []string) []shape {
	var out []shape
	seen := map[shape]bool{}
	add := func(s shape) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	type degree struct {
		T, E, X int
		sp      bool
	}
	var degrees []degree
	if m.MoE() {
		for _, x := range expertDegrees(m, tp, etp, ep) {
			d := degree{T: x.T, sp: x.T > 1}
			if x.E > 1 {
				d.E = x.E
			}
			if x.X > 1 {
				d.X = x.X
			}
			degrees = append(degrees, d)
		}
	} else {
		for _, T := range tp {
			if tpRefusal(m, T) != "" {
				continue
			}
			degrees = append(degrees, degree{T: T})
			if T > 1 {
				degrees = append(degrees, degree{T: T, sp: true})
			}
		}
	}
	for pass := range 3 {
		for _, d := range degrees {
			T, sp := d.T, d.sp
			{
				for i, b := range mbs {
					for j, c := range cp {
						for k, rc := range recompute {
							first := i == 0 && j == 0 && k == 0
							if (pass == 0) != first || pass == 1 && (j > 0 || k > 0) {
								continue
							}
							seq := m.Seq / c
							if c < 1 || m.Seq%c != 0 || sp && seq%T != 0 {
								continue
							}
							if m.MoE() && (b*seq/T*m.TopK)%m.Experts != 0 {
								continue // forced balance: a rank's token copies split evenly over the experts
							}
							add(shape{TP: T, SP: sp, EP: d.E, ETP: d.X, MBS: b, Seq: seq, Recompute: rc})
						}
					}
				}
			}
		}
	}
	return out
}

// startMeasurements starts py with args, the measurements of placer
// profile, and returns the command, its standard output, the context it
// runs under (its Err says whether timeout or ctx ended it) and the cancel
// that ends it (deferred by the caller). The command runs in its own
// process group, killed whole when timeout passes or ctx is cancelled
// (torch.multiprocessing's processes go with it), so that a terminal's
// SIGINT reaches placer alone, which keeps what was measured. env, where
// not nil, is the command's environment; stderr gets its progress.
func startMeasurements(ctx context.Context, timeout time.Duration, py string, env []string, stderr io.Writer,
	args ...string) (*exec.Cmd, io.Reader, context.Context, context.CancelFunc, error) {
	run, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(run, py, args...)
	cmd.Env = env
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, nil, nil, nil, fmt.Errorf("profile: %s: %w (set TORCH_PY or --python to a python with torch)", py, err)
	}
	go func() {
		select {
		case <-ctx.Done():
			cancel() // SIGINT: stop the measurements, keep what they sent
		case <-run.Done():
		}
	}()
	return cmd, out, run, cancel, nil
}

// profilable is nil where placer_torch.profile.layers builds m's layer as
// its family runs it (a Llama or GPT layer; experts as Mixtral's and
// Qwen3-MoE's, QK norm as Qwen3's, latent attention and the dense
// layers before the experts as DeepSeek's, sliding windows as Mistral's
// and GPT-OSS's, biases as Qwen2's and GPT-OSS's, group-limited and
// biased sigmoid routing as DeepSeek-V3's), else what it does not build.
func profilable(m transformer.Spec) error {
	c := m.Config
	switch {
	case m.Hybrid() || m.Mixed():
		// Nemotron-H's Mamba-2 blocks, Qwen3-Next's Gated DeltaNets: eval
		// and search cost them from the
		// pod's kernel rates (modelled) without a profile.
		return fmt.Errorf("pattern=%s, mixers=%s: Mamba-2 and Gated DeltaNet layers are not profiled (layers.py builds transformer blocks)", m.Pattern, m.Mixers)
	case m.MLA() && (c.QKVBias || c.LinearBias):
		return errors.New("biases with latent attention are not profiled (layers.py's latent projections have none)")
	case m.Act != "" || m.NormsPerBlock() != 2 || m.GlobalEvery > 0 || m.Chunk > 0:
		// Gemma 3's and Nemotron's layers: eval and search cost them from
		// the pod's kernel rates without a profile.
		return fmt.Errorf("the %s MLP, %d norms a block, global_every=%d and chunk=%d are not profiled (layers.py builds SwiGLU or GeLU MLPs, two norms, windows every N-th layer from the first)",
			cmp.Or(m.Act, "family's"), m.NormsPerBlock(), m.GlobalEvery, m.Chunk)
	case !m.MoE():
		return nil
	case c.RouterScore != "" && c.RouterScore != "softmax" && c.RouterScore != "sigmoid":
		return fmt.Errorf("router score %q is not profiled (layers.py scores by softmax or sigmoid)", c.RouterScore)
	case c.RouterGroups > 0 && c.RouterGroupK > 0 && (m.Experts%c.RouterGroups != 0 || c.RouterGroupK > c.RouterGroups ||
		m.TopK > c.RouterGroupK*(m.Experts/c.RouterGroups)):
		return fmt.Errorf("group-limited routing of %d groups, %d kept, top %d of %d experts: the groups do not hold the experts routed to",
			c.RouterGroups, c.RouterGroupK, m.TopK, m.Experts)
	}
	return nil
}

// checkFP8 refuses --fp8 recipes placer does not know, or one twice.
// A layer with biases or experts is measured as a dense one is
// (placer_torch/profile/fp8.py converts every linear but the router's
// and the experts' GEMMs); what the device cannot run, measure.py
// refuses in one line (refusal).
func checkFP8(recipes []string) error {
	for i, r := range recipes {
		if !slices.Contains(profile.FP8Recipes, r) {
			return fail.Usagef("--fp8 %q: want current, delayed or blockwise", r)
		}
		if slices.Contains(recipes[:i], r) {
			return fail.Usagef("--fp8 %s: named twice", r)
		}
	}
	return nil
}

// refusal is the measurements' one-line refusal where line is one
// (measure.py's {"kind": "refused"}: the device cannot run what was
// asked, --fp8's recipes), else "".
func refusal(line []byte) string {
	var r struct {
		Kind  string `json:"kind"`
		Error string `json:"error"`
	}
	if json.Unmarshal(line, &r) != nil || r.Kind != "refused" {
		return ""
	}
	if r.Error == "" {
		return "profile: the measurements refused without saying why"
	}
	return r.Error
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Run is placer profile: it checks every option, runs tools/
// profile's measurements in the torch virtualenv on the machine at hand
// for the workload, and writes what they measured (saveProfile: whole,
// to a temporary file renamed into place; an incomplete profile beside
// an existing o.Out rather than over it). The run's Path says where it
// went, Kept (on an interruption) what was kept. progress gets the
// measurements' progress lines; a Python traceback is held back, its
// last line said in the error and the whole of it kept in a log file.
func Run(ctx context.Context, o Options, progress io.Writer) (*Result, error) {
	start := time.Now()
	if o.Out == "" {
		return nil, fail.Usagef("--out: name the profile file")
	}
	if o.Model != "" {
		switch {
		case o.Workload != "":
			return nil, fail.Usagef("give --workload (a transformer's layers at shard shapes) or --model (a model's training step, op by op), not both")
		case o.TP != nil || o.MBS != nil || o.CP != nil || o.Recompute != nil || o.Procs != 0 || o.EP != nil || o.ETP != nil:
			return nil, fail.Usagef("--tp, --ep, --etp, --mbs, --cp, --recompute and --procs are --workload's: --model times the step it is given")
		case o.FP8 != nil:
			return nil, fail.Usagef("--fp8 is --workload's: --model times the step it is given at its --precision")
		case o.Framework != "":
			return nil, fail.Usagef("--framework is --workload's: --model times the model it is given")
		}
		return profileModel(ctx, o, progress)
	}
	if mo := o.ModelOptions; len(mo.InputShapes) > 0 || mo.Batch != 0 || mo.Precision != "" || mo.Loss != "" || mo.Optimizer != "" || mo.Steps != 0 || mo.Warmup != 0 {
		return nil, fail.Usagef("--input-shape, --batch, --precision, --loss, --optimizer, --steps and --warmup are --model's")
	}
	if o.Workload == "" {
		return nil, fail.Usagef("name what to profile: --model MODEL (a model's training step, op by op) or --workload llama:... (a transformer's layers at shard shapes)")
	}
	m, err := transformer.Parse(o.Workload)
	if err != nil {
		return nil, fail.Usagef("--workload: %v", err)
	}
	if err := checkFramework(m, &o); err != nil {
		return nil, err
	}
	if err := profilable(m); err != nil && o.Framework == "" {
		return nil, fail.Usagef("--workload %s: %v", m, err)
	}
	if err := checkProfileOptions(m, &o); err != nil {
		return nil, err
	}
	layers := withDense(m, ShapesETP(m, o.TP, o.ETP, o.EP, o.MBS, o.CP, o.Recompute))
	if len(layers) == 0 {
		// Every shape left out (with experts: no micro-batch whose token
		// copies split evenly over them).
		return nil, fail.Usagef("--tp %s, --mbs %s, --cp %s: no layer shape of %s to time (with experts, a micro-batch's tokens x topk must split evenly over the experts)",
			ints(o.TP), ints(o.MBS), ints(o.CP), m)
	}
	ends := []shape{}
	for _, s := range ShapesETP(m, o.TP, []int{1}, []int{1}, o.MBS[:1], []int{1}, []string{"none"}) {
		s.Recompute = ""
		ends = append(ends, s)
	}
	kv := m.KVHeads
	if kv == 0 {
		kv = m.Heads
	}
	params := transformer.LayerParams(m)
	req := map[string]any{
		"model": layerKeys(m, map[string]int{"layers": m.Layers, "hidden": m.Hidden, "heads": m.Heads, "kv_heads": kv, "ffn": m.FFN, "vocab": m.Vocab, "seq": m.Seq,
			"experts": m.Experts, "topk": m.TopK, "expert_ffn": m.ExpertFFN, "shared": m.SharedExperts, "qk_norm": b2i(m.Config.QKNorm)}),
		"device": o.Device, "procs": o.Procs, "threads": o.Threads, "budget_s": o.Budget.Seconds() * 0.9,
		// The budget counts from now: starting the processes and
		// importing torch is part of it (measure.py's deadline).
		"deadline": float64(start.UnixNano())/1e9 + o.Budget.Seconds()*0.9,
		"warmup":   1, "repeats": o.Repeats, "loop_s": 0.05,
		"layers": layers, "embeddings": ends, "losss": ends,
		"optimizer_params": params,
		"groups":           []int{2, 4, 8},
		"ops":              []string{profile.AllReduce, profile.AllGather, profile.ReduceScatter, profile.AllToAll, profile.SendRecv},
		"sizes":            []float64{1 << 16, 1 << 20, 1 << 24},
		"fp8":              slices.Concat([]string{}, o.FP8),
		"framework":        o.Framework,
	}
	reqJSON, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "placer-profile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := writeScripts(dir); err != nil {
		return nil, err
	}
	py := o.Python
	if py == "" {
		py = TorchPython()
	}
	stderr := newPyStderr(progress)
	cmd, out, run, cancel, err := startMeasurements(ctx, o.Budget+time.Minute, py, pythonPath(dir, frameworkPath(o.Framework)), stderr, "-m", "placer_torch.profile.measure", string(reqJSON))
	if err != nil {
		return nil, err
	}
	defer cancel()
	pr := &profile.Profile{Format: profile.Format, Version: profile.Version, Kind: profile.KindLayers, Model: m.String(),
		Asked: &profile.Asked{Layers: len(layers) * (1 + len(o.FP8)), Embedding: len(ends), Loss: len(ends)}}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var lerr error
	for sc.Scan() {
		if lerr != nil {
			continue // the rest read, so that the measurements do not block writing it
		}
		if why := refusal(sc.Bytes()); why != "" {
			_ = cmd.Wait()
			return nil, fail.Usagef("%s", why)
		}
		if lerr = pr.AddLine(sc.Bytes()); lerr != nil {
			lerr = fmt.Errorf("profile: the measurements' line %q: %w", bytes.TrimSpace(sc.Bytes()), lerr)
			continue
		}
		if n, ok := askedCollectives(sc.Bytes()); ok {
			pr.Asked.Collectives = n
			if w := crowded(pr.Device, runtime.NumCPU()); w != "" && progress != nil {
				fmt.Fprintf(progress, "placer: warning: %s\n", w)
			}
		}
	}
	werr := cmd.Wait()
	stderr.flush()
	if lerr != nil {
		return nil, lerr
	}
	res := outcome{interrupted: ctx.Err() != nil, ctxErr: ctx.Err(), werr: werr}
	if !res.interrupted && errors.Is(run.Err(), context.DeadlineExceeded) {
		res.timedOut = fmt.Sprintf("--budget %v (and a minute's grace) spent", o.Budget)
	}
	if werr != nil && !res.interrupted && res.timedOut == "" {
		res.failure = stderr.failure(werr)
	}
	pr.Complete = werr == nil && !res.interrupted && !pr.Truncated(pr.Asked.Layers)
	if !measuredAny(pr) {
		return res.nothing()
	}
	data, err := json.MarshalIndent(pr, "", " ")
	if err != nil {
		return nil, err
	}
	if _, err := profile.Decode(data); err != nil {
		return nil, fmt.Errorf("profile: what was measured does not read back: %w", err)
	}
	path, err := saveProfile(o.Out, append(data, '\n'), pr.Complete, o.Force)
	if err != nil {
		return nil, err
	}
	return res.saved(&Result{Profile: pr, Path: path}, o.Out, progress)
}

// checkProfileOptions checks o's options for m before anything runs,
// each refusal one line naming the flag and its value (exit 2), and
// fills in the defaults: the degrees, micro-batches and context degrees
// of the defaults that m can take; given ones that it cannot are
// refused (a degree eval refuses for m would be measured for nothing).
func checkProfileOptions(m transformer.Spec, o *Options) error {
	if m.MoE() {
		if o.TP == nil {
			o.TP = []int{1}
		}
		if o.EP == nil {
			// The defaults that divide the experts (8 with 4 experts
			// was refused as if given).
			o.EP = slices.DeleteFunc([]int{1, 2, 4, 8}, func(E int) bool { return m.Experts%E != 0 })
		}
		for _, E := range o.EP {
			if E < 1 || m.Experts%E != 0 {
				return fail.Usagef("--ep %d: want a degree that divides the %d experts", E, m.Experts)
			}
		}
		for _, X := range o.ETP {
			if X < 1 || m.ExpertFFN%X != 0 {
				return fail.Usagef("--etp %d: want a degree that divides the expert FFN of %d", X, m.ExpertFFN)
			}
		}
	} else if o.EP != nil || o.ETP != nil {
		return fail.Usagef("--ep, --etp: %s has no experts", m)
	}
	switch o.Device {
	case "", "auto", "cpu", "cuda":
	default:
		return fail.Usagef("--device %q: want auto, cpu or cuda", o.Device)
	}
	if o.Budget <= 0 {
		o.Budget = 5 * time.Minute
	}
	if o.Threads <= 0 {
		o.Threads = 1
	}
	if o.Repeats <= 0 {
		o.Repeats = 5
	}
	if o.Procs < 0 {
		return fail.Usagef("--procs %d: want at least 1 (0: every GPU, or 1 on a CPU)", o.Procs)
	}
	cpRefusal := func(C int) string {
		switch {
		case C < 1:
			return "want at least 1"
		case m.Seq%C != 0:
			return fmt.Sprintf("does not divide the model's sequence of %d", m.Seq)
		}
		return ""
	}
	mbsRefusal := func(B int) string {
		if B < 1 {
			return "want at least 1"
		}
		return ""
	}
	// Given values are each checked; the defaults keep those m takes.
	for _, l := range []struct {
		flag    string
		v       *[]int
		def     []int
		refusal func(int) string
	}{
		{"--tp", &o.TP, []int{1, 2, 4, 8}, func(T int) string { return tpRefusal(m, T) }},
		{"--mbs", &o.MBS, []int{1, 2, 4}, mbsRefusal},
		{"--cp", &o.CP, []int{1, 2}, cpRefusal},
	} {
		if *l.v == nil {
			*l.v = slices.DeleteFunc(slices.Clone(l.def), func(x int) bool { return l.refusal(x) != "" })
			continue
		}
		if len(*l.v) == 0 {
			return fail.Usagef("%s: name at least one", l.flag)
		}
		for _, x := range *l.v {
			if why := l.refusal(x); why != "" {
				return fail.Usagef("%s %d: %s", l.flag, x, why)
			}
		}
	}
	if o.Recompute == nil {
		o.Recompute = []string{"none", "full", "selective"}
	}
	for _, r := range o.Recompute {
		if r != "none" && r != "full" && r != "selective" {
			return fail.Usagef("--recompute %q: want none, full or selective", r)
		}
	}
	return checkFP8(o.FP8)
}

// ints is xs written as a flag takes them ("1,2,4").
func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// askedCollectives is the collectives the measurements will time, where
// line is their meta line (measure.py counts them once it knows its
// processes).
func askedCollectives(line []byte) (int, bool) {
	var meta struct {
		Kind        string `json:"kind"`
		Collectives int    `json:"collectives"`
	}
	if json.Unmarshal(line, &meta) != nil || meta.Kind != "meta" {
		return 0, false
	}
	return meta.Collectives, true
}

// measuredAny is whether pr holds a measurement beyond the machine's
// description and its host's issue (timed first, in a few milliseconds):
// a layer, the embedding, the loss, the optimizer or a collective.
func measuredAny(pr *profile.Profile) bool {
	return len(pr.Layers)+len(pr.Embedding)+len(pr.Loss)+len(pr.Collectives) > 0 || pr.Optimizer != nil
}
