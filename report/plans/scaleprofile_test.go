package plans

import (
	"strings"
	"testing"

	"github.com/placer/placer/planner"
)

// A plan priced from a profile of another framework's layer says whose
// layer it was, in a row of its own; one priced from placer's own has
// no such row.
func TestProfileLayerRow(t *testing.T) {
	for _, c := range []struct {
		layer string
		want  []string // the row's words, in order (the table wraps them)
	}{
		{"transformers 5.24.0's LlamaDecoderLayer (transformers.models.llama.modeling_llama)",
			[]string{"profile's layer", "transformers 5.24.0's LlamaDecoderLayer", "not", "placer's own"}},
		{"", nil},
	} {
		var b strings.Builder
		p := ScalePlan{Strategy: "tp=1,pp=1,dp=2,mbs=1", DeviceKind: DeviceCPU, ProfileLayer: c.layer, Result: planner.Result{Step: 1}}
		if err := WriteScalePlan(&b, p); err != nil {
			t.Fatal(err)
		}
		got, rest := b.String(), b.String()
		for _, w := range c.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("layer %q: %s\nwant %q in its row", c.layer, got, w)
				break
			}
			rest = rest[i+len(w):]
		}
		if c.want == nil && strings.Contains(got, "profile's layer") {
			t.Errorf("placer's own layer: %s\nwant no profile's layer row", got)
		}
	}
}

// A plan whose FP8 layers come from the profile says what ran them
// there (the profile's software.fp8), with the plan's recipe; one
// without has no such row.
func TestProfileFP8Row(t *testing.T) {
	for _, c := range []struct {
		fp8, ran string
		want     []string
	}{
		{"current", "transformer-engine 2.9 (experts: GroupedLinear)",
			[]string{"profile's FP8 layers", "fp8=current as transformer-engine 2.9 (experts: GroupedLinear) ran them"}},
		{"current", "", nil},
	} {
		var b strings.Builder
		p := ScalePlan{Strategy: "tp=1,pp=1,dp=2,mbs=1,fp8=" + c.fp8, DeviceKind: DeviceCPU, ProfileFP8: c.ran, Result: planner.Result{Step: 1}}
		p.Plan.FP8 = c.fp8
		if err := WriteScalePlan(&b, p); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(strings.Fields(strings.NewReplacer("│", " ").Replace(b.String())), " ")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: %s\nwant %q", c.ran, got, w)
			}
		}
		if c.want == nil && strings.Contains(got, "profile's FP8 layers") {
			t.Errorf("no FP8 layers from the profile: %s\nwant no such row", got)
		}
	}
}
