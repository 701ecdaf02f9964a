// Package rank holds rank statistics: Spearman's correlation, with which
// the bench and the published sweeps judge whether placer orders plans
// as they measured.
//
// May import: no other placer package
package rank
