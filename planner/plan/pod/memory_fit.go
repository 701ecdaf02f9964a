package pod

import (
	"fmt"
	"math"
)

// MemoryPart is one named part of the most loaded GPU's memory at its
// peak (Result.MemoryParts). Outside parts are held outside PyTorch's
// caching allocator (the CUDA context, NCCL's buffers): they are not in
// Result.Memory, what torch.cuda.max_memory_allocated would read, but
// they take the GPU's memory all the same.
type MemoryPart struct {
	Name    string `json:"name"`
	Bytes   int64  `json:"bytes"`
	Outside bool   `json:"outside_allocator,omitempty"`
}

// CUDAContext is the device memory a process's CUDA context takes
// before any tensor: 723 MiB on the first CUDA call of a PyTorch process
// (discuss.pytorch.org/t/what-is-the-reasons-for-pytorchs-gpu-memory-floor/73021,
// nvidia-smi's usage after x = th.randn(1).cuda()). A published figure
// of another GPU and driver: no lent GPU has measured it for placer yet.
const CUDAContext = 723 << 20

// NCCLBuffersPerGroup is the device memory NCCL keeps for one
// communicator the plan creates: NCCL_BUFFSIZE, 4 MiB by default (NCCL's
// environment variables, docs.nvidia.com/deeplearning/nccl), for each
// direction of each of its channels, taken as 16 channels (an
// assumption: NCCL picks its channel count by topology).
const NCCLBuffersPerGroup = 4 << 20 * 2 * 16

// DefaultMemoryMargin is the share of the GPU's memory a plan leaves
// free by default beyond the CUDA context and NCCL's buffers: none. The
// verdict weighs what PyTorch's caching allocator would reserve, its
// fragmentation included (memory.Peak: the allocator simulated on the
// step's allocation trace), so no chosen share stands in for it: the 6%
// once chosen with report megatron's rows is removed. --memory-margin
// sets a user's own extra reserve.
const DefaultMemoryMargin = 0.0

// MaxMemoryMargin bounds --memory-margin: a margin of half the GPU is a
// mistake, not a judgement.
const MaxMemoryMargin = 0.5

// CheckMemoryMargin refuses a margin outside [0, MaxMemoryMargin].
func CheckMemoryMargin(f float64) error {
	if math.IsNaN(f) || f < 0 || f > MaxMemoryMargin {
		return fmt.Errorf("--memory-margin %g: out of range [0, %g] (a share of the GPU's memory)", f, MaxMemoryMargin)
	}
	return nil
}

// Margin is the pod's memory margin: MemoryMargin, else the default.
func (p *Pod) Margin() float64 {
	if p.MemoryMargin > 0 {
		return p.MemoryMargin
	}
	if p.MemoryMargin < 0 { // NoMemoryMargin
		return 0
	}
	return DefaultMemoryMargin
}

// NoMemoryMargin, as Pod.MemoryMargin, asks for a margin of 0 (the zero
// value is the default margin).
const NoMemoryMargin = -1

// Usable is what the allocator may hold on one GPU of p: its memory less
// outside (the CUDA context and NCCL's buffers) and the margin.
func (p *Pod) Usable(outside int64) int64 {
	c := float64(p.Hardware.Memory)
	return int64(c*(1-p.Margin())) - outside
}

// The verdicts on a plan's memory (Result.Verdict).
const (
	// VerdictFits: the peak fits the usable memory, its error
	// (Result.MemoryError) added.
	VerdictFits = "fits"
	// VerdictTight: the peak is within its error of the usable memory,
	// on either side: it may run or run out of memory. The search sets
	// such plans aside unless asked (Space.AllowTight).
	VerdictTight = "tight"
	// VerdictOver: the peak is over the usable memory, its error taken
	// off.
	VerdictOver = "over"
)

// Verdict is peak bytes against usable with a relative error e of the
// peak: fits where peak (1 + e) <= usable, over where peak (1 - e) >
// usable, tight between. With e 0 it is fits or over, peak <= usable.
func Verdict(peak, usable int64, e float64) string {
	p, u := float64(peak), float64(usable)
	switch {
	case p*(1+e) <= u:
		return VerdictFits
	case p*(1-e) > u:
		return VerdictOver
	}
	return VerdictTight
}
