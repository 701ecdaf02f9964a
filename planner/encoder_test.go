package planner

import (
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestEncoderLogitsMemory: BERT-large's loss holds the logits of its
// masked positions only (transformer.Spec.OutputTokens): 48 sequences of
// 512 on a GPU, 76 predicted of each, 3,648 rows x 30,522 logits, as
// BF16 logits, their FP32 copy and its gradient (2 + 4 + 4 bytes a
// logit, Megatron-Core's unfused cross-entropy as placer costs it) =
// 1,113,442,560 bytes; every position's would be 512 / 76 times that.
func TestEncoderLogitsMemory(t *testing.T) {
	m := mustSpec(t, "bert-large:seq=512,batch=384")
	p, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("dp=8,mbs=48,recompute=none,stack=" + plan.StackNVIDIABERT + ",distopt=on,graphs=full,pack=on,pack-len=256")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	var got int64 = -1
	for _, part := range r.MemoryParts {
		if part.Name == "logits and loss" {
			got = part.Bytes
		}
	}
	if got != 1113442560 {
		t.Errorf("logits and loss %d bytes, want 1,113,442,560", got)
	}
}
