package mechanisms

import (
	"github.com/placer/placer/planner/plan"
	"math"
	"sync"

	"github.com/placer/placer/planner/cost"
)

// RandomRouting is the most loaded expert-parallel rank's share of the
// token copies under the force-balanced router the published Megatron
// benchmarks run (cost.ExpertLoad): moe_router_force_load_balancing
// replaces the router's logits with logits.clone().normal_() from an
// RNG forked per expert-parallel rank (Megatron-LM d98e8a6 megatron/core/
// transformer/moe/moe_utils.py RandomSTE, apply_random_logits; router.py
// TopKRouter.forward), which every Megatron-Bridge performance recipe
// sets for its MoE models (Megatron-Bridge 067f987d scripts/performance/
// utils/overrides.py: use_tokendrop False; src/megatron/bridge/
// perf_recipes/gpt_oss/h100/gpt_oss.py; perf_recipes/qwen/*)
// and the model zoo's Qwen3-235B launch passes
// (moe_router_force_load_balancing=true,
// scripts/moe_model_zoo/examples/qwen3/launch_qwen235b.sh). With
// independent normal logits a token's top-k is a uniformly random
// k-subset of the E experts, so no rank is favoured, but each rank's
// count fluctuates and the dropless dispatcher gives every rank what it
// drew: each layer's all-to-all waits on the rank that drew the most,
// whose experts' GEMMs are the longest. Priced on a Megatron stack's
// plan with expert parallelism that states no imbalance and drops no
// token (the plan auxloss.go's RouterAuxLoss prices the random logits'
// kernels of).
type RandomRouting struct{}

var _ cost.ExpertLoad = RandomRouting{}

// Name is the mechanism's registered name.
func (RandomRouting) Name() string { return "random-routing" }

// When is the routing's declaration: a plan that routes at random over
// more than one expert-parallel rank (forceBalanced).
func (RandomRouting) When() cost.When { return routingWhen }

var routingWhen = cost.When{
	cost.MoE,
	cost.Key("ep", "ep>1, imbalance<=1, capacity 0", func(pl *plan.Plan) bool {
		return pl.EP > 1 && pl.Imbalance <= 1 && pl.Run.Capacity == 0
	}),
	cost.Megatron,
}

// forceBalanced is whether s's plan routes every token's top-k to a
// uniformly random k of its experts over more than one expert-parallel
// rank: Megatron-Core's layers with neither a stated imbalance nor
// capacity routing. A fact of the plan that RandomRouting prices the
// load by and TEGroupedGEMM its GEMMs' spread by, each on its own (no
// plug-in asks another).
func forceBalanced(s *cost.Shard) bool {
	pl := &s.Plan
	return s.M.MoE() && pl.EP > 1 && pl.Imbalance <= 1 && pl.Run.Capacity == 0 && s.MegatronLayers()
}

// Load is the expected most loaded rank's copies over the mean for nl
// tokens a GPU (LoadOf over the EP group's nl x EP tokens), asked where
// the shard's record says it prices the step (the coster takes the
// plan's own load factor elsewhere).
func (r RandomRouting) Load(s *cost.Shard, nl float64) float64 {
	return LoadOf(nl*float64(s.Plan.EP), s.M.Experts, s.M.TopK, s.Plan.EP)
}

// LoadOf is the expected largest of n ranks' received copies over their
// mean, where each of N tokens picks k of E experts uniformly at random
// (E/n experts a rank). One token's copies on a rank are hypergeometric:
// mean k/n, variance v = k (1/n)(1 - 1/n)(E - k)/(E - 1); over N
// independent tokens a rank's count has mean N k/n and variance N v, and
// the n counts, summing to N k, have correlation -1/(n - 1): as N grows
// they are sqrt(n/(n - 1)) sd (Z_i - mean Z) for n independent standard
// normals Z, whose largest exceeds their mean by NormalMaxMean(n) on
// average (the mean of Z is shared). So the load is 1 + sqrt(n/(n - 1))
// NormalMaxMean(n) sqrt(N v)/(N k/n). 1 for one rank, no token or no
// expert to spare.
func LoadOf(N float64, E, k, n int) float64 {
	if n <= 1 || N <= 0 || k <= 0 || E <= k || E%n != 0 {
		return 1
	}
	fn, fE, fk := float64(n), float64(E), float64(k)
	v := fk * (1 / fn) * (1 - 1/fn) * (fE - fk) / (fE - 1)
	mean := N * fk / fn
	return 1 + math.Sqrt(fn/(fn-1))*NormalMaxMean(n)*math.Sqrt(N*v)/mean
}

// normalMax memoizes NormalMaxMean by n.
var normalMax sync.Map

// NormalMaxMean is the expected largest of n independent standard
// normals, integral of x n phi(x) Phi(x)^(n-1) dx, by Simpson's rule on
// [-12, 12] in 4,800 steps (0.5642 for 2, 1.0294 for 4, 1.4236 for 8,
// 1.7660 for 16, 2.0697 for 32: Harter 1961's table of expected normal
// order statistics, Biometrika 48; 2.3437 for 64); 0 for one or none.
func NormalMaxMean(n int) float64 {
	if n <= 1 {
		return 0
	}
	if v, ok := normalMax.Load(n); ok {
		return v.(float64)
	}
	const lo, hi, steps = -12.0, 12.0, 4800
	h := (hi - lo) / steps
	f := func(x float64) float64 {
		phi := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
		cdf := 0.5 * math.Erfc(-x/math.Sqrt2)
		return x * float64(n) * phi * math.Pow(cdf, float64(n-1))
	}
	sum := f(lo) + f(hi)
	for i := 1; i < steps; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(lo+float64(i)*h)
	}
	e := sum * h / 3
	normalMax.Store(n, e)
	return e
}
