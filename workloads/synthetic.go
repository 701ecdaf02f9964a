package workloads

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/fail"
)

// REGAL's synthetic graph generator (Paliwal et al. 2020, appendix A.1.4).
// Units: one size unit is 1 KiB (1024 bytes), one time unit is 1
// microsecond; a tensor of size 50 is 51,200 bytes, an op whose tensors
// sum to 150 units runs about 150 us.
const (
	SynthMinNodes  = 50   // fewest random-graph nodes (source and sink not counted)
	SynthMaxNodes  = 200  // most random-graph nodes
	SynthSizeMean  = 50.0 // tensor size mean, in size units
	SynthSizeStd   = 10.0 // tensor size standard deviation
	SynthMinSize   = 1.0  // sizes below this are truncated to it
	SynthTimeNoise = 0.1  // relative standard deviation of the op-time noise
	SynthControlP  = 0.2  // probability that a dependency is a control edge
	SynthUnitBytes = 1024 // bytes per size unit
	SynthUnitTime  = 1e-6 // seconds per time unit
)

// SynthOutputProbs is the probability that an op makes 0, 1 or 2 output tensors.
var SynthOutputProbs = [3]float64{0.1, 0.8, 0.1}

// SyntheticFamilies lists the random-graph families of Synthetic:
// Erdos-Renyi (p=0.05), Barabasi-Albert (m=2), Watts-Strogatz (k=4,
// p=0.3) and a stochastic block model (4 blocks, p=0.3, q=0.01).
func SyntheticFamilies() []string { return []string{"er", "ba", "ws", "sbm"} }

// Synthetic generates one REGAL synthetic graph of the given family
// ("er", "ba", "ws" or "sbm"); the same seed gives the same graph.
//
// A random undirected graph of 50-200 nodes is oriented by a random node
// order; a source feeds every node without predecessors and a sink
// follows every node without successors (control edges from the source).
// Each op makes 0, 1 or 2 output tensors with probability 0.1/0.8/0.1; a
// dependency on an op with outputs is a control edge with probability 0.2,
// else it consumes one of the op's outputs picked uniformly. Tensor sizes
// are N(50, 10) units truncated at 1; an op's measured time is the sum of
// its input and output sizes times (1 + r), r ~ N(0, 0.1), and 0 for the
// source and sink.
func Synthetic(family string, seed uint64) (*graph.Graph, error) {
	return synthetic(family, seed, "synthetic-"+family+"-"+strconv.FormatUint(seed, 10), SynthNodes)
}

// NodeRange is the number of random-graph nodes a synthetic graph draws
// from, uniformly, Min to Max inclusive (source and sink not counted).
type NodeRange struct{ Min, Max int }

// SynthNodes is REGAL's range, 50-200 nodes: the training and held-out
// test graphs'.
var SynthNodes = NodeRange{SynthMinNodes, SynthMaxNodes}

// Scale returns the range with both ends times k (Scale(2) of 50-200 is
// 100-400: graphs up to twice the largest training graph).
func (r NodeRange) Scale(k int) NodeRange { return NodeRange{r.Min * k, r.Max * k} }

// String is "MIN-MAX".
func (r NodeRange) String() string { return fmt.Sprintf("%d-%d", r.Min, r.Max) }

// Check reports whether the range is usable: 5 <= Min <= Max <= 100,000
// (Watts-Strogatz joins each node to 4 neighbours).
func (r NodeRange) Check() error {
	if r.Min < 5 || r.Max < r.Min || r.Max > 100_000 {
		return fmt.Errorf("workloads: synthetic nodes %s: want MIN-MAX with 5 <= MIN <= MAX <= 100000", r)
	}
	return nil
}

// ParseNodeRange reads "MIN-MAX" (or "N" for MIN = MAX = N).
func ParseNodeRange(s string) (NodeRange, error) {
	lo, hi, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		hi = lo
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil {
		return NodeRange{}, fmt.Errorf("workloads: synthetic nodes %q: want MIN-MAX (e.g. 100-400) or N", s)
	}
	r := NodeRange{a, b}
	return r, r.Check()
}

func synthetic(family string, seed uint64, name string, nodes NodeRange) (*graph.Graph, error) {
	if err := nodes.Check(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	nn := nodes.Min + r.IntN(nodes.Max-nodes.Min+1)
	adj := make([]bool, nn*nn)
	set := func(i, j int, v bool) { adj[i*nn+j], adj[j*nn+i] = v, v }
	switch family {
	case "er":
		for i := 0; i < nn; i++ {
			for j := i + 1; j < nn; j++ {
				if r.Float64() < 0.05 {
					set(i, j, true)
				}
			}
		}
	case "ba":
		const m = 2
		targets := []int{0, 1}
		var repeated []int
		for src := m; src < nn; src++ {
			for _, t := range targets {
				set(src, t, true)
			}
			repeated = append(repeated, targets...)
			for k := 0; k < m; k++ {
				repeated = append(repeated, src)
			}
			targets = targets[:0]
			for len(targets) < m {
				t := repeated[r.IntN(len(repeated))]
				dup := false
				for _, u := range targets {
					dup = dup || u == t
				}
				if !dup {
					targets = append(targets, t)
				}
			}
		}
	case "ws":
		const k, p = 4, 0.3
		for i := 0; i < nn; i++ {
			for j := 1; j <= k/2; j++ {
				set(i, (i+j)%nn, true)
			}
		}
		deg := func(u int) int {
			d := 0
			for v := 0; v < nn; v++ {
				if adj[u*nn+v] {
					d++
				}
			}
			return d
		}
		for j := 1; j <= k/2; j++ {
			for u := 0; u < nn; u++ {
				v := (u + j) % nn
				if r.Float64() >= p || !adj[u*nn+v] || deg(u) >= nn-1 {
					continue
				}
				w := r.IntN(nn)
				for w == u || adj[u*nn+w] {
					w = r.IntN(nn)
				}
				set(u, v, false)
				set(u, w, true)
			}
		}
	case "sbm":
		const blocks, p, q = 4, 0.3, 0.01
		for i := 0; i < nn; i++ {
			for j := i + 1; j < nn; j++ {
				pr := q
				if i*blocks/nn == j*blocks/nn {
					pr = p
				}
				if r.Float64() < pr {
					set(i, j, true)
				}
			}
		}
	default:
		return nil, fail.Usagef("workloads: unknown synthetic family %q (want er, ba, ws or sbm)", family)
	}

	// Orient by a random order: op k of the graph is node perm[k].
	perm := r.Perm(nn)
	pos := make([]int, nn)
	for k, v := range perm {
		pos[v] = k
	}
	b := graph.NewBuilder(name)
	src := b.AddOp(graph.Op{Name: "source", Type: "NoOp", HasTime: true})
	ids := make([]int, nn) // position -> op index
	for k, v := range perm {
		ids[k] = b.AddOp(graph.Op{Name: "op_" + strconv.Itoa(v), Type: "Synthetic", HasTime: true})
	}
	sink := b.AddOp(graph.Op{Name: "sink", Type: "NoOp", HasTime: true})

	size := func() int64 {
		s := SynthSizeMean + SynthSizeStd*r.NormFloat64()
		if s < SynthMinSize {
			s = SynthMinSize
		}
		return int64(math.Round(s * SynthUnitBytes))
	}
	outs := make([][]int, nn) // position -> tensor ids
	var sizes []int64         // tensor id -> bytes
	for k := 0; k < nn; k++ {
		u := r.Float64()
		cnt := 0
		if u >= SynthOutputProbs[0] {
			cnt = 1
			if u >= SynthOutputProbs[0]+SynthOutputProbs[1] {
				cnt = 2
			}
		}
		for c := 0; c < cnt; c++ {
			sz := size()
			outs[k] = append(outs[k], b.AddTensor(ids[k], sz))
			sizes = append(sizes, sz)
		}
	}
	rd := make([]int64, nn+2) // by op index
	wr := make([]int64, nn+2)
	depend := func(k, to int) {
		if len(outs[k]) == 0 || r.Float64() < SynthControlP {
			b.AddControl(ids[k], to)
			return
		}
		t := outs[k][r.IntN(len(outs[k]))]
		b.Consume(t, to)
		rd[to] += sizes[t]
	}
	hasPred := make([]bool, nn)
	hasSucc := make([]bool, nn)
	for k := 0; k < nn; k++ {
		u := perm[k]
		for l := k + 1; l < nn; l++ {
			if adj[u*nn+perm[l]] {
				depend(k, ids[l])
				hasSucc[k], hasPred[l] = true, true
			}
		}
	}
	for k := 0; k < nn; k++ {
		if !hasPred[k] {
			b.AddControl(src, ids[k])
		}
		if !hasSucc[k] {
			depend(k, sink)
		}
	}
	// Measured times from the tensors each op reads and writes.
	for k := 0; k < nn; k++ {
		i := ids[k]
		for _, t := range outs[k] {
			wr[i] += sizes[t]
		}
		op := b.Op(i)
		units := float64(rd[i]+wr[i]) / SynthUnitBytes
		t := units * (1 + SynthTimeNoise*r.NormFloat64())
		op.Time = max(t, 0) * SynthUnitTime
		op.BytesRead, op.BytesWritten = rd[i], wr[i]
	}
	return b.Build()
}

// Augment returns a copy of g with the same ops, tensors and edges in
// which every tensor size, and every op's measured time, is multiplied by
// its own factor drawn from U(0.5, 1.5) (REGAL section 5.1). Ops without a
// measured time get their FLOPs and bytes read and written scaled instead,
// so that their modelled time scales alike. The same seed gives the same
// copy. The copy has no batch information: its sizes are no longer
// proportional to a batch.
func Augment(g *graph.Graph, seed uint64) *graph.Graph {
	r := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909))
	b := graph.NewBuilder(g.Name() + "-aug" + strconv.FormatUint(seed, 10))
	for i := 0; i < g.NumOps(); i++ {
		op := *g.Op(i)
		op.Shape = append([]int64(nil), op.Shape...)
		op.FixedFLOPs, op.FixedBytesRead, op.FixedBytesWritten, op.FixedTempBytes = 0, 0, 0, 0
		f := 0.5 + r.Float64()
		if op.HasTime {
			op.Time *= f
		} else {
			op.FLOPs *= f
			op.BytesRead = int64(math.Round(float64(op.BytesRead) * f))
			op.BytesWritten = int64(math.Round(float64(op.BytesWritten) * f))
		}
		b.AddOp(op)
	}
	for t := 0; t < g.NumTensors(); t++ {
		ts := *g.Tensor(t)
		ts.Consumers = append([]int(nil), ts.Consumers...)
		f := 0.5 + r.Float64()
		ts.Bytes = int64(math.Round(float64(ts.Bytes) * f))
		ts.TransferTime *= f
		b.AddTensorFull(ts)
	}
	for _, e := range g.Control() {
		b.AddControl(e.From, e.To)
	}
	out, err := b.Build()
	if err != nil {
		panic("workloads: Augment of a valid graph failed: " + err.Error())
	}
	return out
}

// splitmix64 derives independent per-graph seeds from one seed.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// WriteSynthetic writes count synthetic graphs of family (one of
// SyntheticFamilies, or "all" to cycle through them) as native JSON files
// under dir/train, dir/valid and dir/test, split 10:1:1 as REGAL's released
// synthetic data set (at least one valid and one test graph when count >=
// 3). Graph i uses seed splitmix64(seed+i) and is named
// "<family>-<split>-<i>"; files are written atomically. The same arguments
// give the same files.
func WriteSynthetic(dir, family string, count int, seed uint64) error {
	return WriteSyntheticNodes(dir, family, count, seed, SynthNodes)
}

// WriteSyntheticNodes is WriteSynthetic with graphs of nodes random-graph
// nodes instead of REGAL's 50-200 (SynthNodes, with which it writes the
// same files).
func WriteSyntheticNodes(dir, family string, count int, seed uint64, nodes NodeRange) error {
	if err := nodes.Check(); err != nil {
		return err
	}
	if count < 1 {
		return fmt.Errorf("workloads: synthetic count %d, want at least 1", count)
	}
	fams := []string{family}
	if family == "all" {
		fams = SyntheticFamilies()
	} else if _, err := synthetic(family, 0, "check", nodes); err != nil {
		return err
	}
	valid := (count + 6) / 12
	if count >= 3 {
		valid = max(valid, 1)
	}
	test := valid
	train := count - valid - test
	for _, s := range []string{"train", "valid", "test"} {
		if err := os.MkdirAll(filepath.Join(dir, s), 0o755); err != nil {
			return fmt.Errorf("workloads: %w", err)
		}
	}
	for i := 0; i < count; i++ {
		split := "train"
		switch {
		case i >= train+valid:
			split = "test"
		case i >= train:
			split = "valid"
		}
		f := fams[i%len(fams)]
		name := fmt.Sprintf("%s-%s-%05d", f, split, i)
		g, err := synthetic(f, splitmix64(seed+uint64(i)), name, nodes)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, split, name+".json")
		if err := atomicfile.Write(path, func(w io.Writer) error { return graph.Write(w, g) }); err != nil {
			return fmt.Errorf("workloads: %w", err)
		}
	}
	return nil
}
