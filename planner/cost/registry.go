package cost

import (
	"fmt"
	"strings"

	"github.com/placer/placer/planner/plan"
)

// Registry is plug-ins of one kind (families, code bases, mechanisms) by
// name, in the order registered: a handful, looked up by a scan, which
// keeps the order for listing and for a figure's provenance.
type Registry struct{ plugins []Plugin }

// NewRegistry registers ps in order, refusing an empty or a duplicate
// name.
func NewRegistry(ps ...Plugin) (*Registry, error) {
	r := &Registry{}
	for _, p := range ps {
		if err := r.Register(p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// MustRegistry is NewRegistry's registry, for a package's registration
// lines: a duplicate name stops the program at its start, and the
// package's tests with it.
func MustRegistry(ps ...Plugin) *Registry {
	r, err := NewRegistry(ps...)
	if err != nil {
		panic(err)
	}
	return r
}

// With is a copy of r with ps registered after its own (Register's
// refusals): a test's registry of its own, r left as it is.
func (r *Registry) With(ps ...Plugin) (*Registry, error) {
	q := &Registry{plugins: append([]Plugin(nil), r.plugins...)}
	for _, p := range ps {
		if err := q.Register(p); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// Register adds p under its name, or refuses it where the name is taken
// or empty.
func (r *Registry) Register(p Plugin) error {
	name := p.Name()
	if name == "" {
		return fmt.Errorf("plug-in %T has no name", p)
	}
	if q := r.Lookup(name); q != nil {
		return fmt.Errorf("plug-in %q registered twice (%T and %T)", name, q, p)
	}
	if len(r.plugins) == maxPlugins {
		return fmt.Errorf("plug-in %q: a registry holds at most %d", name, maxPlugins)
	}
	r.plugins = append(r.plugins, p)
	return nil
}

// Lookup is the plug-in registered as name (nil: none).
func (r *Registry) Lookup(name string) Plugin {
	for _, p := range r.plugins {
		if p.Name() == name {
			return p
		}
	}
	return nil
}

// Names lists the registered names, comma-separated.
func (r *Registry) Names() string {
	names := make([]string, len(r.plugins))
	for i, p := range r.plugins {
		names[i] = p.Name()
	}
	return strings.Join(names, ", ")
}

// Decide is the set of r's plug-ins that price the step of one shard
// of ss at least (their declarations, Plugin.When, read: a plan's stages
// of two tensor-parallel degrees are two shards).
func (r *Registry) Decide(ss ...*Shard) Set {
	var set Set
	for i, p := range r.plugins {
		w := p.When()
		for _, s := range ss {
			if w.Holds(s) {
				set |= 1 << i
				break
			}
		}
	}
	return set
}

// Named is the names of the plug-ins of r in set, in the order
// registered; nil where set is empty.
func (r *Registry) Named(set Set) []string {
	var names []string
	for i, p := range r.plugins {
		if set&(1<<i) != 0 {
			names = append(names, p.Name())
		}
	}
	return names
}

// Bit is plug-in p's bit in r's records (0: p is not registered in r).
func (r *Registry) Bit(p Plugin) Set {
	name := p.Name()
	for i, q := range r.plugins {
		if q.Name() == name {
			return 1 << i
		}
	}
	return 0
}

// Priced is the names of the plug-ins that price the step of one shard
// of ss at least, in the order registered (Named of Decide); nil where
// none does.
func (r *Registry) Priced(ss ...*Shard) []string { return r.Named(r.Decide(ss...)) }

// CodeBase is the first code base registered in r whose declaration
// runs on stack settings st (When.Runs; nil: none).
func (r *Registry) CodeBase(st *plan.Settings) CodeBase {
	for _, p := range r.plugins {
		if b, ok := p.(CodeBase); ok && b.When().Runs(st) {
			return b
		}
	}
	return nil
}

// First is the first plug-in of r that implements extension point T
// (the zero T: none).
func First[T Plugin](r *Registry) T {
	for _, p := range r.plugins {
		if t, ok := p.(T); ok {
			return t
		}
	}
	var zero T
	return zero
}

// Each is every plug-in of r that implements extension point T, in the
// order registered.
func Each[T Plugin](r *Registry) []T {
	var ts []T
	for _, p := range r.plugins {
		if t, ok := p.(T); ok {
			ts = append(ts, t)
		}
	}
	return ts
}
