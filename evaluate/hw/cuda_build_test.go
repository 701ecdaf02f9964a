package hw

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cudaHeaders returns the CGO_CFLAGS and CGO_LDFLAGS that the `cuda` build
// needs on this machine: none when the system has cuda.h and cublas_v2.h
// (but its cccl/, where CUDA 13 keeps CCCL's headers), else those of the
// headers and the libcuda stub that scripts/install-cuda-dev.sh unpacks
// into $CUDA_DEV_DIR (default ~/.cache/placer/cuda-dev; make test and make
// cuda run it). ok is false, and missing names what is absent, when
// neither is there.
func cudaHeaders() (cflags, ldflags string, ok bool, missing string) {
	for _, d := range []string{"/usr/local/cuda/include", "/usr/include"} {
		if fileExists(filepath.Join(d, "cuda.h")) && fileExists(filepath.Join(d, "cublas_v2.h")) {
			if cccl := filepath.Join(d, "cccl"); fileExists(cccl) {
				return "-I" + cccl, "", true, "" // CUDA 13 keeps CCCL's headers there
			}
			return "", "", true, ""
		}
	}
	dir := os.Getenv("CUDA_DEV_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", "", false, "cuda.h"
		}
		dir = filepath.Join(cache, "placer", "cuda-dev")
	}
	for _, f := range []string{"include/cuda.h", "include/cublas_v2.h", "lib/libcuda.so"} {
		if !fileExists(filepath.Join(dir, f)) {
			return "", "", false, filepath.Join(dir, f)
		}
	}
	return "-I" + filepath.Join(dir, "include"), "-L" + filepath.Join(dir, "lib"), true, ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestCUDABuildCompiles vets the `cuda`-tagged code (the executor, the
// benchmarks, cgo against cuda.h and cublas_v2.h) and builds the CUDA
// binary, then checks what it links: the driver API (libcuda.so.1) and
// no cuBLAS, which it loads at run time (cublaslib.go). Skipped, with the
// reason, where the CUDA headers are absent (make test installs them),
// and under make test, whose cuda-check makes the same checks just before
// (PLACER_CUDA_CHECKED=1).
func TestCUDABuildCompiles(t *testing.T) {
	if CUDAEnabled {
		t.Skip("this test binary is the cuda build itself")
	}
	if testing.Short() {
		t.Skip("-short: compiling gorgonia.org/cu takes a while")
	}
	if os.Getenv("PLACER_CUDA_CHECKED") == "1" {
		t.Skip("PLACER_CUDA_CHECKED=1: make test's cuda-check vetted and built the cuda build and read what it links in this run")
	}
	cflags, ldflags, ok, missing := cudaHeaders()
	if !ok {
		t.Skipf("%s not installed: the cuda build cannot be checked here (make cuda-dev unpacks Debian's CUDA headers)", missing)
	}
	// cuda13compat/cuda.h first on the include path, as make cuda puts it:
	// under CUDA 13 headers gorgonia.org/cu needs it.
	compat, err := filepath.Abs("cuda13compat")
	if err != nil {
		t.Fatal(err)
	}
	goBin := goTool()
	env := append(os.Environ(), "CGO_ENABLED=1",
		"CGO_CFLAGS=-O2 -g -Wno-deprecated-declarations -I"+compat+" "+cflags, "CGO_LDFLAGS="+ldflags)
	vet := exec.Command(goBin, "vet", "-tags", "cuda", ".")
	vet.Env = env
	if out, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("go vet -tags cuda: %v\n%s", err, out)
	}
	bin := filepath.Join(t.TempDir(), "placer-cuda")
	build := exec.Command(goBin, "build", "-tags", "cuda", "-o", bin, "../../cmd/placer")
	build.Env = env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags cuda: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if !contains(libs, "libcuda.so.1") {
		t.Errorf("the CUDA binary links %v, not libcuda.so.1", libs)
	}
	for _, l := range libs {
		if strings.Contains(l, "cublas") {
			t.Errorf("the CUDA binary links %s; it must load cuBLAS at run time (links %v)", l, libs)
		}
	}
	t.Logf("placer-cuda links %v", libs)
}
