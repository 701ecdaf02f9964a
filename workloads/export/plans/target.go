package plans

import (
	"fmt"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/search"
	"github.com/placer/placer/workloads/export"
)

// SearchTargets are the frameworks placer search --for names at cluster
// scale, the default first, and "any" (every plan).
var SearchTargets = []string{"megatron", "megatron-bridge", "torchtitan", "deepspeed", "any"}

// DefaultSearchTarget is --for's default: Megatron-LM, whose settings
// (the distributed optimizer, tensor-parallel overlap, selective
// recomputation of the attention core, the experts' all-to-all overlap)
// are the plans' vocabulary and whose runs the cluster-scale model is
// checked against (placer report megatron).
const DefaultSearchTarget = "megatron"

// SearchTarget is the constraint placer search --for name puts on the
// plans of model m on gpus GPUs (search.Space.For): only plans its export
// writes ("" = DefaultSearchTarget; "any": every plan, the splits that
// count the embedding and the loss as layers with the others, so that
// its best is at least as fast as every framework's).
//
//   - megatron (MegatronArgs): one tensor-parallel degree for every stage;
//     an end stage whose layers first= or last= set holds a multiple of
//     the virtual stages (Megatron-Core's TransformerConfig splits it into
//     V equal model chunks); the splits counting the embedding, the loss
//     or both as layers (--account-for-embedding/loss-in-pipeline-split)
//     tried beside them, the uneven splits Megatron-Core interleaves
//     where first= and last= cannot be (Megatron-Bridge's Llama 3.1 405B
//     and Qwen3-235B-A22B recipes). The rest of the search's space is
//     Megatron-Core's already (sequence parallelism with tensor-parallel
//     overlap and with experts, epoverlap with virtual stages or no
//     pipeline and without full recomputation, interleaving with
//     micro-batches a multiple of the stages); with multi-token
//     prediction, epoverlap only with one MTP layer and a pipeline.
//   - megatron-bridge (BridgeOverrides): Megatron-LM's space, Bridge
//     running Megatron-Core, less what its overrides cannot write
//     (grads=bf16, which Bridge's mixed-precision recipes set) and with
//     LoRA, which Bridge runs.
//   - torchtitan (TorchTitanTransformer, the release --for names, 0.3 by
//     default as for --to, or @0.2): one degree, every
//     stage's layers a multiple of the virtual stages
//     (module_fqns_per_model_part), FSDP tried beside the other
//     sharding (torchtitan's data parallelism beside others), and each
//     plan its exporter refuses skipped before it is evaluated (the
//     distributed optimizer, selective or block recomputation, DDP beside
//     other parallelism, ...).
//   - deepspeed (DeepSpeedTransformer, release 0.19): data parallelism
//     under ZeRO 0, 1 or 3 (FSDP tried), the experts as DeepSpeed-MoE's
//     layers of an expert-parallel degree; each plan its exporter
//     refuses (tensor, context or pipeline parallelism, recomputation,
//     ...) skipped before it is evaluated.
func SearchTarget(name string, m transformer.Spec, gpus int) (search.Target, error) {
	format, _, err := export.SplitFormat(name)
	if err != nil {
		return search.Target{}, fmt.Errorf("--for %s: %w", name, err)
	}
	switch format {
	case "":
		return SearchTarget(DefaultSearchTarget, m, gpus)
	case "any":
		// Every plan: the union of the frameworks' spaces and placer's
		// own (stage-tp), so that no target's best is faster.
		return search.Target{Name: "any", UnitSplits: true}, nil
	case "megatron", "megatron-bridge", "torchtitan", "deepspeed":
		t := search.Target{Name: format, OneTensor: true}
		switch format {
		case "megatron", "megatron-bridge":
			t.EndChunks, t.UnitSplits = true, true
		case "torchtitan":
			t.LayerChunks, t.FSDP = true, true
		case "deepspeed":
			t.FSDP = true
		}
		// Every plan the space holds is put to the export's own check
		// (Check) before it is evaluated: a plan it refuses is set aside
		// and counted, its reason kept, so that search --for and export
		// --to never disagree.
		t.Refuses = func(pl plan.Plan) error { return Check(name, m, pl.Strategy, gpus) }
		return t, nil
	case "torch-plan":
		return search.Target{}, fmt.Errorf("--for %s: the torch plan is tools/dev/torchplan's check of placer's arithmetic, not a framework to search for; placer searches for %s", name, strings.Join(SearchTargets, ", "))
	}
	return search.Target{}, fmt.Errorf("--for %s: placer search proposes plans for %s", name, strings.Join(SearchTargets, ", "))
}
