package plans

import (
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestFineTuneExports: pack=on is Megatron-LM's --sft (its packed SFT
// dataset, attention within each conversation); peft=lora is refused by
// Megatron-LM and torchtitan (both releases) in one line each, pack=on by
// torchtitan. (DeepSpeed and the torch plan refuse both as keys they
// write no setting for: unwritten.)
func TestFineTuneExports(t *testing.T) {
	m, err := transformer.Parse("llama:layers=8,hidden=64,heads=4,seq=16,vocab=128,batch=32")
	if err != nil {
		t.Fatal(err)
	}
	lora := plan.Strategy{Replicas: 8, MicroBatchSize: 4, MicroBatches: 1, FSDP: true, FineTune: plan.FineTune{LoRARank: 8}}
	pack := plan.Strategy{Replicas: 8, MicroBatchSize: 4, MicroBatches: 1, FSDP: true, FineTune: plan.FineTune{PackLens: []int{8}}}
	megatronPack := pack
	megatronPack.FSDP = false
	args, err := MegatronArgs(m, megatronPack, 8)
	if err != nil || !slices.Contains(args, "--sft") {
		t.Errorf("megatron, pack=on: %v, %v; want --sft", args, err)
	}
	megatronLoRA := lora
	megatronLoRA.FSDP = false
	_, err = MegatronArgs(m, megatronLoRA, 8)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"megatron lora", err, "peft=lora: Megatron-LM core_v0.16.1 has no LoRA flag"},
		{"torchtitan 0.2 lora", errOf(TorchTitanTransformer(m, lora, 8, "0.2")), "peft=lora: torchtitan 0.2 has no LoRA setting"},
		{"torchtitan 0.3 lora", errOf(TorchTitanTransformer(m, lora, 8, "0.3")), "peft=lora: torchtitan 0.3.0 has no LoRA setting"},
		{"torchtitan 0.2 pack", errOf(TorchTitanTransformer(m, pack, 8, "0.2")), "pack=on: torchtitan 0.2: attention within packed documents"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) || strings.Contains(c.err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, c.err, c.want)
		}
	}
}

func errOf(_ []byte, err error) error { return err }
