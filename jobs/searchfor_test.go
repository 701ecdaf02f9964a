package jobs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/inputs"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/search"
)

// forModel is draw i's model as a --workload, its shape drawn from r:
// GPT or Llama shapes (odd layer counts, experts now and then, with
// multi-token prediction), or one of graph/transformer/testdata/hf's
// configs whose families some frameworks refuse (Gemma 3's GeGLU and
// post-norms, Llama 4's chunked attention) or write (Llama 3, Qwen 3).
// The kind cycles with i/3, and the config with i/15, so that every
// framework (i%3) meets every kind and config within 60 draws.
func forModel(i int, r *rand.Rand) string {
	heads := []int{4, 8, 16}[r.IntN(3)]
	layers := 3 + r.IntN(13)
	batch := []int{16, 32, 64}[r.IntN(3)]
	kind := (i / 3) % 5
	switch kind {
	case 0:
		return fmt.Sprintf("gpt:layers=%d,hidden=%d,heads=%d,seq=2048,vocab=1024,batch=%d", layers, heads*64, heads, batch)
	case 1, 2:
		text := fmt.Sprintf("llama:layers=%d,hidden=%d,heads=%d,kv_heads=%d,ffn=%d,seq=2048,vocab=1024,batch=%d",
			layers, heads*64, heads, heads/2, heads*160, batch)
		if r.IntN(2) == 0 {
			text += ",experts=8,topk=2,expert_ffn=256"
			if r.IntN(2) == 0 {
				text += ",mtp=1"
			}
		}
		return text
	}
	hf := []string{"gemma-3-1b", "llama4-scout", "llama3-8b", "qwen3-8b"}[(i/15+2*(kind-3))%4]
	return fmt.Sprintf("hf:../graph/transformer/testdata/hf/%s.json:seq=2048,batch=%d", hf, batch)
}

// forKeys are the settings a search keeps that some framework's export
// refuses: LoRA, packing, each FP8 recipe, the block-scaled MXFP8 and
// NVFP4 (Blackwell pods only), TE's fused loss, FSDP, BF16 gradients.
var forKeys = []string{"peft=lora", "pack=on,pack-len=1024", "fp8=current", "fp8=delayed", "fp8=blockwise",
	"fp8=rowwise", "fp8=mxfp8", "fp4=nvfp4", "loss-fusion=on", "fsdp=on", "grads=bf16"}

// TestSearchForMatchesExport: for each framework --for names, over
// random small models, pods and kept settings, the plans placer search
// keeps are exactly those placer export --to the same framework writes.
// The search's space (ScaleOptions.space, as placer search builds it)
// runs with its framework's check recorded: some of the plans it kept
// and some it set aside, each exported with --strategy PLAN (over the
// GPUs' memory allowed: fitting is the search's other filter), must be
// written and refused respectively. The reasons seen must include LoRA,
// a Gemma 3 or Llama 4 model, a torchao recipe under Megatron-LM and
// the block-scaled formats under torchtitan, or the draw tests too
// little.
func TestSearchForMatchesExport(t *testing.T) {
	r := rand.New(rand.NewPCG(70, 67))
	dir := t.TempDir()
	seen := map[string]int{}
	skipped := 0
	for i := range 90 {
		target := []string{"megatron", "torchtitan", "deepspeed"}[i%3]
		workload := forModel(i, r)
		pod := []string{"dgx-h100", "dgx-b200"}[r.IntN(2)]
		// A setting cycling with i/3 (every framework meets each), now
		// and then none, now and then another drawn beside it.
		var keys []string
		if r.IntN(5) > 0 {
			keys = append(keys, forKeys[(i/3)%len(forKeys)])
		}
		if r.IntN(3) == 0 {
			keys = append(keys, forKeys[r.IntN(len(forKeys))])
		}
		strat := strings.Join(keys, ",")
		o := ScaleOptions{Workload: workload, Cluster: pod + ":1", Strat: strat, For: target}
		m, p, err := o.inputs()
		if err != nil {
			t.Fatalf("%d: %s: %v", i, workload, err)
		}
		space, err := o.space(m, p)
		if err != nil {
			skipped++ // a setting this pod or stack does not have: no search
			continue
		}
		var kept, refused []plan.Plan
		check := space.For.Refuses
		space.For.Refuses = func(pl plan.Plan) error {
			why := check(pl)
			switch {
			case why == nil && r.IntN(16) == 0 && len(kept) < 3:
				kept = append(kept, pl)
			case why != nil && r.IntN(16) == 0 && len(refused) < 3:
				refused = append(refused, pl)
			}
			return why
		}
		// The draw is of the user's plans: no recipe switch's variants
		// (each another call of Refuses, which would shift the draw).
		space.AllowTight, space.Levers = true, nil
		if _, err := search.Search(context.Background(), m, p, space); err != nil {
			t.Fatalf("%d: %s on %s, keeping %q, --for %s: %v", i, workload, pod, strat, target, err)
		}
		export := func(pl plan.Plan) error {
			_, err := exportjob.Run(exportjob.Options{World: inputs.ClusterScale, To: target, Strategy: pl.String(),
				Out:   filepath.Join(dir, "plan"),
				Scale: exportjob.ScaleOptions{Workload: workload, Pod: inputs.PodSpec{Pod: pod + ":1"}, AllowOver: true}})
			return err
		}
		for _, pl := range kept {
			if err := export(pl); err != nil {
				t.Errorf("%d: %s on %s, --for %s kept %s; export --to %s refuses it: %v", i, workload, pod, target, pl, target, err)
			}
		}
		for _, pl := range refused {
			err := export(pl)
			if err == nil {
				t.Errorf("%d: %s on %s, --for %s set aside %s (%v); export --to %s writes it", i, workload, pod, target, pl, check(pl), target)
				continue
			}
			for _, why := range []string{"peft=lora", "Gemma", "Llama 4", "torchao", "MX or NVFP4", "pack=on"} {
				if strings.Contains(err.Error(), why) {
					seen[target+": "+why]++
				}
			}
		}
	}
	for _, want := range []string{"megatron: peft=lora", "megatron: Gemma", "megatron: Llama 4", "torchtitan: peft=lora"} {
		if seen[want] == 0 {
			t.Errorf("no plan set aside for %q: the draw tests no such refusal (seen %v)", want, seen)
		}
	}
	t.Logf("refusals checked against export: %v; %d draws not searched (settings the pod or stack has not)", seen, skipped)
}

// TestSearchForLoRA: placer search keeping peft=lora for Megatron-LM
// (which has no LoRA flag, the default) says in one line that no plan
// runs there, why, and which --for runs it; for Megatron-Bridge or any
// framework it proposes a LoRA plan.
func TestSearchForLoRA(t *testing.T) {
	const workload = "hf:../graph/transformer/testdata/hf/llama3-8b.json:seq=8192,batch=256"
	for _, c := range []struct {
		target, err string
	}{
		{"megatron", "no plan keeping peft=lora runs under megatron: its export refuses all"},
		// The default (--for megatron) names the export that runs LoRA:
		// Megatron-Bridge's alone.
		{"", "); --for megatron-bridge runs it (--for any searches every plan)"},
		{"megatron-bridge", ""},
		{"any", ""},
	} {
		rep, err := ScaleSearch(context.Background(), ScaleOptions{Workload: workload, Cluster: "dgx-h100:4", Strat: "peft=lora", For: c.target})
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "no LoRA flag") || strings.Contains(err.Error(), "\n")):
			t.Errorf("--for %s: %v; want one line with %q and the reason", c.target, err, c.err)
		case c.err == "" && (err != nil || !strings.Contains(rep.Best.Strategy, "peft=lora")):
			t.Errorf("--for %s: best %q, %v; want a plan with peft=lora", c.target, rep.Best.Strategy, err)
		}
	}
}

// TestSearchNoPlanFits: a search that finds no plan fitting (Llama 3 70B
// fully trained on one DGX H100) says the least memory a plan needed,
// that plan, and what would lower it: more nodes, LoRA (with the export
// that runs it), for the default framework and --for any alike; LoRA is
// not offered where it is not modelled (experts) or already kept, full
// recomputation where the least plan does not recompute every layer;
// each hint only where its search finds a plan (TestHintsRun runs them).
func TestSearchNoPlanFits(t *testing.T) {
	for _, c := range []struct {
		workload, strat, target string
		want, not               []string
	}{
		{"llama3-70b:seq=8192,batch=64", "", "", []string{"no plan fits 85.9 GB per GPU", "; the least a plan needs is ", " GB a GPU (tp=", "more nodes (--cluster dgx-h100:2 or more)", "LoRA fine-tuning (--strategy peft=lora --for megatron-bridge"}, []string{"full recomputation"}},
		{"llama3-70b:seq=8192,batch=64", "", "any", []string{"(11376 plans tried for any); the least a plan needs is ", "more nodes", "--strategy peft=lora --for megatron-bridge"}, nil},
		// Full recomputation does not bring 70B under one node's memory
		// (searched: the hint is left out); the LoRA hint keeps what the
		// search kept.
		{"llama3-70b:seq=8192,batch=64", "recompute=selective", "", []string{"more nodes (--cluster dgx-h100:4 or more)", "LoRA fine-tuning (--strategy recompute=selective,peft=lora --for megatron-bridge"}, []string{"full recomputation"}},
		{"llama3.1-405b:seq=8192,batch=64", "peft=lora", "megatron-bridge", []string{"the least a plan needs is ", "more nodes"}, []string{"LoRA fine-tuning"}},
		// LoRA on a model with experts is a plan (Megatron-Bridge's
		// shared expert adapters), searched before it is offered.
		// (Qwen3 30B-A3B, not 235B-A22B: the same 128 experts, its hints
		// searched in 2.6 CPU s against 10.5.)
		{"qwen3-30b-a3b:seq=4096,batch=64", "", "", []string{"the least a plan needs is ", "more nodes", "LoRA fine-tuning (--strategy peft=lora --for megatron-bridge"}, nil},
	} {
		_, err := ScaleSearch(context.Background(), ScaleOptions{Workload: c.workload, Cluster: "dgx-h100:1", Strat: c.strat, For: c.target})
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %s --for %q: %v; want one line", c.workload, c.strat, c.target, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %s --for %q: %v; want %q", c.workload, c.strat, c.target, err, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(err.Error(), w) {
				t.Errorf("%s %s --for %q: %v; want no %q", c.workload, c.strat, c.target, err, w)
			}
		}
	}
}
