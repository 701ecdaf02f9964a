package published

import (
	"context"
	"flag"
	"fmt"
	"go/format"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/planner/plan"
)

// checkRows is CheckRows once for the package's tests (TestChecked and
// TestCheckedTable read the same rows; each call about 2.3 CPU s).
var checkRows = sync.OnceValues(func() ([]CheckedRow, error) { return CheckRows(context.Background()) })

// TestFeatures: a plan's features by hand.
func TestFeatures(t *testing.T) {
	moe := mustSpec(t, smallMoE)
	dense := mustSpec(t, "gpt:layers=8,hidden=1024,heads=16,seq=1024,vocab=1024,batch=64")
	for _, c := range []struct {
		m    string
		s    string
		want []string
	}{
		{"dense", "dp=8", nil},
		{"dense", "tp=2,pp=2,dp=2,vp=2,sp=on,tpoverlap=on,recompute=selective,distopt=on", []string{"distopt", "pp", "recompute=selective", "sp", "tp", "tpoverlap", "vp"}},
		{"dense", "cp=2,dp=4,fsdp=on,recompute=full,fp8=current,grads=bf16", []string{"cp", "fp8=current", "fsdp", "grads=bf16", "recompute=full"}},
		{"moe", "ep=4,dp=8", []string{"ep", "experts"}},
		{"moe", "tp=2,ep=2,etp=2,dp=4", []string{"ep", "etp", "experts", "tp"}},
		{"gemma", "dp=8", []string{"act=geglu", "post-norms", "window"}},
		{"nemotron", "dp=8", []string{"act=relu2"}},
	} {
		m := dense
		switch c.m {
		case "moe":
			m = moe
		case "gemma":
			m = mustSpec(t, "llama:layers=12,hidden=1024,heads=16,seq=1024,vocab=1024,batch=64,window=256,global_every=6,norms=4,act=geglu")
		case "nemotron":
			m = mustSpec(t, "llama:layers=8,hidden=1024,heads=16,seq=1024,vocab=1024,batch=64,act=relu2")
		}
		s, err := plan.ParseStrategy(c.s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Features(m, s); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: %v, want %v", c.m, c.s, got, c.want)
		}
	}
}

// TestChecked: every row placer can write is in the table with its
// error; Megatron-LM's H100 rows from 16B up, predicted within 10% today,
// are among the rows within their tolerance (314B: -0.6% at the burst
// clock, -11.5% at the clock of compute alone under the GPUs' 700 W,
// -5.0% at the clock the step's average power allows), and the quick
// start's precision row (Megatron-Bridge's Llama 3 8B) is
// FP8, on 8 GPUs.
func TestChecked(t *testing.T) {
	rows, err := checkRows()
	if err != nil {
		t.Fatal(err)
	}
	within := map[string]bool{}
	for _, r := range rows {
		within[r.Source] = math.Abs(r.Error) <= r.Tolerance()
		if r.Source == "Megatron-Bridge 25.11, Llama 3 8B" && (r.Precision != "fp8=current" || r.GPUs != 8 || r.Family != "dense") {
			t.Errorf("%s: %+v, want FP8 current, 8 GPUs, dense", r.Source, r.Traits)
		}
	}
	for _, name := range []string{"16B", "70B", "119B", "177B", "314B", "462B"} {
		if !within["Megatron-LM H100, "+name] {
			t.Errorf("Megatron-LM H100, %s: not among the rows within tolerance", name)
		}
	}
}

var update = flag.Bool("update", false, "write checked_table.go from CheckRows")

// TestCheckedTable: the committed table eval and search read (Checked,
// checked_table.go) is what CheckRows computes today, row for row, trait for
// trait and error for error (to 0.1 point: the table holds four
// decimals); -update rewrites it. A change to the cost model, a stack or
// a published row that moves a row's error, or a plan's traits, fails
// here until the table is rewritten, so the table cannot drift from the
// model silently.
func TestCheckedTable(t *testing.T) {
	want, err := checkRows()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		src, err := encodeChecked(want)
		if err != nil {
			t.Fatal(err)
		}
		if err := atomicfile.WriteBytes("checked_table.go", src); err != nil {
			t.Fatal(err)
		}
		return
	}
	got := Checked()
	if sameRows(got, want) {
		return
	}
	gotBy, wantBy := map[string]CheckedRow{}, map[string]CheckedRow{}
	for _, r := range got {
		gotBy[r.Source] = r
	}
	for _, r := range want {
		wantBy[r.Source] = r
		if g, ok := gotBy[r.Source]; !ok {
			t.Errorf("%s: predicted today, not in checked_table.go", r.Source)
		} else if !sameRows([]CheckedRow{g}, []CheckedRow{r}) {
			t.Errorf("%s: %+v today, %+v in checked_table.go", r.Source, r, g)
		}
	}
	for _, r := range got {
		if _, ok := wantBy[r.Source]; !ok {
			t.Errorf("%s: in checked_table.go, not predicted today", r.Source)
		}
	}
	t.Errorf("checked_table.go is stale (%d rows, %d today): go test ./planner/published -run TestCheckedTable -update rewrites it", len(got), len(want))
}

// sameRows: a and b are the same rows in the same order, their errors
// within 0.001 of each other.
func sameRows(a, b []CheckedRow) bool {
	return slices.EqualFunc(a, b, func(x, y CheckedRow) bool {
		ex, ey, ox, oy := x.Error, y.Error, x.OutOfSample, y.OutOfSample
		px, py, qx, qy := x.PeakError, y.PeakError, x.PeakOutOfSample, y.PeakOutOfSample
		x.Error, y.Error, x.OutOfSample, y.OutOfSample = 0, 0, 0, 0
		x.PeakError, y.PeakError, x.PeakOutOfSample, y.PeakOutOfSample = 0, 0, 0, 0
		return reflect.DeepEqual(x, y) && math.Abs(ex-ey) <= 1e-3 && math.Abs(ox-oy) <= 1e-3 &&
			math.Abs(px-py) <= 1e-3 && math.Abs(qx-qy) <= 1e-3
	})
}

// TestEncodeChecked: the table is Go, one row a line, in CheckRows'
// order, gofmt's layout.
func TestEncodeChecked(t *testing.T) {
	rows := []CheckedRow{
		{Source: "A, 1", Traits: Traits{Precision: "bf16", Parallel: []string{"pp", "tp"}, GPUs: 8}, Error: 0.05, Fast: true, Set: "a", OutOfSample: 0.07, OutFast: true},
		{Source: `B "2"`, Error: -0.1, OutOfSample: -0.1, Peak: true, PeakError: 0.02, PeakOutOfSample: -0.03},
	}
	got, err := encodeChecked(rows)
	if err != nil {
		t.Fatal(err)
	}
	const row1 = `	{Source: "A, 1", Traits: Traits{Precision: "bf16", Attention: "", Layers: "", Family: "", Parallel: []string{"pp", "tp"}, GPUs: 8, Seq: 0, GPU: ""}, Error: 0.05, Fast: true, Set: "a", OutOfSample: 0.07, OutFast: true},`
	const row2 = `	{Source: "B \"2\"", Traits: Traits{Precision: "", Attention: "", Layers: "", Family: "", Parallel: []string{}, GPUs: 0, Seq: 0, GPU: ""}, Error: -0.1, Fast: false, Set: "", OutOfSample: -0.1, OutFast: false, Peak: true, PeakError: 0.02, PeakOutOfSample: -0.03},`
	if !strings.Contains(string(got), "var checkedRows = []CheckedRow{\n"+row1+"\n"+row2+"\n}\n") || !strings.HasPrefix(string(got), "// Code generated") {
		t.Errorf("%s\nwant the rows\n%s\n%s", got, row1, row2)
	}
}

// encodeChecked writes rows as checked_table.go holds them: a Go slice,
// one row a line (a row's change is one line of a diff), gofmt'd.
func encodeChecked(rows []CheckedRow) ([]byte, error) {
	var b strings.Builder
	b.WriteString("// Code generated by go test -run TestCheckedTable -update; DO NOT EDIT.\n\n")
	b.WriteString("package published\n\n")
	b.WriteString("// checkedRows are CheckRows' rows (checked.go).\n")
	b.WriteString("var checkedRows = []CheckedRow{\n")
	for _, r := range rows {
		var par []string
		for _, p := range r.Parallel {
			par = append(par, strconv.Quote(p))
		}
		regression := ""
		if r.Regression != "" {
			regression = fmt.Sprintf(", Regression: %q", r.Regression)
		}
		if r.Peak {
			regression += fmt.Sprintf(", Peak: true, PeakError: %s, PeakOutOfSample: %s",
				strconv.FormatFloat(r.PeakError, 'g', -1, 64), strconv.FormatFloat(r.PeakOutOfSample, 'g', -1, 64))
		}
		fmt.Fprintf(&b, "\t{Source: %q, Traits: Traits{Precision: %q, Attention: %q, Layers: %q, Family: %q, Parallel: []string{%s}, GPUs: %d, Seq: %d, GPU: %q}, Error: %s, Fast: %t, Set: %q, OutOfSample: %s, OutFast: %t%s},\n",
			r.Source, r.Precision, r.Attention, r.Layers, r.Family, strings.Join(par, ", "), r.GPUs, r.Seq, r.GPU, strconv.FormatFloat(r.Error, 'g', -1, 64), r.Fast,
			r.Set, strconv.FormatFloat(r.OutOfSample, 'g', -1, 64), r.OutFast, regression)
	}
	b.WriteString("}\n")
	return format.Source([]byte(b.String()))
}

// BenchmarkCheckRows is what every eval and search would spend without
// the generated table: every published row evaluated, some searched.
//
//	go test -run xxx -bench CheckRows ./planner/published
func BenchmarkCheckRows(b *testing.B) {
	for b.Loop() {
		if _, err := CheckRows(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
