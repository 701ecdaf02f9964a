package report

import (
	"bytes"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestUnits(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 12.5e-6: "12.5 us", 0.0123456: "12.346 ms", 3.5: "3.500 s"} {
		if got := Seconds(in); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int64]string{512: "512 B", 2048: "2.0 KiB", 3 << 20: "3.0 MiB", 5 << 30: "5.00 GiB"} {
		if got := Bytes(in); got != want {
			t.Errorf("Bytes(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, []string{"method", "step"}, [][]string{{"expert", "1 ms"}, {"metis", "2 ms"}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"method", "expert", "metis", "2 ms"} {
		if !strings.Contains(out, want) {
			t.Fatalf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestWritePlot(t *testing.T) {
	dir := t.TempDir()
	p := Plot{Title: "reward", XLabel: "step", YLabel: "reward", Series: []Series{
		{Name: "GO", X: []float64{0, 1, 2}, Y: []float64{-1.2, -1.0, -0.9}},
		{Name: "expert", X: []float64{0, 2}, Y: []float64{-1, -1}, Dash: true},
	}}
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, "curve."+ext)
		if err := WritePlot(path, p); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() < 500 {
			t.Fatalf("%s: %v", ext, err)
		}
	}
	if err := WritePlot(filepath.Join(dir, "c.gif"), p); err == nil {
		t.Fatal("gif accepted")
	}
}

// TestTableFit: a table wider than MaxWidth leaves out its optional
// columns in order until it fits and names them; Wide draws them all; a
// table with nothing optional is drawn as it is.
func TestTableFit(t *testing.T) {
	long := strings.Repeat("x", 40)
	header := []string{"a", "b", "c", "d"}
	rows := [][]string{{long, long, long, "1"}}
	cases := []struct {
		name     string
		wide     bool
		optional []int
		want     []string // headers drawn
		left     string
	}{
		{"fits once b is out", false, []int{1, 2}, []string{"a", "c", "d"}, "left out to fit 120 columns: b (--wide"},
		{"wide", true, []int{1, 2}, []string{"a", "b", "c", "d"}, ""},
		{"nothing optional", false, nil, []string{"a", "b", "c", "d"}, ""},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		var w io.Writer = &buf
		if c.wide {
			w = Wide{&buf}
		}
		if err := TableFit(w, header, rows, c.optional); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		head := strings.Split(out, "\n")[1]
		for _, h := range header {
			if got, want := strings.Contains(head, " "+h+" "), slices.Contains(c.want, h); got != want {
				t.Errorf("%s: column %s drawn %v, want %v:\n%s", c.name, h, got, want, out)
			}
		}
		if got := strings.Contains(out, "left out"); got != (c.left != "") || (c.left != "" && !strings.Contains(out, c.left)) {
			t.Errorf("%s: want the line %q:\n%s", c.name, c.left, out)
		}
		if !c.wide && c.optional != nil && width(out) > MaxWidth {
			t.Errorf("%s: %d columns wide", c.name, width(out))
		}
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		s     string
		limit int
		want  string
	}{
		{"go-scored-no-learning", 12, "go-scored-\nno-learning"},
		{"go-scored", 12, "go-scored"},
		{"local-search-anchored", 8, "local-\nsearch-\nanchored"},
		{"peak memory (of capacity)", 11, "peak memory\n(of\ncapacity)"},
		{"supercalifragilistic", 5, "supercalifragilistic"},
		{"tp=1,cp=8,pp=2", 9, "tp=1,\ncp=8,pp=2"},
		{"tp=8,pp=6,dp=48,mbs=1", 30, "tp=8,pp=6,dp=48,mbs=1"},
		{"search CPU, Megatron memory, placer memory", 20, "search CPU, Megatron\nmemory, placer\nmemory"},
		// A plan breaks only between its keys: each line pastes back.
		{"tp=1,pp=2,recompute-layers=1,embedding-layer=on", 12, "tp=1,pp=2,\nrecompute-layers=1,\nembedding-layer=on"},
		{"recompute-layers=1", 10, "recompute-layers=1"},
		{"1x1x48 sp+o recompute-layers=1 z1", 12, "1x1x48 sp+o\nrecompute-layers=1\nz1"},
	} {
		if got := Wrap(c.s, c.limit); got != c.want {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.s, c.limit, got, c.want)
		}
	}
}

func TestWrapLine(t *testing.T) {
	var buf bytes.Buffer
	w, flush := fitLines(&buf)
	long := strings.Repeat("word ", 40) // 200 columns
	io.WriteString(w, "short\n"+long+"\nlast")
	flush()
	for i, line := range strings.Split(buf.String(), "\n") {
		if width(line) > MaxWidth {
			t.Errorf("line %d is %d wide", i, width(line))
		}
		if i > 1 && !strings.HasPrefix(line, "  ") && line != "last" {
			t.Errorf("continuation %q not indented", line)
		}
	}
	if !strings.HasPrefix(buf.String(), "short\nword") || !strings.HasSuffix(buf.String(), "\nlast") {
		t.Errorf("output %q", buf.String())
	}
	buf.Reset()
	w, flush = fitLines(Wide{&buf})
	io.WriteString(w, long)
	flush()
	if buf.String() != long {
		t.Errorf("wide output wrapped: %q", buf.String())
	}
}

// TestTableFitBreaksCells: a table still wider than MaxWidth with nothing
// left to leave out breaks its widest cells over lines, a plan only
// between its keys, until it fits; KeyValue does the same to its values.
func TestTableFitBreaksCells(t *testing.T) {
	plan := "tp=1,pp=4,dp=16,vp=2,mbs=1,distopt=on,first=10,last=10,ep=8,epoverlap=on,recompute-layers=1,embedding-layer=on"
	prose := strings.Repeat("words and words ", 6) // 96 columns
	var buf bytes.Buffer
	if err := TableFit(&buf, []string{"plan", "step", "note"}, [][]string{{plan, "2.259 s", prose}}, nil); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if w := width(out); w > MaxWidth {
		t.Errorf("%d columns wide:\n%s", w, out)
	}
	// The plan's lines, read back from the first column, are its keys in
	// order, each whole.
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if cells := strings.Split(line, "│"); len(cells) == 5 {
			got = append(got, strings.TrimSpace(cells[1]))
		}
	}
	if joined := strings.Join(got[1:], ""); joined != plan { // got[0]: the header
		t.Errorf("the plan's lines join to %q, want %q:\n%s", joined, plan, out)
	}
	for _, l := range got[1:] {
		if l != "" && !strings.HasSuffix(l, ",") && !strings.HasSuffix(plan, l) {
			t.Errorf("plan line %q breaks inside a key or value", l)
		}
	}
	buf.Reset()
	if err := KeyValue(&buf, [][2]string{{"strategy", plan + "," + plan}, {"step", "2.259 s"}}); err != nil {
		t.Fatal(err)
	}
	if w := width(buf.String()); w > MaxWidth {
		t.Errorf("KeyValue: %d columns wide:\n%s", w, buf.String())
	}
	buf.Reset()
	if err := KeyValue(Wide{&buf}, [][2]string{{"strategy", plan + "," + plan}}); err != nil {
		t.Fatal(err)
	}
	if w := width(buf.String()); w != len(plan)*2+1+len("strategy")+7 {
		t.Errorf("KeyValue, --wide: %d columns wide, want the value on one line:\n%s", w, buf.String())
	}
}

// TestWritePlotMargin: nothing is drawn within a few pixels of the
// page's edges; the legend at the top right and the title were drawn to
// the edge, where viewers cut them off.
func TestWritePlotMargin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.png")
	p := Plot{Title: "go-scored on trxl2", XLabel: "evaluations", YLabel: "step time (ms)", LegendTop: true, Series: []Series{
		{Name: "best so far", X: []float64{0, 1000, 2500}, Y: []float64{64, 58, 57.7}},
		{Name: "reference: dp+reverse-fusion (66.019 ms)", X: []float64{0, 2500}, Y: []float64{66, 66}, Dash: true},
		{Name: "answer returned: go-scored dp=2 (56.715 ms)", X: []float64{0, 2500}, Y: []float64{56.7, 56.7}, Dash: true},
	}}
	if err := WritePlot(path, p); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	const edge = 4 // pixels
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if x >= b.Min.X+edge && x < b.Max.X-edge && y >= b.Min.Y+edge && y < b.Max.Y-edge {
				continue
			}
			if r, g, bl, _ := img.At(x, y).RGBA(); r != 0xffff || g != 0xffff || bl != 0xffff {
				t.Fatalf("pixel (%d, %d) of %v drawn on, within %d pixels of the page's edge", x, y, b, edge)
			}
		}
	}
}
