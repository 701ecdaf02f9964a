package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of test2json's output (go doc test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

func main() {
	failed, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// summarize copies r's test events to w as described in the package doc
// and reports whether anything failed.
func summarize(r io.Reader, w io.Writer) (failed bool, err error) {
	type key struct{ pkg, test string }
	out := map[key][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line) // not an event: go test's own words
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output":
			if e.Test == "" {
				if s := strings.TrimRight(e.Output, "\n"); s != "PASS" && s != "FAIL" && !strings.HasPrefix(s, "=== ") {
					fmt.Fprint(w, e.Output)
				}
				continue
			}
			out[k] = append(out[k], e.Output)
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed = true
		case "skip":
			if e.Test != "" {
				fmt.Fprintf(w, "--- SKIP: %s (%s): %s\n", e.Test, e.Package, reason(out[k]))
			}
			delete(out, k)
		case "fail":
			failed = true
			if e.Test != "" {
				fmt.Fprintf(w, "--- FAIL: %s (%s)\n", e.Test, e.Package)
				for _, o := range out[k] {
					if !strings.HasPrefix(o, "=== ") {
						fmt.Fprint(w, o)
					}
				}
			}
			delete(out, k)
		case "pass":
			delete(out, k)
		}
	}
	return failed, sc.Err()
}

// reason is a skipped test's own words: its output without the framework's
// lines, the file:line prefixes kept, on one line.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		s := strings.TrimSpace(l)
		if s == "" || strings.HasPrefix(s, "=== ") || strings.HasPrefix(s, "--- ") {
			continue
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}
