package jobs

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestScaleEvalPricedBy: eval's report (and its --json) names what
// priced the step from the registries: the code base of the plan's
// stack, the families' traits and the mechanisms that priced it.
func TestScaleEvalPricedBy(t *testing.T) {
	for _, c := range []struct {
		name, workload, cluster, strat, want string
	}{
		{"llama, cp 2", "llama3-8b:seq=8192,batch=64", "dgx-h100:4", "tp=2,cp=2,dp=8,mbs=1",
			`"priced_by":{"code_base":"fused","mechanisms":["cp-ring","power-limit","adam","sm-contention","host-issue"]}`},
		{"gpt-oss on torchtitan", "gpt-oss-120b:seq=4096,batch=512", "dgx-h100:8", "pp=4,ep=8,dp=16,mbs=1,stack=torchtitan-0.2",
			`"priced_by":{"code_base":"torchtitan","mechanisms":["token-dispatch","power-limit","adam","sm-contention","host-issue"]}`},
		{"gpt-oss on megatron", "gpt-oss-120b:seq=4096,batch=512", "dgx-h100:8", "pp=4,ep=8,dp=16,mbs=1,stack=megatron-bridge-25.11",
			`"priced_by":{"code_base":"fused","families":["yarn-rope","linear-bias","swiglu-clamp"],"mechanisms":["token-dispatch","random-routing","te-grouped-gemm","power-limit","adam","sm-contention","host-issue"]}`},
	} {
		ev, err := ScaleEval(t.Context(), ScaleOptions{Workload: c.workload, Cluster: c.cluster, Strat: c.strat})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%s: no %s in %s", c.name, c.want, b)
		}
	}
}
