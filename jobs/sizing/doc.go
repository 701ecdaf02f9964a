// Package sizing is placer size's job (Run): the question a team asks
// before it trains, for so many tokens of one model, which GPUs, how
// many, for how long, at what cost, and how sure. Each candidate cluster
// gets placer search's best plan (package jobs' ScaleSearch: the same
// search, the same framework choice), and its step time becomes the
// run's time to train, GPU-hours, energy and cost, with the step's
// stated error carried through as a band (docs/sizing.md). Prices come
// from a price table (prices.csv here, public on-demand list prices with
// their source and date, or the user's file); the goodput, the share of
// wall time that trains, is a stated assumption with a published
// default.
//
// May import: planner/plan, graph/transformer, jobs, report/plans, optimize, internal/...
package sizing
