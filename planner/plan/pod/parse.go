package pod

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/kernels"
)

// ParsePod reads a pod written PRESET:NODES ("dgx-h100:288" is 288 DGX
// H100 nodes, 2,304 GPUs), optionally followed by overrides of the
// network between nodes: ",nics=N" (NICs per node) and ",nic-gbps=G"
// (each NIC's line rate in Gb/s), e.g. "dgx-h100:64,nics=4,nic-gbps=200".
func ParsePod(text string) (Pod, error) {
	head, opts, _ := strings.Cut(strings.ToLower(strings.TrimSpace(text)), ",")
	name, n, ok := strings.Cut(head, ":")
	p, known := podPresets[name]
	if !known {
		return Pod{}, fmt.Errorf("cluster %q: unknown node %q (presets %s; write PRESET:NODES, e.g. dgx-h100:288)", text, name, strings.Join(PodPresets(), ", "))
	}
	nodes := 1
	if ok {
		var err error
		if nodes, err = strconv.Atoi(n); err != nil || nodes < 1 {
			return Pod{}, fmt.Errorf("cluster %q: %q is not a number of nodes of at least 1", text, n)
		}
	}
	h, err := roofline.Preset(p.hardware)
	if err != nil {
		return Pod{}, err
	}
	if p.kernels.GEMM > 0 {
		h.ComputeEff[graph.ClassMatMul] = p.kernels.GEMM
	}
	if p.gpu != "" {
		h.Name = p.gpu
	}
	if p.nvlinks > 0 {
		h.NVLinks = p.nvlinks
	}
	if p.memory > 0 {
		h.Memory, h.MemBandwidth = p.memory, p.memBandwidth
	}
	pod := Pod{Name: head, Hardware: h, Nodes: nodes, PerNode: p.perNode,
		NICs: p.nics, NICBandwidth: p.nicBandwidth, NICLatency: p.nicLatency, Kernels: p.kernels, PowerLimit: p.power, slots: p.slots}
	if !ok {
		pod.Name = name + ":1"
	}
	if opts != "" {
		for _, kv := range strings.Split(opts, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "attention" {
				// The fused attention kernel the node's software runs
				// (torch's SDPA picks flash or cuDNN by version:
				// Kernels.Attention).
				if pod.Kernels, err = pod.Kernels.WithAttention(v); err != nil {
					return Pod{}, fmt.Errorf("cluster %q: %w", text, err)
				}
				continue
			}
			if k == "host" {
				// The CPU that issues the kernels (host.go): the
				// DGX H100's Xeon or a Grace.
				if err := pod.setHost(v); err != nil {
					return Pod{}, fmt.Errorf("cluster %q: %w", text, err)
				}
				continue
			}
			if k == "power" {
				// The GPUs' power limit (power.go), or off: the
				// kernels at their burst clock.
				if err := pod.setPower(v); err != nil {
					return Pod{}, fmt.Errorf("cluster %q: %w", text, err)
				}
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) || math.IsInf(x, 0) {
				return Pod{}, fmt.Errorf("cluster %q: %q is not key=number above 0 (keys nics, nic-gbps, per-node, pcie-lanes; attention=flash or cudnn; power=W or off; host=x86 or grace)", text, kv)
			}
			switch k {
			case "nics":
				if x != math.Trunc(x) || x > 64 {
					return Pod{}, fmt.Errorf("cluster %q: nics=%s: want a whole number of NICs per node, at most 64", text, v)
				}
				pod.NICs = int(x)
			case "nic-gbps":
				pod.NICBandwidth = x * 1e9 / 8
			case "per-node":
				if err := pod.usePerNode(x); err != nil {
					return Pod{}, fmt.Errorf("cluster %q: %w", text, err)
				}
			case "pcie-lanes":
				if err := pod.usePCIeLanes(x); err != nil {
					return Pod{}, fmt.Errorf("cluster %q: %w", text, err)
				}
			default:
				return Pod{}, fmt.Errorf("cluster %q: unknown key %q (keys nics, nic-gbps, per-node, pcie-lanes, attention, power)", text, k)
			}
		}
		pod.Name += "," + opts
	}
	pod.hold()
	return pod, nil
}

// PodOf is the pod of preset name with the fewest nodes that hold gpus
// GPUs (whole nodes; gpus below a node's size is one node's first gpus).
func PodOf(name string, gpus int) (Pod, error) {
	p, err := ParsePod(name)
	if err != nil {
		return Pod{}, err
	}
	if gpus < 1 {
		return Pod{}, fmt.Errorf("cluster %s: %d GPUs: want at least 1", name, gpus)
	}
	if node := p.PerNode; gpus < node {
		p.PerNode = gpus
		p.NICs = max(1, p.NICs*gpus/node)
	}
	p.Nodes = (gpus + p.PerNode - 1) / p.PerNode
	if p.Nodes*p.PerNode != gpus {
		return Pod{}, fmt.Errorf("cluster %s: %d GPUs is not a whole number of %d-GPU nodes", name, gpus, p.PerNode)
	}
	p.Name = name + ":" + strconv.Itoa(p.Nodes)
	return p, nil
}

// PodFor is the pod the text of --cluster names for gpus GPUs (0: the
// text's own): its GPUs where they are gpus; with a node count
// (gb200-nvl72:8) gpus of them spread evenly, the same number of each
// node (per-node=, gpus / nodes: gb200-nvl72:8 for 512 GPUs is
// gb200-nvl72:8,per-node=64, gb200-nvl72:1 for 64 is 64 of one rack);
// without one (gb200-nvl72) the fewest nodes that hold gpus evenly, so
// spread. Any other gpus (more GPUs than the nodes named, a count the
// nodes do not share evenly, per-node= written and disagreeing) is an
// error naming the spelling that works, where one does.
func PodFor(text string, gpus int) (Pod, error) {
	p, err := ParsePod(text)
	if err != nil || gpus <= 0 || gpus == p.GPUs() {
		return p, err
	}
	head, opts, _ := strings.Cut(strings.ToLower(strings.TrimSpace(text)), ",")
	name, _, counted := strings.Cut(head, ":")
	disagree := fmt.Errorf("--gpus %d and --cluster %s (%d GPUs) disagree", gpus, text, p.GPUs())
	if strings.Contains(","+opts, ",per-node=") {
		return Pod{}, disagree
	}
	nodes := p.Nodes
	if !counted {
		nodes = (gpus + p.PerNode - 1) / p.PerNode
	}
	if gpus <= nodes*p.PerNode && gpus%nodes == 0 && wholeHosts(name, gpus/nodes) == nil {
		spelled := fmt.Sprintf("%s:%d,per-node=%d", name, nodes, gpus/nodes)
		if gpus/nodes == p.PerNode {
			spelled = fmt.Sprintf("%s:%d", name, nodes)
		}
		if opts != "" {
			spelled += "," + opts
		}
		return ParsePod(spelled)
	}
	// The fewest nodes that share gpus evenly, in whole hosts.
	for n := (gpus + p.PerNode - 1) / p.PerNode; n <= gpus; n++ {
		if gpus%n == 0 && wholeHosts(name, gpus/n) == nil {
			hint := fmt.Sprintf("%s:%d,per-node=%d", name, n, gpus/n)
			if gpus/n == p.PerNode {
				hint = fmt.Sprintf("%s:%d", name, n)
			}
			return Pod{}, fmt.Errorf("%w: %d GPUs of %s's %d-GPU nodes are --cluster %s", disagree, gpus, name, p.PerNode, hint)
		}
	}
	return Pod{}, disagree
}

// setHost sets the CPU that issues the pod's kernels: "x86", the DGX
// H100's Xeon (kernels.H100's measured host, which the Hopper and
// Blackwell presets carry), or "grace", the same issued from a Grace CPU
// (kernels.Host.OnGrace, the GB200 and GB300 presets' host). It is for
// the presets whose host is one of those two; a mechanism's evidence
// (jobs/benchreport's evidence test) prices a Grace row on x86 with it.
func (p *Pod) setHost(v string) error {
	x86 := kernels.H100.Host
	if p.Kernels.Host != x86 && p.Kernels.Host != x86.OnGrace() {
		return fmt.Errorf("host=%s: the %s preset's host is neither the DGX H100's Xeon nor a Grace (host= is for the Hopper and Blackwell presets)", v, p.Name)
	}
	switch v {
	case "x86":
		p.Kernels.Host = x86
	case "grace":
		p.Kernels.Host = x86.OnGrace()
	default:
		return fmt.Errorf("host=%s: want x86 or grace", v)
	}
	return nil
}
