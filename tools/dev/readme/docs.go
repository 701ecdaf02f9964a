package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Block is one command block of a page (README.md, docs/*.md): a fenced
// or indented code block with at least one line that runs placer or make.
// Its marker, the HTML comment right above it, says how it is checked; a
// block without one is run by make test and must exit 0.
type Block struct {
	Page string // the page's path, for messages
	Line int    // the block's first line (the fence, or the first indented line), 1-based
	End  int    // its last line, 1-based
	Text string // the script: the block's lines, or its "$ " lines when it shows a session

	Readme  bool   // under a <!-- readme: ... --> marker: TestREADMESamples runs it
	Long    bool   // <!-- docs: long -->: make docs-long runs it, not make test
	Fails   bool   // <!-- docs: fails CODE "MESSAGE" -->: meant to fail so
	Code    int    // the exit status a failing block must end with
	Message string // text its output (stdout and stderr) must hold
	Skip    string // <!-- docs: skip KIND "REASON" -->: KIND (gpu, cluster, placeholder, record); never run
	Reason  string // why it is skipped
	Pending string // <!-- docs: pending NAME -->: does not do as marked until NAME lands; the test says when it does
}

// Quick says whether make test runs the block (go test ./tools/dev/readme).
func (b Block) Quick() bool { return !b.Readme && b.Skip == "" && !b.Long }

// What names the block's check in a word or two, for tables and messages.
func (b Block) What() string {
	var w []string
	switch {
	case b.Readme:
		return "readme"
	case b.Skip != "":
		return "skip " + b.Skip
	}
	if b.Long {
		w = append(w, "long")
	}
	if b.Fails {
		w = append(w, "fails "+strconv.Itoa(b.Code))
	}
	if b.Pending != "" {
		w = append(w, "pending "+b.Pending)
	}
	if len(w) == 0 {
		return "run"
	}
	return strings.Join(w, ", ")
}

// LongTarget is the make target that runs the long blocks; a page names
// it beside each one (ParseBlocks checks).
const LongTarget = "make docs-long"

// skipKinds are the reasons a block may never run here, each a kind of
// thing this machine lacks or the block is not.
var skipKinds = map[string]string{
	"gpu":         "needs a CUDA GPU",
	"cluster":     "needs a Slurm or Kubernetes cluster, or several nodes",
	"placeholder": "names files or values the reader supplies",
	"record":      "a dated record of how a measurement was made, not a command to paste",
	"synopsis":    "a command's form: its brackets and capitals stand for what the reader chooses",
	"setup":       "make test's own prerequisites (make deps, make build): every make test runs them first",
	"index":       "a list of commands to choose from, each described beside it, not a script",
	"experiment":  "an experiment of more than half an hour (past make docs-long's limit), run by hand; the page states its time",
}

var (
	docsMarkerRE = regexp.MustCompile(`^ *<!-- docs: (.*) -->$`)
	// pageMarkerRE: a marker for every block of the page, on a line of its
	// own before the first block: <!-- docs-page: skip record "REASON" -->.
	pageMarkerRE = regexp.MustCompile(`^<!-- docs-page: (.*) -->$`)
	fenceRE      = regexp.MustCompile("^( *)(```+|~~~+)\\s*([A-Za-z0-9_+-]*)")
	// commandWordRE: the command words a block is checked for.
	commandWordRE = regexp.MustCompile(`^(\./)?(bin/)?placer$|^make$`)
	assignRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	// argRE: what follows make when it runs (a target, a variable, a
	// flag), not prose that names it.
	argRE = regexp.MustCompile(`^(-|[a-z][a-z0-9-]*$|[A-Za-z_][A-Za-z0-9_]*=)`)
)

// placerCommands are placer's commands: placer followed by one of them (or
// a flag) runs it; placer followed by another word is prose.
var placerCommands = map[string]bool{"baselines": true, "calibrate": true, "cluster": true, "completion": true, "eval": true,
	"export": true, "finetune": true, "help": true, "hw": true, "infer": true, "pretrain": true, "profile": true, "regal": true,
	"report": true, "search": true, "size": true, "tune-brkga": true, "version": true, "workloads": true}

// nonShell are fence languages whose blocks are never commands.
var nonShell = map[string]bool{"python": true, "py": true, "json": true, "toml": true, "yaml": true, "yml": true,
	"go": true, "c": true, "cuda": true, "text": true, "txt": true, "diff": true}

// ParseBlocks finds every command block of a page and its marker. A docs
// marker that stands over no command block, or whose words do not parse,
// is an error; so is a long block whose page does not name LongTarget
// within the paragraph above it or the lines below it.
func ParseBlocks(page, src string) ([]Block, error) {
	lines := strings.Split(src, "\n")
	var out []Block
	marker := -1 // the line of the last docs marker not yet given to a block
	readme := -1
	page0 := "" // the docs-page marker's words
	claim := func(b *Block, first int) error {
		if readme >= 0 && first-readme <= 2 {
			b.Readme = true
		}
		if page0 != "" {
			if marker >= 0 && first-marker <= 2 {
				return fmt.Errorf("%s:%d: a docs marker on a page whose docs-page marker covers every block", page, marker+1)
			}
			return b.parseMarker(page0)
		}
		if marker >= 0 && first-marker <= 2 {
			if err := b.parseMarker(docsMarkerRE.FindStringSubmatch(lines[marker])[1]); err != nil {
				return fmt.Errorf("%s:%d: %v", page, marker+1, err)
			}
			if b.Readme {
				return fmt.Errorf("%s:%d: a docs marker over a readme-marked block", page, marker+1)
			}
			marker = -1
		}
		return nil
	}
	checkMarker := func(i int) error {
		if marker >= 0 && i-marker > 2 {
			return fmt.Errorf("%s:%d: a docs marker must stand right above a command block", page, marker+1)
		}
		return nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if err := checkMarker(i); err != nil {
			return nil, err
		}
		if m := pageMarkerRE.FindStringSubmatch(line); m != nil {
			if len(out) > 0 || page0 != "" {
				return nil, fmt.Errorf("%s:%d: a docs-page marker stands once, before the page's first command block", page, i+1)
			}
			var b Block
			if err := b.parseMarker(m[1]); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", page, i+1, err)
			}
			page0 = m[1]
			continue
		}
		if docsMarkerRE.MatchString(line) {
			marker = i
			continue
		}
		if markerRE.MatchString(line) {
			readme = i
			continue
		}
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			indent, fence, lang := len(m[1]), m[2], strings.ToLower(m[3])
			j := i + 1
			for ; j < len(lines); j++ {
				t := strings.TrimLeft(lines[j], " ")
				if strings.HasPrefix(t, fence) && strings.TrimSpace(strings.TrimLeft(t, fence[:1])) == "" {
					break
				}
			}
			if j >= len(lines) {
				return nil, fmt.Errorf("%s:%d: the fence is never closed", page, i+1)
			}
			body := make([]string, 0, j-i-1)
			for _, l := range lines[i+1 : j] {
				body = append(body, dedent(l, indent))
			}
			if !nonShell[lang] {
				if text, ok := script(body); ok {
					b := Block{Page: page, Line: i + 1, End: j + 1, Text: text}
					if err := claim(&b, i); err != nil {
						return nil, err
					}
					out = append(out, b)
				}
			}
			if err := checkMarker(i + 1); err != nil {
				return nil, err
			}
			i = j
			continue
		}
		if strings.HasPrefix(line, "    ") && strings.TrimSpace(line) != "" && (i == 0 || strings.TrimSpace(lines[i-1]) == "" || i-1 == marker || i-1 == readme) {
			j := i
			last := i
			for ; j < len(lines); j++ {
				if strings.HasPrefix(lines[j], "    ") && strings.TrimSpace(lines[j]) != "" {
					last = j
					continue
				}
				if strings.TrimSpace(lines[j]) == "" {
					continue
				}
				break
			}
			body := make([]string, 0, last-i+1)
			for _, l := range lines[i : last+1] {
				body = append(body, dedent(l, 4))
			}
			if text, ok := script(body); ok {
				b := Block{Page: page, Line: i + 1, End: last + 1, Text: text}
				if err := claim(&b, i); err != nil {
					return nil, err
				}
				out = append(out, b)
			}
			if err := checkMarker(i + 1); err != nil {
				return nil, err
			}
			i = last
		}
	}
	if marker >= 0 {
		return nil, fmt.Errorf("%s:%d: a docs marker must stand right above a command block", page, marker+1)
	}
	for _, b := range out {
		if b.Quick() && runsMake(b.Text) {
			return nil, fmt.Errorf("%s:%d: a block that runs make says how it is checked (<!-- docs: long --> for %s, or skip setup, index, gpu ...): make test does not run make targets", page, b.Line, LongTarget)
		}
		if b.Long && !namesNear(lines, b, LongTarget) {
			return nil, fmt.Errorf("%s:%d: a long block's page must name %q beside it (the paragraph above or the lines below)", page, b.Line, LongTarget)
		}
	}
	return out, nil
}

// namesNear says whether text stands in the paragraph above the block's
// marker (up to 12 lines) or in the 4 lines below the block.
func namesNear(lines []string, b Block, text string) bool {
	from, to := max(b.Line-14, 0), min(b.End+4, len(lines))
	above := strings.Join(strings.Fields(strings.Join(lines[from:b.Line-1], " ")), " ")
	below := strings.Join(strings.Fields(strings.Join(lines[b.End:to], " ")), " ")
	return strings.Contains(above, text) || strings.Contains(below, text)
}

func dedent(line string, n int) string {
	k := 0
	for k < n && k < len(line) && line[k] == ' ' {
		k++
	}
	return line[k:]
}

// script reads a block's lines as a shell script and says whether it runs
// placer or make. A block that shows a session (lines starting "$ ") runs
// its "$ " lines, with their continuation lines; the rest is output.
func script(body []string) (string, bool) {
	session := false
	for _, l := range body {
		if strings.HasPrefix(l, "$ ") {
			session = true
			break
		}
	}
	var kept []string
	cont := false
	for _, l := range body {
		switch {
		case session && strings.HasPrefix(l, "$ "):
			kept = append(kept, strings.TrimPrefix(l, "$ "))
			cont = strings.HasSuffix(l, "\\")
		case session && cont:
			kept = append(kept, l)
			cont = strings.HasSuffix(l, "\\")
		case !session:
			kept = append(kept, l)
		}
	}
	text := strings.TrimRight(strings.Join(kept, "\n"), "\n ")
	for _, cmd := range logicalLines(text) {
		if runsCommand(cmd, nil) {
			return text, true
		}
	}
	return "", false
}

// logicalLines joins a script's continued lines and drops comments.
func logicalLines(text string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if k := strings.Index(l, " #"); k >= 0 && !strings.HasSuffix(l, "\\") {
			l = l[:k]
		}
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// runsMake says whether a script runs make.
func runsMake(text string) bool {
	for _, l := range logicalLines(text) {
		if runsCommand(l, func(cmd string) bool { return cmd == "make" }) {
			return true
		}
	}
	return false
}

// runsCommand says whether a logical line runs placer or make in one of
// its pipeline's or list's commands (after VAR=value assignments, env,
// nice and time); only commands which when it is not nil.
func runsCommand(line string, which func(cmd string) bool) bool {
	for _, seg := range regexp.MustCompile(`&&|\|\||[;|]|\$\(`).Split(line, -1) {
		words := strings.Fields(seg)
		for len(words) > 0 {
			w := words[0]
			switch {
			case assignRE.MatchString(w), w == "env", w == "time", w == "sudo":
				words = words[1:]
				continue
			case w == "nice":
				words = words[1:]
				if len(words) > 1 && words[0] == "-n" {
					words = words[2:]
				}
				continue
			}
			break
		}
		if len(words) < 2 || !commandWordRE.MatchString(words[0]) || which != nil && !which(words[0]) {
			continue
		}
		if words[0] == "make" && argRE.MatchString(words[1]) || strings.HasPrefix(words[1], "-") || placerCommands[words[1]] {
			return true
		}
	}
	return false
}

// parseMarker reads a docs marker's words into the block: long; fails
// CODE "MESSAGE"; skip KIND "REASON"; pending NAME. long, fails and
// pending go together; skip with nothing.
func (b *Block) parseMarker(text string) error {
	words, err := splitWords(text)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return errors.New("a docs marker says nothing (want long, fails CODE \"MESSAGE\", skip KIND \"REASON\" or pending NAME)")
	}
	for i := 0; i < len(words); i++ {
		switch words[i] {
		case "long":
			b.Long = true
		case "fails":
			if i+2 >= len(words) {
				return errors.New(`fails wants an exit status and a message: fails 2 "MESSAGE"`)
			}
			code, err := strconv.Atoi(words[i+1])
			if err != nil || code < 1 || code > 255 {
				return fmt.Errorf("fails %s: want an exit status of 1 to 255", words[i+1])
			}
			if words[i+2] == "" {
				return errors.New("fails: an empty message checks nothing")
			}
			b.Fails, b.Code, b.Message = true, code, words[i+2]
			i += 2
		case "skip":
			if i+2 >= len(words) {
				return errors.New(`skip wants a kind and a reason: skip gpu "REASON"`)
			}
			if _, ok := skipKinds[words[i+1]]; !ok {
				return fmt.Errorf("skip %s: want gpu, cluster, placeholder, record, synopsis, setup, index or experiment", words[i+1])
			}
			if strings.TrimSpace(words[i+2]) == "" {
				return errors.New("skip: the reason is empty")
			}
			b.Skip, b.Reason = words[i+1], words[i+2]
			i += 2
		case "pending":
			if i+1 >= len(words) {
				return errors.New("pending wants the name of the change it waits for: pending issue83-item2")
			}
			b.Pending = words[i+1]
			i++
		default:
			return fmt.Errorf("unknown word %q in a docs marker (want long, fails, skip or pending)", words[i])
		}
	}
	switch {
	case b.Skip != "" && (b.Long || b.Fails || b.Pending != ""):
		return errors.New("skip goes alone: a skipped block is never run")
	}
	return nil
}

// Outcome is what running a block gave.
type Outcome struct {
	Code   int           // exit status (-1: killed or not started)
	Output string        // stdout and stderr, interleaved
	CPU    time.Duration // user + system CPU of the shell and what it waited for
	Wall   time.Duration
}

// Exec runs text with sh -e in the scratch folder (placer on PATH) within
// timeout and returns its exit status, output and CPU time.
func (r *Runner) Exec(text string, timeout time.Duration) Outcome {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", "-c", text)
	cmd.Dir = r.scratch
	cmd.Env = r.env()
	// Its output goes to a file, not a pipe: a process the block leaves in
	// the background holds no pipe Wait would wait on.
	out, err := os.CreateTemp("", "placer-docs-block-")
	if err != nil {
		return Outcome{Code: -1, Output: err.Error()}
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	// The block runs in a process group of its own: at its time limit the
	// whole group is killed, and whatever it left running in the
	// background (a line ending in &) is killed when it ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	printed, _ := os.ReadFile(out.Name())
	o := Outcome{Code: 0, Output: string(printed), Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		o.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		o.Code = cmd.ProcessState.ExitCode()
	}
	if err != nil && o.Code == 0 {
		o.Code = -1
	}
	if ctx.Err() != nil {
		o.Code = -1
		o.Output += fmt.Sprintf("\n(stopped after %s)", timeout)
	}
	return o
}

// Check says how the block's outcome stands against its marker: "" when it
// did as marked, else why not. A pending block is checked as the rest of
// its marker says, inverted: until its change lands it is meant not to do
// so, and once it does the marker is stale.
func (b Block) Check(o Outcome) string {
	msg := b.check(o)
	switch {
	case b.Pending != "" && msg == "":
		return fmt.Sprintf("does as its docs say now: %s has landed; remove \"pending %s\" from its marker", b.Pending, b.Pending)
	case b.Pending != "":
		return ""
	}
	return msg
}

func (b Block) check(o Outcome) string {
	switch {
	case b.Fails && o.Code != b.Code:
		return fmt.Sprintf("meant to fail with exit %d, exited %d: %s", b.Code, o.Code, tail(o.Output, 8))
	case b.Fails && !strings.Contains(o.Output, b.Message):
		return fmt.Sprintf("failed with exit %d as meant, but its output lacks %q: %s", b.Code, b.Message, tail(o.Output, 8))
	case !b.Fails && o.Code != 0:
		return fmt.Sprintf("exit %d: %s", o.Code, tail(o.Output, 12))
	}
	return ""
}

// First is the block's first logical line, to name it.
func (b Block) First() string {
	ls := logicalLines(b.Text)
	if len(ls) == 0 {
		return ""
	}
	s := strings.Join(strings.Fields(ls[0]), " ")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

func tail(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = append([]string{"..."}, ls[len(ls)-n:]...)
	}
	return strings.Join(ls, "\n    ")
}
