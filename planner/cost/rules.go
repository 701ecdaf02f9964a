package cost

// Rule is how the framework (planner) asks an extension point's
// registered plug-ins, one rule a point, named in the point's doc as
// "Dispatch: <rule>." and held by a test (planner's
// TestDispatchRules, which reads this package's sources and the
// framework's):
//
//   - RuleFirst: the first registered plug-in that implements it, asked
//     whatever the step (First); it tells itself where it does not
//     apply;
//   - RuleEach: every registered plug-in that implements it, in the
//     order registered, families first (Each); one that does not apply
//     adds nothing;
//   - RulePricing: the first registered plug-in that implements it and
//     that the framework recorded as pricing the step (Shard.Priced);
//     none: the framework's own default;
//   - RuleEachPricing: every registered plug-in that implements it and
//     that the framework recorded as pricing the step, in the order
//     registered.
type Rule string

const (
	RuleFirst       Rule = "First"
	RuleEach        Rule = "Each"
	RulePricing     Rule = "Pricing"
	RuleEachPricing Rule = "EachPricing"
)

// Rules is each extension point's dispatch rule, by its interface's
// name: every interface of this package that embeds Plugin, and no
// other.
var Rules = map[string]Rule{
	"CPAttention":         RulePricing,
	"AttentionKernels":    RuleEachPricing,
	"MLPKernels":          RuleEachPricing,
	"ExpertActivation":    RuleEachPricing,
	"ExpertOutput":        RuleEachPricing,
	"RouterKernels":       RuleEachPricing,
	"OutputHeads":         RuleEachPricing,
	"FineTune":            RulePricing,
	"SSMBlock":            RuleFirst,
	"LinearMixer":         RuleFirst,
	"AttentionBlock":      RulePricing,
	"PredictionModules":   RulePricing,
	"AttentionMemory":     RulePricing,
	"PredictionMemory":    RulePricing,
	"GroupedGEMM":         RuleFirst,
	"LowPrecision":        RulePricing,
	"ExpertLoad":          RulePricing,
	"TokenDispatcher":     RuleFirst,
	"DataParallel":        RulePricing,
	"StepClock":           RuleFirst,
	"Optimizer":           RulePricing,
	"StepKernels":         RuleEach,
	"StageKernels":        RuleEachPricing,
	"HighPrecisionLayers": RulePricing,
	"FSDP":                RulePricing,
	"GatherWire":          RulePricing,
	"Contention":          RulePricing,
	"StepHost":            RuleEachPricing,
	"Host":                RuleFirst,
}
