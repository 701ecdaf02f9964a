package policy

import (
	"fmt"

	"github.com/placer/placer/nn/graphsage"
)

// Config holds the hyperparameters of the policy network. The zero value
// of every field means its default (GDP table 3 where the paper gives
// one); a nil *Config means all defaults.
type Config struct {
	SageLayers    int `json:"sage_layers"`    // GraphSAGE layers (gs_layers); 4
	SageDim       int `json:"sage_dim"`       // GraphSAGE width (gs_dim); 128
	SageNeighbors int `json:"sage_neighbors"` // neighbours sampled per node and layer (gs_knn); 5, at most 255
	TypeBuckets   int `json:"type_buckets"`   // buckets op types are hashed into; 32
	HintDim       int `json:"hint_dim"`       // cost hints per op supplied by the caller; 1

	DModel     int `json:"d_model"`     // attention width (trf_d_model); 128
	Layers     int `json:"layers"`      // Transformer-XL layers (trf_layers); 2
	Heads      int `json:"heads"`       // attention heads (trf_n_head); 5
	HeadDim    int `json:"head_dim"`    // width of a head (trf_d_head); 25
	Inner      int `json:"inner"`       // feed-forward inner width (trf_d_inner); 256
	SegmentLen int `json:"segment_len"` // nodes per attention segment; 64

	CondDim    int `json:"cond_dim"`    // hidden width of the superposition conditioner and the value head; 128
	HeadHidden int `json:"head_hidden"` // hidden width of each task head's FC; 128

	MaxDevices     int  `json:"max_devices"`     // largest device count the placement head serves; 8
	PriorityLevels int  `json:"priority_levels"` // scheduling priority levels; 16
	FusionLevels   int  `json:"fusion_levels"`   // fusion priority levels (level 0 = never initiates a fusion); 16
	NoScheduling   bool `json:"no_scheduling"`   // decide no scheduling priorities
	NoFusion       bool `json:"no_fusion"`       // decide no fusion priorities
	RefineSteps    int  `json:"refine_steps"`    // soft refinement iterations inside one forward pass; 1 (see Policy.Refine)

	// Coarsen makes one decision per co-location group instead of per op.
	Coarsen bool `json:"coarsen"`

	// Normalization of the node features; the zero value means
	// graphsage.DefaultNormalization().
	Normalization graphsage.Normalization `json:"normalization"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	var c Config
	c.fill()
	return c
}

func (c *Config) fill() {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.SageLayers, 4)
	def(&c.SageDim, 128)
	def(&c.SageNeighbors, 5)
	def(&c.TypeBuckets, 32)
	def(&c.HintDim, 1)
	def(&c.DModel, 128)
	def(&c.Layers, 2)
	def(&c.Heads, 5)
	def(&c.HeadDim, 25)
	def(&c.Inner, 256)
	def(&c.SegmentLen, 64)
	def(&c.CondDim, 128)
	def(&c.HeadHidden, 128)
	def(&c.MaxDevices, 8)
	def(&c.PriorityLevels, 16)
	def(&c.FusionLevels, 16)
	def(&c.RefineSteps, 1)
	if c.Normalization == (graphsage.Normalization{}) {
		c.Normalization = graphsage.DefaultNormalization()
	}
}

// Check checks a configuration as New would (zero fields take their
// defaults), before anything is allocated.
func (c Config) Check() error {
	c.fill()
	return c.validate()
}

// validate checks a filled config.
func (c *Config) validate() error {
	for _, f := range []struct {
		name      string
		v, lo, hi int
	}{
		{"SageLayers", c.SageLayers, 1, 16}, {"SageDim", c.SageDim, 1, 4096}, {"SageNeighbors", c.SageNeighbors, 1, 255},
		{"TypeBuckets", c.TypeBuckets, 1, 1 << 16}, {"HintDim", c.HintDim, 1, 64}, {"DModel", c.DModel, 1, 4096},
		{"Layers", c.Layers, 1, 64}, {"Heads", c.Heads, 1, 64}, {"HeadDim", c.HeadDim, 1, 1024}, {"Inner", c.Inner, 1, 16384},
		{"SegmentLen", c.SegmentLen, 1, 4096}, {"CondDim", c.CondDim, 1, 4096}, {"HeadHidden", c.HeadHidden, 1, 4096},
		{"MaxDevices", c.MaxDevices, 2, 64}, {"PriorityLevels", c.PriorityLevels, 2, 1024}, {"FusionLevels", c.FusionLevels, 2, 1024},
		{"RefineSteps", c.RefineSteps, 1, 64},
	} {
		if f.v < f.lo || f.v > f.hi {
			return fmt.Errorf("policy: config %s = %d, want %d to %d", f.name, f.v, f.lo, f.hi)
		}
	}
	if n := c.approxParams(); n > MaxParams {
		return fmt.Errorf("policy: config asks for about %d weights, more than the %d allowed", n, MaxParams)
	}
	return c.Normalization.Validate()
}

// MaxParams is the most weights a policy configuration may ask for (64 Mi
// float32 weights, 256 MiB, with Adam's state 768 MiB more; the default
// network has about 0.5 Mi), checked before anything is allocated.
const MaxParams = 1 << 26

// approxParams is an upper estimate of the network's weight count from
// the (range-checked, so overflow-free) configuration: GraphSAGE layers,
// the attention layers, the conditioner and the three task heads.
func (c *Config) approxParams() int64 {
	i := func(x int) int64 { return int64(x) }
	sage := i(c.SageLayers)*(2*i(c.SageDim)*i(c.SageDim)+i(c.SageDim)) + (i(c.TypeBuckets)+i(c.HintDim)+64)*i(c.SageDim)
	attn := i(c.Layers) * (4*i(c.DModel)*i(c.Heads)*i(c.HeadDim) + 2*i(c.DModel)*i(c.Inner) + 4*i(c.DModel))
	cond := 4 * i(c.CondDim) * (i(c.DModel) + i(c.SageDim) + 1)
	levels := max(i(c.MaxDevices), i(c.PriorityLevels), i(c.FusionLevels))
	heads := 3 * (i(c.DModel) + i(c.HeadHidden) + levels + 1) * (i(c.HeadHidden) + levels)
	return 2 * (sage + attn + cond + heads + i(c.SageDim)*i(c.DModel)) // x2: headroom over terms left out, checked by TestConfigLimits
}

// Task is one of the decisions the policy makes per node.
type Task int

// The tasks, in the order the recurrent attention heads make them.
const (
	Placement  Task = iota // device per node
	Scheduling             // scheduling priority level per node
	Fusion                 // fusion priority level per node
)

// String returns the task's name.
func (t Task) String() string {
	switch t {
	case Placement:
		return "placement"
	case Scheduling:
		return "scheduling"
	case Fusion:
		return "fusion"
	}
	return fmt.Sprintf("task(%d)", int(t))
}

// tasks lists the active tasks and their action-space sizes.
func (c *Config) tasks() ([]Task, []int) {
	ts, dims := []Task{Placement}, []int{c.MaxDevices}
	if !c.NoScheduling {
		ts, dims = append(ts, Scheduling), append(dims, c.PriorityLevels)
	}
	if !c.NoFusion {
		ts, dims = append(ts, Fusion), append(dims, c.FusionLevels)
	}
	return ts, dims
}
