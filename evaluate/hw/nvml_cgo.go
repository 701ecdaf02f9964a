//go:build cgo

package hw

import (
	"errors"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// SystemNVML returns the machine's NVML (libnvidia-ml.so.1, loaded by
// Init through go-nvml). It needs no driver to build or to call Init.
func SystemNVML() NVML { return &realNVML{} }

// realNVML adapts go-nvml's package-level API. ok guards every call
// after Init: go-nvml resolves symbols lazily, so a call without a
// successful Init would die on a missing symbol.
type realNVML struct {
	mu sync.Mutex
	ok bool
}

var errNotInitialized = errors.New("nvml: not initialized")

func nvmlErr(r nvml.Return) error {
	switch r {
	case nvml.SUCCESS:
		return nil
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		return ErrNotSupported
	}
	return errors.New(nvml.ErrorString(r))
}

func (n *realNVML) Init() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ok {
		return nil
	}
	if r := nvml.Init(); r != nvml.SUCCESS {
		// nvml.ErrorString needs the library; ERROR_LIBRARY_NOT_FOUND
		// means it is not loaded, so name that case ourselves.
		if r == nvml.ERROR_LIBRARY_NOT_FOUND {
			return errors.New("libnvidia-ml.so.1 not found")
		}
		return errors.New(nvml.ErrorString(r))
	}
	n.ok = true
	return nil
}

func (n *realNVML) Shutdown() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.ok {
		return nil
	}
	n.ok = false
	return nvmlErr(nvml.Shutdown())
}

func (n *realNVML) ready() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ok
}

func (n *realNVML) DriverVersion() (string, error) {
	if !n.ready() {
		return "", errNotInitialized
	}
	v, r := nvml.SystemGetDriverVersion()
	return v, nvmlErr(r)
}

func (n *realNVML) CUDADriverVersion() (int, error) {
	if !n.ready() {
		return 0, errNotInitialized
	}
	v, r := nvml.SystemGetCudaDriverVersion()
	return v, nvmlErr(r)
}

func (n *realNVML) NVMLVersion() (string, error) {
	if !n.ready() {
		return "", errNotInitialized
	}
	v, r := nvml.SystemGetNVMLVersion()
	return v, nvmlErr(r)
}

func (n *realNVML) DeviceCount() (int, error) {
	if !n.ready() {
		return 0, errNotInitialized
	}
	c, r := nvml.DeviceGetCount()
	return c, nvmlErr(r)
}

func (n *realNVML) Device(i int) (NVMLDevice, error) {
	if !n.ready() {
		return nil, errNotInitialized
	}
	d, r := nvml.DeviceGetHandleByIndex(i)
	if err := nvmlErr(r); err != nil {
		return nil, err
	}
	return realDevice{d: d}, nil
}

// realDevice is only ever made by realNVML.Device after a successful Init.
type realDevice struct{ d nvml.Device }

func (d realDevice) Name() (string, error) {
	s, r := d.d.GetName()
	return s, nvmlErr(r)
}

func (d realDevice) UUID() (string, error) {
	s, r := d.d.GetUUID()
	return s, nvmlErr(r)
}

func (d realDevice) PCIBusID() (string, error) {
	p, r := d.d.GetPciInfo()
	if err := nvmlErr(r); err != nil {
		return "", err
	}
	return busID(p), nil
}

func busID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return NormalizeBusID(string(b))
}

func (d realDevice) Memory() (uint64, uint64, error) {
	m, r := d.d.GetMemoryInfo()
	return m.Total, m.Free, nvmlErr(r)
}

func (d realDevice) Clock(c Clock, max bool) (int, error) {
	t := nvml.CLOCK_SM
	if c == ClockMem {
		t = nvml.CLOCK_MEM
	}
	var v uint32
	var r nvml.Return
	if max {
		v, r = d.d.GetMaxClockInfo(t)
	} else {
		v, r = d.d.GetClockInfo(t)
	}
	return int(v), nvmlErr(r)
}

func (d realDevice) ComputeCapability() (int, int, error) {
	a, b, r := d.d.GetCudaComputeCapability()
	return a, b, nvmlErr(r)
}

func (d realDevice) PCIeLink(max bool) (int, int, error) {
	var gen, width int
	var r nvml.Return
	if max {
		if gen, r = d.d.GetMaxPcieLinkGeneration(); r != nvml.SUCCESS {
			return 0, 0, nvmlErr(r)
		}
		width, r = d.d.GetMaxPcieLinkWidth()
	} else {
		if gen, r = d.d.GetCurrPcieLinkGeneration(); r != nvml.SUCCESS {
			return 0, 0, nvmlErr(r)
		}
		width, r = d.d.GetCurrPcieLinkWidth()
	}
	return gen, width, nvmlErr(r)
}

func (d realDevice) MemoryBusWidth() (int, error) {
	w, r := d.d.GetMemoryBusWidth()
	return int(w), nvmlErr(r)
}

func (d realDevice) NVLinkActive(link int) (bool, error) {
	s, r := d.d.GetNvLinkState(link)
	if r == nvml.ERROR_INVALID_ARGUMENT { // past the GPU's last link
		return false, ErrNotSupported
	}
	return s == nvml.FEATURE_ENABLED, nvmlErr(r)
}

func (d realDevice) NVLinkRemoteBusID(link int) (string, error) {
	p, r := d.d.GetNvLinkRemotePciInfo(link)
	if err := nvmlErr(r); err != nil {
		return "", err
	}
	return busID(p), nil
}

func (d realDevice) CommonAncestor(other NVMLDevice) (TopologyLevel, error) {
	o, ok := other.(realDevice)
	if !ok {
		return 0, ErrNotSupported
	}
	l, r := d.d.GetTopologyCommonAncestor(o.d)
	return TopologyLevel(l), nvmlErr(r)
}

func (d realDevice) P2PNVLink(other NVMLDevice) (bool, error) {
	o, ok := other.(realDevice)
	if !ok {
		return false, ErrNotSupported
	}
	s, r := d.d.GetP2PStatus(o.d, nvml.P2P_CAPS_INDEX_NVLINK)
	return s == nvml.P2P_STATUS_OK, nvmlErr(r)
}
