package hw

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

func h100Report() *BenchReport {
	return &BenchReport{
		GPU: "NVIDIA H100 80GB HBM3", Index: 0, ComputeCapability: "9.0", SMs: 132, MemoryTotal: 85520809984,
		TheoreticalMemBandwidth: 3.35e12, CUDADriver: 12040, NVLinks: 18,
		GEMM: []GEMMResult{
			{Precision: FP32, M: 4096, N: 4096, K: 4096, FLOPS: 50e12},
			{Precision: TF32, M: 8192, N: 8192, K: 8192, FLOPS: 370e12},
			{Precision: FP16, M: 8192, N: 8192, K: 8192, FLOPS: 700e12},
			{Precision: BF16, M: 8192, N: 8192, K: 8192, FLOPS: 690e12},
			{Precision: FP64, M: 4096, N: 4096, K: 4096, FLOPS: 50e12},
			{Precision: INT8, M: 8192, N: 8192, K: 8192, Error: "cuBLAS NOT_SUPPORTED"},
		},
		Copies: []CopyResult{
			{Kind: "d2d", Src: 0, Dst: 0, Bytes: 256 << 20, Bandwidth: 2.8e12},
			{Kind: "rw", Src: 0, Dst: 0, Bytes: 256 << 20, Bandwidth: 3.0e12},
			{Kind: "h2d", Src: -1, Dst: 0, Bytes: 256 << 20, Bandwidth: 52e9, Latency: 9e-6},
			{Kind: "d2h", Src: 0, Dst: -1, Bytes: 256 << 20, Bandwidth: 50e9, Latency: 9e-6},
			{Kind: "peer", Src: 0, Dst: 1, Bytes: 256 << 20, Bandwidth: 360e9, Latency: 4e-6, NVLinks: 18},
			{Kind: "peer", Src: 1, Dst: 0, Bytes: 256 << 20, Bandwidth: 370e9, Latency: 5e-6, NVLinks: 18},
		},
		Launch: LaunchResult{GPU: 2.1e-6, Host: 3.4e-6},
	}
}

func TestProfileKnownGPU(t *testing.T) {
	r := h100Report()
	base, _ := roofline.Preset("h100")
	h := r.Profile(base, true)
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	if h.FP16Tensor != base.FP16Tensor || h.FP32 != base.FP32 || h.MemBandwidth != base.MemBandwidth {
		t.Error("a known GPU's datasheet peaks changed")
	}
	if h.Memory != r.MemoryTotal || h.Launch != 3.4e-6 {
		t.Errorf("memory %d launch %g", h.Memory, h.Launch)
	}
	// Median of measured/peak over fp32 (0.747), tf32 (0.748), fp16
	// (0.7075), bf16 (0.697), fp64 (1.47).
	if e := h.ComputeEff[graph.ClassMatMul]; math.Abs(e-0.7475) > 0.01 {
		t.Errorf("matmul eff %v", e)
	}
	if e := h.MemEff[graph.ClassDataMovement]; math.Abs(e-2.8e12/3.35e12) > 1e-9 {
		t.Errorf("datamove eff %v", e)
	}
	if e := h.MemEff[graph.ClassElementwise]; math.Abs(e-3.0e12/3.35e12) > 1e-9 {
		t.Errorf("elementwise eff %v", e)
	}
	if h.NVLinks != 18 || math.Abs(h.NVLinkBandwidth-365e9/18) > 1 || h.NVLinkLatency != 4.5e-6 || h.Topology != "nvswitch" {
		t.Errorf("nvlink %d x %g lat %g topo %s", h.NVLinks, h.NVLinkBandwidth, h.NVLinkLatency, h.Topology)
	}
	if h.PCIeBandwidth != 52e9 || h.PCIeLatency != 9e-6 {
		t.Errorf("pcie %g %g", h.PCIeBandwidth, h.PCIeLatency)
	}
	if !strings.HasPrefix(h.Name, "measured-nvidia-h100-80gb-hbm3") || !strings.Contains(h.Source, "placer hw bench on NVIDIA H100") {
		t.Errorf("name %q source %q", h.Name, h.Source)
	}
	c, err := roofline.NewCluster(h, 8, "")
	if err != nil {
		t.Fatal(err)
	}
	if bw := c.Bandwidth[1]; math.Abs(bw-365e9) > 1e3 {
		t.Errorf("cluster link bandwidth %g, want the measured 365 GB/s", bw)
	}
}

func TestProfileUnknownPCIeGPU(t *testing.T) {
	r := h100Report()
	r.GPU, r.ComputeCapability, r.NVLinks = "NVIDIA L4", "8.9", 0
	r.Copies = []CopyResult{
		{Kind: "h2d", Src: -1, Dst: 0, Bandwidth: 25e9, Latency: 8e-6},
		{Kind: "peer", Src: 0, Dst: 1, Bandwidth: 20e9, Latency: 12e-6},
		{Kind: "peer", Src: 1, Dst: 0, Bandwidth: 22e9, Latency: 14e-6},
	}
	name, known, err := resolveBase("", r.GPU)
	if err != nil || known || name != roofline.DefaultHardware {
		t.Fatalf("resolveBase = %q %v %v", name, known, err)
	}
	base, _ := roofline.Preset(name)
	h := r.Profile(base, known)
	if h.FP32 != 50e12 || h.TF32 != 370e12 || h.FP16Tensor != 700e12 || h.FP64 != 50e12 || h.MemBandwidth != 3.35e12 {
		t.Errorf("peaks of an unknown GPU should be the measured rates: %+v", h)
	}
	if e := h.ComputeEff[graph.ClassMatMul]; math.Abs(e-1) > 1e-9 {
		t.Errorf("matmul eff %v, want 1 (peaks are measured rates)", e)
	}
	if h.Topology != "pcie" || h.PCIeBandwidth != 21e9 || math.Abs(h.PCIeLatency-13e-6) > 1e-12 {
		t.Errorf("pcie: %s %g %g", h.Topology, h.PCIeBandwidth, h.PCIeLatency)
	}
	if !strings.Contains(h.Source, "not this GPU") {
		t.Errorf("source %q", h.Source)
	}
	// A single GPU without NVLink: pcie too, from host copies.
	r.Copies = r.Copies[:1]
	if h := r.Profile(base, false); h.Topology != "pcie" || h.PCIeBandwidth != 25e9 {
		t.Errorf("single GPU: %s %g", h.Topology, h.PCIeBandwidth)
	}
	if _, _, err := resolveBase("nope", r.GPU); err == nil {
		t.Error("unknown --base accepted")
	}
	if n, known, _ := resolveBase("H100", "NVIDIA H100 PCIe"); n != "h100" || !known {
		t.Errorf("resolveBase(H100) = %s %v", n, known)
	}
}

func TestWriteProfileRoundTrip(t *testing.T) {
	base, _ := roofline.Preset("h100")
	h := h100Report().Profile(base, true)
	var buf bytes.Buffer
	if err := WriteProfile(&buf, "h100", h); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"base\": \"h100\",\n  \"name\"") {
		t.Fatalf("profile starts %q", buf.String()[:40])
	}
	got, err := roofline.DecodeHardware(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got != h {
		t.Fatalf("round trip changed the profile:\n%+v\n%+v", got, h)
	}
}

func TestBenchTableAndNoCUDA(t *testing.T) {
	var out bytes.Buffer
	if err := WriteBenchTable(&out, h100Report()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NVIDIA H100 80GB HBM3", "CUDA driver 12.4", "bf16", "690.0", "cuBLAS NOT_SUPPORTED", "GPU0 -> GPU1", "NV18", "host -> GPU0", "52.0", "2.10 us per kernel"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("bench table lacks %q:\n%s", want, out.String())
		}
	}
	if CUDAEnabled {
		t.Skip("CUDA build: the no-CUDA errors do not apply")
	}
	var errw bytes.Buffer
	if err := Bench(context.Background(), &out, &errw, BenchOptions{}); !errors.Is(err, ErrNoCUDA) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Bench without CUDA: %v", err)
	}
	if err := Calibrate(context.Background(), &out, &errw, CalibrateOptions{}); !errors.Is(err, ErrNoCUDA) {
		t.Fatalf("Calibrate without CUDA: %v", err)
	}
	g := mlpGraph(t)
	if _, err := NewEvaluator(g, mustCluster(t, "v100", 2, ""), EvalOptions{}); !errors.Is(err, ErrNoCUDA) {
		t.Fatalf("NewEvaluator without CUDA: %v", err)
	}
}

func TestPresetFor(t *testing.T) {
	for name, want := range map[string]string{
		"NVIDIA H100 80GB HBM3": "h100", "NVIDIA H200": "h200", "NVIDIA A100-SXM4-80GB": "a100",
		"Tesla V100-SXM2-32GB": "v100", "Tesla P100-PCIE-16GB": "p100", "NVIDIA GeForce RTX 4090": "",
		"NVIDIA B200": "b200", "NVIDIA GB200": "gb200", "NVIDIA B300 SXM6 AC": "b300", "NVIDIA GB300": "gb300",
	} {
		if got, _ := PresetFor(name); got != want {
			t.Errorf("PresetFor(%q) = %q, want %q", name, got, want)
		}
	}
}

// fakeExec is an executor that returns fixed times and checks what it
// was asked to run.
type fakeExec struct {
	gpus   int
	plans  []*Plan
	runs   int
	closed bool
	fail   error
}

func (f *fakeExec) GPUs() int { return f.gpus }
func (f *fakeExec) Close() error {
	f.closed = true
	return nil
}
func (f *fakeExec) Run(_ context.Context, p *Plan, runs int) (RunTimes, error) {
	if f.fail != nil {
		return RunTimes{}, f.fail
	}
	f.plans = append(f.plans, p)
	f.runs = runs
	rt := RunTimes{Busy: make([]float64, p.Devices), Notes: []string{"GPU 0 has no bf16 GEMM: those ran as FP32"}}
	rt.Step = append(rt.Step, 9e-3) // warm-up
	for i := 1; i < runs; i++ {
		rt.Step = append(rt.Step, float64(i)*1e-3)
	}
	for d := range rt.Busy {
		rt.Busy[d] = float64(d+1) * 1e-4
	}
	// Every kernel measures twice its modelled time.
	for _, kn := range p.Kernels {
		rt.Kernel = append(rt.Kernel, 2*(kn.ModelEnd-kn.ModelStart))
	}
	return rt, nil
}

func TestEvaluatorWithFakeExecutor(t *testing.T) {
	g := mlpGraph(t)
	c := mustCluster(t, "a100", 4, "")
	m, err := roofline.NewModel(g, c, roofline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fx := &fakeExec{gpus: 2}
	e := newEvaluatorWith(m, EvalOptions{Repeats: 4}, fx)
	var _ evaluate.Evaluator = e
	d := decision.Decision{Device: []int{0, 1, 2, 3}}
	r, rep, err := e.Measure(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if fx.runs != 5 || len(fx.plans) != 1 || fx.plans[0].GPUs != 2 {
		t.Fatalf("executor asked for %d runs of %d plans", fx.runs, len(fx.plans))
	}
	if r.StepTime != 2.5e-3 || rep.Warmup != 9e-3 || len(rep.StepTimes) != 4 || rep.StepTimes[0] != 1e-3 {
		t.Fatalf("step %g, report %+v", r.StepTime, rep)
	}
	if r.DeviceBusy[3] != 4e-4 || len(r.DeviceBusy) != 4 {
		t.Fatalf("busy %v", r.DeviceBusy)
	}
	// Per class: the kernels' modelled times summed, and measured at twice that.
	kernels := 0
	for _, c := range rep.Classes {
		kernels += c.Kernels
		if c.Predicted <= 0 || math.Abs(c.Measured-2*c.Predicted) > 1e-12*c.Measured {
			t.Fatalf("class %v: predicted %v, measured %v (want twice)", c.Class, c.Predicted, c.Measured)
		}
	}
	if kernels != len(fx.plans[0].Kernels) || len(rep.Classes) == 0 {
		t.Fatalf("classes %+v cover %d of %d kernels", rep.Classes, kernels, len(fx.plans[0].Kernels))
	}
	sim, _, err := roofline.Simulate(m, d)
	if err != nil {
		t.Fatal(err)
	}
	if r.BytesMoved != sim.BytesMoved || r.Transfers != sim.Transfers || r.Kernels != sim.Kernels || rep.Predicted != sim.StepTime || r.PeakMemory[0] != sim.PeakMemory[0] {
		t.Fatalf("modelled fields differ from the simulation: %+v vs %+v", r, sim)
	}
	if !rep.Shared || !strings.Contains(rep.Mapping, "4 devices on 2 GPU(s)") || len(rep.Notes) != 1 || rep.Kernels != 4 || rep.Copies != 3 {
		t.Fatalf("report %+v", rep)
	}
	if got := e.LastReport(); got.Mapping != rep.Mapping {
		t.Fatal("LastReport")
	}
	if r2, err := e.Evaluate(context.Background(), d); err != nil || r2.StepTime != r.StepTime {
		t.Fatalf("Evaluate: %v", err)
	}
	if p, err := e.Plan(d); err != nil || len(p.Kernels) != 4 {
		t.Fatalf("Plan: %v", err)
	}
	if _, err := e.Evaluate(context.Background(), decision.Decision{Device: []int{0}}); err == nil {
		t.Fatal("malformed decision accepted")
	}
	fx.fail = errors.New("GPU fell off the bus")
	if _, err := e.Evaluate(context.Background(), d); err == nil || !strings.Contains(err.Error(), "fell off") {
		t.Fatalf("executor error lost: %v", err)
	}
	if err := e.Close(); err != nil || !fx.closed {
		t.Fatal("Close")
	}
	if _, err := e.Evaluate(context.Background(), d); err == nil {
		t.Fatal("closed evaluator evaluated")
	}
	if err := e.Close(); err != nil {
		t.Fatal("second Close")
	}
}

func TestAssembleRejectsShortRuns(t *testing.T) {
	p := &Plan{Devices: 1}
	if _, _, err := assemble(p, RunTimes{Step: []float64{1}, Busy: []float64{0}}); err == nil {
		t.Fatal("one run (warm-up only) accepted")
	}
	if _, _, err := assemble(p, RunTimes{Step: []float64{1, 2}}); err == nil {
		t.Fatal("missing busy times accepted")
	}
}
