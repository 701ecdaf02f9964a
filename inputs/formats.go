package inputs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/workloads/costgraph"
	"github.com/placer/placer/workloads/msrfiddle"
	"github.com/placer/placer/workloads/onnx"
)

// The formats of the files placer reads are told apart here and only
// here, one registry per kind of file: graph files (importers, detected
// from a file's first headSize bytes and its name; GraphFormat) and
// placement files (an msr-fiddle expert placement or a placer decision or
// result file; PlacementFormat). Callers ask GraphFormat or
// PlacementFormat, never the file's bytes.

// headSize is how much of a graph file detection reads.
const headSize = 4096

// Importer decodes one external graph format; name is used as the graph
// name when the format has none. Meta may carry a device count and memory
// capacity the format states (zero when it does not). Detect sees at
// most the file's first headSize bytes.
type Importer struct {
	Name   string
	Detect func(head []byte, path string) bool
	Decode func(data []byte, name string) (*graph.Graph, Meta, error)
}

// Meta is what a graph file says about the cluster it was made for.
type Meta struct {
	Devices  int   // 0 = not stated
	Capacity int64 // device memory in bytes, 0 = not stated
}

var importers = map[string]Importer{}

// detectOrder is the order formats are tried in when none is given.
var detectOrder []string

// RegisterImporter adds a graph format. It panics on a duplicate name (a
// programming error).
func RegisterImporter(im Importer) {
	if _, dup := importers[im.Name]; dup {
		panic("inputs: duplicate importer " + im.Name)
	}
	importers[im.Name] = im
	detectOrder = append(detectOrder, im.Name)
}

func init() {
	// native first: its name is in the file's first 256 bytes, and is
	// read as a stream (readNative), never whole.
	RegisterImporter(Importer{
		Name: "native",
		Detect: func(head []byte, _ string) bool {
			return bytes.Contains(head[:min(len(head), 256)], []byte(`"`+graph.FormatName+`"`))
		},
		Decode: func(data []byte, _ string) (*graph.Graph, Meta, error) {
			g, err := graph.Decode(data)
			return g, Meta{}, err
		},
	})
	RegisterImporter(Importer{
		Name: "msr-fiddle",
		Detect: func(head []byte, _ string) bool {
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
		Detect: func(head []byte, path string) bool {
			if strings.HasSuffix(path, ".pbtxt") || strings.HasSuffix(path, ".pb.txt") {
				return true
			}
			head = bytes.TrimSpace(head)
			return bytes.HasPrefix(head, []byte("node")) && bytes.Contains(head, []byte("name"))
		},
		Decode: func(data []byte, name string) (*graph.Graph, Meta, error) {
			g, err := costgraph.Decode(data, name)
			return g, Meta{}, err
		},
	})
	RegisterImporter(Importer{
		Name: "onnx",
		Detect: func(head []byte, path string) bool {
			return strings.HasSuffix(strings.ToLower(path), ".onnx") || onnx.Detect(head)
		},
		Decode: func(data []byte, name string) (*graph.Graph, Meta, error) {
			g, err := onnx.Decode(data, name)
			return g, Meta{}, err
		},
	})
}

// Formats lists the graph formats, sorted.
func Formats() []string {
	var f []string
	for k := range importers {
		f = append(f, k)
	}
	sort.Strings(f)
	return f
}

// GraphFormat is the format of the graph file of spec: spec.Format (in
// any case) when given, else the first format, in detection order, that
// recognizes the file's head (data: its first headSize bytes are used)
// and its name. An unknown --format, or a file that no format recognizes,
// is a one-line error naming the file and the formats.
func GraphFormat(spec GraphSpec, data []byte) (string, error) {
	if spec.Format != "" {
		return namedFormat(spec.Format)
	}
	if f := detectGraph(data, spec.Path); f != "" {
		return f, nil
	}
	if err := jsonFault(data); err != nil {
		// JSON that does not parse: that, not its format, is what is wrong.
		return "", fmt.Errorf("%s: %w", spec.Path, err)
	}
	return "", fmt.Errorf("%s: cannot tell the graph format; give --format (one of %s)", spec.Path, strings.Join(Formats(), ", "))
}

// jsonFault says where data, a whole file shorter than headSize that
// starts as JSON does (an object or an array), stops being JSON: the end
// of a truncated file, or the byte of a syntax error. nil for data that
// parses, does not start as JSON, or is only a file's head.
func jsonFault(data []byte) error {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(data) >= headSize || len(t) == 0 || t[0] != '{' && t[0] != '[' {
		return nil
	}
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && se.Offset >= int64(len(data)):
		return fmt.Errorf("truncated JSON: the file ends at byte %d, inside a value", len(data))
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at byte %d: %s", se.Offset, se)
	}
	return nil
}

// IsGraphFormat reports whether the graph file of spec, data its contents
// or its head, is in format: GraphFormat's answer (false on its error).
func IsGraphFormat(spec GraphSpec, data []byte, format string) bool {
	f, err := GraphFormat(spec, data)
	return err == nil && f == format
}

// namedFormat checks a --format.
func namedFormat(format string) (string, error) {
	f := strings.ToLower(format)
	if _, ok := importers[f]; !ok {
		return "", fail.Usagef("--format %q: unknown graph format (want one of %s)", format, strings.Join(Formats(), ", "))
	}
	return f, nil
}

// detectGraph is the first graph format, in detection order, that
// recognizes data's head and path; "" when none does.
func detectGraph(data []byte, path string) string {
	head := data[:min(len(data), headSize)]
	for _, f := range detectOrder {
		if importers[f].Detect(head, path) {
			return f
		}
	}
	return ""
}

// DetectFormat names the graph format of the file at path as Graph would
// detect it from the file's first 4,096 bytes and its name: "native" or
// an importer's name, "" when none recognizes it (a result or decision
// file, say).
func DetectFormat(path string) (string, error) {
	head, err := readHead(path, headSize)
	if err != nil {
		return "", err
	}
	return detectGraph(head, path), nil
}

// The placement file formats: what --placement and --expert read besides
// the named strategies.
const (
	// PlacementMSRFiddle is msr-fiddle's expert placement:
	// {"fpgas": [{"nodes": [ids]}, ...]} (workloads/msrfiddle).
	PlacementMSRFiddle = "msr-fiddle-expert"
	// PlacementDecision is a placer decision or result file (decision).
	PlacementDecision = "decision"
)

// placementFormats are the placement formats in detection order. Each
// Detect sees the whole file: msr-fiddle's "fpgas" may follow other keys.
var placementFormats = []struct {
	Name   string
	Detect func(data []byte) bool
}{
	{PlacementMSRFiddle, func(data []byte) bool { return bytes.Contains(data, []byte(`"fpgas"`)) }},
	// Anything else is read as a decision or result file, whose reader
	// (decision.Decode) says in one line what is wrong with it.
	{PlacementDecision, func([]byte) bool { return true }},
}

// PlacementFormat is the format of a placement file's contents: the first
// placement format that recognizes them. It cannot fail: a file that is
// no msr-fiddle expert placement is a decision or result file, and its
// reader reports what is wrong with it.
func PlacementFormat(data []byte) string {
	for _, f := range placementFormats {
		if f.Detect(data) {
			return f.Name
		}
	}
	panic("inputs: no placement format recognizes the file") // the last one takes anything
}

// PlacementFormats lists the placement formats in detection order.
func PlacementFormats() []string {
	var f []string
	for _, p := range placementFormats {
		f = append(f, p.Name)
	}
	return f
}
