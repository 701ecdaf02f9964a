package graph

import (
	"fmt"
	"slices"
)

// ExecutionVersion is the version of the execution object this placer
// reads and writes (docs/graph-format.md, "Execution settings").
const ExecutionVersion = 1

// Execution is how the framework runs the step the graph records, as the
// user states it when exporting (torchexport's --device, --optimizer-impl,
// --autocast, --tf32-*, --cudnn-rnn, --cuda-graphs, --compile): the
// graph's ops are already the ones that run (a fused optimizer's one op
// per group, autocast's casts and dtypes, one cuDNN RNN op); what the
// settings add is what placer's cost model takes from them: TF32 tensor
// cores for f32 matmuls and convolutions (roofline.Options.TF32 says how),
// and the host's dispatch under CUDA graphs and torch.compile
// (roofline.Host). A graph without one (Graph.Execution is nil) is costed
// as before: the hardware's AllowTF32, eager dispatch per op.
type Execution struct {
	// Device is the device kind the step was exported for: "cuda", "cpu",
	// or "" (not said).
	Device string
	// Optimizer is the optimizer's name ("adam", "adamw", "sgd"; "" not
	// said) and OptimizerImpl its implementation: "for-loop" (a few
	// kernels per parameter), "foreach" (multi-tensor: a few kernels per
	// group), "fused" (one kernel per group), or "".
	Optimizer     string
	OptimizerImpl string
	// OptimizerFrom is the index of the first op of the optimizer update:
	// the ops from it on, in the graph's order, are the update (the
	// exporter writes them last). 0: not said (an update is never the
	// whole graph).
	OptimizerFrom int
	// Autocast is torch.autocast's dtype: "bf16", "f16", or "" / "off".
	Autocast string
	// TF32MatMul is torch.backends.cuda.matmul.allow_tf32 (PyTorch's
	// default: false) and TF32CuDNN torch.backends.cudnn.allow_tf32 (its
	// default: true): f32 matmuls, and f32 convolutions, on TF32 tensor
	// cores.
	TF32MatMul bool
	TF32CuDNN  bool
	// CuDNNRNN says that LSTM and GRU layers are one cuDNN op forward and
	// one backward (what PyTorch runs on CUDA).
	CuDNNRNN bool
	// CUDAGraphs says that the user captures the whole step (forward,
	// backward and the optimizer update) in one CUDA graph and replays it.
	CUDAGraphs bool
	// Compile is torch.compile's mode for the model (its forward and
	// backward): "default", "reduce-overhead" (with CUDA graphs),
	// "max-autotune", or "" (eager).
	Compile string
	// GradScaler says that the update runs under
	// torch.cuda.amp.GradScaler.step, which reads its found-inf flags
	// with .item() before it calls optimizer.step(): the host waits there
	// for the GPU to finish the backward (and the gradients' all-reduce)
	// before it dispatches the update's first op. Needs OptimizerFrom.
	GradScaler bool
}

// Values the execution object's enumerations take ("" is always allowed:
// not said).
var (
	ExecDevices        = []string{"cuda", "cpu"}
	ExecOptimizerImpls = []string{"for-loop", "foreach", "fused"}
	ExecAutocasts      = []string{"off", "bf16", "f16"}
	ExecCompileModes   = []string{"default", "reduce-overhead", "max-autotune"}
)

// Execution returns the graph's execution settings, or nil when it has
// none. Read-only.
func (g *Graph) Execution() *Execution { return g.exec }

// SetExecution gives the graph execution settings (nil: none, the
// default). Build validates them.
func (b *Builder) SetExecution(e *Execution) {
	if e == nil {
		b.g.exec = nil
		return
	}
	c := *e
	b.g.exec = &c
}

// WithExecution returns g with execution settings e (nil: none); the rest
// is g's (shared: g is read-only).
func WithExecution(g *Graph, e *Execution) (*Graph, error) {
	ng := new(Graph)
	*ng = *g
	ng.exec = nil
	if e != nil {
		c := *e
		ng.exec = &c
		if err := ng.validateExec(); err != nil {
			return nil, err
		}
	}
	return ng, nil
}

// AutocastDType is the dtype autocast runs matmuls and convolutions in,
// and whether autocast is on.
func (e *Execution) AutocastDType() (DType, bool) {
	if e == nil {
		return F32, false
	}
	switch e.Autocast {
	case "bf16":
		return BF16, true
	case "f16":
		return F16, true
	}
	return F32, false
}

func (g *Graph) validateExec() error {
	e := g.exec
	if e == nil {
		return nil
	}
	check := func(field, v string, allowed []string) error {
		if v == "" || slices.Contains(allowed, v) {
			return nil
		}
		return &Error{Tensor: -1, Field: "execution." + field, Msg: fmt.Sprintf("%q: want one of %v", v, allowed)}
	}
	for _, c := range []struct {
		field, v string
		allowed  []string
	}{
		{"device", e.Device, ExecDevices},
		{"optimizer_impl", e.OptimizerImpl, ExecOptimizerImpls},
		{"autocast", e.Autocast, ExecAutocasts},
		{"compile", e.Compile, ExecCompileModes},
	} {
		if err := check(c.field, c.v, c.allowed); err != nil {
			return err
		}
	}
	if s := badName(e.Optimizer); e.Optimizer != "" && s != "" {
		return &Error{Tensor: -1, Field: "execution.optimizer", Msg: "optimizer name " + s}
	}
	if e.OptimizerFrom < 0 || e.OptimizerFrom >= len(g.ops) {
		return &Error{Tensor: -1, Field: "execution.optimizer_from", Msg: fmt.Sprintf("op index %d is out of range", e.OptimizerFrom)}
	}
	if e.GradScaler && e.OptimizerFrom == 0 {
		return &Error{Tensor: -1, Field: "execution.grad_scaler", Msg: "needs optimizer_from (the update's first op, where GradScaler.step waits for the GPU)"}
	}
	return nil
}

// fileExecution is the execution object in the native format.
type fileExecution struct {
	Version       int    `json:"version"`
	Device        string `json:"device,omitempty"`
	Optimizer     string `json:"optimizer,omitempty"`
	OptimizerImpl string `json:"optimizer_impl,omitempty"`
	OptimizerFrom string `json:"optimizer_from,omitempty"`
	Autocast      string `json:"autocast,omitempty"`
	TF32MatMul    bool   `json:"tf32_matmul,omitempty"`
	TF32CuDNN     bool   `json:"tf32_cudnn,omitempty"`
	CuDNNRNN      bool   `json:"cudnn_rnn,omitempty"`
	CUDAGraphs    bool   `json:"cuda_graphs,omitempty"`
	Compile       string `json:"compile,omitempty"`
	GradScaler    bool   `json:"grad_scaler,omitempty"`
}

// execKeys are fileExecution's keys in the fast decoder's numbering.
var execKeys = []string{"version", "device", "optimizer", "optimizer_impl", "optimizer_from", "autocast", "tf32_matmul", "tf32_cudnn", "cudnn_rnn", "cuda_graphs", "compile", "grad_scaler"}

func toFileExec(g *Graph) *fileExecution {
	e := g.exec
	if e == nil {
		return nil
	}
	f := &fileExecution{
		Version: ExecutionVersion, Device: e.Device, Optimizer: e.Optimizer, OptimizerImpl: e.OptimizerImpl,
		Autocast: e.Autocast, TF32MatMul: e.TF32MatMul, TF32CuDNN: e.TF32CuDNN, CuDNNRNN: e.CuDNNRNN,
		CUDAGraphs: e.CUDAGraphs, Compile: e.Compile, GradScaler: e.GradScaler,
	}
	if e.OptimizerFrom > 0 {
		f.OptimizerFrom = g.ops[e.OptimizerFrom].Name
	}
	return f
}

// fromFileExec is the Execution of f; lookup finds an op by name.
func fromFileExec(f *fileExecution, lookup func(string) (int, bool)) (*Execution, error) {
	if f.Version != ExecutionVersion {
		return nil, &Error{Tensor: -1, Field: "execution.version", Msg: fmt.Sprintf("%d is not supported (this placer reads version %d)", f.Version, ExecutionVersion)}
	}
	e := &Execution{
		Device: f.Device, Optimizer: f.Optimizer, OptimizerImpl: f.OptimizerImpl,
		Autocast: f.Autocast, TF32MatMul: f.TF32MatMul, TF32CuDNN: f.TF32CuDNN, CuDNNRNN: f.CuDNNRNN,
		CUDAGraphs: f.CUDAGraphs, Compile: f.Compile, GradScaler: f.GradScaler,
	}
	if f.OptimizerFrom != "" {
		i, ok := lookup(f.OptimizerFrom)
		if !ok {
			return nil, &Error{Tensor: -1, Field: "execution.optimizer_from", Msg: fmt.Sprintf("op %q does not exist", f.OptimizerFrom)}
		}
		if i == 0 {
			return nil, &Error{Tensor: -1, Field: "execution.optimizer_from", Msg: fmt.Sprintf("op %q is the graph's first op: an update is never the whole graph", f.OptimizerFrom)}
		}
		e.OptimizerFrom = i
	}
	return e, nil
}
