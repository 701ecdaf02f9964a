package scale

import (
	"reflect"
	"testing"
)

// TestWithoutSource: a pod without source A has every constant chosen
// with A at its value without it, by hand, and names them; a constant of
// other sources keeps its value; a source that chose nothing leaves the
// pod as it was. A margin reset to 0 is NoMemoryMargin (the zero value
// would be the default's 6%).
func TestWithoutSource(t *testing.T) {
	tuned := []TunedConstant{
		{Name: "NICEff", Value: 0.94, Without: 1, Sources: []string{"a", "b"}, Set: func(p *Pod, v float64) { p.Kernels.NICEff = v }},
		{Name: "OverlapSlowdown", Value: 0.189, Without: 0, Sources: []string{"b"}, Set: func(p *Pod, v float64) { p.Kernels.OverlapSlowdown = v }},
		{Name: "DefaultMemoryMargin", Value: 0.06, Without: 0, Sources: []string{"a"}, Set: Tuned[0].Set},
	}
	p, err := ParsePod("dgx-h100:2")
	if err != nil {
		t.Fatal(err)
	}
	got, reset := p.WithoutSource(tuned, "a")
	if got.Kernels.NICEff != 1 || got.Kernels.OverlapSlowdown != 0.189 || got.MemoryMargin != NoMemoryMargin || got.Margin() != 0 {
		t.Errorf("without a: NICEff %g, OverlapSlowdown %g, margin %g (%g); want 1, 0.189, NoMemoryMargin (0)",
			got.Kernels.NICEff, got.Kernels.OverlapSlowdown, got.MemoryMargin, got.Margin())
	}
	if want := []string{"NICEff 0.94 -> 1", "DefaultMemoryMargin 0.06 -> 0"}; !reflect.DeepEqual(reset, want) {
		t.Errorf("reset %q, want %q", reset, want)
	}
	if p.Kernels.NICEff != 0.94 || p.Margin() != 0.06 {
		t.Errorf("the pod itself changed: NICEff %g, margin %g", p.Kernels.NICEff, p.Margin())
	}
	same, none := p.WithoutSource(tuned, "c")
	if none != nil || !reflect.DeepEqual(same, p) {
		t.Errorf("without c: reset %q, pod changed %v; want nothing", none, !reflect.DeepEqual(same, p))
	}
}

// TestTunedDeclared: every tuned constant of the model names its
// sources, a value without them other than its own and a setter, and
// the margin's Value is the constant the model runs with.
func TestTunedDeclared(t *testing.T) {
	for _, c := range Tuned {
		if c.Name == "" || len(c.Sources) == 0 || c.Set == nil || c.Rows == "" || c.Value == c.Without {
			t.Errorf("%+v: want a name, sources, the rows, a setter and a value without them", c)
		}
	}
	if Tuned[0].Name != "DefaultMemoryMargin" || Tuned[0].Value != DefaultMemoryMargin {
		t.Errorf("%s %g, want DefaultMemoryMargin %g", Tuned[0].Name, Tuned[0].Value, DefaultMemoryMargin)
	}
}
