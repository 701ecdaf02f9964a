package strategy

import (
	"fmt"
	"sort"

	"github.com/placer/placer/evaluate/roofline"
)

// Gradient is one parameter gradient of a replica: its bytes, the device
// of the replica's placement that holds it, and when the backward pass
// has produced it.
type Gradient struct {
	Device int
	Bytes  int64
	Ready  float64
}

// AllReduceResult is how DDP's gradient all-reduce overlaps one replica's
// backward pass.
type AllReduceResult struct {
	// Done is when the last bucket's all-reduce ends, per device of the
	// placement (0 for a device without gradients).
	Done []float64
	// Exposed is how far the all-reduce runs past the last gradient: the
	// time the optimizer step waits for it.
	Exposed float64
	// Comm is the time the all-reduces take in all (overlapped or not),
	// Buckets their number, summed over the devices.
	Comm    float64
	Buckets int
	// BucketBytes is the largest total of gradient bytes a device's
	// buckets hold.
	BucketBytes int64
}

// DDPAllReduce times DDP's bucketed gradient all-reduce (PyTorch
// DistributedDataParallel) for r replicas of a placement on devices GPUs,
// replica k on GPUs k*devices to (k+1)*devices-1 of cluster c. The
// gradients of each device of the placement fill buckets of at most
// bucket bytes in the order they become ready (a gradient larger than a
// bucket is one bucket of its own); a bucket's all-reduce among the r
// GPUs that hold that device's part starts once its last gradient is
// ready and the previous bucket's all-reduce is done, so all-reduce
// overlaps the rest of the backward pass. The devices' rings run at once,
// each on its own GPUs' links.
func DDPAllReduce(c *roofline.Cluster, devices, r int, grads []Gradient, bucket int64) (*AllReduceResult, error) {
	return BucketCollective(c, devices, r, grads, bucket, roofline.AllReduce)
}

// BucketCollective is DDPAllReduce with collective kind for each bucket:
// roofline.ReduceScatter for ZeRO-2's gradients.
func BucketCollective(c *roofline.Cluster, devices, r int, grads []Gradient, bucket int64, kind roofline.Collective) (*AllReduceResult, error) {
	if devices < 1 || r < 1 || r*devices > c.Devices {
		return nil, fmt.Errorf("ddp: %d replicas of %d GPUs do not fit a cluster of %d", r, devices, c.Devices)
	}
	if bucket <= 0 {
		return nil, fmt.Errorf("ddp: bucket of %d bytes", bucket)
	}
	res := &AllReduceResult{Done: make([]float64, devices)}
	byDev := make([][]Gradient, devices)
	last := 0.0
	for _, g := range grads {
		if g.Device < 0 || g.Device >= devices {
			return nil, fmt.Errorf("ddp: a gradient on device %d of a %d-GPU placement", g.Device, devices)
		}
		byDev[g.Device] = append(byDev[g.Device], g)
		last = max(last, g.Ready)
	}
	group := make([]int, r)
	for k := 0; k < devices; k++ {
		gs := byDev[k]
		if len(gs) == 0 {
			continue
		}
		sort.SliceStable(gs, func(i, j int) bool { return gs[i].Ready < gs[j].Ready })
		for i := range group {
			group[i] = i*devices + k
		}
		free, total := 0.0, int64(0)
		var fill int64
		var ready float64
		flush := func() error {
			if fill == 0 {
				return nil
			}
			t, _, err := c.CollectiveTime(kind, group, fill)
			if err != nil {
				return err
			}
			free = max(free, ready) + t
			res.Comm += t
			res.Buckets++
			fill = 0
			return nil
		}
		for _, g := range gs {
			if fill > 0 && fill+g.Bytes > bucket {
				if err := flush(); err != nil {
					return nil, err
				}
			}
			fill += g.Bytes
			total += g.Bytes
			ready = max(ready, g.Ready)
		}
		if err := flush(); err != nil {
			return nil, err
		}
		res.Done[k] = free
		res.BucketBytes = max(res.BucketBytes, total)
		res.Exposed = max(res.Exposed, free-last)
	}
	return res, nil
}
