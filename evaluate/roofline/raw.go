//go:build !simcheck

package roofline

import "unsafe"

// raw is the base of a slice, for the simulator's hot loops: r.at(i) is
// one address computation, with no bounds check and no length held in a
// register. Go's bounds checks are cheap one at a time, but the event
// loop's functions index a dozen arrays at once, and keeping every
// slice's length live as well made the compiler spill and reload them on
// every iteration (about a third of initUnit's instructions). Every index
// used with a raw view comes from the Model's own arrays, built and
// checked once by NewModel, or from the Simulator's, sized for the Model
// by NewSimulator. Building with the `simcheck` tag swaps in raw_check.go,
// whose views check every index; `make test` runs the simulator's tests
// that way too.
type raw[T any] struct{ p *T }

// rawOf is the raw view of s.
func rawOf[T any](s []T) raw[T] { return raw[T]{unsafe.SliceData(s)} }

// at is the address of element i.
func (r raw[T]) at(i int) *T {
	var z T
	return (*T)(unsafe.Add(unsafe.Pointer(r.p), uintptr(i)*unsafe.Sizeof(z)))
}
