package hw

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// cudaDevFiles reports whether the CUDA headers and libraries the `cuda`
// build links against are installed, and names the first one missing.
func cudaDevFiles() (bool, string) {
	find := func(name string, dirs ...string) bool {
		for _, d := range dirs {
			if _, err := os.Stat(filepath.Join(d, name)); err == nil {
				return true
			}
		}
		return false
	}
	inc := []string{"/usr/include", "/usr/local/cuda/include"}
	lib := []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/cuda/lib64", "/usr/local/cuda/lib64/stubs"}
	for _, f := range []struct {
		name string
		dirs []string
	}{
		{"cuda.h", inc}, {"cublas_v2.h", inc}, {"libcuda.so", lib}, {"libcublas.so", lib},
	} {
		if !find(f.name, f.dirs...) {
			return false, f.name
		}
	}
	return true, ""
}

// TestCUDABuildCompiles type-checks and vets the `cuda`-tagged code (the
// executor, the benchmarks, cgo against cuda.h and cublas_v2.h) when the
// CUDA headers and libraries are installed (make cuda installs them), and
// skips otherwise: the default build and CI need no CUDA.
func TestCUDABuildCompiles(t *testing.T) {
	if CUDAEnabled {
		t.Skip("this test binary is the cuda build itself")
	}
	if testing.Short() {
		t.Skip("-short: compiling gorgonia.org/cu takes a while")
	}
	if ok, missing := cudaDevFiles(); !ok {
		t.Skipf("%s not installed: the cuda build cannot be checked here (make cuda installs nvidia-cuda-dev)", missing)
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(goBin, "vet", "-tags", "cuda", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go vet -tags cuda: %v\n%s", err, out)
	}
}
