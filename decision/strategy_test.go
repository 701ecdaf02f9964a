package decision

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseStrategy(t *testing.T) {
	cases := []struct {
		text string
		want Strategy
		err  string
	}{
		{"", Strategy{}, ""},
		{"dp=4", Strategy{Replicas: 4}, ""},
		{"dp=2,mb=8,schedule=1f1b", Strategy{Replicas: 2, MicroBatches: 8, Schedule: OneFOneB}, ""},
		{"dp=8, shard=fsdp", Strategy{Replicas: 8, Shard: FullShard}, ""},
		{"dp=8,shard=ZeRO2,bucket=16MiB", Strategy{Replicas: 8, Shard: GradShard, BucketBytes: 16 << 20}, ""},
		{"mb=4,schedule=GPipe,bucket=1048576", Strategy{MicroBatches: 4, Schedule: GPipe, BucketBytes: 1 << 20}, ""},
		{"dp=2,shard=none", Strategy{Replicas: 2}, ""},
		{"dp=1,mb=1", Strategy{}, ""},
		{"dp=0", Strategy{}, "at least 1"},
		{"dp=two", Strategy{}, "whole number"},
		{"mb=4,mb=2", Strategy{}, "given twice"},
		{"tq=2", Strategy{}, `unknown key "tq" (keys dp, mb, schedule, shard, bucket)`},
		{"schedule=zb", Strategy{}, "want gpipe or 1f1b"},
		{"dp=2,shard=zero3", Strategy{}, `shard "zero3": want fsdp, zero2 or none`},
		{"shard=fsdp", Strategy{}, "one replica"},
		{"dp", Strategy{}, "key=value"},
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

// TestParseStrategyRefusesScale: every key of a transformer's plan at
// cluster scale (planner/plan.ParseStrategy's, long spellings too) and
// shard=zero1 are refused as that world's, in one line, by hand-written
// messages.
func TestParseStrategyRefusesScale(t *testing.T) {
	cases := []struct{ text, want string }{
		{"tp=8", `strategy "tp=8": tp is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"dp=2,tensor=2", `strategy "dp=2,tensor=2": tensor is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"cp=2", `strategy "cp=2": cp is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"context=2", `strategy "context=2": context is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"context-parallel=2", `strategy "context-parallel=2": context-parallel is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"pp=4", `strategy "pp=4": pp is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"pipeline=4", `strategy "pipeline=4": pipeline is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"vp=2", `strategy "vp=2": vp is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"virtual=2", `strategy "virtual=2": virtual is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"mb=4,mbs=1", `strategy "mb=4,mbs=1": mbs is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"micro-batch-size=1", `strategy "micro-batch-size=1": micro-batch-size is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"micro_batch_size=1", `strategy "micro_batch_size=1": micro_batch_size is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"sp=on", `strategy "sp=on": sp is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"sequence-parallel=off", `strategy "sequence-parallel=off": sequence-parallel is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"recompute=full", `strategy "recompute=full": recompute is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"recompute-layers=2", `strategy "recompute-layers=2": recompute-layers is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"recompute_layers=2", `strategy "recompute_layers=2": recompute_layers is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"tpoverlap=on", `strategy "tpoverlap=on": tpoverlap is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"tp-comm-overlap=on", `strategy "tp-comm-overlap=on": tp-comm-overlap is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"distopt=on", `strategy "distopt=on": distopt is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"distributed-optimizer=on", `strategy "distributed-optimizer=on": distributed-optimizer is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"first=7", `strategy "first=7": first is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"first-stage-layers=7", `strategy "first-stage-layers=7": first-stage-layers is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"last=7", `strategy "last=7": last is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"last-stage-layers=7", `strategy "last-stage-layers=7": last-stage-layers is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"stage-tp=4:8", `strategy "stage-tp=4:8": stage-tp is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"tensor-stages=4:8", `strategy "tensor-stages=4:8": tensor-stages is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"ep=8", `strategy "ep=8": ep is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"expert-parallel=8", `strategy "expert-parallel=8": expert-parallel is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"etp=1", `strategy "etp=1": etp is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"expert-tensor-parallel=1", `strategy "expert-tensor-parallel=1": expert-tensor-parallel is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"imbalance=1.5", `strategy "imbalance=1.5": imbalance is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"fp8=current", `strategy "fp8=current": fp8 is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"fsdp=on", `strategy "fsdp=on": fsdp is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"grads=bf16", `strategy "grads=bf16": grads is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"grad-dtype=bf16", `strategy "grad-dtype=bf16": grad-dtype is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"epoverlap=on", `strategy "epoverlap=on": epoverlap is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"ep-comm-overlap=on", `strategy "ep-comm-overlap=on": ep-comm-overlap is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"recompute-modules=moe_act", `strategy "recompute-modules=moe_act": recompute-modules is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"recompute_modules=moe_act", `strategy "recompute_modules=moe_act": recompute_modules is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"embedding-layer=on", `strategy "embedding-layer=on": embedding-layer is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"account-for-embedding-in-pipeline-split=on", `strategy "account-for-embedding-in-pipeline-split=on": account-for-embedding-in-pipeline-split is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"loss-layer=on", `strategy "loss-layer=on": loss-layer is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"account-for-loss-in-pipeline-split=on", `strategy "account-for-loss-in-pipeline-split=on": account-for-loss-in-pipeline-split is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"stack=megatron-core-0.16", `strategy "stack=megatron-core-0.16": stack is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"dispatcher=flex", `strategy "dispatcher=flex": dispatcher is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"moe-token-dispatcher-type=flex", `strategy "moe-token-dispatcher-type=flex": moe-token-dispatcher-type is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"permute-fusion=off", `strategy "permute-fusion=off": permute-fusion is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"moe-permute-fusion=off", `strategy "moe-permute-fusion=off": moe-permute-fusion is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"router-fusion=off", `strategy "router-fusion=off": router-fusion is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"moe-router-fusion=off", `strategy "moe-router-fusion=off": moe-router-fusion is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"grouped-gemm=off", `strategy "grouped-gemm=off": grouped-gemm is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"moe-grouped-gemm=off", `strategy "moe-grouped-gemm=off": moe-grouped-gemm is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"cuda-graphs=dense", `strategy "cuda-graphs=dense": cuda-graphs is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"graphs=dense", `strategy "graphs=dense": graphs is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"routing=dropless", `strategy "routing=dropless": routing is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"expandable-segments=on", `strategy "expandable-segments=on": expandable-segments is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"expandable_segments=off", `strategy "expandable_segments=off": expandable_segments is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"loss-fusion=on", `strategy "loss-fusion=on": loss-fusion is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"cross-entropy-loss-fusion=on", `strategy "cross-entropy-loss-fusion=on": cross-entropy-loss-fusion is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"peft=lora", `strategy "peft=lora": peft is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"lora-rank=8", `strategy "lora-rank=8": lora-rank is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"lora-alpha=16", `strategy "lora-alpha=16": lora-alpha is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"lora-targets=qkv", `strategy "lora-targets=qkv": lora-targets is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"pack=on", `strategy "pack=on": pack is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"pack-len=1024", `strategy "pack-len=1024": pack-len is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"fp8gather=on", `strategy "fp8gather=on": fp8gather is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"compile=on", `strategy "compile=on": compile is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"cp-rotate=alltoall", `strategy "cp-rotate=alltoall": cp-rotate is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"context-parallel-rotate-method=alltoall", `strategy "context-parallel-rotate-method=alltoall": context-parallel-rotate-method is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"cp-comm-type=all_gather", `strategy "cp-comm-type=all_gather": cp-comm-type is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"cp_comm_type=p2p", `strategy "cp_comm_type=p2p": cp_comm_type is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"lora-dropout=0.1", `strategy "lora-dropout=0.1": lora-dropout is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"lora-a2a=on", `strategy "lora-a2a=on": lora-a2a is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"fp8-params=on", `strategy "fp8-params=on": fp8-params is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"fp8-param-gather=on", `strategy "fp8-param-gather=on": fp8-param-gather is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"fp8-activation=on", `strategy "fp8-activation=on": fp8-activation is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"fp8-dpa=on", `strategy "fp8-dpa=on": fp8-dpa is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"offload-layers=4", `strategy "offload-layers=4": offload-layers is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"gc-threshold=0.8", `strategy "gc-threshold=0.8": gc-threshold is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"garbage_collection_threshold=0.8", `strategy "garbage_collection_threshold=0.8": garbage_collection_threshold is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"memory-fraction=0.9", `strategy "memory-fraction=0.9": memory-fraction is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"graph-pool=layers", `strategy "graph-pool=layers": graph-pool is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"fp8-transpose-cache=off", `strategy "fp8-transpose-cache=off": fp8-transpose-cache is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"hidden-dropout=0", `strategy "hidden-dropout=0": hidden-dropout is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"graph-sync=1", `strategy "graph-sync=1": graph-sync is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"max-iterations-per-graph=1", `strategy "max-iterations-per-graph=1": max-iterations-per-graph is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"grad-overlap=off", `strategy "grad-overlap=off": grad-overlap is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"connections=1", `strategy "connections=1": connections is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"cuda-device-max-connections=1", `strategy "cuda-device-max-connections=1": cuda-device-max-connections is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"queue-ahead=on", `strategy "queue-ahead=on": queue-ahead is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"amax-sync=tp", `strategy "amax-sync=tp": amax-sync is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"overlap-grad-reduce=off", `strategy "overlap-grad-reduce=off": overlap-grad-reduce is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"dp=2,shard=zero1", `strategy "dp=2,shard=zero1": shard=zero1 (the distributed optimizer) is of a transformer's plan at cluster scale, not of an op graph's strategy (shard fsdp, zero2 or none)`},
		{"dp=2,shard=ZeRO1", `strategy "dp=2,shard=ZeRO1": shard=zero1 (the distributed optimizer) is of a transformer's plan at cluster scale, not of an op graph's strategy (shard fsdp, zero2 or none)`},
	}
	for _, c := range cases {
		s, err := ParseStrategy(c.text)
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseStrategy(%q) = %+v, %v;\nwant %s", c.text, s, err, c.want)
		}
	}
	// Every key of the list is in the table above.
	for _, k := range scaleKeys {
		found := false
		for _, c := range cases {
			found = found || strings.HasPrefix(c.text, k+"=") || strings.Contains(c.text, ","+k+"=")
		}
		if !found {
			t.Errorf("scale key %s: no case", k)
		}
	}
	// A zero1 shard set by hand (a decision file's) is refused by Check.
	if err := (Strategy{Replicas: 2, Shard: "zero1"}).Check(); err == nil || err.Error() != "decision: strategy: shard zero1 (the distributed optimizer) is of a transformer's plan at cluster scale, not of an op graph's strategy (want fsdp, zero2 or none)" {
		t.Errorf("Check of shard zero1: %v", err)
	}
}

// TestStrategyJSON: an op graph's strategy writes the bytes it wrote
// when the one type held both worlds' fields.
func TestStrategyJSON(t *testing.T) {
	cases := []struct {
		s    Strategy
		want string
	}{
		{Strategy{}, `{}`},
		{Strategy{Replicas: 2, MicroBatches: 4, Schedule: OneFOneB}, `{"replicas":2,"micro_batches":4,"schedule":"1f1b"}`},
		{Strategy{Replicas: 8, Shard: GradShard, BucketBytes: 16 << 20}, `{"replicas":8,"shard":"zero2","bucket_bytes":16777216}`},
		{Strategy{Replicas: 4, MicroBatches: 2, Schedule: GPipe, Shard: FullShard, BucketBytes: 1}, `{"replicas":4,"micro_batches":2,"schedule":"gpipe","shard":"fsdp","bucket_bytes":1}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.s)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: JSON %s, %v; want %s", c.s, b, err, c.want)
		}
		var back Strategy
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(c.s) {
			t.Errorf("%s reads back %+v, %v", b, back, err)
		}
	}
}

// TestStrategyCheckFor: the checks a strategy meets before it runs, with
// the numbers of the messages hand-written.
func TestStrategyCheckFor(t *testing.T) {
	cases := []struct {
		s                    Strategy
		batch, devices, gpus int
		err                  string
	}{
		{Strategy{}, 0, 8, 8, ""},
		{Strategy{Replicas: 4}, 32, 2, 8, ""},
		{Strategy{Replicas: 3}, 32, 2, 8, "3 replicas do not divide 8 GPUs"},
		{Strategy{Replicas: 2}, 32, 2, 8, "2 replicas of a 2-GPU placement take 4 GPUs, not 8"},
		{Strategy{Replicas: 4}, 0, 2, 8, "dp=4 splits the batch, and this graph has no batch information"},
		{Strategy{MicroBatches: 4}, 0, 8, 8, "mb=4 splits the batch"},
		{Strategy{Replicas: 2, Shard: "zero1"}, 32, 4, 8, "shard zero1 (the distributed optimizer) is of a transformer's plan at cluster scale"},
		{Strategy{Replicas: 4, MicroBatches: 16}, 32, 2, 8, "4 replicas x 16 micro-batches is more than the batch of 32 samples"},
		{Strategy{Replicas: 4, MicroBatches: 8}, 32, 2, 8, ""},
	}
	for _, c := range cases {
		err := c.s.CheckFor(c.batch, c.devices, c.gpus)
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v on batch %d, %d x %d GPUs: %v, want %q", c.s, c.batch, c.devices, c.gpus, err, c.err)
		}
	}
}

// TestStrategyFiles: a decision without a strategy is written as version
// 1, byte for byte as before; one with a strategy as version 2 and reads
// back whole; a version 1 file carrying a strategy is refused.
func TestStrategyFiles(t *testing.T) {
	g := testGraph(t)
	d := Decision{Device: []int{0, 1, 0, 1}}
	var b bytes.Buffer
	if err := Write(&b, g, 2, d); err != nil {
		t.Fatal(err)
	}
	if want := `"version":1,`; !strings.Contains(b.String(), want) || strings.Contains(b.String(), "strategy") {
		t.Errorf("no strategy: %s, want version 1 and no strategy key", b.String())
	}
	d.Strategy = Strategy{Replicas: 4, MicroBatches: 2, Schedule: OneFOneB}
	b.Reset()
	if err := Write(&b, g, 2, d); err != nil {
		t.Fatal(err)
	}
	f, err := Decode(b.Bytes())
	if err != nil || f.Version != 2 || !f.Decision().Strategy.Equal(d.Strategy) {
		t.Fatalf("strategy file %s: %+v, %v", b.String(), f, err)
	}
	bad := strings.Replace(b.String(), `"version":2`, `"version":1`, 1)
	if _, err := Decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), "no strategy") {
		t.Errorf("version 1 with a strategy: %v", err)
	}
	bad = strings.Replace(b.String(), `"schedule":"1f1b"`, `"schedule":"zigzag"`, 1)
	if _, err := Decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), "gpipe or 1f1b") {
		t.Errorf("unknown schedule: %v", err)
	}
	// A strategy with a field of a transformer's plan at cluster scale
	// (which the one type of both worlds could hold) is refused by name.
	for field, want := range map[string]string{
		`"tensor":8`:               `decision: strategy: "tensor" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"pipeline":2,"context":2`: `decision: strategy: "pipeline" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"tensor_stages":[4,8]`:    `decision: strategy: "tensor_stages" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"shard":"zero1"`:          `decision: strategy: shard zero1 (the distributed optimizer) is of a transformer's plan at cluster scale, not of an op graph's strategy (want fsdp, zero2 or none)`,
		`"micro_batch_size":1`:     `decision: strategy: "micro_batch_size" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"recompute":"full"`:       `decision: strategy: "recompute" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"sequence_parallel":true`: `decision: strategy: "sequence_parallel" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"first_stage_layers":7`:   `decision: strategy: "first_stage_layers" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"virtual_stages":2`:       `decision: strategy: "virtual_stages" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"tp_overlap":true`:        `decision: strategy: "tp_overlap" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"recompute_layers":2`:     `decision: strategy: "recompute_layers" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"last_stage_layers":7`:    `decision: strategy: "last_stage_layers" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
		`"context":16`:             `decision: strategy: "context" is a field of a transformer's plan at cluster scale, not of an op graph's strategy`,
	} {
		bad = strings.Replace(b.String(), `"schedule":"1f1b"`, `"schedule":"1f1b",`+field, 1)
		if _, err := Decode([]byte(bad)); err == nil || err.Error() != want {
			t.Errorf("strategy with %s: %v, want %s", field, err, want)
		}
	}
}

// TestStrategyFileDevices: a file of R replicas on N GPUs says one
// replica's N / R devices.
func TestStrategyFileDevices(t *testing.T) {
	g := testGraph(t)
	f := NewFile(g, 4, Decision{Device: []int{0, 0, 0, 0}, Strategy: Strategy{Replicas: 4}})
	if f.Devices != 1 {
		t.Errorf("4 replicas on 4 GPUs: the file says %d devices, want 1", f.Devices)
	}
}

// FuzzParseStrategy: any text is a strategy or a one-line error, never a
// panic, and a strategy reads back from its String as itself.
func FuzzParseStrategy(f *testing.F) {
	for _, s := range []string{"", "dp=4,mb=8,schedule=1f1b", "dp=2,shard=zero2,bucket=16MiB", "dp=8,shard=fsdp", "mb=2,schedule=gpipe,bucket=1000", "dp=1,mb=1"} {
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
