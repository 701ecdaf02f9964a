package plans

import (
	"context"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/search"
)

// TestCheck: export's verdict without a file, per target: a plan each
// framework writes, LoRA (Megatron-LM and torchtitan have no setting for
// it), a name export does not know; "any" refuses nothing.
func TestCheck(t *testing.T) {
	m := transformer.GPT(8, 512, 8, 2048, 1024, 16)
	for _, c := range []struct {
		target, strategy, err string
	}{
		{"megatron", "tp=2,pp=2,dp=2,mbs=1,sp=on", ""},
		{"megatron", "tp=2,pp=2,dp=2,mbs=1,sp=on,peft=lora", "no LoRA flag"},
		{"megatron-bridge", "tp=2,pp=2,dp=2,mbs=1,sp=on,peft=lora", ""},
		{"megatron-bridge", "tp=2,pp=2,dp=2,mbs=1,sp=on,grads=bf16", "megatron-bridge overrides: grads=bf16"},
		{"torchtitan", "dp=8,mbs=2,fsdp=on", ""},
		{"torchtitan", "dp=8,mbs=2,fsdp=on,peft=lora", "torchtitan 0.3.0 has no LoRA setting"},
		{"torchtitan@0.2", "dp=8,mbs=2,fsdp=on,peft=lora", "torchtitan 0.2 has no LoRA setting"},
		{"deepspeed", "dp=8,mbs=2", ""},
		{"deepspeed", "tp=2,dp=4,mbs=2", "deepspeed"},
		{"any", "tp=2,pp=2,dp=2,mbs=1,peft=lora", ""},
		{"nemo", "dp=8,mbs=2", "--to nemo: a transformer at cluster scale exports to megatron, megatron-bridge, torchtitan, deepspeed and torch-plan"},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.PodOf("dgx-h100", 8)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.strategy, err)
		}
		err = Check(c.target, m, pl.Strategy, 8)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s, %s: %v, want none", c.target, c.strategy, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s, %s: %v, want one line with %q", c.target, c.strategy, err, c.err)
		}
	}
}

// TestCheckOneMicroBatchSchedule: a plan of one micro-batch on two
// stages names no schedule once resolved (plan.Resolve names 1F1B only
// with more micro-batches) and its text says schedule=gpipe (the same
// steps as 1F1B with one micro-batch); the plan and its text get the same
// verdict: Megatron-LM's 1F1B runs both, torchtitan writes GPipe for both
// (torch's Schedule1F1B refuses fewer micro-batches than stages). GPipe
// with four micro-batches stays Megatron-LM's refusal.
func TestCheckOneMicroBatchSchedule(t *testing.T) {
	m := transformer.GPT(8, 512, 8, 2048, 1024, 16)
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		target, strategy, err string
	}{
		{"megatron", "tp=1,pp=2,dp=4,mbs=4", ""},
		{"megatron", "tp=1,pp=2,dp=4,mbs=4,schedule=gpipe", ""},
		{"megatron", "tp=1,pp=2,dp=4,mbs=1,schedule=gpipe", "schedule=gpipe: Megatron-LM runs 1F1B"},
		{"torchtitan", "tp=1,pp=2,dp=4,mbs=4,fsdp=on", ""},
		{"torchtitan", "tp=1,pp=2,dp=4,mbs=4,fsdp=on,schedule=gpipe", ""},
		{"torchtitan@0.2", "tp=1,pp=2,dp=4,mbs=4,fsdp=on", ""},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.strategy, err)
		}
		err = Check(c.target, m, pl.Strategy, 8)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s, %s (resolved %s): %v, want none", c.target, c.strategy, pl, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s, %s (resolved %s): %v, want %q", c.target, c.strategy, pl, err, c.err)
		}
	}
}

// TestSearchSetsAsideRefused: a search for Megatron-LM keeping LoRA finds
// no plan, every plan of its space set aside before it is evaluated with
// the exporter's reason; for any framework it finds one with LoRA.
func TestSearchSetsAsideRefused(t *testing.T) {
	m := transformer.GPT(8, 512, 8, 2048, 1024, 16)
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("peft=lora")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		target string
		found  bool
		why    string
	}{
		{"megatron", false, "peft=lora: Megatron-LM core_v0.16.1 has no LoRA flag"},
		{"any", true, ""},
	} {
		target, err := SearchTarget(c.target, m, 8)
		if err != nil {
			t.Fatal(err)
		}
		got, err := search.Search(context.Background(), m, p, search.Space{FineTune: s.FineTune, For: target})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case got.Found != c.found:
			t.Errorf("--for %s: found %v, want %v", c.target, got.Found, c.found)
		case !c.found && (got.Evaluated != 0 || got.Refused == 0 || !strings.Contains(got.RefusedWhy, c.why)):
			t.Errorf("--for %s: %d evaluated, %d refused (%q); want 0, some, %q", c.target, got.Evaluated, got.Refused, got.RefusedWhy, c.why)
		case c.found && (got.Refused != 0 || !got.Best.Plan.LoRA()):
			t.Errorf("--for %s: %d refused, best %s; want none refused and LoRA kept", c.target, got.Refused, got.Best.Plan)
		}
	}
}
