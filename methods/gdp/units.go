package gdp

import (
	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/partition"
	"github.com/placer/placer/optimize"
)

// MaxUnits is the default bound on the policy's decision units. Every
// forward and backward pass costs time in proportion to the units, so a
// graph with more co-location groups than this is contracted first: on
// gnmt8 (76,256 groups) one PPO step took about 22 s on two cores.
const MaxUnits = 8192

// Units groups p's ops into at most about max decision units for the
// policy, or returns nil when the co-location groups are already few
// enough (max <= 0 = MaxUnits). Groups come from heavy-edge matching on
// the bytes between ops (partition.Contract, co-location groups kept
// whole), and never join two ops that target places on different
// devices: the reference the policy imitates and is anchored on stays
// exactly representable (a unit's ops keep their own priority and fusion
// levels as offsets from the unit's, see tiebreak), and a unit is a piece
// of the graph that the reference keeps on one device anyway. (Grouping
// by the priority and fusion levels too left 18,890 units on gnmt8 over
// the bound of 8,192.)
func Units(p *optimize.Problem, target decision.Decision, max int, seed uint64) ([]int32, error) {
	if max <= 0 {
		max = MaxUnits
	}
	// One label per device of the reference (policyTarget keeps its
	// devices).
	key := func(op int) int { return target.Device[op] }
	unit, _, err := partition.ContractOps(p.Graph, p.Cost.OpTimes(), max, key, seed)
	return unit, err
}
