package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/bounded"
)

// Format and Version name the file's format (docs/profile.md): version
// 2 says what the profile holds (Kind); a version 1 file, which has no
// kind, is read as KindLayers.
const (
	Format  = "placer-profile"
	Version = 2
)

// The kinds of profile (Profile.Kind).
const (
	// KindLayers is a transformer's layers at shard shapes, its
	// collectives, optimizer and host (placer profile --workload).
	KindLayers = "layers"
	// KindOps is a model's training step as an op graph whose ops carry
	// the times measured on the device (placer profile --model).
	KindOps = "ops"
)

// Profile is one profile file.
type Profile struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Kind is KindLayers or KindOps (version 2; a version 1 file has
	// none and is read as KindLayers).
	Kind string `json:"kind,omitempty"`
	// Complete is false where the run was interrupted: what it measured
	// before is kept and valid, the rest missing.
	Complete bool     `json:"complete"`
	Device   Device   `json:"device"`
	Software Software `json:"software"`
	// Model is the workload profiled as placer names it
	// (transformer.Spec's String: "llama:layers=4,hidden=256,...") in a
	// layers profile; in an ops profile the model as placer profile
	// --model named it (a zoo name, package.module:factory).
	Model string `json:"model"`
	// DType is the precision the step ran in: "bf16" (autocast over
	// FP32 weights, on a GPU) or "fp32"; an ops profile's may be "tf32"
	// too (FP32 with TF32 matmuls and convolutions).
	DType       string       `json:"dtype"`
	Layers      []Layer      `json:"layers,omitempty"`
	Embedding   []Layer      `json:"embedding,omitempty"`
	Loss        []Layer      `json:"loss,omitempty"`
	Optimizer   *Optimizer   `json:"optimizer,omitempty"`
	Collectives []Collective `json:"collectives,omitempty"`
	Host        *Host        `json:"host,omitempty"`
	// Ops is an ops profile's graph (KindOps; nil in a layers profile).
	Ops *OpGraph `json:"ops,omitempty"`
	// Asked is what the run set out to measure of a layers profile
	// (nil in a file written before 2026-11-27, or an ops profile), so
	// that an incomplete one can say what it lacks (Missing).
	Asked *Asked `json:"asked,omitempty"`

	spec transformer.Spec
}

// OpGraph is a model's training step as placer profile --model measured
// it: the op graph the exporter recorded (docs/graph-format.md), each op
// it matched to a profiled event with its median time (time_s) and, on a
// GPU, its dispatch time (dispatch_s); the ops it could not match have
// none (the roofline prices them).
type OpGraph struct {
	// Batch is the step's batch size; Steps the profiled steps the
	// times are medians of (fewer than asked where the run was
	// interrupted), after Warmup unprofiled ones.
	Batch  int             `json:"batch"`
	Steps  int             `json:"steps"`
	Warmup int             `json:"warmup"`
	Graph  json.RawMessage `json:"graph"`
	// Meta is the exporter's meta file of the graph (tools/dev/torchexport's
	// X.meta.json: each op's module, the parameters, the train-mode
	// modules), which search realizes a decision with and export
	// --to torch-plan and module-map read; checked where it is used.
	Meta json.RawMessage `json:"meta,omitempty"`

	g *graph.Graph
}

// Graph is an ops profile's graph, read (nil in a layers profile).
func (p *Profile) Graph() *graph.Graph {
	if p.Ops == nil {
		return nil
	}
	return p.Ops.g
}

// StateOp is whether op, of an ops profile's graph, is the step's state
// (an input, a parameter, a buffer) or the optimizer's start marker: no
// kernel, never timed, so neither counted among the ops measured nor
// priced as one.
func StateOp(op *graph.Op) bool {
	switch op.Type {
	case "Input", "Parameter", "Buffer", "OptimizerStep", "Placeholder":
		return true
	}
	return false
}

// Device is the machine a profile ran on.
type Device struct {
	// Kind is "cuda" or "cpu"; Name the GPU's name (torch.cuda's
	// get_device_name) or the CPU's model.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Count is the processes the collectives ran over (GPUs, or gloo
	// processes on a CPU); Memory one device's memory, bytes (on a CPU
	// the host's divided by Count).
	Count  int   `json:"count"`
	Memory int64 `json:"memory_bytes"`
	// Threads is torch's intra-op threads a process (a CPU profile; 0 on
	// a GPU): a run predicted from the profile must use as many.
	Threads int `json:"threads,omitempty"`
	// Cores is the host's CPU cores.
	Cores int `json:"cores,omitempty"`
}

// Software is what ran the profile: the driver and CUDA ("" on a CPU),
// torch, the collectives' backend (nccl, gloo) and the framework whose
// layer was timed ("pytorch": placer_torch.profile.layers' plain
// PyTorch layer; "transformers", "torchtitan": that framework's own,
// placer profile --framework).
type Software struct {
	Driver    string `json:"driver,omitempty"`
	CUDA      string `json:"cuda,omitempty"`
	Torch     string `json:"torch"`
	Backend   string `json:"backend"`
	Framework string `json:"framework"`
	// FrameworkVersion is the framework's version where it is not
	// placer's own layer ("5.24.0"); Layer the class timed, module and
	// name ("transformers.models.llama.modeling_llama.LlamaDecoderLayer").
	FrameworkVersion string `json:"framework_version,omitempty"`
	Layer            string `json:"layer,omitempty"`
	// FP8 is what ran the layers measured under an FP8 recipe
	// (Layer.FP8): "transformer-engine VERSION" (its layers under
	// fp8_autocast) or "torchao-style ..." (placer_torch.profile.fp8's
	// tensorwise scaling through torch._scaled_mm); "" where none was.
	FP8 string `json:"fp8,omitempty"`
}

// TimedLayer is whose layer the profile timed where it is another
// framework's than placer's own ("torchtitan 0.2.2's TransformerBlock
// (torchtitan.models.llama3.model.model)"), "" for placer's own
// (framework "pytorch", every profile before --framework).
func (s Software) TimedLayer() string {
	if s.Framework == "" || s.Framework == "pytorch" {
		return ""
	}
	out := s.Framework
	if s.FrameworkVersion != "" {
		out += " " + s.FrameworkVersion
	}
	if s.Layer == "" {
		return out + "'s layer"
	}
	mod, name := "", s.Layer
	if i := strings.LastIndexByte(s.Layer, '.'); i >= 0 {
		mod, name = s.Layer[:i], s.Layer[i+1:]
	}
	out += "'s " + name
	if mod != "" {
		out += " (" + mod + ")"
	}
	return out
}

// Layer is one shard shape timed: one transformer layer (or the
// embedding, or the output layer with its loss) on one device for one
// micro-batch, its communication left out.
type Layer struct {
	// TP is the tensor-parallel degree of the shard, SP sequence
	// parallelism, MBS the micro-batch, Seq the sequence one rank holds
	// (the model's over the context-parallel degree), Recompute "none"
	// "full" (the backward recomputes the forward) or "selective" (it
	// recomputes the attention core: Megatron-Core's core_attn).
	TP int  `json:"tp"`
	SP bool `json:"sp,omitempty"`
	// EP is the expert-parallel degree of a model with experts' layer
	// (0 or 1: none): its experts/EP local experts, each the tokens it
	// gets from the EP ranks under forced balance.
	EP int `json:"ep,omitempty"`
	// ETP is the expert-tensor-parallel degree of a model with experts'
	// layer (0 or 1: none, what a file without it holds): each local
	// expert's FFN split over ETP ranks, the tokens gathered over them.
	ETP       int    `json:"etp,omitempty"`
	MBS       int    `json:"mbs"`
	Seq       int    `json:"seq"`
	Recompute string `json:"recompute,omitempty"`
	// Forward and Backward are seconds (medians of the timed runs),
	// Peak the device's peak memory over them, bytes (0: not read).
	Forward  float64 `json:"forward_s"`
	Backward float64 `json:"backward_s"`
	Peak     int64   `json:"peak_bytes,omitempty"`
	// ForwardInPlace and BackwardInPlace, where TP > 1 and the profile
	// had TP processes, are the same shard timed in place: each process
	// of a group of TP running its shard with the layer's own
	// tensor-parallel collectives (the runner's: layers.py), every group
	// at once, so that the times hold what the step pays for them
	// (waking, the partners' skew, the compute slowed beside them) and
	// not only the collectives' own (0: not timed).
	ForwardInPlace  float64 `json:"forward_inplace_s,omitempty"`
	BackwardInPlace float64 `json:"backward_inplace_s,omitempty"`
	// Block is which of the model's layers this is, in a model with
	// experts and dense layers before them (DeepSeek's
	// first_k_dense_replace): BlockDense one of the dense layers (the
	// MLP of the model's FFN, no experts), BlockMoE one with experts.
	// "": the model's own layer (a profile written before dense layers
	// were profiled: its MoE layer in a model with experts).
	Block string `json:"block,omitempty"`
	// FP8 is the FP8 recipe the layer's linears ran under ("current",
	// "delayed", "blockwise": a plan's fp8=), "" none (the profile's
	// dtype alone; every layer of a profile written before it).
	FP8 string `json:"fp8,omitempty"`
}

// The layers of a model with experts and dense layers before them
// (Layer.Block).
const (
	BlockDense = "dense"
	BlockMoE   = "moe"
)

// FP8Recipes are the recipes a layer may be measured under (Layer.FP8):
// a plan's fp8= values.
var FP8Recipes = []string{"current", "delayed", "blockwise"}

// Tokens is the tokens of one micro-batch the shape holds.
func (l Layer) Tokens() float64 { return float64(l.MBS) * float64(l.Seq) }

// Optimizer is the optimizer's step timed over Params parameters:
// Seconds for all of them.
type Optimizer struct {
	Name    string  `json:"name"`
	Params  int64   `json:"params"`
	Seconds float64 `json:"seconds"`
}

// PerParam is the step's time per parameter.
func (o Optimizer) PerParam() float64 { return o.Seconds / float64(o.Params) }

// The collectives a profile times (Collective.Op).
const (
	AllGather     = "all_gather"
	ReduceScatter = "reduce_scatter"
	AllReduce     = "all_reduce"
	AllToAll      = "all_to_all"
	SendRecv      = "send_recv"
)

var collectiveOps = []string{AllGather, ReduceScatter, AllReduce, AllToAll, SendRecv}

// Collective is one collective timed: Op over Group processes of one
// node, Bytes the whole buffer (an all-reduce's input, an all-gather's
// output, a reduce-scatter's input, what one process sends in all in
// an all-to-all or a send), Seconds its median. Wire is "" for the
// activations' collective as the runner issues it (on a CPU the FP32
// activation cast to BF16 and back), or WireFP32: an FP32 profile's
// gradients' and weights' all-reduce, all-gather or reduce-scatter,
// FP32 on the wire and nothing cast (CollectiveTimeWire).
type Collective struct {
	Op      string  `json:"op"`
	Group   int     `json:"group"`
	Bytes   float64 `json:"bytes"`
	Seconds float64 `json:"seconds"`
	Wire    string  `json:"wire,omitempty"`
}

// WireFP32 is Collective.Wire of a collective of FP32 tensors, uncast.
const WireFP32 = "fp32"

// Host is the host's issue of one kernel of a forward (Issue: an op
// recorded for autograd) and of a backward (IssueBwd: one node of the
// autograd engine), seconds.
type Host struct {
	Issue    float64 `json:"issue_s"`
	IssueBwd float64 `json:"issue_backward_s"`
}

// Asked counts what a layers profile's run set out to measure: its
// layer shapes (each FP8 recipe's counted apart), embedding and loss
// shapes, and collectives (0 with one process); one optimizer step and
// the host's issue besides.
type Asked struct {
	Layers      int `json:"layers"`
	Embedding   int `json:"embedding"`
	Loss        int `json:"loss"`
	Collectives int `json:"collectives"`
}

// Missing is what a layers profile lacks of what its run set out to
// measure, one phrase a part ("40 of 54 layer shapes", "the embedding",
// "the optimizer's step", "the collectives"), in the order the run
// measures them; nil where it lacks nothing (a complete profile, or an
// ops profile: its steps say how many were timed). A file without Asked
// (written before 2026-11-27) says only which parts it has none of, and
// that its layer shapes were cut short where it is incomplete.
func (p *Profile) Missing() []string {
	if p.Kind == KindOps || p.Complete {
		return nil
	}
	var out []string
	part := func(got, asked int, one, many string) {
		switch {
		case got >= asked:
		case got == 0:
			out = append(out, one)
		default:
			out = append(out, fmt.Sprintf("%d of %d %s", asked-got, asked, many))
		}
	}
	a := p.Asked
	if a == nil {
		// How many were asked is not known: 1 of each end, every
		// collective of a profile of several processes.
		a = &Asked{Embedding: 1, Loss: 1, Collectives: min(1, p.Device.Count-1)}
	}
	part(len(p.Embedding), a.Embedding, "the embedding", "embedding shapes")
	part(len(p.Loss), a.Loss, "the loss", "loss shapes")
	if p.Optimizer == nil {
		out = append(out, "the optimizer's step")
	}
	part(len(p.Collectives), a.Collectives, "the collectives", "collectives")
	switch {
	case p.Asked == nil:
		out = append(out, "layer shapes past the "+strconv.Itoa(len(p.Layers))+" measured (how many were asked is not recorded)")
	default:
		part(len(p.Layers), a.Layers, fmt.Sprintf("the %d layer shapes", a.Layers), "layer shapes")
	}
	return out
}

// Spec is the profiled model's shape (Model read).
func (p *Profile) Spec() transformer.Spec { return p.spec }

// Read reads and validates a profile. Its errors are one line: where the
// file is truncated or not JSON, the field that is missing or out of
// range.
func Read(r io.Reader) (*Profile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Decode(data)
}

// ReadFile is Read of the named file, its name in the errors.
func ReadFile(name string) (*Profile, error) {
	data, err := bounded.ReadFile(name, bounded.Decision, "a profile")
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	p, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	return p, nil
}

// Decode is Read of data.
func Decode(data []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		// Another file's fields (a graph, a cost table): say whose.
		var head struct {
			Format string `json:"format"`
		}
		if json.Unmarshal(data, &head) == nil && head.Format != Format {
			return nil, fmt.Errorf("format %q: want %q (placer profile writes it)", head.Format, Format)
		}
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("truncated after %d bytes (a profile run killed while writing? profiles are written whole: rerun placer profile)", len(data))
		case errors.As(err, &syn):
			return nil, fmt.Errorf("not JSON at byte %d: %v", syn.Offset, err)
		case errors.As(err, &typ):
			return nil, fmt.Errorf("field %s: %v", typ.Field, err)
		}
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

func (p *Profile) validate() error {
	if p.Format != Format {
		return fmt.Errorf("format %q: want %q", p.Format, Format)
	}
	switch {
	case p.Version == 1 && p.Kind == "":
		p.Kind = KindLayers
	case p.Version == 1:
		return fmt.Errorf("kind %q: a version 1 profile has none (it is a transformer's layers)", p.Kind)
	case p.Version != Version:
		return fmt.Errorf("version %d: this placer reads versions 1 and %d", p.Version, Version)
	case p.Kind != KindLayers && p.Kind != KindOps:
		return fmt.Errorf("kind %q: want %s or %s", p.Kind, KindLayers, KindOps)
	}
	switch p.Device.Kind {
	case "cuda", "cpu":
	default:
		return fmt.Errorf("device.kind %q: want cuda or cpu", p.Device.Kind)
	}
	if strings.TrimSpace(p.Device.Name) == "" {
		return errors.New("device.name: empty")
	}
	if p.Device.Count < 1 || p.Device.Count > 1<<16 {
		return fmt.Errorf("device.count %d: want at least 1", p.Device.Count)
	}
	if p.Device.Memory < 0 || p.Device.Threads < 0 || p.Device.Cores < 0 {
		return errors.New("device: memory_bytes, threads and cores must not be negative")
	}
	if p.Kind == KindOps {
		return p.validateOps()
	}
	if p.Software.Torch == "" || p.Software.Backend == "" || p.Software.Framework == "" {
		return errors.New("software: torch, backend and framework are required")
	}
	if p.Ops != nil {
		return errors.New("ops: in a layers profile")
	}
	if p.DType != "bf16" && p.DType != "fp32" {
		return fmt.Errorf("dtype %q: want bf16 or fp32", p.DType)
	}
	spec, err := transformer.Parse(p.Model)
	if err != nil {
		return fmt.Errorf("model: %v", err)
	}
	p.spec = spec
	if len(p.Layers) == 0 && p.Complete {
		return errors.New("layers: none, in a profile marked complete")
	}
	for name, ls := range map[string][]Layer{"layers": p.Layers, "embedding": p.Embedding, "loss": p.Loss} {
		for i, l := range ls {
			if err := l.validate(spec); err != nil {
				return fmt.Errorf("%s[%d]: %v", name, i, err)
			}
			if l.FP8 != "" && name != "layers" {
				return fmt.Errorf("%s[%d]: fp8 %q: a recipe covers the blocks' linears, not the embedding or the output layer", name, i, l.FP8)
			}
		}
	}
	if o := p.Optimizer; o != nil {
		if o.Params < 1 || !positive(o.Seconds) {
			return fmt.Errorf("optimizer: params %d, seconds %v: want both above 0", o.Params, o.Seconds)
		}
	}
	for i, c := range p.Collectives {
		if !slices.Contains(collectiveOps, c.Op) {
			return fmt.Errorf("collectives[%d]: op %q: want one of %s", i, c.Op, strings.Join(collectiveOps, ", "))
		}
		if c.Group < 2 || c.Group > p.Device.Count {
			return fmt.Errorf("collectives[%d]: group %d: want 2 to device.count %d", i, c.Group, p.Device.Count)
		}
		if !positive(c.Bytes) || !positive(c.Seconds) {
			return fmt.Errorf("collectives[%d]: bytes %v, seconds %v: want both above 0", i, c.Bytes, c.Seconds)
		}
		if c.Wire != "" && (c.Wire != WireFP32 || c.Op == AllToAll || c.Op == SendRecv) {
			return fmt.Errorf("collectives[%d]: wire %q of %s: want none, or %s of an all-reduce, all-gather or reduce-scatter", i, c.Wire, c.Op, WireFP32)
		}
	}
	if a := p.Asked; a != nil && (a.Layers < 0 || a.Embedding < 0 || a.Loss < 0 || a.Collectives < 0) {
		return fmt.Errorf("asked: layers %d, embedding %d, loss %d, collectives %d: want none negative", a.Layers, a.Embedding, a.Loss, a.Collectives)
	}
	if h := p.Host; h != nil && (!positive(h.Issue) || !positive(h.IssueBwd)) {
		return fmt.Errorf("host: issue_s %v, issue_backward_s %v: want both above 0", h.Issue, h.IssueBwd)
	}
	return nil
}

// validateOps validates an ops profile past the device: its software,
// model, precision and graph, and no layer, collective or host of a
// layers profile.
func (p *Profile) validateOps() error {
	if p.Software.Torch == "" || p.Software.Framework == "" {
		return errors.New("software: torch and framework are required")
	}
	if strings.TrimSpace(p.Model) == "" || len(p.Model) > 1000 || strings.ContainsAny(p.Model, "\n\r") {
		return fmt.Errorf("model %q: want the model's name on one line", p.Model)
	}
	if p.DType != "bf16" && p.DType != "fp32" && p.DType != "tf32" {
		return fmt.Errorf("dtype %q: want fp32, tf32 or bf16", p.DType)
	}
	if len(p.Layers)+len(p.Embedding)+len(p.Loss)+len(p.Collectives) > 0 || p.Optimizer != nil || p.Host != nil || p.Asked != nil {
		return errors.New("layers, embedding, loss, optimizer, collectives, host or asked: in an ops profile")
	}
	o := p.Ops
	if o == nil {
		return errors.New("ops: missing, in an ops profile")
	}
	if o.Batch < 1 || o.Batch > 1<<24 || o.Steps < 0 || o.Steps > 1<<20 || o.Warmup < 0 || o.Warmup > 1<<20 {
		return fmt.Errorf("ops: batch %d, steps %d, warmup %d: want a batch of at least 1", o.Batch, o.Steps, o.Warmup)
	}
	if o.Steps == 0 && p.Complete {
		return errors.New("ops: steps 0, in a profile marked complete")
	}
	if len(o.Meta) > 0 && o.Meta[0] != '{' {
		return errors.New("ops.meta: not a JSON object")
	}
	if len(o.Graph) == 0 {
		return errors.New("ops.graph: missing")
	}
	g, err := graph.Read(bytes.NewReader(o.Graph))
	if err != nil {
		return fmt.Errorf("ops.graph: %v", oneLine(err))
	}
	if g.NumOps() == 0 {
		return errors.New("ops.graph: no ops")
	}
	o.g = g
	return nil
}

// oneLine is err's text on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func (l Layer) validate(m transformer.Spec) error {
	if l.TP < 1 || l.MBS < 1 || l.Seq < 1 || l.TP > 1<<12 || l.MBS > 1<<20 || l.Seq > 1<<24 {
		return fmt.Errorf("tp %d, mbs %d, seq %d: want each at least 1", l.TP, l.MBS, l.Seq)
	}
	if m.Heads%l.TP != 0 {
		return fmt.Errorf("tp %d does not divide the model's %d heads", l.TP, m.Heads)
	}
	switch l.Recompute {
	case "", "none", "full", "selective":
	default:
		return fmt.Errorf("recompute %q: want none, full or selective", l.Recompute)
	}
	if l.SP && l.TP == 1 {
		return errors.New("sp without tensor parallelism (tp 1)")
	}
	if l.EP < 0 || l.EP > 1<<12 {
		return fmt.Errorf("ep %d: want at least 1 (0: none)", l.EP)
	}
	if l.EP > 1 && (m.Experts == 0 || m.Experts%l.EP != 0) {
		return fmt.Errorf("ep %d does not divide the model's %d experts", l.EP, m.Experts)
	}
	if err := l.validateBlock(m); err != nil {
		return err
	}
	if l.FP8 != "" && !slices.Contains(FP8Recipes, l.FP8) {
		return fmt.Errorf("fp8 %q: want one of %s (or none)", l.FP8, strings.Join(FP8Recipes, ", "))
	}
	if err := l.validateETP(m); err != nil {
		return err
	}
	if !positive(l.Forward) || !positive(l.Backward) {
		return fmt.Errorf("forward_s %v, backward_s %v: want both above 0", l.Forward, l.Backward)
	}
	if l.Peak < 0 {
		return fmt.Errorf("peak_bytes %d: negative", l.Peak)
	}
	if l.ForwardInPlace != 0 || l.BackwardInPlace != 0 {
		if l.TP == 1 && l.EP <= 1 && l.ETP <= 1 {
			return errors.New("forward_inplace_s, backward_inplace_s at tp 1 without expert parallelism (no collectives to time in place)")
		}
		if !positive(l.ForwardInPlace) || !positive(l.BackwardInPlace) {
			return fmt.Errorf("forward_inplace_s %v, backward_inplace_s %v: want both above 0, or neither", l.ForwardInPlace, l.BackwardInPlace)
		}
	}
	return nil
}

// validateETP refuses an expert-tensor degree out of range, or one
// that does not divide the model's expert FFN.
func (l Layer) validateETP(m transformer.Spec) error {
	if l.ETP < 0 || l.ETP > 1<<12 {
		return fmt.Errorf("etp %d: want at least 1 (0: none)", l.ETP)
	}
	if l.ETP > 1 && (m.Experts == 0 || m.ExpertFFN%l.ETP != 0) {
		return fmt.Errorf("etp %d does not divide the model's expert FFN of %d (experts %d)", l.ETP, m.ExpertFFN, m.Experts)
	}
	return nil
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 0) }

// AddLine adds one line of placer profile's measurements (placer_torch.profile.measure:
// one JSON object a line, "kind" meta, host, layer,
// embedding, loss, optimizer or collective) to p.
func (p *Profile) AddLine(line []byte) error {
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return err
	}
	switch probe.Kind {
	case "meta":
		var meta struct {
			DType    string   `json:"dtype"`
			Device   Device   `json:"device"`
			Software Software `json:"software"`
		}
		if err := json.Unmarshal(line, &meta); err != nil {
			return err
		}
		p.DType, p.Device, p.Software = meta.DType, meta.Device, meta.Software
	case "host":
		var h Host
		if err := json.Unmarshal(line, &h); err != nil {
			return err
		}
		p.Host = &h
	case "layer", "embedding", "loss":
		var l Layer
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		switch probe.Kind {
		case "layer":
			p.Layers = append(p.Layers, l)
		case "embedding":
			p.Embedding = append(p.Embedding, l)
		default:
			p.Loss = append(p.Loss, l)
		}
	case "optimizer":
		var o Optimizer
		if err := json.Unmarshal(line, &o); err != nil {
			return err
		}
		p.Optimizer = &o
	case "collective":
		var c Collective
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		p.Collectives = append(p.Collectives, c)
	default:
		return fmt.Errorf("kind %q", probe.Kind)
	}
	return nil
}

// Truncated is whether fewer than want layers were measured (a budget
// spent before the last shape).
func (p *Profile) Truncated(want int) bool { return len(p.Layers) < want }

// validateBlock checks l's block against model m: a dense layer only in
// a model with experts and dense layers before them, without expert
// parallelism (it has no experts); an MoE layer only in a model with
// experts.
func (l Layer) validateBlock(m transformer.Spec) error {
	switch l.Block {
	case "":
	case BlockMoE:
		if !m.MoE() {
			return fmt.Errorf("block %q in a model without experts", l.Block)
		}
	case BlockDense:
		if !m.MoE() || m.DenseLayers == 0 {
			return fmt.Errorf("block %q: the model has no dense layers before its experts", l.Block)
		}
		if l.EP > 1 {
			return fmt.Errorf("block %q at ep %d: a dense layer has no experts to split", l.Block, l.EP)
		}
		if l.ETP > 1 {
			return fmt.Errorf("block %q at etp %d: a dense layer has no experts to split", l.Block, l.ETP)
		}
	default:
		return fmt.Errorf("block %q: want %s or %s (none: the model's own layer)", l.Block, BlockDense, BlockMoE)
	}
	return nil
}
