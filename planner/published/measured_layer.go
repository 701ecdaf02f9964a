package published

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/lines"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// MeasuredLayer is one transformer block timed on one GPU: forward and
// backward of one micro-batch at a tensor-parallel shard, no
// communication (what Result.LayerForward + LayerBackward predict). Two
// files give them, one JSON object a line:
//   - ../shared/data/h100/layers-*.jsonl (layer.py): "row", "hidden",
//     "heads", "tp", "seq", "mbs", "layer_fwd_bwd_ms", and optionally
//     "head_fwd_bwd_ms" (the output layer and its cross-entropy);
//   - tools/measure/layerbench --json: "row", "workload", "strategy",
//     "measured_forward_ms", "measured_backward_ms".
type MeasuredLayer struct {
	Name     string
	Model    transformer.Spec
	Strategy plan.Strategy
	// Seconds is the block's forward and backward; Head the output
	// layer's and the cross-entropy's (0: not measured).
	Seconds, Head float64
	// Attention is the backend its attention ran with (layerbench's
	// "attention": "cudnn", "flash"); "" or "any" is torch's own choice,
	// the layers file's (torch 2.11's SDPA, which timed as cuDNN on an H100
	// and an H200: measurements/2026-11-26-h200/layerbench-any.jsonl), and
	// the pod's first kernel is taken for it.
	Attention string
}

// measuredLine is either file's line.
type measuredLine struct {
	Row      string   `json:"row"`
	Hidden   int      `json:"hidden"`
	Heads    int      `json:"heads"`
	TP       int      `json:"tp"`
	Seq      int      `json:"seq"`
	MBS      int      `json:"mbs"`
	Layer    *float64 `json:"layer_fwd_bwd_ms"`
	Head     *float64 `json:"head_fwd_bwd_ms"`
	Workload string   `json:"workload"`
	Strat    string   `json:"strategy"`
	Fwd      *float64 `json:"measured_forward_ms"`
	Bwd      *float64 `json:"measured_backward_ms"`
	Attn     string   `json:"attention"`
}

// measuredVocab is the vocabulary of the layers file's output layer
// (layer.py: Megatron-LM's weak-scaling table's, 131,072).
const measuredVocab = 131072

// ReadMeasuredLayers reads measured blocks, one JSON object a line
// (blank lines skipped). Errors name the line: a line of neither
// format, a shape the model cannot have, a time that is not positive.
func ReadMeasuredLayers(r io.Reader) ([]MeasuredLayer, error) {
	var out []MeasuredLayer
	err := lines.Each(r, func(n int, text string) error {
		l, err := readMeasured(text)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no measured layers")
	}
	return out, nil
}

func readMeasured(text string) (MeasuredLayer, error) {
	var l measuredLine
	if err := json.Unmarshal([]byte(text), &l); err != nil {
		return MeasuredLayer{}, err
	}
	positive := func(name string, v *float64) (float64, error) {
		if v == nil {
			return 0, fmt.Errorf("no %s", name)
		}
		if !(*v > 0) || math.IsInf(*v, 0) {
			return 0, fmt.Errorf("%s %v: want a time above 0", name, *v)
		}
		return *v / 1e3, nil
	}
	var m MeasuredLayer
	var err error
	switch {
	case l.Workload != "":
		if m.Model, err = transformer.Parse(l.Workload); err != nil {
			return MeasuredLayer{}, err
		}
		if m.Strategy, err = plan.ParseStrategy(l.Strat); err != nil {
			return MeasuredLayer{}, err
		}
		f, err := positive("measured_forward_ms", l.Fwd)
		if err != nil {
			return MeasuredLayer{}, err
		}
		b, err := positive("measured_backward_ms", l.Bwd)
		if err != nil {
			return MeasuredLayer{}, err
		}
		m.Seconds = f + b
	case l.Layer != nil:
		if l.Hidden <= 0 || l.Heads <= 0 || l.TP <= 0 || l.Seq <= 0 || l.MBS <= 0 {
			return MeasuredLayer{}, fmt.Errorf("hidden %d, heads %d, tp %d, seq %d, mbs %d: want each above 0", l.Hidden, l.Heads, l.TP, l.Seq, l.MBS)
		}
		// One block's time needs neither the layer count nor the
		// batch: one layer, one micro-batch.
		m.Model = transformer.GPT(1, l.Hidden, l.Heads, l.Seq, measuredVocab, l.MBS)
		m.Model.Tied = false
		if err := m.Model.Check(); err != nil {
			return MeasuredLayer{}, err
		}
		m.Strategy = plan.Strategy{Tensor: l.TP, Pipeline: 1, Replicas: 1, MicroBatchSize: l.MBS}
		if m.Seconds, err = positive("layer_fwd_bwd_ms", l.Layer); err != nil {
			return MeasuredLayer{}, err
		}
		if l.Head != nil {
			if m.Head, err = positive("head_fwd_bwd_ms", l.Head); err != nil {
				return MeasuredLayer{}, err
			}
		}
	default:
		return MeasuredLayer{}, errors.New(`neither "layer_fwd_bwd_ms" (layers file) nor "workload" (layerbench --json)`)
	}
	m.Name, m.Attention = l.Row, l.Attn
	if m.Name == "" {
		m.Name = m.Model.String()
	}
	if err := m.Strategy.Check(); err != nil {
		return MeasuredLayer{}, err
	}
	return m, nil
}

// LayerCheck is one measured block against placer's prediction of it.
type LayerCheck struct {
	Name string `json:"row"`
	// Measured and Predicted are the block's forward and backward,
	// seconds; Error Predicted/Measured - 1.
	Measured  float64 `json:"measured_s"`
	Predicted float64 `json:"predicted_s"`
	Error     float64 `json:"error"`
	// LeaveOneOut is the error of the prediction at the GEMM efficiency
	// fitted to the other blocks (FitGEMM; 0 unless fitted).
	LeaveOneOut float64 `json:"leave_one_out_error,omitempty"`
	// HeadMeasured and HeadPredicted are the output layer's and its
	// cross-entropy's forward and backward (0 when not measured).
	HeadMeasured  float64 `json:"head_measured_s,omitempty"`
	HeadPredicted float64 `json:"head_predicted_s,omitempty"`
}

// CheckLayers predicts each measured block on one node of pod p (its
// kernels alone: Result.LayerForward + LayerBackward) and, where
// measured, the output layer with its cross-entropy.
func CheckLayers(layers []MeasuredLayer, p plan.Pod) ([]LayerCheck, error) {
	// Timed in bursts on a rested GPU: predicted at the burst clock.
	g := planner.OneGPU{Pod: p.AtBurst()}
	out := make([]LayerCheck, len(layers))
	for i, l := range layers {
		block, head, err := g.Block(l.Model, l.Strategy, l.Attention)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name, err)
		}
		out[i] = LayerCheck{Name: l.Name, Measured: l.Seconds, Predicted: block}
		out[i].Error = out[i].Predicted/out[i].Measured - 1
		if l.Head > 0 {
			out[i].HeadMeasured, out[i].HeadPredicted = l.Head, head
		}
	}
	return out, nil
}

// GEMMFit is the GEMM efficiency (fraction of the BF16 tensor peak) that
// makes pod p's blocks closest to measured ones, every other kernel as
// the pod costs it.
type GEMMFit struct {
	// Eff minimises the sum over blocks of (predicted/measured - 1)^2.
	Eff float64 `json:"gemm_eff"`
	// Layers are the blocks at Eff, with each one's leave-one-out error.
	Layers []LayerCheck `json:"layers"`
}

// FitGEMM fits pod p's GEMM efficiency (its hardware's matmul class) to
// measured blocks. The error is smooth and has one minimum in the
// efficiency (each block's time is a GEMM part falling as 1/eff plus a
// part that does not move): a golden-section search over (0.05, 1]
// finds it to 1e-7.
func FitGEMM(layers []MeasuredLayer, p plan.Pod) (GEMMFit, error) {
	if len(layers) == 0 {
		return GEMMFit{}, errors.New("no measured layers")
	}
	p = p.AtBurst() // the blocks were timed in bursts
	fit := func(use []MeasuredLayer) (float64, error) {
		var failed error
		cost := func(eff float64) float64 {
			q := p
			q.Hardware.ComputeEff[graph.ClassMatMul] = eff
			checks, err := CheckLayers(use, q)
			if err != nil {
				failed = err
				return math.Inf(1)
			}
			var s float64
			for _, c := range checks {
				s += c.Error * c.Error
			}
			return s
		}
		eff := goldenMin(cost, 0.05, 1, 1e-7)
		return eff, failed
	}
	eff, err := fit(layers)
	if err != nil {
		return GEMMFit{}, err
	}
	q := p
	q.Hardware.ComputeEff[graph.ClassMatMul] = eff
	checks, err := CheckLayers(layers, q)
	if err != nil {
		return GEMMFit{}, err
	}
	if len(layers) > 1 {
		for i := range layers {
			rest := append(append([]MeasuredLayer(nil), layers[:i]...), layers[i+1:]...)
			e, err := fit(rest)
			if err != nil {
				return GEMMFit{}, err
			}
			r := p
			r.Hardware.ComputeEff[graph.ClassMatMul] = e
			one, err := CheckLayers(layers[i:i+1], r)
			if err != nil {
				return GEMMFit{}, err
			}
			checks[i].LeaveOneOut = one[0].Error
		}
	}
	return GEMMFit{Eff: eff, Layers: checks}, nil
}

// goldenMin is the x in [lo, hi] minimising f, unimodal there, to tol.
func goldenMin(f func(float64) float64, lo, hi, tol float64) float64 {
	g := (math.Sqrt(5) - 1) / 2
	a, b := lo, hi
	c, d := b-g*(b-a), a+g*(b-a)
	fc, fd := f(c), f(d)
	for b-a > tol {
		if fc <= fd {
			b, d, fd = d, c, fc
			c = b - g*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + g*(b-a)
			fd = f(d)
		}
	}
	return (a + b) / 2
}
