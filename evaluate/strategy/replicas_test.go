package strategy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/workloads"
)

// replicaGraphs are every built-in workload, every profiled PyTorch step
// under measurements/ and the zoo's graphs (make zoo writes out/zoo; none
// without it).
func replicaGraphs(t *testing.T) (names []string, gs []*graph.Graph) {
	t.Helper()
	for _, name := range workloads.Names() {
		g, err := workloads.Build(name)
		if err != nil {
			t.Fatal(err)
		}
		names, gs = append(names, name), append(gs, g)
	}
	measured, err := filepath.Glob(filepath.Join("..", "..", "measurements", "*", "graphs", "*.json"))
	if err != nil || len(measured) == 0 {
		t.Fatalf("no profiled step under measurements/ (%v)", err)
	}
	zoo, _ := filepath.Glob(filepath.Join("..", "..", "out", "zoo", "*.json"))
	zoo = slices.DeleteFunc(zoo, func(p string) bool { return strings.HasSuffix(p, ".meta.json") })
	if len(zoo) == 0 {
		t.Log("no zoo graphs in out/zoo (make zoo): the built-in workloads and measurements/ only")
	}
	for _, p := range append(measured, zoo...) {
		if strings.HasSuffix(p, ".meta.json") {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		g, err := graph.Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		names, gs = append(names, p), append(gs, g)
	}
	t.Logf("%d built-in workloads, %d graph files (%d of the zoo's)", len(workloads.Names()), len(gs)-len(workloads.Names()), len(zoo))
	return names, gs
}

// TestReplicasNeverWorse is the property the project asks of data
// parallelism on any graph (docs/performance-model.md), over every built-in
// workload (recurrent ones included: their unrolled time steps each make a
// partial weight gradient, which is not what DDP exchanges), the profiled
// PyTorch steps under measurements/ and the zoo: R = 2 and 8 replicas of a
// one-GPU placement (as many as the batch allows) take at most the whole
// batch's step on one GPU plus one all-reduce of every gradient, and at
// least one replica's step on its share of the batch; each GPU holds at most
// one replica's peak at its share plus its buckets; the collectives move
// 2(R-1) times the gradients' bytes, each GPU 2(R-1)/R of them, sent and
// received; and those bytes are the trainable parameters' (a quarter of an
// Adam or RMSProp update's state: weight, gradient and two slots), no more.
func TestReplicasNeverWorse(t *testing.T) {
	if testing.Short() {
		t.Skip("every workload, up to 76,424 ops")
	}
	names, gs := replicaGraphs(t)
	ctx := context.Background()
	alone := func(g *graph.Graph) evaluate.Result {
		m, err := roofline.NewModel(g, cluster(t, 1, "nvswitch"), roofline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := roofline.NewEvaluator(m).Evaluate(ctx, decision.Decision{Device: decision.Single(g)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	checked := 0
	for w, g := range gs {
		name := names[w]
		var grads, state int64
		for _, tn := range Gradients(g) {
			grads += g.Tensor(int(tn)).Bytes
		}
		for i, o := range OptimizerOps(g) {
			if o {
				state += g.Op(i).ParamBytes
			}
		}
		if grads <= 0 {
			t.Errorf("%s: no gradient", name)
			continue
		}
		if state > 0 && grads*4 != state {
			t.Errorf("%s: gradients %d bytes, a quarter of the updates' state is %d", name, grads, state/4)
		}
		var single evaluate.Result
		for _, R := range []int{2, 8} {
			if g.Batch() < R {
				continue
			}
			if single.PeakMemory == nil {
				single = alone(g)
			}
			share, err := graph.AtBatch(g, (g.Batch()+R-1)/R)
			if err != nil {
				t.Fatal(err)
			}
			one := alone(share)
			c := cluster(t, R, "nvswitch")
			e, err := NewEvaluator(g, c, roofline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Evaluate(ctx, decision.Decision{Device: decision.Single(g), Strategy: decision.Strategy{Replicas: R}})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checked++
			full, _, err := c.CollectiveTime(roofline.AllReduce, seq(R), grads)
			if err != nil {
				t.Fatal(err)
			}
			if got.StepTime > single.StepTime+full+1e-12 {
				t.Errorf("%s: dp=%d step %.3f ms, more than one GPU's %.3f ms plus the all-reduce's %.3f ms", name, R, 1e3*got.StepTime, 1e3*single.StepTime, 1e3*full)
			}
			if got.StepTime < one.StepTime {
				t.Errorf("%s: dp=%d step %.3f ms, less than one replica's %.3f ms on its share", name, R, 1e3*got.StepTime, 1e3*one.StepTime)
			}
			for k, p := range got.PeakMemory {
				if p > one.PeakMemory[0]+grads {
					t.Errorf("%s: dp=%d GPU %d holds %d bytes, more than one replica's %d at its share plus the %d bytes of buckets", name, R, k, p, one.PeakMemory[0], grads)
				}
			}
			if want := 2 * int64(R-1) * grads; got.CollectiveBytes > want || got.CollectiveBytes < want-int64(R) || got.BytesMoved != got.CollectiveBytes+single.BytesMoved*int64(R) {
				t.Errorf("%s: dp=%d collectives move %d of %d bytes, want %d (2(R-1) x %d of gradients)", name, R, got.CollectiveBytes, got.BytesMoved, want, grads)
			}
			if want := slices.Repeat([]int64{2 * int64(R-1) * grads / int64(R)}, R); !slices.Equal(got.Collective, want) {
				t.Errorf("%s: dp=%d each GPU sends %v in collectives, want %v", name, R, got.Collective, want)
			}
			sentAddUp(t, name, got)
		}
	}
	if checked < 2*len(workloads.Names()) {
		t.Errorf("%d replica evaluations, want at least two a workload", checked)
	}
}

// sentAddUp checks that what each device sends (its links' bytes and its
// part of the collectives) adds up to r.BytesMoved, and what each
// receives too.
func sentAddUp(t *testing.T, name string, r evaluate.Result) {
	t.Helper()
	n := len(r.DeviceBusy)
	if len(r.LinkBytes) != n*n {
		t.Errorf("%s: %d link entries for %d GPUs", name, len(r.LinkBytes), n)
		return
	}
	var sent, received, coll int64
	for s := range n {
		for d := range n {
			sent += r.LinkBytes[s*n+d]
			received += r.LinkBytes[d*n+s]
		}
	}
	for _, c := range r.Collective {
		coll += c
	}
	if coll != r.CollectiveBytes || sent+coll != r.BytesMoved || received+coll != r.BytesMoved {
		t.Errorf("%s: GPUs send %d and receive %d bytes in transfers and %d in collectives; moved %d, by collectives %d",
			name, sent, received, coll, r.BytesMoved, r.CollectiveBytes)
	}
}

// TestTraffic: two replicas of a two-GPU placement that sends 5 bytes
// from GPU 0 to 1 and 7 back (12 a micro-batch), three micro-batches,
// and collectives of 10 bytes a GPU in the place of device 0, 4 in that
// of device 1: replica 1's links are replica 0's moved to GPUs 2 and 3,
// 3 x 5 and 3 x 7; the collectives move 2 x (10 + 4) = 28 bytes; 2 x 3 x
// 12 + 28 = 100 bytes in all.
func TestTraffic(t *testing.T) {
	one := evaluate.Result{BytesMoved: 12, LinkBytes: []int64{0, 5, 7, 0}}
	var out evaluate.Result
	traffic(&out, &one, 2, 2, 3, []int64{10, 4})
	wantLinks := []int64{
		0, 15, 0, 0,
		21, 0, 0, 0,
		0, 0, 0, 15,
		0, 0, 21, 0,
	}
	if !slices.Equal(out.LinkBytes, wantLinks) || !slices.Equal(out.Collective, []int64{10, 4, 10, 4}) ||
		out.CollectiveBytes != 28 || out.BytesMoved != 100 {
		t.Errorf("links %v, collectives %v (%d), moved %d; want %v, [10 4 10 4] (28), 100",
			out.LinkBytes, out.Collective, out.CollectiveBytes, out.BytesMoved, wantLinks)
	}
	traffic(&out, &one, 2, 2, 1, []int64{0, 0})
	if out.Collective != nil || out.CollectiveBytes != 0 || out.BytesMoved != 24 {
		t.Errorf("without collectives: %v (%d), moved %d; want none, 24", out.Collective, out.CollectiveBytes, out.BytesMoved)
	}
	for _, c := range []struct {
		times, R int
		b, want  int64
	}{{2, 2, 100, 100}, {2, 8, 800, 1400}, {3, 4, 100, 225}, {2, 1, 100, 0}} {
		if got := ringShare(c.times, c.R, c.b); got != c.want {
			t.Errorf("ringShare(%d, %d, %d) = %d, want %d", c.times, c.R, c.b, got, c.want)
		}
	}
}

// TestSentAddsUp: under every way of composing replicas (DDP, ZeRO-2,
// FSDP, accumulated micro-batches, a pipeline's replicas) the GPUs'
// links and their parts of the collectives add up to the bytes moved,
// and Fixed's first replica keeps its own links.
func TestSentAddsUp(t *testing.T) {
	g := trxl(t)
	rr := decision.RoundRobin(g, 2)
	e, _ := NewEvaluator(g, cluster(t, 4, "nvswitch"), roofline.Options{})
	amoeba, err := workloads.Build("amoebanet")
	if err != nil {
		t.Fatal(err)
	}
	expert, err := workloads.Expert("", amoeba, 4)
	if err != nil {
		t.Fatal(err)
	}
	ea, _ := NewEvaluator(amoeba, cluster(t, 8, "pcie"), roofline.Options{})
	for _, c := range []struct {
		name string
		e    *Evaluator
		dev  []int
		s    decision.Strategy
	}{
		{"ddp", e, rr, decision.Strategy{Replicas: 2}},
		{"zero2", e, rr, decision.Strategy{Replicas: 2, Shard: decision.GradShard}},
		{"fsdp", e, rr, decision.Strategy{Replicas: 2, Shard: decision.FullShard}},
		{"accumulated", e, rr, decision.Strategy{Replicas: 2, MicroBatches: 2}},
		{"pipeline", ea, expert, decision.Strategy{Replicas: 2, MicroBatches: 2}},
	} {
		got, err := c.e.Evaluate(context.Background(), decision.Decision{Device: c.dev, Strategy: c.s})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Transfers == 0 || got.CollectiveBytes == 0 {
			t.Errorf("%s: %d transfers, %d bytes by collectives: the test wants both", c.name, got.Transfers, got.CollectiveBytes)
		}
		sentAddUp(t, c.name, got)
		f, err := NewFixed(c.e, c.s)
		if err != nil {
			t.Fatal(err)
		}
		first, err := f.Evaluate(context.Background(), decision.Decision{Device: c.dev})
		if err != nil {
			t.Fatal(err)
		}
		n, k := len(got.DeviceBusy), f.Devices()
		for s := range k {
			if !slices.Equal(first.LinkBytes[s*k:(s+1)*k], got.LinkBytes[s*n:s*n+k]) {
				t.Errorf("%s: Fixed's GPU %d links %v, want the first replica's %v", c.name, s, first.LinkBytes[s*k:(s+1)*k], got.LinkBytes[s*n:s*n+k])
			}
		}
		if !slices.Equal(first.Collective, got.Collective[:k]) {
			t.Errorf("%s: Fixed's collectives %v, want the first replica's %v", c.name, first.Collective, got.Collective[:k])
		}
	}
}
