package planner

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestPodPower: each pod's power limit as its source states it, the
// clock it holds under it and its hardware's compute slowdown (the
// efficiencies stay the burst's: 0.755 for GEMMs); a pod whose limit is off, and a pod whose GPU has
// no held-load measurement (the A100), keep the kernels' burst rates; a
// pod at its stated TDP holds the measured clock; power=W overrides the
// preset's limit; bad values are refused in one line naming them.
func TestPodPower(t *testing.T) {
	for _, c := range []struct {
		cluster       string
		watts, mhz    float64
		slowdown, eff float64
	}{
		{"dgx-h100:4", 700, 1612.5, 1.144174, 0.756},
		{"dgx-h800:2", 700, 1612.5, 1.144174, 0.756},
		{"grand-teton:1", 500, 1417.80, 1.250845, 0.756},
		{"dgx-h100:1,power=500", 500, 1417.80, 1.250845, 0.756},
		{"dgx-h100:1,power=off", 0, 0, 1, 0.756},
		{"grand-teton:1,power=off", 0, 0, 1, 0.756},
		{"dgx-a100:2", 400, 0, 1, 0},
	} {
		p, err := plan.ParsePod(c.cluster)
		if err != nil {
			t.Fatalf("%s: %v", c.cluster, err)
		}
		mhz, slow := p.HeldClock()
		if p.PowerLimit != c.watts || math.Abs(mhz-c.mhz) > 0.01 || math.Abs(slow-c.slowdown) > 1e-6 {
			t.Errorf("%s: %g W, %.2f MHz, slowdown %.6f; want %g W, %.2f MHz, %.6f", c.cluster, p.PowerLimit, mhz, slow, c.watts, c.mhz, c.slowdown)
		}
		if w := map[bool]float64{true: c.slowdown, false: 0}[c.slowdown != 1]; math.Abs(p.Hardware.ComputeSlowdown-w) > 1e-6 {
			t.Errorf("%s: compute slowdown %v, want %v", c.cluster, p.Hardware.ComputeSlowdown, w)
		}
		if c.eff > 0 && p.Hardware.ComputeEff[graph.ClassMatMul] != c.eff {
			t.Errorf("%s: GEMM efficiency %v, want the burst's %v", c.cluster, p.Hardware.ComputeEff[graph.ClassMatMul], c.eff)
		}
		// At its burst clock every pod is its preset at power=off.
		b := p.AtBurst()
		q, _ := plan.ParsePod(c.cluster + ",power=off")
		if b.Hardware != q.Hardware || b.PowerLimit != 0 {
			t.Errorf("%s at its burst clock: %+v, want %+v", c.cluster, b.Hardware, q.Hardware)
		}
	}
	// The A100 has no held measurement: its limit changes nothing.
	a, _ := plan.ParsePod("dgx-a100:2")
	off, _ := plan.ParsePod("dgx-a100:2,power=off")
	if a.Hardware != off.Hardware {
		t.Errorf("dgx-a100: %+v at 400 W, %+v without a limit", a.Hardware, off.Hardware)
	}
	for _, c := range []struct{ text, want string }{
		{"dgx-h100:1,power=abc", `power=abc: want the GPUs' power limit in watts above 0, or off`},
		{"dgx-h100:1,power=-5", `power=-5: want the GPUs' power limit in watts above 0, or off`},
		{"dgx-h100:1,power=50", `power=50: at or below the 75.5 W its GPU draws at rest`},
	} {
		if _, err := plan.ParsePod(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}

// TestHeldGEMMByHand: on a DGX H100 at 700 W a compute-bound GEMM (4,096
// x 8,192 x 8,192, BF16: 549.8 GFLOP at 0.756 of 989.4 TFLOP/s, 0.7350
// ms, plus the 5 us launch) takes 1.144174 times its burst compute time;
// a memory-bound kernel (an elementwise pass over 256 MiB) as long as at
// its burst clock; fused attention's rate term the slowdown's times, its
// per-element and fixed terms as timed.
func TestHeldGEMMByHand(t *testing.T) {
	held, _ := plan.PodOf("dgx-h100", 8)
	burst := held.AtBurst()
	const n, h = 4096.0, 8192.0
	gemm := kernel{Class: graph.ClassMatMul, FLOPs: 2 * n * h * h, Read: (n*h + h*h) * bf16, Writes: n * h * bf16}
	launch := held.Hardware.Launch
	want := 2*n*h*h/(989.4e12*0.756)*1.144174 + launch
	if got := gemm.Time(&held.Hardware); math.Abs(got/want-1) > 1e-6 {
		t.Errorf("held GEMM %.6g s, by hand %.6g", got, want)
	}
	if got, b := gemm.Time(&held.Hardware)-launch, gemm.Time(&burst.Hardware)-launch; math.Abs(got/b-1.144174) > 1e-6 {
		t.Errorf("held over burst %.6f, want 1.144174", got/b)
	}
	ew := kernel{Class: graph.ClassElementwise, FLOPs: 1 << 27, Read: 128 << 20, Writes: 128 << 20}
	if a, b := ew.Time(&held.Hardware), ew.Time(&burst.Hardware); a != b {
		t.Errorf("memory-bound kernel %g s held, %g s at burst: want the same", a, b)
	}
	// Attention at head dimension 128, 1 GFLOP, 1e6 query elements:
	// forward 1e9 x 1.144174 / 663.2e12 + 0.5461e-12 x 1e6 + 11.62e-6
	// (no causal last row).
	a := fusedAttn{K: kernel{Class: graph.ClassMatMul, FLOPs: 1e9}, Elems: 1e6, HeadDim: 128}
	c := coster{Shard: cost.Shard{Pod: &held, H: &held.Hardware}, Points: registered}
	want = 1e9*1.144174/663.2e12 + 0.5461e-12*1e6 + 11.62e-6
	if got := c.Attention(a, false); math.Abs(got/want-1) > 1e-6 {
		t.Errorf("held attention %.6g s, by hand %.6g", got, want)
	}
}

// smiSample is one nvidia-smi line: when (Unix seconds), the SM clock
// (MHz) and the power drawn (W).
type smiSample struct{ at, mhz, watts float64 }

func readSMI(t *testing.T, path string) []smiSample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []smiSample
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		if first {
			continue
		}
		p := strings.Split(sc.Text(), ", ")
		if len(p) < 4 {
			t.Fatalf("%s: %q: want timestamp, clocks.sm, clocks.mem, power.draw, ...", path, sc.Text())
		}
		at, err := time.Parse("2006/01/02 15:04:05.000", p[0])
		if err != nil {
			t.Fatal(err)
		}
		mhz, err1 := strconv.ParseFloat(strings.TrimSuffix(p[1], " MHz"), 64)
		w, err2 := strconv.ParseFloat(strings.TrimSuffix(p[3], " W"), 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %q", path, sc.Text())
		}
		out = append(out, smiSample{float64(at.UnixMilli()) / 1e3, mhz, w})
	}
	return out
}

// heldRun is one case of kernelbench's sustained section at no idle
// time: its median throughput and time from its third second on, its
// burst time (blocks), and the median SM clock nvidia-smi read meanwhile.
type heldRun struct {
	name                 string
	tflops, seconds, mhz float64
	burst, idle          float64
}

func readHeld(t *testing.T, jsonl, csv string) (runs []heldRun, smi []smiSample) {
	t.Helper()
	return readRuns(t, jsonl, csv, false)
}

// readRuns is readHeld's: with idle, the runs at an idle share above 0
// too.
func readRuns(t *testing.T, jsonl, csv string, idle bool) (runs []heldRun, smi []smiSample) {
	t.Helper()
	// The shared data beside the checkout (../shared/data) is absent from
	// a clone elsewhere: the test says SKIP, as every test of it does.
	for _, f := range []string{jsonl, csv} {
		if _, err := os.Stat(f); err != nil && strings.Contains(filepath.ToSlash(f), "shared/data/") {
			t.Skipf("no %s (the shared data beside the checkout)", f)
		}
	}
	smi = readSMI(t, csv)
	f, err := os.Open(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type line struct {
		Name    string  `json:"name"`
		Wall    float64 `json:"wall"`
		Second  int     `json:"second"`
		TFLOPS  float64 `json:"tflops"`
		Seconds float64 `json:"seconds_per_iteration"`
		Burst   float64 `json:"burst_seconds"`
		Idle    float64 `json:"idle_share"`
	}
	var order []string
	by := map[string][]line{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Idle > 0 && !idle {
			continue
		}
		if by[l.Name] == nil {
			order = append(order, l.Name)
		}
		by[l.Name] = append(by[l.Name], l)
	}
	for _, name := range order {
		ls := by[name]
		// A record covers the second before its wall time: the clock
		// from the start of the run's third second to its end.
		from, to := ls[0].Wall+1, ls[len(ls)-1].Wall
		var tf, sec, mhz []float64
		for _, l := range ls[2:] {
			tf, sec = append(tf, l.TFLOPS), append(sec, l.Seconds)
		}
		for _, s := range smi {
			if s.at >= from && s.at <= to {
				mhz = append(mhz, s.mhz)
			}
		}
		runs = append(runs, heldRun{name: name, tflops: median(tf), seconds: median(sec), mhz: median(mhz), burst: ls[0].Burst, idle: ls[0].Idle})
	}
	return runs, smi
}

// heldFiles are the three held-load runs kernels.H100Held is measured on.
var heldFiles = [][2]string{
	{"../measurements/2026-11-26-h100-b/kb-sustained-1.7b.jsonl", "../measurements/2026-11-26-h100-b/smi-1.7b.csv"},
	{"../measurements/2026-11-26-h100-b/kb-sustained-rows.jsonl", "../measurements/2026-11-26-h100-b/smi-rows.csv"},
	{"../../shared/data/h100-sustained/sustained.jsonl", "../../shared/data/h100-sustained/smi-sustained.csv"},
}

// TestH100HeldMeasured recomputes kernels.H100Held's measured figures from the
// three held-load runs and nvidia-smi's logs beside them (kernels.H100Held says
// how): the burst clock, the blocks' held clock, the idle power and the
// GEMM's clock share; a changed figure or file fails here.
func TestH100HeldMeasured(t *testing.T) {
	burstGEMM := 0.0
	for _, l := range readKernelbench(t, filepath.Join("..", "measurements", "2026-11-26-h100-b", "kb-gemm.jsonl")) {
		if l.Kind == "gemm" && l.Name == "1.7B.fc1.fwd" {
			burstGEMM = l.Seconds
		}
	}
	if burstGEMM <= 0 {
		t.Fatal("kb-gemm.jsonl: no 1.7B.fc1.fwd")
	}
	const fc1 = 2.0 * 4096 * 2048 * 8192
	burstTF := fc1 / burstGEMM / 1e12
	var top, blocks, idle []float64
	var sxy, sxx float64
	gemms := 0
	for _, f := range heldFiles {
		runs, smi := readHeld(t, filepath.FromSlash(f[0]), filepath.FromSlash(f[1]))
		peak := 0.0
		for _, s := range smi {
			peak = max(peak, s.mhz)
			if s.mhz == 345 {
				idle = append(idle, s.watts)
			}
		}
		top = append(top, peak)
		for _, r := range runs {
			if strings.HasSuffix(r.name, ".gemm") {
				x, y := (*h100.Held).BurstMHz/r.mhz-1, burstTF/r.tflops-1
				sxy, sxx = sxy+x*y, sxx+x*x
				gemms++
				continue
			}
			blocks = append(blocks, r.mhz)
		}
	}
	sort.Float64s(top)
	if top[0] != (*h100.Held).BurstMHz || top[len(top)-1] != (*h100.Held).BurstMHz {
		t.Errorf("highest SM clock of each log %v, kernels.H100Held.BurstMHz %g", top, (*h100.Held).BurstMHz)
	}
	if len(blocks) != 8 || median(blocks) != (*h100.Held).HeldMHz {
		t.Errorf("%d blocks held at a median %g MHz (%v), kernels.H100Held.HeldMHz %g", len(blocks), median(blocks), blocks, (*h100.Held).HeldMHz)
	}
	if len(idle) != 29 || median(idle) != (*h100.Held).IdleW {
		t.Errorf("%d samples at rest, median %g W; kernels.H100Held.IdleW %g", len(idle), median(idle), (*h100.Held).IdleW)
	}
	if s := sxy / sxx; gemms != 3 || math.Abs(s-(*h100.Held).Share) > 0.00005 {
		t.Errorf("%d held GEMMs give Share %.5f, kernels.H100Held.Share %g", gemms, s, (*h100.Held).Share)
	}
}

// TestH100HeldBlocks checks the held clock where it acts, on the blocks
// measured held (the rows' blocks on two machines at no idle time): the
// time placer predicts for each block at 700 W over its time at the
// burst clock (its memory-bound kernels not slowed) against the measured
// held over burst time. 314B is left out: its burst timing (15.8 ms a
// block) already ran at the held clock (measured 0.994). What it
// achieves, not a target met: each within 6% (the 70B block on the
// third machine: predicted 1.128, measured 1.190), the mean within 3%
// (2.1%, the prediction the lower on average).
func TestH100HeldBlocks(t *testing.T) {
	rows := map[string]struct{ workload, strategy string }{}
	f, err := os.Open(filepath.Join("..", "measurements", "2026-11-26-h100-b", "layerbench-cudnn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct{ Row, Workload, Strategy string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		rows[l.Row] = struct{ workload, strategy string }{l.Workload, l.Strategy}
	}
	held, _ := plan.ParsePod("dgx-h100")
	var sum float64
	n := 0
	for _, fl := range heldFiles[1:] {
		runs, _ := readHeld(t, filepath.FromSlash(fl[0]), filepath.FromSlash(fl[1]))
		for _, r := range runs {
			row := strings.TrimSuffix(r.name, ".block")
			if row == r.name || row == "314B" {
				continue
			}
			w, ok := rows[row]
			if !ok {
				t.Fatalf("%s: not in layerbench-cudnn.jsonl", row)
			}
			s, err := plan.ParseStrategy(w.strategy)
			if err != nil {
				t.Fatal(err)
			}
			m := mustSpec(t, w.workload)
			hb, _, err := OneGPU{Pod: held}.Block(m, s, "cudnn")
			if err != nil {
				t.Fatal(err)
			}
			bb, _, _ := OneGPU{Pod: held.AtBurst()}.Block(m, s, "cudnn")
			pred, meas := hb/bb, r.seconds/r.burst
			e := pred/meas - 1
			t.Logf("%s: held/burst predicted %.3f, measured %.3f (%+.1f%%)", row, pred, meas, 100*e)
			if math.Abs(e) > 0.06 {
				t.Errorf("%s: held/burst predicted %.3f, measured %.3f (%+.1f%%)", row, pred, meas, 100*e)
			}
			sum += math.Abs(e)
			n++
		}
	}
	if n != 6 {
		t.Fatalf("%d blocks, want 6 (1.7B, 7.1B, 32B, 70B; 1.7B, 70B)", n)
	}
	if mean := sum / float64(n); mean > 0.03 {
		t.Errorf("mean |error| %.1f%% over %d held blocks, want at most 3%%", 100*mean, n)
	}
}

// TestH100BalancedIdle: kernelbench's blocks held with the GPU idle for a
// share s of the time (../shared/data/h100-sustained: 1.7B and 70B at s
// 0.1, 0.25, 0.5; idle = s/(1-s) of each batch's busy time) against
// Balanced, each block from its own clock held at s = 0 (nvidia-smi's
// median: the power model carries it, the balance adds the idle time's
// headroom). By hand, the closed form of a fixed idle share: P(f) = (700
// - 75.5 s)/(1 - s), f = f0 ((P - 75.5)/624.5)^(1/3): f0 x 1.03574,
// 1.10064, 1.25992 (capped at 1,980): 1.7B 1,740 -> 1,802 / 1,915 / 1,980
// against 1,800 / 1,920 / 1,965 measured; 70B 1,590 -> 1,647 / 1,750 /
// 1,980 against 1,688 / 1,815 / 1,912. Within 5% each (the largest:
// 70B at 0.25, -3.6%; at 0.5, +3.5%: the GPU's own controller does not
// hold 2 s averages exactly).
func TestH100BalancedIdle(t *testing.T) {
	f := heldFiles[2]
	runs, _ := readRuns(t, f[0], f[1], true)
	base := map[string]float64{}
	for _, r := range runs {
		if r.idle == 0 {
			base[r.name] = r.mhz
		}
	}
	n := 0
	for _, r := range runs {
		if r.idle == 0 || !strings.HasSuffix(strings.Split(r.name, ".idle")[0], ".block") {
			continue
		}
		f0 := base[strings.Split(r.name, ".idle")[0]]
		h := *h100.Held
		h.HeldMHz = f0
		// The idle time follows the busy time (s/(1-s) of it): a fixed
		// point of Balanced over it.
		mhz := f0
		for range 50 {
			mhz = h.Balanced(700, kernels.StepTime{Compute: 1, Idle: r.idle / (1 - r.idle) * h.Slowdown(mhz)}, 0.5)
		}
		n++
		t.Logf("%s: idle %.2f, held %.0f MHz at idle 0, predicted %.0f, measured %.0f (%+.1f%%)", r.name, r.idle, f0, mhz, r.mhz, 100*(mhz/r.mhz-1))
		if f0 == 0 || math.Abs(mhz/r.mhz-1) > 0.05 {
			t.Errorf("%s: predicted %.0f MHz, measured %.0f", r.name, mhz, r.mhz)
		}
	}
	if n != 6 {
		t.Errorf("%d idle-share runs, want 6 (1.7B and 70B at 0.1, 0.25, 0.5)", n)
	}
}

// TestBalancedStep: a step of 1 s of compute-bound kernels at the burst
// clock and short idle gaps (exposed host time) I = 0.124152 s
// (TestBalancedByHand's f* = 1,670.137 MHz, slowdown 1.117367), priced
// at the burst clock (step 1.124152 s) and at compute alone's 700 W
// clock (compute 1.144174 s, step 1.268326 s), is taken at f*: x =
// 0.117367/0.144174 = 0.814064 of the way, step I + 1.117367 = 1.241519
// s, TFLOP/s in proportion; on a pod without a limit the one price as it
// is. The same I as a pipeline bubble (one stretch a step, beside 1.144
// s of busy time: longer than the 0.09 s window) averages with none of
// it: compute alone's clock, step 1.268326 s.
func TestBalancedStep(t *testing.T) {
	const i, s1 = 1.1173670063311705 / 9, 1.144174
	p, _ := plan.ParsePod("dgx-h100:1")
	for _, c := range []struct {
		name       string
		bubble     bool
		step, comp float64
	}{
		{"short gaps", false, i + 1.1173670063311705, 1.117367},
		{"a bubble longer than the window", true, i + s1, s1},
	} {
		eval := func(q *plan.Pod, _ bool) Result {
			s := max(q.Hardware.ComputeSlowdown, 1)
			if c.bubble {
				return Result{Compute: s, Bubble: i, Step: s + i, TFLOPs: 100 / (s + i)}
			}
			return Result{Compute: s, HostExposed: i, Step: s + i, TFLOPs: 100 / (s + i)}
		}
		r := balanced(registered, &p, eval)
		if math.Abs(r.Step-c.step) > 1e-5 || math.Abs(r.Compute-c.comp) > 1e-5 || math.Abs(r.TFLOPs-100/c.step) > 1e-3 {
			t.Errorf("%s: step %.6f s, compute %.6f s, %.3f TFLOP/s; want %.6f, %.6f, %.3f", c.name, r.Step, r.Compute, r.TFLOPs, c.step, c.comp, 100/c.step)
		}
		off, _ := plan.ParsePod("dgx-h100:1,power=off")
		if r := balanced(registered, &off, eval); r.Step != 1+i {
			t.Errorf("%s, no limit: step %v, want %v", c.name, r.Step, 1+i)
		}
	}
	if math.Abs(p.Hardware.ComputeSlowdown-s1) > 1e-6 {
		t.Errorf("the pod's slowdown %v, want %v left as it is", p.Hardware.ComputeSlowdown, s1)
	}
}

// TestH100WindowBounds recomputes the two bounds kernels.H100Held.WindowS
// sits between from ../shared/data/h100-sustained, and that it is their
// geometric mean:
//   - the lower: the 70B block at idle share 0.5 ran batches of 8 steps
//     (8 x its median step time from its third second: 32.7 ms busy)
//     between sleeps as long, and held a clock above the one it held at
//     no idle (1,912 against 1,590 MHz): a window shorter than the busy
//     stretch would cap each stretch as the idle-free run was capped;
//   - the upper: the first nvidia-smi sample with the software power cap
//     (0x4) after the GPU rested (345 MHz) read P W over its last second,
//     rest R W the median of the samples at rest before it: (P - R) J
//     above rest, and a window W averaging the 700 W limit holds (700 -
//     R) W x W above rest, so W <= (P - R) / (700 - R).
func TestH100WindowBounds(t *testing.T) {
	f := heldFiles[2]
	runs, _ := readRuns(t, f[0], f[1], true)
	mhz := map[string]float64{}
	lo := 0.0
	for _, r := range runs {
		mhz[r.name] = r.mhz
		if r.name == "70B.block.idle50" {
			lo = 8 * r.seconds
		}
	}
	if lo == 0 || mhz["70B.block.idle50"] <= mhz["70B.block"]+100 {
		t.Fatalf("70B at idle 0.5: busy %.4f s, %.0f MHz against %.0f at no idle", lo, mhz["70B.block.idle50"], mhz["70B.block"])
	}
	hi := capAfterRest(t, f[1], 700)
	w := kernels.H100Held.WindowS
	t.Logf("window between %.4f and %.4f s, geometric mean %.4f; WindowS %g", lo, hi, math.Sqrt(lo*hi), w)
	if math.Abs(lo-0.0327) > 0.0005 || math.Abs(hi-0.245) > 0.001 || math.Abs(w-math.Sqrt(lo*hi)) > 0.001 {
		t.Errorf("window bounds %.4f and %.4f s (documented 0.0327, 0.245), geometric mean %.4f; WindowS %g", lo, hi, math.Sqrt(lo*hi), w)
	}
}

// capAfterRest is TestH100WindowBounds's upper bound from an nvidia-smi
// log with the throttle reasons last: (P - R) / (limitW - R) at the first
// sample capped (0x4) after samples at rest (345 MHz).
func capAfterRest(t *testing.T, path string, limitW float64) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rest []float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		p := strings.Split(line, ", ")
		reason, err := strconv.ParseUint(strings.TrimPrefix(p[len(p)-1], "0x"), 16, 64)
		if err != nil || len(p) < 4 {
			t.Fatalf("%s: %q: want the throttle reasons last", path, line)
		}
		w, _ := strconv.ParseFloat(strings.TrimSuffix(p[3], " W"), 64)
		switch {
		case strings.HasPrefix(p[1], "345 "):
			rest = append(rest, w)
		case reason&4 != 0 && len(rest) > 0:
			r := median(rest)
			return (w - r) / (limitW - r)
		}
	}
	t.Fatalf("%s: no capped sample after rest", path)
	return 0
}
