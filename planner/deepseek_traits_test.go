package planner

import (
	"slices"
	"testing"

	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/mechanisms"
)

// TestDeepSeekTraits: DeepSeek's latent attention and multi-token
// prediction are families' traits the coster asks by the shard's record
// (families.LatentAttention at cost.AttentionBlock, families.MTP at
// cost.PredictionModules), named in priced_by for DeepSeek-V3 and not
// for Llama. With them the block's attention is the trait's, exactly;
// without them registered the coster prices the block's own attention
// (a different figure: latent attention's projections are not the QKV
// GEMM) and no modules on the last stage.
func TestDeepSeekTraits(t *testing.T) {
	ds := stackCoster(t, "deepseek-v3:seq=4096,batch=256", "tp=2,ep=8,dp=16,mbs=1,sp=on", "dgx-h100:4")
	got := PricedByOf(ds.M, ds.Plan, ds.Pod).Families
	for _, want := range []string{"latent-attention", "multi-token-prediction"} {
		if !slices.Contains(got, want) {
			t.Errorf("deepseek-v3 priced by families %v: want %s among them", got, want)
		}
	}
	l := stackCoster(t, "llama3-8b:seq=4096,batch=64", "tp=2,dp=4,mbs=1", "dgx-h100:1")
	if got := PricedByOf(l.M, l.Plan, l.Pod).Families; slices.Contains(got, "latent-attention") || slices.Contains(got, "multi-token-prediction") {
		t.Errorf("llama priced by families %v: want neither DeepSeek trait", got)
	}

	f, b, r := ds.attnBlock()
	wf, wb, wr := families.LatentAttention{}.AttentionBlock(&ds.Shard)
	if f != wf || b != wb || r != wr {
		t.Errorf("the coster's attention %v, %v, %v; the trait's %v, %v, %v", f, b, r, wf, wb, wr)
	}
	if ph := ds.phases(nil); !ph.predicts || ph.predFwd.Busy <= 0 || ph.predBwd.Busy <= 0 {
		t.Errorf("deepseek-v3's last stage: modules %v, %v (asked %v); want both priced", ph.predFwd, ph.predBwd, ph.predicts)
	}

	var others []cost.Plugin // the families but DeepSeek's two traits
	for _, p := range cost.Each[cost.Plugin](families.Registered) {
		if n := p.Name(); n != "latent-attention" && n != "multi-token-prediction" {
			others = append(others, p)
		}
	}
	fams, err := cost.NewRegistry(others...)
	if err != nil {
		t.Fatal(err)
	}
	bare := ds
	bare.Points = cost.Resolve(fams, mechanisms.Registered, codebases.Registered)
	decide(bare.Points, &bare.Shard)
	if bf, _, _ := bare.attnBlock(); bf.Busy == f.Busy {
		t.Errorf("without the trait the attention is still %g s: the coster did not price the block's own", bf.Busy)
	}
	if ph := bare.phases(nil); ph.predicts || ph.predFwd != (phase{}) {
		t.Errorf("without the trait the last stage's modules %v (asked %v), want none", ph.predFwd, ph.predicts)
	}
}
