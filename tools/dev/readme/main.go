package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	placer := flag.String("placer", "bin/placer", "the placer binary the samples are made with")
	write := flag.Bool("write", false, "rewrite the samples in place")
	check := flag.Bool("check", false, "exit 1 when a sample differs from its command's output")
	docs := flag.Bool("docs", false, "run the pages' command blocks (README.md, docs/*.md) as their markers say: the quick ones")
	long := flag.Bool("long", false, "with -docs: the long ones (make docs-long)")
	list := flag.Bool("list", false, "with -docs: list the blocks and how each is checked; run none")
	timeout := flag.Duration("timeout", 0, "with -docs: each block's time limit (default 3m a quick block, 30m a long one)")
	flag.Parse()
	if *docs {
		if flag.NArg() == 0 {
			fmt.Fprintln(os.Stderr, "readme: usage: readme -placer BIN -docs [-long | -list] PAGE.md...")
			os.Exit(2)
		}
		if *timeout > 0 {
			QuickTimeout, LongTimeout = *timeout, *timeout
		}
		os.Exit(docsMain(*placer, flag.Args(), *list, *long))
	}
	if flag.NArg() != 1 || *write == *check {
		fmt.Fprintln(os.Stderr, "readme: usage: readme -placer BIN (-write | -check) README.md")
		os.Exit(2)
	}
	path := flag.Arg(0)
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "readme:", err)
		os.Exit(1)
	}
	doc, err := Parse(string(src))
	if err != nil {
		fmt.Fprintf(os.Stderr, "readme: %s: %v\n", path, err)
		os.Exit(1)
	}
	runner, err := NewRunner(*placer, ".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "readme:", err)
		os.Exit(1)
	}
	code := run(doc, runner, path, *check)
	runner.Close()
	os.Exit(code)
}

// run checks or writes the samples and returns the exit code.
func run(doc *Doc, runner *Runner, path string, check bool) int {
	if check {
		diffs, err := doc.Check(runner)
		if err != nil {
			fmt.Fprintf(os.Stderr, "readme: %s: %v\n", path, err)
			return 1
		}
		diffs = append(diffs, doc.RunScripts(runner)...)
		for _, d := range diffs {
			fmt.Fprintln(os.Stderr, d)
		}
		if len(diffs) > 0 {
			fmt.Fprintf(os.Stderr, "readme: %s: %d samples differ from their commands' output (make readme rewrites them)\n", path, len(diffs))
			return 1
		}
		fmt.Printf("readme: %s: %d samples agree with their commands\n", path, len(doc.Samples()))
		return 0
	}
	out, err := doc.Write(runner)
	if err != nil {
		fmt.Fprintf(os.Stderr, "readme: %s: %v\n", path, err)
		return 1
	}
	if err := writeAtomic(path, []byte(out)); err != nil {
		fmt.Fprintln(os.Stderr, "readme:", err)
		return 1
	}
	fmt.Printf("readme: %s: %d samples written\n", path, len(doc.Samples()))
	return 0
}
