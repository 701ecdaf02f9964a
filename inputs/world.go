package inputs

import (
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// World is which of placer's two worlds a workload lives in: they share
// the commands (eval, search, export) and each resolves what the user
// typed with options of its own: an op graph's graph (GraphSpec) on a
// cluster of GPUs (ClusterSpec, Resolve), a transformer's shape on a pod
// of nodes (PodSpec, Transformer). WorldOf decides it, once, from the
// workload.
type World int

// The worlds.
const (
	// OpGraph is a graph of ops placed op by op on a few GPUs, with a
	// strategy of replicas, micro-batches and sharding around one
	// replica's placement (evaluate/roofline, evaluate/strategy).
	OpGraph World = iota
	// ClusterScale is a transformer named by its shape on a pod of
	// nodes, planned by its degrees of tensor, pipeline, data and context
	// parallelism (planner).
	ClusterScale
)

func (w World) String() string {
	return [...]string{"an op graph", "a transformer at cluster scale"}[w]
}

// WorldOf is the world of the workload named workload (--workload; ""
// where a graph file or an ops profile names the graph): a transformer
// named by its shape ("gpt:...", "llama:..."), a preset of
// graph/transformer ("qwen3-30b-a3b:batch=512") or a Hugging Face
// config.json ("hf:PATH/config.json:seq=4096,batch=512") is planned at
// cluster scale; everything else (a built-in op graph, a graph file, an
// ops profile's graph) is an op graph. The workload alone decides: a pod
// (--cluster) named with an op graph is an option of the other world,
// refused by its command line.
func WorldOf(workload string) World {
	n := strings.ToLower(workload)
	head, _, _ := strings.Cut(n, ":")
	_, preset := transformer.Preset(head)
	if strings.HasPrefix(n, "gpt:") || strings.HasPrefix(n, "llama:") || strings.HasPrefix(n, "hf:") || preset {
		return ClusterScale
	}
	return OpGraph
}
