//go:build !cuda

package hw

import (
	"context"
	"io"
)

// CUDAEnabled reports whether this binary was built with the `cuda` tag.
const CUDAEnabled = false

func newExecutor(EvalOptions, int) (executor, error) { return nil, ErrNoCUDA }

func runBench(context.Context, BenchOptions, io.Writer) (*BenchReport, error) { return nil, ErrNoCUDA }

func runCalibrate(context.Context, CalibrateOptions, io.Writer) (CalibrationRun, error) {
	return CalibrationRun{}, ErrNoCUDA
}
