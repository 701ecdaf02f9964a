package scale

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// MeasuredMoE is one part of an MoE layer besides its experts, timed on
// one GPU by kernelbench's moe section in plain PyTorch: Part is
// "router" (the GEMM to the experts' scores, softmax, top-k), "permute"
// (argsort and a gather of each token's TopK copies), "unpermute" (the
// copies weighted and summed back: index_add) or "host_sync" (the tokens
// per expert copied to the host, as the all-to-all dispatcher does), of
// Model (a transformer preset) at Tokens tokens. Fwd and Bwd are seconds
// (0 for host_sync, whose time is Seconds).
type MeasuredMoE struct {
	Model, Part string
	Tokens      int
	Fwd, Bwd    float64
	Seconds     float64
	spec        transformer.Spec // Model's preset
}

type moeLine struct {
	Kind    string   `json:"kind"`
	Name    string   `json:"name"`
	Error   string   `json:"error"`
	Model   string   `json:"model"`
	Hidden  int      `json:"hidden"`
	Experts int      `json:"experts"`
	TopK    int      `json:"topk"`
	Tokens  int      `json:"tokens"`
	Fwd     *float64 `json:"fwd_seconds"`
	Bwd     *float64 `json:"bwd_seconds"`
	Secs    *float64 `json:"seconds"`
}

// ReadMoEBench reads kernelbench's moe section (one JSON object a line;
// other sections' lines and failed cases skipped). Errors name the line:
// a model that is not a preset or whose shape is not the preset's, a
// part it does not know, a time that is not above 0.
func ReadMoEBench(r io.Reader) ([]MeasuredMoE, error) {
	var out []MeasuredMoE
	err := eachLine(r, func(n int, text string) error {
		var l moeLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if l.Kind != "moe" || l.Error != "" {
			return nil
		}
		m, ok := transformer.Preset(l.Model)
		if !ok {
			return fmt.Errorf("line %d (%s): model %q is not a preset (%s)", n, l.Name, l.Model, strings.Join(transformer.Presets(), ", "))
		}
		if l.Hidden != m.Hidden || l.Experts != m.Experts || l.TopK != m.TopK {
			return fmt.Errorf("line %d (%s): hidden %d, experts %d, topk %d: not %s's (%d, %d, %d)",
				n, l.Name, l.Hidden, l.Experts, l.TopK, l.Model, m.Hidden, m.Experts, m.TopK)
		}
		if l.Tokens <= 0 {
			return fmt.Errorf("line %d (%s): tokens %d: want above 0", n, l.Name, l.Tokens)
		}
		_, part, _ := strings.Cut(l.Name, ".")
		mm := MeasuredMoE{Model: l.Model, Part: part, Tokens: l.Tokens, spec: m}
		positive := func(name string, v *float64) (float64, error) {
			if v == nil {
				return 0, fmt.Errorf("line %d (%s): no %s", n, l.Name, name)
			}
			if !(*v > 0) || math.IsInf(*v, 0) {
				return 0, fmt.Errorf("line %d (%s): %s %v: want a time above 0", n, l.Name, name, *v)
			}
			return *v, nil
		}
		var err error
		switch part {
		case "router", "permute", "unpermute":
			if mm.Fwd, err = positive("fwd_seconds", l.Fwd); err != nil {
				return err
			}
			// A backward is the difference of two medians (kernelbench):
			// a tiny one can come out at or below 0; it is kept as 0.
			if l.Bwd == nil {
				return fmt.Errorf("line %d (%s): no bwd_seconds", n, l.Name)
			}
			mm.Bwd = max(0, *l.Bwd)
		case "host_sync":
			if mm.Seconds, err = positive("seconds", l.Secs); err != nil {
				return err
			}
		default:
			return fmt.Errorf("line %d (%s): part %q: want router, permute, unpermute or host_sync", n, l.Name, part)
		}
		out = append(out, mm)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MoECheck is one part of an MoE layer measured in plain PyTorch
// against what placer costs for it on pod p (moeGlue: fused,
// memory-bound kernels), forward and backward together, seconds.
// Predicted is 0 for what placer does not cost (host_sync).
type MoECheck struct {
	Model     string  `json:"model"`
	Part      string  `json:"part"`
	Tokens    int     `json:"tokens"`
	Measured  float64 `json:"measured_s"`
	Predicted float64 `json:"predicted_s"`
}

// CheckMoE costs each measured part on one GPU of pod p.
func CheckMoE(ms []MeasuredMoE, p *Pod) []MoECheck {
	out := make([]MoECheck, len(ms))
	for i, mm := range ms {
		router, scores, permute, unpermute := moeGlue(mm.spec, float64(mm.Tokens))
		t := func(k kernel) float64 { return k.time(&p.Hardware) }
		c := MoECheck{Model: mm.Model, Part: mm.Part, Tokens: mm.Tokens, Measured: mm.Fwd + mm.Bwd}
		switch mm.Part {
		case "router":
			c.Predicted = t(router) + t(scores) + 2*t(router) + t(twice(scores))
		case "permute":
			c.Predicted = t(permute) + t(twice(permute))
		case "unpermute":
			c.Predicted = t(unpermute) + t(twice(unpermute))
		case "host_sync":
			c.Measured = mm.Seconds
		}
		out[i] = c
	}
	return out
}
