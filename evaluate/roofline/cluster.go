package roofline

import (
	"fmt"
	"strings"
)

// Cluster is a set of identical devices and the links between them.
// Per ordered device pair (s*Devices+d) it holds the bandwidth and latency
// of a transfer from s to d and the channel that carries it: transfers on
// the same channel queue behind each other; different channels run
// concurrently and overlap compute (copy engines).
type Cluster struct {
	Hardware Hardware
	Devices  int
	Topology string // "nvswitch", "hybrid-cube-mesh" or "pcie"

	Bandwidth []float64 // bytes/s, s*Devices+d
	Latency   []float64 // seconds per transfer, s*Devices+d
	Channel   []int32   // channel id, s*Devices+d
	Channels  int       // number of channels
	LinkKind  []string  // "nvlink4 x18", "pcie3", ..., s*Devices+d
}

// Topologies lists the supported topology names.
var Topologies = []string{"nvswitch", "hybrid-cube-mesh", "pcie"}

// NewCluster builds a cluster of n devices of hardware h wired as topology
// ("" = the hardware's default).
//
//   - nvswitch: every GPU reaches every other through NVSwitch at its full
//     NVLink bandwidth (links x per-link bandwidth, per direction); one
//     egress channel per GPU, so a GPU's outgoing transfers share it.
//   - hybrid-cube-mesh: DGX-1's 8-GPU mesh: two fully connected quads
//     (0-3, 4-7) plus links i <-> i+4; each NVLinked pair has its own
//     channel; V100 (6 links) doubles the links 0-3, 1-2, 4-7, 5-6 and the
//     cross links. Other pairs go through PCIe and the host on the sender's
//     PCIe channel.
//   - pcie: all transfers through PCIe and the host, one egress channel per GPU.
func NewCluster(h Hardware, n int, topology string) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("cluster: %d devices: need at least 1", n)
	}
	if n > 64 {
		return nil, fmt.Errorf("cluster: %d devices: at most 64 are supported", n)
	}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if topology == "" {
		topology = h.Topology
	}
	if topology == "" {
		topology = "pcie"
	}
	topology = strings.ToLower(topology)
	c := &Cluster{
		Hardware: h, Devices: n, Topology: topology,
		Bandwidth: make([]float64, n*n), Latency: make([]float64, n*n),
		Channel: make([]int32, n*n), LinkKind: make([]string, n*n),
	}
	pcie := func(s, d int) {
		k := s*n + d
		c.Bandwidth[k] = h.PCIeBandwidth
		c.Latency[k] = h.PCIeLatency
		c.Channel[k] = int32(s) // the sender's PCIe egress
		c.LinkKind[k] = fmt.Sprintf("pcie%d", h.PCIeGen)
	}
	c.Channels = n
	switch topology {
	case "pcie":
		for s := 0; s < n; s++ {
			for d := 0; d < n; d++ {
				pcie(s, d)
			}
		}
	case "nvswitch":
		if h.NVLinkGen == 0 || h.NVLinkBandwidth == 0 {
			return nil, fmt.Errorf("cluster: hardware %q has no NVLink for topology nvswitch (use --topology pcie)", h.Name)
		}
		for s := 0; s < n; s++ {
			for d := 0; d < n; d++ {
				k := s*n + d
				c.Bandwidth[k] = h.NVLinkBandwidth * float64(h.NVLinks)
				c.Latency[k] = h.NVLinkLatency
				c.Channel[k] = int32(s)
				c.LinkKind[k] = fmt.Sprintf("nvlink%d x%d via nvswitch", h.NVLinkGen, h.NVLinks)
			}
		}
	case "hybrid-cube-mesh":
		if h.NVLinkGen == 0 || h.NVLinkBandwidth == 0 {
			return nil, fmt.Errorf("cluster: hardware %q has no NVLink for topology hybrid-cube-mesh (use --topology pcie)", h.Name)
		}
		if n > 8 {
			return nil, fmt.Errorf("cluster: topology hybrid-cube-mesh has 8 GPUs, asked for %d (use --topology nvswitch or pcie)", n)
		}
		for s := 0; s < n; s++ {
			for d := 0; d < n; d++ {
				links := cubeMeshLinks(s, d, h.NVLinks)
				if links == 0 {
					pcie(s, d)
					continue
				}
				k := s*n + d
				c.Bandwidth[k] = h.NVLinkBandwidth * float64(links)
				c.Latency[k] = h.NVLinkLatency
				c.Channel[k] = int32(c.Channels)
				c.Channels++
				c.LinkKind[k] = fmt.Sprintf("nvlink%d x%d", h.NVLinkGen, links)
			}
		}
	default:
		return nil, fmt.Errorf("cluster: unknown topology %q (want one of %s)", topology, strings.Join(Topologies, ", "))
	}
	return c, nil
}

// cubeMeshLinks is the number of NVLinks between GPUs s and d of a DGX-1
// hybrid cube-mesh whose GPUs have `links` NVLinks each (4 on P100, 6 on V100).
func cubeMeshLinks(s, d, links int) int {
	if s == d {
		return 0
	}
	if s > d {
		s, d = d, s
	}
	sameQuad := s/4 == d/4
	cross := d == s+4
	if !sameQuad && !cross {
		return 0
	}
	if links < 6 {
		return 1
	}
	// DGX-1V: each GPU's six links are two doubled (its cross link and one
	// quad neighbour: 0-3, 1-2, 4-7, 5-6) and two single.
	if cross {
		return 2
	}
	q0, q1 := s%4, d%4
	if (q0 == 0 && q1 == 3) || (q0 == 1 && q1 == 2) {
		return 2
	}
	return 1
}

// TransferTime is the time a transfer of bytes from s to d occupies its
// channel: latency + bytes / bandwidth (zero on the same device).
func (c *Cluster) TransferTime(s, d int, bytes int64) float64 {
	if s == d {
		return 0
	}
	k := s*c.Devices + d
	return c.Latency[k] + float64(bytes)/c.Bandwidth[k]
}
