package plan

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestKeysDeclared: every key of Keys has its names (none twice, among
// names and aliases), what it takes, its default, its help, its docs
// file, a parser and a writer, and exports only to the five targets.
func TestKeysDeclared(t *testing.T) {
	seen := map[string]string{}
	targets := []string{ExportMegatron, ExportBridge, ExportTorchtitan, ExportDeepSpeed, ExportTorchPlan}
	for _, k := range Keys {
		for _, n := range append([]string{k.Name}, k.Aliases...) {
			if other, ok := seen[n]; ok {
				t.Errorf("%s: declared by %s and %s", n, other, k.Name)
			}
			seen[n] = k.Name
		}
		if k.Values == "" || k.Default == "" || k.Help == "" || k.Doc == "" || k.set == nil || k.write == nil || k.group >= numGroups {
			t.Errorf("%s: incomplete: %+v", k.Name, k)
		}
		for _, x := range k.Exports {
			if !slices.Contains(targets, x) {
				t.Errorf("%s: export to %q, not a target", k.Name, x)
			}
		}
	}
	if got := KeyName("tensor"); got != "tp" || KeyName("shard") != "shard" || KeyName("bucket") != "bucket" || IsKey("bucket") || !IsKey("moe-grouped-gemm") {
		t.Errorf("KeyName(tensor) = %s; KeyName or IsKey wrong", got)
	}
}

// TestKeysExportedTo: the keys each target writes, by hand from the
// writers (workloads/export/plans), in Keys' order.
func TestKeysExportedTo(t *testing.T) {
	cases := map[string]string{
		ExportDeepSpeed:  "dp, mb, schedule, shard, mbs, ep, etp, fsdp",
		ExportTorchPlan:  "dp, mb, schedule, shard, tp, pp, mbs, sp, recompute, recompute-modules, recompute-layers, first, last, embedding-layer, loss-layer, stage-tp, ep, etp, fsdp",
		ExportTorchtitan: "dp, mb, schedule, tp, cp, pp, vp, mbs, sp, recompute, tpoverlap, first, last, embedding-layer, loss-layer, ep, etp, fp8, fsdp, fp8gather, hidden-dropout, stack, compile",
		ExportMegatron: "dp, mb, schedule, shard, tp, cp, pp, vp, mbs, sp, recompute, recompute-modules, recompute-layers, tpoverlap, first, last, embedding-layer, loss-layer, stage-tp, ep, etp, fp8, fp4, fsdp, grads, epoverlap, " +
			"pack, pack-len, fp8-params, hidden-dropout, offload-layers, graph-pool, gc-threshold, stack, dispatcher, permute-fusion, router-fusion, grouped-gemm, loss-fusion, cuda-graphs, cp-comm-type, routing",
		ExportBridge: "dp, mb, schedule, shard, tp, cp, pp, vp, mbs, sp, recompute, recompute-modules, recompute-layers, tpoverlap, first, last, embedding-layer, loss-layer, stage-tp, ep, etp, fp8, fp4, fsdp, grads, epoverlap, " +
			"peft, lora-rank, lora-alpha, lora-targets, lora-dropout, pack, pack-len, fp8-params, fp8-activation, fp8-output-proj, fp8-transpose-cache, hidden-dropout, offload-layers, graph-pool, gc-threshold, stack, dispatcher, permute-fusion, router-fusion, grouped-gemm, loss-fusion, cuda-graphs, cp-comm-type, routing, rank-capacity",
	}
	for target, want := range cases {
		if got := strings.Join(KeysExportedTo(target), ", "); got != want {
			t.Errorf("%s writes\n%s\nwant\n%s", target, got, want)
		}
	}
}

// TestStrategyAndPlanOrder: String writes Keys' groups in order, the
// distributed optimizer as shard=zero1; Plan.String its degrees first,
// the overlaps before recomputation, distopt=on, the schedule last
// (hand-written strings).
func TestStrategyAndPlanOrder(t *testing.T) {
	s := Strategy{Replicas: 2, Schedule: "gpipe", DistOpt: true, Tensor: 2, Pipeline: 2, MicroBatchSize: 1, SequenceParallel: true,
		Recompute: FullRecompute, RecomputeLayers: 1, TPOverlap: true, NoGradOverlap: true, FirstLayers: 3, FP8: FP4NV,
		Software: Software{Stack: "megatron-core-0.16", Routing: RoutingCapacity, Capacity: 1.5}}
	want := "dp=2,schedule=gpipe,shard=zero1,tp=2,pp=2,mbs=1,sp=on,recompute=full,recompute-layers=1,tpoverlap=on,grad-overlap=off,first=3,fp4=nvfp4,stack=megatron-core-0.16,routing=capacity:1.5"
	if got := s.String(); got != want {
		t.Errorf("String\n%s\nwant\n%s", got, want)
	}
	pl := Plan{Strategy: s, TP: 2, PP: 2, DP: 2, VP: 1, CP: 1, MBS: 1, EP: 1, ETP: 2, TPs: []int{2, 2}}
	want = "tp=2,pp=2,dp=2,mbs=1,sp=on,tpoverlap=on,distopt=on,grad-overlap=off,recompute=full,recompute-layers=1,first=3,fp4=nvfp4,stack=megatron-core-0.16,routing=capacity:1.5,schedule=gpipe"
	if got := pl.String(); got != want {
		t.Errorf("Plan.String\n%s\nwant\n%s", got, want)
	}
}

// TestDocsKeyTables: the docs' key tables (docs/cluster-scale.md's "The
// plan: `--strategy`", docs/stacks.md's first) name only declared keys,
// by their names, and every key has a row in the file its declaration
// names (Key.Doc). A key a mechanism declares in its own file (AddKey)
// is not among this package's Keys: its row names that file
// (planner/mechanisms/...), and planner's TestDeclarations holds that
// the row is there.
func TestDocsKeyTables(t *testing.T) {
	rows := map[string]map[string]string{} // file -> keys named in its table's first column -> their row
	for _, doc := range []string{docClusterScale, docStacks} {
		b, err := os.ReadFile("../../" + doc)
		if err != nil {
			t.Fatal(err)
		}
		rows[doc] = docKeys(t, doc, string(b))
	}
	for doc, keys := range rows {
		for k, row := range keys {
			if key := keyIndex[k]; key == nil && strings.Contains(row, "planner/mechanisms/") {
				continue
			}
			if key := keyIndex[k]; key == nil || key.Name != k {
				t.Errorf("%s: key table names %q, not a declared key's name (plan.Keys)", doc, k)
			}
		}
	}
	for _, k := range Keys {
		if rows[k.Doc][k.Name] == "" {
			t.Errorf("key %s: no row in %s's key table (its Doc)", k.Name, k.Doc)
		}
	}
}

// docKeys are the keys named (`key=...` or `key`) in the first column of
// the key table of doc: the first table whose header is "| key |" after
// the heading "## The plan" (or from the top), each with its row.
func docKeys(t *testing.T, doc, text string) map[string]string {
	if i := strings.Index(text, "\n## The plan"); i >= 0 {
		text = text[i:]
	}
	i := strings.Index(text, "\n| key |")
	if i < 0 {
		t.Fatalf("%s: no key table", doc)
	}
	out := map[string]string{}
	name := regexp.MustCompile("`([a-z0-9_-]+)[=`]")
	for _, line := range strings.Split(text[i+1:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		first := strings.SplitN(line, " | ", 2)[0]
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			out[m[1]] = line
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: an empty key table", doc)
	}
	return out
}
