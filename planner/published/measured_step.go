package published

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/placer/placer/internal/lines"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// MeasuredStep is one GPU's whole training step of a Megatron H100 row,
// measured without communication (tools/measure/kernelbench, section between):
// MicroBatches micro-batches of the row's embedding, its layers at their
// tensor-parallel shard (the collectives stood in for), its output layer
// and FP32 cross-entropy, forward and backward, the gradients
// accumulated; no optimizer. Beside it, from the same run: one block
// alone, the output layer with its cross-entropy alone, the embedding
// alone, and Adam over a distributed optimizer's shard of the row.
type MeasuredStep struct {
	Row          string
	MicroBatches int
	Layers       int
	// Seconds is the whole step; Block one block's forward and backward;
	// Head the output layer's and cross-entropy's; Embedding the
	// lookup's and its gradient's. 0: not measured.
	Seconds, Block, Head, Embedding float64
	// Adam is fused Adam's step over AdamParams FP32 parameters (the
	// row's share of one GPU's parameters under the distributed
	// optimizer). 0: not measured.
	Adam       float64
	AdamParams float64
	// Attention is the backend the blocks' attention ran with
	// (kernelbench --attention; "" or "any": PyTorch's choice, the pod's
	// first kernel: MeasuredLayer.Attention).
	Attention string
}

// kernelLine is the part of a kernelbench line ReadMeasuredSteps reads.
type kernelLine struct {
	Kind   string   `json:"kind"`
	Name   string   `json:"name"`
	Error  string   `json:"error"`
	Secs   *float64 `json:"seconds"`
	Fwd    *float64 `json:"fwd_seconds"`
	Bwd    *float64 `json:"bwd_seconds"`
	Both   *float64 `json:"fwd_bwd_seconds"`
	BlockF *float64 `json:"block_fwd_seconds"`
	BlockB *float64 `json:"block_bwd_seconds"`
	MB     int      `json:"micro_batches"`
	Layers int      `json:"layers"`
	Params float64  `json:"params"`
	Attn   string   `json:"attention"`
}

// ErrNoSteps is ReadMeasuredSteps's error for a file without whole steps.
var ErrNoSteps = errors.New("no measured steps (kernelbench's between section)")

// ReadMeasuredSteps reads the between section of a kernelbench file (one
// JSON object a line; other sections' lines and lines that record a
// failed case are skipped) into one MeasuredStep a row, in the order of
// MegatronTable. A row must be one of that table's and have its whole
// step measured.
func ReadMeasuredSteps(r io.Reader) ([]MeasuredStep, error) {
	byRow := map[string]*MeasuredStep{}
	err := lines.Each(r, func(n int, text string) error {
		var l kernelLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if l.Kind != "between" || l.Error != "" {
			return nil
		}
		row, part := splitPart(l.Name)
		if row == "" {
			return nil // a part this reader does not take (adam.foreach)
		}
		s := byRow[row]
		if s == nil {
			s = &MeasuredStep{Row: row, Attention: l.Attn}
			byRow[row] = s
		}
		if l.Attn != s.Attention {
			return fmt.Errorf("line %d (%s): attention %q, the row's other lines %q", n, l.Name, l.Attn, s.Attention)
		}
		return s.addPart(n, l, part)
	})
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	for i, r := range MegatronTable() {
		order[r.Name] = i
	}
	var out []MeasuredStep
	for name, s := range byRow {
		if _, ok := order[name]; !ok {
			return nil, fmt.Errorf("row %q: not a row of Megatron-LM's H100 table", name)
		}
		if s.Seconds == 0 {
			return nil, fmt.Errorf("row %s: no whole step (%s.step) measured", name, name)
		}
		out = append(out, *s)
	}
	if len(out) == 0 {
		return nil, ErrNoSteps
	}
	sort.Slice(out, func(i, j int) bool { return order[out[i].Row] < order[out[j].Row] })
	return out, nil
}

// addPart sets what line n, l, measured of the step's part: the whole
// step (with its blocks, micro-batches and layers), the output layer
// with the loss, the embedding, or the fused Adam step (with its
// parameters); a time must be above 0.
func (s *MeasuredStep) addPart(n int, l kernelLine, part string) error {
	get := func(name string, v *float64) (float64, error) {
		if v == nil {
			return 0, fmt.Errorf("line %d (%s): no %s", n, l.Name, name)
		}
		if !(*v > 0) || math.IsInf(*v, 0) {
			return 0, fmt.Errorf("line %d (%s): %s %v: want a time above 0", n, l.Name, name, *v)
		}
		return *v, nil
	}
	pair := func() (float64, error) {
		if l.Both != nil { // timed together (kernelbench since 2026-11-26)
			return get("fwd_bwd_seconds", l.Both)
		}
		f, err := get("fwd_seconds", l.Fwd)
		if err != nil {
			return 0, err
		}
		b, err := get("bwd_seconds", l.Bwd)
		return f + b, err
	}
	var err error
	switch part {
	case "step":
		if s.Seconds, err = get("seconds", l.Secs); err != nil {
			return err
		}
		f, err := get("block_fwd_seconds", l.BlockF)
		if err != nil {
			return err
		}
		b, err := get("block_bwd_seconds", l.BlockB)
		if err != nil {
			return err
		}
		s.Block = f + b
		if l.MB <= 0 || l.Layers <= 0 {
			return fmt.Errorf("line %d (%s): micro_batches %d, layers %d: want each above 0", n, l.Name, l.MB, l.Layers)
		}
		s.MicroBatches, s.Layers = l.MB, l.Layers
	case "output-layer+cross-entropy":
		if s.Head, err = pair(); err != nil {
			return err
		}
	case "embedding":
		if s.Embedding, err = pair(); err != nil {
			return err
		}
	case "adam.fused":
		if s.Adam, err = get("seconds", l.Secs); err != nil {
			return err
		}
		if !(l.Params > 0) || math.IsInf(l.Params, 0) {
			return fmt.Errorf("line %d (%s): params %v: want a count above 0", n, l.Name, l.Params)
		}
		s.AdamParams = l.Params
	}
	return nil
}

// betweenParts are the between section's parts ReadMeasuredSteps reads.
var betweenParts = []string{"step", "output-layer+cross-entropy", "embedding", "adam.fused"}

// splitPart splits a between line's name, ROW.PART, where the row's name
// may hold dots (7.1B); "" for a part not in betweenParts.
func splitPart(name string) (row, part string) {
	for _, p := range betweenParts {
		if r, ok := strings.CutSuffix(name, "."+p); ok && r != "" {
			return r, p
		}
	}
	return "", ""
}

// StepCheck is one measured step against the pod's prediction of the
// same work on one GPU (no communication, no optimizer), and its parts.
// Times in seconds; a part not measured is 0 on both sides.
type StepCheck struct {
	Row          string  `json:"row"`
	MicroBatches int     `json:"micro_batches"`
	Layers       int     `json:"layers"`
	Measured     float64 `json:"measured_s"`
	Predicted    float64 `json:"predicted_s"`
	Error        float64 `json:"error"`
	// Blocks is MicroBatches x Layers blocks, measured one at a time;
	// Between what the step has besides them (the step less Blocks),
	// predicted as the embedding, the output layer and the
	// cross-entropy, and Accumulate: plain PyTorch's addition of each
	// micro-batch's gradients (part of BetweenPredicted).
	BlocksMeasured   float64 `json:"blocks_measured_s"`
	BlocksPredicted  float64 `json:"blocks_predicted_s"`
	BetweenMeasured  float64 `json:"between_measured_s"`
	BetweenPredicted float64 `json:"between_predicted_s"`
	Accumulate       float64 `json:"accumulate_predicted_s"`
	// Head, Embedding: one micro-batch's, forward and backward. Adam:
	// the optimizer's update of AdamParams FP32 parameters.
	HeadMeasured       float64 `json:"head_measured_s,omitempty"`
	HeadPredicted      float64 `json:"head_predicted_s,omitempty"`
	EmbeddingMeasured  float64 `json:"embedding_measured_s,omitempty"`
	EmbeddingPredicted float64 `json:"embedding_predicted_s,omitempty"`
	AdamParams         float64 `json:"adam_params,omitempty"`
	AdamMeasured       float64 `json:"adam_measured_s,omitempty"`
	AdamPredicted      float64 `json:"adam_predicted_s,omitempty"`
}

// CheckSteps predicts each measured step on one GPU of pod p: the row's
// blocks at its tensor-parallel shard (micro-batch 1, sequence
// parallelism where TP > 1), its embedding and its output layer with the
// cross-entropy, each micro-batch forward and backward, no
// communication; and Adam's update as the optimizer step costs it (FP32
// gradient, master weight and two moments read, the three written; the
// BF16 copy and the gradient buffer's zeroing, which kernelbench does
// not run, left out).
func CheckSteps(steps []MeasuredStep, p plan.Pod) ([]StepCheck, error) {
	rows := map[string]Row{}
	for _, r := range MegatronTable() {
		rows[r.Name] = r
	}
	// Timed in bursts on a rested GPU: predicted at the burst clock.
	g := planner.OneGPU{Pod: p.AtBurst()}
	out := make([]StepCheck, len(steps))
	for i, s := range steps {
		row, ok := rows[s.Row]
		if !ok {
			return nil, fmt.Errorf("row %q: not a row of Megatron-LM's H100 table", s.Row)
		}
		parts, err := g.Step(row.Model, row.Strategy.Tensor, s.Layers, s.Attention)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Row, err)
		}
		M, L := float64(s.MicroBatches), float64(s.Layers)
		// Plain PyTorch adds each micro-batch's BF16 gradients into
		// those already there (kernelbench times the step repeatedly, so
		// every micro-batch does): parts.Accumulate.
		chk := StepCheck{Row: s.Row, MicroBatches: s.MicroBatches, Layers: s.Layers, Measured: s.Seconds,
			BlocksMeasured: M * L * s.Block, BlocksPredicted: M * L * parts.Block,
			BetweenPredicted: M * (parts.Head + parts.Embedding + parts.Accumulate), Accumulate: M * parts.Accumulate}
		chk.BetweenMeasured = chk.Measured - chk.BlocksMeasured
		chk.Predicted = chk.BlocksPredicted + chk.BetweenPredicted
		chk.Error = chk.Predicted/chk.Measured - 1
		if s.Head > 0 {
			chk.HeadMeasured, chk.HeadPredicted = s.Head, parts.Head
		}
		if s.Embedding > 0 {
			chk.EmbeddingMeasured, chk.EmbeddingPredicted = s.Embedding, parts.Embedding
		}
		if s.Adam > 0 {
			chk.AdamParams, chk.AdamMeasured = s.AdamParams, s.Adam
			chk.AdamPredicted = g.Adam(s.AdamParams)
		}
		out[i] = chk
	}
	return out, nil
}
