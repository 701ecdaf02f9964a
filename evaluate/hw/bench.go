package hw

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
)

// BenchOptions are the options of `placer hw bench`.
type BenchOptions struct {
	JSON  bool // the BenchReport as JSON instead of tables
	GPU   int  // CUDA ordinal of the GPU to measure (peer copies use all)
	Quick bool // smaller sizes and fewer repeats (a smoke test, not a profile)
	// Profile, if set, is where to write the measured hardware profile
	// (roofline.Hardware JSON with its "base" preset) for --hardware.
	Profile string
	// Base is the preset the profile starts from; "" picks it from the
	// GPU's name (PresetFor).
	Base string
}

// BenchReport is what `placer hw bench` measured on one GPU.
type BenchReport struct {
	GPU               string `json:"gpu"`
	Index             int    `json:"index"`
	ComputeCapability string `json:"compute_capability"`
	SMs               int    `json:"sms"`
	MemoryTotal       int64  `json:"memory_total"`
	// TheoreticalMemBandwidth is memory clock x 2 x bus width, bytes/s.
	TheoreticalMemBandwidth float64 `json:"theoretical_mem_bandwidth"`
	CUDADriver              int     `json:"cuda_driver"` // cuDriverGetVersion, e.g. 12040
	// NVLinks is the number of active NVLinks of the GPU per NVML (-1 =
	// unknown: NVML unavailable).
	NVLinks int `json:"nvlinks"`

	GEMM   []GEMMResult `json:"gemm"`
	Copies []CopyResult `json:"copies"`
	Launch LaunchResult `json:"launch"`
	Notes  []string     `json:"notes,omitempty"`
}

// GEMMResult is one GEMM benchmark: the best of its repeats.
type GEMMResult struct {
	Precision Precision `json:"precision"`
	M, N, K   int
	Seconds   float64 `json:"seconds"`
	FLOPS     float64 `json:"flops_per_s"` // 2MNK / Seconds
	Error     string  `json:"error,omitempty"`
}

// CopyResult is one bandwidth benchmark.
type CopyResult struct {
	// Kind is "d2d" (cuMemcpyDtoD), "rw" (placer_rw streaming kernel),
	// "h2d" and "d2h" (pinned host memory), or "peer" (cuMemcpyPeer).
	Kind     string `json:"kind"`
	Src, Dst int    // GPU ordinals (-1 = host)
	Bytes    int64  `json:"bytes"` // bytes per copy
	// Bandwidth is bytes moved per second over the link; for "d2d" and
	// "rw" it counts both the read and the write (device memory traffic).
	Bandwidth float64 `json:"bandwidth"`
	Seconds   float64 `json:"seconds"` // time of one large copy
	Latency   float64 `json:"latency"` // time of one 4-byte copy
	NVLinks   int     `json:"nvlinks,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// LaunchResult is the kernel launch overhead.
type LaunchResult struct {
	// GPU is the time per empty kernel of a long back-to-back sequence on
	// one stream (the GPU-side launch rate).
	GPU float64 `json:"gpu_s"`
	// Host is the time one cuLaunchKernel call takes on the host.
	Host float64 `json:"host_s"`
}

// MarshalText implements encoding.TextMarshaler.
func (p Precision) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Precision) UnmarshalText(b []byte) error {
	for i, n := range precisionNames {
		if strings.EqualFold(n, string(b)) {
			*p = Precision(i)
			return nil
		}
	}
	return fmt.Errorf("unknown precision %q", b)
}

// Bench runs the micro-benchmarks on GPU o.GPU and writes the report to
// out (tables, or JSON); progress goes to errw. With o.Profile it also
// writes the measured hardware profile. In a binary built without the
// `cuda` tag it returns ErrNoCUDA.
func Bench(ctx context.Context, out, errw io.Writer, o BenchOptions) error {
	rep, err := runBench(ctx, o, errw)
	if err != nil {
		return err
	}
	if o.Profile != "" {
		baseName, known, err := resolveBase(o.Base, rep.GPU)
		if err != nil {
			return err
		}
		base, _ := roofline.Preset(baseName)
		h := rep.Profile(base, known)
		if err := writeProfileFile(o.Profile, baseName, h); err != nil {
			return err
		}
		fmt.Fprintf(errw, "wrote hardware profile %s (base %s)\n", o.Profile, baseName)
	}
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return WriteBenchTable(out, rep)
}

// PresetFor is the hardware preset of a GPU name as NVML or CUDA reports
// it ("NVIDIA H100 80GB HBM3" -> "h100"), ok=false if none matches. A
// superchip's GPU before the bare part whose name its own holds ("NVIDIA
// GB200" -> "gb200", not "b200").
func PresetFor(gpuName string) (string, bool) {
	n := strings.ToUpper(gpuName)
	for _, p := range []string{"GB300", "GB200", "B300", "B200", "H200", "H100", "A100", "V100", "P100"} {
		if strings.Contains(n, p) {
			return strings.ToLower(p), true
		}
	}
	return "", false
}

// resolveBase picks the profile's base preset: the one asked for, else
// the GPU's own, else the default (known=false: its peaks are not this
// GPU's and measured rates replace them).
func resolveBase(asked, gpu string) (name string, known bool, err error) {
	own, ok := PresetFor(gpu)
	if asked != "" {
		if _, err := roofline.Preset(asked); err != nil {
			return "", false, err
		}
		return strings.ToLower(asked), ok && strings.EqualFold(asked, own), nil
	}
	if ok {
		return own, true, nil
	}
	return roofline.DefaultHardware, false, nil
}

// Profile turns the measurements into a hardware profile starting from
// base (known: base is this GPU's own preset, so its datasheet peaks
// stand). What it sets:
//
//   - Memory: the GPU's total memory.
//   - Launch: the larger of the GPU-side and host-side launch times.
//   - Peaks: for an unknown GPU, each precision's peak is its best
//     measured GEMM rate and the memory bandwidth the theoretical one.
//   - ComputeEff[matmul]: the median over precisions of measured / peak.
//   - MemEff[datamove] from the device-to-device copy, MemEff[elementwise]
//     from the streaming kernel (measured / MemBandwidth).
//   - PCIe bandwidth and latency: from peer copies between GPUs without
//     NVLink if there are any, else from host-to-device copies.
//   - NVLink: per-link bandwidth (peer bandwidth / links), link count and
//     latency from peer copies over NVLink; topology "pcie" when the GPUs
//     have no NVLink, "nvswitch" when every pair has the same links.
//
// Everything else (the other efficiencies, FP64 of a known GPU, ...) is
// the base's; placer calibrate fits the per-class efficiencies.
func (r *BenchReport) Profile(base roofline.Hardware, known bool) roofline.Hardware {
	h := base
	h.Name = "measured-" + slug(r.GPU)
	how := "preset " + base.Name
	if !known {
		how = "preset " + base.Name + " (not this GPU: peaks are measured rates)"
	}
	h.Source = fmt.Sprintf("placer hw bench on %s (GPU %d, compute capability %s); unmeasured figures from %s", r.GPU, r.Index, r.ComputeCapability, how)
	if r.MemoryTotal > 0 {
		h.Memory = r.MemoryTotal
	}
	if !known && r.TheoreticalMemBandwidth > 0 {
		h.MemBandwidth = r.TheoreticalMemBandwidth
	}
	if l := math.Max(r.Launch.GPU, r.Launch.Host); l > 0 {
		h.Launch = l
	}
	tensorCores := ccMajor(r.ComputeCapability) >= 7
	var effs []float64
	for _, g := range r.GEMM {
		if g.Error != "" || !(g.FLOPS > 0) {
			continue
		}
		if !known {
			setPeak(&h, g.Precision, g.FLOPS, tensorCores)
		}
		hh := h
		hh.AllowTF32 = g.Precision == TF32
		if peak := hh.PeakFLOPS(graph.ClassMatMul, g.Precision.DType()); peak > 0 {
			effs = append(effs, g.FLOPS/peak)
		}
	}
	if len(effs) > 0 {
		h.ComputeEff[graph.ClassMatMul] = clampEff(Median(effs))
	}
	var peerPCIe, nvBW, nvLat, pcieLat []float64
	var links []int
	pairs := 0
	for _, c := range r.Copies {
		if c.Error != "" || !(c.Bandwidth > 0) {
			continue
		}
		switch c.Kind {
		case "d2d":
			h.MemEff[graph.ClassDataMovement] = clampEff(c.Bandwidth / h.MemBandwidth)
		case "rw":
			h.MemEff[graph.ClassElementwise] = clampEff(c.Bandwidth / h.MemBandwidth)
		case "peer":
			pairs++
			if c.NVLinks > 0 {
				nvBW = append(nvBW, c.Bandwidth/float64(c.NVLinks))
				links = append(links, c.NVLinks)
				if c.Latency > 0 {
					nvLat = append(nvLat, c.Latency)
				}
			} else {
				peerPCIe = append(peerPCIe, c.Bandwidth)
				if c.Latency > 0 {
					pcieLat = append(pcieLat, c.Latency)
				}
			}
		}
	}
	if len(peerPCIe) > 0 {
		h.PCIeBandwidth = Median(peerPCIe)
	} else if c, ok := r.copyOf("h2d"); ok {
		h.PCIeBandwidth = c.Bandwidth
		if c.Latency > 0 {
			pcieLat = append(pcieLat, c.Latency)
		}
	}
	if len(pcieLat) > 0 {
		h.PCIeLatency = Median(pcieLat)
	}
	if len(nvBW) > 0 {
		h.NVLinkBandwidth = Median(nvBW)
		sort.Ints(links)
		h.NVLinks = links[len(links)-1]
		if h.NVLinkGen == 0 {
			h.NVLinkGen = 1 // NVLink present though the base had none
		}
		if len(nvLat) > 0 {
			h.NVLinkLatency = Median(nvLat)
		}
		if len(nvBW) == pairs && links[0] == links[len(links)-1] {
			h.Topology = "nvswitch"
		}
	}
	if (pairs > 0 && len(nvBW) == 0) || (pairs == 0 && r.NVLinks == 0) {
		h.Topology = "pcie"
	}
	return h
}

func (r *BenchReport) copyOf(kind string) (CopyResult, bool) {
	for _, c := range r.Copies {
		if c.Kind == kind && c.Error == "" && c.Bandwidth > 0 {
			return c, true
		}
	}
	return CopyResult{}, false
}

func setPeak(h *roofline.Hardware, p Precision, rate float64, tensorCores bool) {
	switch p {
	case FP32:
		h.FP32 = rate
	case TF32:
		h.TF32 = rate
	case FP16, BF16:
		if tensorCores {
			h.FP16Tensor = math.Max(h.FP16Tensor, rate)
		} else {
			h.FP16 = math.Max(h.FP16, rate)
		}
	case FP64:
		h.FP64 = rate
	case INT8:
		h.INT8Tensor = rate
	}
}

func ccMajor(cc string) int {
	var a, b int
	if _, err := fmt.Sscanf(cc, "%d.%d", &a, &b); err != nil {
		return 0
	}
	return a
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// WriteProfile writes h as a hardware profile (roofline.WriteHardware)
// with a "base" field naming the preset that fills in any field later
// removed from the file; placer's --hardware FILE reads it back
// (roofline.LoadHardware).
func WriteProfile(w io.Writer, base string, h roofline.Hardware) error {
	var buf bytes.Buffer
	if err := roofline.WriteHardware(&buf, h); err != nil {
		return err
	}
	b := buf.Bytes()
	if base == "" || len(b) < 2 || b[0] != '{' {
		_, err := w.Write(b)
		return err
	}
	name, err := json.Marshal(base)
	if err != nil {
		return err
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, "{\n  \"base\": "...)
	out = append(out, name...)
	out = append(out, ',')
	out = append(out, b[1:]...)
	_, err = w.Write(out)
	return err
}

// writeProfileFile writes the profile to path atomically, or to stdout
// for "-".
func writeProfileFile(path, base string, h roofline.Hardware) error {
	if err := h.Validate(); err != nil {
		return fmt.Errorf("hw: measured profile: %w", err)
	}
	if path == "-" {
		return WriteProfile(os.Stdout, base, h)
	}
	var buf bytes.Buffer
	if err := WriteProfile(&buf, base, h); err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}

// WriteBenchTable writes the report as tables: GEMMs, copies, launch.
func WriteBenchTable(w io.Writer, r *BenchReport) error {
	fmt.Fprintf(w, "GPU %d: %s, compute capability %s, %d SMs, %s GiB, CUDA driver %s\n",
		r.Index, r.GPU, orDash(r.ComputeCapability), r.SMs, gib(r.MemoryTotal), orDash(CUDAVersionString(r.CUDADriver)))
	rows := make([][]string, 0, len(r.GEMM))
	for _, g := range r.GEMM {
		row := []string{g.Precision.String(), fmt.Sprintf("%dx%dx%d", g.M, g.N, g.K), "-", "-", g.Error}
		if g.Error == "" {
			row[2] = fmt.Sprintf("%.3f", g.Seconds*1e3)
			row[3] = fmt.Sprintf("%.1f", g.FLOPS/1e12)
		}
		rows = append(rows, row)
	}
	if err := renderTable(w, []string{"GEMM", "M x N x K", "ms", "TFLOP/s", "note"}, rows); err != nil {
		return err
	}
	rows = rows[:0]
	for _, c := range r.Copies {
		row := []string{c.Kind, endpoint(c.Src) + " -> " + endpoint(c.Dst), fmt.Sprintf("%.0f", float64(c.Bytes)/(1<<20)), "-", "-", c.Error}
		if c.Error == "" {
			row[3] = fmt.Sprintf("%.1f", c.Bandwidth/1e9)
			if c.Latency > 0 {
				row[4] = fmt.Sprintf("%.1f", c.Latency*1e6)
			}
		}
		if c.NVLinks > 0 && c.Error == "" {
			row[5] = fmt.Sprintf("NV%d", c.NVLinks)
		}
		rows = append(rows, row)
	}
	if err := renderTable(w, []string{"copy", "route", "MiB", "GB/s", "latency us", "note"}, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "kernel launch: %.2f us per kernel on the GPU (back to back), %.2f us per launch call on the host\n", r.Launch.GPU*1e6, r.Launch.Host*1e6)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

func endpoint(i int) string {
	if i < 0 {
		return "host"
	}
	return fmt.Sprintf("GPU%d", i)
}

// CalibrateOptions are the options of `placer calibrate`.
type CalibrateOptions struct {
	GPU int // CUDA ordinal of the GPU to measure
	// Out is where to write the calibrated profile ("" or "-": stdout,
	// and the fit table goes to the error stream).
	Out string
	// Hardware is the profile or preset to calibrate (its peaks and
	// bandwidth are kept; a profile from `placer hw bench --profile` is
	// best). "" picks the preset from the GPU's name, failing for a GPU
	// without one.
	Hardware string
	JSON     bool // the fits as JSON instead of a table
	Quick    bool // fewer sizes and repeats
	// FromProfile is a profiled graph (torchexport --profile): fit to its
	// measured op times instead of measuring kernels on a GPU
	// (CalibrateFromProfile; any build). "" = measure.
	FromProfile string
}

// CalibrationRun is what the tagged executor measured for calibration.
type CalibrationRun struct {
	GPU         string         `json:"gpu"`
	MemoryTotal int64          `json:"memory_total"`
	Launch      float64        `json:"launch_s"` // per kernel, as in LaunchResult
	Timings     []KernelTiming `json:"timings"`
	Notes       []string       `json:"notes,omitempty"`
}

// Calibrate measures kernels of every op class on GPU o.GPU, fits the
// per-class efficiencies (FitEfficiencies) of the hardware profile and
// writes the calibrated profile. In a binary built without the `cuda`
// tag it returns ErrNoCUDA.
func Calibrate(ctx context.Context, out, errw io.Writer, o CalibrateOptions) error {
	run, err := runCalibrate(ctx, o, errw)
	if err != nil {
		return err
	}
	h, base, err := calibrationBase(o.Hardware, run.GPU)
	if err != nil {
		return err
	}
	return finishCalibration(out, errw, o, run, h, base)
}

// calibrationBase is the hardware to calibrate and the preset to name as
// its base.
func calibrationBase(asked, gpu string) (roofline.Hardware, string, error) {
	if asked == "" {
		name, ok := PresetFor(gpu)
		if !ok {
			return roofline.Hardware{}, "", fmt.Errorf("hw: no preset for GPU %q: run 'placer hw bench --profile FILE' first and calibrate with --hardware FILE", gpu)
		}
		h, err := roofline.Preset(name)
		return h, name, err
	}
	h, err := roofline.LoadHardware(asked)
	if err != nil {
		return roofline.Hardware{}, "", err
	}
	base := asked
	if _, err := roofline.Preset(asked); err != nil { // a file: its own base, if it names one
		base = ""
		if data, err := bounded.ReadFile(asked, bounded.Config, "a hardware file"); err == nil {
			var probe struct {
				Base string `json:"base"`
			}
			if json.Unmarshal(data, &probe) == nil {
				base = probe.Base
			}
		}
	}
	return h, base, nil
}

// finishCalibration fits, writes the profile and the fit report.
func finishCalibration(out, errw io.Writer, o CalibrateOptions, run CalibrationRun, h roofline.Hardware, base string) error {
	if run.Launch > 0 {
		h.Launch = run.Launch
	}
	if run.MemoryTotal > 0 {
		h.Memory = run.MemoryTotal
	}
	fitted, fits, err := FitEfficiencies(h, run.Timings)
	if err != nil {
		return err
	}
	fitted.Source = strings.TrimSpace(fmt.Sprintf("placer calibrate on %s; efficiencies fitted to %d kernel timings. %s", run.GPU, len(run.Timings), h.Source))
	return writeCalibration(out, errw, o, run, fitted, fits, base)
}

// writeCalibration writes the fitted profile and the fit report.
func writeCalibration(out, errw io.Writer, o CalibrateOptions, run CalibrationRun, fitted roofline.Hardware, fits []ClassFit, base string) error {
	report, profileOut := out, out
	if o.Out == "" || o.Out == "-" {
		report = errw
	} else {
		profileOut = nil
	}
	if profileOut != nil {
		if err := WriteProfile(profileOut, base, fitted); err != nil {
			return err
		}
	} else if err := writeProfileFile(o.Out, base, fitted); err != nil {
		return err
	}
	if o.JSON {
		enc := json.NewEncoder(report)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Fits  []ClassFit `json:"fits"`
			Notes []string   `json:"notes,omitempty"`
		}{fits, run.Notes})
	}
	return WriteFitTable(report, fits, run.Notes)
}

// WriteFitTable writes one row per class: efficiencies, whether each was
// fitted, the sample count and the fit's error.
func WriteFitTable(w io.Writer, fits []ClassFit, notes []string) error {
	rows := make([][]string, len(fits))
	for i, f := range fits {
		how := func(fitted bool) string {
			switch {
			case fitted:
				return "fitted"
			case f.Derived != "":
				return "from " + f.Derived
			}
			return "kept"
		}
		rows[i] = []string{f.Class.String(), fmt.Sprintf("%.3f", f.ComputeEff), how(f.ComputeFitted), fmt.Sprintf("%.3f", f.MemEff), how(f.MemFitted), fmt.Sprint(f.Samples), "-"}
		if f.Samples > 0 {
			rows[i][6] = fmt.Sprintf("%.1f%%", 100*f.RMSRelErr)
		}
	}
	if err := renderTable(w, []string{"class", "compute eff", "", "mem eff", "", "kernels", "rms error"}, rows); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}
