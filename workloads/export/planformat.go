package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// The torch plan formats. `placer export --to torch-plan` writes one of
// two, and tools/dev/torchplan runs both, the file's "format" telling which
// (docs/torch-plan.md).
const (
	// TorchPlanFormat is a module placement cut into pipeline stages x
	// data-parallel replicas (TorchPlan; torchplan.py runs it).
	TorchPlanFormat  = "placer-torch-plan"
	TorchPlanVersion = 1
	// TransformerPlanFormat is a uniform transformer in tensor, pipeline
	// and data parallelism (TransformerPlan; megatron.py runs it).
	TransformerPlanFormat  = "placer-transformer-plan"
	TransformerPlanVersion = 1
	// A transformer plan written before it had a name of its own was
	// version 2 of TorchPlanFormat; it reads as TransformerPlanFormat.
	oldTransformerPlanVersion = 2
)

// Plan is a torch plan of either format.
type Plan interface {
	// PlanFormat is the plan's format name (TorchPlanFormat or
	// TransformerPlanFormat, whatever its file spelled).
	PlanFormat() string
	// Encode writes the plan as placer export does: indented JSON and a
	// newline.
	Encode() ([]byte, error)
}

// PlanFormat is one torch plan format: its name and version as its files
// spell them, the spellings of earlier files it also reads, and its
// reader.
type PlanFormat struct {
	Name    string
	Version int
	Old     []PlanSpelling
	Decode  func(data []byte) (Plan, error)
}

// PlanSpelling is a format name and version as a file spells them.
type PlanSpelling struct {
	Format  string
	Version int
}

// PlanFormats are the torch plan formats.
var PlanFormats = []PlanFormat{
	{Name: TorchPlanFormat, Version: TorchPlanVersion, Decode: func(data []byte) (Plan, error) {
		p, err := DecodeTorchPlan(data)
		if err != nil {
			return nil, err
		}
		return p, nil
	}},
	{Name: TransformerPlanFormat, Version: TransformerPlanVersion,
		Old: []PlanSpelling{{TorchPlanFormat, oldTransformerPlanVersion}},
		Decode: func(data []byte) (Plan, error) {
			p, err := DecodeTransformerPlan(data)
			if err != nil {
				return nil, err
			}
			return p, nil
		}},
}

// DetectPlan is the torch plan format of a file, from its "format" and
// "version": one of PlanFormats' names, or a one-line error naming the
// formats.
func DetectPlan(data []byte) (PlanFormat, error) {
	var probe struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return PlanFormat{}, graph.JSONError("torch plan", data, err)
	}
	var names []string
	for _, f := range PlanFormats {
		if probe.Format == f.Name && probe.Version == f.Version {
			return f, nil
		}
		for _, o := range f.Old {
			if probe.Format == o.Format && probe.Version == o.Version {
				return f, nil
			}
		}
		names = append(names, fmt.Sprintf("%s version %d", f.Name, f.Version))
	}
	return PlanFormat{}, fmt.Errorf("torch plan: format %q version %d is none of %s (placer export --to torch-plan)", probe.Format, probe.Version, strings.Join(names, ", "))
}

// DecodePlan reads a torch plan of either format.
func DecodePlan(data []byte) (Plan, error) {
	f, err := DetectPlan(data)
	if err != nil {
		return nil, err
	}
	return f.Decode(data)
}

// decodeStrict decodes data into v, every field known and nothing after.
func decodeStrict(what string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return graph.JSONError(what, data, err)
	}
	return graph.CheckEnd(what, data, dec)
}

// PlanFormat is TorchPlanFormat.
func (p *TorchPlan) PlanFormat() string { return p.Format }

// Encode writes the plan as placer export does.
func (p *TorchPlan) Encode() ([]byte, error) { return encodePlan(p) }

// PlanFormat is TransformerPlanFormat, or TorchPlanFormat in a file of
// the old spelling (version 2).
func (p *TransformerPlan) PlanFormat() string { return p.Format }

// Encode writes the plan as placer export does.
func (p *TransformerPlan) Encode() ([]byte, error) { return encodePlan(p) }

func encodePlan(p any) ([]byte, error) {
	out, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// DecodeTorchPlan reads a TorchPlanFormat plan and checks it as
// tools/dev/torchplan would: a positive number of replicas and
// micro-batches, a known schedule, stages numbered in order on distinct
// devices of the replica.
func DecodeTorchPlan(data []byte) (*TorchPlan, error) {
	const what = "torch plan"
	var p TorchPlan
	if err := decodeStrict(what, data, &p); err != nil {
		return nil, err
	}
	if p.Format != TorchPlanFormat || p.Version != TorchPlanVersion {
		return nil, fmt.Errorf("%s: format %q version %d, want %s version %d", what, p.Format, p.Version, TorchPlanFormat, TorchPlanVersion)
	}
	switch {
	case p.Replicas < 1 || p.MicroBatches < 1:
		return nil, fmt.Errorf("%s: replicas %d, micro_batches %d: want positive integers", what, p.Replicas, p.MicroBatches)
	case !knownSchedule(p.Schedule):
		return nil, fmt.Errorf("%s: schedule %q, want gpipe or 1f1b", what, p.Schedule)
	case p.Batch < 0:
		return nil, fmt.Errorf("%s: batch %d is negative", what, p.Batch)
	case p.Devices < 1 || p.GPUs != p.Replicas*p.Devices:
		return nil, fmt.Errorf("%s: gpus %d is not replicas x devices = %d x %d", what, p.GPUs, p.Replicas, p.Devices)
	case len(p.Stages) == 0:
		return nil, fmt.Errorf("%s: no stages", what)
	}
	used := map[int]bool{}
	for i, st := range p.Stages {
		if st.Stage != i {
			return nil, fmt.Errorf("%s: stages[%d] is stage %d", what, i, st.Stage)
		}
		if st.Device < 0 || st.Device >= p.Devices || used[st.Device] {
			return nil, fmt.Errorf("%s: stage %d: device %d is not a device of the replica's %d not used before", what, i, st.Device, p.Devices)
		}
		used[st.Device] = true
	}
	return &p, nil
}

// DecodeTransformerPlan reads a TransformerPlanFormat plan (or one of
// its old spelling, TorchPlanFormat version 2) and checks it as
// tools/dev/torchplan/megatron.py does, with its defaults (kv_heads = heads,
// ffn = 4 x hidden, tied, layernorm, gelu, micro_batch_size = batch /
// (replicas x micro_batches)): positive sizes, tensor dividing the heads,
// key/value heads, MLP width and vocabulary (and the sequence with
// sequence parallelism), tensor x pipeline x replicas GPUs, the batch
// replicas x micro-batches x micro-batch size, a known schedule, one
// stage a pipeline stage, their layers 0..L-1 in order, the embedding in
// the first stage and the output layer in the last.
func DecodeTransformerPlan(data []byte) (*TransformerPlan, error) {
	const what = "transformer plan"
	p := TransformerPlan{Transformer: TransformerSpec{Tied: true, Norm: "layernorm", Activation: "gelu"}}
	if err := decodeStrict(what, data, &p); err != nil {
		return nil, err
	}
	if !(p.Format == TransformerPlanFormat && p.Version == TransformerPlanVersion) &&
		!(p.Format == TorchPlanFormat && p.Version == oldTransformerPlanVersion) {
		return nil, fmt.Errorf("%s: format %q version %d, want %s version %d (or %s version %d)", what, p.Format, p.Version,
			TransformerPlanFormat, TransformerPlanVersion, TorchPlanFormat, oldTransformerPlanVersion)
	}
	m := &p.Transformer
	if m.KVHeads == 0 {
		m.KVHeads = m.Heads
	}
	if m.FFN == 0 {
		m.FFN = 4 * m.Hidden
	}
	T, P, D, M := p.Tensor, p.Pipeline, p.Replicas, p.MicroBatches
	if p.MicroBatchSize == 0 && D > 0 && M > 0 && m.Batch%(D*M) == 0 {
		p.MicroBatchSize = m.Batch / (D * M)
	}
	switch {
	case m.Layers < 1 || m.Hidden < 1 || m.Heads < 1 || m.KVHeads < 1 || m.FFN < 1 || m.Seq < 1 || m.Vocab < 1 || m.Batch < 1:
		return nil, fmt.Errorf("%s: transformer %+v: its sizes must be positive", what, *m)
	case m.Norm != "layernorm" && m.Norm != "rmsnorm":
		return nil, fmt.Errorf("%s: transformer.norm %q, want layernorm or rmsnorm", what, m.Norm)
	case m.Activation != "gelu" && m.Activation != "swiglu":
		return nil, fmt.Errorf("%s: transformer.activation %q, want gelu or swiglu", what, m.Activation)
	case T < 1 || P < 1 || D < 1 || M < 1:
		return nil, fmt.Errorf("%s: tensor %d, pipeline %d, replicas %d, micro_batches %d: want positive integers", what, T, P, D, M)
	case p.GPUs != 0 && p.GPUs != T*P*D:
		return nil, fmt.Errorf("%s: gpus %d is not tensor x pipeline x replicas = %d x %d x %d", what, p.GPUs, T, P, D)
	case m.Hidden%m.Heads != 0 || m.Heads%m.KVHeads != 0:
		return nil, fmt.Errorf("%s: hidden %d, heads %d, kv_heads %d: each must divide the one before", what, m.Hidden, m.Heads, m.KVHeads)
	case m.Heads%T != 0 || m.KVHeads%T != 0 || m.FFN%T != 0 || m.Vocab%T != 0:
		return nil, fmt.Errorf("%s: tensor %d does not divide heads %d, kv_heads %d, ffn %d and vocab %d", what, T, m.Heads, m.KVHeads, m.FFN, m.Vocab)
	case p.SequenceParallel && m.Seq%T != 0:
		return nil, fmt.Errorf("%s: sequence_parallel: tensor %d does not divide seq %d", what, T, m.Seq)
	case p.MicroBatchSize < 1 || D*M*p.MicroBatchSize != m.Batch:
		return nil, fmt.Errorf("%s: batch %d is not replicas x micro_batches x micro_batch_size = %d x %d x %d", what, m.Batch, D, M, p.MicroBatchSize)
	case !knownSchedule(string(p.Schedule)):
		return nil, fmt.Errorf("%s: schedule %q, want gpipe or 1f1b", what, p.Schedule)
	case len(p.Stages) != P:
		return nil, fmt.Errorf("%s: %d stages for pipeline %d", what, len(p.Stages), P)
	}
	if err := checkExperts(what, &p); err != nil {
		return nil, err
	}
	next := 0
	for i, st := range p.Stages {
		if st.Stage != i {
			return nil, fmt.Errorf("%s: stages[%d] is stage %d", what, i, st.Stage)
		}
		if st.Embedding != (i == 0) || st.Output != (i == P-1) {
			return nil, fmt.Errorf("%s: stage %d: the embedding must be in stage 0 only, the output layer in the last stage (%d) only", what, i, P-1)
		}
		for _, l := range st.Layers {
			if l != next {
				return nil, fmt.Errorf("%s: stage %d: layer %d, want %d (the stages' layers are 0..%d in order)", what, i, l, next, m.Layers-1)
			}
			next++
		}
	}
	if next != m.Layers {
		return nil, fmt.Errorf("%s: the stages hold %d layers, the transformer %d", what, next, m.Layers)
	}
	return &p, nil
}

// checkExperts checks a transformer plan's experts and their mesh
// (docs/torch-plan.md, "Experts"): none in a dense model; else top-k and
// dense layers within the model, and ETP x EP x EDP = T x D with EP
// dividing the experts and ETP the expert FFN (absent degrees: 1).
func checkExperts(what string, p *TransformerPlan) error {
	m := &p.Transformer
	if m.Experts == 0 {
		if m.TopK != 0 || m.ExpertFFN != 0 || m.DenseLayers != 0 || p.ExpertParallel > 1 || p.ExpertTensor > 1 || p.ExpertData > 0 {
			return fmt.Errorf("%s: topk, expert_ffn, dense_layers or an expert mesh without transformer.experts", what)
		}
		return nil
	}
	for _, v := range []*int{&p.ExpertParallel, &p.ExpertTensor} {
		if *v == 0 {
			*v = 1
		}
	}
	if p.ExpertData == 0 && p.ExpertParallel*p.ExpertTensor > 0 {
		p.ExpertData = p.Tensor * p.Replicas / (p.ExpertParallel * p.ExpertTensor)
	}
	EP, ETP, EDP := p.ExpertParallel, p.ExpertTensor, p.ExpertData
	switch {
	case m.Experts < 0 || m.TopK < 1 || m.TopK > m.Experts || m.ExpertFFN < 1 || m.DenseLayers < 0 || m.DenseLayers >= m.Layers:
		return fmt.Errorf("%s: experts %d, topk %d, expert_ffn %d, dense_layers %d: want 1 <= topk <= experts, expert_ffn >= 1 and a layer with experts",
			what, m.Experts, m.TopK, m.ExpertFFN, m.DenseLayers)
	case EP < 1 || ETP < 1 || EDP < 1 || ETP*EP*EDP != p.Tensor*p.Replicas:
		return fmt.Errorf("%s: expert_tensor %d x expert_parallel %d x expert_data %d is not tensor x replicas = %d x %d", what, ETP, EP, EDP, p.Tensor, p.Replicas)
	case m.Experts%EP != 0 || m.ExpertFFN%ETP != 0:
		return fmt.Errorf("%s: expert_parallel %d does not divide the %d experts, or expert_tensor %d the expert FFN %d", what, EP, m.Experts, ETP, m.ExpertFFN)
	}
	return nil
}

func knownSchedule(s string) bool {
	return s == string(decision.GPipe) || s == string(decision.OneFOneB)
}
