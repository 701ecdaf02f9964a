// Package cli is where the walk starts.
package cli

import (
	"example.com/w/job"
	"example.com/w/opts"
)

// Run is the start.
func Run(o opts.Options) error {
	helper()         // hands over no option: not followed
	job.Prepare(o.S) // leads to no end: a leaf
	return job.Do(o) // leads to the end
}

func helper() {}
