package plans

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompactPlan(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"tp=8,pp=16,dp=48,vp=7,mbs=1,sp=on,tpoverlap=on,distopt=on", "8x16x48 v7 sp+o z1"},
		{"tp=2,pp=1,dp=4,mbs=2,sp=on,recompute=full", "2x1x4 b2 sp rf"},
		{"tp=8,pp=6,dp=4,vp=8,mbs=2,sp=on,tpoverlap=on,distopt=on,recompute=selective", "8x6x4 v8 b2 sp+o z1 rs"},
		{"tp=8,pp=16,dp=64,vp=2,mbs=1,first=7,last=7", "8x16x64 v2 f7 l7"},
		{"tp=8,pp=8,dp=4,mbs=1,recompute=full,recompute-layers=3", "8x8x4 rf3"},
		{"tp=1,pp=4,dp=2,mbs=1,schedule=gpipe", "1x4x2 gpipe"},
		{"stage-tp=4:8:8:8:8:4,pp=6,dp=12,mbs=1,sp=on", "8x6x12 t4:8:4 sp"},
		{"stage-tp=8:4,pp=2,dp=2,mbs=4", "8x2x2 t8:4 b4"},
		{"stage-tp=2:4:8:8,pp=4,dp=2,mbs=1", "8x4x2 t2:4:8:8"},
		{"not a plan", "not a plan"},
	} {
		if got := CompactPlan(c.in); got != c.want {
			t.Errorf("CompactPlan(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestWriteMegatronPlots(t *testing.T) {
	m := Megatron{Rows: []MegatronRow{{Model: "1.7B", PublishedTFLOPs: 400, PredictedTFLOPs: 600, PlacerTFLOPs: 650}},
		Strong: []MegatronRow{{GPUs: 96, PublishedMFU: 0.47, PredictedMFU: 0.6, PlacerMFU: 0.61}, {GPUs: 4608, PublishedMFU: 0.42, PredictedMFU: 0.5, PlacerMFU: 0.52}}}
	path := filepath.Join(t.TempDir(), "m.svg")
	files, err := WriteMegatronPlots(path, m)
	if err != nil || len(files) != 2 || files[1] != strings.TrimSuffix(path, ".svg")+"-strong.svg" {
		t.Fatalf("%v, %v", files, err)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
