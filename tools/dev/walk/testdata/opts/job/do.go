package job

import (
	"example.com/w/eval"
	"example.com/w/opts"
)

// Do leads to the end.
func Do(o opts.Options) error {
	check(o.N)   // same file: no entry
	Prepare(o.S) // read already: not again
	eval.New(o.N)
	return finish(o)
}

func check(int) {}
