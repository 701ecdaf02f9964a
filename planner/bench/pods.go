package bench

import (
	"fmt"
	"strings"

	"github.com/placer/placer/planner/plan"
)

// pods are the pod presets of the SXM GPUs the bench holds (8 GPUs a
// node), by runs.csv's gpu.
var pods = map[string]string{"H100": "dgx-h100", "H200": "dgx-h200", "B200": "dgx-b200", "A100": "dgx-a100", "GB200": nvl72,
	"MI300X": "mi300x", "MI325X": "mi325x"}

// amdAssumed is what an AMD row's reading assumes of its code: AMD's
// recipe (config_MI3*_1x8x1.sh, NeMo's megatron_gpt_peft_tuning_config.yaml
// and train.py beside it, run in AMD's ROCm container) is NeMo's LoRA
// code on ROCm's Transformer Engine; placer prices it as its default
// Megatron-Core stack on the pod's ROCm kernels.
const amdAssumed = "AMD's NeMo LoRA recipe on ROCm (Transformer Engine's ROCm port, hipBLASLt, CK fused attention) read as placer's default Megatron-Core stack, the nearest code base placer has (no ROCm NeMo stack)"

// nvl72 is the pod preset of GB200 systems: NVL72 racks of 18 compute
// trays of 4 GPUs, one NVLink domain a rack (plan/pod's blackwell.go).
const nvl72 = "gb200-nvl72"

// nvl72Racks is the racks and GPUs a rack of a GB200 row (runs.csv's
// nodes are its compute trays of 4 GPUs): the fewest racks that hold its
// trays evenly, at most 72 GPUs a rack, the rule placer's PodFor follows
// (64 GPUs: one rack's 64; 144: two racks; 512: eight racks of 64). The
// system descriptions do not say how the trays are spread over racks;
// rd.Assumed says so.
func nvl72Racks(r Row) (racks, perRack int, err error) {
	if r.GPUsPerNode != 4 || r.GPUs != r.Nodes*4 {
		return 0, 0, fmt.Errorf("%d GB200 GPUs a node: the bench reads GB200 systems as compute trays of 4 (%s)", r.GPUsPerNode, nvl72)
	}
	for n := (r.GPUs + 71) / 72; n <= r.GPUs; n++ {
		if r.GPUs%n == 0 && (r.GPUs/n)%4 == 0 {
			return n, r.GPUs / n, nil
		}
	}
	return 0, 0, fmt.Errorf("%d GB200 GPUs: no whole number of trays a rack", r.GPUs)
}

// pciePods are the pod presets of the PCIe cards the bench holds
// (plan/pod's pcie.go: servers of up to 16 cards, one 100 Gb/s NIC), by
// runs.csv's gpu. The L40S, L40, L4 and A30 are PCIe cards only.
var pciePods = map[string]string{"A100": "pcie-a100", "H100": "pcie-h100", "L40S": "pcie-l40s", "L40": "pcie-l40", "L4": "pcie-l4", "A30": "pcie-a30"}

// a100Small is the most device memory, GiB, runs.csv's gpu_mem_gib
// gives an A100 of 40 GB (37.3: the system descriptions' 40 GB as
// bytes); an 80 GB A100 reads 74.5 or more.
const a100Small = 45

// podPreset is the pod preset of r's GPUs, whether its GPUs are PCIe
// cards (the system description's accelerator names PCIe, or the GPU
// is made as a card only), or why placer has none (one line).
func podPreset(r Row) (preset string, pcie bool, err error) {
	if p, ok := pciePods[r.GPU]; ok && (isPCIe(r.Accelerator) || pods[r.GPU] == "") {
		if r.GPU == "A100" && r.GPUMemGiB > 0 && r.GPUMemGiB < a100Small {
			return "", true, fmt.Errorf("%s: A100 PCIe cards of 40 GB (placer's pcie-a100 preset is the 80 GB card's)", r.Accelerator)
		}
		return p, true, nil
	}
	p, ok := pods[r.GPU]
	if !ok {
		return "", false, fmt.Errorf("no pod preset for %s GPUs (placer's: dgx-h100, dgx-h200, dgx-b200, dgx-a100, dgx-a100-40gb, pcie-h100, pcie-a100, pcie-l40s, pcie-l40, pcie-l4, pcie-a30, gb200-nvl72, ...)", r.GPU)
	}
	if r.GPU == "A100" && r.GPUMemGiB > 0 && r.GPUMemGiB < a100Small {
		p = "dgx-a100-40gb" // A100 SXM4 40 GB: its memory and bandwidth
	}
	return p, false, nil
}

// isPCIe says a system description's accelerator name is a PCIe card's
// ("NVIDIA H100-PCIe-80GB", "NVIDIA A100 - PCIe - 80 GB").
func isPCIe(accelerator string) bool {
	return strings.Contains(strings.ToUpper(strings.ReplaceAll(accelerator, " ", "")), "PCIE")
}

// pcieLinkLanes are the PCIe servers whose system description wires the
// cards at less than x16 (its "accelerator_host_interconnect"), by
// round/submitter/system: each a pcie-lanes= of its pod (plan/pod's
// pcie.go, usePCIeLanes). Every other PCIe system of the development
// rounds says x16 or says nothing (the x16 the cards are made for).
//   - v3.1 Lenovo/systems/SR675v3-8xH100_PCIe_80GB_350W.json:
//     "accelerator_host_interconnect": "PCIe 5.0x8".
var pcieLinkLanes = map[string]int{"v3.1/Lenovo/SR675v3-8xH100_PCIe_80GB_350W": 8}

// pcieLinkOption is the pod option of r's PCIe link where its system
// description narrows it ("" where not), and what the reading assumes.
func pcieLinkOption(r Row, rd *Reading) string {
	lanes, ok := pcieLinkLanes[r.Round+"/"+r.Submitter+"/"+r.System]
	if !ok {
		return ""
	}
	rd.Assumed = append(rd.Assumed, fmt.Sprintf("each card on a PCIe x%d link, as its system description says (pcie-lanes=%d)", lanes, lanes))
	return fmt.Sprintf(",pcie-lanes=%d", lanes)
}

// nicOption is the pod option of r's compute network where its system
// description states one its preset does not have ("" where the same,
// where it states none, and on one node: a run of one node sends nothing
// over its NICs), and what the reading assumes. cluster is the pod as
// written so far (preset, nodes, per-node=): its NICs a node are the
// preset's share for the node's GPUs (per-node=). The description's NICs
// a node and each one's line rate (runs.csv host_nics, host_nic_gbps:
// "2x ConnectX-6 IB HDR 200Gb/Sec" on Dell's XE8545, where a node of 4
// GPUs of the DGX A100's 8 x 200 Gb/s has 4) become nics= and nic-gbps=
// (plan/pod's ParsePod), which price every collective between nodes
// (Pod.Inter: a GPU's share of its node's NICs).
func nicOption(r Row, cluster string, rd *Reading) (string, error) {
	if r.Nodes <= 1 || r.HostNICs <= 0 || r.HostNICGbps <= 0 {
		return "", nil
	}
	p, err := plan.ParsePod(cluster)
	if err != nil {
		return "", err
	}
	if p.NICs == r.HostNICs && p.NICBandwidth == r.HostNICGbps*1e9/8 {
		return "", nil
	}
	rd.Assumed = append(rd.Assumed, fmt.Sprintf("%d NICs a node of %g Gb/s each, as its system description says (nics=%d,nic-gbps=%g; the preset's: %d of %g)",
		r.HostNICs, r.HostNICGbps, r.HostNICs, r.HostNICGbps, p.NICs, p.NICBandwidth*8/1e9))
	return fmt.Sprintf(",nics=%d,nic-gbps=%g", r.HostNICs, r.HostNICGbps), nil
}

// nodeOption is the cluster option that writes r's nodes on the preset's
// ("" for its 8-GPU nodes), what it assumes written to rd, or why placer
// cannot write them (one line).
func nodeOption(r Row, preset string, pcie bool, rd *Reading) (string, error) {
	perNode := ""
	switch {
	case preset == nvl72:
		racks, per, err := nvl72Racks(r)
		if err != nil {
			return "", err
		}
		if per != 72 {
			perNode = fmt.Sprintf(",per-node=%d", per)
		}
		rd.Assumed = append(rd.Assumed, fmt.Sprintf("%d compute trays of 4 GB200 GPUs as %d NVL72 rack(s) of %d GPUs each, with the preset's NICs (the fewest racks that hold the trays evenly; the system description does not say how they are spread)", r.Nodes, racks, per))
		return perNode, nil
	case r.GPUsPerNode == 8:
	case pcie && r.GPUsPerNode > 0 && r.GPUsPerNode <= 16:
		// A server of PCIe cards: per-node= up to the preset's 16 slots,
		// one 100 Gb/s NIC a node (plan/pod's pcie.go).
		perNode = fmt.Sprintf(",per-node=%d", r.GPUsPerNode)
	case r.GPUsPerNode > 0 && r.GPUsPerNode < 8 && 8%r.GPUsPerNode == 0 && strings.Contains(strings.ToUpper(r.Accelerator), "SXM"):
		// A node of 4 SXM GPUs (Dell XE8640, XE9640; Fujitsu GX2560M7:
		// four H100 SXM5 on one NVLink board) as the first 4 GPUs of the
		// preset's 8-GPU NVLink node with their share of its NICs
		// (plan.ParsePod's per-node=, the option NVL72 slices use).
		perNode = fmt.Sprintf(",per-node=%d", r.GPUsPerNode)
		rd.Assumed = append(rd.Assumed, fmt.Sprintf("a node of %d SXM GPUs as %d GPUs of the %s preset's NVLink node with their share of its NICs (the system description does not give the node's NICs)", r.GPUsPerNode, r.GPUsPerNode, preset))
	default:
		return "", fmt.Errorf("%d %s GPUs a node: the %s preset's nodes have 8 NVLink GPUs (per-node= takes a share of an SXM node only)", r.GPUsPerNode, r.Accelerator, preset)
	}
	if pcie {
		perNode += pcieLinkOption(r, rd)
	}
	nics, err := nicOption(r, fmt.Sprintf("%s:%d%s", preset, max(1, r.Nodes), perNode), rd)
	if err != nil {
		return "", err
	}
	return perNode + nics, nil
}

// clusterNodes is the nodes of r's pod as the preset counts them: a
// GB200 row's racks (nvl72Racks), every other row's nodes.
func clusterNodes(r Row, preset string) int {
	if preset == nvl72 {
		if racks, _, err := nvl72Racks(r); err == nil {
			return racks
		}
	}
	return r.Nodes
}
