package hw

import (
	"errors"
	"fmt"
	"strings"
)

// Inventory is what NVML reports about this machine's GPUs.
type Inventory struct {
	DriverVersion string `json:"driver_version"`
	CUDAVersion   string `json:"cuda_version"` // highest CUDA version the driver supports, "12.4"
	NVMLVersion   string `json:"nvml_version"`
	GPUs          []GPU  `json:"gpus"`
	// Topology is the GPU x GPU link matrix: Topology[i][j] is how GPU i
	// reaches GPU j (Kind "X" on the diagonal).
	Topology [][]Link `json:"topology"`
	// Warnings lists the queries NVML failed for reasons other than "not
	// supported" (the figures they would have filled are zero).
	Warnings []string `json:"warnings,omitempty"`
}

// GPU is one GPU. Memory is in bytes, clocks in MHz; zero means NVML
// could not say.
type GPU struct {
	Index    int    `json:"index"`
	Name     string `json:"name"`
	UUID     string `json:"uuid"`
	PCIBusID string `json:"pci_bus_id"`

	MemoryTotal int64 `json:"memory_total"`
	MemoryFree  int64 `json:"memory_free"`
	// MemoryBusWidth is the memory interface width in bits.
	MemoryBusWidth int `json:"memory_bus_width"`

	SMClock        int `json:"sm_clock_mhz"`
	SMClockMax     int `json:"sm_clock_max_mhz"`
	MemoryClock    int `json:"mem_clock_mhz"`
	MemoryClockMax int `json:"mem_clock_max_mhz"`

	ComputeCapability string `json:"compute_capability"` // "9.0"
	CCMajor           int    `json:"cc_major"`
	CCMinor           int    `json:"cc_minor"`

	PCIeGen      int `json:"pcie_gen"`
	PCIeWidth    int `json:"pcie_width"`
	PCIeGenMax   int `json:"pcie_gen_max"`
	PCIeWidthMax int `json:"pcie_width_max"`

	// NVLinks lists the GPU's active NVLinks.
	NVLinks []NVLink `json:"nvlinks,omitempty"`
}

// NVLink is one active NVLink of a GPU.
type NVLink struct {
	Link        int    `json:"link"`
	RemoteBusID string `json:"remote_pci_bus_id"`
	// RemoteGPU is the index of the GPU at the far end, or -1 when the far
	// end is not one of this machine's GPUs (an NVSwitch).
	RemoteGPU int `json:"remote_gpu"`
}

// Link is how one GPU reaches another.
type Link struct {
	// Kind is the nvidia-smi topo -m label: "X" (itself), "NV<n>" (n
	// NVLinks, direct or through NVSwitch), or the PCIe path: "PIX" (one
	// PCIe switch), "PXB" (several switches), "PHB" (a host bridge),
	// "NODE" (host bridges of one NUMA node), "SYS" (across NUMA nodes),
	// "BRD" (same board); "?" when NVML could not say.
	Kind string `json:"kind"`
	// NVLinks is the number of NVLinks between the two (0 = PCIe only).
	NVLinks int `json:"nvlinks"`
	// ViaSwitch says the NVLinks go through NVSwitch.
	ViaSwitch bool `json:"via_nvswitch,omitempty"`
	// PCIe is the PCIe path label, whatever Kind is ("" on the diagonal).
	PCIe string `json:"pcie,omitempty"`
}

// TheoreticalMemBandwidth is the memory bandwidth implied by the maximum
// memory clock and the bus width (double data rate), bytes/s; 0 if
// either is unknown. For HBM GPUs it matches the datasheet (A100 80GB:
// 1593 MHz x 2 x 5120 bit / 8 = 2.04 TB/s).
func (g *GPU) TheoreticalMemBandwidth() float64 {
	if g.MemoryClockMax <= 0 || g.MemoryBusWidth <= 0 {
		return 0
	}
	return float64(g.MemoryClockMax) * 1e6 * 2 * float64(g.MemoryBusWidth) / 8
}

// Discover reads the inventory of this machine's GPUs through NVML. With
// no usable driver it returns an error matching ErrNoDriver (a
// *NoDriverError); it never calls NVML beyond a failed Init.
func Discover() (*Inventory, error) { return DiscoverWith(SystemNVML()) }

// DiscoverWith is Discover over the given NVML (a fake in tests).
func DiscoverWith(lib NVML) (*Inventory, error) {
	if err := lib.Init(); err != nil {
		return nil, &NoDriverError{Reason: err.Error()}
	}
	defer lib.Shutdown()

	inv := &Inventory{}
	warn := func(what string, err error) {
		if err != nil && !errors.Is(err, ErrNotSupported) {
			inv.Warnings = append(inv.Warnings, fmt.Sprintf("%s: %v", what, err))
		}
	}
	var err error
	inv.DriverVersion, err = lib.DriverVersion()
	warn("driver version", err)
	cuda, err := lib.CUDADriverVersion()
	warn("CUDA version", err)
	inv.CUDAVersion = CUDAVersionString(cuda)
	inv.NVMLVersion, err = lib.NVMLVersion()
	warn("NVML version", err)

	n, err := lib.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("nvml: device count: %w", err)
	}
	devs := make([]NVMLDevice, 0, n)
	for i := 0; i < n; i++ {
		d, err := lib.Device(i)
		if err != nil {
			// A GPU the driver lists but cannot open (lost, or no
			// permission) is skipped with a warning.
			inv.Warnings = append(inv.Warnings, fmt.Sprintf("GPU %d: cannot be opened: %v", i, err))
			continue
		}
		inv.GPUs = append(inv.GPUs, readGPU(i, d, warn))
		devs = append(devs, d)
	}
	inv.Topology = topology(inv.GPUs, devs, warn)
	return inv, nil
}

func readGPU(i int, d NVMLDevice, warn func(string, error)) GPU {
	g := GPU{Index: i}
	w := func(what string, err error) { warn(fmt.Sprintf("GPU %d %s", i, what), err) }
	var err error
	g.Name, err = d.Name()
	w("name", err)
	g.UUID, err = d.UUID()
	w("uuid", err)
	bus, err := d.PCIBusID()
	w("pci bus id", err)
	g.PCIBusID = NormalizeBusID(bus)
	total, free, err := d.Memory()
	w("memory", err)
	g.MemoryTotal, g.MemoryFree = int64(total), int64(free)
	g.MemoryBusWidth, err = d.MemoryBusWidth()
	w("memory bus width", err)
	g.SMClock, err = d.Clock(ClockSM, false)
	w("SM clock", err)
	g.SMClockMax, err = d.Clock(ClockSM, true)
	w("max SM clock", err)
	g.MemoryClock, err = d.Clock(ClockMem, false)
	w("memory clock", err)
	g.MemoryClockMax, err = d.Clock(ClockMem, true)
	w("max memory clock", err)
	g.CCMajor, g.CCMinor, err = d.ComputeCapability()
	w("compute capability", err)
	if err == nil {
		g.ComputeCapability = fmt.Sprintf("%d.%d", g.CCMajor, g.CCMinor)
	}
	g.PCIeGen, g.PCIeWidth, err = d.PCIeLink(false)
	w("PCIe link", err)
	g.PCIeGenMax, g.PCIeWidthMax, err = d.PCIeLink(true)
	w("max PCIe link", err)
	for l := 0; l < NVMLMaxLinks; l++ {
		up, err := d.NVLinkActive(l)
		if err != nil || !up {
			// Links past the GPU's last, and GPUs without NVLink, answer
			// "not supported"; a link that is down is simply not listed.
			w(fmt.Sprintf("NVLink %d state", l), err)
			continue
		}
		remote, err := d.NVLinkRemoteBusID(l)
		w(fmt.Sprintf("NVLink %d remote", l), err)
		g.NVLinks = append(g.NVLinks, NVLink{Link: l, RemoteBusID: NormalizeBusID(remote), RemoteGPU: -1})
	}
	return g
}

// topology builds the link matrix: direct NVLinks (remote bus id is the
// other GPU), NVLinks through NVSwitch (P2P over NVLink reported OK, both
// GPUs' links end at non-GPU devices), otherwise the PCIe common ancestor.
func topology(gpus []GPU, devs []NVMLDevice, warn func(string, error)) [][]Link {
	n := len(gpus)
	byBus := make(map[string]int, n)
	for i := range gpus {
		if gpus[i].PCIBusID != "" {
			byBus[gpus[i].PCIBusID] = i
		}
	}
	direct := make([][]int, n)
	switchLinks := make([]int, n)
	for i := range gpus {
		direct[i] = make([]int, n)
		for k := range gpus[i].NVLinks {
			l := &gpus[i].NVLinks[k]
			if j, ok := byBus[l.RemoteBusID]; ok && j != i && l.RemoteBusID != "" {
				l.RemoteGPU = j
				direct[i][j]++
			} else {
				switchLinks[i]++
			}
		}
	}
	m := make([][]Link, n)
	for i := range m {
		m[i] = make([]Link, n)
		for j := range m[i] {
			if i == j {
				m[i][j] = Link{Kind: "X"}
				continue
			}
			lk := Link{PCIe: "?"}
			lvl, err := devs[i].CommonAncestor(devs[j])
			warn(fmt.Sprintf("GPU %d-%d PCIe topology", i, j), err)
			if err == nil {
				lk.PCIe = lvl.String()
			}
			switch {
			case direct[i][j] > 0:
				lk.NVLinks = direct[i][j]
			case switchLinks[i] > 0 && switchLinks[j] > 0:
				p2p, err := devs[i].P2PNVLink(devs[j])
				warn(fmt.Sprintf("GPU %d-%d NVLink P2P", i, j), err)
				if err == nil && p2p {
					lk.NVLinks = min(switchLinks[i], switchLinks[j])
					lk.ViaSwitch = true
				}
			}
			if lk.NVLinks > 0 {
				lk.Kind = fmt.Sprintf("NV%d", lk.NVLinks)
			} else {
				lk.Kind = lk.PCIe
			}
			m[i][j] = lk
		}
	}
	return m
}

// Summary is a one-line description of the inventory, e.g. "2 x NVIDIA
// H100 80GB HBM3, driver 550.54.15, CUDA 12.4".
func (inv *Inventory) Summary() string {
	if len(inv.GPUs) == 0 {
		return fmt.Sprintf("no NVIDIA GPU found (driver %s)", orDash(inv.DriverVersion))
	}
	var parts []string
	counts := map[string]int{}
	var order []string
	for _, g := range inv.GPUs {
		if counts[g.Name] == 0 {
			order = append(order, g.Name)
		}
		counts[g.Name]++
	}
	for _, name := range order {
		parts = append(parts, fmt.Sprintf("%d x %s", counts[name], orDash(name)))
	}
	return fmt.Sprintf("%s, driver %s, CUDA %s", strings.Join(parts, " + "), orDash(inv.DriverVersion), orDash(inv.CUDAVersion))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
