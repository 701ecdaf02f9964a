package hw

import (
	"errors"
	"os"
	"strings"
	"sync"
)

// cuBLAS is loaded at run time, the way NVML is: the CUDA binary links
// only the driver API (libcuda.so.1, stable across CUDA versions) and
// dlopens cuBLAS, trying libcublas.so.13, .12 and .11 in turn (or the
// path in $PLACER_CUBLAS), so one binary built here against CUDA 11.8's
// headers starts on hosts with CUDA 11.8 to 13 (docs/hardware.md). The
// calls placer makes (cublasGemmEx and the handle and stream calls) have
// kept their signatures and enum values from CUDA 11 to 13.

// CublasLib is a loaded cuBLAS: where it was found, its version (from
// cublasGetProperty) and the addresses of the functions placer calls.
type CublasLib struct {
	Path    string // as passed to dlopen
	Version string // major.minor.patch
	syms    []uintptr
}

// cublasSymbols are the functions placer calls, in the order CublasLib
// keeps their addresses. (cublas_v2.h names cublasCreate_v2 and its
// neighbours cublasCreate, and so on.)
var cublasSymbols = []string{
	"cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasGemmEx",
	"cublasSgemm_v2", "cublasDgemm_v2", "cublasGetProperty",
}

// CublasCandidates are the libraries LoadCublas tries, in order: the path
// in $PLACER_CUBLAS alone when it is set, else the sonames of CUDA 13, 12
// and 11.
func CublasCandidates() []string {
	if p := os.Getenv("PLACER_CUBLAS"); p != "" {
		return []string{p}
	}
	return []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}
}

var (
	cublasOnce sync.Once
	cublasLib  *CublasLib
	cublasErr0 error
)

// LoadCublas loads cuBLAS once per process (CublasCandidates) and returns
// it, or a one-line error that names every library tried and why.
func LoadCublas() (*CublasLib, error) {
	cublasOnce.Do(func() { cublasLib, cublasErr0 = openCublasLib(CublasCandidates()) })
	return cublasLib, cublasErr0
}

// sym returns the address of one of cublasSymbols.
func (l *CublasLib) sym(name string) uintptr {
	for i, s := range cublasSymbols {
		if s == name {
			return l.syms[i]
		}
	}
	panic("hw: unknown cuBLAS symbol " + name)
}

// ErrNoCublas matches the error of a cuBLAS that could not be loaded.
var ErrNoCublas = errors.New("hw: cuBLAS not found")

func cublasNotFound(tried []string) error {
	return &noCublasError{tried: tried}
}

type noCublasError struct{ tried []string }

func (e *noCublasError) Error() string {
	return ErrNoCublas.Error() + " (set PLACER_CUBLAS to its path): " + strings.Join(e.tried, "; ")
}

func (e *noCublasError) Is(target error) bool { return target == ErrNoCublas }
