package hw

import (
	"errors"
	"fmt"
)

// fakeNVML is an in-memory NVML. calledBeforeInit records any call made
// without a successful Init (the real library would crash there).
type fakeNVML struct {
	initErr          error
	driver           string
	cuda             int
	devs             []*fakeDevice
	inited           bool
	shutdown         bool
	calledBeforeInit []string
	// ancestor[i][j] is the PCIe level between GPU i and j (default
	// TopologySystem).
	ancestor map[[2]int]TopologyLevel
	p2p      map[[2]int]bool
}

type fakeDevice struct {
	lib      *fakeNVML
	index    int
	name     string
	bus      string
	total    uint64
	free     uint64
	cc       [2]int
	links    map[int]string // active link -> remote bus id
	failName bool
}

func (f *fakeNVML) check(what string) error {
	if !f.inited {
		f.calledBeforeInit = append(f.calledBeforeInit, what)
		return errors.New("not initialized")
	}
	return nil
}

func (f *fakeNVML) Init() error {
	if f.initErr != nil {
		return f.initErr
	}
	f.inited = true
	return nil
}

func (f *fakeNVML) Shutdown() error {
	if err := f.check("Shutdown"); err != nil {
		return err
	}
	f.shutdown = true
	return nil
}

func (f *fakeNVML) DriverVersion() (string, error) { return f.driver, f.check("DriverVersion") }
func (f *fakeNVML) CUDADriverVersion() (int, error) {
	return f.cuda, f.check("CUDADriverVersion")
}
func (f *fakeNVML) NVMLVersion() (string, error) { return "12.550.54", f.check("NVMLVersion") }
func (f *fakeNVML) DeviceCount() (int, error)    { return len(f.devs), f.check("DeviceCount") }
func (f *fakeNVML) Device(i int) (NVMLDevice, error) {
	if err := f.check("Device"); err != nil {
		return nil, err
	}
	return f.devs[i], nil
}

func (d *fakeDevice) Name() (string, error) {
	if d.failName {
		return "", errors.New("GPU is lost")
	}
	return d.name, d.lib.check("Name")
}
func (d *fakeDevice) UUID() (string, error) {
	return fmt.Sprintf("GPU-%08d", d.index), d.lib.check("UUID")
}
func (d *fakeDevice) PCIBusID() (string, error) { return d.bus, d.lib.check("PCIBusID") }
func (d *fakeDevice) Memory() (uint64, uint64, error) {
	return d.total, d.free, d.lib.check("Memory")
}
func (d *fakeDevice) Clock(c Clock, max bool) (int, error) {
	v := map[Clock][2]int{ClockSM: {1410, 1980}, ClockMem: {2619, 2619}}[c]
	if max {
		return v[1], d.lib.check("Clock")
	}
	return v[0], d.lib.check("Clock")
}
func (d *fakeDevice) ComputeCapability() (int, int, error) {
	return d.cc[0], d.cc[1], d.lib.check("ComputeCapability")
}
func (d *fakeDevice) PCIeLink(max bool) (int, int, error) {
	if max {
		return 5, 16, d.lib.check("PCIeLink")
	}
	return 4, 16, d.lib.check("PCIeLink")
}
func (d *fakeDevice) MemoryBusWidth() (int, error) { return 5120, d.lib.check("MemoryBusWidth") }
func (d *fakeDevice) NVLinkActive(l int) (bool, error) {
	if err := d.lib.check("NVLinkActive"); err != nil {
		return false, err
	}
	if d.links == nil || l >= 18 {
		return false, ErrNotSupported
	}
	_, ok := d.links[l]
	return ok, nil
}
func (d *fakeDevice) NVLinkRemoteBusID(l int) (string, error) {
	return d.links[l], d.lib.check("NVLinkRemoteBusID")
}
func (d *fakeDevice) CommonAncestor(o NVMLDevice) (TopologyLevel, error) {
	if err := d.lib.check("CommonAncestor"); err != nil {
		return 0, err
	}
	j := o.(*fakeDevice).index
	if l, ok := d.lib.ancestor[[2]int{min(d.index, j), max(d.index, j)}]; ok {
		return l, nil
	}
	return TopologySystem, nil
}
func (d *fakeDevice) P2PNVLink(o NVMLDevice) (bool, error) {
	if err := d.lib.check("P2PNVLink"); err != nil {
		return false, err
	}
	j := o.(*fakeDevice).index
	return d.lib.p2p[[2]int{min(d.index, j), max(d.index, j)}], nil
}

// newFake makes n GPUs on buses 0x07, 0x0F, 0x47, ...
func newFake(name string, n int) *fakeNVML {
	f := &fakeNVML{driver: "550.54.15", cuda: 12040, ancestor: map[[2]int]TopologyLevel{}, p2p: map[[2]int]bool{}}
	for i := 0; i < n; i++ {
		f.devs = append(f.devs, &fakeDevice{
			lib: f, index: i, name: name, bus: fakeBus(i),
			total: 80 << 30, free: 79 << 30, cc: [2]int{9, 0},
		})
	}
	return f
}

func fakeBus(i int) string { return fmt.Sprintf("00000000:%02x:00.0", 7+8*i) }
