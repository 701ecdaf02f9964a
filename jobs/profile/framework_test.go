package profile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/internal/torchenv/torchtest"
)

const tinyLlama = "llama:layers=2,hidden=64,heads=2,kv_heads=2,ffn=128,seq=64,vocab=256,batch=4"

const moeLlama = "llama:layers=2,hidden=64,heads=2,ffn=128,seq=64,vocab=256,batch=4,experts=4,topk=2,expert_ffn=64"

// --framework refuses, before anything runs, in one line naming the
// flag (a command-line error: exit 2), what it does not know and what
// the named framework's layer does not build.
func TestProfileFrameworkRefuses(t *testing.T) {
	moe := "llama:layers=2,hidden=64,heads=2,ffn=128,seq=64,vocab=256,batch=4,experts=4,topk=2,expert_ffn=64"
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Workload: tinyLlama, Framework: "bogus"}, `--framework "bogus": want hf, torchtitan or megatron`},
		{Options{Workload: tinyLlama, Framework: "HF"}, `--framework "HF": want hf, torchtitan or megatron`},
		{Options{Workload: moeLlama, Framework: "megatron", EP: []int{1, 2}}, "--framework megatron --ep 2: Megatron-Core's MoE layer is timed at expert degree 1 only"},
		{Options{Workload: moeLlama, Framework: "megatron", ETP: []int{2}}, "--framework megatron --etp 2:"},
		{Options{Workload: tinyLlama, Framework: "megatron", FP8: []string{"current"}}, "--framework megatron with --fp8: not profiled"},
		{Options{Workload: tinyLlama, Framework: "megatron", Recompute: []string{"selective"}}, "--framework megatron --recompute selective: not profiled"},
		{Options{Workload: tinyLlama, Framework: "hf", TP: []int{1, 2}}, "--framework hf --tp 2: transformers' layer is timed at degree 1 only"},
		{Options{Workload: moe, Framework: "hf", EP: []int{2}}, "--framework hf --ep 2:"},
		{Options{Workload: tinyLlama, Framework: "torchtitan", FP8: []string{"current"}}, "--framework torchtitan with --fp8: not profiled"},
		{Options{Workload: tinyLlama, Framework: "hf", Recompute: []string{"none", "selective"}}, "--framework hf --recompute selective: not profiled"},
		{Options{Workload: moe, Framework: "torchtitan"}, "--framework torchtitan: " + moe + ": experts are not built"},
		{Options{Workload: tinyLlama + ",head_dim=16", Framework: "torchtitan"}, "a head width other than hidden/heads is not built"},
		{Options{Workload: tinyLlama + ",window=16", Framework: "hf"}, "sliding windows are not built"},
		{Options{Workload: "llama:layers=2,hidden=64,heads=2,ffn=128,seq=64,vocab=256,batch=4,experts=4,topk=2,expert_ffn=64,shared=1", Framework: "hf"},
			"shared experts and dense layers before the experts are not built"},
		{Options{ModelOptions: ModelOptions{Model: "mlp"}, Framework: "hf"}, "--framework is --workload's"},
	} {
		c.o.Out = filepath.Join(t.TempDir(), "x.json")
		c.o.Python = filepath.Join(t.TempDir(), "no-python") // never reached
		_, err := Run(context.Background(), c.o, nil)
		var u fail.Usage
		if !errors.As(err, &u) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--framework %s on %s: %v, want a one-line command-line error with %q", c.o.Framework, c.o.Workload, err, c.want)
		}
	}
}

// What each framework's layer builds (frameworks.py): QK norm in
// transformers' (Qwen3DecoderLayer, Qwen3MoeDecoderLayer), not in
// torchtitan's Llama 3 block; softmax routing alone.
func TestProfileFrameworkBuilds(t *testing.T) {
	qk := transformer.ModelConfig{QKNorm: true}
	for _, c := range []struct {
		m    transformer.Spec
		fw   string
		want string // "": built
	}{
		{transformer.Spec{Family: "llama", Hidden: 64, Heads: 2, Config: qk}, "hf", ""},
		{transformer.Spec{Family: "llama", Hidden: 64, Heads: 2, Experts: 4, TopK: 2, Config: qk}, "hf", ""},
		{transformer.Spec{Family: "llama", Hidden: 64, Heads: 2, Config: qk}, "torchtitan", "QK norm is not built"},
		{transformer.Spec{Family: "llama", Hidden: 64, Heads: 2, Head: 32}, "torchtitan", ""},
		{transformer.Spec{Family: "llama", Hidden: 64, Heads: 2, Experts: 4, TopK: 2, Config: transformer.ModelConfig{RouterScore: "sigmoid"}}, "hf",
			"sigmoid, group-limited or biased routing is not built"},
		{transformer.Spec{Family: "llama", Hidden: 64, Heads: 2, KVLoRA: 32, RopeDim: 16}, "hf", "latent attention is not built"},
	} {
		if got := frameworkBuilds(c.m, c.fw); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s on %+v: %q, want %q", c.fw, c.m, got, c.want)
		}
	}
}

// The defaults a framework takes: hf times tensor degree 1 (and expert
// degree 1 with experts) and no selective recomputation; torchtitan
// the usual tensor degrees, no selective recomputation; megatron the
// usual tensor degrees and expert degree 1; none (placer's
// own layer) leaves the defaults to checkProfileOptions.
func TestProfileFrameworkDefaults(t *testing.T) {
	for _, c := range []struct {
		workload, fw   string
		tp, ep         []int
		recompute      []string
		wantTP, wantEP []int
		wantRecompute  []string
	}{
		{tinyLlama, "hf", nil, nil, nil, []int{1}, nil, []string{"none", "full"}},
		{"llama:layers=2,hidden=64,heads=2,ffn=128,seq=64,vocab=256,batch=4,experts=4,topk=2,expert_ffn=64", "hf", nil, nil, nil, []int{1}, []int{1}, []string{"none", "full"}},
		{tinyLlama, "torchtitan", nil, nil, nil, []int{1, 2}, nil, []string{"none", "full"}},
		{tinyLlama, "torchtitan", []int{2}, nil, []string{"full"}, []int{2}, nil, []string{"full"}},
		{tinyLlama, "", nil, nil, nil, []int{1, 2}, nil, []string{"none", "full", "selective"}},
		// megatron: the usual tensor degrees (over its groups), expert
		// degree 1, no selective recomputation.
		{tinyLlama, "megatron", nil, nil, nil, []int{1, 2}, nil, []string{"none", "full"}},
		{moeLlama, "megatron", []int{2}, nil, nil, []int{2}, []int{1}, []string{"none", "full"}},
	} {
		m := mustParse(t, c.workload)
		o := Options{Framework: c.fw, TP: c.tp, EP: c.ep, Recompute: c.recompute}
		if err := checkFramework(m, &o); err != nil {
			t.Fatalf("%s %s: %v", c.fw, c.workload, err)
		}
		if err := checkProfileOptions(m, &o); err != nil {
			t.Fatalf("%s %s: %v", c.fw, c.workload, err)
		}
		if !slices.Equal(o.TP, c.wantTP) || !slices.Equal(o.EP, c.wantEP) || !slices.Equal(o.Recompute, c.wantRecompute) {
			t.Errorf("--framework %q on %s: tp %v, ep %v, recompute %v; want %v, %v, %v", c.fw, c.workload, o.TP, o.EP, o.Recompute, c.wantTP, c.wantEP, c.wantRecompute)
		}
	}
}

// --framework hf times transformers' own LlamaDecoderLayer, and the
// profile says so: software.framework transformers, its version, the
// class timed; the layer shapes asked are all there and complete.
// Runs the real measurements on the CPU (one process, a tiny Llama),
// about 10 s; skipped without transformers in the torch virtualenv.
func TestProfileFrameworkHF(t *testing.T) {
	torchtest.Python(t, "transformers")
	out := filepath.Join(t.TempDir(), "hf.profile.json")
	o := Options{Workload: tinyLlama, Out: out, Framework: "hf", Device: "cpu", Procs: 1, MBS: []int{1}, CP: []int{1},
		Recompute: []string{"none"}, Repeats: 1, Budget: time.Minute}
	r, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	sw := r.Profile.Software
	if sw.Framework != "transformers" || sw.FrameworkVersion == "" || sw.Layer != "transformers.models.llama.modeling_llama.LlamaDecoderLayer" {
		t.Errorf("software %+v, want transformers' LlamaDecoderLayer with its version", sw)
	}
	if !r.Profile.Complete || len(r.Profile.Layers) != 1 || r.Profile.Layers[0].TP != 1 || r.Profile.Layers[0].Forward <= 0 {
		t.Errorf("complete %v, layers %+v; want one layer at tp 1, timed", r.Profile.Complete, r.Profile.Layers)
	}
}

func mustParse(t *testing.T, w string) transformer.Spec {
	t.Helper()
	m, err := transformer.Parse(w)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Where each framework's package is put on PYTHONPATH: megatron-core's
// folder from $PLACER_MEGATRON, else megatron beside the virtualenv
// (make venv-megatron's pip --target); torchtitan's from
// $PLACER_FRAMEWORKS, else frameworks; none for hf (in the
// virtualenv); none where the folder is not there.
func TestProfileFrameworkPath(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	named := t.TempDir()
	beside := filepath.Join(cache, "placer", "megatron")
	for _, c := range []struct {
		fw, megatron, frameworks string // the variables
		mkdir                    string
		want                     string
	}{
		{"megatron", named, "", "", named},
		{"megatron", "", named, beside, beside},
		{"megatron", "", "", "", beside}, // made by the row above
		{"megatron", filepath.Join(named, "absent"), "", "", ""},
		{"torchtitan", named, "", "", ""}, // frameworks not beside it
		{"torchtitan", "", named, "", named},
		{"hf", named, named, "", ""},
	} {
		t.Setenv("PLACER_MEGATRON", c.megatron)
		t.Setenv("PLACER_FRAMEWORKS", c.frameworks)
		if c.mkdir != "" {
			if err := os.MkdirAll(c.mkdir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if got := frameworkPath(c.fw); got != c.want {
			t.Errorf("%s with PLACER_MEGATRON=%q PLACER_FRAMEWORKS=%q: %q, want %q", c.fw, c.megatron, c.frameworks, got, c.want)
		}
	}
}
