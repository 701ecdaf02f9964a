package published

import (
	"encoding/json"
	"flag"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/scale"
	"github.com/placer/placer/internal/atomicfile"
)

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
	} {
		m := dense
		if c.m == "moe" {
			m = moe
		}
		s, err := scale.ParseStrategy(c.s)
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
// are among the rows within their tolerance, and the quick start's
// precision row (Megatron-Bridge's Llama 3 8B) is FP8, on 8 GPUs.
func TestChecked(t *testing.T) {
	rows, err := CheckRows(t.Context())
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

var update = flag.Bool("update", false, "write checked.json from CheckRows")

// TestCheckedTable: the committed table eval and search read (Checked,
// checked.json) is what CheckRows computes today, row for row, trait for
// trait and error for error (to 0.1 point: the table holds four
// decimals); -update rewrites it. A change to the cost model, a stack or
// a published row that moves a row's error, or a plan's traits, fails
// here until the table is rewritten, so the table cannot drift from the
// model silently.
func TestCheckedTable(t *testing.T) {
	want, err := CheckRows(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := atomicfile.WriteBytes("checked.json", encodeChecked(want)); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := Checked()
	if err != nil {
		t.Fatal(err)
	}
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
			t.Errorf("%s: predicted today, not in checked.json", r.Source)
		} else if !sameRows([]CheckedRow{g}, []CheckedRow{r}) {
			t.Errorf("%s: %+v today, %+v in checked.json", r.Source, r, g)
		}
	}
	for _, r := range got {
		if _, ok := wantBy[r.Source]; !ok {
			t.Errorf("%s: in checked.json, not predicted today", r.Source)
		}
	}
	t.Errorf("checked.json is stale (%d rows, %d today): go test ./evaluate/scale/published -run TestCheckedTable -update rewrites it", len(got), len(want))
}

// sameRows: a and b are the same rows in the same order, their errors
// within 0.001 of each other.
func sameRows(a, b []CheckedRow) bool {
	return slices.EqualFunc(a, b, func(x, y CheckedRow) bool {
		ex, ey := x.Error, y.Error
		x.Error, y.Error = 0, 0
		return reflect.DeepEqual(x, y) && math.Abs(ex-ey) <= 1e-3
	})
}

// TestEncodeChecked: the table is one row a line, in CheckRows' order,
// and reads back as written.
func TestEncodeChecked(t *testing.T) {
	rows := []CheckedRow{
		{Source: "A, 1", Traits: Traits{Precision: "bf16", Parallel: []string{"pp", "tp"}, GPUs: 8}, Error: 0.05, Fast: true},
		{Source: "B, 2", Error: -0.1},
	}
	got := string(encodeChecked(rows))
	want := "[\n" +
		`  {"source":"A, 1","precision":"bf16","attention":"","family":"","parallel":["pp","tp"],"gpus":8,"seq":0,"gpu":"","error":0.05,"fast":true},` + "\n" +
		`  {"source":"B, 2","precision":"","attention":"","family":"","parallel":[],"gpus":0,"seq":0,"gpu":"","error":-0.1,"fast":false}` + "\n]\n"
	if got != want {
		t.Errorf("%s, want %s", got, want)
	}
	var back []CheckedRow
	if err := json.Unmarshal([]byte(got), &back); err != nil || len(back) != 2 || back[0].Source != "A, 1" || back[0].GPUs != 8 || len(back[1].Parallel) != 0 {
		t.Errorf("read back %+v, %v", back, err)
	}
}

// encodeChecked writes rows as checked.json holds them: a JSON array,
// one row a line (a row's change is one line of a diff).
func encodeChecked(rows []CheckedRow) []byte {
	var b strings.Builder
	b.WriteString("[\n")
	for i, r := range rows {
		if r.Parallel == nil {
			r.Parallel = []string{}
		}
		line, _ := json.Marshal(r)
		b.WriteString("  ")
		b.Write(line)
		if i < len(rows)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

// BenchmarkCheckRows is what every eval and search spent before the
// table was committed: every published row evaluated, some searched.
//
//	go test -run xxx -bench 'CheckRows|CheckedTable' ./evaluate/scale/published
func BenchmarkCheckRows(b *testing.B) {
	for b.Loop() {
		if _, err := CheckRows(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckedTable is what a process spends on the table now: the
// committed JSON decoded (Checked decodes it once a process).
func BenchmarkCheckedTable(b *testing.B) {
	for b.Loop() {
		var rows []CheckedRow
		if err := json.Unmarshal(checkedTable, &rows); err != nil {
			b.Fatal(err)
		}
	}
}
