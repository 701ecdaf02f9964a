package hw

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// NVML is the part of the NVIDIA Management Library that Discover uses.
// SystemNVML returns the real one (go-nvml); tests use a fake. Every
// method other than Init may be called only after Init succeeded: the
// real library resolves its symbols when Init loads libnvidia-ml, and a
// call before that dies on a missing symbol.
type NVML interface {
	// Init loads and initializes the library; an error means no usable
	// driver.
	Init() error
	// Shutdown releases the library after a successful Init.
	Shutdown() error
	// DriverVersion is the kernel driver's version, e.g. "550.54.15".
	DriverVersion() (string, error)
	// CUDADriverVersion is the CUDA version the driver supports, as
	// 1000*major + 10*minor (12040 = 12.4).
	CUDADriverVersion() (int, error)
	// NVMLVersion is the library's own version.
	NVMLVersion() (string, error)
	// DeviceCount is the number of GPUs the driver exposes.
	DeviceCount() (int, error)
	// Device returns GPU i, 0 <= i < DeviceCount.
	Device(i int) (NVMLDevice, error)
}

// Clock selects a clock domain of NVMLDevice.Clock.
type Clock int

// The clock domains placer reads.
const (
	ClockSM  Clock = iota // streaming multiprocessor clock
	ClockMem              // memory clock
)

// TopologyLevel is how close two GPUs' common PCIe ancestor is
// (nvmlGpuTopologyLevel_t), from the same board to across CPU sockets.
type TopologyLevel int

// The topology levels, in NVML's numbering.
const (
	TopologyInternal   TopologyLevel = 0  // same board (multi-GPU card)
	TopologySingle     TopologyLevel = 10 // one PCIe switch
	TopologyMultiple   TopologyLevel = 20 // several PCIe switches, no host bridge
	TopologyHostBridge TopologyLevel = 30 // the same PCIe host bridge
	TopologyNode       TopologyLevel = 40 // host bridges of one NUMA node
	TopologySystem     TopologyLevel = 50 // across NUMA nodes (SMP interconnect)
)

// String is the nvidia-smi topo -m label of the level.
func (l TopologyLevel) String() string {
	switch l {
	case TopologyInternal:
		return "BRD"
	case TopologySingle:
		return "PIX"
	case TopologyMultiple:
		return "PXB"
	case TopologyHostBridge:
		return "PHB"
	case TopologyNode:
		return "NODE"
	case TopologySystem:
		return "SYS"
	}
	return fmt.Sprintf("LEVEL%d", int(l))
}

// NVMLMaxLinks is the number of NVLink indices Discover probes per GPU
// (NVML_NVLINK_MAX_LINKS).
const NVMLMaxLinks = 36

// NVMLDevice is one GPU as NVML sees it. Methods return ErrNotSupported
// (or an error wrapping it) for a query the GPU or driver does not
// support; Discover skips those silently and records other errors as
// warnings.
type NVMLDevice interface {
	Name() (string, error)
	UUID() (string, error)
	// PCIBusID is the GPU's PCI address, e.g. "00000000:07:00.0".
	PCIBusID() (string, error)
	// Memory is the device memory in bytes: total and currently free.
	Memory() (total, free uint64, err error)
	// Clock is the current (max=false) or maximum (max=true) clock in MHz.
	Clock(c Clock, max bool) (mhz int, err error)
	// ComputeCapability is the CUDA compute capability, e.g. 9, 0.
	ComputeCapability() (major, minor int, err error)
	// PCIeLink is the current (max=false) or maximum PCIe generation and
	// lane width.
	PCIeLink(max bool) (gen, width int, err error)
	// MemoryBusWidth is the width of the memory bus in bits.
	MemoryBusWidth() (bits int, err error)
	// NVLinkActive reports whether NVLink link is up.
	NVLinkActive(link int) (bool, error)
	// NVLinkRemoteBusID is the PCI address of the device at the far end of
	// link (a GPU, or an NVSwitch).
	NVLinkRemoteBusID(link int) (string, error)
	// CommonAncestor is the closest PCIe topology level shared with other.
	CommonAncestor(other NVMLDevice) (TopologyLevel, error)
	// P2PNVLink reports whether peer-to-peer traffic to other can go over
	// NVLink (directly or through NVSwitch).
	P2PNVLink(other NVMLDevice) (bool, error)
}

// ErrNotSupported is returned by NVMLDevice methods for queries the GPU
// or driver does not support.
var ErrNotSupported = errors.New("hw: not supported")

// ErrNoDriver matches (errors.Is) every error Discover returns when NVML
// cannot be initialized: no libnvidia-ml, no kernel driver, or a binary
// built without cgo.
var ErrNoDriver = errors.New("hw: no NVIDIA driver found")

// NoDriverError is the typed error behind ErrNoDriver; Reason is what NVML
// said.
type NoDriverError struct {
	Reason string
}

// Error says that there is no driver, and why.
func (e *NoDriverError) Error() string {
	if e.Reason == "" {
		return ErrNoDriver.Error()
	}
	return ErrNoDriver.Error() + ": " + e.Reason
}

// Is makes errors.Is(err, ErrNoDriver) true.
func (e *NoDriverError) Is(target error) bool { return target == ErrNoDriver }

// NormalizeBusID returns a PCI address in NVML's canonical form
// "DDDDDDDD:BB:DD.F" (upper-case hex, 8-digit domain), so that addresses
// from different NVML calls compare equal. Strings that are not PCI
// addresses are returned upper-cased and trimmed.
func NormalizeBusID(s string) string {
	s = strings.ToUpper(strings.TrimSpace(strings.TrimRight(s, "\x00")))
	parts := strings.Split(s, ":")
	if len(parts) == 2 { // "BB:DD.F" without a domain
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 {
		return s
	}
	df := strings.Split(parts[2], ".")
	if len(df) != 2 {
		return s
	}
	var v [4]uint64
	for i, p := range []string{parts[0], parts[1], df[0], df[1]} {
		x, err := strconv.ParseUint(p, 16, 32)
		if err != nil {
			return s
		}
		v[i] = x
	}
	return fmt.Sprintf("%08X:%02X:%02X.%X", v[0], v[1], v[2], v[3])
}

// CUDAVersionString formats NVML's CUDA driver version (12040) as "12.4".
func CUDAVersionString(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
