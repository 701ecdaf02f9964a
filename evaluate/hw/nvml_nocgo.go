//go:build !cgo

package hw

import "errors"

// SystemNVML returns the machine's NVML. This binary was built without
// cgo, which go-nvml needs, so its Init always fails and Discover reports
// ErrNoDriver.
func SystemNVML() NVML { return noNVML{} }

type noNVML struct{}

var errNoCgo = errors.New("placer was built without cgo (CGO_ENABLED=0), which NVML needs")

func (noNVML) Init() error                     { return errNoCgo }
func (noNVML) Shutdown() error                 { return nil }
func (noNVML) DriverVersion() (string, error)  { return "", errNoCgo }
func (noNVML) CUDADriverVersion() (int, error) { return 0, errNoCgo }
func (noNVML) NVMLVersion() (string, error)    { return "", errNoCgo }
func (noNVML) DeviceCount() (int, error)       { return 0, errNoCgo }
func (noNVML) Device(int) (NVMLDevice, error)  { return nil, errNoCgo }
