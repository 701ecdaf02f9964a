package inputs

import (
	"testing"
	"unsafe"
)

func TestWorldOf(t *testing.T) {
	for _, c := range []struct {
		g    GraphSpec
		c    ClusterSpec
		want World
	}{
		{GraphSpec{Workload: "trxl2"}, ClusterSpec{GPUs: 2}, OpGraph},
		{GraphSpec{Path: "g.json"}, ClusterSpec{}, OpGraph},
		{GraphSpec{Workload: "gpt:layers=2,hidden=256,heads=4,seq=128,vocab=1000,batch=8"}, ClusterSpec{GPUs: 2304}, ClusterScale},
		{GraphSpec{Workload: "LLAMA:layers=2"}, ClusterSpec{}, ClusterScale},
		{GraphSpec{Workload: "gnmt8"}, ClusterSpec{Pod: "dgx-h100:2"}, ClusterScale},
		{GraphSpec{Workload: "gpt2"}, ClusterSpec{}, OpGraph}, // a name, not gpt:
		{GraphSpec{Workload: "hf:x/config.json:seq=4096,batch=512"}, ClusterSpec{GPUs: 8}, ClusterScale},
		{GraphSpec{Workload: "llama3.1-405b:seq=8192,batch=2048"}, ClusterSpec{GPUs: 8}, ClusterScale},
	} {
		if got := WorldOf(c.g, c.c); got != c.want {
			t.Errorf("WorldOf(%+v, %+v) = %s, want %s", c.g, c.c, got, c.want)
		}
	}
}

// options is an options struct of two worlds' fields, as a command's.
type options struct {
	Graph   GraphSpec
	Cluster ClusterSpec
	Method  string `world:"graph"`
	Out     string
	inner   struct{ X int } // unexported: never a flag's
}

// TestForeign: each field a flag may be bound to is found by its address,
// and is foreign to a world exactly when its tag names the other one.
func TestForeign(t *testing.T) {
	var o options
	for _, c := range []struct {
		addr               unsafe.Pointer
		name               string
		inGraph, inCluster bool // foreign in the op-graph world, at cluster scale
	}{
		{unsafe.Pointer(&o.Graph.Workload), "Graph.Workload", false, false},
		{unsafe.Pointer(&o.Graph.Path), "Graph.Path", false, true},
		{unsafe.Pointer(&o.Cluster.GPUs), "Cluster.GPUs", false, false},
		{unsafe.Pointer(&o.Cluster.Hardware), "Cluster.Hardware", false, true},
		{unsafe.Pointer(&o.Cluster.Pod), "Cluster.Pod", true, false},
		{unsafe.Pointer(&o.Method), "Method", false, true},
		{unsafe.Pointer(&o.Out), "Out", false, false},
	} {
		for _, w := range []struct {
			w    World
			want bool
		}{{OpGraph, c.inGraph}, {ClusterScale, c.inCluster}} {
			name, foreign := w.w.Foreign(&o, uintptr(c.addr))
			if name != c.name || foreign != w.want {
				t.Errorf("%s in %s: Foreign = %q, %v; want %q, %v", c.name, w.w, name, foreign, c.name, w.want)
			}
		}
	}
	// An address outside the struct (another variable's) is no field.
	var other string
	if name, foreign := ClusterScale.Foreign(&o, uintptr(unsafe.Pointer(&other))); name != "" || foreign {
		t.Errorf("another variable: Foreign = %q, %v", name, foreign)
	}
	_ = o.inner
}
