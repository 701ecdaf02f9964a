package decision

import (
	"bytes"
	"encoding/json"
	"slices"
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
		{"mb=4,schedule=GPipe,bucket=1048576", Strategy{MicroBatches: 4, Schedule: GPipe, BucketBytes: 1 << 20}, ""},
		{"dp=2,shard=none", Strategy{Replicas: 2}, ""},
		{"dp=0", Strategy{}, "at least 1"},
		{"dp=two", Strategy{}, "whole number"},
		{"mb=4,mb=2", Strategy{}, "given twice"},
		{"tp=2", Strategy{Tensor: 2}, ""},
		{"tp=8,pp=6,dp=48,mbs=1,vp=2,sp=on,recompute=selective,distopt=on", Strategy{Tensor: 8, Pipeline: 6, Replicas: 48, MicroBatchSize: 1, Virtual: 2, SequenceParallel: true, Recompute: SelectiveRecompute, Shard: OptimizerShard}, ""},
		{"dp=4,shard=zero1,recompute=full,sp=off", Strategy{Replicas: 4, Shard: OptimizerShard, Recompute: FullRecompute}, ""},
		{"tp=2,sp=maybe", Strategy{}, "not on or off"},
		{"tp=2,sp=on,tpoverlap=on", Strategy{Tensor: 2, SequenceParallel: true, TPOverlap: true}, ""},
		{"tp=2,tpoverlap=on", Strategy{}, "tpoverlap=on without sp=on"},
		{"sp=on", Strategy{}, "sp=on with tp=1"},
		{"vp=2", Strategy{}, "vp=2 with one pipeline stage"},
		{"pp=2,recompute=some", Strategy{}, "want none, selective or full"},
		{"dp=2,distopt=on,shard=fsdp", Strategy{}, "distopt and shard both given"},
		{"tq=2", Strategy{}, "unknown key"},
		{"schedule=zb", Strategy{}, "want gpipe or 1f1b"},
		{"shard=fsdp", Strategy{}, "one replica"},
		{"dp", Strategy{}, "key=value"},
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
		{"cp=1,tp=2", Strategy{Tensor: 2}, ""},
		{"cp=0", Strategy{}, "cp: \"0\" is not a whole number"},
		{"cp=2,cp=4", Strategy{}, "given twice"},
		{"pp=2,stage-tp=4:8,cp=2", Strategy{}, "cp=2 with stage-tp=4:8: context parallelism is modelled with one tensor-parallel degree"},
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

// TestStageTensor: a per-stage TP's degrees, its largest, and its JSON: a
// strategy without it writes the bytes it wrote before.
func TestStageTensor(t *testing.T) {
	s := Strategy{Pipeline: 3, Replicas: 2, TensorStages: []int{2, 8, 4}}
	if got := s.StageT(); !slices.Equal(got, []int{2, 8, 4}) || s.MaxT() != 8 {
		t.Errorf("StageT %v, MaxT %d", got, s.MaxT())
	}
	if got := (Strategy{Tensor: 4, Pipeline: 3}).StageT(); !slices.Equal(got, []int{4, 4, 4}) {
		t.Errorf("uniform StageT %v", got)
	}
	b, _ := json.Marshal(s)
	if want := `{"replicas":2,"pipeline":3,"tensor_stages":[2,8,4]}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var back Strategy
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(s) || back.Equal(Strategy{Pipeline: 3, Replicas: 2, TensorStages: []int{2, 8, 8}}) {
		t.Errorf("JSON reads back %+v, %v", back, err)
	}
	// Context parallelism: written after the other keys, absent when 1.
	cp := Strategy{Tensor: 8, Context: 16, Pipeline: 16, Replicas: 8}
	b, _ = json.Marshal(cp)
	if want := `{"replicas":8,"tensor":8,"pipeline":16,"context":16}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	back = Strategy{}
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(cp) || back.String() != "dp=8,tp=8,cp=16,pp=16" {
		t.Errorf("JSON reads back %+v (%q), %v", back, back.String(), err)
	}
	if err := (Strategy{Context: -1}).Check(); err == nil || !strings.Contains(err.Error(), "context -1") {
		t.Errorf("Check of cp -1: %v", err)
	}
	b, _ = json.Marshal(Strategy{Tensor: 8, Pipeline: 16, Replicas: 48, MicroBatchSize: 1, FirstLayers: 7})
	if want := `{"replicas":48,"tensor":8,"pipeline":16,"micro_batch_size":1,"first_stage_layers":7}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
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
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%+v over %d layers: %v, %v; want %v", c.s, c.layers, got, err, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%+v over %d layers: %v, want %v", c.s, c.layers, got, c.want)
				break
			}
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
		{Strategy{Tensor: 2}, 32, 4, 8, "tp=2 is for plans of a transformer at cluster scale"},
		{Strategy{Replicas: 2, Shard: OptimizerShard}, 32, 4, 8, "shard=zero1 is for plans of a transformer"},
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
	for _, s := range []string{"", "dp=4,mb=8,schedule=1f1b", "tp=8,pp=16,vp=7,mbs=1,sp=on,distopt=on", "dp=2,shard=zero2,bucket=16MiB", "recompute=full,pp=2", "tp=8,pp=16,first=7,last=7", "pp=4,recompute=full,recompute-layers=2", "pp=4,stage-tp=4:8:8:2,sp=on", "tp=8,cp=16,pp=16,dp=8,first=7,last=7"} {
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
