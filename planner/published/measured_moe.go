package published

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/lines"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
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
	err := lines.Each(r, func(n int, text string) error {
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
// against what placer costs for it on pod p (planner.OneGPU.MoEGlue: fused,
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
func CheckMoE(ms []MeasuredMoE, p *plan.Pod) []MoECheck {
	// Timed in bursts on a rested GPU: predicted at the burst clock.
	g := planner.OneGPU{Pod: p.AtBurst()}
	out := make([]MoECheck, len(ms))
	for i, mm := range ms {
		router, permute, unpermute := g.MoEGlue(mm.spec, mm.Tokens)
		c := MoECheck{Model: mm.Model, Part: mm.Part, Tokens: mm.Tokens, Measured: mm.Fwd + mm.Bwd}
		switch mm.Part {
		case "router":
			c.Predicted = router
		case "permute":
			c.Predicted = permute
		case "unpermute":
			c.Predicted = unpermute
		case "host_sync":
			c.Measured = mm.Seconds
		}
		out[i] = c
	}
	return out
}

// MeasuredMoEHost is one whole MoE layer run eagerly on one GPU by
// kernelbench's moehost section: Model's router, the host sync of the
// tokens per expert, permute, LocalExperts SwiGLU experts (Mode "loop":
// one GEMM pair each; "grouped": torch._grouped_mm) over Tokens x TopK
// copies, and the weighted unpermutation, forward and backward. Wall is
// its wall time with the host (seconds, the GPU drained before and
// after); Busy the GPU's busy time from torch.profiler's device events
// and Kernels their count (0 where the run had no GPU).
type MeasuredMoEHost struct {
	Model, Mode   string
	Tokens        int
	LocalExperts  int
	Wall, WallFwd float64
	Busy          float64
	Kernels       int
	spec          transformer.Spec
}

type moeHostLine struct {
	Kind      string   `json:"kind"`
	Name      string   `json:"name"`
	Error     string   `json:"error"`
	Model     string   `json:"model"`
	Hidden    int      `json:"hidden"`
	FFN       int      `json:"ffn"`
	Experts   int      `json:"experts"`
	TopK      int      `json:"topk"`
	Local     int      `json:"local_experts"`
	Tokens    int      `json:"tokens"`
	Wall      *float64 `json:"wall_seconds"`
	WallFwd   *float64 `json:"wall_fwd_seconds"`
	Busy      *float64 `json:"kernel_seconds"`
	KernelsN  int      `json:"kernels"`
	BusyShare *float64 `json:"busy_share"`
}

// ReadMoEHostBench reads kernelbench's moehost section (other lines and
// failed cases skipped). Errors name the line: a model that is not a
// preset or whose shape is not the preset's, local experts that do not
// divide its experts, a mode it does not know, a wall time not above 0
// or below the forward's, a busy time that is not above 0.
func ReadMoEHostBench(r io.Reader) ([]MeasuredMoEHost, error) {
	var out []MeasuredMoEHost
	err := lines.Each(r, func(n int, text string) error {
		var l moeHostLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if l.Kind != "moehost" || l.Error != "" {
			return nil
		}
		m, ok := transformer.Preset(l.Model)
		if !ok {
			return fmt.Errorf("line %d (%s): model %q is not a preset (%s)", n, l.Name, l.Model, strings.Join(transformer.Presets(), ", "))
		}
		if l.Hidden != m.Hidden || l.Experts != m.Experts || l.TopK != m.TopK || l.FFN != m.ExpertFFN {
			return fmt.Errorf("line %d (%s): hidden %d, experts %d, topk %d, ffn %d: not %s's (%d, %d, %d, %d)",
				n, l.Name, l.Hidden, l.Experts, l.TopK, l.FFN, l.Model, m.Hidden, m.Experts, m.TopK, m.ExpertFFN)
		}
		_, mode, _ := strings.Cut(l.Name, ".")
		switch {
		case mode != "loop" && mode != "grouped":
			return fmt.Errorf("line %d (%s): mode %q: want loop or grouped", n, l.Name, mode)
		case l.Tokens <= 0:
			return fmt.Errorf("line %d (%s): tokens %d: want above 0", n, l.Name, l.Tokens)
		case l.Local <= 0 || m.Experts%l.Local != 0:
			return fmt.Errorf("line %d (%s): local_experts %d: want a divisor of the %d experts", n, l.Name, l.Local, m.Experts)
		case l.Wall == nil || l.WallFwd == nil || !(*l.WallFwd > 0) || !(*l.Wall > *l.WallFwd) || math.IsInf(*l.Wall, 0):
			return fmt.Errorf("line %d (%s): wall_seconds and wall_fwd_seconds: want times above 0, the whole layer's above its forward's", n, l.Name)
		case l.Busy != nil && (!(*l.Busy > 0) || math.IsInf(*l.Busy, 0) || l.KernelsN <= 0):
			return fmt.Errorf("line %d (%s): kernel_seconds %v over %d kernels: want a time above 0 and kernels", n, l.Name, *l.Busy, l.KernelsN)
		}
		h := MeasuredMoEHost{Model: l.Model, Mode: mode, Tokens: l.Tokens, LocalExperts: l.Local, Wall: *l.Wall, WallFwd: *l.WallFwd, spec: m}
		if l.Busy != nil {
			h.Busy, h.Kernels = *l.Busy, l.KernelsN
		}
		out = append(out, h)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MoEHostCheck is a whole eager MoE layer measured on one GPU against
// what placer costs for the same layer's kernels (the router, its glue
// and the grouped expert GEMMs at those tokens and local experts, BF16,
// no communication: planner.OneGPU.MoELayer), forward and backward, seconds.
// BusyShare is the GPU's busy time over the wall time (0 without a
// GPU's profile): well below 1, the layer waits on its host.
type MoEHostCheck struct {
	Model        string  `json:"model"`
	Mode         string  `json:"mode"`
	Tokens       int     `json:"tokens"`
	LocalExperts int     `json:"local_experts"`
	Wall         float64 `json:"wall_s"`
	Busy         float64 `json:"busy_s,omitempty"`
	Kernels      int     `json:"kernels,omitempty"`
	BusyShare    float64 `json:"busy_share,omitempty"`
	Predicted    float64 `json:"predicted_s"`
}

// CheckMoEHost costs each measured layer on one GPU of pod p.
func CheckMoEHost(ms []MeasuredMoEHost, p *plan.Pod) []MoEHostCheck {
	// Timed in bursts on a rested GPU: predicted at the burst clock.
	g := planner.OneGPU{Pod: p.AtBurst()}
	out := make([]MoEHostCheck, len(ms))
	for i, h := range ms {
		out[i] = MoEHostCheck{Model: h.Model, Mode: h.Mode, Tokens: h.Tokens, LocalExperts: h.LocalExperts, Wall: h.Wall,
			Busy: h.Busy, Kernels: h.Kernels, Predicted: g.MoELayer(h.spec, h.LocalExperts, h.Tokens)}
		if h.Busy > 0 {
			out[i].BusyShare = h.Busy / h.Wall
		}
	}
	return out
}
