//go:build cgo

package hw

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

static uintptr_t placer_dlopen(const char *path) { return (uintptr_t)dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static void placer_dlclose(uintptr_t h) { dlclose((void *)h); }
static const char *placer_dlerror(void) {
	const char *e = dlerror();
	return e ? e : "";
}
static uintptr_t placer_dlsym(uintptr_t h, const char *name) {
	dlerror();
	return (uintptr_t)dlsym((void *)h, name);
}

// cublasGetProperty(libraryPropertyType, int *): no handle, no GPU.
typedef int (*placer_get_property_t)(int, int *);
static int placer_cublas_property(uintptr_t f, int which, int *v) { return ((placer_get_property_t)f)(which, v); }
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// openCublasLib dlopens the first of candidates that has every symbol
// of cublasSymbols and reads its version. The library stays loaded for
// the process (as NVML does).
func openCublasLib(candidates []string) (*CublasLib, error) {
	var tried []string
	for _, name := range candidates {
		cname := C.CString(name)
		h := C.placer_dlopen(cname)
		C.free(unsafe.Pointer(cname))
		if h == 0 {
			tried = append(tried, C.GoString(C.placer_dlerror()))
			continue
		}
		lib := &CublasLib{Path: name, syms: make([]uintptr, len(cublasSymbols))}
		var missing string
		for i, s := range cublasSymbols {
			cs := C.CString(s)
			p := C.placer_dlsym(h, cs)
			C.free(unsafe.Pointer(cs))
			if p == 0 {
				missing = s
				break
			}
			lib.syms[i] = uintptr(p)
		}
		if missing != "" {
			C.placer_dlclose(h)
			tried = append(tried, fmt.Sprintf("%s: no symbol %s", name, missing))
			continue
		}
		var v [3]C.int
		for i := range v {
			// libraryPropertyType: MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2.
			if st := C.placer_cublas_property(C.uintptr_t(lib.sym("cublasGetProperty")), C.int(i), &v[i]); st != 0 {
				C.placer_dlclose(h)
				return nil, fmt.Errorf("hw: %s: cublasGetProperty: status %d", name, int(st))
			}
		}
		lib.Version = fmt.Sprintf("%d.%d.%d", int(v[0]), int(v[1]), int(v[2]))
		return lib, nil
	}
	return nil, cublasNotFound(tried)
}

// cublasCanLoad: this build can dlopen cuBLAS (it has cgo).
const cublasCanLoad = true
