package cost

import (
	"slices"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// When is a plug-in's declaration of the steps it prices (Plugin.When):
// conditions that all hold on a shard whose step it prices, each a fact
// of one part of the step (CondOf), named as the docs say it. The
// framework reads it, not the plug-in: it decides once, when it makes a
// shard, whose declarations hold (Registry.Decide), records that
// (Shard.Priced, a figure's priced_by) and asks the plug-ins by the
// record. An empty When prices every step.
type When []Cond

// CondOf is the part of a step a condition reads, and all it reads of it.
type CondOf uint8

// The parts, in the order a declaration lists them (When.String).
const (
	// OfKey is a plan key's value (Cond.Key names it: a key of
	// plan.Keys).
	OfKey CondOf = iota
	// OfStack is the stack's framework (Framework) or one of its
	// settings (Setting: plan.Settings, what the stack runs).
	OfStack
	// OfPrecision is the plan's low-precision recipe as the pod runs
	// it (Precision: the GEMMs in FP8 or FP4: a recipe on a pod with
	// FP8 GEMMs).
	OfPrecision
	// OfModel is the model: its family's traits (Model).
	OfModel
	// OfGPU is the pod: its hardware and measured kernels (GPU).
	OfGPU
	// OfCosting is how the framework costs the shard: with its
	// communication (Comm) and its host (Host).
	OfCosting
)

// Cond is one condition of a declaration (When): the part it reads (Of), Key
// the plan key it reads (OfKey only), Says what it says as the docs
// write it ("cp>1", "moe"), Not whether it must not hold.
type Cond struct {
	Of   CondOf
	Key  string
	Says string
	Not  bool
	// one of these reads the part it names; nil for a framework's.
	plan     func(*plan.Plan) bool
	settings func(*plan.Settings) bool
	model    func(*transformer.Spec) bool
	pod      func(*plan.Pod) bool
	recipe   func(string) bool
	// frameworks are a OfStack condition's frameworks (Framework).
	frameworks []string
	// costing is OfCosting's: with communication (true) or with the
	// host (false).
	comm bool
}

// Key is a condition on plan key key's value as the plan holds it
// (plan.Plan: its strategy and the degrees it resolved), says its text.
func Key(key, says string, f func(*plan.Plan) bool) Cond {
	return Cond{Of: OfKey, Key: key, Says: says, plan: f}
}

// Framework is the condition that the stack's framework is one of fws
// (plan.Software.Framework: plan.FrameworkMegatron, ...).
func Framework(fws ...string) Cond {
	return Cond{Of: OfStack, Says: "framework=" + strings.Join(fws, "|"), frameworks: fws}
}

// Setting is a condition on the stack's settings (plan.Settings), says
// its text.
func Setting(says string, f func(*plan.Settings) bool) Cond {
	return Cond{Of: OfStack, Says: says, settings: f}
}

// Precision is the condition that the pod runs the blocks' GEMMs in the
// plan's low-precision recipe (the plan names one, plan.Strategy.FP8, and
// the pod has FP8 GEMMs, kernels.Node.FP8Peak: where the framework
// prices them at the recipe's speedups, Shard.FP8Fwd) and, f non-nil,
// that f holds of the recipe, says its text.
func Precision(says string, f func(recipe string) bool) Cond {
	return Cond{Of: OfPrecision, Says: says, recipe: f}
}

// Model is a condition on the model, says its text.
func Model(says string, f func(*transformer.Spec) bool) Cond {
	return Cond{Of: OfModel, Says: says, model: f}
}

// GPU is a condition on the pod, says its text.
func GPU(says string, f func(*plan.Pod) bool) Cond {
	return Cond{Of: OfGPU, Says: says, pod: f}
}

// WithComm and WithHost are the conditions that the framework costs the shard
// with its communication (not Shard.NoComm) and with its host (not
// Shard.NoHost).
var (
	WithComm = Cond{Of: OfCosting, Says: "comm", comm: true}
	WithHost = Cond{Of: OfCosting, Says: "host"}
)

// Not is c negated.
func Not(c Cond) Cond {
	c.Not = !c.Not
	return c
}

// MoE is the model with routed experts; Megatron the stack's layers
// Megatron-Core's (Shard.MegatronLayers); the conditions many
// declarations share.
var (
	MoE      = Model("moe", func(m *transformer.Spec) bool { return m.MoE() })
	Megatron = Framework(plan.FrameworkMegatron)
	FP8      = Precision("fp8", nil)
)

// holds is whether c holds on shard s.
func (c *Cond) holds(s *Shard) bool {
	var ok bool
	switch {
	case c.plan != nil:
		ok = c.plan(&s.Plan)
	case c.settings != nil:
		ok = c.settings(&s.Plan.Run)
	case c.model != nil:
		ok = c.model(&s.M)
	case c.pod != nil:
		ok = c.pod(s.Pod)
	case c.Of == OfPrecision:
		ok = s.Plan.FP8 != "" && s.Pod.Kernels.FP8Peak > 0 && (c.recipe == nil || c.recipe(s.Plan.FP8))
	case c.Of == OfStack:
		ok = slices.Contains(c.frameworks, s.Plan.Software.Framework())
	case c.Of == OfCosting && c.comm:
		ok = !s.NoComm
	case c.Of == OfCosting:
		ok = !s.NoHost
	}
	return ok != c.Not
}

// Holds is whether every condition of w holds on shard s.
func (w When) Holds(s *Shard) bool {
	for i := range w {
		if !w[i].holds(s) {
			return false
		}
	}
	return true
}

// Runs is whether every condition of w is a stack setting's (Setting)
// that holds on settings st: a code base's declaration, which the
// framework reads to choose the layer costs a stack runs.
func (w When) Runs(st *plan.Settings) bool {
	for i := range w {
		c := &w[i]
		if c.settings == nil || c.settings(st) == c.Not {
			return false
		}
	}
	return true
}

// String is w's conditions as the docs write them, comma-separated, a
// negated one with a leading "!" ("every step" where w is empty).
func (w When) String() string {
	if len(w) == 0 {
		return "every step"
	}
	says := make([]string, len(w))
	for i, c := range w {
		says[i] = c.Says
		if c.Not {
			says[i] = "!" + c.Says
		}
	}
	return strings.Join(says, ", ")
}
