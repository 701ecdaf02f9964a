package profile

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/internal/torchenv/torchtest"
)

// The shapes a profile times, in the order a budget cuts them: every
// degree at the first micro-batch first (tp 1; 2 and 4 without and with
// sp; 3 divides no head count of 4), then the second micro-batch.
func TestProfileShapes(t *testing.T) {
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=4,ffn=512,seq=256,vocab=1024,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	got := Shapes(m, []int{1, 2, 3, 4}, []int{1}, []int{1, 2}, []int{1, 2}, []string{"none", "full"})
	want := []shape{{1, false, 0, 0, 1, 256, "none"}, {2, false, 0, 0, 1, 256, "none"}, {2, true, 0, 0, 1, 256, "none"}, {4, false, 0, 0, 1, 256, "none"}, {4, true, 0, 0, 1, 256, "none"},
		{1, false, 0, 0, 2, 256, "none"}, {2, false, 0, 0, 2, 256, "none"}, {2, true, 0, 0, 2, 256, "none"}, {4, false, 0, 0, 2, 256, "none"}, {4, true, 0, 0, 2, 256, "none"}}
	// Then every other sequence and setting: 5 degrees x 2 mbs x (2 x 2 - 1).
	if len(got) != len(want)+5*2*3 {
		t.Fatalf("%d shapes, want %d", len(got), len(want)+30)
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("shape %d: %+v, want %+v", i, got[i], w)
		}
	}
}

func TestProfileRefuses(t *testing.T) {
	for _, o := range []Options{
		{Workload: "llama:layers=4,hidden=256,heads=4", Out: ""},
		{Workload: "nope:1", Out: "x.json"},
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8", Out: "x.json", Device: "tpu"},
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8", Out: "x.json", Recompute: []string{"some"}},
		// Experts: degrees that divide them (ep) and their FFN (etp); no
		// --ep or --etp without them, nor with --model.
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8,experts=8,topk=2", Out: "x.json", EP: []int{3}},
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8,experts=8,topk=2,expert_ffn=96", Out: "x.json", TP: []int{2}, ETP: []int{5}},
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8,experts=8,topk=2", Out: "x.json", ETP: []int{0}},
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8", Out: "x.json", EP: []int{2}},
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8", Out: "x.json", ETP: []int{2}},
		{ModelOptions: ModelOptions{Model: "mlp"}, Out: "x.json", ETP: []int{2}},
		// Latent attention is built, and refused where the flags are
		// wrong (no experts to split).
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8,q_lora=64,kv_lora=32,rope_dim=16", Out: "x.json", EP: []int{2}},
		// Windows are built; a window with --ep (no experts) is still a
		// command-line error.
		{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8,window=64,window_every=2", Out: "x.json", EP: []int{2}},
	} {
		_, err := Run(context.Background(), o, nil)
		var u fail.Usage
		if !errors.As(err, &u) {
			t.Errorf("%+v: %v, want a command-line error", o, err)
		}
	}
	for _, c := range []struct {
		m    transformer.Spec
		want string // "": profiled
	}{
		{transformer.Spec{Family: "llama", KVLoRA: 32, QLoRA: 64, RopeDim: 16}, ""},
		{transformer.Spec{Family: "llama", Experts: 8, TopK: 2, DenseLayers: 1}, ""},
		{transformer.Spec{Family: "llama", Experts: 8, TopK: 2, DenseLayers: 3, KVLoRA: 32, RopeDim: 16}, ""},
		// Windows, biases and DeepSeek-V3's routing are built (docs/profile.md,
		// "Windows, biases and group-limited routing").
		{transformer.Spec{Family: "llama", Window: 64}, ""},
		{transformer.Spec{Family: "llama", Window: 128, WindowEvery: 2, Experts: 8, TopK: 2, Config: transformer.ModelConfig{LinearBias: true}}, ""},
		{transformer.Spec{Family: "llama", Config: transformer.ModelConfig{QKVBias: true}}, ""},
		{transformer.Spec{Family: "llama", Experts: 8, TopK: 2, Config: transformer.ModelConfig{RouterGroups: 4}}, ""},
		{transformer.Spec{Family: "llama", Experts: 256, TopK: 8, DenseLayers: 3, KVLoRA: 512, RopeDim: 64,
			Config: transformer.ModelConfig{RouterScore: "sigmoid", RouterGroups: 8, RouterGroupK: 4, ExpertBias: true}}, ""},
		// What remains refused, in one line each.
		{transformer.Spec{Family: "llama", KVLoRA: 32, RopeDim: 16, Config: transformer.ModelConfig{LinearBias: true}},
			"biases with latent attention are not profiled"},
		{transformer.Spec{Family: "llama", Experts: 8, TopK: 2, Config: transformer.ModelConfig{RouterScore: "sqrtsoftplus"}},
			`router score "sqrtsoftplus" is not profiled`},
		{transformer.Spec{Family: "llama", Experts: 8, TopK: 2, Config: transformer.ModelConfig{RouterGroups: 3, RouterGroupK: 1}},
			"group-limited routing of 3 groups, 1 kept, top 2 of 8 experts"},
		{transformer.Spec{Family: "llama", Experts: 8, TopK: 4, Config: transformer.ModelConfig{RouterGroups: 4, RouterGroupK: 1}},
			"the groups do not hold the experts routed to"},
		// A SwiGLU hybrid by its shape (no act= to refuse it by).
		{transformer.Spec{Family: "llama", Pattern: "M*-"}, "pattern=M*-, mixers=: Mamba-2 and Gated DeltaNet layers are not profiled"},
		{transformer.Spec{Family: "llama", Mixers: "G*", Experts: 4, TopK: 1}, "mixers=G*: Mamba-2 and Gated DeltaNet layers are not profiled"},
	} {
		err := profilable(c.m)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%+v: %v, want %q", c.m, err, c.want)
		}
	}
	// Tensor parallelism above 1 with experts is no longer refused: the
	// options pass and the run fails only at starting the python.
	o := Options{Workload: "llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8,experts=8,topk=2", Out: filepath.Join(t.TempDir(), "x.json"),
		TP: []int{2}, ETP: []int{1, 2}, EP: []int{1, 2}, Python: filepath.Join(t.TempDir(), "no-python"), Budget: time.Second}
	_, err := Run(context.Background(), o, nil)
	var u fail.Usage
	if err == nil || errors.As(err, &u) || !strings.Contains(err.Error(), "no-python") {
		t.Errorf("tp 2 with experts: %v, want the options accepted and the missing python named", err)
	}
}

// A model with experts and dense layers before them times each shape
// without expert parallelism twice, its MoE layer then its dense one;
// another model its shapes as they are.
func TestProfileDenseShapes(t *testing.T) {
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8,experts=8,topk=2,expert_ffn=64,dense_layers=1")
	if err != nil {
		t.Fatal(err)
	}
	got := withDense(m, Shapes(m, []int{1}, []int{1, 2}, []int{1}, []int{1}, []string{"none"}))
	want := []blockShape{
		{shape{TP: 1, MBS: 1, Seq: 128, Recompute: "none"}, "moe"},
		{shape{TP: 1, MBS: 1, Seq: 128, Recompute: "none"}, "dense"},
		{shape{TP: 1, EP: 2, MBS: 1, Seq: 128, Recompute: "none"}, "moe"},
	}
	if len(got) != len(want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("shape %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	m.DenseLayers = 0
	for _, s := range withDense(m, Shapes(m, []int{1}, []int{1, 2}, []int{1}, []int{1}, []string{"none"})) {
		if s.Block != "" {
			t.Errorf("%+v: a block in a model without dense layers", s)
		}
	}
}

// progressWatch is a progress writer that calls hit once the text it
// was given holds want.
type progressWatch struct {
	want string
	seen strings.Builder
	once sync.Once
	hit  func()
}

func (w *progressWatch) Write(p []byte) (int, error) {
	w.seen.Write(p)
	if strings.Contains(w.seen.String(), w.want) {
		w.once.Do(w.hit)
	}
	return len(p), nil
}

// TestProfileInterrupted: a profile cancelled (a terminal's SIGINT is the
// context's cancellation) after its first layer keeps what was measured,
// beside the profile already at --out (which it does not replace: it
// may hold more): FILE.partial is written, reads back, says complete
// false, holds that layer and the embedding, loss and optimizer (timed
// before the layers) and says what it lacks; the error is the
// cancellation's, the run's Kept says where it went. Runs the real
// measurements on the CPU (one process, a tiny Llama), a few seconds;
// skipped without the torch virtualenv.
func TestProfileInterrupted(t *testing.T) {
	torchtest.Python(t)
	out := filepath.Join(t.TempDir(), "tiny.profile.json")
	const old = "a complete profile"
	if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &progressWatch{want: "layer 1/", hit: cancel}
	o := Options{Workload: "llama:layers=2,hidden=64,heads=2,kv_heads=2,ffn=128,seq=64,vocab=256,batch=4", Out: out,
		Device: "cpu", Procs: 1, TP: []int{1, 2}, MBS: []int{1, 2}, CP: []int{1}, Recompute: []string{"none", "full"},
		Repeats: 2, Budget: time.Minute}
	pr, err := Run(ctx, o, w)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the cancellation's (progress: %q)", err, w.seen.String())
	}
	if data, _ := os.ReadFile(out); string(data) != old {
		t.Errorf("%s replaced by the interrupted run: %.80q", out, data)
	}
	got, rerr := profile.ReadFile(PartialPath(out))
	if rerr != nil {
		t.Fatalf("the interrupted profile does not read back: %v", rerr)
	}
	if got.Complete || pr == nil || pr.Complete || pr.Path != PartialPath(out) || !strings.Contains(pr.Kept, "written to "+PartialPath(out)) {
		t.Errorf("complete %v, run %+v, want false and the partial file", got.Complete, pr)
	}
	if len(got.Layers) < 1 || len(got.Layers) >= 12 || len(got.Embedding) != 3 || len(got.Loss) != 3 || got.Optimizer == nil {
		t.Errorf("%d layers, %d embedding, %d loss shapes, optimizer %v kept; want the first layer (of 12 asked: tp 1, 2 and 2 with sp, at 2 micro-batches, 2 settings) and the 3 of each end, and the optimizer",
			len(got.Layers), len(got.Embedding), len(got.Loss), got.Optimizer)
	}
	if m := got.Missing(); len(m) != 1 || !strings.HasSuffix(m[0], " of 12 layer shapes") {
		t.Errorf("missing %q, want only layer shapes", m)
	}
}

// A model with experts is timed at each tensor degree (with sequence
// parallelism above 1), each expert-tensor degree (by default 1 and the
// tensor degree, Megatron-Core's default), each expert-parallel degree
// that divides its experts (3 does not divide 8), the first micro-batch
// first; given expert-tensor degrees replace the default, one that
// does not divide the expert FFN left out.
func TestProfileShapesExperts(t *testing.T) {
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,ffn=512,seq=256,vocab=1024,batch=8,experts=8,topk=2,expert_ffn=96")
	if err != nil {
		t.Fatal(err)
	}
	got := Shapes(m, []int{1, 2}, []int{1, 2, 3, 8}, []int{1, 2}, []int{1}, []string{"none"})
	var want []shape
	for _, b := range []int{1, 2} {
		for _, d := range [][3]int{{1, 0, 0}, {1, 0, 2}, {1, 0, 8}, {2, 0, 0}, {2, 0, 2}, {2, 0, 8}, {2, 2, 0}, {2, 2, 2}, {2, 2, 8}} {
			want = append(want, shape{TP: d[0], SP: d[0] > 1, ETP: d[1], EP: d[2], MBS: b, Seq: 256, Recompute: "none"})
		}
	}
	same := func(name string, got, want []shape) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d shapes %+v, want %d", name, len(got), got, len(want))
		}
		for i, w := range want {
			if got[i] != w {
				t.Errorf("%s: shape %d: %+v, want %+v", name, i, got[i], w)
			}
		}
	}
	same("default etp", got, want)
	// etp 4 at tp 1 (Megatron-Core lets the experts' split exceed the
	// attention's), 5 does not divide the expert FFN of 96.
	got = ShapesETP(m, []int{1}, []int{4, 5}, []int{1}, []int{1}, []int{1}, []string{"none"})
	same("etp 4, 5", got, []shape{{TP: 1, ETP: 4, MBS: 1, Seq: 256, Recompute: "none"}})
	// tp 4, forced balance: at seq 256 a rank's 64 tokens x top-2 = 128
	// copies split evenly over the 8 experts, at cp 16 (seq 16) its 4
	// tokens' 8 copies too; at cp 64 (seq 4) its one token's 2 do not:
	// left out.
	got = ShapesETP(m, []int{4}, []int{1}, []int{1}, []int{1}, []int{1, 16, 64}, []string{"none"})
	same("tp 4", got, []shape{{TP: 4, SP: true, MBS: 1, Seq: 256, Recompute: "none"}, {TP: 4, SP: true, MBS: 1, Seq: 16, Recompute: "none"}})
}

// TestProfileFP8Options: --fp8 takes placer's recipes once each, with
// experts and biases too, not with --model; measure.py's refusal line is the error
// (one line, exit 2), any other line none.
func TestProfileFP8Options(t *testing.T) {
	dense, err := transformer.Parse("llama:layers=2,hidden=64,heads=2,kv_heads=2,ffn=128,seq=32,vocab=256,batch=2")
	if err != nil {
		t.Fatal(err)
	}
	moe, err := transformer.Parse("llama:layers=2,hidden=64,heads=2,kv_heads=2,ffn=128,seq=32,vocab=256,batch=2,experts=4,topk=2,expert_ffn=32")
	if err != nil {
		t.Fatal(err)
	}
	biased := dense
	biased.Config.QKVBias = true
	biasedMoE := moe
	biasedMoE.Config.LinearBias = true
	for _, c := range []struct {
		m       transformer.Spec
		recipes []string
		want    string
	}{
		{dense, nil, ""},
		{dense, []string{"current", "delayed", "blockwise"}, ""},
		{dense, []string{"mxfp8"}, `--fp8 "mxfp8": want current, delayed or blockwise`},
		{dense, []string{"current", "current"}, "--fp8 current: named twice"},
		// Experts and biases: fp8.py converts them (the device refuses
		// what it cannot run: measure.py's refusal line, below).
		{moe, []string{"current"}, ""},
		{biased, []string{"current", "delayed", "blockwise"}, ""},
		{biasedMoE, []string{"current"}, ""},
		{biasedMoE, []string{"mxfp8"}, `--fp8 "mxfp8": want current, delayed or blockwise`},
		{biasedMoE, []string{"blockwise", "blockwise"}, "--fp8 blockwise: named twice"},
		{biased, nil, ""},
	} {
		o := Options{FP8: c.recipes}
		err := checkProfileOptions(c.m, &o)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.recipes, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || fail.Code(err, false) != fail.UsageStatus {
			t.Errorf("%v: %v, want exit 2 with %q", c.recipes, err, c.want)
		}
	}
	_, err = Run(context.Background(), Options{Out: t.TempDir() + "/p.json", FP8: []string{"current"}, ModelOptions: ModelOptions{Model: "mlp"}}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--fp8 is --workload's") {
		t.Errorf("--fp8 with --model: %v", err)
	}
	for _, why := range []string{
		"--fp8: this device has no FP8: torch 2.1 has no float8 dtypes",
		"--fp8 with experts: this Transformer Engine has no GroupedLinear (Megatron-Core's TEGroupedMLP runs the experts' FP8 GEMMs through it)",
		"--fp8 delayed: measured only through Transformer Engine's DelayedScaling, not available here (no GPU); without it the profile runs torchao's tensorwise scaling: --fp8 current",
	} {
		line, _ := json.Marshal(map[string]string{"kind": "refused", "error": why})
		if got := refusal(line); got != why {
			t.Errorf("refusal %q, want %q", got, why)
		}
	}
	for _, line := range []string{`{"kind": "layer", "tp": 1}`, `not json`, `{"kind": "meta"}`} {
		if got := refusal([]byte(line)); got != "" {
			t.Errorf("%s: refusal %q, want none", line, got)
		}
	}
}

// The keys placer profile passes layers.py for GPT-OSS's and DeepSeek-V3's
// config.json: GPT-OSS's head width (64, not 2,880 / 64), its window in
// every other layer and its biases on every linear; DeepSeek-V3's sigmoid
// scores, groups and expert bias beside its latent attention; a Llama's
// none of them.
func TestProfileLayerKeys(t *testing.T) {
	for _, c := range []struct {
		workload string
		want     map[string]int
	}{
		{"hf:../../graph/transformer/testdata/hf/gpt-oss-120b.json:seq=4096,batch=8",
			map[string]int{"head_dim": 64, "window": 128, "window_every": 2, "linear_bias": 1}},
		{"hf:../../graph/transformer/testdata/hf/deepseek-v3.json:seq=4096,batch=8",
			map[string]int{"head_dim": 128, "rope_dim": 64, "q_lora": 1536, "kv_lora": 512,
				"router_sigmoid": 1, "router_groups": 8, "router_group_k": 4, "expert_bias": 1}},
		{"hf:../../graph/transformer/testdata/hf/qwen2-7b.json:seq=4096,batch=8", map[string]int{"qkv_bias": 1}},
		{"llama:layers=4,hidden=256,heads=4,seq=128,vocab=1024,batch=8,experts=8,topk=2", map[string]int{}},
	} {
		m, err := transformer.Parse(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		if err := profilable(m); err != nil {
			t.Errorf("%s: %v", c.workload, err)
		}
		got := layerKeys(m, map[string]int{})
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: keys %v, want %v", c.workload, got, c.want)
		}
	}
}
