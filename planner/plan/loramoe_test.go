package plan

import (
	"strings"
	"testing"
)

// TestLoRAWithExperts: peft=lora on a model with experts is a plan on
// Megatron-Core's layers, refused on torchtitan's in one line; latent
// attention stays refused.
func TestLoRAWithExperts(t *testing.T) {
	for _, c := range []struct{ model, strategy, err string }{
		{"qwen3-30b-a3b:seq=2048,batch=32", "peft=lora,ep=8", ""},
		{"qwen3-30b-a3b:seq=2048,batch=32", "peft=lora,ep=8,stack=torchtitan-0.2", "peft=lora with experts on torchtitan: LoRA over experts is modelled on Megatron-Core's layers (Megatron-Bridge's PEFT) only"},
		{"deepseek-v3:seq=2048,batch=32", "peft=lora,ep=8", "peft=lora with latent attention"},
	} {
		s, err := ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		err = FineTuneFits(mustSpec(t, c.model), s)
		if (err == nil) != (c.err == "") || err != nil && !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%s with %s: %v, want %q", c.model, c.strategy, err, c.err)
		}
	}
}
