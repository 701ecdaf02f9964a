package planner

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// pricingPlans are plans whose families' traits and mechanisms differ:
// GPT-OSS and Qwen3 on Megatron-Bridge (FP8 for Qwen3), the same models
// on torchtitan's layers, a dense Llama with context parallelism.
var pricingPlans = []struct {
	name, model, strategy, pod string
	want                       PricedBy
}{
	{"gpt-oss on megatron", ossModel, ossPlan, "dgx-h100:8", PricedBy{CodeBase: plan.LayersFused,
		Families: []string{"yarn-rope", "linear-bias", "swiglu-clamp"}, Mechanisms: []string{"token-dispatch", "random-routing", "te-grouped-gemm", "power-limit", "adam", "sm-contention", "host-issue"}}},
	{"gpt-oss on torchtitan", ossModel, "pp=4,ep=8,dp=16,mbs=1,stack=torchtitan-0.2", "dgx-h100:8", PricedBy{CodeBase: plan.LayersTitan, Mechanisms: []string{"token-dispatch", "power-limit", "adam", "sm-contention", "host-issue"}}},
	{"qwen3 on megatron, fp8", stackMoE, q30A2A, "dgx-h100:2", PricedBy{CodeBase: plan.LayersFused,
		Families: []string{"qk-norm"}, Mechanisms: []string{"token-dispatch", "router-aux-loss", "random-routing", "te-grouped-gemm", "fp8-expert-padding", "fp8-casts", "power-limit", "adam", "sm-contention", "host-issue"}}},
	{"llama, cp 2", "llama3-8b:seq=8192,batch=64", "tp=2,cp=2,dp=8,mbs=1", "dgx-h100:4", PricedBy{CodeBase: plan.LayersFused,
		Mechanisms: []string{"cp-ring", "power-limit", "adam", "sm-contention", "host-issue"}}},
}

// TestPricedByOf: the names of what priced each plan, from the
// registries, in the order registered.
func TestPricedByOf(t *testing.T) {
	for _, tc := range pricingPlans {
		c := stackCoster(t, tc.model, tc.strategy, tc.pod)
		if got := PricedByOf(c.M, c.Plan, c.Pod); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestPricesMeansKernels: a registered trait or mechanism says it priced
// a plan (Prices) exactly where its kernels at its extension points, as
// the framework asks them (by the shard's record: asked), are not zero,
// on every plan of pricingPlans: a figure's provenance names what
// changed it and nothing else.
func TestPricesMeansKernels(t *testing.T) {
	for _, tc := range pricingPlans {
		c := stackCoster(t, tc.model, tc.strategy, tc.pod)
		s := &c.Shard
		nl := c.Tokens
		for _, r := range []*cost.Registry{families.Registered, mechanisms.Registered} {
			for _, name := range []string{"yarn-rope", "linear-bias", "qk-norm", "swiglu-clamp", "router-aux-loss", "fp8-expert-padding"} {
				p := r.Lookup(name)
				if p == nil {
					continue
				}
				var sum cost.Phase
				add := func(f, b cost.Phase) { sum = sum.Plus(f).Plus(b) }
				if h, ok := p.(cost.AttentionKernels); ok {
					add(asked(c.Points, s, p, func() (cost.Phase, cost.Phase) { return h.Attention(s) }))
				}
				if h, ok := p.(cost.ExpertActivation); ok && c.M.MoE() {
					add(asked(c.Points, s, p, func() (cost.Phase, cost.Phase) { return h.ExpertActivation(s, nl, float64(c.M.ExpertFFN)) }))
				}
				if h, ok := p.(cost.ExpertOutput); ok && c.M.MoE() {
					add(asked(c.Points, s, p, func() (cost.Phase, cost.Phase) { return h.ExpertOutput(s, nl, float64(c.M.Experts/c.Plan.EP), nl) }))
				}
				if h, ok := p.(cost.RouterKernels); ok && c.M.MoE() {
					add(asked(c.Points, s, p, func() (cost.Phase, cost.Phase) { return h.Router(s, nl) }))
				}
				if priced := sum.Busy > 0; priced != cost.Applies(p, s) {
					t.Errorf("%s: %s prices %t, its kernels %g s", tc.name, name, cost.Applies(p, s), sum.Busy)
				}
			}
		}
	}
}

// TestDeclarations: every registered plug-in declares the steps it
// prices as data the framework reads (cost.When): each condition says
// what it reads, a plan key's condition names a key of plan.Keys, and a
// code base's conditions are all the stack's settings (so that
// cost.Registry.CodeBase can choose it from a plan's settings alone).
// A key a mechanism declares (mechanisms.AddKeys) has its row in its
// docs file's key table. A condition of one part reads that part only: a model's condition
// holds or not whatever the plan, a plan key's whatever the model
// (TestWhen in planner/cost).
func TestDeclarations(t *testing.T) {
	for _, r := range []*cost.Registry{families.Registered, mechanisms.Registered, codebases.Registered} {
		for _, p := range cost.Each[cost.Plugin](r) {
			if k, ok := p.(interface{ Keys() []plan.Key }); ok {
				for _, key := range k.Keys() {
					if b, err := os.ReadFile("../" + key.Doc); err != nil || !strings.Contains(string(b), "\n| `"+key.Name) {
						t.Errorf("%s: its key %s has no row in %s (%v)", p.Name(), key.Name, key.Doc, err)
					}
				}
			}
			_, base := p.(cost.CodeBase)
			for _, c := range p.When() {
				switch {
				case c.Says == "":
					t.Errorf("%s: a condition that says nothing", p.Name())
				case c.Of == cost.OfKey && !plan.IsKey(c.Key):
					t.Errorf("%s: condition %q reads key %q, not a plan key", p.Name(), c.Says, c.Key)
				case c.Of != cost.OfKey && c.Key != "":
					t.Errorf("%s: condition %q names key %q, reading no key", p.Name(), c.Says, c.Key)
				case base && c.Of != cost.OfStack:
					t.Errorf("%s: a code base's condition %q is not the stack's", p.Name(), c.Says)
				}
			}
		}
	}
}
