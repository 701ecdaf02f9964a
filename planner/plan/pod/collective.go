package pod

import (
	"math"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
)

// Collective is how long collective k of bytes (S, the whole buffer: an
// all-reduce's input, an all-gather's output, a reduce-scatter's input)
// takes over group g, hierarchically as NCCL runs it across nodes: inside
// each node over NVSwitch (a ring), then across nodes on every GPU's
// share of the NICs with S/PerNode bytes each (a ring; for an all-reduce
// the faster of a ring and a tree, NCCL's choice by size), and which
// algorithm crossed the nodes.
//
// Ring all-gather or reduce-scatter over n GPUs: (n-1)/n x S / bandwidth
// + (n-1) latencies; ring all-reduce twice that; tree all-reduce: 2 x S /
// bandwidth + 2 ceil(log2 n) latencies (DESIGN §10).
func (p *Pod) Collective(k roofline.Collective, g Group, bytes float64) (float64, roofline.Algorithm) {
	return p.collective(k, "", g, bytes)
}

// StateCollective is Collective of the model's state: the gradients'
// reductions and the weights' gathers. On the pod of an FP32 profile (a
// CPU's) they move FP32 tensors as they are, which the profile times
// apart from the activations' collectives (cast to BF16 for the wire
// and back): profile.WireFP32; elsewhere Collective.
func (p *Pod) StateCollective(k roofline.Collective, g Group, bytes float64) float64 {
	t, _ := p.collective(k, p.StateWire(), g, bytes)
	return t
}

// StateWire is the profile's wire of the state's collectives
// (StateCollective): profile.WireFP32 on an FP32 profile's pod, else "".
func (p *Pod) StateWire() string {
	if p.Profile != nil && p.Profile.DType == "fp32" {
		return profile.WireFP32
	}
	return ""
}

func (p *Pod) collective(k roofline.Collective, wire string, g Group, bytes float64) (float64, roofline.Algorithm) {
	if g.Size() <= 1 || bytes <= 0 {
		return 0, roofline.Ring
	}
	if p.Profile != nil {
		if t, src := p.ProfiledCollective(k, wire, g, bytes); src != profile.Modelled {
			return t, roofline.Ring
		}
	}
	bi, li := p.IntraFor(g.PerNode)
	be, le := p.Inter()
	ring := func(n int, s, bw, lat float64) float64 {
		if n <= 1 {
			return 0
		}
		return float64(n-1)/float64(n)*s/bw + float64(n-1)*lat
	}
	in := ring(g.PerNode, bytes, bi, li)
	across := ring(g.Nodes, bytes/float64(g.PerNode), be, le)
	if k != roofline.AllReduce {
		return in + across, roofline.Ring
	}
	if g.Nodes <= 1 {
		return 2 * in, roofline.Ring
	}
	tree := 2*bytes/float64(g.PerNode)/be + 2*math.Ceil(math.Log2(float64(g.Nodes)))*le
	if tree < 2*across {
		return 2*in + tree, roofline.Tree
	}
	return 2 * (in + across), roofline.Ring
}

// Rooted is how long a broadcast or a reduce of bytes S (the root's
// buffer) takes over group g as NCCL runs them: a ring only, the data
// pipelined in chunks along a chain from the root (NVIDIA/nccl
// src/graph/tuning.cc at 01afd20a: for ncclCollBroadcast and
// ncclCollReduce no tree is tuned, nsteps = nRanks, and the algorithm
// bandwidth is the bus bandwidth x nRanks/nsteps, the bus bandwidth
// itself; nccl-tests doc/PERFORMANCE.md: busBw = algBw for both). Every
// link of the chain carries all of S, so S crosses at the slowest:
// NVSwitch inside a node (Intra), and across nodes the NICs' share of
// the group's GPUs in a node (Inter x PerNode: NCCL's channels, one a
// NIC). The chain's hops each pay a step's latency, as the pod's rings
// do: n - Nodes inside the nodes and Nodes - 1 across them. One GPU: 0.
func (p *Pod) Rooted(g Group, bytes float64) float64 {
	n := g.Size()
	if n <= 1 || bytes <= 0 {
		return 0
	}
	bi, li := p.IntraFor(g.PerNode)
	if g.Nodes <= 1 {
		return bytes/bi + float64(n-1)*li
	}
	be, le := p.Inter()
	bw := be * float64(g.PerNode)
	if g.PerNode > 1 {
		bw = min(bi, bw)
	}
	return bytes/bw + float64(n-g.Nodes)*li + float64(g.Nodes-1)*le
}

// AllToAll is an all-to-all over group g in which every GPU sends bytes
// in all, an equal share to each GPU of the group (its own share stays
// where it is). NCCL runs it as a send and a receive to every peer at
// once (ncclSend/ncclRecv in one group: NCCL's documentation,
// "Point-to-point communication", all-to-all), so a GPU's traffic is the
// (n-1)/n of bytes that leaves it (nccl-tests count an all-to-all's bus
// bandwidth as its algorithm bandwidth x (n-1)/n, doc/PERFORMANCE.md):
// the share to its node's other GPUs over NVSwitch and the share to
// other nodes over its share of the NICs, the two at once, each one
// latency.
func (p *Pod) AllToAll(g Group, bytes float64) float64 {
	n := float64(g.Size())
	if n <= 1 || bytes <= 0 {
		return 0
	}
	if p.Profile != nil {
		if t, src := p.ProfiledAllToAll(g, bytes); src != profile.Modelled {
			return t
		}
	}
	var in, across float64
	if g.PerNode > 1 {
		bi, li := p.IntraFor(g.PerNode)
		in = bytes*float64(g.PerNode-1)/n/bi + li
	}
	if g.Nodes > 1 {
		be, le := p.Inter()
		across = bytes*(n-float64(g.PerNode))/n/be + le
	}
	return max(in, across)
}

// SendTime is a point-to-point transfer of bytes between two GPUs, in one
// node or across nodes.
func (p *Pod) SendTime(sameNode bool, bytes float64) float64 {
	if bytes <= 0 {
		return 0
	}
	if sameNode && p.Profile != nil {
		if t, src := p.Profile.CollectiveTime(profile.SendRecv, 2, bytes); src != profile.Modelled {
			return t
		}
	}
	if sameNode {
		bw, lat := p.IntraFor(2)
		return bytes/bw + lat
	}
	// One GPU's own NIC: a pipeline's sends do not all cross at once.
	return bytes/p.nic() + p.NICLatency
}

// Beside is what a data-parallel collective of comm seconds adds to a
// window of compute it overlaps (Kernels.Beside).
func (p *Pod) Beside(comm, window float64) float64 { return p.Kernels.Beside(comm, window) }
