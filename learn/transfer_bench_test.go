package learn

import (
	"context"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/learn/defaultmodel"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/roofline"
	"github.com/placer/placer/workloads"
)

// benchProblem is workload on gpus V100s with TensorFlow's defaults as
// the base, and those defaults (the expert placement, FIFO, default
// fusion) as the reference.
func benchProblem(b *testing.B, workload string, gpus int) (*optimize.Problem, decision.Decision) {
	b.Helper()
	g, err := workloads.Build(workload)
	if err != nil {
		b.Fatal(err)
	}
	h, _ := roofline.Preset("v100")
	c, err := roofline.NewCluster(h, gpus, "")
	if err != nil {
		b.Fatal(err)
	}
	p, err := optimize.NewProblem(g, c, roofline.Options{})
	if err != nil {
		b.Fatal(err)
	}
	p.Base = decision.Decision{Fusion: decision.TopologicalFusion(g)}
	if p.Base.Device, err = inputs.Placement("expert", g, gpus); err != nil {
		b.Fatal(err)
	}
	ref := p.Complete(decision.Decision{})
	ref.Fusion = p.Base.Fusion
	return p, ref
}

// BenchmarkZeroShotGNMT8 is `placer infer --workload gnmt8 --gpus 8`'s
// placement with the default model, excluding the model load and the
// baselines: contraction to units, features, one inference pass
// anchored on TensorFlow's defaults, and 17 decisions evaluated (issue
// target: <= 3 s wall).
func BenchmarkZeroShotGNMT8(b *testing.B) {
	p, ref := benchProblem(b, "gnmt8", 8)
	pol, err := defaultmodel.Load()
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		z := &ZeroShot{Policy: pol, Reference: ref}
		if _, err := z.Optimize(context.Background(), p, &optimize.Settings{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFinetune50TRXL4 is `placer finetune --workload trxl4 --gpus 4
// --steps 50` with the default model, excluding the model load and the
// baselines (issue target: 50 steps on graphs up to 10,000 ops in <= 60
// s; trxl4 has 6,500). Run it with -benchtime 1x.
func BenchmarkFinetune50TRXL4(b *testing.B) { benchFinetune50(b, "trxl4", 4) }

// BenchmarkFinetune50WaveNet10 is the same on wavenet10 (9,119 ops, the
// built-in workload closest to the target's 10,000) on 2 GPUs.
func BenchmarkFinetune50WaveNet10(b *testing.B) { benchFinetune50(b, "wavenet10", 2) }

func benchFinetune50(b *testing.B, workload string, gpus int) {
	p, ref := benchProblem(b, workload, gpus)
	for b.Loop() {
		b.StopTimer()
		pol, err := defaultmodel.Load()
		if err != nil {
			b.Skip(err)
		}
		s := &Search{Policy: pol, Reference: ref, Warmup: -1}
		b.StartTimer()
		res, err := s.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Steps: 50}, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.Eval.StepTime*1e3, "step-ms")
		b.ReportMetric(res.Eval.StepTime/res.Learning.RefStep, "step/ref")
	}
}
