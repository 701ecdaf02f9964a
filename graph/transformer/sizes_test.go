package transformer

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizesRefused holds the bound on a workload's sizes: a shape whose
// training state, tokens a step or one sequence's activations pass 2^62
// (MaxCount) is refused with one line naming the workload and its keys,
// before any figure is computed from it; the largest real models, at long
// sequences and large batches, are not.
func TestSizesRefused(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		// 100000 x (8 x 4194304^2 + ...) parameters x 24 bytes: about
		// 3.4e23 bytes (the case, which printed -9223372036.9 GB).
		{"gpt:layers=100000,hidden=1048576,heads=8192,seq=4096,vocab=50000,batch=64", "training state (layers x ffn^2, up to 24 bytes a parameter) passes 2^62 bytes, beyond placer's 64-bit sizes (layers=100000, ffn=4194304)"},
		// hidden 2^31: one matrix is 2^62 parameters.
		{"llama:layers=1,hidden=2147483648,heads=1,seq=8,vocab=8,batch=1,ffn=8", "(layers=1, hidden=2147483648)"},
		// A key too large for any product: 2^62 layers.
		{"gpt:layers=4611686018427387904,hidden=64,heads=1,seq=8,vocab=8,batch=1", "(layers=4611686018427387904, ffn=256)"},
		// 2^31 x (2^31 + 1) tokens a step: 2^62 itself is counted.
		{"gpt:layers=1,hidden=64,heads=1,seq=2147483648,vocab=8,batch=2147483649", "too large to count: batch x seq"},
		{"gpt:layers=2,hidden=64,heads=1,seq=8,vocab=8,batch=4611686018427387905", "batch x seq passes 2^62 tokens a step, beyond placer's 64-bit sizes (batch=4611686018427387905, seq=8)"},
		// One sequence of 2^40 tokens through 2^14 layers: past 2^62
		// bytes of activations, its parameters small.
		{"gpt:layers=16384,hidden=64,heads=1,seq=1099511627776,vocab=8,batch=1", "a step's activations (batch x seq x layers x ffn) and training state pass 2^62 bytes, beyond placer's 64-bit sizes (batch=1, seq=1099511627776, layers=16384, ffn=256)"},
		// 2^20 sequences of 2^20 tokens of a 2^12-wide model.
		{"gpt:layers=16,hidden=4096,heads=32,seq=1048576,vocab=8,batch=1048576", "a step's activations"},
		// Experts multiply the state: 2^20 experts of width 2^20.
		{"llama:layers=2,hidden=1048576,heads=1,seq=8,vocab=8,batch=1,ffn=8,experts=1048576,topk=1,expert_ffn=1048576", "layers x hidden^2, experts"},
	} {
		_, err := Parse(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.text) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v; want one line naming it with %q", tc.text, err, tc.want)
		}
	}
	// The same shape from a config.json: refused as its text is.
	cfg, err := os.ReadFile(filepath.Join("testdata", "hf", "llama3-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.NewReplacer(`"num_hidden_layers": 32`, `"num_hidden_layers": 100000`, `"hidden_size": 4096`, `"hidden_size": 1048576`,
		`"num_attention_heads": 32`, `"num_attention_heads": 8192`).Replace(string(cfg))
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	text := "hf:" + path + ":seq=4096,batch=64"
	if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), "too large to count: its parameters' training state") || !strings.Contains(err.Error(), "layers=100000, hidden=1048576") {
		t.Errorf("Parse(%q) = %v; want too large to count, layers=100000, hidden=1048576", text, err)
	}
	// Every preset and config.json read, at 128K tokens and a batch of
	// 1024 sequences (128M tokens a step, eight times the largest batches
	// published), is counted.
	for _, name := range Presets() {
		if _, err := Parse(name + ":seq=131072,batch=1024"); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "hf", "*.json"))
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		if _, err := Parse("hf:" + f + ":seq=131072,batch=1024"); err != nil && strings.Contains(err.Error(), "too large") {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestSizeChecked holds size's arithmetic at its edges: a product or a
// sum past 2^62 is over, and stays over.
func TestSizeChecked(t *testing.T) {
	for _, tc := range []struct {
		got  size
		want uint64
		over bool
	}{
		{count(1 << 31).times(count(1 << 31)), 1 << 62, false},
		{count(1<<31 + 1).times(count(1 << 31)), 0, true},
		{count(1 << 32).times(count(1 << 32)), 0, true}, // 2^64 wraps to 0 in uint64: over
		{count(math.MaxInt64).times(count(4)), 0, true},
		{count(1 << 61).plus(count(1 << 61)), 1 << 62, false},
		{count(1 << 62).plus(count(1)), 0, true},
		{count(1 << 62).plus(count(1)).times(count(0)), 0, true},
		{count(-1), 0, true},
	} {
		if tc.got.over != tc.over || !tc.over && tc.got.n != tc.want {
			t.Errorf("got %+v; want %d, over %v", tc.got, tc.want, tc.over)
		}
	}
}

// TestBytes holds the checked conversion of a float's bytes: in range
// exactly, out of range (or no size) never a negative number.
func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want int64
		ok   bool
	}{
		{0, 0, true},
		{84.9e9, 84_900_000_000, true},
		{1 << 62, 1 << 62, true},
		{1.3e19, math.MaxInt64, false},
		{math.Inf(1), math.MaxInt64, false},
		{math.NaN(), math.MaxInt64, false},
		{-1, math.MaxInt64, false},
	} {
		if n, ok := Bytes(tc.f); n != tc.want || ok != tc.ok {
			t.Errorf("Bytes(%g) = %d, %v; want %d, %v", tc.f, n, ok, tc.want, tc.ok)
		}
	}
}
