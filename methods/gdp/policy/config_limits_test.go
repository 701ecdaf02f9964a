package policy

import "testing"

// TestConfigLimits: a configuration asking for a huge network is refused
// by validate (which New and decode call before allocating), and the
// estimate stays above the real count for the default and small sizes.
func TestConfigLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		ok   bool
	}{
		{"default", Config{}, true},
		{"wide", Config{SageDim: 4096, DModel: 4096, Inner: 16384, Layers: 64, Heads: 64, HeadDim: 1024}, false},
		{"dim too big", Config{SageDim: 1 << 40}, false},
		{"negative", Config{Layers: -3}, false},
		{"levels", Config{PriorityLevels: 1 << 20}, false},
	} {
		c := tc.c
		c.fill()
		err := c.validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: validate() = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	for _, c := range []Config{{}, {SageLayers: 2, SageDim: 32, DModel: 32, Heads: 2, HeadDim: 16, Inner: 64}, {CondDim: 512, HeadHidden: 512}, {PriorityLevels: 256, FusionLevels: 256, MaxDevices: 64}, {TypeBuckets: 4096, HintDim: 16}, {Layers: 6, Heads: 16, HeadDim: 64, Inner: 1024}} {
		p, err := New(&c, 1)
		if err != nil {
			t.Fatal(err)
		}
		cfg := p.Config()
		if est := cfg.approxParams(); est < int64(p.NumParams()) {
			t.Errorf("estimate %d below the real count %d for %+v", est, p.NumParams(), cfg)
		}
	}
}
