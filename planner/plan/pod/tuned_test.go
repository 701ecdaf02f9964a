package pod

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestWithoutSource: a pod without source A has every constant chosen
// with A at its value without it, by hand, and names them; a constant of
// other sources keeps its value; a source that chose nothing leaves the
// pod as it was. A margin reset to 0 is NoMemoryMargin.
func TestWithoutSource(t *testing.T) {
	margin := func(p *Pod, v float64) {
		p.MemoryMargin = v
		if v == 0 {
			p.MemoryMargin = NoMemoryMargin
		}
	}
	tuned := []TunedConstant{
		{Name: "NICEff", Value: 0.94, Without: 1, Sources: []string{"a", "b"}, Set: func(p *Pod, v float64) { p.Kernels.NICEff = v }},
		{Name: "GroupedGEMM", Value: 0.935, Without: 0, Sources: []string{"b"}, Set: func(p *Pod, v float64) { p.Kernels.GroupedGEMM = v }},
		{Name: "DefaultMemoryMargin", Value: 0.06, Without: 0, Sources: []string{"a"}, Set: margin},
	}
	p, err := ParsePod("dgx-h100:2")
	if err != nil {
		t.Fatal(err)
	}
	p.MemoryMargin = 0.06
	got, reset := p.WithoutSource(tuned, "a")
	if got.Kernels.NICEff != 1 || got.Kernels.GroupedGEMM != 0.935 || got.MemoryMargin != NoMemoryMargin || got.Margin() != 0 {
		t.Errorf("without a: NICEff %g, GroupedGEMM %g, margin %g (%g); want 1, 0.935, NoMemoryMargin (0)",
			got.Kernels.NICEff, got.Kernels.GroupedGEMM, got.MemoryMargin, got.Margin())
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
// no memory margin is chosen: the default is 0 and Tuned does not
// declare it (the verdict weighs the allocator's simulated reservation).
func TestTunedDeclared(t *testing.T) {
	for _, c := range Tuned {
		if c.Name == "" || len(c.Sources) == 0 || c.Set == nil || c.Rows == "" || c.Value == c.Without {
			t.Errorf("%+v: want a name, sources, the rows, a setter and a value without them", c)
		}
	}
	if DefaultMemoryMargin != 0 || slices.ContainsFunc(Tuned, func(c TunedConstant) bool { return c.Name == "DefaultMemoryMargin" }) {
		t.Errorf("DefaultMemoryMargin %g, declared in Tuned: want 0, not chosen", DefaultMemoryMargin)
	}
}

// TestTunedInventory: docs/constants.md lists every constant of kind
// "chosen with rows" that Tuned declares, and Tuned declares every one
// the table lists; each row's kind is one the page defines, and the file
// it names holds the constant (one of its `names`, the part after the
// last dot).
func TestTunedInventory(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/constants.md")
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{"hardware measurement", "published kernel benchmark", "published spec", "first principles", "assumption", "chosen with rows"}
	name := regexp.MustCompile("`([^`]+)`")
	listed := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 8 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| name") {
			continue
		}
		rows++
		col := func(i int) string { return strings.TrimSpace(cells[i]) }
		kind := col(4)
		if !slices.ContainsFunc(kinds, func(k string) bool { return strings.HasPrefix(kind, k) }) {
			t.Errorf("%s: kind %q is none of %q", col(1), kind, kinds)
		}
		names := name.FindAllStringSubmatch(col(1), -1)
		if kind == "chosen with rows" {
			for _, n := range names {
				listed[n[1]] = true
			}
		}
		file, _, _ := strings.Cut(col(3), ":")
		src, err := os.ReadFile("../../../" + file)
		if err != nil {
			t.Errorf("%s: %v", col(1), err)
			continue
		}
		if len(names) > 0 && !slices.ContainsFunc(names, func(n []string) bool {
			id := n[1][strings.LastIndex(n[1], ".")+1:]
			return strings.Contains(string(src), id)
		}) {
			t.Errorf("%s: %s does not hold it", col(1), file)
		}
	}
	if rows < 30 {
		t.Errorf("%d rows read from docs/constants.md, want the inventory (30 or more)", rows)
	}
	declared := map[string]bool{}
	for _, c := range Tuned {
		declared[c.Name] = true
		if !listed[c.Name] {
			t.Errorf("%s: declared in Tuned, not listed in docs/constants.md as chosen with rows", c.Name)
		}
	}
	for n := range listed {
		if !declared[n] {
			t.Errorf("%s: listed in docs/constants.md as chosen with rows, not declared in Tuned", n)
		}
	}
}
