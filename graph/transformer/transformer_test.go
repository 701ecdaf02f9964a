package transformer

import (
	"math"
	"strings"
	"testing"
)

// TestModelFLOPsMegatron: the count is Narayanan et al.'s closed form for
// GPT, hand-evaluated on Megatron-LM's table rows.
func TestModelFLOPsMegatron(t *testing.T) {
	for _, c := range []struct{ l, h, a, b int }{{24, 2048, 16, 192}, {96, 12288, 96, 1152}, {112, 18432, 144, 3072}} {
		m := GPT(c.l, c.h, c.a, 4096, 131072, c.b)
		B, s, l, h, V := float64(c.b), 4096.0, float64(c.l), float64(c.h), 131072.0
		want := 72 * B * s * l * h * h * (1 + s/(6*h) + V/(12*l*h))
		if got := ModelFLOPs(m); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%v: ModelFLOPs %g, want %g", m, got, want)
		}
	}
}

// TestParams: Megatron's 1.7B, 7.1B, 32B and 462B rows: their names are
// the parameter counts, in billions, of these shapes with an output layer
// of its own (untied), within 4% (the names are rounded).
func TestParams(t *testing.T) {
	for _, c := range []struct {
		l, h, a  int
		billions float64
	}{{24, 2048, 16, 1.7}, {30, 4096, 32, 7.1}, {48, 7168, 56, 32}, {112, 18432, 144, 462}} {
		m := GPT(c.l, c.h, c.a, 4096, 131072, 1)
		m.Tied = false
		if got := float64(Params(m)) / 1e9; math.Abs(got-c.billions) > 0.04*c.billions {
			t.Errorf("%v: %.2fB parameters, the table says %.1fB", m, got, c.billions)
		}
	}
	// One GPT block by hand: h=4: qkv 4x12+12, proj 16+4, fc1 4x16+16,
	// fc2 16x4+4, two layer norms 16.
	if got := LayerParams(GPT(1, 4, 2, 8, 10, 1)); got != 60+20+80+68+16 {
		t.Errorf("GPT block of hidden 4: %d parameters, want 244", got)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		text string
		want Spec
		err  string
	}{
		{"gpt:layers=96,hidden=12288,heads=96,seq=4096,vocab=131072,batch=1152", GPT(96, 12288, 96, 4096, 131072, 1152), ""},
		{"llama:layers=32,hidden=4096,heads=32,kv_heads=8,seq=4096,vocab=128256,batch=512",
			Spec{Family: "llama", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 11008, Seq: 4096, Vocab: 128256, Batch: 512}, ""},
		{"gpt:layers=2,hidden=8,heads=2,seq=4,vocab=16,batch=2,tied=false,ffn=16",
			Spec{Family: "gpt", Layers: 2, Hidden: 8, Heads: 2, KVHeads: 2, FFN: 16, Seq: 4, Vocab: 16, Batch: 2}, ""},
		{"bert:layers=2", Spec{}, "want gpt:"},
		{"gpt:", Spec{}, "no shape"},
		{"gpt:layers=2,hidden=8,heads=3,seq=4,vocab=16,batch=2", Spec{}, "3 heads do not divide hidden 8"},
		{"gpt:layers=2,hidden=8,heads=2,seq=4,vocab=16", Spec{}, "batch missing"},
		{"gpt:layers=0,hidden=8,heads=2,seq=4,vocab=16,batch=2", Spec{}, `"layers"="0" is not a whole number`},
		{"gpt:layers=2,layers=3", Spec{}, "given twice"},
		{"gpt:layers=2,depth=3", Spec{}, "unknown key"},
		{"gpt:layers=2,hidden=8,heads=2,kv_heads=3,seq=4,vocab=16,batch=2", Spec{}, "kv_heads 3 does not divide heads 2"},
	}
	for _, c := range cases {
		m, err := Parse(c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse(%q) = %v, %v; want one line with %q", c.text, m, err, c.err)
			}
			continue
		}
		if err != nil || m != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.text, m, err, c.want)
			continue
		}
		// String writes the shape: a config.json's settings (Config) stay
		// with the file.
		if back, err := Parse(m.String()); err != nil || back != m.Shape() {
			t.Errorf("%q: String %q reads back as %+v, %v", c.text, m.String(), back, err)
		}
	}
}

// TestLlamaParams: Llama 2 7B (6.74B parameters) and Llama 3 8B (8.03B,
// grouped-query attention with 8 key/value heads), as Meta publishes them.
func TestLlamaParams(t *testing.T) {
	for _, c := range []struct {
		text     string
		billions float64
	}{
		{"llama:layers=32,hidden=4096,heads=32,seq=4096,vocab=32000,batch=1", 6.74},
		{"llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256,batch=1", 8.03},
	} {
		m, err := Parse(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(Params(m)) / 1e9; math.Abs(got-c.billions) > 0.005 {
			t.Errorf("%s: %.3fB parameters, want %.2fB", c.text, got, c.billions)
		}
	}
}

// FuzzParse: any text is a model or a one-line error, never a panic; a
// model reads back from its String as its shape and its counts are positive.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"gpt:layers=96,hidden=12288,heads=96,seq=4096,vocab=131072,batch=1152",
		"llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256,batch=512", "gpt:tied=false",
		"llama:layers=4,hidden=64,heads=4,kv_heads=2,seq=32,vocab=100,batch=2,head_dim=32,experts=8,topk=2,expert_ffn=48,shared=1,dense_layers=1",
		"llama:layers=3,hidden=64,heads=4,seq=32,vocab=100,batch=2,head_dim=16,q_lora=24,kv_lora=16,rope_dim=8,mtp=1", "qwen3-30b-a3b:seq=4096,batch=512",
		"gpt-oss-120b:seq=4096,batch=8", "llama:layers=5,hidden=64,heads=4,seq=32,vocab=100,batch=2,window=8,window_every=2",
		"hf:testdata/hf/llama3-8b.json:seq=8192,batch=512", "llama3.1-405b:seq=4096,batch=2048"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, err := Parse(text)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error of several lines: %v", text, err)
			}
			return
		}
		// String writes the shape: a config.json's settings (Config) stay
		// with the file.
		if back, err := Parse(m.String()); err != nil || back != m.Shape() {
			t.Fatalf("%q: %+v writes %q, which reads %+v, %v", text, m, m.String(), back, err)
		}
		if k := CausalKeys(m); !(k >= 1 && k <= float64(m.Seq)/2+0.5 || m.Seq == 1) {
			t.Fatalf("%q: %v keys a query", text, k)
		}
		if ModelFLOPs(m) <= 0 || CausalFLOPs(m) <= 0 || ActiveParams(m) > Params(m) {
			t.Fatalf("%q: model FLOPs %g", text, ModelFLOPs(m))
		}
	})
}

// TestWindow: the keys a query meets on average, by hand. GPT-OSS 120B
// at 4,096 tokens: 18 of its 36 layers with a window of 128, each query
// i meeting min(i, 128) keys, 128 - 128 x 127 / 8,192 = 126.015625 on
// average; the other 18 the causal half, 2,048: 1,087.0078125 over the
// layers. A window as long as the sequence is no window.
func TestWindow(t *testing.T) {
	oss, err := Parse("gpt-oss-120b:seq=4096,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	every, err := Parse("llama:layers=4,hidden=256,heads=4,seq=4096,vocab=1000,batch=1,window=128")
	if err != nil {
		t.Fatal(err)
	}
	long, err := Parse("llama:layers=4,hidden=256,heads=4,seq=4096,vocab=1000,batch=1,window=4096,window_every=2")
	if err != nil {
		t.Fatal(err)
	}
	odd, err := Parse("llama:layers=5,hidden=256,heads=4,seq=4096,vocab=1000,batch=1,window=128,window_every=2")
	if err != nil {
		t.Fatal(err)
	}
	none := oss
	none.Window, none.WindowEvery = 0, 0
	for _, c := range []struct {
		name   string
		m      Spec
		layers int
		keys   float64
	}{
		{"gpt-oss-120b", oss, 18, (18*126.015625 + 18*2048) / 36},
		{"every layer", every, 4, 126.015625},
		{"window of the sequence", long, 2, 2048},
		{"5 layers, every other", odd, 3, (3*126.015625 + 2*2048) / 5},
		{"no window", none, 0, 2048},
	} {
		if got := WindowLayers(c.m); got != c.layers {
			t.Errorf("%s: %d layers with the window, want %d", c.name, got, c.layers)
		}
		if got := CausalKeys(c.m); math.Abs(got-c.keys) > 1e-9 {
			t.Errorf("%s: %v keys a query, want %v", c.name, got, c.keys)
		}
	}
	if got, err := Parse(odd.String()); err != nil || got != odd {
		t.Errorf("round trip %q: %+v, %v", odd.String(), got, err)
	}
	if _, err := Parse("llama:layers=4,hidden=256,heads=4,seq=64,vocab=10,batch=1,window_every=2"); err == nil ||
		!strings.Contains(err.Error(), "window_every=2 without window") {
		t.Errorf("window_every alone: %v", err)
	}
}

// TestTiledKeys: a window layer's keys as a fused kernel computes them in
// tiles of 128 queries by 128 keys (or 16), by hand. GPT-OSS 120B: the
// first query tile 128 keys, the 31 others two key tiles, 256: a mean of
// (128 + 31 x 256) / 32 = 252 in its 18 window layers. A window of 100
// over 512 tokens: tile 0 128 keys, tiles 1-3 two tiles (rows 128-255
// reach key 29, in tile 0): (128 + 3 x 256) / 4 = 224. 320 tokens, window
// 128: rows 0-127 128 keys, 128-255 256, the 64 rows 256-319 keys 128-319,
// 192: (128 x 128 + 128 x 256 + 64 x 192) / 320 = 192. A window of 16
// under tiles of 128 over 256 tokens: (128 + 256) / 2 = 192. Tiles of 16
// on the 4,096-token window of 128: the first tile 16 keys, tiles 1-7
// 16(t+1), then 144 (nine tiles): (16+32+...+128 + 248 x 144) / 256 =
// (576 + 35,712) / 256 = 141.75. Causal, chunked and whole-sequence
// layers, and tile 0, as CausalKeys.
func TestTiledKeys(t *testing.T) {
	parse := func(text string) Spec {
		m, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	oss, _ := Preset("gpt-oss-120b")
	shape := "llama:layers=4,hidden=256,heads=4,vocab=1000,batch=1,"
	for _, c := range []struct {
		name string
		m    Spec
		tile int
		keys float64
	}{
		{"gpt-oss-120b", oss, 128, (18*252 + 18*2048) / 36.0},
		{"window 100 of 512", parse(shape + "seq=512,window=100"), 128, 224},
		{"320 tokens", parse(shape + "seq=320,window=128"), 128, 192},
		{"window under a tile", parse(shape + "seq=256,window=16"), 128, 192},
		{"tiles of 16", parse(shape + "seq=4096,window=128"), 16, 141.75},
		{"tile 0", parse(shape + "seq=4096,window=128"), 0, 126.015625},
		{"whole-sequence window", parse(shape + "seq=4096,window=4096"), 128, 2048},
		{"chunks", parse(shape + "seq=64,chunk=16"), 128, CausalKeys(parse(shape + "seq=64,chunk=16"))},
		{"causal", parse(shape + "seq=4096"), 128, 2048},
	} {
		if got := TiledKeys(c.m, c.tile); math.Abs(got-c.keys) > 1e-9 {
			t.Errorf("%s: %v keys a query, want %v", c.name, got, c.keys)
		}
	}
}
