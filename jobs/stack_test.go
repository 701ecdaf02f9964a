package jobs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/report"
)

// TestSearchForCostsOnTheFrameworksStack: search --for FRAMEWORK costs
// every plan on the stack that framework's file runs and says which, in
// its result and in the plan file (-o) export reads. Llama 3 8B at 8,192
// tokens, 256 sequences on 4 DGX H100 nodes, keeping FSDP: the plan is
// dp=32 at one sequence a micro-batch under each stack; placer's default
// stack and torchtitan's compiled one cost its layers alike (fused
// kernels: 6.340 s; torchtitan's 6.764 s with FSDP2's copies of every
// parameter and gradient, which Megatron's FSDP does not run, its
// separate wq, wk, wv, w1 and w3 GEMMs, its gradient clipping (and no
// gradient buffer zeroed), and its
// output layer and loss eager: torch.compile wraps its blocks alone),
// torchtitan's eager one as its ATen ops (7.828 s, the figure eval
// gives stack=torchtitan-0.2). --for megatron is the
// search as it was (no stack key written); a stack or compile setting the
// framework's file does not run is refused before searching, exit 2.
func TestSearchForCostsOnTheFrameworksStack(t *testing.T) {
	const best = "tp=1,pp=1,dp=32,mbs=1,fsdp=on"
	for _, c := range []struct {
		name, strat, forName string
		strategy             string // the best plan
		stack                plan.StackInfo
		step                 string
		err                  string // a refusal, exit 2
	}{
		{name: "megatron", strat: "fsdp=on", forName: "megatron", strategy: best,
			stack: plan.StackInfo{Name: "default", Framework: "megatron", Compiled: true}, step: "6.340 s"},
		{name: "default", strat: "fsdp=on", forName: "", strategy: best,
			stack: plan.StackInfo{Name: "default", Framework: "megatron", Compiled: true}, step: "6.340 s"},
		{name: "torchtitan", strat: "fsdp=on", forName: "torchtitan", strategy: best + ",stack=torchtitan-0.2,compile=on",
			stack: plan.StackInfo{Name: "torchtitan-0.2", Framework: "torchtitan", Compiled: true, Keys: "stack=torchtitan-0.2,compile=on"}, step: "6.764 s"},
		{name: "torchtitan@0.2", strat: "fsdp=on", forName: "torchtitan@0.2", strategy: best + ",stack=torchtitan-0.2,compile=on",
			stack: plan.StackInfo{Name: "torchtitan-0.2", Framework: "torchtitan", Compiled: true, Keys: "stack=torchtitan-0.2,compile=on"}, step: "6.764 s"},
		{name: "torchtitan eager", strat: "fsdp=on,compile=off", forName: "torchtitan", strategy: best + ",stack=torchtitan-0.2,compile=off",
			stack: plan.StackInfo{Name: "torchtitan-0.2", Framework: "torchtitan", Compiled: false, Keys: "stack=torchtitan-0.2,compile=off"}, step: "7.828 s"},
		// torchtitan's stack as written, eager but where async tensor
		// parallelism compiles the layers (tpoverlap=on): the fastest plan
		// is such a plan.
		{name: "torchtitan's stack named", strat: "fsdp=on,stack=torchtitan-0.2", forName: "torchtitan", strategy: "tp=2,pp=1,dp=16,mbs=2,sp=on,tpoverlap=on,fsdp=on,stack=torchtitan-0.2",
			stack: plan.StackInfo{Name: "torchtitan-0.2", Framework: "torchtitan", Compiled: true, Keys: "stack=torchtitan-0.2"}, step: "7.243 s"},
		{name: "a Megatron stack for torchtitan", strat: "fsdp=on,stack=megatron-bridge-25.11", forName: "torchtitan",
			err: "--for torchtitan: stack=megatron-bridge-25.11: torchtitan's file runs stack=torchtitan-0.2"},
		{name: "torchtitan's stack for megatron", strat: "fsdp=on,stack=torchtitan-0.2", forName: "megatron",
			err: "--for megatron: stack=torchtitan-0.2: Megatron-LM's file runs placer's default stack"},
		{name: "torchtitan's stack for megatron-bridge", strat: "fsdp=on,stack=torchtitan-0.2", forName: "megatron-bridge",
			err: "--for megatron-bridge: stack=torchtitan-0.2: Megatron-Bridge's file runs placer's default stack"},
		{name: "eager for megatron", strat: "fsdp=on,compile=off", forName: "megatron",
			err: "--for megatron: compile=off: Megatron-LM's file runs"},
		{name: "a stack for deepspeed", strat: "fsdp=on,stack=torchtitan-0.2", forName: "deepspeed",
			err: "--for deepspeed: stack=torchtitan-0.2: DeepSpeed's file is costed on placer's default stack"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "plan.json")
			rep, err := ScaleSearch(context.Background(), ScaleOptions{Workload: llama8b.Workload, Cluster: llama8bNodes, Strat: c.strat, For: c.forName, Out: out})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") || fail.Code(err, false) != 2 {
					t.Fatalf("error %v (exit %d), want one line with %q, exit 2", err, fail.Code(err, false), c.err)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("a refused search wrote %s", out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Best.Strategy != c.strategy || rep.Best.Stack != c.stack || report.Seconds(rep.Best.Step) != c.step {
				t.Errorf("best %s on %+v, %s; want %s on %+v, %s", rep.Best.Strategy, rep.Best.Stack, report.Seconds(rep.Best.Step), c.strategy, c.stack, c.step)
			}
			for _, r := range rep.Runners {
				if r.Stack.Name != c.stack.Name || r.Stack.Framework != c.stack.Framework {
					t.Errorf("runner-up %s on %+v, want %+v", r.Strategy, r.Stack, c.stack)
				}
			}
			m, p, err := ScaleOptions{Workload: llama8b.Workload, Cluster: llama8bNodes}.inputs()
			if err != nil {
				t.Fatal(err)
			}
			pf, err := exportjob.ReadPlanFile(out, m, p)
			if err != nil {
				t.Fatal(err)
			}
			wantFor, _, _ := strings.Cut(c.forName, "@") // the framework, not its release
			if wantFor == "" {
				wantFor = "megatron"
			}
			if pf.Strategy != c.strategy || pf.For != wantFor || pf.Stack == nil || *pf.Stack != c.stack || report.Seconds(pf.Step) != c.step {
				t.Errorf("plan file: %+v (stack %+v), want %s for %s on %+v, %s", pf, pf.Stack, c.strategy, wantFor, c.stack, c.step)
			}
		})
	}
}

// TestExportRunsWhatWasCosted: the file export writes runs the stack the
// plan is costed on, and standard error says which and at what step time.
// A plan costed on placer's default stack (search --for megatron) written
// for torchtitan is costed again on torchtitan's compiled stack
// (stack=torchtitan-0.2,compile=on: 6.764 s, its blocks the fused
// kernels, and FSDP2's copies, its loss eager) and written compiled (0.3: compile.enable True; 0.2: [compile]
// enable = true), a line saying so; a torchtitan plan costed eager
// (stack=torchtitan-0.2: 7.828 s) is written eager (compile.enable False);
// a torchtitan plan written for Megatron-LM is costed again on placer's
// default stack, its stack keys gone. torchtitan 0.3's CUDA graphs of the
// step (trainer.py wrap_with_cuda_graph), which placer does not cost, are
// turned off in every file.
func TestExportRunsWhatWasCosted(t *testing.T) {
	dir := t.TempDir()
	searched := map[string]string{}
	for _, f := range []string{"megatron", "torchtitan"} {
		searched[f] = filepath.Join(dir, f+".json")
		if _, err := ScaleSearch(context.Background(), ScaleOptions{Workload: llama8b.Workload, Cluster: llama8bNodes, Strat: "fsdp=on", For: f, Out: searched[f]}); err != nil {
			t.Fatal(err)
		}
	}
	const plan = "tp=1,pp=1,dp=32,mbs=1,fsdp=on"
	for _, c := range []struct {
		name, to, planFile, strategy string
		want                         []string // in the file
		not                          []string // not in the file
		stderr                       []string // the lines on standard error
	}{
		{name: "megatron's plan for torchtitan", to: "torchtitan", planFile: "megatron",
			want: []string{"# plan dp=32,mb=8,mbs=1,fsdp=on,stack=torchtitan-0.2,compile=on on 32 GPUs", "    config.compile.enable = True\n",
				"    config.training.disable_cuda_graphs = True\n", `"--compile.enable",`},
			stderr: []string{
				"export: PLAN's plan (for megatron): 6.340 s a step on placer's default stack; costed again on the stack torchtitan runs",
				"export: wrote OUT (torchtitan 0.3's config module): 6.764 s a step on placer's torchtitan stack, compiled",
				"export: placer's torchtitan stack is torchtitan-0.2, read from torchtitan 0.2's code (none of 0.3's own)"}},
		{name: "megatron's plan for torchtitan 0.2", to: "torchtitan@0.2", planFile: "megatron",
			want: []string{"\n[compile]\nenable = true"},
			stderr: []string{
				"export: PLAN's plan (for megatron): 6.340 s a step on placer's default stack; costed again on the stack torchtitan runs",
				"export: wrote OUT (torchtitan 0.2's TOML): 6.764 s a step on torchtitan-0.2 compiled"}},
		{name: "torchtitan's plan for torchtitan", to: "torchtitan", planFile: "torchtitan",
			want: []string{"    config.compile.enable = True\n"},
			stderr: []string{"export: wrote OUT (torchtitan 0.3's config module): 6.764 s a step on placer's torchtitan stack, compiled",
				"export: placer's torchtitan stack is torchtitan-0.2, read from torchtitan 0.2's code (none of 0.3's own)"}},
		{name: "eager torchtitan", to: "torchtitan", strategy: plan + ",stack=torchtitan-0.2",
			want: []string{"    config.compile.enable = False\n", `"--compile.no-enable",`}, not: []string{"config.compile.enable = True"},
			stderr: []string{"export: wrote OUT (torchtitan 0.3's config module): 7.828 s a step on placer's torchtitan stack, eager",
				"export: placer's torchtitan stack is torchtitan-0.2, read from torchtitan 0.2's code (none of 0.3's own)"}},
		{name: "eager torchtitan 0.2", to: "torchtitan@0.2", strategy: plan + ",stack=torchtitan-0.2",
			not:    []string{"[compile]"},
			stderr: []string{"export: wrote OUT (torchtitan 0.2's TOML): 7.828 s a step on torchtitan-0.2 eager"}},
		{name: "torchtitan's plan for megatron", to: "megatron", planFile: "torchtitan",
			want: []string{" under " + plan + " on 32 GPUs"}, not: []string{"stack=", "compile"},
			stderr: []string{
				"export: PLAN's plan (for torchtitan): 6.764 s a step on torchtitan-0.2 compiled; costed again on the stack megatron runs",
				"export: wrote OUT (Megatron-LM's arguments): 6.340 s a step on placer's default stack"}},
		{name: "megatron's plan for megatron", to: "megatron", planFile: "megatron",
			want:   []string{" under " + plan + " on 32 GPUs"},
			stderr: []string{"export: wrote OUT (Megatron-LM's arguments): 6.340 s a step on placer's default stack"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var warn bytes.Buffer
			o := exportjob.Options{World: inputs.ClusterScale, Scale: exportjob.ScaleOptions{Workload: llama8b.Workload, Pod: inputs.PodSpec{Pod: llama8bNodes}}, To: c.to, Strategy: c.strategy, Out: out, Warn: &warn}
			if c.planFile != "" {
				o.Plan = searched[c.planFile]
			}
			if _, err := exportjob.Run(o); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(string(data), w) {
					t.Errorf("no %q in\n%s", w, data)
				}
			}
			for _, w := range c.not {
				if strings.Contains(string(data), w) {
					t.Errorf("%q in\n%s", w, data)
				}
			}
			want := strings.NewReplacer("PLAN", o.Plan, "OUT", out).Replace(strings.Join(c.stderr, "\n") + "\n")
			if warn.String() != want {
				t.Errorf("standard error\n%s\nwant\n%s", warn.String(), want)
			}
		})
	}
}
