package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// event is one line of test2json's output (go doc test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
	Elapsed    float64 // seconds, on pass, fail and skip
}

func main() {
	top := flag.Int("top", 0, "print the N slowest tests (their wall seconds) at the end")
	cpu := flag.String("cpu", "", "a file of `CPU s` lines, one a package, that tools/dev/testsummary/exec.sh appended: print the packages by CPU time at the end")
	flag.Parse()
	failed, slow, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if *top > 0 {
		printSlowest(os.Stdout, slow, *top)
	}
	if *cpu != "" {
		if err := printCPU(os.Stdout, *cpu, *top); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
	}
	if failed {
		os.Exit(1)
	}
}

// timed is one top-level test's wall time, as go test -json gives it.
type timed struct {
	Package, Test string
	Elapsed       float64
}

// printSlowest writes the n slowest tests of slow, slowest first.
func printSlowest(w io.Writer, slow []timed, n int) {
	sort.SliceStable(slow, func(i, j int) bool { return slow[i].Elapsed > slow[j].Elapsed })
	if len(slow) > n {
		slow = slow[:n]
	}
	fmt.Fprintf(w, "testsummary: the %d slowest tests (wall s; packages run side by side, so a shared core counts in each)\n", len(slow))
	for _, s := range slow {
		fmt.Fprintf(w, "%8.1f  %s %s\n", s.Elapsed, s.Test, s.Package)
	}
}

// cpuLine is one package's line of exec.sh's file: its directory, the
// user and system CPU seconds of its test binary and of every process it
// waited for, and its wall seconds.
type cpuLine struct {
	Dir             string
	User, Sys, Wall float64
}

// readCPU reads exec.sh's file: "DIR USER SYS WALL" a line.
func readCPU(path string) ([]cpuLine, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []cpuLine
	for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("%s:%d: %q: want DIR USER SYS WALL", path, i+1, l)
		}
		c := cpuLine{Dir: f[0]}
		for j, v := range []*float64{&c.User, &c.Sys, &c.Wall} {
			x, err := strconv.ParseFloat(f[j+1], 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %q: %v", path, i+1, f[j+1], err)
			}
			*v = x
		}
		out = append(out, c)
	}
	return out, nil
}

// printCPU writes the n packages of path's file that took the most CPU,
// and the sum over every package.
func printCPU(w io.Writer, path string, n int) error {
	lines, err := readCPU(path)
	if os.IsNotExist(err) {
		fmt.Fprintf(w, "testsummary: no CPU times (%s: no package's tests ran)\n", path)
		return nil
	}
	if err != nil {
		return err
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].User+lines[i].Sys > lines[j].User+lines[j].Sys })
	var user, sys float64
	for _, c := range lines {
		user, sys = user+c.User, sys+c.Sys
	}
	if n <= 0 || n > len(lines) {
		n = len(lines)
	}
	fmt.Fprintf(w, "testsummary: the %d packages whose tests took the most CPU (user+sys s of the test binary and what it waited for; wall s)\n", n)
	for _, c := range lines[:n] {
		fmt.Fprintf(w, "%8.1f %8.1f  %s\n", c.User+c.Sys, c.Wall, c.Dir)
	}
	fmt.Fprintf(w, "%8.1f %8s  every package's tests (%d packages; user %.1f, sys %.1f)\n", user+sys, "", len(lines), user, sys)
	return nil
}

// summarize copies r's test events to w as described in the package doc,
// reports whether anything failed, and returns the top-level tests' wall
// times.
func summarize(r io.Reader, w io.Writer) (failed bool, slow []timed, err error) {
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
			if e.Test == "" {
				// A package that failed with tests unfinished (go test's
				// -timeout panic, a crash): their output says where.
				var left []key
				for k := range out {
					if k.pkg == e.Package && k.test != "" {
						left = append(left, k)
					}
				}
				sort.Slice(left, func(i, j int) bool { return left[i].test < left[j].test })
				for _, k := range left {
					fmt.Fprintf(w, "--- UNFINISHED: %s (%s)\n", k.test, k.pkg)
					for _, o := range out[k] {
						if !strings.HasPrefix(o, "=== ") {
							fmt.Fprint(w, o)
						}
					}
					delete(out, k)
				}
			}
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
		if (e.Action == "pass" || e.Action == "fail") && e.Test != "" && !strings.Contains(e.Test, "/") {
			slow = append(slow, timed{e.Package, e.Test, e.Elapsed})
		}
	}
	return failed, slow, sc.Err()
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
