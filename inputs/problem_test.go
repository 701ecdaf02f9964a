package inputs

import (
	"strings"
	"testing"
)

// TestResolve: an op graph and a cluster resolve to the graph and the
// cluster, with one-line errors.
func TestResolve(t *testing.T) {
	cases := []struct {
		name    string
		g       GraphSpec
		c       ClusterSpec
		gpus    int // the cluster's
		wantErr string
	}{
		{name: "op graph", g: GraphSpec{Path: "../examples/mlp.json"}, c: ClusterSpec{GPUs: 2}, gpus: 2},
		{name: "op graph too many GPUs", g: GraphSpec{Path: "../examples/mlp.json"}, c: ClusterSpec{GPUs: 65}, wantErr: "--gpus 65: out of range [1, 64]"},
	}
	for _, c := range cases {
		p, err := Resolve(c.g, c.c)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error %v, want one line with %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.Graph == nil || p.Cluster == nil || p.Cluster.Devices != c.gpus {
			t.Errorf("%s: graph %v, cluster %+v; want %d GPUs", c.name, p.Graph != nil, p.Cluster, c.gpus)
		}
	}
}

// TestTransformer: a transformer and a pod resolve to the model and the
// pod (from the pod, or from --gpus as DGX H100 nodes), with one-line
// errors.
func TestTransformer(t *testing.T) {
	const gpt = "gpt:layers=2,hidden=256,heads=4,seq=128,vocab=1000,batch=8"
	cases := []struct {
		name     string
		workload string
		c        PodSpec
		gpus     int    // the pod's
		pod      string // the pod's name
		layers   int    // the model's (0: 2)
		wantErr  string
	}{
		{name: "gpus as nodes", workload: gpt, c: PodSpec{GPUs: 16}, gpus: 16, pod: "dgx-h100:2"},
		{name: "pod", workload: gpt, c: PodSpec{Pod: "dgx-a100:4"}, gpus: 32, pod: "dgx-a100:4"},
		{name: "pod and gpus agree", workload: gpt, c: PodSpec{Pod: "dgx-h100:2", GPUs: 16}, gpus: 16, pod: "dgx-h100:2"},
		{name: "disagree", workload: gpt, c: PodSpec{Pod: "dgx-h100:2", GPUs: 24}, wantErr: "--gpus 24 and --cluster dgx-h100:2 (16 GPUs) disagree: 24 GPUs of dgx-h100's 8-GPU nodes are --cluster dgx-h100:3"},
		{name: "gpus of the nodes named", workload: gpt, c: PodSpec{Pod: "dgx-h100:2", GPUs: 8}, gpus: 8, pod: "dgx-h100:2,per-node=4"},
		{name: "64 GPUs of one NVL72 rack", workload: gpt, c: PodSpec{Pod: "gb200-nvl72:1", GPUs: 64}, gpus: 64, pod: "gb200-nvl72:1,per-node=64"},
		{name: "512 GPUs of NVL72 racks", workload: gpt, c: PodSpec{Pod: "gb200-nvl72", GPUs: 512}, gpus: 512, pod: "gb200-nvl72:8,per-node=64"},
		{name: "no cluster", workload: gpt, wantErr: "name the cluster"},
		{name: "not whole nodes", workload: gpt, c: PodSpec{GPUs: 12}, wantErr: "not a whole number of 8-GPU nodes"},
		{name: "hf config.json", workload: "hf:../graph/transformer/testdata/hf/llama3-8b.json:seq=4096,batch=64", c: PodSpec{Pod: "dgx-h100:1"}, gpus: 8, pod: "dgx-h100:1", layers: 32},
		{name: "hf bad file", workload: "hf:../graph/transformer/testdata/hf/none.json", c: PodSpec{Pod: "dgx-h100:1"}, wantErr: "none.json: cannot read it"},
	}
	for _, c := range cases {
		m, p, err := Transformer(c.workload, c.c)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error %v, want one line with %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.GPUs() != c.gpus || p.Name != c.pod || m.Layers != max(c.layers, 2) {
			t.Errorf("%s: pod %s of %d GPUs, model %+v; want %s of %d", c.name, p.Name, p.GPUs(), m, c.pod, c.gpus)
		}
	}
}

// TestDefaultHardware: with no --hardware, a graph file (a user's own
// graph) is costed on the current GPU, h100, and says so
// (GraphFileDefault); a built-in workload keeps the V100 its paper
// modelled; a named preset is taken as named (a graph file was costed
// on a V100 unless --hardware said otherwise).
func TestDefaultHardware(t *testing.T) {
	cases := []struct {
		g           GraphSpec
		hardware    string
		want        string
		fileDefault bool
	}{
		{GraphSpec{Path: "../examples/mlp.json"}, "", "h100", true},
		{GraphSpec{Path: "../examples/mlp.json"}, "v100", "v100", false},
		{GraphSpec{Path: "../examples/mlp.json"}, "h100", "h100", false},
		{GraphSpec{Path: "../examples/mlp.json"}, "a100", "a100", false},
		{GraphSpec{Workload: "trxl2"}, "", "v100", false},
		{GraphSpec{Workload: "trxl2"}, "h100", "h100", false},
	}
	for _, c := range cases {
		p, err := Resolve(c.g, ClusterSpec{GPUs: 2, Hardware: c.hardware})
		if err != nil {
			t.Fatalf("%+v --hardware %q: %v", c.g, c.hardware, err)
		}
		if p.Cluster.Hardware.Name != c.want || p.GraphFileDefault != c.fileDefault {
			t.Errorf("%+v --hardware %q: %s (a graph file's default: %v); want %s (%v)", c.g, c.hardware, p.Cluster.Hardware.Name, p.GraphFileDefault, c.want, c.fileDefault)
		}
	}
}
