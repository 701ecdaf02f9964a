package gdp

import (
	"context"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/gdp/defaultmodel"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/nn/ppo"
	"github.com/placer/placer/optimize"
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
	p, err := methodstest.RooflineProblem(g, c, roofline.Options{})
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

// BenchmarkSearchStepGNMT8 is one step of `placer search --workload gnmt8
// --gpus 8` with the default network: forward, sampling, evaluation of
// the rollout and the PPO update, measured as the mean wall time of steps
// 2 and 3 of a 3-step search (no warm-up; the set-up, contraction and
// reference excluded). Issue target: <= 5 s per step on this machine.
func BenchmarkSearchStepGNMT8(b *testing.B) { benchSearchStep(b, ppo.Settings{}) }

// BenchmarkSearchStepGNMT8OneEpoch is the same with one PPO epoch.
func BenchmarkSearchStepGNMT8OneEpoch(b *testing.B) {
	benchSearchStep(b, ppo.Settings{LearningRate: DefaultPPO.LearningRate, Epochs: 1, EntropyCoef: -1, ValueCoef: -1})
}

func benchSearchStep(b *testing.B, set ppo.Settings) {
	p, ref := benchProblem(b, "gnmt8", 8)
	for b.Loop() {
		s := &Search{Reference: ref, Warmup: -1, PPO: set}
		res, err := s.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Steps: 3}, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		c := res.Learning.Curve
		if len(c) != 3 {
			b.Fatalf("%d steps", len(c))
		}
		b.ReportMetric((c[2].Elapsed-c[0].Elapsed)/2, "s/step")
	}
}

// BenchmarkScoredGNMT4 is go-scored's cost beside its ablation's on gnmt4
// (4 GPUs, from the expert placement): 400 evaluations, learning on
// (features, picks, schedule reads, head updates) and off (uniform picks,
// which cost what anchored local search costs). evals/s is the figure.
func BenchmarkScoredGNMT4(b *testing.B) {
	p, ref := benchProblem(b, "gnmt4", 4)
	e, err := p.Evaluator.Evaluate(context.Background(), ref)
	if err != nil {
		b.Fatal(err)
	}
	for _, noLearning := range []bool{false, true} {
		name := "learning"
		if noLearning {
			name = "no-learning"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				s := &Scored{Config: &policy.Config{SageLayers: 2, SageDim: 32, DModel: 32, Heads: 2, HeadDim: 16, Inner: 64, CondDim: 32, HeadHidden: 32}, NoLearning: noLearning,
					Anchor: classical.Anchor{From: &optimize.Result{Decision: ref, Eval: e}}}
				res, err := s.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 400}, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Stats.Evaluations)/res.Stats.Elapsed.Seconds(), "evals/s")
			}
		})
	}
}
