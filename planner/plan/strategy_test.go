package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
)

func TestParseStrategy(t *testing.T) {
	cases := []struct {
		text string
		want Strategy
		err  string
	}{
		{"", Strategy{}, ""},
		{"dp=4", Strategy{Replicas: 4}, ""},
		{"tp=2", Strategy{Tensor: 2}, ""},
		{"tp=8,pp=6,dp=48,mbs=1,vp=2,sp=on,recompute=selective,distopt=on", Strategy{Tensor: 8, Pipeline: 6, Replicas: 48, MicroBatchSize: 1, Virtual: 2, SequenceParallel: true, Recompute: SelectiveRecompute, DistOpt: true}, ""},
		{"dp=4,shard=zero1,recompute=full,sp=off", Strategy{Replicas: 4, DistOpt: true, Recompute: FullRecompute}, ""},
		{"dp=4,shard=zero1,distopt=off", Strategy{Replicas: 4, DistOpt: true}, ""},
		{"tp=8,pp=16,mb=64,schedule=gpipe", Strategy{Tensor: 8, Pipeline: 16, MicroBatches: 64, Schedule: decision.GPipe}, ""},
		{"tp=2,sp=maybe", Strategy{}, "not on or off"},
		{"tp=2,sp=on,tpoverlap=on", Strategy{Tensor: 2, SequenceParallel: true, TPOverlap: true}, ""},
		{"tp=2,tpoverlap=on", Strategy{}, "tpoverlap=on without sp=on"},
		{"dp=8,distopt=on,grad-overlap=off", Strategy{Replicas: 8, DistOpt: true, NoGradOverlap: true}, ""},
		{"dp=8,grad-overlap=on", Strategy{Replicas: 8}, ""},
		{"dp=8,fsdp=on,grad-overlap=off", Strategy{}, "grad-overlap=off with fsdp=on"},
		{"tp=4,dp=8,fp8=delayed,amax-sync=tp-dp", Strategy{Tensor: 4, Replicas: 8, FP8: FP8Delayed, AmaxSync: AmaxSyncTPDP}, ""},
		{"tp=4,fp8=delayed,amax-sync=TP", Strategy{Tensor: 4, FP8: FP8Delayed, AmaxSync: AmaxSyncTP}, ""},
		{"tp=4,fp8=delayed,amax-sync=off", Strategy{Tensor: 4, FP8: FP8Delayed}, ""},
		{"tp=4,fp8=delayed,amax-sync=dp", Strategy{}, "want tp-dp"},
		{"tp=4,amax-sync=tp", Strategy{}, "amax-sync=tp without fp8=delayed"},
		{"tp=4,fp8=current,amax-sync=tp-dp", Strategy{}, "amax-sync=tp-dp without fp8=delayed"},
		{"sp=on", Strategy{}, "scale: strategy: sp=on with tp=1"},
		{"vp=2", Strategy{}, "vp=2 with one pipeline stage"},
		{"pp=2,recompute=some", Strategy{}, "want none, selective or full"},
		{"dp=2,distopt=on,shard=zero1", Strategy{}, "distopt and shard both given"},
		{"dp=2,shard=zero1,distopt=on", Strategy{}, "distopt and shard both given"},
		{"tq=2", Strategy{}, "unknown key \"tq\" (keys dp, mb, schedule, shard, tp, cp, pp, vp, mbs, sp, recompute, recompute-modules, recompute-layers, tpoverlap, distopt, grad-overlap, connections, queue-ahead, amax-sync, first, last, embedding-layer, loss-layer, stage-tp, ep, etp, imbalance, fp8, fp4, fsdp, fp8gather, grads, epoverlap, peft, lora-rank, lora-alpha, lora-targets, lora-dropout, lora-a2a, lora-dropout-recompute, pack, pack-len, fp8-params, fp8-activation, fp8-output-proj, fp8-dpa, fp8-transpose-cache, hidden-dropout, offload-layers, graph-pool, gc-threshold, memory-fraction, stack, dispatcher, permute-fusion, router-fusion, grouped-gemm, compile, expandable-segments, loss-fusion, cuda-graphs, graph-sync, cp-rotate, cp-comm-type, routing, rank-capacity)"},
		{"pp=2,schedule=zb", Strategy{}, "want gpipe or 1f1b"},
		{"shard=zero7", Strategy{}, `shard "zero7": want zero1 or none`},
		{"tp", Strategy{}, "key=value"},
		{"tp=8,pp=16,first=7,last=7", Strategy{Tensor: 8, Pipeline: 16, FirstLayers: 7, LastLayers: 7}, ""},
		{"pp=4,last=2", Strategy{Pipeline: 4, LastLayers: 2}, ""},
		{"first=3", Strategy{}, "with one pipeline stage"},
		{"pp=2,last=0", Strategy{}, "at least 1"},
		{"tp=8,pp=4,recompute=full,recompute-layers=3", Strategy{Tensor: 8, Pipeline: 4, Recompute: FullRecompute, RecomputeLayers: 3}, ""},
		{"pp=4,recompute=selective,recompute-layers=3", Strategy{}, "without recompute=full"},
		{"pp=4,stage-tp=4:8:8:8,dp=48", Strategy{Pipeline: 4, Replicas: 48, TensorStages: []int{4, 8, 8, 8}}, ""},
		{"stage-tp=2:1,pp=2,sp=on", Strategy{Pipeline: 2, TensorStages: []int{2, 1}, SequenceParallel: true}, ""},
		{"stage-tp=8:8,pp=2", Strategy{Pipeline: 2, TensorStages: []int{8, 8}}, ""},
		{"stage-tp=4:8:8,pp=4", Strategy{}, "stage-tp=4:8:8 names 3 stages, pp=4 has 4"},
		{"stage-tp=4:8", Strategy{}, "stage-tp=4:8 names 2 stages, pp=1 has 1"},
		{"tp=8,pp=2,stage-tp=4:8", Strategy{}, "tp=8 and stage-tp=4:8 both given"},
		{"pp=2,stage-tp=4:0", Strategy{}, "stage-tp: \"0\" is not a whole number"},
		{"pp=2,stage-tp=4::8", Strategy{}, "stage-tp: \"\" is not a whole number"},
		{"pp=2,stage-tp=1:1,sp=on", Strategy{}, "sp=on with tp=1"},
		{"tp=8,cp=16,pp=16,dp=8", Strategy{Tensor: 8, Context: 16, Pipeline: 16, Replicas: 8}, ""},
		{"cp=2", Strategy{Context: 2}, ""},
		// dp=1 and mb=1 are kept as written: left out, dp is what the
		// GPUs leave and mb what the batch leaves, so 1 is not their
		// default (tp=1, cp=1 and the others' 1 is).
		{"cp=1,tp=2,dp=1,mb=1", Strategy{Tensor: 2, Replicas: 1, MicroBatches: 1}, ""},
		{"dp=1", Strategy{Replicas: 1}, ""},
		{"tp=1,pp=1,vp=1,ep=1", Strategy{}, ""},
		{"cp=0", Strategy{}, "cp: \"0\" is not a whole number"},
		{"cp=2,cp=4", Strategy{}, "given twice"},
		{"pp=2,stage-tp=4:8,cp=2", Strategy{}, "cp=2 with stage-tp=4:8: context parallelism is modelled with one tensor-parallel degree"},
		{"dp=8,distopt=on,grads=bf16", Strategy{Replicas: 8, DistOpt: true, GradBF16: true}, ""},
		{"dp=8,grads=BF16,grads=fp32", Strategy{}, "given twice"},
		{"dp=8,grad-dtype=fp32", Strategy{Replicas: 8}, ""},
		{"dp=8,grads=fp16", Strategy{}, `grads: "fp16": want bf16 or fp32`},
		{"pp=2,vp=2,ep=8,epoverlap=on", Strategy{Pipeline: 2, Virtual: 2, Experts: 8, EPOverlap: true}, ""},
		{"ep=8,epoverlap=on,recompute=full", Strategy{}, "epoverlap=on with recompute=full"},
	}
	for _, c := range cases {
		s, err := ParseStrategy(c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseStrategy(%q) = %+v, %v; want one line with %q", c.text, s, err, c.err)
			}
			continue
		}
		if err != nil || !s.Equal(c.want) {
			t.Errorf("ParseStrategy(%q) = %+v, %v; want %+v", c.text, s, err, c.want)
			continue
		}
		if back, err := ParseStrategy(s.String()); err != nil || !back.Equal(s) {
			t.Errorf("%q: String %q reads back as %+v, %v", c.text, s.String(), back, err)
		}
	}
}

// TestStrategyString: the strings the one type of both worlds wrote for
// a plan, which Resolve's errors quote, by hand.
func TestStrategyString(t *testing.T) {
	cases := []struct {
		s    Strategy
		want string
	}{
		{Strategy{}, ""},
		{Strategy{Tensor: 8, Pipeline: 6, Replicas: 48, MicroBatchSize: 1, SequenceParallel: true, TPOverlap: true, DistOpt: true}, "dp=48,shard=zero1,tp=8,pp=6,mbs=1,sp=on,tpoverlap=on"},
		{Strategy{Replicas: 8, DistOpt: true, NoGradOverlap: true}, "dp=8,shard=zero1,grad-overlap=off"},
		{Strategy{Replicas: 8, FP8: FP8Delayed, AmaxSync: AmaxSyncTPDP}, "dp=8,amax-sync=tp-dp,fp8=delayed"},
		{Strategy{Tensor: 8, Context: 16, Pipeline: 16, Replicas: 8}, "dp=8,tp=8,cp=16,pp=16"},
		{Strategy{Pipeline: 4, MicroBatches: 8, Schedule: decision.GPipe, Virtual: 2, Recompute: FullRecompute, RecomputeLayers: 2, FirstLayers: 3, LastLayers: 5}, "mb=8,schedule=gpipe,pp=4,vp=2,recompute=full,recompute-layers=2,first=3,last=5"},
		{Strategy{Pipeline: 3, TensorStages: []int{2, 8, 4}}, "pp=3,stage-tp=2:8:4"},
		// dp=1 and mb=1 written: the errors that quote them name them.
		{Strategy{Replicas: 1}, "dp=1"},
		{Strategy{Replicas: 1, MicroBatches: 1, Tensor: 8}, "dp=1,mb=1,tp=8"},
	}
	for _, c := range cases {
		if got := c.s.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}

// TestParseStrategyRefusesOpGraph: the keys and values only an op graph's
// strategy has are refused as that world's, in one line, by hand-written
// messages.
func TestParseStrategyRefusesOpGraph(t *testing.T) {
	cases := []struct{ text, want string }{
		{"tp=8,bucket=25MiB", `strategy "tp=8,bucket=25MiB": bucket is a key of an op graph's strategy, not of a transformer's plan at cluster scale (its gradients are reduced in one overlapped pass)`},
		{"bucket=1048576", `strategy "bucket=1048576": bucket is a key of an op graph's strategy, not of a transformer's plan at cluster scale (its gradients are reduced in one overlapped pass)`},
		{"tp=8,pp=16,dp=48,shard=fsdp", `strategy "tp=8,pp=16,dp=48,shard=fsdp": shard=fsdp is an op graph's sharding, not modelled at cluster scale (use distopt=on, ZeRO-1)`},
		{"dp=4,shard=ZeRO2", `strategy "dp=4,shard=ZeRO2": shard=zero2 is an op graph's sharding, not modelled at cluster scale (use distopt=on, ZeRO-1)`},
	}
	for _, c := range cases {
		s, err := ParseStrategy(c.text)
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseStrategy(%q) = %+v, %v;\nwant %s", c.text, s, err, c.want)
		}
	}
}

// TestKeysOfOneWorld: every key ParseStrategy reads that an op graph's
// strategy does not have is refused by decision.ParseStrategy as a key of
// this world; those both have (dp, mb, schedule, shard) read the same
// there.
func TestKeysOfOneWorld(t *testing.T) {
	planOnly := map[string]string{
		"tp": "8", "tensor": "8", "cp": "2", "context": "2", "context-parallel": "2", "pp": "4", "pipeline": "4",
		"vp": "2", "virtual": "2", "mbs": "1", "micro-batch-size": "1", "micro_batch_size": "1", "sp": "on",
		"sequence-parallel": "on", "recompute": "full", "tpoverlap": "on", "tp-comm-overlap": "on", "grad-overlap": "off", "overlap-grad-reduce": "off", "connections": "1", "cuda-device-max-connections": "1", "queue-ahead": "on", "amax-sync": "tp",
		"recompute-layers": "2", "recompute_layers": "2", "first": "3", "first-stage-layers": "3",
		"last": "3", "last-stage-layers": "3", "stage-tp": "4:8", "tensor-stages": "4:8",
		"distopt": "on", "distributed-optimizer": "on", "ep": "8", "expert-parallel": "8", "etp": "1",
		"expert-tensor-parallel": "1", "imbalance": "1.5", "fp8": "current", "fsdp": "on", "fp8gather": "on",
		"grads": "bf16", "grad-dtype": "bf16", "epoverlap": "on", "ep-comm-overlap": "on",
		"recompute-modules": "moe_act", "recompute_modules": "moe_act", "embedding-layer": "on",
		"account-for-embedding-in-pipeline-split": "on", "loss-layer": "on", "account-for-loss-in-pipeline-split": "on",
		"stack": "megatron-core-0.16", "dispatcher": "flex", "moe-token-dispatcher-type": "allgather",
		"permute-fusion": "off", "moe-permute-fusion": "off", "router-fusion": "off", "moe-router-fusion": "off",
		"grouped-gemm": "off", "moe-grouped-gemm": "off", "cuda-graphs": "dense", "graphs": "dense", "graph-sync": "1", "max-iterations-per-graph": "1", "routing": "capacity:1.25",
		"expandable-segments": "on", "expandable_segments": "off", "loss-fusion": "on", "cross-entropy-loss-fusion": "on",
		"peft": "lora", "lora-rank": "8", "lora-alpha": "16", "lora-targets": "qkv", "pack": "on", "pack-len": "1024",
		"compile": "on", "cp-rotate": "alltoall", "context-parallel-rotate-method": "alltoall",
		"cp-comm-type": "all_gather", "cp_comm_type": "p2p",
		"lora-dropout": "0.1", "fp8-params": "on", "fp8-param-gather": "on", "fp8-activation": "on", "fp8-dpa": "on",
		"offload-layers": "4", "graph-pool": "layers", "fp8-transpose-cache": "off", "hidden-dropout": "0", "gc-threshold": "0.8", "garbage_collection_threshold": "0.8", "memory-fraction": "0.9",
		"fp4": "nvfp4", "lora-a2a": "on", "lora-dropout-recompute": "on", "fp8-output-proj": "on",
		"rank-capacity": "1.25", "moe-expert-rank-capacity-factor": "1.25", "moe_expert_rank_capacity_factor": "1.25",
	}
	for k, v := range planOnly {
		text := k + "=" + v
		// The key reads here (as far as the key: a value may need others).
		if _, err := ParseStrategy(text); err != nil && (strings.Contains(err.Error(), "unknown key") || strings.Contains(err.Error(), "op graph")) {
			t.Errorf("%s: %v", text, err)
		}
		want := `strategy "` + text + `": ` + k + ` is a key of a transformer's plan at cluster scale, not of an op graph's strategy`
		if _, err := decision.ParseStrategy(text, IsKey); err == nil || err.Error() != want {
			t.Errorf("decision.ParseStrategy(%q): %v, want %s", text, err, want)
		}
	}
	// Every key of this world's: the keys in ParseStrategy's list are
	// either both worlds' or in planOnly.
	both := []string{"dp", "replicas", "mb", "micro-batches", "micro_batches", "schedule", "shard"}
	for _, key := range Keys {
		for _, k := range append([]string{key.Name}, key.Aliases...) {
			if _, ok := planOnly[k]; !ok && !slices.Contains(both, k) {
				t.Errorf("key %s: neither both worlds' nor in planOnly", k)
			}
		}
	}
	for _, text := range []string{"dp=4", "mb=8", "dp=2,mb=4,schedule=1f1b", "dp=2,shard=none"} {
		op, err1 := decision.ParseStrategy(text, IsKey)
		plan, err2 := ParseStrategy(text)
		if err1 != nil || err2 != nil || op.String() != plan.String() || op.R() != plan.ReplicaCount() || op.M() != plan.MicroBatchCount() || op.Sched() != plan.Sched() {
			t.Errorf("%s: op graph %q, %v; plan %q, %v", text, op, err1, plan, err2)
		}
	}
}

// TestStageTensor: a per-stage TP's degrees and its largest.
func TestStageTensor(t *testing.T) {
	s := Strategy{Pipeline: 3, Replicas: 2, TensorStages: []int{2, 8, 4}}
	if got := s.StageTensor(); !slices.Equal(got, []int{2, 8, 4}) || s.MaxTensor() != 8 {
		t.Errorf("StageT %v, MaxT %d", got, s.MaxTensor())
	}
	if got := (Strategy{Tensor: 4, Pipeline: 3}).StageTensor(); !slices.Equal(got, []int{4, 4, 4}) {
		t.Errorf("uniform StageT %v", got)
	}
	if s.Equal(Strategy{Pipeline: 3, Replicas: 2, TensorStages: []int{2, 8, 8}}) || !s.Equal(Strategy{Pipeline: 3, Replicas: 2, TensorStages: []int{2, 8, 4}}) {
		t.Error("Equal of per-stage degrees")
	}
	if err := (Strategy{Context: -1}).Check(); err == nil || err.Error() != "scale: strategy: context -1: want at least 1" {
		t.Errorf("Check of cp -1: %v", err)
	}
	if err := (Strategy{Replicas: 1, DistOpt: true}).Check(); err == nil || !strings.Contains(err.Error(), "shard zero1 with one replica") {
		t.Errorf("Check of distopt with dp 1: %v", err)
	}
}

// TestStageLayers: the layers of each stage, by hand.
func TestStageLayers(t *testing.T) {
	cases := []struct {
		s      Strategy
		layers int
		want   []int
		err    string
	}{
		{Strategy{}, 5, []int{5}, ""},
		{Strategy{Pipeline: 4}, 96, []int{24, 24, 24, 24}, ""},
		{Strategy{Pipeline: 4}, 30, nil, "pp=4 does not divide the 30 layers"},
		{Strategy{Pipeline: 16, FirstLayers: 7, LastLayers: 7}, 126, []int{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}, ""},
		{Strategy{Pipeline: 4, LastLayers: 6}, 30, []int{8, 8, 8, 6}, ""},
		{Strategy{Pipeline: 3, FirstLayers: 2}, 30, []int{2, 14, 14}, ""},
		{Strategy{Pipeline: 2, FirstLayers: 12, LastLayers: 18}, 30, []int{12, 18}, ""},
		{Strategy{Pipeline: 2, FirstLayers: 12, LastLayers: 18}, 40, nil, "first=12 + last=18 is not the 40 layers of 2 stages"},
		{Strategy{Pipeline: 4, FirstLayers: 7, LastLayers: 7}, 17, nil, "the other 3 layers do not split evenly over the other 2 stages"},
		{Strategy{Pipeline: 3, FirstLayers: 5, LastLayers: 5}, 10, nil, "the other 0 layers"},
		{Strategy{FirstLayers: 3}, 10, nil, "one pipeline stage"},
	}
	for _, c := range cases {
		got, err := c.s.StageLayers(c.layers)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v over %d layers: %v, %v; want an error with %q", c.s, c.layers, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%+v over %d layers: %v, %v; want %v", c.s, c.layers, got, err, c.want)
		}
	}
}

// FuzzParseStrategy: any text is a plan or a one-line error, never a
// panic, and a plan reads back from its String as itself.
func FuzzParseStrategy(f *testing.F) {
	for _, s := range []string{"", "tp=8,pp=16,vp=7,mbs=1,sp=on,distopt=on", "recompute=full,pp=2", "tp=8,pp=16,first=7,last=7", "pp=4,recompute=full,recompute-layers=2", "pp=4,stage-tp=4:8:8:2,sp=on", "tp=8,cp=16,pp=16,dp=8,first=7,last=7", "dp=4,mb=8,schedule=1f1b,shard=zero1", "tp=2,bucket=16MiB", "dp=2,shard=fsdp"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseStrategy(text)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error of several lines: %v", text, err)
			}
			return
		}
		back, err := ParseStrategy(s.String())
		if err != nil || !back.Equal(s) {
			t.Fatalf("%q: %+v writes %q, which reads %+v, %v", text, s, s.String(), back, err)
		}
	})
}
