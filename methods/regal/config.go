package regal

import (
	"fmt"

	"github.com/placer/placer/nn/graphsage"
)

// Config sizes the network. The zero value of a field means its default.
type Config struct {
	// Devices is the number of device-affinity gene groups the network
	// predicts (REGAL trains one network per device count; §5.1 uses 2).
	// On a problem with another device count, device j uses group
	// j mod Devices. 0 = 2.
	Devices int `json:"devices"`
	// Layers is the number of GraphSAGE layers (message-passing rounds;
	// REGAL A.16 uses 2 for the synthetic runtime task). 0 = 2.
	Layers int `json:"layers"`
	// Dim is the width of the node embeddings (REGAL A.14: 32). 0 = 32.
	Dim int `json:"dim"`
	// Neighbors is the number of neighbours sampled per node and layer.
	// 0 = 8.
	Neighbors int `json:"neighbors"`
	// Hidden is the width of the head's hidden layer. 0 = 32.
	Hidden int `json:"hidden"`
	// MeanBuckets and VarBuckets are the quantization levels k of the
	// mean and the variance (REGAL A.6). With 5 each (the default) the
	// uniform distribution is one of the choices (m = 2, v = 1).
	MeanBuckets int `json:"mean_buckets"`
	VarBuckets  int `json:"var_buckets"`
	// UniformLogit is the initial extra logit of the buckets that make
	// the uniform distribution (when the bucket counts contain it), so
	// that an untrained network starts close to BRKGA's uniform mutants.
	// 0 = 2; negative = none.
	UniformLogit float64 `json:"uniform_logit"`
}

// Limits of a Config.
const (
	MaxDevices = 8
	MaxLayers  = 8
	MaxDim     = 512
	MaxBuckets = 64
)

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Devices, 2)
	def(&c.Layers, 2)
	def(&c.Dim, 32)
	def(&c.Neighbors, 8)
	def(&c.Hidden, 32)
	def(&c.MeanBuckets, 5)
	def(&c.VarBuckets, 5)
	if c.UniformLogit == 0 {
		c.UniformLogit = 2
	}
	return c
}

// Check reports a configuration out of range.
func (c Config) Check() error {
	c = c.withDefaults()
	for _, f := range []struct {
		name    string
		v, l, h int
	}{{"devices", c.Devices, 1, MaxDevices}, {"layers", c.Layers, 1, MaxLayers}, {"dim", c.Dim, 1, MaxDim},
		{"neighbors", c.Neighbors, 1, 255}, {"hidden", c.Hidden, 1, MaxDim},
		{"mean_buckets", c.MeanBuckets, 2, MaxBuckets}, {"var_buckets", c.VarBuckets, 1, MaxBuckets}} {
		if f.v < f.l || f.v > f.h {
			return fmt.Errorf("regal: config %s = %d, want %d to %d", f.name, f.v, f.l, f.h)
		}
	}
	return nil
}

// Groups is the number of gene groups per node: one per device and the
// scheduling priority.
func (c Config) Groups() int { return c.withDefaults().Devices + 1 }

// Choices is the number of logits per gene group: MeanBuckets +
// VarBuckets.
func (c Config) Choices() int { c = c.withDefaults(); return c.MeanBuckets + c.VarBuckets }

// Outputs is the number of logits per node.
func (c Config) Outputs() int { return c.Groups() * c.Choices() }

// featureConfig is the graphsage feature layout the network reads: the
// cost hints are REGAL A.2's runtime and memory features (see Features).
var featureConfig = graphsage.FeatureConfig{HintDim: numHints}
