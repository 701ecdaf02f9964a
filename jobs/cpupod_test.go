package jobs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/inputs"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/plans"
)

// cpuDense is a CPU profile placer profile wrote (2 gloo processes of
// one thread on this project's 2-core machine, torch 2.14.1): the tiny
// Llama of placer_torch.profile.cpuloop at tp 1 and 2, mbs 1 and 4. On it
// eval printed "TFLOP/s per GPU 0.0 (MFU 61.4%)" for tp=1,pp=1,dp=2,mbs=4
// and search's best "0.0 (MFU 120.7%)", "cpu:1 (2 GPUs)", a CUDA context
// and NCCL buffers in a CPU process's memory, and "yes" in every
// runner-up's "checked against" under a line saying no published row
// applies.
var cpuDense = filepath.Join("..", "evaluate", "profile", "testdata", "cpu-dense.json")

const cpuDenseModel = "llama:layers=4,hidden=256,heads=4,ffn=512,seq=256,vocab=1024,batch=8"

// cpuPodText is what text of a CPU pod's plan or search must not hold:
// GPUs' units and parts, an MFU, and "yes" in the checked column.
var cpuPodText = []string{"GPUs)", "per GPU", "TFLOP/s", "(MFU", "│ MFU", "CUDA context", "NCCL", "GPU waits", "caching allocator", "│ yes │", " yes │",
	// Nor a GPU stack's name for the profile's run, nor memory in GB
	// that reads 0.0 (the tiny model's parts are MB).
	"Megatron-Core", "Transformer Engine", " 0.0 GB"}

// TestCPUPodSpeaksOfCPUs: eval and search on a CPU profile's pod speak
// of processes: "cpu:1 (2 processes)", the model's GFLOP/s a process
// (ModelFLOPs over the step and the 2 processes, by hand below) and no
// MFU (the profile measured no peak of the CPU), the memory a process
// has (the profile's 12,638,255,104 bytes, no CUDA context or NCCL
// buffers, no caching allocator), and no "yes" where no published row
// applies; --json alike (device_kind "cpu", no mfu, no allocator).
func TestCPUPodSpeaksOfCPUs(t *testing.T) {
	m, err := transformer.Parse(cpuDenseModel)
	if err != nil {
		t.Fatal(err)
	}
	o := ScaleOptions{Workload: cpuDenseModel, Profile: cpuDense, Strat: "tp=1,pp=1,dp=2,mbs=4"}
	ev, err := ScaleEval(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Strat = ""
	se, err := ScaleSearch(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, p plans.ScalePlan) {
		t.Helper()
		if p.MFU != 0 || p.Allocator != nil {
			t.Errorf("%s %s: MFU %g, allocator %v: want none", name, p.Strategy, p.MFU, p.Allocator)
		}
		if p.Capacity != 12_638_255_104 {
			t.Errorf("%s %s: capacity %d, want the profile's 12638255104 bytes a process", name, p.Strategy, p.Capacity)
		}
		var js strings.Builder
		if err := report.JSON(&js, p); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{`"mfu"`, `"CUDA context"`, `"NCCL buffers"`, `"allocator"`} {
			if strings.Contains(js.String(), bad) {
				t.Errorf("%s %s --json holds %s", name, p.Strategy, bad)
			}
		}
		if !strings.Contains(js.String(), `"device_kind": "cpu"`) {
			t.Errorf("%s %s --json: no device_kind cpu", name, p.Strategy)
		}
	}
	check("eval", ev)
	if want := "the profile's run on the CPU: placer's own PyTorch layer (placer_torch.profile.layers), torch 2.14.1+cu130, gloo"; !strings.HasPrefix(ev.StackNote, want) {
		t.Errorf("eval's stack %q, want the profile's run, %q", ev.StackNote, want)
	}
	check("search", se.Best)
	for _, r := range se.Runners {
		check("search runner-up", r)
	}

	var text strings.Builder
	if err := plans.WriteScalePlan(&text, ev); err != nil {
		t.Fatal(err)
	}
	gflops := fmt.Sprintf("%.1f (no MFU", transformer.ModelFLOPs(m)/ev.Step/2/1e9)
	for _, want := range []string{"cpu:1 (2 processes)", "GFLOP/s per process", gflops, "memory per process", "12.6 GB share of host memory",
		"the profile's run on the CPU", "weights 6.3 MB"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("eval: no %q in\n%s", want, text.String())
		}
	}
	if err := plans.WriteScaleSearch(&text, se); err != nil {
		t.Fatal(err)
	}
	for _, bad := range cpuPodText {
		if strings.Contains(text.String(), bad) {
			t.Errorf("eval and search print %q:\n%s", bad, text.String())
		}
	}
	if n := strings.Count(text.String(), "no published row │"); n != 1+len(se.Runners) {
		t.Errorf("%d plans of the search's table say \"no published row\", want %d:\n%s", n, 1+len(se.Runners), text.String())
	}
}

// smallCPUProfile is cpuDense with 1 MB a process (a path in a test's
// folder): nothing fits it.
func smallCPUProfile(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(cpuDense)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	raw["device"].(map[string]any)["memory_bytes"] = 1e6
	small := filepath.Join(t.TempDir(), "small.json")
	data, _ = json.Marshal(raw)
	if err := os.WriteFile(small, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return small
}

// TestCPUPodNoFit: on a CPU pod nothing fits (1 MB a process), search
// and export say so per process and of the process's memory (export
// wrote the plan before: a 6 GiB reserve kept for a CUDA context made
// room the process has not).
func TestCPUPodNoFit(t *testing.T) {
	small := smallCPUProfile(t)
	_, err := ScaleSearch(t.Context(), ScaleOptions{Workload: cpuDenseModel, Profile: small})
	if err == nil || !strings.Contains(err.Error(), "fits 0.0 GB per process at a 0.0% margin") {
		t.Errorf("search: error %v, want no plan fitting 0.0 GB per process", err)
	}
	var warn strings.Builder
	_, err = exportjob.Run(exportjob.Options{World: inputs.ClusterScale, Scale: exportjob.ScaleOptions{Workload: cpuDenseModel, Pod: inputs.PodSpec{Profile: small}},
		Strategy: "tp=1,pp=1,dp=2,mbs=4", To: "megatron", Warn: &warn})
	if err == nil || !strings.Contains(err.Error(), "plan tp=1,pp=1,dp=2,mbs=4 needs 98.3 MB a process, more than the 1.0 MB usable a process of cpu:1 has for it") {
		t.Errorf("export: error %v, want the plan refused for 1.0 MB a process", err)
	}
}
