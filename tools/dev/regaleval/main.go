package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/regal"
	"github.com/placer/placer/optimize"
)

func main() {
	model := flag.String("model", "methods/regal/defaultmodel/data/default.regal", "REGAL model file")
	glob := flag.String("graphs", "", "graph files (a glob)")
	evals := flag.Int("evals", 5000, "evaluation budget")
	untrained := flag.Bool("untrained", false, "an untrained network (the control)")
	wl := flag.String("workloads", "", "built-in workloads, comma-separated, instead of -graphs")
	objective := flag.String("objective", "step-time", "step-time or peak-memory")
	flag.Parse()
	obj, err := optimize.ParseObjective(*objective)
	if err != nil {
		fmt.Fprintln(os.Stderr, "regaleval:", err)
		os.Exit(2)
	}
	if err := run(*model, *glob, *wl, *evals, *untrained, obj); err != nil {
		fmt.Fprintln(os.Stderr, "regaleval:", err)
		os.Exit(1)
	}
}

func run(model, glob, wl string, evals int, untrained bool, obj optimize.Objective) error {
	var m *regal.Model
	var err error
	if untrained {
		if m, err = regal.NewModel(regal.Config{}, 1); err == nil {
			m.Objective = obj
		}
	} else {
		m, err = regal.Load(model)
	}
	if err != nil {
		return err
	}
	files, err := filepath.Glob(glob)
	if err != nil {
		return err
	}
	if wl != "" {
		files = strings.Split(wl, ",")
	}
	if len(files) == 0 {
		return fmt.Errorf("no graphs: give -graphs GLOB or -workloads LIST")
	}
	ctx := context.Background()
	var sumS, sumG, sumZ float64
	for _, f := range files {
		spec := inputs.GraphSpec{Path: f, Format: "native"}
		if wl != "" {
			spec = inputs.GraphSpec{Workload: f}
		}
		g, meta, err := inputs.Graph(spec)
		if err != nil {
			return err
		}
		c, err := inputs.Cluster(inputs.ClusterSpec{GPUs: 2}, meta)
		if err != nil {
			return err
		}
		rm, err := roofline.NewModel(g, c, roofline.Options{SyncTransfers: true})
		if err != nil {
			return err
		}
		p := optimize.NewProblem(g, rm, roofline.NewEvaluator(rm))
		p.Tasks = optimize.Tasks{Placement: true, Scheduling: true}
		p.Objective = obj
		single, err := (classical.Single{}).Optimize(ctx, p, nil)
		if err != nil {
			return err
		}
		var is, ig, iz float64
		for s := uint64(1); s <= 3; s++ {
			set := &optimize.Settings{Budget: optimize.Budget{Evaluations: evals}, Seed: s}
			var rs [4]*optimize.Result
			for i, o := range []optimize.Optimizer{&brkga.BRKGA{}, &regal.REGAL{Model: m}, &regal.REGAL{Model: m, Greedy: true}, &regal.ZeroShot{Model: m}} {
				if rs[i], err = o.Optimize(ctx, p, set); err != nil {
					return err
				}
			}
			b := obj.Of(&rs[0].Eval)
			gain := func(r *optimize.Result) float64 { return (b - obj.Of(&r.Eval)) / b * 100 / 3 }
			is, ig, iz = is+gain(rs[1]), ig+gain(rs[2]), iz+gain(rs[3])
			if s == 1 {
				fmt.Printf("  seed 1: brkga %s regal %s greedy %s zero-shot %s single %s\n", obj.Format(b), obj.Format(obj.Of(&rs[1].Eval)),
					obj.Format(obj.Of(&rs[2].Eval)), obj.Format(obj.Of(&rs[3].Eval)), obj.Format(obj.Of(&single.Eval)))
			}
		}
		n := float64(len(files))
		sumS, sumG, sumZ = sumS+is/n, sumG+ig/n, sumZ+iz/n
		fmt.Printf("%-20s sampled %+6.2f%% greedy %+6.2f%% zero-shot %+6.2f%%\n", strings.TrimSuffix(filepath.Base(f), ".json"), is, ig, iz)
	}
	fmt.Printf("mean: sampled %+.2f%% greedy %+.2f%% zero-shot %+.2f%%\n", sumS, sumG, sumZ)
	return nil
}
