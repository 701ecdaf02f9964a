package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"
)

// Timeouts of one block: a quick one (make test) and a long one (make
// docs-long).
var (
	QuickTimeout = 3 * time.Minute
	LongTimeout  = 30 * time.Minute
)

// PageResult is one page's blocks run: a line per block that did not do
// as marked, and the CPU time of those run.
type PageResult struct {
	Page   string
	Blocks []Block
	Ran    int
	CPU    time.Duration
	Wall   time.Duration
	Fails  []string
}

// RunPage runs the page's blocks that want selects, in order, in one
// scratch folder of the checkout at root (a block may read what an
// earlier one wrote), and reports each with its CPU time to log when log
// is not nil.
func RunPage(placer, root, page string, want func(Block) bool, log io.Writer) (PageResult, error) {
	res := PageResult{Page: page}
	src, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		return res, err
	}
	blocks, err := ParseBlocks(page, string(src))
	if err != nil {
		return res, err
	}
	res.Blocks = blocks
	var r *Runner
	for _, b := range blocks {
		if !want(b) {
			continue
		}
		if r == nil {
			if r, err = NewRunner(placer, root); err != nil {
				return res, err
			}
			defer r.Close()
		}
		timeout := QuickTimeout
		if b.Long {
			timeout = LongTimeout
		}
		o := r.Exec(b.Text, timeout)
		res.Ran++
		res.CPU += o.CPU
		res.Wall += o.Wall
		msg := b.Check(o)
		if msg != "" {
			res.Fails = append(res.Fails, fmt.Sprintf("%s:%d (%s; %s): %s", page, b.Line, b.What(), b.First(), msg))
		}
		if log != nil {
			status := "ok"
			if msg != "" {
				status = "FAILED"
			}
			fmt.Fprintf(log, "%s:%d\t%s\t%s\texit %d\t%.1f CPU s\t%.1f s\t%s\n", page, b.Line, b.What(), status, o.Code, o.CPU.Seconds(), o.Wall.Seconds(), b.First())
		}
	}
	return res, nil
}

// docsMain is readme -docs: list the pages' command blocks, or run the
// quick ones (default) or every one not skipped (-long, make docs-long),
// and exit 1 when one did not do as marked.
func docsMain(placer string, pages []string, list, long bool) int {
	tw := tabwriter.NewWriter(os.Stdout, 2, 8, 2, ' ', 0)
	if list {
		counts := map[string]int{}
		for _, p := range pages {
			src, err := os.ReadFile(p)
			if err != nil {
				fmt.Fprintln(os.Stderr, "readme:", err)
				return 1
			}
			blocks, err := ParseBlocks(p, string(src))
			if err != nil {
				fmt.Fprintln(os.Stderr, "readme:", err)
				return 1
			}
			for _, b := range blocks {
				fmt.Fprintf(tw, "%s:%d\t%s\t%s\n", p, b.Line, b.What(), b.First())
				counts[kind(b)]++
			}
		}
		tw.Flush()
		fmt.Printf("%d blocks: %d run by make test, %d by %s, %d by the README's samples test, %d skipped\n",
			counts["quick"]+counts["long"]+counts["readme"]+counts["skip"], counts["quick"], counts["long"], LongTarget, counts["readme"], counts["skip"])
		return 0
	}
	want := Block.Quick
	if long {
		// make docs-long: the long blocks and the quick ones beside them,
		// in order, so that a long block finds what the blocks above it
		// wrote.
		want = func(b Block) bool { return !b.Readme && b.Skip == "" }
	}
	var fails []string
	var cpu time.Duration
	ran := 0
	for _, p := range pages {
		res, err := RunPage(placer, ".", p, want, tw)
		tw.Flush()
		if err != nil {
			fmt.Fprintln(os.Stderr, "readme:", err)
			return 1
		}
		fails = append(fails, res.Fails...)
		cpu += res.CPU
		ran += res.Ran
	}
	for _, f := range fails {
		fmt.Fprintln(os.Stderr, f)
	}
	fmt.Printf("readme: %d command blocks run, %d did not do as marked; %.1f CPU s\n", ran, len(fails), cpu.Seconds())
	if len(fails) > 0 {
		return 1
	}
	return 0
}

func kind(b Block) string {
	switch {
	case b.Readme:
		return "readme"
	case b.Skip != "":
		return "skip"
	case b.Long:
		return "long"
	}
	return "quick"
}
