package strategy

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/workloads"
)

func trxl(t testing.TB) *graph.Graph {
	t.Helper()
	g, err := workloads.Build("trxl2")
	if err != nil {
		t.Fatal(err)
	}
	if g.Batch() == 0 {
		t.Fatal("trxl2 has no batch information")
	}
	return g
}

func cluster(t testing.TB, n int, topo string) *roofline.Cluster {
	t.Helper()
	h, _ := roofline.Preset("v100")
	c, err := roofline.NewCluster(h, n, topo)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNoStrategyIsRoofline: a decision without a strategy, and one whose
// strategy is one replica (a DDP bucket named, nothing to all-reduce), is
// scored exactly as the roofline evaluator scores it.
func TestNoStrategyIsRoofline(t *testing.T) {
	g := trxl(t)
	c := cluster(t, 2, "")
	m, err := roofline.NewModel(g, c, roofline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := decision.Decision{Device: decision.RoundRobin(g, 2)}
	want, err := roofline.NewEvaluator(m).Evaluate(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := NewEvaluator(g, c, roofline.Options{})
	got, err := e.Evaluate(context.Background(), d)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("no strategy: %+v, %v; want the roofline's %+v", got.StepTime, err, want.StepTime)
	}
	d.Strategy = decision.Strategy{BucketBytes: 1 << 20}
	got, err = e.Evaluate(context.Background(), d)
	if err != nil || got.StepTime != want.StepTime {
		t.Errorf("one replica with a bucket: %v, %v; want %v", got.StepTime, err, want.StepTime)
	}
}

// TestDDPComposes: R replicas of a one-GPU placement take the replica's
// step at B/R examples plus the exposed all-reduce of its gradients, whose
// bytes are the weights' (one gradient per weight); every GPU holds the
// replica's peak plus its buckets.
func TestDDPComposes(t *testing.T) {
	g := trxl(t)
	for _, R := range []int{2, 4} {
		c := cluster(t, R, "nvswitch")
		e, _ := NewEvaluator(g, c, roofline.Options{})
		d := decision.Decision{Device: decision.Single(g), Strategy: decision.Strategy{Replicas: R}}
		got, err := e.Evaluate(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		gb, _ := graph.AtBatch(g, g.Batch()/R)
		m, _ := roofline.NewModel(gb, cluster(t, 1, "nvswitch"), roofline.Options{})
		one, err := roofline.NewEvaluator(m).Evaluate(context.Background(), decision.Decision{Device: decision.Single(g)})
		if err != nil {
			t.Fatal(err)
		}
		var gradBytes int64
		for _, t := range Gradients(gb) {
			gradBytes += gb.Tensor(int(t)).Bytes
		}
		if gradBytes <= 0 {
			t.Fatalf("R=%d: no gradients found", R)
		}
		full, _, _ := c.CollectiveTime(roofline.AllReduce, seq(R), gradBytes)
		if got.StepTime < one.StepTime || got.StepTime > one.StepTime+full+1e-9 {
			t.Errorf("R=%d: step %v, want between the replica's %v and it plus one all-reduce of every gradient (%v)", R, got.StepTime, one.StepTime, one.StepTime+full)
		}
		if len(got.PeakMemory) != R || got.PeakMemory[R-1] != one.PeakMemory[0]+gradBytes || got.DeviceBusy[R-1] != one.DeviceBusy[0] {
			t.Errorf("R=%d: peaks %v busy %v, want each %v + %v buckets, busy %v", R, got.PeakMemory, got.DeviceBusy, one.PeakMemory[0], gradBytes, one.DeviceBusy[0])
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestDDPRefusals: strategies this evaluator cannot cost, or that do not
// fit, are one-line errors.
func TestDDPRefusals(t *testing.T) {
	g := trxl(t)
	e, _ := NewEvaluator(g, cluster(t, 4, "nvswitch"), roofline.Options{})
	for _, c := range []struct {
		s    decision.Strategy
		want string
	}{
		{decision.Strategy{Replicas: 3}, "do not divide"},
		{decision.Strategy{Replicas: 2, MicroBatches: 4, Shard: decision.FullShard}, "not costed yet"},

		{decision.Strategy{Replicas: 4, MicroBatches: 1000}, "more than the batch"},
	} {
		d := decision.Decision{Device: make([]int, g.NumOps()), Strategy: c.s}
		if _, err := e.Evaluate(context.Background(), d); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q", c.s, err, c.want)
		}
	}
}

// BenchmarkEvaluate compares one replica's evaluation on 1 GPU at the
// full batch with 8 replicas' (DDP) at an eighth of it: the bound
// is 1.5x.
func BenchmarkEvaluate(b *testing.B) {
	g := trxl(b)
	for _, R := range []int{1, 8} {
		c := cluster(b, R, "nvswitch")
		e, _ := NewEvaluator(g, c, roofline.Options{})
		d := decision.Decision{Device: decision.Single(g), Strategy: decision.Strategy{Replicas: R}}
		if R == 1 {
			d.Strategy = decision.Strategy{}
		}
		b.Run(map[int]string{1: "replica", 8: "ddp8"}[R], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Evaluate(context.Background(), d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFSDPComposes: FSDP on 4 GPUs keeps a quarter of the parameter state
// per GPU plus the largest weight gathered, and costs at least DDP's
// replica step; its communication is three collectives per weight.
func TestFSDPComposes(t *testing.T) {
	g := trxl(t)
	const R = 4
	c := cluster(t, R, "pcie")
	e, _ := NewEvaluator(g, c, roofline.Options{})
	d := decision.Decision{Device: decision.Single(g), Strategy: decision.Strategy{Replicas: R, Shard: decision.FullShard}}
	got, err := e.Evaluate(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	gb, _ := graph.AtBatch(g, g.Batch()/R)
	m, _ := roofline.NewModel(gb, cluster(t, 1, "pcie"), roofline.Options{})
	one, _ := roofline.NewEvaluator(m).Evaluate(context.Background(), decision.Decision{Device: decision.Single(g)})
	var state, largest int64
	for i := range gb.NumOps() {
		state += gb.Op(i).ParamBytes
	}
	for _, t := range Gradients(gb) {
		largest = max(largest, gb.Tensor(int(t)).Bytes)
	}
	if want := one.PeakMemory[0] - state + (state+R-1)/R + largest; got.PeakMemory[0] != want {
		t.Errorf("peak %d, want %d (replica %d, state %d / %d, largest weight %d)", got.PeakMemory[0], want, one.PeakMemory[0], state, R, largest)
	}
	if got.StepTime < one.StepTime {
		t.Errorf("step %v below the replica's %v", got.StepTime, one.StepTime)
	}
	ddp, _ := e.Evaluate(context.Background(), decision.Decision{Device: decision.Single(g), Strategy: decision.Strategy{Replicas: R}})
	if got.PeakMemory[0] >= ddp.PeakMemory[0] {
		t.Errorf("fsdp peak %d not below ddp's %d", got.PeakMemory[0], ddp.PeakMemory[0])
	}
}

// TestStagesHand: forward ops f0 (device 0) -> f1 (device 1), backward
// b1 (device 1) -> b0 (device 0): two stages in that order. The same ops
// with f1 on device 0 and f0 on device 1 read backwards: stage order 1,
// 0. A forward pass that goes 0 -> 1 -> 0 is not a pipeline.
func TestStagesHand(t *testing.T) {
	build := func() *graph.Graph {
		b := graph.NewBuilder("chain")
		f0 := b.AddOp(graph.Op{Name: "f0", Class: graph.ClassMatMul, FLOPs: 1e9, BytesWritten: 1 << 20})
		f1 := b.AddOp(graph.Op{Name: "f1", Class: graph.ClassMatMul, FLOPs: 1e9, BytesWritten: 1 << 20})
		f2 := b.AddOp(graph.Op{Name: "f2", Class: graph.ClassMatMul, FLOPs: 1e9, BytesWritten: 1 << 20})
		b1 := b.AddOp(graph.Op{Name: "b1", Class: graph.ClassMatMul, FLOPs: 1e9, BytesWritten: 1 << 20, Backward: true})
		b0 := b.AddOp(graph.Op{Name: "b0", Class: graph.ClassMatMul, FLOPs: 1e9, Backward: true})
		b.AddTensor(f0, 1<<20, f1)
		b.AddTensor(f1, 1<<20, f2)
		b.AddTensor(f2, 1<<20, b1)
		b.AddTensor(b1, 1<<20, b0)
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := build()
	cases := []struct {
		dev   []int
		stage []int
		err   string
	}{
		{[]int{0, 1, 1, 1, 0}, []int{0, 1}, ""},
		{[]int{1, 0, 0, 0, 1}, []int{1, 0}, ""},
		{[]int{0, 1, 0, 0, 0}, nil, "goes from device"},
		{[]int{0, 0, 1, 0, 1}, nil, "backward op"},
	}
	for _, c := range cases {
		st, n, err := Stages(g, c.dev, 2)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: %v, want %q", c.dev, err, c.err)
			}
			continue
		}
		if err != nil || n != 2 || !reflect.DeepEqual(st, c.stage) {
			t.Errorf("%v: stages %v (%d), %v; want %v", c.dev, st, n, err, c.stage)
		}
	}
}

// TestPipelinedExpert: AmoebaNet's expert placement on 4 GPUs is a
// pipeline: four micro-batches are faster than one batch through it, and
// 1F1B holds no more activations than GPipe.
func TestPipelinedExpert(t *testing.T) {
	g, err := workloads.Build("amoebanet")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := workloads.Expert("", g, 4)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := NewEvaluator(g, cluster(t, 4, ""), roofline.Options{})
	run := func(s decision.Strategy) evaluate.Result {
		r, err := e.Evaluate(context.Background(), decision.Decision{Device: dev, Strategy: s})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	whole := run(decision.Strategy{})
	gp := run(decision.Strategy{MicroBatches: 4})
	fb := run(decision.Strategy{MicroBatches: 4, Schedule: decision.OneFOneB})
	if gp.StepTime >= whole.StepTime {
		t.Errorf("4 micro-batches %v, not faster than the batch at once %v", gp.StepTime, whole.StepTime)
	}
	for k := range gp.PeakMemory {
		if fb.PeakMemory[k] > gp.PeakMemory[k] {
			t.Errorf("GPU %d: 1F1B holds %d, more than GPipe's %d", k, fb.PeakMemory[k], gp.PeakMemory[k])
		}
	}
}

// BenchmarkEvaluateGPT2 is the figure: gpt2_small (make zoo,
// out/zoo) with 8 replicas against one replica's evaluation (bound 1.5x).
// Skipped when the zoo is not exported.
func BenchmarkEvaluateGPT2(b *testing.B) {
	f, err := os.Open("../../out/zoo/gpt2_small.json")
	if err != nil {
		b.Skip("out/zoo/gpt2_small.json not there: make zoo")
	}
	defer f.Close()
	g, err := graph.Read(f)
	if err != nil {
		b.Fatal(err)
	}
	if g.Batch() == 0 {
		b.Skip("out/zoo/gpt2_small.json has no batch information: export it again (make zoo)")
	}
	for _, R := range []int{1, 8} {
		e, _ := NewEvaluator(g, cluster(b, R, "nvswitch"), roofline.Options{})
		d := decision.Decision{Device: decision.Single(g)}
		if R > 1 {
			d.Strategy = decision.Strategy{Replicas: R}
		}
		b.Run(map[int]string{1: "replica", 8: "ddp8"}[R], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Evaluate(context.Background(), d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAccumulation: micro-batches through a placement that is not a
// pipeline (round robin sends the forward pass back and forth) run one
// after another: M = 2 takes twice the step of one micro-batch on the
// same placement, exactly.
func TestAccumulation(t *testing.T) {
	g := trxl(t)
	c := cluster(t, 2, "nvswitch")
	dev := decision.RoundRobin(g, 2)
	if _, _, err := Stages(g, dev, 2); err == nil {
		t.Fatal("round robin is a pipeline: the test needs one that is not")
	}
	e, _ := NewEvaluator(g, c, roofline.Options{})
	got, err := e.Evaluate(context.Background(), decision.Decision{Device: dev, Strategy: decision.Strategy{MicroBatches: 2}})
	if err != nil {
		t.Fatal(err)
	}
	gb, _ := graph.AtBatch(g, g.Batch()/2)
	m, _ := roofline.NewModel(gb, c, roofline.Options{})
	one, err := roofline.NewEvaluator(m).Evaluate(context.Background(), decision.Decision{Device: dev})
	if err != nil {
		t.Fatal(err)
	}
	if got.StepTime != 2*one.StepTime {
		t.Errorf("2 micro-batches accumulated: %v, want 2 x %v", got.StepTime, one.StepTime)
	}
	if !reflect.DeepEqual(got.PeakMemory, one.PeakMemory) {
		t.Errorf("peaks %v, want one micro-batch's %v", got.PeakMemory, one.PeakMemory)
	}
}

// TestPipelineReplicasOverlap: two replicas of AmoebaNet's 4-stage expert
// pipeline (M = 2) take at least one replica's pipelined step at the same
// micro-batch, and less than that plus the longest all-reduce of one
// stage's gradients: a stage all-reduces once its own last backward is
// done, while the stages before it still run theirs.
func TestPipelineReplicasOverlap(t *testing.T) {
	g, err := workloads.Build("amoebanet")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := workloads.Expert("", g, 4)
	if err != nil {
		t.Fatal(err)
	}
	c8 := cluster(t, 8, "pcie")
	e, _ := NewEvaluator(g, c8, roofline.Options{})
	got, err := e.Evaluate(context.Background(), decision.Decision{Device: dev, Strategy: decision.Strategy{Replicas: 2, MicroBatches: 2}})
	if err != nil {
		t.Fatal(err)
	}
	half, _ := graph.AtBatch(g, g.Batch()/2)
	e1, _ := NewEvaluator(half, cluster(t, 4, "pcie"), roofline.Options{})
	one, err := e1.Evaluate(context.Background(), decision.Decision{Device: dev, Strategy: decision.Strategy{MicroBatches: 2}})
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := graph.AtBatch(g, g.Batch()/4)
	perDev := make([]int64, 4)
	for _, t := range Gradients(mb) {
		perDev[dev[mb.Tensor(int(t)).Producer]] += mb.Tensor(int(t)).Bytes
	}
	longest := 0.0
	for k, b := range perDev {
		ar, _, _ := c8.CollectiveTime(roofline.AllReduce, []int{k, 4 + k}, b)
		longest = max(longest, ar)
	}
	if longest == 0 {
		t.Fatal("no gradients")
	}
	if got.StepTime < one.StepTime || got.StepTime >= one.StepTime+longest {
		t.Errorf("2 replicas: %v, want in [%v, %v + %v)", got.StepTime, one.StepTime, one.StepTime, longest)
	}
}

// TestPipelineSkipCharged: a three-stage chain f0 -> f1 -> f2 (one op per
// GPU, batch 2, two micro-batches) whose f2 also reads f0's output
// directly: that tensor is passed along both stage boundaries, so making
// it 64 MiB larger lengthens micro-batch 0's forward, and the step, by at
// least twice its PCIe transfer time (it was once not charged at all: only
// sends between adjacent stages were).
func TestPipelineSkipCharged(t *testing.T) {
	build := func(skip int64) *graph.Graph {
		b := graph.NewBuilder("skip")
		b.SetBatch(2)
		f := make([]int, 3)
		for i := range f {
			f[i] = b.AddOp(graph.Op{Name: fmt.Sprintf("f%d", i), Class: graph.ClassMatMul, FLOPs: 1e9, BytesWritten: 1 << 20})
		}
		act := func(p int, bytes int64, c int) {
			b.AddTensorFull(graph.Tensor{Producer: p, Bytes: bytes, Consumers: []int{c}, BatchDim: 0})
		}
		act(f[0], 1<<20, f[1])
		act(f[1], 1<<20, f[2])
		act(f[0], skip, f[2])
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	c := cluster(t, 3, "pcie")
	step := func(skip int64) float64 {
		e, _ := NewEvaluator(build(skip), c, roofline.Options{})
		r, err := e.Evaluate(context.Background(), decision.Decision{Device: []int{0, 1, 2}, Strategy: decision.Strategy{MicroBatches: 2}})
		if err != nil {
			t.Fatal(err)
		}
		return r.StepTime
	}
	small, big := step(1<<10), step(1<<10+64<<20)
	// One micro-batch carries half of the extra 64 MiB.
	send := c.TransferTime(0, 2, 32<<20) - c.TransferTime(0, 2, 1<<9)
	if big-small < 2*send*(1-1e-9) {
		t.Errorf("a 64 MiB skip over two boundaries: step %v -> %v (+%v), want at least +%v", small, big, big-small, 2*send)
	}
}

// TestFusedKernelPhase: a kernel that fused a weight's update-phase op
// (w, whose work does not scale with the batch) into a forward op (f)
// runs once per micro-batch: its time is the forward's, not the update's
// (booked to the update, a search found pipelines that ran their forward
// pass once a step). A backward op fused with an update op is backward.
func TestFusedKernelPhase(t *testing.T) {
	b := graph.NewBuilder("fused")
	b.SetBatch(4)
	w := b.AddOp(graph.Op{Name: "w", Class: graph.ClassElementwise, BytesRead: 1 << 20, FixedBytesRead: 1 << 20, BytesWritten: 1 << 20, FixedBytesWritten: 1 << 20})
	f := b.AddOp(graph.Op{Name: "f", Class: graph.ClassMatMul, FLOPs: 4e9, FixedFLOPs: 0})
	bk := b.AddOp(graph.Op{Name: "b", Class: graph.ClassMatMul, FLOPs: 4e9, Backward: true})
	u := b.AddOp(graph.Op{Name: "u", Class: graph.ClassElementwise, BytesRead: 1 << 20, FixedBytesRead: 1 << 20})
	b.AddTensor(w, 1<<20, f)
	b.AddTensorFull(graph.Tensor{Producer: f, Bytes: 1 << 20, Consumers: []int{bk}, BatchDim: 0})
	b.AddTensor(bk, 1<<20, u)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	phase := make([]graph.Phase, g.NumOps())
	for i := range phase {
		phase[i] = g.Op(i).Phase()
	}
	if phase[w] != graph.PhaseUpdate || phase[f] != graph.PhaseForward || phase[bk] != graph.PhaseBackward || phase[u] != graph.PhaseUpdate {
		t.Fatalf("phases %v", phase)
	}
	rec := newPhaseRec(phase, g, 1, nil)
	rec.reset([]int{0, 0, 0, 0})
	rec.Kernel(0, []int32{int32(w), int32(f)}, 0, 2)
	rec.Kernel(0, []int32{int32(u), int32(bk)}, 2, 5)
	if want := [3]float64{2, 3, 0}; rec.busy[0] != want {
		t.Errorf("busy by phase %v, want %v", rec.busy[0], want)
	}
}

// TestZeRO2Composes: ZeRO-2 on R GPUs is one replica at B/R examples
// whose optimizer ops (OptimizerOps: update-phase ops fed by gradients,
// present in trxl2) take 1/R of their work, plus the exposed part of its
// gradients' reduce-scatter (at most one reduce-scatter of them all) and
// one all-gather of the weights; each GPU holds less than DDP's.
func TestZeRO2Composes(t *testing.T) {
	g := trxl(t)
	opt := OptimizerOps(g)
	n := 0
	for i, o := range opt {
		if o {
			n++
			if g.Op(i).Phase() != graph.PhaseUpdate {
				t.Fatalf("optimizer op %q is not in the update phase", g.Op(i).Name)
			}
		}
	}
	if n == 0 {
		t.Fatal("trxl2 has no optimizer ops")
	}
	for _, R := range []int{2, 4} {
		c := cluster(t, R, "pcie")
		e, _ := NewEvaluator(g, c, roofline.Options{})
		d := decision.Decision{Device: decision.Single(g), Strategy: decision.Strategy{Replicas: R, Shard: decision.GradShard}}
		got, err := e.Evaluate(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		d.Strategy.Shard = decision.NoShard
		ddp, _ := e.Evaluate(context.Background(), d)
		gb, _ := graph.AtBatch(g, g.Batch()/R)
		f := make([]float64, gb.NumOps())
		for i := range f {
			f[i] = 1
			if opt[i] {
				f[i] = 1 / float64(R)
			}
		}
		sharded, _ := graph.ScaleOps(gb, f)
		m, _ := roofline.NewModel(sharded, cluster(t, 1, "pcie"), roofline.Options{})
		one, err := roofline.NewEvaluator(m).Evaluate(context.Background(), decision.Decision{Device: decision.Single(g)})
		if err != nil {
			t.Fatal(err)
		}
		var w int64
		for _, t := range Gradients(gb) {
			w += gb.Tensor(int(t)).Bytes
		}
		rs, _, _ := c.CollectiveTime(roofline.ReduceScatter, seq(R), w)
		ag, _, _ := c.CollectiveTime(roofline.AllGather, seq(R), w)
		if lo, hi := one.StepTime+ag, one.StepTime+rs+ag; got.StepTime < lo-1e-12 || got.StepTime > hi+1e-12 {
			t.Errorf("R=%d: step %v, want in [%v, %v]", R, got.StepTime, lo, hi)
		}
		if got.PeakMemory[0] >= ddp.PeakMemory[0] {
			t.Errorf("R=%d: zero2 peak %d not below ddp's %d", R, got.PeakMemory[0], ddp.PeakMemory[0])
		}
	}
}

// TestFixed: a decision scored through Fixed is scored with Fixed's
// strategy (its own replaced), and the result lists one replica's GPUs;
// a strategy that does not fit the cluster is refused.
func TestFixed(t *testing.T) {
	g := trxl(t)
	e, _ := NewEvaluator(g, cluster(t, 4, "pcie"), roofline.Options{})
	s := decision.Strategy{Replicas: 2}
	f, err := NewFixed(e, s)
	if err != nil {
		t.Fatal(err)
	}
	d := decision.Decision{Device: decision.RoundRobin(g, 2), Strategy: decision.Strategy{Replicas: 4}}
	got, err := f.Evaluate(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	d.Strategy = s
	want, _ := e.Evaluate(context.Background(), d)
	if got.StepTime != want.StepTime || len(got.PeakMemory) != 2 || got.PeakMemory[1] != want.PeakMemory[1] || f.Devices() != 2 {
		t.Errorf("fixed: %v on %d GPUs, want %v on 2", got.StepTime, len(got.PeakMemory), want.StepTime)
	}
	out := make([]evaluate.Result, 2)
	if err := f.EvaluateBatch(context.Background(), []decision.Decision{d, d}, out); err != nil || out[1].StepTime != want.StepTime {
		t.Errorf("batch: %v, %v", out[1].StepTime, err)
	}
	if _, err := NewFixed(e, decision.Strategy{Replicas: 3}); err == nil {
		t.Error("3 replicas on 4 GPUs: no error")
	}
}
