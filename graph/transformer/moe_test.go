package transformer

import (
	"math"
	"strings"
	"testing"
)

// TestMoELayerParams: one small MoE block by hand (Llama family, hidden
// 4, 2 heads of 2, 4 experts of 3, top 2): Q K V 4 x 6 x 2 = 48, the
// projection 2 x 2 x 4 = 16, two RMS norms 8; the router 4 x 4 = 16;
// each expert 3 x 4 x 3 = 36. Active: two experts of four.
func TestMoELayerParams(t *testing.T) {
	m, err := Parse("llama:layers=2,hidden=4,heads=2,seq=8,vocab=10,batch=1,experts=4,topk=2,expert_ffn=3")
	if err != nil {
		t.Fatal(err)
	}
	if got := MoELayerParams(m); got != 48+16+8+16+4*36 {
		t.Errorf("MoE block: %d parameters, want 232", got)
	}
	// Two blocks, embedding 40, output 40 + norm 4.
	if got, want := Params(m), int64(2*232+40+44); got != want {
		t.Errorf("Params %d, want %d", got, want)
	}
	if got, want := ActiveParams(m), int64(2*(232-2*36)+40+44); got != want {
		t.Errorf("ActiveParams %d, want %d", got, want)
	}
	// One dense layer first: its MLP is FFN's (Llama's default 256 for
	// hidden 4: 3 x 4 x 256).
	d, err := Parse("llama:layers=2,hidden=4,heads=2,seq=8,vocab=10,batch=1,experts=4,topk=2,expert_ffn=3,dense_layers=1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Params(d), int64(232+72+3*4*256+40+44); got != want {
		t.Errorf("with a dense layer: Params %d, want %d", got, want)
	}
}

// TestPresetParams: each preset's total and active parameters as its
// authors publish them (billions, within 2%, the published figures rounded; GPT-OSS's active count is
// not compared: its card counts the output layer and not the embedding;
// Llama 3.1 405B's card says 405B, 405.85B the usual count).
func TestPresetParams(t *testing.T) {
	for _, c := range []struct {
		name          string
		total, active float64
	}{
		{"deepseek-v3", 671, 37},
		{"qwen3-30b-a3b", 30.5, 3.3},
		{"qwen3-235b-a22b", 235, 22},
		{"gpt-oss-120b", 116.83, 0},
		{"mixtral-8x7b", 46.7, 12.9},
		{"mixtral-8x22b", 141, 39},
		{"llama3-8b", 8.03, 8.03},
		{"llama3-70b", 70.6, 70.6},
		{"llama3.1-405b", 405.85, 405.85},
	} {
		m, ok := Preset(c.name)
		if !ok {
			t.Fatalf("no preset %s", c.name)
		}
		if got := float64(Params(m)) / 1e9; math.Abs(got/c.total-1) > 0.02 {
			t.Errorf("%s: %.2fB parameters, published %.1fB", c.name, got, c.total)
		}
		if got := float64(ActiveParams(m)) / 1e9; c.active > 0 && math.Abs(got/c.active-1) > 0.02 {
			t.Errorf("%s: %.2fB active, published %.1fB", c.name, got, c.active)
		}
		// String writes the shape (Spec.Shape): a preset's config.json
		// settings (gpt-oss-120b's) are not in it.
		if back, err := Parse(m.String()); err != nil || back != m.Shape() {
			t.Errorf("%s: %q reads back as %+v, %v", c.name, m.String(), back, err)
		}
	}
}

// TestCausalFLOPsBridge: Megatron-Bridge's table (25.11, DGX H100) gives
// both tokens/s and TFLOP/s per GPU, so its FLOPs per token are their
// ratio; CausalFLOPs per token matches it within 0.5% on five rows.
// GPT-OSS's ratio, 27.18 GFLOP a token, is the count with its MLP as two
// GEMMs (2 x 2 h f, not SwiGLU's three): computed here by hand.
func TestCausalFLOPsBridge(t *testing.T) {
	for _, c := range []struct {
		workload       string
		tokens, tflops float64
	}{
		{"llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256,batch=128", 14451, 744},
		{"llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=8192,vocab=128256,batch=128", 1602, 719},
		{"llama:layers=126,hidden=16384,heads=128,kv_heads=8,ffn=53248,seq=8192,vocab=128256,batch=512", 292, 737},
		{"qwen3-30b-a3b:seq=4096,batch=512", 5275, 121},
		{"qwen3-235b-a22b:seq=4096,batch=2048", 1575, 233},
	} {
		m, err := Parse(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		got := CausalFLOPs(m) / float64(m.Batch*m.Seq)
		if want := c.tflops * 1e12 / c.tokens; math.Abs(got/want-1) > 0.005 {
			t.Errorf("%s: %.2f GFLOP a token, the table's ratio %.2f", c.workload, got/1e9, want/1e9)
		}
	}
	// GPT-OSS 120B by hand: attention 2 h (q + 2 kv) + 2 q h + 2 q s
	// (q = 64 x 64, kv = 8 x 64, s = 4,096, the causal half of 2 x 2 q
	// s), the MLP 4 experts x 2 x 2 h f (f = h = 2,880), x 36 layers,
	// logits 2 h V, all three times (forward and backward).
	h, q, kv, s, V := 2880.0, 4096.0, 512.0, 4096.0, 201088.0
	perToken := 3 * (36*(2*h*(q+2*kv)+2*q*h+2*q*s+4*2*2*h*h) + 2*h*V)
	if want := 153e12 / 5630; math.Abs(perToken/want-1) > 0.005 {
		t.Errorf("GPT-OSS: %.2f GFLOP a token by hand, the table's %.2f", perToken/1e9, want/1e9)
	}
}

func TestParseMoE(t *testing.T) {
	for _, c := range []struct{ text, err string }{
		{"llama:layers=2,hidden=4,heads=2,seq=8,vocab=10,batch=1,experts=4,topk=5", "topk=5 is more than the 4 experts"},
		{"llama:layers=2,hidden=4,heads=2,seq=8,vocab=10,batch=1,experts=4", "without topk"},
		{"llama:layers=2,hidden=4,heads=2,seq=8,vocab=10,batch=1,topk=2", "without experts"},
		{"llama:layers=2,hidden=4,heads=2,seq=8,vocab=10,batch=1,experts=4,topk=2,dense_layers=2", "leaves none of the 2 layers"},
		{"llama:layers=2,hidden=4,heads=2,seq=8,vocab=10,batch=1,rope_dim=2", "without kv_lora"},
		{"llama:layers=2,hidden=4,heads=2,kv_heads=1,seq=8,vocab=10,batch=1,kv_lora=2", "latent attention"},
		{"qwen3-30b-a3b:seq=4096,batch=8,topk=200", "topk=200 is more than the 128 experts"},
		{"qwen4:batch=2", "want gpt:"},
	} {
		m, err := Parse(c.text)
		if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, %v; want one line with %q", c.text, m, err, c.err)
		}
	}
	// A preset with the run's sequence and batch; hidden 2,048 that 32
	// heads of 128 do not make (head_dim).
	m, err := Parse("qwen3-30b-a3b:seq=8192,batch=64")
	if err != nil || m.Seq != 8192 || m.Batch != 64 || m.HeadDim() != 128 || m.Experts != 128 {
		t.Errorf("qwen3-30b-a3b:seq=8192,batch=64 = %+v, %v", m, err)
	}
	// String writes the shape, not the preset's Config (as for hf: models).
	if back, err := Parse(m.String()); err != nil || back != m.Shape() {
		t.Errorf("%q reads back as %+v, %v", m.String(), back, err)
	}
}
