package plans

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/search"
)

// randomModel is a small transformer drawn from r: GPT or Llama, 3 to 31
// layers (odd counts too, so that pipelines split unevenly), 4 to 16
// heads, now and then experts (half of them with a multi-token
// prediction layer); batch and GPUs powers of two.
func randomModel(r *rand.Rand) (transformer.Spec, int) {
	heads := []int{4, 8, 16}[r.IntN(3)]
	layers := 3 + r.IntN(29)
	batch := []int{16, 32, 64, 128}[r.IntN(4)]
	gpus := []int{8, 16, 32, 64}[r.IntN(4)]
	text := fmt.Sprintf("gpt:layers=%d,hidden=%d,heads=%d,seq=2048,vocab=1024,batch=%d", layers, heads*64, heads, batch)
	if r.IntN(2) == 0 {
		text = fmt.Sprintf("llama:layers=%d,hidden=%d,heads=%d,kv_heads=%d,ffn=%d,seq=2048,vocab=1024,batch=%d",
			layers, heads*64, heads, heads/2, heads*160, batch)
		if r.IntN(3) == 0 {
			text += ",experts=8,topk=2,expert_ffn=256"
			if r.IntN(2) == 0 {
				text += ",mtp=1" // DeepSeek-V3's multi-token prediction
			}
		}
	}
	m, err := transformer.Parse(text)
	if err != nil {
		panic(err) // the shapes above parse
	}
	return m, gpus
}

// TestSearchForMegatron: over 16 random small models (40 until
// 2026-11-29: 70 CPU s against 31, the two refusals below found by both,
// 127 and 21 plans against 49 and 21), every plan the search
// returns for Megatron-LM (its best and runners-up) is one MegatronArgs
// writes, and none is faster than the best of every plan (--for any),
// the space it is cut from. Some of the models must give the search
// plans to cut, an uneven split with virtual stages and multi-token
// prediction beside the experts' overlap without a pipeline (plans --for
// any finds that Megatron-Core refuses), or the test tests nothing.
func TestSearchForMegatron(t *testing.T) {
	r := rand.New(rand.NewPCG(54, 1))
	refused := map[string]int{}
	for i := range 16 {
		m, gpus := randomModel(r)
		p, err := plan.PodOf("dgx-h100", gpus)
		if err != nil {
			t.Fatal(err)
		}
		searchFor := func(name string) search.Result {
			target, err := SearchTarget(name, m, gpus)
			if err != nil {
				t.Fatal(err)
			}
			got, err := search.Search(context.Background(), m, p, search.Space{Top: 50, For: target})
			if err != nil {
				t.Fatalf("%d: %s on %d GPUs: --for %s: %v", i, m, gpus, name, err)
			}
			return got
		}
		mega, any := searchFor("megatron"), searchFor("any")
		if !mega.Found || !any.Found {
			t.Errorf("%d: %s on %d GPUs: found: megatron %v, any %v", i, m, gpus, mega.Found, any.Found)
			continue
		}
		for _, res := range mega.Top {
			if _, err := MegatronArgs(m, res.Plan.Strategy, gpus); err != nil {
				t.Errorf("%d: %s on %d GPUs: --for megatron proposed %s: %v", i, m, gpus, res.Plan, err)
			}
		}
		if mega.Best.Step < any.Best.Step {
			t.Errorf("%d: %s on %d GPUs: --for megatron's %s (%v s) is faster than --for any's best %s (%v s)", i, m, gpus,
				mega.Best.Plan, mega.Best.Step, any.Best.Plan, any.Best.Step)
		}
		for _, res := range any.Top {
			if _, err := MegatronArgs(m, res.Plan.Strategy, gpus); err != nil {
				for _, why := range []string{"vp equal model chunks", "mtp=1 and pp=1"} {
					if strings.Contains(err.Error(), why) {
						refused[why]++
					}
				}
			}
		}
	}
	for _, why := range []string{"vp equal model chunks", "mtp=1 and pp=1"} {
		if refused[why] == 0 {
			t.Errorf("no plan of --for any was refused for %q: the models test no such constraint", why)
		}
	}
	t.Logf("plans of --for any Megatron-Core refuses: %v", refused)
}

// TestSearchForTorchTitan: the search for torchtitan proposes plans its
// exporter writes (the Llama 3 405B on 1,024 GPUs whose best plan of all
// has the distributed optimizer, which torchtitan has no setting for).
func TestSearchForTorchTitan(t *testing.T) {
	m, err := transformer.Parse("llama:layers=126,hidden=16384,heads=128,kv_heads=8,ffn=53248,seq=8192,vocab=128256,batch=2048")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.PodOf("dgx-h100", 1024)
	if err != nil {
		t.Fatal(err)
	}
	target, err := SearchTarget("torchtitan", m, 1024)
	if err != nil {
		t.Fatal(err)
	}
	got, err := search.Search(context.Background(), m, p, search.Space{Top: 20, For: target})
	if err != nil || !got.Found {
		t.Fatalf("--for torchtitan: found %v, %v", got.Found, err)
	}
	for _, res := range got.Top {
		if _, err := TorchTitanTransformer(m, res.Plan.Strategy, 1024, ""); err != nil {
			t.Errorf("--for torchtitan proposed %s: %v", res.Plan, err)
		}
	}
	all, err := search.Search(context.Background(), m, p, search.Space{For: search.Target{Name: "any", UnitSplits: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TorchTitanTransformer(m, all.Best.Plan.Strategy, 1024, ""); err == nil {
		t.Errorf("the best plan of all, %s, is torchtitan's too: the test tests nothing", all.Best.Plan)
	}
}

// TestSearchForDeepSpeed: the search for DeepSpeed proposes plans its
// exporter writes: Qwen3-30B-A3B on 64 GPUs, data and expert parallelism
// only, where the best plan of all has a pipeline or tensor parallelism.
func TestSearchForDeepSpeed(t *testing.T) {
	m, err := transformer.Parse("qwen3-30b-a3b:seq=4096,batch=256")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.PodOf("dgx-h100", 64)
	if err != nil {
		t.Fatal(err)
	}
	target, err := SearchTarget("deepspeed", m, 64)
	if err != nil {
		t.Fatal(err)
	}
	got, err := search.Search(context.Background(), m, p, search.Space{Top: 20, For: target})
	if err != nil || !got.Found {
		t.Fatalf("--for deepspeed: found %v, %v", got.Found, err)
	}
	for _, res := range got.Top {
		if _, _, err := DeepSpeedTransformer(m, res.Plan.Strategy, 64, "", ""); err != nil {
			t.Errorf("--for deepspeed proposed %s: %v", res.Plan, err)
		}
	}
	all, err := search.Search(context.Background(), m, p, search.Space{For: search.Target{Name: "any", UnitSplits: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := DeepSpeedTransformer(m, all.Best.Plan.Strategy, 64, "", ""); err == nil {
		t.Errorf("the best plan of all, %s, is DeepSpeed's too: the test tests nothing", all.Best.Plan)
	}
	if got.Best.Step < all.Best.Step {
		t.Errorf("--for deepspeed's %s is faster than the best of all, %s", got.Best.Plan, all.Best.Plan)
	}
}

// TestSearchTarget: --for's names, and one line for the others.
func TestSearchTarget(t *testing.T) {
	m := transformer.GPT(8, 64, 8, 64, 128, 16)
	for _, c := range []struct {
		name, want, err string
	}{
		{"", "megatron", ""},
		{"Megatron", "megatron", ""},
		{"megatron-bridge", "megatron-bridge", ""},
		{"torchtitan@0.2", "torchtitan", ""},
		{"any", "any", ""},
		{"deepspeed@0.19", "deepspeed", ""},
		{"torch-plan", "", "not a framework to search for"},
		{"torchtitan@0.3", "torchtitan", ""},
		{"torchtitan@0.1", "", "torchtitan@0.1"},
		{"nemo", "", "--for nemo: placer search proposes plans for megatron, megatron-bridge, torchtitan, deepspeed, any"},
	} {
		got, err := SearchTarget(c.name, m, 8)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%q: error %v, want one line with %q", c.name, err, c.err)
		case c.err == "" && (err != nil || got.Name != c.want):
			t.Errorf("%q: %q, %v; want %q", c.name, got.Name, err, c.want)
		}
	}
}
