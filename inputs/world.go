package inputs

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// World is which of placer's two worlds a workload lives in: they share
// the commands (eval, search, export) and resolve what the user typed in
// one place (WorldOf), each with the options of its own.
type World int

// The worlds.
const (
	// OpGraph is a graph of ops placed op by op on a few GPUs, with a
	// strategy of replicas, micro-batches and sharding around one
	// replica's placement (evaluate/roofline, evaluate/strategy).
	OpGraph World = iota
	// ClusterScale is a transformer named by its shape on a pod of
	// nodes, planned by its degrees of tensor, pipeline, data and context
	// parallelism (evaluate/scale).
	ClusterScale
)

func (w World) String() string {
	return [...]string{"an op graph", "a transformer at cluster scale"}[w]
}

// tag is the world a struct field tagged world:"..." belongs to.
func (w World) tag() string { return [...]string{"graph", "cluster"}[w] }

// WorldOf is the world of the workload g on the cluster c: a transformer
// named by its shape ("gpt:...", "llama:..."), a preset of
// graph/transformer ("qwen3-30b-a3b:batch=512") or a Hugging Face
// config.json ("hf:PATH/config.json:seq=4096,batch=512"), or any workload on a pod
// (c.Pod) is planned at cluster scale; everything else is an op graph.
func WorldOf(g GraphSpec, c ClusterSpec) World {
	n := strings.ToLower(g.Workload)
	head, _, _ := strings.Cut(n, ":")
	_, preset := transformer.Preset(head)
	if strings.HasPrefix(n, "gpt:") || strings.HasPrefix(n, "llama:") || strings.HasPrefix(n, "hf:") || preset || c.Pod != "" {
		return ClusterScale
	}
	return OpGraph
}

// Applies reports whether a field of an options struct applies in world
// w: every field does but those whose tag world:"..." names the other
// world.
func (w World) Applies(f reflect.StructField) bool {
	t, ok := f.Tag.Lookup("world")
	return !ok || t == w.tag()
}

// Foreign finds, among the fields of the options struct *opts (and of the
// structs it holds), the one at address addr, and reports whether it
// belongs to another world than w, with its name. A command line's flags
// are bound to such fields: a flag given for the other world is refused
// by its field's type, with no list of flag names (the CLI calls this for
// each flag the user set).
func (w World) Foreign(opts any, addr uintptr) (string, bool) {
	name, _, foreign := w.ForeignWhy(opts, addr)
	return name, foreign
}

// ForeignWhy is Foreign with why the field does not apply in w: its
// why:"..." tag, "" where it has none.
func (w World) ForeignWhy(opts any, addr uintptr) (name, why string, foreign bool) {
	v := reflect.ValueOf(opts)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("inputs: Foreign of %T: want a pointer to a struct", opts))
	}
	return w.foreign(v.Elem(), addr, "")
}

func (w World) foreign(v reflect.Value, addr uintptr, path string) (string, string, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if !f.IsExported() {
			continue
		}
		start := fv.Addr().Pointer()
		if addr < start || addr >= start+f.Type.Size() {
			continue
		}
		name := path + f.Name
		if !w.Applies(f) {
			return name, f.Tag.Get("why"), true
		}
		if f.Type.Kind() == reflect.Struct {
			return w.foreign(fv, addr, name+".")
		}
		return name, "", false
	}
	return "", "", false
}
