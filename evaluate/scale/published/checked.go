package published

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/placer/placer/evaluate/scale"
	"github.com/placer/placer/graph/transformer"
)

// Where placer's model was checked: a plan uses
// features (tensor, pipeline, virtual and context parallelism, FSDP,
// experts, FP8 by recipe, recomputation by kind, the overlaps, latent
// attention, a sliding window, ...), and a feature is checked where a
// published row that uses it is predicted within a tolerance:
// 10% for a dense model, 15% for one with experts. A plan whose every
// feature is checked is inside the checked regime; the others are
// marked, with the features no row vouches for.

// Tolerances of a published row counted as checked: predicted within
// this fraction of its figure.
const (
	CheckedDense = 0.10
	CheckedMoE   = 0.15
)

// Features are the features of plan s of model m, sorted: what a
// published row must share with it to vouch for it.
func Features(m transformer.Spec, s scale.Strategy) []string {
	var f []string
	add := func(ok bool, name string) {
		if ok {
			f = append(f, name)
		}
	}
	add(s.MaxT() > 1, "tp")
	add(s.MaxT() > 1 && s.SequenceParallel, "sp")
	add(s.TPOverlap, "tpoverlap")
	add(s.TensorStages != nil, "stage-tp")
	add(s.P() > 1, "pp")
	add(s.V() > 1, "vp")
	add(s.C() > 1, "cp")
	add(s.FSDP, "fsdp")
	add(s.DistOpt, "distopt")
	add(s.Recompute == scale.SelectiveRecompute, "recompute=selective")
	add(s.Recompute == scale.FullRecompute, "recompute=full")
	add(s.FP8 != "", "fp8="+s.FP8)
	add(s.GradBF16, "grads=bf16")
	add(m.MoE(), "experts")
	add(m.MoE() && s.Experts > 1, "ep")
	add(m.MoE() && s.ExpertTensor > 1, "etp")
	add(s.EPOverlap, "epoverlap")
	add(m.MLA(), "mla")
	add(m.Window > 0, "window")
	add(m.MTP > 0, "mtp")
	// The software settings where they differ from placer's default
	// stack (the MoE ones on a model with experts): a dispatcher, a
	// fusion or graphs no checked row ran are unchecked.
	run := s.Software.Settings()
	moe := m.MoE()
	add(moe && run.Dispatcher != scale.DispatcherAllToAll, "dispatcher="+run.Dispatcher)
	add(moe && run.UnfusedPermute, "permute-fusion=off")
	add(moe && run.UnfusedRouter, "router-fusion=off")
	add(moe && run.ExpertLoop, "grouped-gemm=off")
	add(moe && run.Capacity > 0, "routing=capacity")
	add(run.Graphs != scale.GraphsOff, "cuda-graphs="+run.Graphs)
	// An eager stack's layers, dense and MoE, costed from their ATen
	// ops (eagerBlock, eagerMoE), and under autocast over FP32 weights:
	// unchecked until a published eager row holds.
	add(run.Eager, "layers=eager")
	add(run.Eager && run.FP32Weights, "autocast")
	sort.Strings(f)
	return f
}

// CheckedRow is a published row placer predicts within tolerance, with
// the features it vouches for.
type CheckedRow struct {
	Source   string   `json:"source"`   // the table or sweep, and the row
	Features []string `json:"features"` // Features of its plan
}

// checkedTable is CheckRows as it was last written (checked.json): eval
// and search read which features published rows vouch for from it rather
// than evaluate every row (and search some) in every process.
// TestCheckedTable recomputes it and fails where it is stale;
//
//	go test ./evaluate/scale/published -run TestCheckedTable -update
//
// (go generate ./evaluate/scale/published) rewrites it.
//
//go:generate go test -run TestCheckedTable -update .
//go:embed checked.json
var checkedTable []byte

// Checked are the published rows placer predicts within tolerance, as
// CheckRows last computed them: the committed table, decoded once a
// process.
var Checked = sync.OnceValues(func() ([]CheckedRow, error) {
	var rows []CheckedRow
	if err := json.Unmarshal(checkedTable, &rows); err != nil {
		return nil, fmt.Errorf("checked.json: %w", err)
	}
	return rows, nil
})

// rowError is a published row's error: predicted over published, minus 1.
type rowError struct {
	CheckedRow
	Error float64
}

// CheckRows computes the published rows placer predicts within
// tolerance (the Megatron-LM, Megatron-Bridge and Llama 3 tables read at
// their configurations' defaults, MegatronDefault, and every sweep row
// placer can write): what Checked reads, computed. It evaluates every row
// and searches those read at their fastest, about 20 ms.
func CheckRows(ctx context.Context) ([]CheckedRow, error) {
	rows, err := checkRows(ctx)
	out := make([]CheckedRow, len(rows))
	for i, r := range rows {
		out[i] = r.CheckedRow
	}
	return out, err
}

func checkRows(ctx context.Context) ([]rowError, error) {
	var out []rowError
	keep := func(source string, m transformer.Spec, s scale.Strategy, e float64) {
		tol := CheckedDense
		if m.MoE() {
			tol = CheckedMoE
		}
		if math.Abs(e) <= tol {
			out = append(out, rowError{CheckedRow{Source: source, Features: Features(m, s)}, e})
		}
	}
	tables := []struct {
		name string
		rows []Row
	}{{"Megatron-LM H100", MegatronTable()}, {"Megatron-LM A100", MegatronA100()}, {"Llama 3 405B", Llama3()},
		{"Megatron-Bridge 25.11", MegatronBridge()}}
	for _, t := range tables {
		for _, row := range t.rows {
			p, err := scale.PodOf(row.Pod, row.GPUs)
			if err != nil {
				return nil, err
			}
			r, err := MegatronDefault(ctx, row, p)
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", t.name, row.Name, err)
			}
			var e float64
			if row.Tokens > 0 {
				e = float64(row.Model.Batch)*float64(row.Model.Seq)/r.Step/float64(p.GPUs())/row.Tokens - 1
			} else {
				e = r.TFLOPs/row.TFLOPs - 1
			}
			keep(t.name+", "+row.Name, row.Model, r.Plan.Strategy, e)
		}
	}
	for _, sw := range Sweeps() {
		for _, row := range sw.Rows {
			m, err := transformer.Parse(row.Workload)
			if err != nil {
				continue
			}
			p, err := scale.ParsePod(row.Cluster)
			if err != nil {
				continue
			}
			s, err := scale.ParseStrategy(row.Strategy)
			if err != nil {
				continue
			}
			r, err := scale.Evaluate(m, s, p)
			if err != nil {
				continue // a plan placer cannot write vouches for nothing
			}
			pred := r.Step
			if sw.Unit == TokensPerGPU {
				pred = float64(m.Batch) * float64(m.Seq) / r.Step / float64(p.GPUs())
			}
			keep(sw.Name+", "+row.Label, m, s, pred/row.Measured-1)
		}
	}
	return out, nil
}

// Regime says which of plan s's features published rows vouch for: for
// each checked feature the first row that does (rows), and the features
// none does (unchecked, sorted). An empty unchecked is a plan inside the
// checked regime.
func Regime(rows []CheckedRow, m transformer.Spec, s scale.Strategy) (vouch map[string]string, unchecked []string) {
	vouch = map[string]string{}
	for _, f := range Features(m, s) {
		for _, r := range rows {
			if slices.Contains(r.Features, f) {
				vouch[f] = r.Source
				break
			}
		}
		if _, ok := vouch[f]; !ok {
			unchecked = append(unchecked, f)
		}
	}
	return vouch, unchecked
}
