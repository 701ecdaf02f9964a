package opflags

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/methods/gdp"
)

// isUsage reports whether err is a usage error (exit 2).
func isUsage(err error) bool {
	var u fail.Usage
	return errors.As(err, &u)
}

// TestDefaultPPOFlags: the flags' defaults are the settings learn uses
// when none are given, so that a command run without them trains as
// before.
func TestDefaultPPOFlags(t *testing.T) {
	got, err := DefaultPPO().Settings()
	if err != nil {
		t.Fatal(err)
	}
	if want := gdp.DefaultPPO.Filled(); got.Filled() != want {
		t.Fatalf("flag defaults give %+v, want gdp.DefaultPPO %+v", got.Filled(), want)
	}
}

func TestPPOFlagsSettings(t *testing.T) {
	p := PPO{LearningRate: 1e-3, Epochs: 5, Minibatches: 4, Clip: 0.1, Entropy: 0.05, ValueCoef: 0.5}
	s, err := p.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.LearningRate != 1e-3 || s.Epochs != 5 || s.Minibatches != 4 || s.ClipEps != 0.1 || s.EntropyCoef != 0.05 || s.ValueCoef != 0.5 {
		t.Errorf("settings %+v", s)
	}
	// 0 means none on the command line: negative in ppo.Settings.
	if s.MaxGradNorm >= 0 || s.TargetKL >= 0 {
		t.Errorf("MaxGradNorm 0 and TargetKL 0 should turn them off: %+v", s)
	}
	for _, tc := range []struct {
		change func(*PPO)
		want   string
	}{
		{func(p *PPO) { p.LearningRate = 0 }, "--lr must be positive, not 0"},
		{func(p *PPO) { p.Epochs = 0 }, "--epochs must be at least 1, not 0"},
		{func(p *PPO) { p.Minibatches = -2 }, "--minibatches must be at least 1, not -2"},
		{func(p *PPO) { p.Clip = -0.2 }, "--clip must be positive, not -0.2"},
		{func(p *PPO) { p.TargetKL = -1 }, "--entropy, --value-coef, --max-grad-norm and --target-kl must not be negative"},
	} {
		p := DefaultPPO()
		tc.change(&p)
		_, err := p.Settings()
		if err == nil || err.Error() != tc.want || !isUsage(err) {
			t.Errorf("error %v, want the usage error %q", err, tc.want)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	for _, s := range []string{"", "default"} {
		if c, err := ParsePolicy(s); c != nil || err != nil {
			t.Errorf("%q: %+v %v, want the defaults (nil)", s, c, err)
		}
	}
	if c, err := ParsePolicy("small"); err != nil || c == nil || *c != SmallPolicy {
		t.Errorf("small: %+v %v", c, err)
	}
	if _, err := ParsePolicy("huge"); err == nil || !isUsage(err) || !strings.Contains(err.Error(), "neither default, small nor a file") {
		t.Errorf("huge: %v, want a usage error", err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "p.json")
	os.WriteFile(good, []byte(`{"sage_layers": 2, "sage_dim": 16}`), 0o644)
	if c, err := ParsePolicy(good); err != nil || c == nil || c.SageLayers != 2 || c.SageDim != 16 {
		t.Errorf("file: %+v %v", c, err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"nosuch": 2}`), 0o644)
	if _, err := ParsePolicy(bad); err == nil || isUsage(err) || !strings.HasPrefix(err.Error(), "--policy: ") {
		t.Errorf("unknown field: %v, want a --policy error that is not a usage error", err)
	}
	if _, err := ParsePolicy(filepath.Join(dir, "missing.json")); err == nil || isUsage(err) {
		t.Errorf("missing file: %v, want a plain error", err)
	}
}
