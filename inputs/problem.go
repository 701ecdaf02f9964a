package inputs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/planner/plan"
)

// GraphOnCluster is an op graph on a cluster of GPUs as the user named
// them, with its expert placement when one was named: what a job makes
// its optimize.Problem of (its cost model and evaluator are the job's
// choice). Every command that places an op graph's ops starts from one
// (a transformer at cluster scale starts from Transformer).
type GraphOnCluster struct {
	Graph   *graph.Graph
	Meta    Meta
	Cluster *roofline.Cluster
	// Expert is the placement of the expert file the user named (nil =
	// none named: the built-in workload's, if any, is the caller's to
	// find).
	Expert []int
	// Profile is the ops profile the graph came from (nil: none; its
	// measured ops carry their times in Graph), read from ProfilePath.
	Profile     *profile.Profile
	ProfilePath string
	// GraphFileDefault says the hardware is a graph file's default
	// (roofline.GraphFileHardware), none named.
	GraphFileDefault bool
}

// Resolve resolves the op graph g on the cluster c: the graph, the
// cluster (defaults from the graph file's meta) and the expert file's
// placement.
func Resolve(g GraphSpec, c ClusterSpec) (GraphOnCluster, error) {
	gr, meta, pr, err := ProfiledGraph(g, c)
	if err != nil {
		return GraphOnCluster{}, err
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
		return GraphOnCluster{}, err
	}
	p := GraphOnCluster{Graph: gr, Meta: meta, Cluster: cl, Profile: pr, GraphFileDefault: fileDefault}
	if pr != nil {
		p.ProfilePath = c.Profile
	}
	// An expert file that does not fit the graph is the user's error.
	if g.Expert != "" {
		if p.Expert, err = ExpertFor(g, gr, cl.Devices); err != nil {
			return GraphOnCluster{}, err
		}
	}
	return p, nil
}

// PodSpec names the pod of nodes a transformer is planned on at cluster
// scale.
type PodSpec struct {
	// Pod is the pod, PRESET:NODES ("dgx-h100:288"); "" = DGX H100 nodes
	// for GPUs (or, with a CPU profile, its host).
	Pod string
	// GPUs is the pod's GPUs: a whole number of nodes, or Pod's count
	// when both are given (0 = Pod's).
	GPUs int
	// Profile is a layers profile file (placer profile; docs/profile.md)
	// whose measurements price the plan where they can ("" = the
	// roofline). With a CPU profile the pod is "cpu" (or left out): the
	// profile's host, GPUs processes (default the profile's).
	Profile string
	// MemoryMargin is the share of each GPU's memory a plan must leave
	// free to fit (0: none; --memory-margin's default is
	// plan.DefaultMemoryMargin); out of [0, plan.MaxMemoryMargin] a
	// usage error.
	MemoryMargin float64
}

// Transformer resolves a transformer at cluster scale: the model the
// workload names and the pod c names, from c.Pod (PRESET:NODES) or c.GPUs
// (DGX H100 nodes), which must agree when both are given. A mistake in
// the workload's text, the pod or --gpus is the command line's
// (fail.Usage, exit 2); one in the workload's config.json is the file's.
func Transformer(workload string, c PodSpec) (transformer.Spec, plan.Pod, error) {
	m, err := transformer.Parse(workload)
	if err != nil {
		if !errors.As(err, new(transformer.ConfigError)) {
			err = fail.AsUsage(err)
		}
		return m, plan.Pod{}, err
	}
	// A profile that cannot be read, or is of another model or device,
	// is the file's mistake (exit 1).
	var pr *profile.Profile
	if c.Profile != "" {
		if pr, err = profile.ReadFile(c.Profile); err != nil {
			return m, plan.Pod{}, err
		}
		if pr.Kind != profile.KindLayers {
			return m, plan.Pod{}, fmt.Errorf("profile %s: an op graph (%s), not a transformer's layers: give it without --workload", c.Profile, pr.Model)
		}
		if pr.Device.Kind == "cpu" {
			// A CPU profile prices the cpu pod alone, whose model it is.
			if err := plan.CheckProfilePod(pr); err != nil {
				return m, plan.Pod{}, fmt.Errorf("profile %s: %w", c.Profile, err)
			}
		}
	}
	p, err := resolvePod(m, c, pr)
	if err != nil {
		return m, p, fail.AsUsage(err)
	}
	if err := plan.CheckMemoryMargin(c.MemoryMargin); err != nil {
		return m, p, fail.AsUsage(err)
	}
	p.MemoryMargin = c.MemoryMargin
	if c.MemoryMargin == 0 {
		p.MemoryMargin = plan.NoMemoryMargin
	}
	if pr != nil {
		if err = pr.Check(m, p.Hardware.Name); err != nil {
			return m, plan.Pod{}, fmt.Errorf("profile %s: %w", c.Profile, err)
		}
		if p.Profile == nil {
			p = plan.WithProfile(p, pr)
		}
	}
	return m, p, nil
}

// resolvePod is the pod c names for the model m (with profile pr, nil
// for none: a CPU profile's pod is the cpu pod).
func resolvePod(m transformer.Spec, c PodSpec, pr *profile.Profile) (plan.Pod, error) {
	var err error
	var p plan.Pod
	switch {
	case pr != nil && (c.Pod == "cpu" || strings.HasPrefix(c.Pod, "cpu:") || c.Pod == "" && pr.Device.Kind == "cpu"):
		if pr.Device.Kind != "cpu" {
			return plan.Pod{}, fmt.Errorf("profile %s: of a %s device (%s), not the cpu pod", c.Profile, pr.Device.Kind, pr.Device.Name)
		}
		n := c.GPUs
		if n == 0 {
			n = pr.Device.Count
		}
		p = plan.ProfilePod(pr, n)
	case c.Pod != "":
		p, err = plan.PodFor(c.Pod, c.GPUs)
	case c.GPUs > 0:
		p, err = plan.PodOf("dgx-h100", c.GPUs)
	default:
		err = fmt.Errorf("workload %s: name the cluster (--cluster dgx-h100:NODES) or --gpus N", m.Family)
	}
	return p, err
}
