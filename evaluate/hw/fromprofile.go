package hw

// placer calibrate --from-profile: the efficiencies fitted to the op
// times a framework measured (torchexport --profile) instead of to
// placer's own kernels.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/bounded"
)

// ProfileTimings are the measured ops of a profiled graph (graph.Op.HasTime)
// as kernel timings for FitEfficiencies: each op's class, dtype, FLOPs,
// bytes read and written, and measured time, f32 matmuls and
// convolutions held against the TF32 peak where the graph's recorded
// settings (else h) put them on TF32 (as the model predicts them:
// roofline.ResolveTF32). Ops that do no work by these counts (views, ops
// of class unknown) are left out, as are state ops (Input, Parameter,
// Buffer).
func ProfileTimings(g *graph.Graph, h roofline.Hardware) []KernelTiming {
	tf32 := roofline.ResolveTF32(g, &h, nil) // the graph's recorded settings, else the hardware's
	var ts []KernelTiming
	for i := range g.NumOps() {
		op := g.Op(i)
		if !op.HasTime || op.Time <= 0 || op.Class == graph.ClassUnknown || op.FLOPs == 0 && op.BytesRead+op.BytesWritten == 0 {
			continue
		}
		if op.Type == "Input" || op.Type == "Parameter" || op.Type == "Buffer" {
			continue
		}
		onTF32 := op.DType == graph.F32 && (op.Class == graph.ClassMatMul && tf32.MatMul || op.Class == graph.ClassConv && tf32.Conv)
		ts = append(ts, KernelTiming{
			Class: op.Class, DType: op.DType, TF32: onTF32,
			Name: op.Name, FLOPs: op.FLOPs, Bytes: float64(op.BytesRead + op.BytesWritten), Seconds: op.Time,
		})
	}
	return ts
}

// PredictKernel is the roofline's time for a kernel timing's work on h
// (the formula FitEfficiencies fits).
func PredictKernel(h *roofline.Hardware, t KernelTiming) float64 {
	hh := *h
	hh.AllowTF32 = t.TF32
	c := 0.0
	if t.FLOPs > 0 {
		c = t.FLOPs / (hh.PeakFLOPS(t.Class, t.DType) * h.ComputeEff[t.Class])
	}
	return h.Launch + math.Max(c, t.Bytes/(h.MemBandwidth*h.MemEff[t.Class]))
}

// RMSLogError is the root mean square of ln(predicted/measured) over ts
// on h: 0.1 is about 10% off.
func RMSLogError(h *roofline.Hardware, ts []KernelTiming) float64 {
	if len(ts) == 0 {
		return 0
	}
	s := 0.0
	for _, t := range ts {
		d := math.Log(PredictKernel(h, t) / t.Seconds)
		s += d * d
	}
	return math.Sqrt(s / float64(len(ts)))
}

// ErrNoHardware says that calibrate --from-profile does not know which
// hardware the profile was measured on.
var ErrNoHardware = errors.New("hw: calibrate --from-profile: name the hardware the profile was measured on with --hardware PRESET|FILE")

// CalibrateFromProfile fits the per-class efficiencies and the
// per-kernel launch time of the hardware o.Hardware (default: the preset
// of the GPU the exporter's meta file names, GRAPH.meta.json beside the
// graph) to the measured op times of the profiled graph o.FromProfile
// (FitEfficienciesLaunch on ProfileTimings) and writes the profile as
// Calibrate does, with the fit table, the RMS error of the predicted op
// times before and after, and the launch time fitted (with the error
// the efficiencies alone reach at the base's launch time).
func CalibrateFromProfile(out, errw io.Writer, o CalibrateOptions) error {
	f, err := bounded.Open(o.FromProfile, bounded.Decision, "a profile")
	if err != nil {
		return fmt.Errorf("calibrate --from-profile: %w", err)
	}
	g, err := graph.Read(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("calibrate --from-profile %s: %w", o.FromProfile, err)
	}
	device := profiledDevice(o.FromProfile)
	asked := o.Hardware
	if asked == "" {
		name, ok := PresetFor(device)
		if !ok {
			return ErrNoHardware
		}
		asked = name
	}
	h, base, err := calibrationBase(asked, device)
	if err != nil {
		return err
	}
	ts := ProfileTimings(g, h)
	if len(ts) == 0 {
		return fmt.Errorf("calibrate --from-profile %s: no op has a measured time (export it with torchexport --profile)", o.FromProfile)
	}
	if device == "" {
		device = "the device it was profiled on"
	}
	kept, _, err := FitEfficiencies(h, ts)
	if err != nil {
		return err
	}
	fitted, fits, err := FitEfficienciesLaunch(h, ts)
	if err != nil {
		return err
	}
	before, after := RMSLogError(&h, ts), RMSLogError(&fitted, ts)
	run := CalibrationRun{GPU: device, Timings: ts, Notes: []string{fmt.Sprintf(
		"fitted to %d measured ops of %s; RMS error of their predicted times (log): %.1f%% with %s, %.1f%% fitted",
		len(ts), g.Name(), 100*before, h.Name, 100*after), fmt.Sprintf(
		"launch time fitted with the efficiencies: %s per kernel (%s's %s kept: %.1f%%)",
		seconds(fitted.Launch), h.Name, seconds(h.Launch), 100*RMSLogError(&kept, ts))}}
	if note := FasterThanPeakNote(fits, &h, device); note != "" {
		run.Notes = append(run.Notes, note)
	}
	fitted.Source = strings.TrimSpace(fmt.Sprintf("placer calibrate --from-profile %s (%s); efficiencies and launch time fitted to %d framework-measured ops. %s",
		o.FromProfile, device, len(ts), h.Source))
	return writeCalibration(out, errw, o, run, fitted, fits, base)
}

// profiledDevice is the device the exporter's meta file beside path says
// the graph was profiled on, or "".
func profiledDevice(path string) string {
	data, err := bounded.ReadFile(strings.TrimSuffix(path, ".json")+".meta.json", bounded.Decision, "an exporter's meta file")
	if err != nil {
		return ""
	}
	var m struct {
		Profile struct {
			Device string `json:"device"`
		} `json:"profile"`
	}
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	return m.Profile.Device
}
