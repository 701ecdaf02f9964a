package main

import (
	"context"
	"errors"
	"io"

	"github.com/placer/placer/evaluate/hw"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/internal/fail"
	"github.com/spf13/cobra"
)

func init() {
	register(newHWCmd)
	register(newCalibrateCmd)
}

func newHWCmd(s *streams) *cobra.Command {
	o := hw.InfoOptions{}
	cmd := &cobra.Command{
		Use:   "hw",
		Short: "Show this machine's NVIDIA GPUs and how they are linked (NVML)",
		Long: `Show this machine's NVIDIA GPUs as NVML reports them: name, memory, clocks,
compute capability, driver and CUDA versions, PCIe link, and the NVLink/PCIe
topology matrix. Without an NVIDIA driver it prints one line naming the
hardware presets instead, and succeeds.

'placer hw bench' measures the GPU (binary built with 'make cuda').
See docs/hardware.md.`,
		Example: `  placer hw
  placer hw --json
  bin/placer-cuda hw bench --profile h100.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return hw.Info(s.Out, s.Err, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the inventory as one JSON object")
	cmd.AddCommand(newHWBenchCmd(s))
	return cmd
}

func newHWBenchCmd(s *streams) *cobra.Command {
	o := hw.BenchOptions{}
	var quiet bool
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure GEMM rates, memory, host and peer bandwidth, and launch overhead (CUDA build)",
		Long: `Measure one GPU with micro-benchmarks: cuBLAS GEMMs at every precision it
offers (FP32, TF32, FP16, BF16, FP64, INT8), device-memory bandwidth (copy
engine and a streaming kernel), host<->device bandwidth (pinned memory),
peer bandwidth and latency between every pair of GPUs, and kernel launch
overhead. With --profile it writes a hardware profile that --hardware FILE
accepts. Needs the binary built with 'make cuda' (bin/placer-cuda).`,
		Example: `  bin/placer-cuda hw bench
  bin/placer-cuda hw bench --profile measured.json --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkGPUOrdinal(o.GPU); err != nil {
				return err
			}
			return hw.Bench(cmd.Context(), s.Out, progressTo(s, quiet), o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.JSON, "json", false, "print the measurements as one JSON object")
	f.IntVar(&o.GPU, "gpu", 0, "CUDA ordinal of the GPU to measure")
	f.BoolVar(&o.Quick, "quick", false, "small sizes and few repeats: a smoke test, not a profile")
	f.StringVar(&o.Profile, "profile", "", "write the measured hardware profile to `FILE` ('-' = stdout)")
	f.StringVarP(&o.Profile, "out", "o", "", "the same as --profile")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	f.StringVar(&o.Base, "base", "", "preset the profile starts from (default: the GPU's own, else "+roofline.DefaultHardware+")")
	return cmd
}

func newCalibrateCmd(s *streams) *cobra.Command {
	o := hw.CalibrateOptions{}
	var quiet bool
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Fit the per-class efficiencies of a hardware profile to this GPU (CUDA build)",
		Long: `Measure kernels of every op class (GEMMs, elementwise, reductions, copies,
gathers) at several sizes on one GPU, fit the compute and memory
efficiencies of each class under the roofline model, and write the
calibrated hardware profile. Start from a preset (default: the GPU's own)
or from a profile written by 'placer hw bench --profile'. Needs the binary
built with 'make cuda' (bin/placer-cuda).

With --from-profile GRAPH the efficiencies, and the per-kernel launch time
with them, are fitted to the op times the framework measured instead (a
graph from 'torchexport --profile'), in any build: no GPU is needed here.`,
		Example: `  bin/placer-cuda calibrate --out h100.json
  bin/placer-cuda hw bench --profile measured.json && bin/placer-cuda calibrate --hardware measured.json --out calibrated.json
  placer calibrate --from-profile resnet50.json --hardware h100 --out h100-fitted.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return calibrate(cmd.Context(), s.Out, progressTo(s, quiet), o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.GPU, "gpu", 0, "CUDA ordinal of the GPU to measure")
	f.StringVarP(&o.Out, "out", "o", "", "write the calibrated profile to `FILE` (default: stdout, with the fit table on stderr)")
	f.StringVar(&o.Hardware, "hardware", "", "preset `NAME` or profile FILE to calibrate (default: the GPU's preset)")
	f.BoolVar(&o.JSON, "json", false, "print the fits as JSON")
	f.BoolVar(&o.Quick, "quick", false, "fewer sizes and repeats")
	f.StringVar(&o.FromProfile, "from-profile", "", "fit to the measured op times of this profiled graph `FILE` (torchexport --profile) instead of measuring kernels: any build, no GPU needed (default --hardware: the preset of the GPU its meta file names)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress (nor the fit table) on stderr")
	return cmd
}

// calibrate fits a hardware profile's per-class efficiencies to one GPU
// (CUDA builds), or to a profiled graph's measured op times
// (o.FromProfile, any build), writing the profile to out (or o.Out) and
// progress to progress.
func calibrate(ctx context.Context, out, progress io.Writer, o hw.CalibrateOptions) error {
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
