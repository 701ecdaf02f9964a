//go:build simcheck

package roofline

import "fmt"

// raw, in a build with the simcheck tag, is a checked view: every index
// is held against the slice's length (see raw.go).
type raw[T any] struct{ s []T }

// rawOf is the raw view of s.
func rawOf[T any](s []T) raw[T] { return raw[T]{s} }

// at is the address of element i; an index out of range panics.
func (r raw[T]) at(i int) *T {
	if i < 0 || int(i) >= len(r.s) {
		panic(fmt.Sprintf("roofline: raw index %d out of range [0,%d)", i, len(r.s)))
	}
	return &r.s[i]
}
