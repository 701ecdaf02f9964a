package inputs

import (
	"bytes"
	"strings"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/workloads/costgraph"
	"github.com/placer/placer/workloads/msrfiddle"
	"github.com/placer/placer/workloads/onnx"
)

func init() {
	RegisterImporter(Importer{
		Name: "msr-fiddle",
		Detect: func(data []byte, _ string) bool {
			head := data[:min(len(data), 4096)]
			return bytes.Contains(head, []byte(`"fpgaLatency"`)) || bytes.Contains(head, []byte(`"maxFPGAs"`))
		},
		Decode: func(data []byte, name string) (*graph.Graph, Meta, error) {
			g, m, err := msrfiddle.DecodeWithMeta(data, name)
			if err != nil {
				return nil, Meta{}, err
			}
			return g, Meta{Devices: m.Devices, Capacity: m.MaxBytesPerDevice}, nil
		},
	})
	RegisterImporter(Importer{
		Name: "costgraph",
		Detect: func(data []byte, path string) bool {
			if strings.HasSuffix(path, ".pbtxt") || strings.HasSuffix(path, ".pb.txt") {
				return true
			}
			head := bytes.TrimSpace(data[:min(len(data), 4096)])
			return bytes.HasPrefix(head, []byte("node")) && bytes.Contains(head, []byte("name"))
		},
		Decode: func(data []byte, name string) (*graph.Graph, Meta, error) {
			g, err := costgraph.Decode(data, name)
			return g, Meta{}, err
		},
	})
	RegisterImporter(Importer{
		Name: "onnx",
		Detect: func(data []byte, path string) bool {
			return strings.HasSuffix(strings.ToLower(path), ".onnx") || onnx.Detect(data)
		},
		Decode: func(data []byte, name string) (*graph.Graph, Meta, error) {
			g, err := onnx.Decode(data, name)
			return g, Meta{}, err
		},
	})
}
