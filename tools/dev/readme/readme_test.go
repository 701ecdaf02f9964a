package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseMarkers(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []Sample // Command, Stream, Lines, Prompt, Volatile
		bad  string
	}{
		{name: "plain", src: "a\n<!-- readme: placer workloads list -->\n```\nold\n```\nb",
			want: []Sample{{Command: "placer workloads list", Stream: "stdout"}}},
		{name: "options", src: `<!-- readme: placer search --workload trxl2 --gpus 2 | stream=stderr lines=3 prompt=on volatile="search time,evaluations/s" -->` + "\n```\n```",
			want: []Sample{{Command: "placer search --workload trxl2 --gpus 2", Stream: "stderr", Lines: 3, Prompt: true, Volatile: []string{"search time", "evaluations/s"}}}},
		{name: "script", src: "<!-- readme: sh -->\n    a\n    b\ntext\n<!-- readme: placer version -->\n```\n```",
			want: []Sample{{Command: "placer version", Stream: "stdout"}}},
		{name: "empty script", src: "<!-- readme: sh -->\ntext", bad: "indented block"},
		{name: "no fence", src: "<!-- readme: placer version -->\ntext", bad: "must stand right above"},
		{name: "unclosed", src: "<!-- readme: placer version -->\n```\nx", bad: "never closed"},
		{name: "bad stream", src: "<!-- readme: placer version | stream=stdin -->\n```\n```", bad: "stream=stdin"},
		{name: "bad option", src: "<!-- readme: placer version | colour=on -->\n```\n```", bad: "unknown option"},
		{name: "bad lines", src: "<!-- readme: placer version | lines=0 -->\n```\n```", bad: "lines=0"},
	}
	for _, c := range cases {
		d, err := Parse(c.src)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.bad)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.name == "script" && (len(d.Scripts()) != 1 || d.Scripts()[0].Text != "a\nb" || d.Scripts()[0].Line != 1) {
			t.Errorf("script: %+v, want one at line 1 reading a, b", d.Scripts())
		}
		if len(d.Samples()) != len(c.want) {
			t.Fatalf("%s: %d samples, want %d", c.name, len(d.Samples()), len(c.want))
		}
		for i, s := range d.Samples() {
			w := c.want[i]
			if s.Command != w.Command || s.Stream != w.Stream || s.Lines != w.Lines || s.Prompt != w.Prompt ||
				strings.Join(s.Volatile, "|") != strings.Join(w.Volatile, "|") {
				t.Errorf("%s: sample %+v, want %+v", c.name, *s, w)
			}
		}
	}
}

// A table whose search-time column grew by a digit still agrees (its
// borders widen with it); a changed step time does not.
func TestCompareVolatileColumns(t *testing.T) {
	s := &Sample{Volatile: []string{"search time"}}
	have := strings.Join([]string{
		"┌────────┬───────────┬─────────┐",
		"│ method │ step time │ search  │",
		"│        │           │  time   │",
		"├────────┼───────────┼─────────┤",
		"│ single │  1.000 ms │ 2.000 s │",
		"└────────┴───────────┴─────────┘",
	}, "\n")
	slower := strings.Join([]string{
		"┌────────┬───────────┬──────────┐",
		"│ method │ step time │  search  │",
		"│        │           │   time   │",
		"├────────┼───────────┼──────────┤",
		"│ single │  1.000 ms │ 12.000 s │",
		"└────────┴───────────┴──────────┘",
	}, "\n")
	if msg := compare(s, have, slower); msg != "" {
		t.Errorf("a volatile cell's change is a difference: %s", msg)
	}
	changed := strings.Replace(slower, "1.000 ms", "1.001 ms", 1)
	if msg := compare(s, have, changed); !strings.Contains(msg, "cell 3") {
		t.Errorf("a changed step time: %q, want a difference in cell 3", msg)
	}
	if msg := compare(&Sample{}, have, slower); msg == "" {
		t.Error("without volatile columns the search time's change went unseen")
	}
}

func TestCompareMasks(t *testing.T) {
	s, err := parseMarker(`placer x | mask="in [0-9.]+ m?s"`)
	if err != nil {
		t.Fatal(err)
	}
	if msg := compare(s, "2500 evaluations in 1.379 s (budget reached)", "2500 evaluations in 12.5 ms (budget reached)"); msg != "" {
		t.Errorf("masked timing differs: %s", msg)
	}
	if msg := compare(s, "2500 evaluations in 1.379 s", "2400 evaluations in 1.379 s"); msg == "" {
		t.Error("a changed count went unseen")
	}
	if msg := compare(s, "reference dp (66.019 ms)\nresult", "reference dp (66.019\n  ms) result"); msg != "" {
		t.Errorf("a footer wrapped elsewhere differs: %s", msg)
	}
	if msg := compare(s, "a\n┌─┐\nb", "a"); !strings.Contains(msg, "more than") {
		t.Errorf("line counts: %q", msg)
	}
}

func TestWrapCommand(t *testing.T) {
	got := wrapCommand("placer eval --workload gpt:layers=96 --cluster dgx-h100:288", 40)
	want := []string{"$ placer eval --workload gpt:layers=96 \\", "    --cluster dgx-h100:288"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("wrapCommand: %q, want %q", got, want)
	}
}

// TestREADMESamples runs every marked command of the README with the
// placer built from this checkout and fails where a sample has drifted
// (make readme writes them anew).
func TestREADMESamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds placer and runs the README's commands")
	}
	root := filepath.Join("..", "..", "..")
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(string(src))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if len(d.Samples()) == 0 {
		t.Fatal("the README marks no sample")
	}
	// PLACER_TEST_BINARY (make test: bin/placer, just built from this
	// checkout) saves linking another binary, as in cmd/placer's tests.
	// testBinary links one otherwise, once for the package.
	r, err := NewRunner(testBinary(t), root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	diffs, err := d.Check(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Scripts()) == 0 {
		t.Error("the README marks no command block to run (the quick start's)")
	}
	diffs = append(diffs, d.RunScripts(r)...)
	for _, msg := range diffs {
		t.Error(msg)
	}
	// The README promises 120 columns: every sample's output holds to it
	// (a wrapped command line, the "$ " prompt's, is the README's own).
	for _, s := range d.Samples() {
		for i, line := range strings.Split(d.Body(s), "\n") {
			if w := utf8.RuneCountInString(line); w > 120 && !strings.HasPrefix(line, "$ ") {
				t.Errorf("README.md:%d: %s: line %d is %d columns wide", s.Line, s.Command, i+1, w)
			}
		}
	}
}
