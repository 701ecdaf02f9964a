package jobs

// The CLI's hardware commands: hw (the NVML inventory), hw bench and
// calibrate (CUDA builds).

import (
	"context"
	"errors"
	"io"

	"github.com/placer/placer/evaluate/hw"
	"github.com/placer/placer/internal/fail"
)

// HWInfoOptions are `placer hw`'s options.
type HWInfoOptions = hw.InfoOptions

// HWBenchOptions are `placer hw bench`'s options.
type HWBenchOptions = hw.BenchOptions

// HWCalibrateOptions are `placer calibrate`'s options.
type HWCalibrateOptions = hw.CalibrateOptions

// HWInfo writes this machine's NVIDIA GPUs and their links to out (a
// line naming the presets instead when there is no NVIDIA driver), with
// warnings on errw.
func HWInfo(out, errw io.Writer, o HWInfoOptions) error { return hw.Info(out, errw, o) }

// HWBench measures one GPU with micro-benchmarks (CUDA builds), writing
// the report to out and progress to progress.
func HWBench(ctx context.Context, out, progress io.Writer, o HWBenchOptions) error {
	if err := checkGPUOrdinal(o.GPU); err != nil {
		return err
	}
	return hw.Bench(ctx, out, progress, o)
}

// HWCalibrate fits a hardware profile's per-class efficiencies to one GPU
// (CUDA builds), or to a profiled graph's measured op times
// (o.FromProfile, any build), writing the profile to out (or o.Out) and progress to
// progress.
func HWCalibrate(ctx context.Context, out, progress io.Writer, o HWCalibrateOptions) error {
	if o.FromProfile != "" {
		if o.Quick {
			return fail.Usagef("--quick measures kernels: it does not go with --from-profile")
		}
		err := hw.CalibrateFromProfile(out, progress, o)
		if errors.Is(err, hw.ErrNoHardware) {
			return fail.Usagef("%v", err)
		}
		return err
	}
	if err := checkGPUOrdinal(o.GPU); err != nil {
		return err
	}
	return hw.Calibrate(ctx, out, progress, o)
}

// checkGPUOrdinal checks a --gpu value.
func checkGPUOrdinal(gpu int) error {
	if gpu < 0 {
		return fail.Usagef("--gpu %d: must be a GPU ordinal (0, 1, ...)", gpu)
	}
	return nil
}
