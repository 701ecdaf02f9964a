package benchreport

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/bench"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/published"
)

// A Switch is a mechanism that a bench row's reading turns on by its
// cluster or strategy text (DESIGN.md §14: a mechanism keeps to its
// evidence): On says whether a reading has it on, Off is the reading
// without it.
type Switch struct {
	Name, Source string
	On           func(cluster, strategy string) bool
	Off          func(cluster, strategy string) (string, string)
}

// dropKeys is strategy without its keys named (key=value items).
func dropKeys(strategy string, keys ...string) string {
	var kept []string
	for _, kv := range strings.Split(strategy, ",") {
		k, _, _ := strings.Cut(kv, "=")
		if !contains(keys, strings.TrimSpace(k)) {
			kept = append(kept, kv)
		}
	}
	return strings.Join(kept, ",")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func hasKey(strategy, key string) bool { return dropKeys(strategy, key) != strategy }

// onGracePod says whether cluster is a GB200 or GB300 NVL72 pod at its
// preset's host (no host= override).
func onGracePod(cluster string) bool {
	c := strings.ToLower(cluster)
	return (strings.HasPrefix(c, "gb200-nvl72") || strings.HasPrefix(c, "gb300-nvl72")) && !strings.Contains(c, "host=")
}

// Switches are the mechanisms of sessions 21-23 that a row's reading
// switches (docs/history.md): the Grace host of the NVL72 racks (moe3),
// Transformer Engine's amax all-reduce (gpt3v30), the sync before each
// full-iteration graph replay (bertsteady), LoRA's all-to-all back to the
// sequence shard (loracp), and one hardware queue with the code that
// launches its communication ahead at it (moezoo, onequeue); the
// recipe switches of session 26 (weights): FP8 attention, NeMo's
// recomputed LoRA dropout and the MXFP8 output layer; and nanotron's
// ZeRO-1 exchange and FP32 gradient accumulation (nanotron2). The
// mechanisms with no switch (titancp's ring calls, titantp's layout
// copies, moe3's dispatcher preprocess, sysnet's NICs, which are the
// system's description) are not here.
func Switches() []Switch {
	return []Switch{
		{Name: "Grace host (GraceIssue 2.75x the DGX H100's issue)", Source: "kernels.Host.OnGrace; NVIDIA/TransformerEngine#2053 (one torch Linear forward, 37.08 against 13.48 us)",
			On:  func(c, _ string) bool { return onGracePod(c) },
			Off: func(c, s string) (string, string) { return c + ",host=x86", s }},
		{Name: "amax-sync (TE's FP8 amax all-reduce waited for)", Source: "mechanisms/amaxsync.go; TE release_v0.8 fp8.py, v1.6 reduce_and_update_fp8_tensors",
			On:  func(_, s string) bool { return hasKey(s, "amax-sync") },
			Off: func(c, s string) (string, string) { return c, dropKeys(s, "amax-sync") }},
		{Name: "graph-sync (the host's sync before each full-iteration graph replay)", Source: "mechanisms/graphsync.go; run_pretraining.py's full_iteration loop",
			On:  func(_, s string) bool { return hasKey(s, "graph-sync") },
			Off: func(c, s string) (string, string) { return c, dropKeys(s, "graph-sync") }},
		{Name: "lora-a2a (the LoRA adapter's all-to-all back to the sequence shard)", Source: "mechanisms/lora.go; NeMo parallel_adapters.py, LORA_A2A=1",
			On:  func(_, s string) bool { return hasKey(s, "lora-a2a") },
			Off: func(c, s string) (string, string) { return c, dropKeys(s, "lora-a2a") }},
		{Name: "connections=1 with queue-ahead (one hardware queue)", Source: "CUDA_DEVICE_MAX_CONNECTIONS from the scripts; Megatron-Core / NeMo overlap at one queue",
			On:  func(_, s string) bool { return hasKey(s, "connections") || hasKey(s, "queue-ahead") },
			Off: func(c, s string) (string, string) { return c, dropKeys(s, "connections", "queue-ahead") }},
		{Name: "distopt-allreduce (nanotron's ZeRO-1: gradients all-reduced, not reduce-scattered, then parameters all-gathered, exposed)", Source: "mechanisms/zero1allreduce.go; nanotron c2528430 trainer.py, optim/zero.py",
			On:  func(_, s string) bool { return hasKey(s, "distopt-allreduce") },
			Off: func(c, s string) (string, string) { return c, dropKeys(s, "distopt-allreduce") }},
		{Name: "hybrid-zero (InternEvo's hybrid ZeRO-1: BF16 gradients all-reduced beside the backward, the parameters broadcast from each ZeRO rank, exposed)", Source: "mechanisms/hybridzero.go; InternEvo 34fc28d7 hybrid_zero_optim.py, utils.py",
			On:  func(_, s string) bool { return hasKey(s, "hybrid-zero") },
			Off: func(c, s string) (string, string) { return c, dropKeys(s, "hybrid-zero") }},
		{Name: "fp32-accum-add (nanotron's FP32 gradient accumulation: an add a weight tensor each micro-batch)", Source: "mechanisms/fp32accumadd.go; nanotron c2528430 optim/gradient_accumulator.py",
			On:  func(_, s string) bool { return hasKey(s, "fp32-accum-add") },
			Off: func(c, s string) (string, string) { return c, dropKeys(s, "fp32-accum-add") }},
		onSwitch("fp8-dpa", "Transformer Engine's FP8 attention, Q, K, V and O saved in FP8", "memory/recipe.go; Megatron-Core fp4_utils.py get_fp4_recipe, TE v2.8 dot_product_attention.py init_fp8_metadata"),
		onSwitch("lora-dropout-recompute", "NeMo's recomputed LoRA dropout, no masks kept", "mechanisms/lora.go, memory/recipe.go; NeMo v2.4.0 peft/utils.py dropout_recompute, NEMO_LORA_USE_THUNDER_DROPOUT=1"),
		onSwitch("fp8-output-proj", "the output layer's GEMMs in MXFP8", "planner/outputproj.go, memory/outputproj.go; Megatron-Core core_v0.18.0 fp8_output_proj, TELMHeadColumnParallelLinear"),
	}
}

// onSwitch is the Switch of a recipe key written key=on (what, its
// mechanism in words; source, where it is read): on where a reading
// writes it on, off without it.
func onSwitch(key, what, source string) Switch {
	return Switch{Name: key + "=on (" + what + ")", Source: source,
		On:  func(_, s string) bool { return contains(strings.Split(s, ","), key+"=on") },
		Off: func(c, s string) (string, string) { return c, dropKeys(s, key) }}
}

// SwitchEffect is one switch's effect on one part of the bench: the rows
// with it on (Rows; Changed those whose prediction it moves), the mean
// |error| over those rows with and without it, and the part's mean
// |error| with and without it (MLPerf and published rows together,
// each in its own unit). Sweeps are the development part's sweeps with
// rows it is on in, each with and without (none for the validation part:
// aggregates only).
type SwitchEffect struct {
	Switch, Part          string
	Rows, Changed         int
	With, Without         float64
	PartRows              int
	PartWith, PartWithout float64
	Sweeps                []SweepEffect
	Fast, FastWithout     int
}

// SweepEffect is one development sweep's rows with a switch on: its
// mean |error| with and without it.
type SweepEffect struct {
	Sweep         string
	Rows          int
	With, Without float64
}

// benchPrediction is one predicted bench row: its part, sweep, reading
// and error (predicted over measured, minus 1, in its unit).
type benchPrediction struct {
	part, sweep, workload, cluster, strategy string
	err                                      float64
	// MLPerf rows: the measured step; published rows: their sweep
	// and row index (unit and figure from the sweep).
	measured float64
	sw       *published.Sweep
	row      int
}

// predictions are every predicted bench row of both parts: MLPerf rows as
// benchRow reads them, published sweep rows as report sweeps does.
func predictions(ctx context.Context) ([]benchPrediction, error) {
	rows, err := bench.Rows()
	if err != nil {
		return nil, err
	}
	var out []benchPrediction
	for _, r := range rows {
		br := benchRow(r)
		if br.Refused != "" || br.Predicted == 0 {
			continue
		}
		out = append(out, benchPrediction{part: br.Part, sweep: br.Sweep, workload: br.Workload, cluster: br.Cluster, strategy: br.Strategy,
			err: br.Error, measured: br.Measured})
	}
	sweeps := published.Sweeps()
	sr, err := jobs.SweepsOf(ctx, sweeps, plan.Tuned)
	if err != nil {
		return nil, err
	}
	for i := range sweeps {
		sw := &sweeps[i]
		if sw.Unit == published.Order {
			continue
		}
		for j, r := range sr.Sweeps[i].Rows {
			if r.Refused != "" {
				continue
			}
			row := sw.Rows[j]
			out = append(out, benchPrediction{part: bench.SweepPart(sw.Set), sweep: sw.Name, workload: row.Workload, cluster: row.Cluster,
				strategy: row.Strategy, err: r.Error, sw: sw, row: j})
		}
	}
	return out, nil
}

// repredict is p's error read at cluster c and strategy s instead.
func repredict(ctx context.Context, p benchPrediction, c, s string) (float64, error) {
	if p.sw == nil {
		m, err := transformer.Parse(p.workload)
		if err != nil {
			return 0, err
		}
		pod, err := plan.ParsePod(c)
		if err != nil {
			return 0, err
		}
		st, err := plan.ParseStrategy(s)
		if err != nil {
			return 0, err
		}
		res, err := planner.Evaluate(m, st, pod)
		if err != nil {
			return 0, err
		}
		return res.Step/p.measured - 1, nil
	}
	sw := *p.sw
	row := sw.Rows[p.row]
	row.Cluster, row.Strategy = c, s
	sw.Rows = []published.SweepRow{row}
	sr, err := jobs.SweepsOf(ctx, []published.Sweep{sw}, plan.Tuned)
	if err != nil {
		return 0, err
	}
	if r := sr.Sweeps[0].Rows[0]; r.Refused != "" {
		return 0, fmt.Errorf("%s, %s: %s", sw.Name, row.Label, r.Refused)
	}
	return sr.Sweeps[0].Rows[0].Error, nil
}

// Evidence is each switch's effect on each part of the bench.
func Evidence(ctx context.Context) ([]SwitchEffect, error) {
	preds, err := predictions(ctx)
	if err != nil {
		return nil, err
	}
	var out []SwitchEffect
	for _, sw := range Switches() {
		for _, part := range []string{bench.Development, bench.Validation} {
			e := SwitchEffect{Switch: sw.Name, Part: part}
			bySweep := map[string]*SweepEffect{}
			for _, p := range preds {
				if p.part != part {
					continue
				}
				e.PartRows++
				e.PartWith += math.Abs(p.err)
				without := p.err
				if sw.On(p.cluster, p.strategy) {
					c, s := sw.Off(p.cluster, p.strategy)
					if without, err = repredict(ctx, p, c, s); err != nil {
						return nil, fmt.Errorf("%s without %s: %w", p.sweep, sw.Name, err)
					}
					e.Rows++
					e.With += math.Abs(p.err)
					e.Without += math.Abs(without)
					if math.Abs(without-p.err) > 1e-9 {
						e.Changed++
					}
					if part == bench.Development {
						x := bySweep[p.sweep]
						if x == nil {
							x = &SweepEffect{Sweep: p.sweep}
							bySweep[p.sweep] = x
						}
						x.Rows++
						x.With += math.Abs(p.err)
						x.Without += math.Abs(without)
					}
				}
				e.PartWithout += math.Abs(without)
			}
			if e.Rows > 0 {
				e.With /= float64(e.Rows)
				e.Without /= float64(e.Rows)
			}
			if e.PartRows > 0 {
				e.PartWith /= float64(e.PartRows)
				e.PartWithout /= float64(e.PartRows)
			}
			for _, x := range bySweep {
				x.With /= float64(x.Rows)
				x.Without /= float64(x.Rows)
				e.Sweeps = append(e.Sweeps, *x)
			}
			sort.Slice(e.Sweeps, func(i, j int) bool { return e.Sweeps[i].Sweep < e.Sweeps[j].Sweep })
			out = append(out, e)
		}
	}
	return out, nil
}

// WriteEvidence writes the effects as docs/mechanism-evidence.md holds
// them: per switch, each part's rows with it on and their mean |error|
// with and without it, the part's mean with and without, and the
// development sweeps it touches (the validation part in aggregate only).
func WriteEvidence(w io.Writer, effects []SwitchEffect) {
	const validationShown = 3
	pc := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	fmt.Fprintln(w, "# Each mechanism's evidence: the bench rows it changes (issue 91, item 4)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Generated by `go test ./jobs/benchreport -run TestMechanismEvidence -update`; do not edit.")
	fmt.Fprintln(w, "Each mechanism that a bench row's reading switches (its cluster or strategy text) is turned off on the rows")
	fmt.Fprintln(w, "that have it on, and those rows are predicted again: the rows of each part it is on in, how many it moves, their")
	fmt.Fprintln(w, "mean |error| with and without it, and the part's mean |error| (MLPerf and published rows together, each in its")
	fmt.Fprintln(w, "unit) with and without it. The development sweeps it touches are listed; the validation part only in aggregate,")
	fmt.Fprintln(w, "and its rows' mean only over 3 rows or more.")
	fmt.Fprintln(w, "A mechanism on no development row has no evidence on the bench: its figure is the regime's own measurement or")
	fmt.Fprintln(w, "belongs in the stated error (docs/history.md, the codebases section).")
	for _, sw := range Switches() {
		fmt.Fprintf(w, "\n## %s\n\nSource: %s.\n\n", sw.Name, sw.Source)
		fmt.Fprintln(w, "| part | rows on | moved | mean \\|err\\| with | without | part rows | part with | part without |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
		var dev *SwitchEffect
		for i := range effects {
			e := &effects[i]
			if e.Switch != sw.Name {
				continue
			}
			if e.Part == bench.Development {
				dev = e
			}
			with, without := "-", "-"
			switch {
			case e.Part != bench.Development && e.Rows > 0 && e.Rows < validationShown:
				// A mean over one or two validation rows is those rows' own
				// errors: the validation part is printed in aggregate only.
				with, without = "(<3 rows)", "(<3 rows)"
			case e.Rows > 0:
				with, without = pc(e.With), pc(e.Without)
			}
			fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %d | %s | %s |\n", e.Part, e.Rows, e.Changed, with, without, e.PartRows, pc(e.PartWith), pc(e.PartWithout))
		}
		if dev == nil || len(dev.Sweeps) == 0 {
			fmt.Fprintln(w, "\nNo development row has it on.")
			continue
		}
		fmt.Fprintln(w, "\n| development sweep | rows on | mean \\|err\\| with | without |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, x := range dev.Sweeps {
			fmt.Fprintf(w, "| %s | %d | %s | %s |\n", strings.ReplaceAll(x.Sweep, "|", "\\|"), x.Rows, pc(x.With), pc(x.Without))
		}
	}
}
