package codebases

import (
	"fmt"

	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// Registered is the code bases, one registration line each (a
// cost.Registry: a duplicate name, of a code base or of a stack it
// brings, stops the program at its start, and the package's tests with
// it). The framework chooses a plan's by their declarations
// (cost.Registry.CodeBase: the first whose When runs on the stack's
// settings; exactly one does, TestOneCodeBaseAStack).
var Registered = mustRegistry(
	Fused{},
	LlamaPy{Eager: Eager{Code: eager.LayerLlamaPy}},
	HF{Eager: Eager{Code: eager.LayerHF}},
	Titan{Eager: Eager{Code: eager.LayerTitan}},
	TitanCompiled{},
)

func mustRegistry(bs ...cost.CodeBase) *cost.Registry {
	ps := make([]cost.Plugin, len(bs))
	for i, b := range bs {
		ps[i] = b
	}
	r, err := cost.NewRegistry(ps...)
	for _, b := range bs {
		if err == nil {
			err = AddStacks(b)
		}
	}
	if err != nil {
		panic(err)
	}
	return r
}

// stackRows is a code base that brings the named stacks running it: a
// stack added in one file, its row (plan.NamedStack) beside its layer
// costs, added to plan.Stacks when it is registered (AddStacks).
type stackRows interface {
	Stacks() []plan.NamedStack
}

// AddStacks adds the named stacks b brings (stackRows) to plan.Stacks,
// refusing a stack whose settings b's declaration does not run
// (When.Runs), or a name taken.
func AddStacks(b cost.CodeBase) error {
	sr, ok := b.(stackRows)
	if !ok {
		return nil
	}
	for _, ns := range sr.Stacks() {
		if !b.When().Runs(&ns.Settings) {
			return fmt.Errorf("stack %q brought by layer costs %q runs layers %q (eager %t), not them", ns.Name, b.Name(), ns.Settings.Layers, ns.Settings.Eager)
		}
		if err := plan.AddStack(ns); err != nil {
			return err
		}
	}
	return nil
}
