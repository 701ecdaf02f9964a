package memory

import (
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestGLUClampSaved: GPT-OSS's clamp keeps a second copy of FC1's output
// for the backward on a Megatron stack, by hand: the H100 row's plan
// (PP 4, EP 8, MBS 1, 4,096 tokens, top-4, balanced) has 16,384 rows of
// 2 x 2,880 on a GPU, 16,384 x 5,760 x 2 = 188,743,680 bytes more than
// the same model without a clamp, all of it freed under moe_act. None on
// torchtitan's layer.
func TestGLUClampSaved(t *testing.T) {
	p, err := plan.ParsePod("dgx-h100:8")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, keys string
		want       float64
	}{
		{"megatron-bridge", "pp=4,ep=8,dp=16,mbs=1,stack=megatron-bridge-25.11", 188743680},
		{"torchtitan", "pp=4,ep=8,dp=16,mbs=1,stack=torchtitan-0.2", 0},
	} {
		parts := func(limit float64) (a, mid float64) {
			m := mustSpec(t, "gpt-oss-120b:seq=4096,batch=512")
			m.Config.SwiGLULimit = limit
			s, err := plan.ParseStrategy(tc.keys)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := plan.Resolve(m, s, p)
			if err != nil {
				t.Fatal(err)
			}
			c := counterAt(m, pl, &p, pl.TP, 4096)
			a, _, mid, _ = c.moeActivationParts()
			return a, mid
		}
		a7, mid7 := parts(7)
		a0, mid0 := parts(0)
		if a7-a0 != tc.want || mid7-mid0 != tc.want {
			t.Errorf("%s: the clamp keeps %g bytes more, frees %g more under moe_act; want %g", tc.name, a7-a0, mid7-mid0, tc.want)
		}
	}
}
