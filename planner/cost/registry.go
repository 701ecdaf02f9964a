package cost

import (
	"fmt"
	"strings"
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

// Priced is the names of the plug-ins that price the step of one shard
// of ss at least (Plugin.Prices: a plan's stages of two tensor-parallel
// degrees are two shards), in the order registered; nil where none
// does.
func (r *Registry) Priced(ss ...*Shard) []string {
	var names []string
	for _, p := range r.plugins {
		for _, s := range ss {
			if p.Prices(s) {
				names = append(names, p.Name())
				break
			}
		}
	}
	return names
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

// Pricing is the first of ps that prices step shard s (Prices), the zero
// T where none does: how an extension point asked of its first pricing
// plug-in picks it.
func Pricing[T Plugin](ps []T, s *Shard) T {
	for _, p := range ps {
		if p.Prices(s) {
			return p
		}
	}
	var zero T
	return zero
}
