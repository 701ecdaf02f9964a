package graphsage

import (
	"fmt"
	"hash/fnv"
	"math"

	"github.com/placer/placer/graph"
)

// FeatureConfig sizes the feature vector.
type FeatureConfig struct {
	// TypeBuckets is the number of buckets op types are hashed into
	// (FNV-1a). Zero means 32.
	TypeBuckets int
	// HintDim is the number of cost hints per op the caller supplies
	// (for example the op's roofline time on the target devices). Zero
	// means 1.
	HintDim int
}

func (fc FeatureConfig) withDefaults() FeatureConfig {
	if fc.TypeBuckets == 0 {
		fc.TypeBuckets = 32
	}
	if fc.HintDim == 0 {
		fc.HintDim = 1
	}
	return fc
}

// Normalization is the fixed part of the feature normalization: each
// magnitude m becomes log(1 + m/unit), is standardized over the graph's
// nodes (divided by at least MinStd) and clipped to ±Clip. It is saved
// with the weights, since a policy is only valid with the normalization it
// was trained with.
type Normalization struct {
	FLOPsUnit float64 `json:"flops_unit"` // FLOPs per unit; 1e6
	BytesUnit float64 `json:"bytes_unit"` // bytes per unit; 1024
	TimeUnit  float64 `json:"time_unit"`  // seconds per unit of the cost hints; 1e-6
	MinStd    float64 `json:"min_std"`    // floor of the per-graph standard deviation; 0.1
	Clip      float64 `json:"clip"`       // bound of a standardized value; 5
}

// DefaultNormalization returns the normalization used unless a saved
// policy says otherwise.
func DefaultNormalization() Normalization {
	return Normalization{FLOPsUnit: 1e6, BytesUnit: 1024, TimeUnit: 1e-6, MinStd: 0.1, Clip: 5}
}

// Validate reports a normalization with a non-positive or non-finite field.
func (nz Normalization) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"FLOPsUnit", nz.FLOPsUnit}, {"BytesUnit", nz.BytesUnit}, {"TimeUnit", nz.TimeUnit}, {"MinStd", nz.MinStd}, {"Clip", nz.Clip}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("graphsage: normalization %s = %v, want a positive number", f.name, f.v)
		}
	}
	return nil
}

// Column layout of the feature vector.
const (
	shapeDims  = 4 // trailing output dimensions kept, right-aligned and zero-padded
	numMagBase = shapeDims + 2 + 5 + 3
	numFrac    = 2
	// numPos position columns: the mean topological rank of the node's ops
	// over the op count, its depth over the graph's depth, and sin/cos of
	// 2*pi*f*rank for f in posFreqs. Positions are structural, not ids:
	// they transfer between graphs, they tell apart nodes whose
	// neighbourhoods look alike, and the sinusoids make a split into
	// contiguous stretches of the topological order (what expert, METIS
	// and m-TOPO placements look like) easy to express.
	numPos = 2 + 2*len(posFreqs)
)

var posFreqs = [...]float64{0.5, 1, 2, 4, 8}

// NumFeatures is the length of a node's feature vector.
func NumFeatures(fc FeatureConfig) int {
	fc = fc.withDefaults()
	return graph.NumClasses + graph.NumDTypes + fc.TypeBuckets + numMagBase + fc.HintDim + numFrac + numPos
}

// NumGraphStats is the length of the graph-level statistics Features
// returns: the node count and the mean and standard deviation of every
// log-scaled magnitude before standardization.
func NumGraphStats(fc FeatureConfig) int {
	fc = fc.withDefaults()
	return 1 + 2*(numMagBase+fc.HintDim)
}

// TypeBucket returns the bucket op type typ hashes to, or -1 for "".
func TypeBucket(typ string, buckets int) int {
	if typ == "" {
		return -1
	}
	h := fnv.New32a()
	h.Write([]byte(typ))
	return int(h.Sum32() % uint32(buckets))
}

// Features returns the nodes x NumFeatures matrix of node features
// (row-major) and the graph-level statistics. hints holds HintDim values
// per op (op-major, indexed by op id, not node); nil means all zero. A
// coarsened node sums its ops' FLOPs, bytes and hints, averages the
// one-hot columns into histograms, and takes its shape from its op with
// the most FLOPs.
func Features(g *graph.Graph, nd *Nodes, hints []float64, fc FeatureConfig, nz Normalization) (x, stats []float64, err error) {
	fc = fc.withDefaults()
	if err := nz.Validate(); err != nil {
		return nil, nil, err
	}
	if hints != nil && len(hints) != g.NumOps()*fc.HintDim {
		return nil, nil, fmt.Errorf("graphsage: %d cost hints for %d ops x %d hints per op", len(hints), g.NumOps(), fc.HintDim)
	}
	for i, h := range hints {
		if !(h >= 0) || math.IsInf(h, 0) {
			return nil, nil, fmt.Errorf("graphsage: cost hint %d of op %q is %v, want a finite non-negative number", i%fc.HintDim, g.Op(i/fc.HintDim).Name, h)
		}
	}
	F := NumFeatures(fc)
	nMag := numMagBase + fc.HintDim
	offType := graph.NumClasses + graph.NumDTypes
	offMag := offType + fc.TypeBuckets
	offFrac := offMag + nMag
	x = make([]float64, nd.N*F)
	for v := range nd.N {
		row := x[v*F : (v+1)*F]
		ops := nd.Members(v)
		inv := 1 / float64(len(ops))
		mag := row[offMag : offMag+nMag]
		main := ops[0]
		for _, o := range ops {
			op := g.Op(int(o))
			row[op.Class] += inv
			row[graph.NumClasses+int(op.DType)] += inv
			if b := TypeBucket(op.Type, fc.TypeBuckets); b >= 0 {
				row[offType+b] += inv
			}
			if op.FLOPs > g.Op(int(main)).FLOPs {
				main = o
			}
			mag[shapeDims+2] += op.FLOPs
			mag[shapeDims+3] += float64(op.BytesRead)
			mag[shapeDims+4] += float64(op.BytesWritten)
			mag[shapeDims+5] += float64(op.ParamBytes)
			mag[shapeDims+6] += float64(op.TempBytes)
			for h := range fc.HintDim {
				if hints != nil {
					mag[numMagBase+h] += hints[int(o)*fc.HintDim+h]
				}
			}
			if op.Backward {
				row[offFrac] += inv
			}
			if op.HasTime {
				row[offFrac+1] += inv
			}
		}
		shape := g.Op(int(main)).Shape
		numel := 1.0
		for _, d := range shape {
			numel *= float64(d)
		}
		for i := 0; i < shapeDims && i < len(shape); i++ {
			mag[shapeDims-1-i] = math.Log1p(float64(shape[len(shape)-1-i]))
		}
		if len(shape) > 0 {
			mag[shapeDims] = math.Log1p(numel)
		}
		mag[shapeDims+1] = float64(len(shape))
		mag[shapeDims+2] = math.Log1p(mag[shapeDims+2] / nz.FLOPsUnit)
		for i := 3; i <= 6; i++ {
			mag[shapeDims+i] = math.Log1p(mag[shapeDims+i] / nz.BytesUnit)
		}
		mag[shapeDims+7] = math.Log1p(float64(nd.InDegree(v)))
		mag[shapeDims+8] = math.Log1p(float64(nd.OutDegree(v)))
		mag[shapeDims+9] = math.Log(float64(len(ops)))
		for h := range fc.HintDim {
			mag[numMagBase+h] = math.Log1p(mag[numMagBase+h] / nz.TimeUnit)
		}
	}
	// Positions.
	offPos := offFrac + numFrac
	n := float64(g.NumOps())
	depth := make([]int, g.NumOps())
	maxDepth := 1
	for _, o := range g.Topo() {
		d := 0
		for _, u := range g.Preds(int(o)) {
			d = max(d, depth[u]+1)
		}
		depth[o] = d
		maxDepth = max(maxDepth, d+1)
	}
	for v := range nd.N {
		ops := nd.Members(v)
		rank, dep := 0.0, 0.0
		for _, o := range ops {
			rank += float64(g.TopoIndex(int(o))) / n
			dep += float64(depth[o]) / float64(maxDepth)
		}
		rank /= float64(len(ops))
		dep /= float64(len(ops))
		row := x[v*F+offPos : v*F+offPos+numPos]
		row[0], row[1] = 2*rank-1, 2*dep-1
		for i, f := range posFreqs {
			row[2+2*i] = math.Sin(2 * math.Pi * f * rank)
			row[3+2*i] = math.Cos(2 * math.Pi * f * rank)
		}
	}
	// Per-graph standardization of the magnitudes.
	stats = make([]float64, NumGraphStats(fc))
	stats[0] = math.Log1p(float64(nd.N)) / 10
	for c := range nMag {
		col := offMag + c
		mean := 0.0
		for v := range nd.N {
			mean += x[v*F+col]
		}
		mean /= float64(nd.N)
		vs := 0.0
		for v := range nd.N {
			d := x[v*F+col] - mean
			vs += d * d
		}
		std := math.Sqrt(vs / float64(nd.N))
		stats[1+2*c] = mean / 10
		stats[2+2*c] = std / 10
		div := math.Max(std, nz.MinStd)
		for v := range nd.N {
			z := (x[v*F+col] - mean) / div
			x[v*F+col] = math.Max(-nz.Clip, math.Min(nz.Clip, z))
		}
	}
	return x, stats, nil
}
