package plan

import (
	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan/pod"
)

// The pod a plan runs on is planner/plan/pod's: its presets,
// collectives, contention, power, profiles and memory fit. The names
// below keep plan's clients (plan.Pod, plan.ParsePod, ...) as they were.
type (
	Pod           = pod.Pod
	Group         = pod.Group
	Comm          = pod.Comm
	Window        = pod.Window
	MemoryPart    = pod.MemoryPart
	RegimeError   = pod.RegimeError
	TunedConstant = pod.TunedConstant
)

// The pod's constants (pod's).
const (
	CPUHardware         = pod.CPUHardware
	CUDAContext         = pod.CUDAContext
	DefaultMemoryMargin = pod.DefaultMemoryMargin
	MaxMemoryMargin     = pod.MaxMemoryMargin
	NCCLBuffersPerGroup = pod.NCCLBuffersPerGroup
	NoMemoryMargin      = pod.NoMemoryMargin
	VerdictFits         = pod.VerdictFits
	VerdictOver         = pod.VerdictOver
	VerdictTight        = pod.VerdictTight
)

// Tuned is pod.Tuned: the constants chosen with rows.
var Tuned = pod.Tuned

// ParsePod is pod.ParsePod.
func ParsePod(text string) (Pod, error) { return pod.ParsePod(text) }

// PodOf is pod.PodOf.
func PodOf(name string, gpus int) (Pod, error) { return pod.PodOf(name, gpus) }

// PodFor is pod.PodFor.
func PodFor(text string, gpus int) (Pod, error) { return pod.PodFor(text, gpus) }

// PodPresets is pod.PodPresets.
func PodPresets() []string { return pod.PodPresets() }

// WithProfile is pod.WithProfile.
func WithProfile(p Pod, pr *profile.Profile) Pod { return pod.WithProfile(p, pr) }

// ProfilePod is pod.ProfilePod.
func ProfilePod(pr *profile.Profile, gpus int) Pod { return pod.ProfilePod(pr, gpus) }

// CheckProfilePod is pod.CheckProfilePod.
func CheckProfilePod(pr *profile.Profile) error { return pod.CheckProfilePod(pr) }

// CheckMemoryMargin is pod.CheckMemoryMargin.
func CheckMemoryMargin(f float64) error { return pod.CheckMemoryMargin(f) }

// Verdict is pod.Verdict.
func Verdict(peak, usable int64, e float64) string { return pod.Verdict(peak, usable, e) }

// CollCTAs is pod.CollCTAs.
func CollCTAs(k kernels.Node, g Group, p2p bool) int { return pod.CollCTAs(k, g, p2p) }

// CopyComm is pod.CopyComm.
func CopyComm(t, bytes float64) Comm { return pod.CopyComm(t, bytes) }
