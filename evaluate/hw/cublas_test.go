package hw

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/placer/placer/internal/torchenv"
)

// goTool is the go command that built this test: its GOROOT's, or the
// one on PATH where the binary knows no GOROOT (built with -trimpath, as
// make test builds).
func goTool() string {
	if root := runtime.GOROOT(); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

// stubCublas builds a shared library with cuBLAS's entry points (which
// do nothing) and cublasGetProperty answering 12.3.4, leaving out the
// functions in omit, and returns its path.
func stubCublas(t *testing.T, name string, omit ...string) string {
	t.Helper()
	if !cublasCanLoad {
		t.Skip("built without cgo: cuBLAS cannot be loaded")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		out, err := exec.Command(goTool(), "env", "CC").Output()
		if err != nil {
			t.Skipf("no C compiler to build a stub cuBLAS: go env CC: %v", err)
		}
		cc = strings.Fields(string(out))[0]
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler (%s) to build a stub cuBLAS", cc)
	}
	bodies := map[string]string{
		"cublasCreate_v2":    "int cublasCreate_v2(void **h) { *h = (void *)0x1; return 0; }",
		"cublasDestroy_v2":   "int cublasDestroy_v2(void *h) { return 0; }",
		"cublasSetStream_v2": "int cublasSetStream_v2(void *h, void *s) { return 0; }",
		"cublasGemmEx":       "int cublasGemmEx(void) { return 0; }",
		"cublasSgemm_v2":     "int cublasSgemm_v2(void) { return 0; }",
		"cublasDgemm_v2":     "int cublasDgemm_v2(void) { return 0; }",
		"cublasGetProperty":  "int cublasGetProperty(int which, int *v) { static const int ver[3] = {12, 3, 4}; *v = ver[which]; return 0; }",
	}
	var src strings.Builder
	for _, s := range cublasSymbols {
		if !contains(omit, s) {
			src.WriteString(bodies[s] + "\n")
		}
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "stub.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, name)
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, c).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	return lib
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestCublasLoad: the loader takes the first candidate that opens and has
// every function placer calls, and reads its version.
func TestCublasLoad(t *testing.T) {
	good := stubCublas(t, "libcublas.so.12")
	noGemm := stubCublas(t, "libcublas.so.13", "cublasGemmEx")
	lib, err := openCublasLib([]string{"libcublas-placer-absent.so.13", noGemm, good})
	if err != nil {
		t.Fatal(err)
	}
	if lib.Path != good || lib.Version != "12.3.4" {
		t.Errorf("loaded %s version %s, want %s version 12.3.4", lib.Path, lib.Version, good)
	}
	for i, s := range cublasSymbols {
		if lib.syms[i] == 0 || lib.sym(s) != lib.syms[i] {
			t.Errorf("%s: address %#x", s, lib.syms[i])
		}
	}
}

// TestCublasNotFound: no cuBLAS is one line naming every library tried
// and why, matching ErrNoCublas.
func TestCublasNotFound(t *testing.T) {
	noGemm := stubCublas(t, "libcublas.so.13", "cublasGemmEx")
	_, err := openCublasLib([]string{"libcublas-placer-absent.so.12", noGemm})
	if err == nil {
		t.Fatal("loaded a cuBLAS that is not there")
	}
	msg := err.Error()
	if !errors.Is(err, ErrNoCublas) || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line matching ErrNoCublas", msg)
	}
	for _, want := range []string{"libcublas-placer-absent.so.12", noGemm + ": no symbol cublasGemmEx", "PLACER_CUBLAS"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
}

func TestCublasCandidates(t *testing.T) {
	t.Setenv("PLACER_CUBLAS", "")
	if got := strings.Join(CublasCandidates(), " "); got != "libcublas.so.13 libcublas.so.12 libcublas.so.11" {
		t.Errorf("candidates %s", got)
	}
	t.Setenv("PLACER_CUBLAS", "/opt/x/libcublas.so")
	if got := strings.Join(CublasCandidates(), " "); got != "/opt/x/libcublas.so" {
		t.Errorf("with PLACER_CUBLAS: candidates %s", got)
	}
}

// TestCublasReal loads a real cuBLAS when this machine has one: the
// system's (libcublas.so.13, .12, .11 on the loader's path: Debian's
// nvidia-cuda-dev brings .11) or the one in PyTorch's wheels in the
// exporter's virtualenv (make venv: CUDA 13's). cublasGetProperty needs
// no GPU.
func TestCublasReal(t *testing.T) {
	if !cublasCanLoad {
		t.Skip("built without cgo: cuBLAS cannot be loaded")
	}
	cands := []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}
	venv := torchenv.Venv()
	for _, pat := range []string{"lib/python3*/site-packages/nvidia/cu*/lib/libcublas.so.*", "lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.*"} {
		m, _ := filepath.Glob(filepath.Join(venv, pat))
		cands = append(cands, m...)
	}
	lib, err := openCublasLib(cands)
	if errors.Is(err, ErrNoCublas) {
		t.Skipf("no cuBLAS on this machine (make venv brings CUDA 13's with PyTorch): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	major := strings.SplitN(lib.Version, ".", 2)[0]
	if major != "11" && major != "12" && major != "13" {
		t.Errorf("%s: version %s, want CUDA 11, 12 or 13's cuBLAS", lib.Path, lib.Version)
	}
	t.Logf("loaded %s, cuBLAS %s", lib.Path, lib.Version)
}

// TestLoadCublasOnce: the process loads cuBLAS once: a second call
// returns the first one's library and error, whatever this machine has.
func TestLoadCublasOnce(t *testing.T) {
	l1, err1 := LoadCublas()
	l2, err2 := LoadCublas()
	if l1 != l2 || err1 != err2 {
		t.Errorf("two loads: %p %v, then %p %v", l1, err1, l2, err2)
	}
	if (l1 == nil) == (err1 == nil) {
		t.Errorf("library %p and error %v: want exactly one", l1, err1)
	}
}
