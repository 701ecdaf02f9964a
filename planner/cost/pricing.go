package cost

// Pricing and EachPricing are how the framework asks a Pricing or an
// EachPricing point (Rules) by a shard's record, Shard.Priced: the
// point's implementers, each with its bit in a record.

// implementer is a plug-in at a Pricing or EachPricing point with its bit in
// a record: a family's trait's in Record.Families, a mechanism's in
// Record.Mechanisms (the other zero).
type implementer[T Plugin] struct {
	P   T
	Bit Record
}

// in is whether r records p as pricing its step.
func (p *implementer[T]) in(r *Record) bool {
	return r.Families&p.Bit.Families|r.Mechanisms&p.Bit.Mechanisms != 0
}

// EachPricing is an EachPricing point's implementers with their bits
// (RuleEachPricing): On asks them by a shard's record, the one way in.
type EachPricing[T Plugin] struct{ ps []implementer[T] }

// Pricing is a Pricing point's implementers with their bits
// (RulePricing): Of asks them by a shard's record, the one way in.
type Pricing[T Plugin] struct{ ps []implementer[T] }

// Of is the first of ps that shard s's record says prices its step
// (Shard.Priced); the zero T where none does.
func (ps Pricing[T]) Of(s *Shard) T {
	for i := range ps.ps {
		if ps.ps[i].in(&s.Priced) {
			return ps.ps[i].P
		}
	}
	var zero T
	return zero
}

// On is those of ps that shard s's record says price its step
// (Shard.Priced), in the order registered.
func (ps EachPricing[T]) On(s *Shard) func(yield func(T) bool) {
	return func(yield func(T) bool) {
		for i := range ps.ps {
			if ps.ps[i].in(&s.Priced) && !yield(ps.ps[i].P) {
				return
			}
		}
	}
}

// Plugins is ps's plug-ins, in the order registered, whatever a record
// says (for listing: the framework asks them by Of).
func (ps Pricing[T]) Plugins() []T { return EachPricing[T](ps).Plugins() }

// Plugins is ps's plug-ins, in the order registered, whatever a record
// says (for listing: the framework asks them by On).
func (ps EachPricing[T]) Plugins() []T {
	ts := make([]T, len(ps.ps))
	for i, p := range ps.ps {
		ts[i] = p.P
	}
	return ts
}
