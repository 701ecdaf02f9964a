package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/torchenv"
)

// Sample is one marked block: the command, its options and where its
// fenced block lies in the document's lines.
type Sample struct {
	Line     int // the marker's line, 1-based (for messages)
	Command  string
	Stream   string // stdout, stderr or both
	Lines    int    // 0: all
	Prompt   bool
	Volatile []string
	Mask     []*regexp.Regexp
	Grep     *regexp.Regexp // keep only the lines it matches

	open, close int // the fence lines' indices (0-based)
}

// Doc is a README split into lines with its samples.
type Doc struct {
	lines   []string
	samples []*Sample
	scripts []Script
}

// Script is a block of commands the README tells its reader to paste: an
// indented block right under a "<!-- readme: sh -->" marker, run as
// written by sh -e (bin/placer is the binary under test).
type Script struct {
	Line int // the marker's line, 1-based
	Text string
}

var markerRE = regexp.MustCompile(`^<!-- readme: (.*) -->$`)

// Parse finds every marker and the fenced block under it.
func Parse(src string) (*Doc, error) {
	d := &Doc{lines: strings.Split(src, "\n")}
	for i := 0; i < len(d.lines); i++ {
		m := markerRE.FindStringSubmatch(d.lines[i])
		if m == nil {
			continue
		}
		if m[1] == "sh" {
			var body []string
			for j := i + 1; j < len(d.lines) && strings.HasPrefix(d.lines[j], "    "); j++ {
				body = append(body, strings.TrimPrefix(d.lines[j], "    "))
			}
			if len(body) == 0 {
				return nil, fmt.Errorf("line %d: a readme sh marker must stand right above an indented block", i+1)
			}
			d.scripts = append(d.scripts, Script{Line: i + 1, Text: strings.Join(body, "\n")})
			continue
		}
		s, err := parseMarker(m[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", i+1, err)
		}
		s.Line = i + 1
		if i+1 >= len(d.lines) || d.lines[i+1] != "```" {
			return nil, fmt.Errorf("line %d: a readme marker must stand right above a ``` fence", i+1)
		}
		s.open = i + 1
		s.close = -1
		for j := i + 2; j < len(d.lines); j++ {
			if d.lines[j] == "```" {
				s.close = j
				break
			}
		}
		if s.close < 0 {
			return nil, fmt.Errorf("line %d: the fence opened on line %d is never closed", i+1, i+2)
		}
		d.samples = append(d.samples, s)
		i = s.close
	}
	return d, nil
}

func parseMarker(text string) (*Sample, error) {
	s := &Sample{Stream: "stdout"}
	cmd, opts := text, ""
	if k := strings.LastIndex(text, " | "); k >= 0 {
		cmd, opts = text[:k], text[k+3:]
	}
	s.Command = strings.TrimSpace(cmd)
	if s.Command == "" {
		return nil, errors.New("a readme marker names no command")
	}
	fields, err := splitWords(opts)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("option %q: want key=value", f)
		}
		switch key {
		case "stream":
			if val != "stdout" && val != "stderr" && val != "both" {
				return nil, fmt.Errorf("stream=%s: want stdout, stderr or both", val)
			}
			s.Stream = val
		case "lines":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("lines=%s: want a count of at least 1", val)
			}
			s.Lines = n
		case "prompt":
			s.Prompt = val == "on"
		case "volatile":
			for _, c := range strings.Split(val, ",") {
				s.Volatile = append(s.Volatile, strings.TrimSpace(c))
			}
		case "mask":
			re, err := regexp.Compile(val)
			if err != nil {
				return nil, fmt.Errorf("mask=%s: %v", val, err)
			}
			s.Mask = append(s.Mask, re)
		case "grep":
			re, err := regexp.Compile(val)
			if err != nil {
				return nil, fmt.Errorf("grep=%s: %v", val, err)
			}
			s.Grep = re
		default:
			return nil, fmt.Errorf("unknown option %q (want stream, lines, prompt, volatile, mask or grep)", key)
		}
	}
	return s, nil
}

// splitWords splits a line at spaces outside double quotes, dropping the
// quotes.
func splitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, any := false, false
	for _, r := range s {
		switch {
		case r == '"':
			in = !in
			any = true
		case r == ' ' && !in:
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if in {
		return nil, fmt.Errorf("unclosed quote in %q", s)
	}
	if any {
		out = append(out, cur.String())
	}
	return out, nil
}

// Scripts lists the document's command blocks in order.
func (d *Doc) Scripts() []Script { return d.scripts }

// RunScripts runs every command block and returns a line per block that
// failed.
func (d *Doc) RunScripts(r *Runner) []string {
	var fails []string
	for _, s := range d.scripts {
		if err := r.Script(s.Text); err != nil {
			fails = append(fails, fmt.Sprintf("README line %d: %v", s.Line, err))
		}
	}
	return fails
}

// Samples lists the document's samples in order.
func (d *Doc) Samples() []*Sample { return d.samples }

// Body is the sample's block as it stands in the document.
func (d *Doc) Body(s *Sample) string {
	return strings.Join(d.lines[s.open+1:s.close], "\n")
}

// Write returns the document with every sample that differs from its
// command's output made anew; a sample that agrees keeps its text (its
// timings do not churn).
func (d *Doc) Write(r *Runner) (string, error) {
	var out []string
	prev := 0
	for _, s := range d.samples {
		body, err := r.Render(s)
		if err != nil {
			return "", err
		}
		if compare(s, d.Body(s), body) == "" {
			continue // agrees: its timings stay as they were
		}
		out = append(out, d.lines[prev:s.open+1]...)
		out = append(out, strings.Split(body, "\n")...)
		prev = s.close
	}
	out = append(out, d.lines[prev:]...)
	return strings.Join(out, "\n"), nil
}

// Check runs every sample's command and returns a line per sample whose
// block differs from the output, beyond what the sample marks volatile.
func (d *Doc) Check(r *Runner) ([]string, error) {
	var diffs []string
	for _, s := range d.samples {
		body, err := r.Render(s)
		if err != nil {
			return nil, err
		}
		if msg := compare(s, d.Body(s), body); msg != "" {
			diffs = append(diffs, fmt.Sprintf("README line %d (%s): %s", s.Line, s.Command, msg))
		}
	}
	return diffs, nil
}

// compare says where have (the document) and want (the command) differ,
// or "" when they agree: table rows cell by cell without the volatile
// columns, border lines not at all (their widths follow the volatile
// cells), and each run of other lines as one text with its spaces
// collapsed (a footer that wraps where a timing grew is the same footer)
// after the masks.
func compare(s *Sample, have, want string) string {
	h, w := items(strings.Split(have, "\n")), items(strings.Split(want, "\n"))
	hv, wv := volatileColumns(s, strings.Split(have, "\n")), volatileColumns(s, strings.Split(want, "\n"))
	for i := 0; i < len(h) || i < len(w); i++ {
		if i >= len(h) {
			return fmt.Sprintf("the command prints more: %q", w[i].text)
		}
		if i >= len(w) {
			return fmt.Sprintf("the sample has more than the command prints: %q", h[i].text)
		}
		a, b := h[i], w[i]
		if a.row != b.row {
			return fmt.Sprintf("%q, the command prints %q", a.text, b.text)
		}
		if a.row {
			if len(a.cells) != len(b.cells) {
				return fmt.Sprintf("%q: %d cells, the command prints %d", a.text, len(a.cells), len(b.cells))
			}
			for k := range a.cells {
				if !hv[k] && !wv[k] && a.cells[k] != b.cells[k] {
					return fmt.Sprintf("cell %d: %q, the command prints %q (row %q)", k+1, a.cells[k], b.cells[k], a.cells[0]+" "+a.cells[1])
				}
			}
			continue
		}
		x, y := a.text, b.text
		for _, re := range s.Mask {
			x = re.ReplaceAllString(x, "<masked>")
			y = re.ReplaceAllString(y, "<masked>")
		}
		if x != y {
			return fmt.Sprintf("%q, the command prints %q", x, y)
		}
	}
	return ""
}

// item is a table row (its cells) or a run of text lines.
type item struct {
	row   bool
	cells []string
	text  string
}

func items(lines []string) []item {
	var out []item
	var run []string
	flush := func() {
		if len(run) > 0 {
			out = append(out, item{text: strings.Join(strings.Fields(strings.Join(run, " ")), " ")})
			run = nil
		}
	}
	for _, l := range lines {
		switch {
		case isBorder(l):
			flush()
		case strings.Contains(l, "│"):
			flush()
			out = append(out, item{row: true, cells: cells(l), text: l})
		default:
			run = append(run, l)
		}
	}
	flush()
	return out
}

func isBorder(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && strings.Trim(t, "┌┬┐├┼┤└┴┘─") == ""
}

func cells(line string) []string {
	parts := strings.Split(line, "│")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}

// volatileColumns finds the column indices (in cells' numbering) whose
// header, joined over the header's wrapped lines, is one of the sample's
// volatile names.
func volatileColumns(s *Sample, lines []string) map[int]bool {
	out := map[int]bool{}
	if len(s.Volatile) == 0 {
		return out
	}
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), "┌") {
			continue
		}
		var head []string
		for j := i + 1; j < len(lines) && !isBorder(lines[j]); j++ {
			for k, c := range cells(lines[j]) {
				for len(head) <= k {
					head = append(head, "")
				}
				if c != "" {
					head[k] = strings.TrimSpace(head[k] + " " + c)
				}
			}
		}
		for k, name := range head {
			for _, v := range s.Volatile {
				if strings.EqualFold(name, v) {
					out[k] = true
				}
			}
		}
	}
	return out
}

// Runner runs the samples' commands in a scratch folder that links the
// checkout's top-level entries, once per command.
type Runner struct {
	placer  string
	scratch string
	cache   map[string][2]string
}

// NewRunner prepares the scratch folder for the checkout at root.
func NewRunner(placer, root string) (*Runner, error) {
	abs, err := filepath.Abs(placer)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("the placer binary: %v (make build makes it)", err)
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp("", "placer-readme-")
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(rootAbs)
	if err != nil {
		os.RemoveAll(scratch)
		return nil, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.Name() == "bin" {
			continue // bin/placer is the binary under test, below
		}
		if e.Name() == "out" && e.IsDir() {
			// out/ is where commands write (out/zoo is read): a folder of
			// the scratch's own, its entries linked, so that what a
			// command writes there stays out of the checkout.
			if err := linkEntries(filepath.Join(rootAbs, "out"), filepath.Join(scratch, "out")); err != nil {
				os.RemoveAll(scratch)
				return nil, err
			}
			continue
		}
		if err := os.Symlink(filepath.Join(rootAbs, e.Name()), filepath.Join(scratch, e.Name())); err != nil {
			os.RemoveAll(scratch)
			return nil, err
		}
	}
	bin := filepath.Join(scratch, "bin")
	if err := os.Mkdir(bin, 0o755); err == nil {
		err = os.Symlink(abs, filepath.Join(bin, "placer"))
	}
	if err != nil {
		os.RemoveAll(scratch)
		return nil, err
	}
	return &Runner{placer: abs, scratch: scratch, cache: map[string][2]string{}}, nil
}

// linkEntries makes dst a folder whose entries link to src's.
func linkEntries(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// Script runs text with sh -e in the scratch folder.
func (r *Runner) Script(text string) error {
	cmd := exec.Command("sh", "-e", "-c", text)
	cmd.Dir = r.scratch
	cmd.Env = r.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// env is a command's environment: PATH with the placer under test first,
// then the virtualenv's bin (make deps's: $TORCH_PY's, else the default
// folder's), as for a reader who activated it, so that the docs' python3
// is the one with torch.
func (r *Runner) env() []string {
	path := []string{filepath.Join(r.scratch, "bin")}
	if py := torchenv.Python(); py != "" {
		path = append(path, filepath.Dir(py))
	}
	path = append(path, os.Getenv("PATH"))
	return append(os.Environ(), "PATH="+strings.Join(path, string(os.PathListSeparator)))
}

// Close removes the scratch folder.
func (r *Runner) Close() { os.RemoveAll(r.scratch) }

// Render is the block a sample's command gives.
func (r *Runner) Render(s *Sample) (string, error) {
	outs, err := r.run(s.Command)
	if err != nil {
		return "", fmt.Errorf("line %d: %v", s.Line, err)
	}
	var text string
	switch s.Stream {
	case "stdout":
		text = outs[0]
	case "stderr":
		text = outs[1]
	default:
		text = outs[0] + outs[1]
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if s.Grep != nil {
		kept := lines[:0]
		for _, l := range lines {
			if s.Grep.MatchString(l) {
				kept = append(kept, l)
			}
		}
		lines = kept
	}
	if s.Lines > 0 && len(lines) > s.Lines {
		lines = append(lines[:s.Lines], "...")
	}
	if s.Prompt {
		lines = append(wrapCommand(s.Command, 100), lines...)
	}
	return strings.Join(lines, "\n"), nil
}

func (r *Runner) run(command string) ([2]string, error) {
	if outs, ok := r.cache[command]; ok {
		return outs, nil
	}
	words, err := splitWords(command)
	if err != nil {
		return [2]string{}, err
	}
	if len(words) == 0 || (words[0] != "placer" && words[0] != "bin/placer") {
		return [2]string{}, fmt.Errorf("%q: a sample's command starts with placer or bin/placer", command)
	}
	cmd := exec.Command(r.placer, words[1:]...)
	cmd.Dir = r.scratch
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return [2]string{}, fmt.Errorf("%s: %v: %s", command, err, strings.TrimSpace(stderr.String()))
	}
	outs := [2]string{stdout.String(), stderr.String()}
	r.cache[command] = outs
	return outs, nil
}

// wrapCommand writes "$ command" over lines of at most width columns,
// breaking at spaces with a shell continuation.
func wrapCommand(command string, width int) []string {
	var words []string // a flag and its value stay on one line
	for _, w := range strings.Fields(command) {
		if n := len(words); n > 0 && strings.HasPrefix(words[n-1], "-") && !strings.Contains(words[n-1], " ") && !strings.HasPrefix(w, "-") {
			words[n-1] += " " + w
			continue
		}
		words = append(words, w)
	}
	var lines []string
	cur := "$"
	for _, w := range words {
		if len(cur)+1+len(w) > width-2 && cur != "$" && !strings.HasSuffix(cur, "    ") {
			lines = append(lines, cur+" \\")
			cur = "   "
		}
		cur += " " + w
	}
	return append(lines, cur)
}

func writeAtomic(path string, data []byte) error { return atomicfile.WriteBytes(path, data) }
