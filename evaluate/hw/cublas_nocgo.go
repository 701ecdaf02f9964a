//go:build !cgo

package hw

import "errors"

// openCublasLib: this binary was built without cgo, which dlopen needs.
func openCublasLib([]string) (*CublasLib, error) {
	return nil, errors.New("hw: cuBLAS cannot be loaded: placer was built without cgo (CGO_ENABLED=0)")
}

// cublasCanLoad: this build cannot dlopen cuBLAS (no cgo).
const cublasCanLoad = false
