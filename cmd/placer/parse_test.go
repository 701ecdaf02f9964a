package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/export"
	"github.com/placer/placer/jobs/launch"
	"github.com/placer/placer/jobs/regaltrain"
	"github.com/placer/placer/jobs/reports"
	"github.com/placer/placer/jobs/tunebrkga"
	"github.com/placer/placer/methods/regal"
	"github.com/placer/placer/optimize"
)

// isUsage reports whether err is a usage error (exit 2).
func isUsage(err error) bool {
	var u fail.Usage
	return errors.As(err, &u)
}

func TestParseSeeds(t *testing.T) {
	if got, err := opflags.ParseSeeds("0, 1,2"); err != nil || len(got) != 3 || got[2] != 2 {
		t.Errorf("0, 1,2: %v %v", got, err)
	}
	for list, want := range map[string]string{
		"1":     "want two or more seeds",
		"1,1":   "seed 1 is listed twice",
		"1,x":   "want seeds (non-negative integers)",
		"1,-2":  "want seeds (non-negative integers)",
		"":      "want seeds (non-negative integers)",
		"3,4,3": "seed 3 is listed twice",
	} {
		if _, err := opflags.ParseSeeds(list); err == nil || !isUsage(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want a usage error saying %q", list, err, want)
		}
	}
}

func TestComparisonLists(t *testing.T) {
	gs, ms, bs, err := opflags.ComparisonLists("trxl2,gnmt4", "go,sa", "30s, 1m", "1m")
	if err != nil || len(gs) != 2 || len(ms) != 2 || len(bs) != 2 || bs[1] != time.Minute {
		t.Fatalf("%v %v %v %v", gs, ms, bs, err)
	}
	if gs, ms, _, err := opflags.ComparisonLists("", "", "1m", "1m"); err != nil || gs != nil || ms != nil {
		t.Errorf("empty lists: %v %v %v, want nil (the defaults)", gs, ms, err)
	}
	if _, _, _, err := opflags.ComparisonLists("", "nosuch", "1m", "1m"); err == nil || !isUsage(err) || !strings.HasPrefix(err.Error(), "--methods: ") {
		t.Errorf("unknown method: %v", err)
	}
	if _, _, _, err := opflags.ComparisonLists("", "", "0s", "5m,15m"); err == nil || !isUsage(err) || !strings.Contains(err.Error(), "e.g. 5m,15m") {
		t.Errorf("zero budget: %v", err)
	}
}

// TestParseFlagsUsage: the commands' checks give the CLI's usage errors,
// the first mistake first.
func TestParseFlagsUsage(t *testing.T) {
	graph := inputs.GraphSpec{Workload: "trxl2"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"eval no graph", checkEval(&jobs.EvalOptions{}), "give --graph FILE or --workload NAME"},
		{"export no --to", checkExport(&export.Options{OpGraph: export.GraphOptions{Graph: graph}}), "give --to (one of tf-device-map, costgraph, msr-fiddle, module-map, torch-plan, torchtitan, deepspeed, decision, megatron, megatron-bridge)"},
		{"baselines budget", opflags.ParseBaselines(&jobs.BaselinesOptions{Graph: graph, Budget: -1, Time: -1}, opflags.BaselinesFlags{}), "--budget -1: must be positive (0 = each method's default)"},
		{"baselines tasks", opflags.ParseBaselines(&jobs.BaselinesOptions{Graph: graph, Tasks: ","}, opflags.BaselinesFlags{}), `--tasks ",": want a comma-separated list of placement, scheduling, fusion`},
		{"search methods", parseSearchFlags(inputs.OpGraph, &opflags.Search{GraphSearchOptions: jobs.GraphSearchOptions{Graph: graph}, Flags: opflags.SearchFlags{Methods: "nosuch"}}, ""), "--methods: "},
		{"search dispatch", parseSearchFlags(inputs.OpGraph, &opflags.Search{GraphSearchOptions: jobs.GraphSearchOptions{Graph: graph, Dispatch: -time.Microsecond}, Flags: opflags.SearchFlags{Train: opflags.Train{PPO: opflags.DefaultPPO()}}}, ""), "--dispatch -1µs: must be 0 or more"},
		{"search host measure", parseSearchFlags(inputs.OpGraph, &opflags.Search{GraphSearchOptions: jobs.GraphSearchOptions{Graph: graph, HostOn: true}, Flags: opflags.SearchFlags{Measure: true, Train: opflags.Train{PPO: opflags.DefaultPPO()}}}, ""), "--host and --dispatch model the host in the roofline model; --measure runs the real one: give one"},
		{"search dispatch no graph", parseSearchFlags(inputs.OpGraph, &opflags.Search{GraphSearchOptions: jobs.GraphSearchOptions{Dispatch: time.Microsecond}, Flags: opflags.SearchFlags{}}, ""), "give --graph FILE or --workload NAME"},
		{"baselines dispatch", opflags.ParseBaselines(&jobs.BaselinesOptions{Graph: graph, Dispatch: -time.Millisecond}, opflags.BaselinesFlags{}), "--dispatch -1ms: must be 0 or more"},
		{"baselines dispatch measure", opflags.ParseBaselines(&jobs.BaselinesOptions{Graph: graph, Dispatch: time.Millisecond}, opflags.BaselinesFlags{Measure: true}), "--host and --dispatch model the host in the roofline model; --measure runs the real one: give one"},
		{"eval dispatch", checkEval(&jobs.EvalOptions{OpGraph: jobs.GraphEvalOptions{Graph: graph, Dispatch: -time.Second}}), "--dispatch -1s: must be 0 or more"},
		{"eval tf32", checkEval(&jobs.EvalOptions{OpGraph: jobs.GraphEvalOptions{Graph: graph, TF32: "maybe"}}), `--tf32 "maybe": want graph, on, off, matmul or conv`},
		{"parallel graphs", parseParallelFlags(&reports.ParallelOptions{}, parallelFlags{Graphs: "nosuch"}), `--graphs: unknown graph "nosuch": not a workload`},
		{"parallel no-run", parseParallelFlags(&reports.ParallelOptions{NoRun: true}, parallelFlags{Graphs: "nosuch"}), "--no-run reports the cells kept in --dir: give --dir"},
		{"parallel gpus", parseParallelFlags(&reports.ParallelOptions{}, parallelFlags{Graphs: "wavenet2x18", GPUs: "2,65"}), "--gpus-list: 65 GPUs: want 2 to 64"},
		{"cluster dir", checkCluster(&launch.Options{Report: []string{"report", "regal"}}), "give --dir: the folder every task shares"},
		{"cluster k8s name", checkClusterK8s(&launch.Options{Report: []string{"report", "equal-time"}, Dir: "/cells", Image: "i", Claim: "c", Name: "Big"}), `--name "Big": want lower-case letters`},
		{"search policy", parseSearchFlags(inputs.OpGraph, &opflags.Search{GraphSearchOptions: jobs.GraphSearchOptions{Graph: graph}, Flags: opflags.SearchFlags{Train: opflags.Train{Policy: "huge", PPO: opflags.DefaultPPO()}}}, ""), `--policy "huge"`},
		{"pretrain gpus", opflags.ParsePretrain(&jobs.PretrainOptions{Workloads: []string{"trxl2"}, Out: "m"}, opflags.PretrainFlags{}), "give --gpus N (1 to 8)"},
		{"pretrain extra", opflags.ParsePretrain(&jobs.PretrainOptions{Out: "m", Cluster: inputs.ClusterSpec{GPUs: 2}, ExtraGPUs: []int{2}}, opflags.PretrainFlags{Workloads: "trxl2"}),
			"--extra-gpus: 2; want counts of 1 to 8 other than --gpus"},
		{"infer refine", opflags.CheckInfer(&jobs.TransferOptions{Graph: graph, Model: "m", Refine: -1}), "--refine -1ns: want a duration of at least 0"},
		{"finetune steps", opflags.ParseFinetune(&jobs.TransferOptions{Graph: graph, Model: "m"}, opflags.FinetuneFlags{StepsGiven: true}), "--steps 0 needs --time"},
		{"generalization family", opflags.ParseGeneralization(&reports.GeneralizationOptions{}, opflags.GeneralizationFlags{Families: "trxl,nosuch"}), `--families: unknown family "nosuch"`},
		{"equal-time seeds", opflags.ParseEqualTime(&reports.EqualTimeOptions{}, opflags.EqualTimeFlags{Budgets: "1m", Seeds: "1,2", SeedGiven: true}), "--seed and --seeds: give one"},
		{"learned no-run", opflags.ParseLearned(&reports.LearnedOptions{NoRun: true}, opflags.LearnedFlags{Budgets: "1m", PlotFormat: "svg"}), "--no-run reports the cells kept in --dir: give --dir"},
		{"regal budgets", opflags.ParseRegal(&reports.RegalOptions{Evaluations: 1}, opflags.RegalFlags{Objectives: "step-time", Budgets: "5000,x"}), `--budgets "5000,x": want positive evaluation counts, e.g. 5000,10000,50000`},
		{"regal objectives", opflags.ParseRegal(&reports.RegalOptions{}, opflags.RegalFlags{Objectives: "speed"}), "--objectives: "},
		{"tune-brkga graphs", opflags.ParseBRKGATune(&tunebrkga.Options{Evaluations: 1}, opflags.BRKGATuneFlags{Objectives: "step-time"}), "--train-graphs 0, --evaluations 1: want at least 1"},
		{"regal train out", parseRegalTrainFlags(&regaltrain.Job{GraphsDir: "g"}, regalTrainFlags{Set: regalSetFlags{Tasks: "placement"}}), "give --out MODEL (the model file to write)"},
		{"regal imitate genes", parseRegalImitateFlags(&regaltrain.ImitateJob{Out: "m", Imitation: regal.Imitation{Teachers: 1, TeacherEvaluations: 1, Epochs: 1, LearningRate: 1}},
			regalImitateFlags{Set: regalSetFlags{Workloads: "trxl2", Tasks: "placement"}, Genes: "placement,fusion"}), `--genes: "fusion" is not a gene group (placement, priority)`},
		{"synth count", checkSynth(jobs.SynthOptions{Dir: "d", Nodes: jobs.DefaultSynthNodes}), "--count 0: must be at least 1"},
		{"workload", checkWorkloadName("nosuch"), `unknown workload "nosuch" (placer workloads list)`},
		{"hw bench gpu", checkGPUOrdinal(-1), "--gpu -1: must be a GPU ordinal (0, 1, ...)"},
	} {
		if tc.err == nil || !isUsage(tc.err) || !strings.HasPrefix(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want a usage error starting %q", tc.name, tc.err, tc.want)
		}
	}
}

// TestParseFlagsFill: the raw flag values land in the options.
func TestParseFlagsFill(t *testing.T) {
	p := jobs.PretrainOptions{Out: "m", Cluster: inputs.ClusterSpec{GPUs: 2}, Scored: true, Samples: 16}
	if err := opflags.ParsePretrain(&p, opflags.PretrainFlags{Workloads: "trxl2,gnmt2", VisitEvals: 7, Train: opflags.Train{Policy: "small", PPO: opflags.DefaultPPO()}}); err != nil {
		t.Fatal(err)
	}
	if len(p.Workloads) != 2 || p.PerVisit.Evaluations != 7 || p.Policy == nil || *p.Policy != opflags.SmallPolicy || p.Samples != 16 || p.PPO.LearningRate != 0 {
		t.Errorf("pretrain --scored: %+v", p)
	}
	tr := jobs.TransferOptions{Graph: inputs.GraphSpec{Workload: "trxl2"}, Model: "m", Steps: 50, Time: time.Minute}
	if err := opflags.ParseFinetune(&tr, opflags.FinetuneFlags{PPO: opflags.DefaultPPO()}); err != nil || tr.Steps != 0 {
		t.Errorf("finetune --time alone: steps %d, %v; want no step limit", tr.Steps, err)
	}
	j := regaltrain.Job{GraphsDir: "g"}
	if err := parseRegalTrainFlags(&j, regalTrainFlags{Set: regalSetFlags{Workloads: "trxl2", Tasks: "placement,scheduling", Objective: "peak-memory"}, Out: "r.model"}); err != nil {
		t.Fatal(err)
	}
	if j.Train.Objective != optimize.PeakMemory || j.Train.Checkpoint != "r.model" || j.Train.Entropy != -1 || j.Train.CheckpointEvery <= 1e9 || len(j.Workloads) != 1 {
		t.Errorf("regal train: %+v", j)
	}
}

func TestBuildVersion(t *testing.T) {
	if v := buildVersion("v9.8.7"); v.Version != "v9.8.7" || !strings.HasPrefix(v.String(), "placer v9.8.7 ") {
		t.Errorf("set version: %+v %q", v, v.String())
	}
	if v := buildVersion(""); v.Version == "" {
		t.Errorf("no version: %+v, want the build info's or dev", v)
	}
}
