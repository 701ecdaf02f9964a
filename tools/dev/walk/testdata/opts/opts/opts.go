// Package opts is the options the walk follows.
package opts

// Options are a command's options.
type Options struct {
	N int
	S string
}
