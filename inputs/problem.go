package inputs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/scale"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/fail"
)

// Problem is a workload on a cluster as the user named them, resolved in
// its world (World): an op graph on a cluster of GPUs, with its expert
// placement when one was named, or a transformer by its shape on a pod of
// nodes. Every command that takes a workload and a cluster (eval, search,
// export) starts from one.
type Problem struct {
	World World

	// OpGraph.
	Graph   *graph.Graph
	Meta    Meta
	Cluster *roofline.Cluster
	// Expert is the placement of the expert file the user named (nil =
	// none named: the built-in workload's, if any, is the caller's to
	// find).
	Expert []int
	// Profile is the ops profile the graph came from (nil: none; its
	// measured ops carry their times in Graph).
	Profile *profile.Profile
	// GraphFileDefault says the hardware is a graph file's default
	// (roofline.GraphFileHardware), none named.
	GraphFileDefault bool

	// ClusterScale.
	Model transformer.Spec
	Pod   scale.Pod
}

// Resolve resolves the workload g on the cluster c in its world
// (WorldOf). For an op graph: the graph, the cluster (defaults from the
// graph file's meta) and the expert file's placement; for a transformer:
// the model and the pod, from c.Pod (PRESET:NODES) or c.GPUs (DGX H100
// nodes), which must agree when both are given.
func Resolve(g GraphSpec, c ClusterSpec) (Problem, error) {
	if WorldOf(g, c) == ClusterScale {
		m, p, err := resolveScale(g.Workload, c)
		return Problem{World: ClusterScale, Model: m, Pod: p}, err
	}
	gr, meta, pr, err := ProfiledGraph(g, c)
	if err != nil {
		return Problem{}, err
	}
	var cl *roofline.Cluster
	// A graph file with no hardware named is costed on the current GPU;
	// a built-in workload on its paper's (roofline.DefaultHardware).
	fileDefault := pr == nil && g.Path != "" && c.Hardware == ""
	if fileDefault {
		c.Hardware = roofline.GraphFileHardware
	}
	if pr != nil {
		cl, err = ProfileCluster(c, pr)
	} else {
		cl, err = Cluster(c, meta)
	}
	if err != nil {
		return Problem{}, err
	}
	p := Problem{World: OpGraph, Graph: gr, Meta: meta, Cluster: cl, Profile: pr, GraphFileDefault: fileDefault}
	// An expert file that does not fit the graph is the user's error.
	if g.Expert != "" {
		if p.Expert, err = ExpertFor(g, gr, cl.Devices); err != nil {
			return Problem{}, err
		}
	}
	return p, nil
}

// resolveScale is a transformer's model and pod. A mistake in the
// workload's text, the pod or --gpus is the command line's (fail.Usage,
// exit 2); one in the workload's config.json is the file's.
func resolveScale(workload string, c ClusterSpec) (transformer.Spec, scale.Pod, error) {
	m, err := transformer.Parse(workload)
	if err != nil {
		if !errors.As(err, new(transformer.ConfigError)) {
			err = fail.AsUsage(err)
		}
		return m, scale.Pod{}, err
	}
	// A profile that cannot be read, or is of another model or device,
	// is the file's mistake (exit 1).
	var pr *profile.Profile
	if c.Profile != "" {
		if pr, err = profile.ReadFile(c.Profile); err != nil {
			return m, scale.Pod{}, err
		}
		if pr.Kind != profile.KindLayers {
			return m, scale.Pod{}, fmt.Errorf("profile %s: an op graph (%s), not a transformer's layers: give it without --workload", c.Profile, pr.Model)
		}
		if pr.Device.Kind == "cpu" {
			// A CPU profile prices the cpu pod alone, whose model it is.
			if err := scale.CheckProfilePod(pr); err != nil {
				return m, scale.Pod{}, fmt.Errorf("profile %s: %w", c.Profile, err)
			}
		}
	}
	p, err := resolvePod(m, c, pr)
	if err != nil {
		return m, p, fail.AsUsage(err)
	}
	if err := scale.CheckMemoryMargin(c.MemoryMargin); err != nil {
		return m, p, fail.AsUsage(err)
	}
	p.MemoryMargin = c.MemoryMargin
	if c.MemoryMargin == 0 {
		p.MemoryMargin = scale.NoMemoryMargin
	}
	if pr != nil {
		if err = pr.Check(m, p.Hardware.Name); err != nil {
			return m, scale.Pod{}, fmt.Errorf("profile %s: %w", c.Profile, err)
		}
		if p.Profile == nil {
			p = scale.WithProfile(p, pr)
		}
	}
	return m, p, nil
}

// resolvePod is the pod c names for the model m (with profile pr, nil
// for none: a CPU profile's pod is the cpu pod).
func resolvePod(m transformer.Spec, c ClusterSpec, pr *profile.Profile) (scale.Pod, error) {
	var err error
	var p scale.Pod
	switch {
	case pr != nil && (c.Pod == "cpu" || strings.HasPrefix(c.Pod, "cpu:") || c.Pod == "" && pr.Device.Kind == "cpu"):
		if pr.Device.Kind != "cpu" {
			return scale.Pod{}, fmt.Errorf("profile %s: of a %s device (%s), not the cpu pod", c.Profile, pr.Device.Kind, pr.Device.Name)
		}
		n := c.GPUs
		if n == 0 {
			n = pr.Device.Count
		}
		p = scale.ProfilePod(pr, n)
	case c.Pod != "":
		p, err = scale.ParsePod(c.Pod)
		if err == nil && c.GPUs > 0 && c.GPUs != p.GPUs() {
			err = fmt.Errorf("--gpus %d and --cluster %s (%d GPUs) disagree", c.GPUs, c.Pod, p.GPUs())
		}
	case c.GPUs > 0:
		p, err = scale.PodOf("dgx-h100", c.GPUs)
	default:
		err = fmt.Errorf("workload %s: name the cluster (--cluster dgx-h100:NODES) or --gpus N", m.Family)
	}
	return p, err
}
