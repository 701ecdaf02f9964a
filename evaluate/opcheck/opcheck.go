package opcheck

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// Kind is what an op's cost depends on beyond its size: its class, the
// precision its arithmetic runs at (tf32 for an f32 matmul or convolution
// on TF32 tensor cores) and a variant the roofline costs apart.
type Kind struct {
	Class     string `json:"class"`
	Precision string `json:"precision"`
	// Variant: "depthwise" (a depthwise convolution, costed at its
	// measured rate per element), "serial" (an op of serial steps: a cuDNN
	// RNN), "backward" or "" (a forward op); a depthwise or serial op's
	// direction is in its variant's name ("depthwise-backward").
	Variant string `json:"variant,omitempty"`
}

func (k Kind) String() string {
	s := k.Class + " " + k.Precision
	if k.Variant != "" {
		s += " " + k.Variant
	}
	return s
}

// KindOf is op's kind under TF32 settings tf.
func KindOf(op *graph.Op, tf roofline.TF32) Kind {
	k := Kind{Class: op.Class.String(), Precision: op.DType.String()}
	if op.DType == graph.F32 && tf.For(op.Class) {
		k.Precision = "tf32"
	}
	var v []string
	switch {
	case op.DepthwiseTaps > 0:
		v = append(v, "depthwise")
	case op.GroupedFLOPs > 0:
		v = append(v, "grouped")
	case op.Steps > 0:
		v = append(v, "serial")
	}
	if op.Backward {
		v = append(v, "backward")
	}
	k.Variant = strings.Join(v, "-")
	return k
}

// Source is one profiled step the references are made from, a path
// relative to the checkout's root.
type Source struct {
	Name     string // what a report line calls it
	Path     string
	Hardware string // the preset of the GPU it was profiled on
}

// Sources are the profiled steps of measurements/ (fp32, eager PyTorch:
// tools/measure/fidelity's exports with measured kernel times).
var Sources = []Source{
	{"resnet50 b32 (H100)", "measurements/2026-11-26-h100/graphs/resnet50-b32-fp32.json", "h100"},
	{"resnet50 b8 (H100)", "measurements/2026-11-26-h100/graphs/resnet50-b8-fp32.json", "h100"},
	{"bert_base b16 (H100)", "measurements/2026-11-26-h100/graphs/bert_base-b16-fp32.json", "h100"},
	{"bert_base b4 (H100)", "measurements/2026-11-26-h100/graphs/bert_base-b4-fp32.json", "h100"},
	{"regnet_y_1_6gf b32 (H100)", "measurements/2026-11-26-h100-c/graphs/regnet_y_1_6gf-b32-fp32.json", "h100"},
	{"efficientnet_b0 b32 (H100)", "measurements/2026-11-26-h100-c/graphs/torchvision.models_efficientnet_b0-b32-fp32.json", "h100"},
	{"mobilenet_v3_large b32 (H100)", "measurements/2026-11-26-h100-c/graphs/torchvision.models_mobilenet_v3_large-b32-fp32.json", "h100"},
	{"lstm_lm b20 (H100)", "measurements/2026-11-26-h100-c/graphs/tools_fidelity_models.py_lstm_lm-b20-fp32.json", "h100"},
	{"gpt2_small b8 (H200)", "measurements/2026-11-26-h200-b/graphs/gpt2_small-b8-fp32.json", "h200"},
	{"resnet50 b32 (H200)", "measurements/2026-11-26-h200-b/graphs/resnet50-b32-fp32.json", "h200"},
}

// Reference is one profiled step's kinds: for each, its ops' measured
// kernel time and the roofline's time for the same ops.
type Reference struct {
	Name     string      `json:"name"`
	Path     string      `json:"path"`
	Hardware string      `json:"hardware"`
	Kinds    []KindTimes `json:"kinds"`
}

// KindTimes is one kind's ops in a reference.
type KindTimes struct {
	Kind
	Ops      int     `json:"ops"`
	Measured float64 `json:"measured_s"`
	Roofline float64 `json:"roofline_s"`
}

// Summarise makes the reference of profiled graph g (every op with a
// measured time; ops of class unknown and views are left out: the
// roofline does not cost them) on hardware preset hw.
func Summarise(s Source, g *graph.Graph) (Reference, error) {
	h, err := roofline.Preset(s.Hardware)
	if err != nil {
		return Reference{}, err
	}
	m, err := model(g, h)
	if err != nil {
		return Reference{}, err
	}
	tf := m.TF32()
	by := map[Kind]*KindTimes{}
	for i := 0; i < g.NumOps(); i++ {
		op := *g.Op(i)
		if !op.HasTime || op.Time <= 0 || op.Class == graph.ClassUnknown || op.Alias {
			continue
		}
		k := KindOf(&op, tf)
		t := by[k]
		if t == nil {
			t = &KindTimes{Kind: k}
			by[k] = t
		}
		t.Ops++
		t.Measured += op.Time
		op.HasTime, op.Time = false, 0
		t.Roofline += m.TimeOf(&op)
	}
	r := Reference{Name: s.Name, Path: s.Path, Hardware: s.Hardware}
	for _, t := range by {
		t.Measured = round(t.Measured)
		t.Roofline = round(t.Roofline)
		r.Kinds = append(r.Kinds, *t)
	}
	sort.Slice(r.Kinds, func(i, j int) bool { return r.Kinds[i].String() < r.Kinds[j].String() })
	return r, nil
}

// round keeps 9 significant digits, so that the file written on one
// machine is the file derived on another.
func round(x float64) float64 {
	if x == 0 {
		return 0
	}
	p := math.Pow(10, 8-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// model is the roofline model of g on one GPU of h, with the host
// modelled so that kernels are held their measured floor rather than a
// launch (the profiles time kernels, not launches).
func model(g *graph.Graph, h roofline.Hardware) (*roofline.Model, error) {
	c, err := roofline.NewCluster(h, 1, "")
	if err != nil {
		return nil, err
	}
	return roofline.NewModel(g, c, roofline.Options{Host: &roofline.Host{IgnoreProfile: true}})
}

//go:embed references.json
var referencesJSON []byte

// References are the embedded references.
func References() ([]Reference, error) {
	var refs []Reference
	if err := json.Unmarshal(referencesJSON, &refs); err != nil {
		return nil, fmt.Errorf("opcheck: the embedded references: %v", err)
	}
	return refs, nil
}

// MarshalReferences is the references file's text.
func MarshalReferences(refs []Reference) ([]byte, error) {
	b, err := json.MarshalIndent(refs, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
