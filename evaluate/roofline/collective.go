package roofline

import (
	"fmt"
	"math"
)

// Collective is a collective operation over a group of GPUs.
type Collective int

// The collectives data-parallel training runs (DESIGN §10).
const (
	// AllReduce leaves every GPU with the sum of every GPU's S bytes
	// (DDP's gradient buckets).
	AllReduce Collective = iota
	// AllGather leaves every GPU with all R shards of S/R bytes (FSDP's
	// parameters before a layer runs).
	AllGather
	// ReduceScatter leaves GPU i with shard i of the sum (FSDP's gradients
	// after a layer's backward).
	ReduceScatter
)

func (k Collective) String() string {
	return [...]string{"all-reduce", "all-gather", "reduce-scatter"}[k]
}

// Algorithm is how a collective moves its bytes.
type Algorithm int

// The algorithms NCCL chooses between by message size.
const (
	// Ring passes S/R chunks around a ring of the group: all-reduce in
	// 2(R-1) steps (a reduce-scatter, then an all-gather), all-gather and
	// reduce-scatter in R-1; every step moves one chunk over every link of
	// the ring at once, so a step takes as long as the ring's slowest link.
	// Bandwidth-optimal: 2(R-1)/R x S per GPU for an all-reduce.
	Ring Algorithm = iota
	// Tree reduces up and broadcasts down a binary tree of the group:
	// 2 ceil(log2 R) steps of S bytes each, fewer latencies than the ring
	// for small messages.
	Tree
)

func (a Algorithm) String() string { return [...]string{"ring", "tree"}[a] }

// CollectiveTime is how long collective k of bytes (S: the whole buffer
// each GPU contributes or receives) takes over group (cluster device
// indices, in ring order), with the faster of a ring and a tree, as NCCL
// picks by size, and which it was. A group of one GPU takes no time.
//
// The links are the cluster's: a ring step from group[i] to group[i+1]
// costs latency + chunk / bandwidth of that pair; every GPU sends on its
// own egress at once, which is how every topology here is wired (one
// channel per sender on PCIe and NVSwitch, one per NVLinked pair on the
// hybrid cube-mesh).
func (c *Cluster) CollectiveTime(k Collective, group []int, bytes int64) (float64, Algorithm, error) {
	r := len(group)
	for _, g := range group {
		if g < 0 || g >= c.Devices {
			return 0, Ring, fmt.Errorf("collective: GPU %d does not exist (cluster has 0..%d)", g, c.Devices-1)
		}
	}
	if r <= 1 || bytes <= 0 {
		return 0, Ring, nil
	}
	ring := c.ringTime(k, group, bytes)
	if k != AllReduce {
		// All-gather and reduce-scatter have no tree in NCCL.
		return ring, Ring, nil
	}
	if tree := c.treeTime(group, bytes); tree < ring {
		return tree, Tree, nil
	}
	return ring, Ring, nil
}

// ringTime: steps x the slowest link's time for one chunk of S/R bytes.
func (c *Cluster) ringTime(k Collective, group []int, bytes int64) float64 {
	r := len(group)
	chunk := int64(math.Ceil(float64(bytes) / float64(r)))
	slowest := 0.0
	for i, s := range group {
		d := group[(i+1)%r]
		slowest = max(slowest, c.TransferTime(s, d, chunk))
	}
	steps := r - 1
	if k == AllReduce {
		steps = 2 * (r - 1)
	}
	return float64(steps) * slowest
}

// treeTime: a binary tree over the group in its order (node i's children
// 2i+1 and 2i+2): the reduce climbs ceil(log2 R) levels and the broadcast
// descends them, each level as long as its slowest parent-child link
// carrying the whole S bytes.
func (c *Cluster) treeTime(group []int, bytes int64) float64 {
	r := len(group)
	levels := int(math.Ceil(math.Log2(float64(r))))
	up := make([]float64, levels+1)
	down := make([]float64, levels+1)
	for i := 1; i < r; i++ {
		p := (i - 1) / 2
		depth := int(math.Floor(math.Log2(float64(i + 1))))
		up[depth] = max(up[depth], c.TransferTime(group[i], group[p], bytes))
		down[depth] = max(down[depth], c.TransferTime(group[p], group[i], bytes))
	}
	t := 0.0
	for l := range up {
		t += up[l] + down[l]
	}
	return t
}
