package jobs

import (
	"context"
	"testing"
)

// BenchmarkScaleSearchFor is the cost of the quick start's search
// (placer search --workload hf:...llama3-8b.json:seq=8192,batch=256
// --cluster dgx-h100:4 --strategy fsdp=on, for Megatron-LM by default)
// and of the same search for torchtitan: every plan of the space put to
// the framework's export check before it is evaluated.
func BenchmarkScaleSearchFor(b *testing.B) {
	for _, target := range []string{"megatron", "torchtitan"} {
		b.Run(target, func(b *testing.B) {
			o := ScaleOptions{Workload: "hf:../graph/transformer/testdata/hf/llama3-8b.json:seq=8192,batch=256", Cluster: "dgx-h100:4", Strat: "fsdp=on", For: target}
			for b.Loop() {
				if _, err := ScaleSearch(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
