package transformer

import (
	"math"
	"testing"
)

// FuzzParseSizes: whatever the workload's text, Parse refuses it or
// gives a model whose every count (parameters, tokens) is non-negative
// and within MaxCount and whose FLOPs are finite and non-negative: no
// key, however large, wraps a size into a number. The seeds (and
// testdata/fuzz/FuzzParseSizes, committed) are the grammar's families
// at the bound's edges; go test -fuzz=FuzzParseSizes ./graph/transformer
// searches further.
func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{
		"gpt:layers=2,hidden=64,heads=4,seq=128,vocab=100,batch=8",
		"gpt:layers=100000,hidden=1048576,heads=8192,seq=4096,vocab=50000,batch=64",
		"llama:layers=126,hidden=16384,heads=128,kv_heads=8,ffn=53248,seq=8192,vocab=128256,batch=2048",
		"llama:layers=4,hidden=2147483648,heads=1,seq=8,vocab=8,batch=1,ffn=8",
		"llama:layers=4,hidden=4096,heads=32,seq=2147483648,vocab=8,batch=2147483648",
		"llama:layers=2,hidden=1048576,heads=1,seq=8,vocab=8,batch=1,ffn=8,experts=1048576,topk=1,expert_ffn=1048576",
		"deepseek-v3:seq=4096,batch=9223372036854775807",
		"llama3-8b:seq=8192,batch=1,layers=9223372036854775807",
		"qwen3-next-80b-a3b:seq=4096,batch=64,gdn_v_heads=4294967296",
		"nemotron-h-8b:seq=4096,batch=64,ssm_state=4294967296",
		"gpt:layers=2,hidden=64,heads=4,seq=128,vocab=100,batch=8,mtp=4611686018427387904",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, err := Parse(text)
		if err != nil {
			return
		}
		for _, c := range []struct {
			name string
			n    int64
		}{
			{"Params", Params(m)}, {"ActiveParams", ActiveParams(m)}, {"MTPParams", MTPParams(m)},
			{"EmbeddingParams", EmbeddingParams(m)}, {"OutputParams", OutputParams(m)},
			{"AttentionParams", AttentionParams(m)}, {"tokens", int64(m.Batch) * int64(m.Seq)},
		} {
			if c.n < 0 || c.n > MaxCount {
				t.Fatalf("%q: %s = %d: not a size", text, c.name, c.n)
			}
		}
		if fl := ModelFLOPs(m); !(fl >= 0 && fl <= math.MaxFloat64) {
			t.Fatalf("%q: ModelFLOPs = %g", text, fl)
		}
	})
}
