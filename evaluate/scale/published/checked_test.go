package published

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/placer/placer/evaluate/scale"
)

// TestFeatures: a plan's features by hand.
func TestFeatures(t *testing.T) {
	moe := mustSpec(t, smallMoE)
	dense := mustSpec(t, "gpt:layers=8,hidden=1024,heads=16,seq=1024,vocab=1024,batch=64")
	for _, c := range []struct {
		m    string
		s    string
		want []string
	}{
		{"dense", "dp=8", nil},
		{"dense", "tp=2,pp=2,dp=2,vp=2,sp=on,tpoverlap=on,recompute=selective,distopt=on", []string{"distopt", "pp", "recompute=selective", "sp", "tp", "tpoverlap", "vp"}},
		{"dense", "cp=2,dp=4,fsdp=on,recompute=full,fp8=current,grads=bf16", []string{"cp", "fp8=current", "fsdp", "grads=bf16", "recompute=full"}},
		{"moe", "ep=4,dp=8", []string{"ep", "experts"}},
		{"moe", "tp=2,ep=2,etp=2,dp=4", []string{"ep", "etp", "experts", "tp"}},
	} {
		m := dense
		if c.m == "moe" {
			m = moe
		}
		s, err := scale.ParseStrategy(c.s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Features(m, s); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: %v, want %v", c.m, c.s, got, c.want)
		}
	}
}

// TestRegime: each feature is vouched for by the first row that has it;
// the others are unchecked, in order.
func TestRegime(t *testing.T) {
	rows := []CheckedRow{{Source: "A", Features: []string{"pp", "tp"}}, {Source: "B", Features: []string{"cp", "tp"}}}
	m := mustSpec(t, "gpt:layers=8,hidden=1024,heads=16,seq=1024,vocab=1024,batch=64")
	s, _ := scale.ParseStrategy("tp=2,pp=2,cp=2,dp=2,fsdp=on")
	vouch, un := Regime(rows, m, s)
	if !reflect.DeepEqual(vouch, map[string]string{"tp": "A", "pp": "A", "cp": "B"}) || !reflect.DeepEqual(un, []string{"fsdp"}) {
		t.Errorf("vouched %v, unchecked %v; want tp, pp by A, cp by B, fsdp unchecked", vouch, un)
	}
}

// TestChecked: every row kept is within its tolerance; Megatron-LM's H100
// rows from 16B up, predicted within 10% today, are among them (a change
// that loses one of them loses what it vouches for, and says so here).
func TestChecked(t *testing.T) {
	rows, err := Checked(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[r.Source] = true
		if math.Abs(r.Error) > CheckedMoE {
			t.Errorf("%s: %+.1f%% kept as checked", r.Source, 100*r.Error)
		}
	}
	for _, name := range []string{"16B", "70B", "119B", "177B", "314B", "462B"} {
		if !have["Megatron-LM H100, "+name] {
			t.Errorf("Megatron-LM H100, %s: not among the checked rows %v", name, rows)
		}
	}
}
