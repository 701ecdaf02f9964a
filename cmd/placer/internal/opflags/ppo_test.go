package opflags

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestPPOFlagsDefaults: the flags' defaults are DefaultPPO, the
// settings learn uses when none are given (jobs' TestDefaultPPOFlags), so
// that a command run without them trains as before.
func TestPPOFlagsDefaults(t *testing.T) {
	var p PPO
	f := pflag.NewFlagSet("x", pflag.ContinueOnError)
	BindPPO(f, &p)
	if err := f.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if want := DefaultPPO(); p != want {
		t.Fatalf("flag defaults %+v, want DefaultPPO %+v", p, want)
	}
}

func TestPPOFlagsParse(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
		check   func(t *testing.T, p PPO)
	}{
		{args: []string{"--lr", "1e-3", "--epochs", "5", "--minibatches", "4", "--clip", "0.1", "--entropy", "0.05", "--value-coef", "0.5", "--max-grad-norm", "0", "--target-kl", "0"},
			check: func(t *testing.T, p PPO) {
				s, _ := p.Settings()
				if s.LearningRate != 1e-3 || s.Epochs != 5 || s.Minibatches != 4 || s.ClipEps != 0.1 || s.EntropyCoef != 0.05 || s.ValueCoef != 0.5 {
					t.Errorf("settings %+v", s)
				}
				// 0 means none on the command line: negative in ppo.Settings.
				if s.MaxGradNorm >= 0 || s.TargetKL >= 0 {
					t.Errorf("--max-grad-norm 0 and --target-kl 0 should turn them off: %+v", s)
				}
			}},
		{args: []string{"--lr", "0"}, wantErr: "--lr"},
		{args: []string{"--lr", "NaN"}, wantErr: "--lr"},
		{args: []string{"--epochs", "0"}, wantErr: "--epochs"},
		{args: []string{"--minibatches", "-2"}, wantErr: "--minibatches"},
		{args: []string{"--clip", "-0.2"}, wantErr: "--clip"},
		{args: []string{"--entropy", "-1"}, wantErr: "must not be negative"},
		{args: []string{"--target-kl", "-1"}, wantErr: "must not be negative"},
	} {
		var p PPO
		f := pflag.NewFlagSet("x", pflag.ContinueOnError)
		BindPPO(f, &p)
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		_, err := p.Settings()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.wantErr)
		}
		if tc.check != nil {
			tc.check(t, p)
		}
	}
}
