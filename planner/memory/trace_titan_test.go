package memory

import (
	"testing"

	"github.com/placer/placer/planner/plan"

	"github.com/placer/placer/evaluate/alloc"
	"github.com/placer/placer/graph/transformer"
)

// TestTitanBlockTensors: one torchtitan block's tensors and what each
// checkpointing keeps of them, worked by hand on a small model: 1,024
// tokens on the GPU, hidden 256, 4 heads and 2 key/value heads of 64,
// FFN 512, tensor-parallel 2 with sequence parallelism, BF16.
//   - the norms' gathered outputs 2 x 1,024 x 256 = 524,288 bytes each;
//     wq's output and every head's query, key, value, attention output
//     and wo input 2 x 1,024 x 256 / 2 = 262,144; wk's and wv's
//     131,072; the log-sum-exp 4 x 1,024 x 4 / 2 = 8,192; the residual
//     and the reduce-scatters' outputs 262,144; w1's, w3's, silu's and
//     w2's input 2 x 1,024 x 512 / 2 = 524,288; w2's output, whole,
//     524,288;
//   - without checkpointing autograd keeps 524,288 + 3 x 262,144 +
//     262,144 + 8,192 + 262,144 + 262,144 + 524,288 + 4 x 524,288 =
//     4,726,784;
//   - the per-op policy keeps wq 262,144, wv 131,072, the output
//     262,144, the log-sum-exp 8,192, the reduce-scatters' 2 x 262,144,
//     w1 524,288 and w2's output 524,288: 2,236,416 (eager), and
//     compiled 2,236,416 - 524,288 - 262,144 = 1,449,984 (w2's output
//     and its reduce-scatter's are read by nothing); its recomputation
//     makes the rest of autograd's, 524,288 + 786,432 + 262,144 +
//     262,144 + 524,288 + 1,572,864 = 3,932,160 eager, compiled silu's
//     output less (made again from w1's in the backward), 3,407,872;
//   - full checkpointing keeps none and recomputes 4,726,784 eager,
//     4,202,496 compiled.
//
// Under Float8 the four saved GEMM inputs (the two norms' outputs, wo's
// and w2's) take a byte an element: without checkpointing 4,726,784 -
// 262,144 - 262,144 - 131,072 - 262,144 = 3,809,280.
func TestTitanBlockTensors(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=256,heads=4,kv_heads=2,ffn=512,seq=1024,vocab=1000,batch=8")
	for _, c := range []struct {
		name          string
		rec           plan.Recompute
		eager         bool
		fp8           string
		saved, recomp float64
	}{
		{"none", plan.NoRecompute, true, "", 4726784, 0},
		{"op eager", plan.SelectiveRecompute, true, "", 2236416, 3932160},
		{"op compiled", plan.SelectiveRecompute, false, "", 1449984, 3407872},
		{"full eager", plan.FullRecompute, true, "", 0, 4726784},
		{"full compiled", plan.FullRecompute, false, "", 0, 4202496},
		{"none compiled", plan.NoRecompute, false, "", 4202496, 0},
		{"none fp8", plan.NoRecompute, true, "current", 3809280, 0},
	} {
		pl := plan.Plan{TP: 2, PP: 1, NumMicro: 1, Strategy: plan.Strategy{SequenceParallel: true, Recompute: c.rec, FP8: c.fp8}}
		pl.Software.Stack = "torchtitan-0.2"
		pl.Run.Eager = c.eager
		co := counter{m: m, pl: pl, tokens: 1024}
		saved, recomp := titanSplit(&pl, co.titanBlockTensors())
		if got := sum(saved); got != c.saved {
			t.Errorf("%s: keeps %.0f bytes, want %.0f", c.name, got, c.saved)
		}
		if got := sum(recomp); got != c.recomp {
			t.Errorf("%s: recomputes %.0f bytes, want %.0f", c.name, got, c.recomp)
		}
	}
}

// TestTitanAttentionBackward: torch's ring attention backward's
// buffers, by hand, for 1,024 tokens on the GPU, 4 heads of 64, T 1,
// C 4: E = 1,024 x 256 = 262,144 elements; the FP32 dq, dk, dv
// accumulators 3 x 1,048,576, every rank's keys and values 2 x 2 x E x
// 4 = 4,194,304, the local ones concatenated 1,048,576, one step's
// gradients 3 x 524,288, three FP32 dk-dv concatenations 3 x 2,097,152:
// 3,145,728 + 4,194,304 + 1,048,576 + 1,572,864 + 6,291,456 =
// 16,252,928 bytes. None without context parallelism.
func TestTitanAttentionBackward(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=256,heads=4,kv_heads=2,ffn=512,seq=4096,vocab=1000,batch=8")
	for _, c := range []struct {
		C    int
		want float64
	}{{1, 0}, {4, 16252928}} {
		co := counter{m: m, pl: plan.Plan{TP: 1, CP: c.C}, tokens: 1024}
		if got := sum(co.titanAttentionBackward()); got != c.want {
			t.Errorf("C %d: %.0f bytes, want %.0f", c.C, got, c.want)
		}
	}
}

// TestTitanStepPeak: a small torchtitan plan's step trace, its peak
// worked by hand. Two blocks of 590,336 parameters (two norms of 256,
// wq and wo 65,536 each, wk and wv 32,768 each, w1, w2, w3 131,072
// each), the embedding 256,000 and the output 256,256 (with the final
// norm): 1,692,928 parameters, FSDP over 8 GPUs, full checkpointing,
// one micro-batch of 1,024 tokens, a vocabulary of 1,000. The peak is
// the loss's backward, when log_softmax's gradient is made:
//   - the FP32 shards and AdamW's two moments, 12 x 1,692,928 / 8 =
//     2,539,392 bytes; no gradient yet (zero_grad at the step's start);
//   - the root's BF16 parameters, 2 x 512,256 = 1,024,512, and the last
//     block's, not resharded after its forward, 1,180,672;
//   - the embedding's and each block's outputs (the checkpoints'
//     inputs, the final norm's) 3 x 524,288 and the output layer's
//     input 524,288;
//   - the log softmax's FP32 output, nll_loss's gradient and
//     log_softmax's, 3 x 4 x 1,024,000 = 12,288,000 (the BF16 logits
//     deleted before the backward);
//
// 2,539,392 + 1,024,512 + 1,180,672 + 4 x 524,288 + 12,288,000 =
// 19,129,728 bytes (the sum of parts counted every gradient shard and a
// block's gradient beside them). The gradient shards, 4 x 1,692,928 / 8 = 846,464 bytes,
// are made on the reduce-scatter stream.
func TestTitanStepPeak(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=256,heads=4,kv_heads=2,ffn=512,seq=1024,vocab=1000,batch=8")
	if got := transformer.LayerParams(m); got != 590336 {
		t.Fatalf("block parameters %d, want 590,336", got)
	}
	p, err := plan.ParsePod("grand-teton:1,attention=flash")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("dp=8,mbs=1,fsdp=on,recompute=full,stack=torchtitan-0.2,compile=on")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	cs, stages := partsOf(m, pl, &p)
	counted, _, ok := titanTraced(stages, cs)
	if !ok {
		t.Fatal("not traced")
	}
	tr := cs[0].titanStageTrace(0, &stages[0])
	for _, x := range []*memTrace{&counted, &tr} {
		peak, by := x.peak()
		if peak != 19129728 {
			t.Errorf("peak %d bytes (events kept: %v), want 19,129,728", peak, !x.peakOnly)
		}
		if by[catGrads] != 0 {
			t.Errorf("%d bytes of gradients at the peak, want none", by[catGrads])
		}
	}
	var shards int64
	for _, e := range tr.ev {
		if !e.Free && tr.cat[e.Tensor] == catGrads && e.Stream == reduceScatterStream {
			shards += e.Size
		}
	}
	if shards != 846464 {
		t.Errorf("%d bytes of gradient shards on the reduce-scatter stream, want 846,464", shards)
	}
	if _, err := alloc.Replay(alloc.Config{Expandable: true}, tr.ev); err != nil {
		t.Errorf("replay: %v", err)
	}
}

// TestTitanTracedOnly: the trace replaces the sum of parts for
// torchtitan over FSDP2 of a Llama alone: not for Megatron-Core,
// torchtitan without FSDP, a GPT (no SwiGLU: not torchtitan's model)
// or a model with experts.
func TestTitanTracedOnly(t *testing.T) {
	for _, c := range []struct {
		workload, strategy string
		want               bool
	}{
		{"llama3-8b:seq=8192,batch=16", "dp=8,mbs=2,fsdp=on,recompute=selective,stack=torchtitan-0.2", true},
		{"llama3-8b:seq=8192,batch=16", "dp=8,mbs=2,fsdp=on,recompute=selective", false},
		{"llama3-8b:seq=8192,batch=16", "tp=8,mbs=2,sp=on,stack=torchtitan-0.2", false},
		{"gpt:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=16", "dp=8,mbs=2,fsdp=on,stack=torchtitan-0.2", false},
		{"qwen3-30b-a3b:seq=4096,batch=256", "dp=8,mbs=1,fsdp=on,stack=torchtitan-0.2", false},
	} {
		m, err := transformer.Parse(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := plan.ParsePod("grand-teton:1,attention=flash")
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.strategy, err)
		}
		co := counterAt(m, pl, &p, pl.TP, 1)
		if got := titanTraceable(&co); got != c.want {
			t.Errorf("%s: traced %v, want %v", c.strategy, got, c.want)
		}
	}
}

// TestTitanTracedMicro: the micro-batches the trace writes reach the
// whole step's peak on every stage, allocated and reserved: 1F1B and
// interleaved over 4 stages with 32 micro-batches (12 written; with 8
// the interleaved first stage peaks 2,097,152 bytes lower at 16), and 5
// without a pipeline (2 written).
func TestTitanTracedMicro(t *testing.T) {
	m := mustSpec(t, "llama:layers=8,hidden=256,heads=4,kv_heads=2,ffn=512,seq=1024,vocab=1000,batch=256")
	p, err := plan.ParsePod("grand-teton:1,attention=flash")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		strategy string
		micro    int
	}{
		{"pp=4,dp=2,mbs=4,fsdp=on,recompute=full,stack=torchtitan-0.2,compile=on", 12},
		{"pp=4,vp=2,dp=2,mbs=4,fsdp=on,recompute=full,stack=torchtitan-0.2,compile=on", 12},
		{"dp=8,mbs=1,fsdp=on,recompute=selective,stack=torchtitan-0.2", 2},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		mm := m
		if s.Pipeline == 0 {
			mm = mustSpec(t, "llama:layers=8,hidden=256,heads=4,kv_heads=2,ffn=512,seq=1024,vocab=1000,batch=40")
		}
		pl, err := plan.Resolve(mm, s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.strategy, err)
		}
		if got := tracedMicro(&pl); got != c.micro || pl.NumMicro <= got {
			t.Fatalf("%s: %d of %d micro-batches written, want %d", c.strategy, got, pl.NumMicro, c.micro)
		}
		cs, stages := partsOf(mm, pl, &p)
		for st := range stages {
			co := &cs[counterOf(cs, pl.TPs[st])]
			short, whole := co.titanStageTrace(st, &stages[st]), co.titanStageTraceOf(st, &stages[st], pl.NumMicro, false)
			a, _ := short.peak()
			b, _ := whole.peak()
			cfg := alloc.Config{Expandable: true}
			ra, _ := alloc.Replay(cfg, short.ev)
			rb, _ := alloc.Replay(cfg, whole.ev)
			if a != b || ra.PeakReserved != rb.PeakReserved {
				t.Errorf("%s stage %d: peak %d reserved %d from %d micro-batches, %d and %d from all %d", c.strategy, st,
					a, ra.PeakReserved, c.micro, b, rb.PeakReserved, pl.NumMicro)
			}
		}
	}
}
