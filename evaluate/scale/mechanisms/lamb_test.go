package mechanisms

import (
	"testing"

	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/evaluate/scale/plan"
)

// TestLAMBBytes: apex's DistributedFusedLAMB over a parameter, by hand:
// the gradient norm reads 4; compute_update_term reads gradient, weight
// and two moments (16) and writes moments and update (12); the weights'
// and updates' norms read 8; update_weights reads weight and update (8)
// and writes the FP32 weight and its 16-bit copy (6). 36 read, 18
// written, where placer's Adam reads 16 and writes 14: 20 and 4 more.
func TestLAMBBytes(t *testing.T) {
	if LAMBExtraRead != 36-16 || LAMBExtraWrite != 18-14 {
		t.Errorf("LAMB's extra bytes %d read, %d written; want 20, 4", LAMBExtraRead, LAMBExtraWrite)
	}
	on := &cost.Shard{Plan: plan.Plan{Run: plan.Settings{LAMB: true}}}
	if !(LAMB{}).Prices(on) || (LAMB{}).Prices(&cost.Shard{}) {
		t.Error("LAMB priced where the stack does not run it, or not where it does")
	}
	ns, err := plan.LookupStack(plan.StackNVIDIABERT)
	if err != nil || !ns.Settings.LAMB {
		t.Errorf("stack %s: %v, LAMB %t", plan.StackNVIDIABERT, err, ns.Settings.LAMB)
	}
}
