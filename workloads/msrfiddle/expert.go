package msrfiddle

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/placer/placer/graph"
)

// Expert is msr-fiddle's placement file (the human-experts folder of
// dnn-partitioning and the output of its solvers): for each accelerator
// ("fpgas") and CPU ("cpus"), the ids of the nodes placed on it.
type Expert struct {
	FPGAs []ExpertDevice `json:"fpgas"`
	CPUs  []ExpertDevice `json:"cpus"`
}

// ExpertDevice lists the node ids on one device.
type ExpertDevice struct {
	Nodes []int64 `json:"nodes"`
}

// ReadExpert turns an expert-placement file into a device per op of g,
// whose node ids are ids (Meta.IDs; nil: op index = id). Accelerator k is
// device k. As msr-fiddle's dp program does for training graphs, an op the
// file does not list takes the device of a listed op of its co-location
// group (a backward node that of its forward node). A node listed twice,
// a node on a CPU, an id the graph does not have or an op left without a
// device is a one-line error.
func ReadExpert(data []byte, g *graph.Graph, ids []int64) ([]int, error) {
	var e Expert
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&e); err != nil {
		return nil, graph.JSONError("msrfiddle expert", data, err)
	}
	if len(e.FPGAs) == 0 {
		return nil, fmt.Errorf("msrfiddle expert: no fpgas")
	}
	index := make(map[int64]int, g.NumOps())
	for i := 0; i < g.NumOps(); i++ {
		id := int64(i)
		if ids != nil {
			id = ids[i]
		}
		index[id] = i
	}
	dev := make([]int, g.NumOps())
	for i := range dev {
		dev[i] = -1
	}
	for k, d := range e.FPGAs {
		for _, id := range d.Nodes {
			i, ok := index[id]
			if !ok {
				return nil, fmt.Errorf("msrfiddle expert: fpgas[%d]: node id %d is not in graph %s", k, id, g.Name())
			}
			if dev[i] >= 0 {
				return nil, fmt.Errorf("msrfiddle expert: fpgas[%d]: node id %d is placed twice (also on fpgas[%d])", k, id, dev[i])
			}
			dev[i] = k
		}
	}
	for k, d := range e.CPUs {
		if len(d.Nodes) > 0 {
			return nil, fmt.Errorf("msrfiddle expert: cpus[%d]: node id %d is on a CPU; placer places on accelerators only", k, d.Nodes[0])
		}
	}
	group := map[string]int{}
	for i := range dev {
		if c := g.Op(i).Colocation; c != "" && dev[i] >= 0 {
			if _, ok := group[c]; !ok {
				group[c] = dev[i]
			}
		}
	}
	for i := range dev {
		if dev[i] >= 0 {
			continue
		}
		if k, ok := group[g.Op(i).Colocation]; ok && g.Op(i).Colocation != "" {
			dev[i] = k
			continue
		}
		id := int64(i)
		if ids != nil {
			id = ids[i]
		}
		return nil, fmt.Errorf("msrfiddle expert: node id %d (op %q) is on no device", id, g.Op(i).Name)
	}
	return dev, nil
}

// WriteExpert writes a placement (device per op) as an expert-placement
// file over devices accelerators, naming ops by ids (nil: op index). The
// "cpus" list is one empty device, as msr-fiddle's solvers write it.
func WriteExpert(g *graph.Graph, dev []int, devices int, ids []int64) ([]byte, error) {
	if len(dev) != g.NumOps() {
		return nil, fmt.Errorf("msrfiddle expert: %d devices for %d ops", len(dev), g.NumOps())
	}
	e := Expert{FPGAs: make([]ExpertDevice, devices), CPUs: []ExpertDevice{{Nodes: []int64{}}}}
	for k := range e.FPGAs {
		e.FPGAs[k].Nodes = []int64{}
	}
	for i, k := range dev {
		if k < 0 || k >= devices {
			return nil, fmt.Errorf("msrfiddle expert: op %d (%s): device %d out of range [0, %d)", i, g.Op(i).Name, k, devices)
		}
		id := int64(i)
		if ids != nil {
			id = ids[i]
		}
		e.FPGAs[k].Nodes = append(e.FPGAs[k].Nodes, id)
	}
	out, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// DecodeWithIDs is DecodeWithMeta that also returns each op's node id (op
// index -> id), for expert-placement files (ReadExpert, WriteExpert), which
// name nodes by id.
func DecodeWithIDs(data []byte, name string) (*graph.Graph, Meta, []int64, error) {
	g, meta, err := DecodeWithMeta(data, name)
	if err != nil {
		return nil, meta, nil, err
	}
	// The file decoded, so every node has a valid whole-number id.
	src, _ := quoteNonFinite(data)
	var f file
	if err := json.Unmarshal(src, &f); err != nil {
		return nil, meta, nil, fmt.Errorf("msrfiddle: %s: %v", name, err)
	}
	ids := make([]int64, len(f.Nodes))
	for i := range f.Nodes {
		ids[i], _, _ = integer(f.Nodes[i].ID)
	}
	return g, meta, ids, nil
}
