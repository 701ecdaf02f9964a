package costgraph

import (
	"fmt"

	"github.com/placer/placer/graph"
)

// EncodeWithDevices is Encode with each node's device field set to
// TensorFlow's name for the device the placement gives its op
// ("/device:GPU:<k>"), so that TensorFlow tools can read placer's
// placement. dev holds a device per op.
func EncodeWithDevices(g *graph.Graph, dev []int) ([]byte, error) {
	if len(dev) != g.NumOps() {
		return nil, fmt.Errorf("costgraph: %d devices for %d ops", len(dev), g.NumOps())
	}
	def, err := ToProto(g)
	if err != nil {
		return nil, err
	}
	for i, n := range def.GetNode() {
		if dev[i] < 0 {
			return nil, fmt.Errorf("costgraph: op %d (%s): device %d", i, g.Op(i).Name, dev[i])
		}
		n.Device = TFDevice(dev[i])
	}
	return marshalText(def), nil
}

// TFDevice is TensorFlow's name for GPU k: "/device:GPU:<k>".
func TFDevice(k int) string {
	return fmt.Sprintf("/device:GPU:%d", k)
}
