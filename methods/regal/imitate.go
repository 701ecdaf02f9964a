package regal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// Imitation is a supervised warm start for REGAL's network: instead of
// learning which Beta buckets pay from one scalar reward per few hundred
// categorical choices (REINFORCE, Train), the network learns to predict,
// per node, the genes of good decisions. For every training graph it runs
// uniform BRKGA Teachers times at TeacherEvaluations evaluations (ten
// times the test budget by default, so that the teachers' decisions are
// better than what BRKGA-5K finds), and turns each teacher's best decision
// into per-node bucket targets:
//
//   - device affinity of device j: the highest mean bucket if the op runs
//     on device j, the lowest otherwise; devices are renamed first in the
//     order of the mean topological index of their ops, so that "device
//     0" means "the device of the early ops" on every graph (two GPUs are
//     interchangeable, and the network reads topological position);
//   - scheduling priority: the mean bucket nearest to the op's place in
//     the teacher's order (first = 1, last = 0);
//   - variance: bucket Spread everywhere (0 = the narrowest).
//
// The targets of the teachers are averaged (soft targets), and the network
// is fitted to them by cross-entropy with Adam for Epochs passes over the
// graphs. What it learns is what the teachers' decisions have in common
// that the node features predict, which is what carries to another graph.
// The result is an ordinary model: REGAL and ZeroShot use it as they are,
// and Train can continue it with REINFORCE (Train.Model).
type Imitation struct {
	Graphs []TrainGraph
	// Model to fit; nil = a new one from Config and Seed.
	Model  *Model
	Config Config
	Seed   uint64
	// Objective is what the teachers optimize (set on every graph's
	// problem and recorded in the model).
	Objective optimize.Objective
	// Teachers is the number of BRKGA runs per graph (seeds differ);
	// 0 = 2.
	Teachers int
	// TeacherEvaluations is each teacher's budget; 0 = 50,000.
	TeacherEvaluations int
	// Epochs is the number of passes over the graphs; 0 = 60.
	Epochs int
	// LearningRate is Adam's step size; 0 = 3e-3.
	LearningRate float64
	// Targets says which gene groups are imitated and how narrowly.
	Targets TargetOptions
	// Workers is the number of teacher runs in flight; 0 = 2.
	Workers int
	// Teachers' decisions are kept in TeacherFile (JSON, written
	// atomically) when it is set: a later run with the same graphs,
	// objective, seed, teachers and budget reads them back instead of
	// running BRKGA again, so that the fit's knobs can be varied cheaply.
	TeacherFile string
	// OnTeacher, if set, sees each graph's best teacher objective.
	OnTeacher func(graph string, best float64)
	// OnEpoch, if set, sees every epoch.
	OnEpoch func(ImitationPoint)
}

// ImitationPoint is one epoch of the fit.
type ImitationPoint struct {
	Epoch int     `json:"epoch"`
	Loss  float64 `json:"loss"` // mean cross-entropy per categorical, nats
	// Agreement is the share of gene groups whose most likely mean
	// bucket is the targets' most likely one.
	Agreement float64 `json:"agreement"`
	Elapsed   float64 `json:"elapsed_s"`
}

// ImitationResult is what Imitation.Run produced.
type ImitationResult struct {
	Model *Model
	Curve []ImitationPoint
	// Teacher is each graph's best teacher objective, by graph name.
	Teacher map[string]float64
	// Agreement is the share of ops that every teacher of their graph
	// puts on the same device, devices renamed as in the targets (over
	// all graphs; 0 with one teacher). With 2 GPUs and teachers that
	// agree only by chance it is about 1/2: then the placements of good
	// decisions have nothing per node in common to learn.
	Agreement float64
	// TeacherTime is the wall time of the teacher runs, FitTime the
	// fit's.
	TeacherTime, FitTime time.Duration
	Status               optimize.Status
}

func (im *Imitation) defaults() (teachers, evals, epochs, workers int, lr float64) {
	return cmp.Or(im.Teachers, 2), cmp.Or(im.TeacherEvaluations, 50000), cmp.Or(im.Epochs, 60), cmp.Or(im.Workers, 2), cmp.Or(im.LearningRate, 3e-3)
}

// TargetOptions shape the targets.
type TargetOptions struct {
	// Spread is the variance bucket of every imitated target; 0 = the
	// narrowest. Larger spreads keep BRKGA's mutants more varied around
	// the predicted genes.
	Spread int
	// SkipPlacement and SkipPriority leave the device affinities or the
	// scheduling priority out: their targets are the uniform buckets
	// (which the quantization must have), so that the network learns to
	// leave those genes to BRKGA.
	SkipPlacement, SkipPriority bool
}

// Targets are the soft targets of one graph: per node and gene group, a
// distribution over the mean buckets (TM, N x Groups x MeanBuckets) and
// over the variance buckets (TV, N x Groups x VarBuckets).
type Targets struct {
	N      int
	TM, TV []float64
}

// canonicalDevices returns the renaming of d's devices (old -> new) that
// orders them by the mean topological index of their ops; devices with no
// op come last, in their own order.
func canonicalDevices(p *optimize.Problem, d *decision.Decision, devices int) []int {
	g := p.Graph
	sum := make([]float64, devices)
	cnt := make([]int, devices)
	for o, k := range d.Device {
		if k >= 0 && k < devices {
			sum[k] += float64(g.TopoIndex(o))
			cnt[k]++
		}
	}
	order := make([]int, devices)
	for i := range order {
		order[i] = i
	}
	key := func(k int) float64 {
		if cnt[k] == 0 {
			return math.Inf(1)
		}
		return sum[k] / float64(cnt[k])
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(key(a), key(b)) })
	ren := make([]int, devices)
	for newK, oldK := range order {
		ren[oldK] = newK
	}
	return ren
}

// NewTargets turns teacher decisions on p into soft targets for a network
// of configuration cfg reading in (see Imitation). Every decision must
// place every op on one of the problem's devices, which must number
// cfg.Devices.
func NewTargets(cfg Config, p *optimize.Problem, in *Input, teachers []decision.Decision, opt TargetOptions) (*Targets, error) {
	cfg = cfg.withDefaults()
	G, km, kv := cfg.Groups(), cfg.MeanBuckets, cfg.VarBuckets
	devices := p.Devices()
	if devices != cfg.Devices {
		return nil, fmt.Errorf("regal: imitation: the problem has %d devices, the network predicts %d", devices, cfg.Devices)
	}
	spread := opt.Spread
	if spread < 0 || spread >= kv {
		return nil, fmt.Errorf("regal: imitation: spread %d, want 0 to %d (the variance buckets)", spread, kv-1)
	}
	um, uv, hasUni := uniformBuckets(cfg)
	if (opt.SkipPlacement || opt.SkipPriority) && !hasUni {
		return nil, fmt.Errorf("regal: imitation: %d mean and %d variance buckets have no uniform distribution to leave genes at", km, kv)
	}
	if len(teachers) == 0 {
		return nil, errors.New("regal: imitation: no teacher decisions")
	}
	n := p.Graph.NumOps()
	t := &Targets{N: in.N, TM: make([]float64, in.N*G*km), TV: make([]float64, in.N*G*kv)}
	// Each op adds weight w to its node's targets; a node's targets sum to
	// one per gene group.
	opsOf := make([]int, in.N)
	for o := range n {
		opsOf[in.UnitOf[o]]++
	}
	for ti := range teachers {
		d := &teachers[ti]
		if len(d.Device) != n || len(d.Priority) != n {
			return nil, fmt.Errorf("regal: imitation: teacher %d decides %d devices and %d priorities for %d ops", ti, len(d.Device), len(d.Priority), n)
		}
		ren := canonicalDevices(p, d, devices)
		// The teacher's order: ops by descending priority, ties by
		// topological index (what the schedulers do).
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			if c := cmp.Compare(d.Priority[b], d.Priority[a]); c != 0 {
				return c
			}
			return cmp.Compare(p.Graph.TopoIndex(a), p.Graph.TopoIndex(b))
		})
		for pos, o := range order {
			k := d.Device[o]
			if k < 0 || k >= devices {
				return nil, fmt.Errorf("regal: imitation: teacher %d puts op %q on device %d of %d", ti, p.Graph.Op(o).Name, k, devices)
			}
			v := int(in.UnitOf[o])
			w := 1 / float64(opsOf[v]*len(teachers))
			for j := range devices {
				m, s := 0, spread
				if ren[k] == j {
					m = km - 1
				}
				if opt.SkipPlacement {
					m, s = um, uv
				}
				t.TM[(v*G+j)*km+m] += w
				t.TV[(v*G+j)*kv+s] += w
			}
			key := 1.0
			if n > 1 {
				key = 1 - float64(pos)/float64(n-1)
			}
			m, s := min(max(int(math.Round(key*float64(km+1)))-1, 0), km-1), spread
			if opt.SkipPriority {
				m, s = um, uv
			}
			t.TM[(v*G+G-1)*km+m] += w
			t.TV[(v*G+G-1)*kv+s] += w
		}
	}
	return t, nil
}

// ImitationGrad writes into dlogits the gradient of the cross-entropy of
// the logits' categoricals against the targets,
//
//	L = -sum over categoricals c of sum_i t_ci log p_ci / (N * Groups),
//
// (dL/dz_ci = (p_ci - t_ci) / (N * Groups)) and returns L and the number
// of gene groups whose most likely mean bucket is the targets' most
// likely one.
func ImitationGrad[T nn.Float](cfg Config, logits []T, t *Targets, dlogits []T) (loss float64, agree int) {
	cfg = cfg.withDefaults()
	G, C, km, kv := cfg.Groups(), cfg.Choices(), cfg.MeanBuckets, cfg.VarBuckets
	norm := 1 / float64(t.N*G)
	p := make([]float64, max(km, kv))
	one := func(z, dz []T, tg []float64) {
		q := p[:len(z)]
		lse := softmax(z, q)
		for i := range z {
			if tg[i] > 0 {
				loss -= tg[i] * (float64(z[i]) - lse) * norm
			}
			dz[i] = T((q[i] - tg[i]) * norm)
		}
	}
	for v := range t.N {
		for g := range G {
			o := (v*G + g) * C
			tm := t.TM[(v*G+g)*km : (v*G+g+1)*km]
			one(logits[o:o+km], dlogits[o:o+km], tm)
			one(logits[o+km:o+C], dlogits[o+km:o+C], t.TV[(v*G+g)*kv:(v*G+g+1)*kv])
			if argmax(logits[o:o+km]) == argmax(tm) {
				agree++
			}
		}
	}
	return loss, agree
}

func argmax[T cmp.Ordered](z []T) int {
	best := 0
	for i := range z {
		if z[i] > z[best] {
			best = i
		}
	}
	return best
}

// Run runs the teachers and fits the network. A cancelled ctx is not an
// error: the run stops and returns the model so far (Status Cancelled;
// cancelled during the teachers, the model is the unfitted one).
func (im *Imitation) Run(ctx context.Context) (*ImitationResult, error) {
	teachers, evals, epochs, workers, lr := im.defaults()
	if len(im.Graphs) == 0 {
		return nil, errors.New("regal: imitation: no graphs")
	}
	if teachers < 1 || evals < 1 || epochs < 1 || workers < 1 || !(lr > 0) {
		return nil, errors.New("regal: imitation: teachers, teacher evaluations, epochs, workers and learning rate must be positive")
	}
	m := im.Model
	if m == nil {
		var err error
		if m, err = NewModel(im.Config, im.Seed); err != nil {
			return nil, err
		}
	}
	m.Objective = im.Objective
	cfg := m.Net.Cfg
	r := &ImitationResult{Model: m, Teacher: map[string]float64{}, Status: optimize.BudgetReached}
	for _, g := range im.Graphs {
		g.Problem.Objective = im.Objective
	}
	// The teachers: Teachers runs of uniform BRKGA per graph, in parallel.
	start := time.Now()
	inputs := make([]*Input, len(im.Graphs))
	decs := make([][]decision.Decision, len(im.Graphs))
	costs := make([][]float64, len(im.Graphs))
	for gi := range im.Graphs {
		decs[gi] = make([]decision.Decision, teachers)
		costs[gi] = make([]float64, teachers)
	}
	key := teacherKey{Objective: im.Objective.String(), Seed: im.Seed, Teachers: teachers, Evaluations: evals}
	for _, g := range im.Graphs {
		key.Graphs = append(key.Graphs, g.Name)
	}
	cached := im.readTeachers(key, decs, costs)
	err := parallel(ctx, len(im.Graphs)*teachers, workers, func(i int) error {
		gi, k := i/teachers, i%teachers
		g := im.Graphs[gi]
		if k == 0 {
			in, err := NewInput(g.Problem, cfg, mix(im.Seed, uint64(gi), 1))
			if err != nil {
				return fmt.Errorf("regal: imitation: %s: %w", g.Name, err)
			}
			inputs[gi] = in
		}
		if cached {
			return nil
		}
		res, err := (&brkga.BRKGA{}).Optimize(ctx, g.Problem, &optimize.Settings{Budget: optimize.Budget{Evaluations: evals}, Seed: mix(im.Seed, uint64(gi), uint64(k), 5)})
		if err != nil {
			return fmt.Errorf("regal: imitation: %s: teacher %d: %w", g.Name, k, err)
		}
		decs[gi][k] = res.Decision.Clone()
		costs[gi][k] = im.Objective.Cost(&res.Eval)
		return nil
	})
	r.TeacherTime = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			r.Status = optimize.Cancelled
			return r, nil
		}
		return nil, err
	}
	if !cached && im.TeacherFile != "" {
		if err := writeTeachers(im.TeacherFile, key, decs, costs); err != nil {
			return nil, err
		}
	}
	r.Agreement = teacherAgreement(im.Graphs, decs)
	targets := make([]*Targets, len(im.Graphs))
	xs := make([][]float32, len(im.Graphs)) // the features, converted once
	groups := 0
	for gi, g := range im.Graphs {
		t, err := NewTargets(cfg, g.Problem, inputs[gi], decs[gi], im.Targets)
		if err != nil {
			return nil, fmt.Errorf("regal: imitation: %s: %w", g.Name, err)
		}
		targets[gi] = t
		xs[gi] = nn.Convert[float32](inputs[gi].X)
		groups += t.N * cfg.Groups()
		r.Teacher[g.Name] = slices.Min(costs[gi])
		if im.OnTeacher != nil {
			im.OnTeacher(g.Name, r.Teacher[g.Name])
		}
	}

	// The fit: one Adam step per graph, the graphs in a new order every
	// epoch (drawn from Seed and the epoch).
	fit := time.Now()
	params := m.Net.Params()
	opt := &nn.Adam{}
	order := make([]int, len(im.Graphs))
	for ep := range epochs {
		if ctx.Err() != nil {
			r.Status = optimize.Cancelled
			break
		}
		for i := range order {
			order[i] = i
		}
		rng := rand.New(rand.NewPCG(mix(im.Seed, uint64(ep), 6), 7))
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		pt := ImitationPoint{Epoch: ep + 1}
		agree := 0
		for _, gi := range order {
			in, t := inputs[gi], targets[gi]
			ar := &nn.Arena[float32]{}
			logits, c := m.Net.Forward(ar, xs[gi], in.N, in.Nbrs)
			dl := make([]float32, len(logits))
			loss, a := ImitationGrad(cfg, logits, t, dl)
			pt.Loss += loss / float64(2*len(order))
			agree += a
			params.ZeroGrad()
			m.Net.Backward(ar, c, dl)
			nn.ClipGradNorm(params, 10)
			opt.Step(params, lr)
		}
		pt.Agreement = float64(agree) / float64(groups)
		r.FitTime = time.Since(fit)
		pt.Elapsed = (r.TeacherTime + r.FitTime).Seconds()
		r.Curve = append(r.Curve, pt)
		if im.OnEpoch != nil {
			im.OnEpoch(pt)
		}
	}
	r.FitTime = time.Since(fit)
	return r, nil
}

// teacherAgreement is ImitationResult.Agreement.
func teacherAgreement(gs []TrainGraph, decs [][]decision.Decision) float64 {
	same, total := 0, 0
	for gi, g := range gs {
		if len(decs[gi]) < 2 {
			return 0
		}
		ren := make([][]int, len(decs[gi]))
		for k := range decs[gi] {
			ren[k] = canonicalDevices(g.Problem, &decs[gi][k], g.Problem.Devices())
		}
		for o := range g.Problem.Graph.NumOps() {
			ok := true
			for k := 1; k < len(decs[gi]); k++ {
				ok = ok && ren[k][decs[gi][k].Device[o]] == ren[0][decs[gi][0].Device[o]]
			}
			if ok {
				same++
			}
			total++
		}
	}
	return float64(same) / float64(max(total, 1))
}

// teacherKey is what teachers' decisions depend on.
type teacherKey struct {
	Objective   string   `json:"objective"`
	Seed        uint64   `json:"seed"`
	Teachers    int      `json:"teachers"`
	Evaluations int      `json:"evaluations"`
	Graphs      []string `json:"graphs"`
}

// teacherFile is Imitation.TeacherFile's content.
type teacherFile struct {
	Format string `json:"format"`
	teacherKey
	// Per graph and teacher: the devices, the priorities and the
	// objective's cost.
	Devices    [][][]int   `json:"devices"`
	Priorities [][][]int   `json:"priorities"`
	Costs      [][]float64 `json:"costs"`
}

const teacherFormat = "placer-regal-teachers"

// readTeachers fills decs and costs from im.TeacherFile when it holds
// the teachers of key; a missing, unreadable or different file is not an
// error (the teachers run again and replace it).
func (im *Imitation) readTeachers(key teacherKey, decs [][]decision.Decision, costs [][]float64) bool {
	if im.TeacherFile == "" {
		return false
	}
	data, err := bounded.ReadFile(im.TeacherFile, bounded.Model, "a teacher file")
	if err != nil {
		return false
	}
	var f teacherFile
	if json.Unmarshal(data, &f) != nil || f.Format != teacherFormat || f.Objective != key.Objective || f.Seed != key.Seed ||
		f.Teachers != key.Teachers || f.Evaluations != key.Evaluations || !slices.Equal(f.Graphs, key.Graphs) ||
		len(f.Devices) != len(decs) || len(f.Priorities) != len(decs) || len(f.Costs) != len(decs) {
		return false
	}
	for gi := range decs {
		if len(f.Devices[gi]) != key.Teachers || len(f.Priorities[gi]) != key.Teachers || len(f.Costs[gi]) != key.Teachers {
			return false
		}
	}
	for gi := range decs {
		for k := range key.Teachers {
			decs[gi][k] = decision.Decision{Device: f.Devices[gi][k], Priority: f.Priorities[gi][k]}
			costs[gi][k] = f.Costs[gi][k]
		}
	}
	return true
}

func writeTeachers(path string, key teacherKey, decs [][]decision.Decision, costs [][]float64) error {
	f := teacherFile{Format: teacherFormat, teacherKey: key, Costs: costs}
	for gi := range decs {
		var ds, ps [][]int
		for _, d := range decs[gi] {
			ds, ps = append(ds, d.Device), append(ps, d.Priority)
		}
		f.Devices, f.Priorities = append(f.Devices, ds), append(f.Priorities, ps)
	}
	data, err := json.Marshal(&f)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, data)
}
