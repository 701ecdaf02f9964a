package main

import (
	"strings"
	"testing"
)

// TestSearchPPOFlagsUsage: a bad PPO flag is a usage error (exit 2) on
// every command that trains.
func TestSearchPPOFlagsUsage(t *testing.T) {
	for _, cmd := range []string{"search", "finetune"} {
		code, _, errs := placer(t, cmd, "--workload", "trxl2", "--gpus", "2", "--epochs", "0")
		if code != 2 || !strings.Contains(errs, "--epochs") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s --epochs 0: exit %d, stderr %q; want 2 and one line naming --epochs", cmd, code, errs)
		}
	}
	code, _, errs := placer(t, "pretrain", "--workloads", "trxl2", "--gpus", "2", "--out", t.TempDir()+"/m.policy", "--lr", "0")
	if code != 2 || !strings.Contains(errs, "--lr") {
		t.Errorf("pretrain --lr 0: exit %d, stderr %q", code, errs)
	}
}
