package planner

import (
	"math"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// FuzzEvaluateSizes: whatever the workload's and the strategy's texts,
// a plan placer evaluates has a finite, non-negative step and memory
// counts that are non-negative and within int64's range (never the
// wrapped -9223372036.9 GB a 100,000-layer model once printed): what parses is bounded
// (transformer.MaxCount) and what the memory model sums is converted
// checked (transformer.Bytes). Seeds at the bound's edges (and
// testdata/fuzz/FuzzEvaluateSizes, committed); a shape of more than 512
// layers or 4096 sequences is left to FuzzParseSizes (its trace takes
// seconds a plan, not its sizes' arithmetic).
func FuzzEvaluateSizes(f *testing.F) {
	for _, c := range [][2]string{
		{"gpt:layers=4,hidden=1048576,heads=8192,seq=4096,vocab=50000,batch=64", "tp=8"},
		{"gpt:layers=4,hidden=1048576,heads=8192,seq=4096,vocab=50000,batch=64", "tp=2,dp=4,mbs=8"},
		{"llama:layers=2,hidden=65536,heads=512,seq=1048576,vocab=262144,batch=8", "cp=8"},
		{"gpt:layers=2,hidden=64,heads=4,seq=128,vocab=100,batch=8", "dp=8,mbs=1"},
		{"gpt:layers=2,hidden=64,heads=4,seq=128,vocab=100,batch=4096", "pp=2,dp=4,mbs=1,schedule=gpipe"},
		{"llama:layers=4,hidden=64,heads=4,seq=32,vocab=100,batch=8,experts=1048576,topk=1,expert_ffn=65536", "ep=8"},
		{"llama3-8b:seq=1048576,batch=8", "tp=8,recompute=full"},
	} {
		f.Add(c[0], c[1])
	}
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, workload, strategy string) {
		m, err := transformer.Parse(workload)
		if err != nil || m.Layers > 512 || m.Batch > 4096 {
			return
		}
		s, err := plan.ParseStrategy(strategy)
		if err != nil {
			return
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			return
		}
		if !(r.Step >= 0 && r.Step <= math.MaxFloat64) || !(r.TFLOPs >= 0 && r.TFLOPs <= math.MaxFloat64) {
			t.Fatalf("%s %s: step %g s, %g TFLOP/s", workload, strategy, r.Step, r.TFLOPs)
		}
		for _, b := range []int64{r.Memory, r.Weights, r.Grads, r.OptState, r.Activations, r.Judged} {
			if b < 0 || b > transformer.MaxCount {
				t.Fatalf("%s %s: memory %d bytes (parts %+v)", workload, strategy, b, r.MemoryParts)
			}
		}
		for _, part := range r.MemoryParts {
			if part.Bytes < 0 || part.Bytes > transformer.MaxCount {
				t.Fatalf("%s %s: %s %d bytes", workload, strategy, part.Name, part.Bytes)
			}
		}
	})
}
