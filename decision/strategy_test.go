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
		s, err := ParseStrategy(c.text, nil)
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
		if back, err := ParseStrategy(s.String(), nil); err != nil || !back.Equal(s) {
			t.Errorf("%q: String %q reads back as %+v, %v", c.text, s.String(), back, err)
		}
	}
}

// TestParseStrategyRefusesScale: a key the caller's planKey says is a
// transformer's plan's at cluster scale, and shard=zero1, are refused as
// that world's, in one line; without planKey the key is unknown. (Every
// key of planner/plan.Keys is refused so, with plan.IsKey, in
// plan's TestKeysOfOneWorld.)
func TestParseStrategyRefusesScale(t *testing.T) {
	planKey := func(k string) bool { return k == "tp" || k == "tensor" || k == "fsdp" }
	cases := []struct {
		text    string
		planKey func(string) bool
		want    string
	}{
		{"tp=8", planKey, `strategy "tp=8": tp is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"dp=2,tensor=2", planKey, `strategy "dp=2,tensor=2": tensor is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"mb=4,fsdp=on", planKey, `strategy "mb=4,fsdp=on": fsdp is a key of a transformer's plan at cluster scale, not of an op graph's strategy`},
		{"tp=8", nil, `strategy "tp=8": unknown key "tp" (keys dp, mb, schedule, shard, bucket)`},
		{"pp=4", planKey, `strategy "pp=4": unknown key "pp" (keys dp, mb, schedule, shard, bucket)`},
		{"dp=2,shard=zero1", planKey, `strategy "dp=2,shard=zero1": shard=zero1 (the distributed optimizer) is of a transformer's plan at cluster scale, not of an op graph's strategy (shard fsdp, zero2 or none)`},
		{"dp=2,shard=ZeRO1", nil, `strategy "dp=2,shard=ZeRO1": shard=zero1 (the distributed optimizer) is of a transformer's plan at cluster scale, not of an op graph's strategy (shard fsdp, zero2 or none)`},
		{"dp=2,mb", planKey, `strategy "dp=2,mb": "mb" is not key=value (keys dp, mb, schedule, shard, bucket)`},
		{"dp=2,dp=4", planKey, `strategy "dp=2,dp=4": "dp" given twice`},
	}
	for _, c := range cases {
		s, err := ParseStrategy(c.text, c.planKey)
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseStrategy(%q) = %+v, %v;\nwant %s", c.text, s, err, c.want)
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
		s, err := ParseStrategy(text, nil)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error of several lines: %v", text, err)
			}
			return
		}
		back, err := ParseStrategy(s.String(), nil)
		if err != nil || !back.Equal(s) {
			t.Fatalf("%q: %+v writes %q, which reads %+v, %v", text, s, s.String(), back, err)
		}
	})
}
