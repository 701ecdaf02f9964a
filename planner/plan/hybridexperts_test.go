package plan

import (
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
)

// TestHybridExpertsPlans: a Nemotron-H with a block of experts (the
// pattern transformers 5.24.0's NemotronHConfig defaults read as, ME*-)
// resolves with expert parallelism; what placer does not price of it
// (checkHybridExperts: virtual stages, epoverlap; an eager stack) is
// refused in one line naming the setting, and the same strategies of the
// hybrid without experts are not refused for the experts; LoRA on a
// hybrid, with experts or without, is refused (checkHybridLoRA).
func TestHybridExpertsPlans(t *testing.T) {
	const shape = "llama:layers=4,hidden=256,heads=4,seq=256,vocab=1000,batch=8,act=relu2,ssm_heads=8,ssm_head_dim=32,ssm_state=16,ssm_groups=2,ssm_conv=4,ssm_chunk=64"
	const experts = shape + ",pattern=ME*-,experts=8,topk=2,expert_ffn=128,shared=1"
	p, err := PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ model, strategy, want string }{
		{experts, "dp=8", ""},
		{experts, "tp=2,dp=4,ep=4,sp=on", ""},
		{experts, "pp=2,dp=4,ep=4", ""},
		{shape + ",pattern=M-*-", "dp=8", ""},
		{experts, "pp=2,vp=2,dp=4,ep=4", "vp=2 with a hybrid's layers of experts (E)"},
		{experts, "dp=8,ep=8,epoverlap=on", "epoverlap=on with a hybrid's layers of experts (E)"},
		{experts, "dp=8,ep=8,peft=lora", "LoRA on a hybrid (Mamba) model is not priced"},
		{shape + ",pattern=M-*-", "dp=8,peft=lora", "LoRA on a hybrid (Mamba) model is not priced"},
		{shape + ",pattern=M-*-", "tp=2,dp=4,peft=lora,lora-rank=8", "LoRA on a hybrid (Mamba) model is not priced"},
		{shape + ",pattern=E*E-,experts=8,topk=2,expert_ffn=128,shared=1", "dp=8,stack=torchtitan-0.2", "layers of experts (E) are costed as Megatron-Core runs them"},
		{shape + ",pattern=M*--", "pp=2,vp=2,dp=4", ""},
	} {
		m, err := transformer.Parse(c.model)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(m, s, p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s, %s: %v", c.model, c.strategy, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s, %s: %v, want one line with %q", c.model, c.strategy, err, c.want)
		}
	}
}
