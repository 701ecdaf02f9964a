package jobs

import (
	"testing"

	"github.com/placer/placer/planner/published"
)

// TestScaleEvalMemoryError: eval's plan carries its peak memory's
// out-of-sample error beside its memory, over the published peaks of its
// family and precision (the quick start's dense BF16 plan: torchtitan's
// four BF16 rows of tables 1 and 3 and torchao's BF16 row, 5 peaks),
// else over every published peak, said so (a MoE plan: none of MoE
// BF16, so all 22 peaks: torchtitan's and torchao's tables' 21 and the
// Trainy H200 development row's; its validation row is in no checked
// table); a CPU
// profile's pod carries none (its rows ran on GPUs).
func TestScaleEvalMemoryError(t *testing.T) {
	for _, c := range []struct {
		name, workload, cluster, strat string
		rows                           int
		all                            bool
	}{
		{"quick start", "hf:../graph/transformer/testdata/hf/llama3-8b.json:seq=8192,batch=256", "dgx-h100:4", "tp=1,pp=1,dp=32,mbs=1,fsdp=on", 5, false},
		{"MoE", "mixtral-8x7b:seq=4096,batch=64", "dgx-h100:4", "tp=2,sp=on,ep=8,pp=2,dp=8,mbs=1", 22, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev, err := ScaleEval(t.Context(), ScaleOptions{Workload: c.workload, Cluster: c.cluster, Strat: c.strat})
			if err != nil {
				t.Fatal(err)
			}
			e := ev.PeakRegimeError
			if e == nil || e.Rows != c.rows || e.All != c.all || e.Kind != published.OutOfSample {
				t.Fatalf("memory error %+v, want %d rows, all %t, out of sample", e, c.rows, c.all)
			}
		})
	}
}
