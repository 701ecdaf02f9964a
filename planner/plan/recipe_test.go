package plan

import (
	"strings"
	"testing"
)

// TestMemoryRecipeKeys: each memory-recipe key parses into its field,
// String writes it back as ParseStrategy reads it, and a plan that
// cannot take one is refused in one line naming it.
func TestMemoryRecipeKeys(t *testing.T) {
	text := "tp=4,dp=2,mbs=1,sp=on,fp8=delayed,fp8-params=on,fp8-transpose-cache=off,hidden-dropout=0,fp8-dpa=on,fp8-activation=on,offload-layers=20,cuda-graphs=dense,graph-pool=layers,gc-threshold=0.8,memory-fraction=0.9,peft=lora,lora-dropout=0.1"
	s, err := ParseStrategy(text)
	if err != nil {
		t.Fatal(err)
	}
	want := MemoryRecipe{FP8Params: true, NoTransposeCache: true, NoHiddenDropout: true, FP8DPA: true, FP8Activation: true, OffloadLayers: 20, GraphPool: GraphPoolLayers, GCThreshold: 0.8, MemoryFraction: 0.9}
	if s.MemoryRecipe != want || s.LoRADropout != 0.1 || s.LoRARank != DefaultLoRARank {
		t.Errorf("parsed %+v, dropout %g, rank %d; want %+v, 0.1, %d", s.MemoryRecipe, s.LoRADropout, s.LoRARank, want, DefaultLoRARank)
	}
	again, err := ParseStrategy(s.String())
	if err != nil || !again.Equal(s) {
		t.Errorf("String %q reads back as %+v (%v)", s.String(), again, err)
	}
	for _, c := range []struct{ text, want string }{
		{"fp8-params=on", "fp8-params=on without fp8=delayed or fp8=current"},
		{"fp8=mxfp8,fp8-dpa=on", "fp8-dpa=on with fp8=mxfp8"},
		{"fp8-dpa=on", "fp8-dpa=on without fp8=delayed or fp8=current"},
		{"fp8=current,fp8-activation=on,stack=torchtitan-0.2", "Transformer Engine's switches"},
		{"pp=2,offload-layers=4", "offload-layers=4 with pp=2"},
		{"offload-layers=4,recompute=full", "offload-layers=4 with recompute=full"},
		{"gc-threshold=1", `gc-threshold: "1" is not a share above 0, below 1`},
		{"memory-fraction=1.5", `memory-fraction: "1.5" is not a share above 0, at most 1`},
		{"offload-layers=0", "offload-layers"},
		{"fp8=delayed,fp8-transpose-cache=off", "fp8-transpose-cache=off without fp8-params=on"},
		{"hidden-dropout=1", `hidden-dropout: "1" is not a dropout probability`},
		{"graph-pool=layers", "graph-pool=layers without cuda-graphs=dense or full"},
		{"cuda-graphs=dense,graph-pool=whole", `graph-pool: "whole": want layers`},
		{"lora-dropout=0.1", "lora-dropout or lora-dropout-recompute without peft=lora"},
		{"peft=lora,lora-dropout=1", `lora-dropout: "1" is not a dropout probability`},
	} {
		_, err := ParseStrategy(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseStrategy(%q) = %v, want one line with %q", c.text, err, c.want)
		}
	}
}

// TestRecipeFits: offload of every layer, or of a model with experts,
// and FP8 attention of latent attention are refused against the model.
func TestRecipeFits(t *testing.T) {
	dense := mustSpec(t, "llama:layers=8,hidden=1024,heads=8,ffn=4096,vocab=1000,seq=512,batch=8")
	mla := mustSpec(t, "deepseek-v3:seq=4096,batch=8")
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"every layer", RecipeFits(dense, Strategy{MemoryRecipe: MemoryRecipe{OffloadLayers: 8}}), "fewer layers than the model's 8"},
		{"experts", RecipeFits(mla, Strategy{MemoryRecipe: MemoryRecipe{OffloadLayers: 2}}), "dense blocks of standard attention"},
		{"latent attention", RecipeFits(mla, Strategy{FP8: FP8Current, MemoryRecipe: MemoryRecipe{FP8DPA: true}}), "fp8-dpa=on"},
		{"graphs of experts", RecipeFits(mla, Strategy{MemoryRecipe: MemoryRecipe{GraphPool: GraphPoolLayers}}), "graph-pool=layers"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
	if err := RecipeFits(dense, Strategy{MemoryRecipe: MemoryRecipe{OffloadLayers: 7}}); err != nil {
		t.Errorf("offload of 7 of 8 layers: %v", err)
	}
}

// TestPlanStringKeepsRecipe: a resolved plan writes its memory-recipe
// keys back (what search and eval print), and they read back the same.
func TestPlanStringKeepsRecipe(t *testing.T) {
	m := mustSpec(t, "llama:layers=8,hidden=1024,heads=8,ffn=4096,vocab=1000,seq=512,batch=8")
	p, err := ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseStrategy("tp=2,dp=4,mbs=1,sp=on,fp8=delayed,fp8-params=on,fp8-activation=on,offload-layers=2")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseStrategy(pl.String())
	if err != nil || again.MemoryRecipe != s.MemoryRecipe {
		t.Errorf("plan %q reads back as %+v (%v), want %+v", pl.String(), again.MemoryRecipe, err, s.MemoryRecipe)
	}
}
