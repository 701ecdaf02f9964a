package msrfiddle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/placer/placer/graph"
)

// Meta is what an msr-fiddle file says about the machine its graph was
// profiled for. A zero field means the file did not give it.
type Meta struct {
	// MaxBytesPerDevice is maxSizePerFPGA: the memory of one accelerator in
	// bytes, the limit on the sum of the sizes of the nodes placed on it.
	MaxBytesPerDevice int64
	// Devices is maxFPGAs: the number of accelerators.
	Devices int
	// CPUs is maxCPUs. Placer places ops on accelerators only, so this is
	// informational.
	CPUs int
	// CPUOnly counts the nodes marked supportedOnFpga false or 0. They are
	// imported like the others (with their fpgaLatency), since placer has
	// no CPU devices to put them on.
	CPUOnly int
}

// Read imports the msr-fiddle JSON file at path. The graph is named after
// the file, without its directory and extension.
func Read(path string) (*graph.Graph, error) {
	g, _, err := ReadWithMeta(path)
	return g, err
}

// ReadWithMeta is Read that also returns the file's machine description.
func ReadWithMeta(path string) (*graph.Graph, Meta, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("msrfiddle: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return DecodeWithMeta(data, name)
}

// Decode imports an msr-fiddle graph held in data and names it name.
func Decode(data []byte, name string) (*graph.Graph, error) {
	g, _, err := DecodeWithMeta(data, name)
	return g, err
}

// file is the JSON document. Every scalar is kept raw and parsed by hand so
// that a wrong type or value is reported with the node and field it is in.
type file struct {
	MaxSizePerFPGA json.RawMessage `json:"maxSizePerFPGA"`
	MaxFPGAs       json.RawMessage `json:"maxFPGAs"`
	MaxCPUs        json.RawMessage `json:"maxCPUs"`
	Nodes          []fileNode      `json:"nodes"`
	Edges          []fileEdge      `json:"edges"`
}

type fileNode struct {
	ID              json.RawMessage `json:"id"`
	Name            json.RawMessage `json:"name"`
	SupportedOnFpga json.RawMessage `json:"supportedOnFpga"`
	FpgaLatency     json.RawMessage `json:"fpgaLatency"`
	IsBackwardNode  json.RawMessage `json:"isBackwardNode"`
	ColorClass      json.RawMessage `json:"colorClass"`
	Size            json.RawMessage `json:"size"`
}

type fileEdge struct {
	SourceID json.RawMessage `json:"sourceId"`
	DestID   json.RawMessage `json:"destId"`
	Cost     json.RawMessage `json:"cost"`
	Size     json.RawMessage `json:"size"`
}

// decoder carries the error prefix and the node ids while decoding.
type decoder struct {
	what   string         // "msrfiddle: <name>"
	ids    []int64        // op index -> node id
	name   []string       // op index -> node name in the file ("" if none)
	byName map[string]int // op name -> op index
}

func (d *decoder) errorf(where, field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if field == "" {
		return fmt.Errorf("%s: %s: %s", d.what, where, msg)
	}
	return fmt.Errorf("%s: %s: %s: %s", d.what, where, field, msg)
}

// DecodeWithMeta is Decode that also returns the file's machine
// description (maxSizePerFPGA, maxFPGAs, maxCPUs).
func DecodeWithMeta(data []byte, name string) (*graph.Graph, Meta, error) {
	d := &decoder{what: "msrfiddle"}
	if name != "" {
		d.what += ": " + name
	}
	src, quoted := quoteNonFinite(data)
	var f file
	if err := json.Unmarshal(src, &f); err != nil {
		unshift(err, quoted)
		return nil, Meta{}, graph.JSONError(d.what, data, rephrase(err))
	}
	meta, err := d.meta(&f)
	if err != nil {
		return nil, Meta{}, err
	}
	if len(f.Nodes) == 0 {
		return nil, Meta{}, fmt.Errorf("%s: no nodes", d.what)
	}

	// Nodes: read and check every field first, then name the ops.
	type node struct {
		id       int64
		name     string
		ms       float64
		size     int64
		backward bool
		color    string // "" = no class
	}
	nodes := make([]node, len(f.Nodes))
	index := make(map[int64]int, len(f.Nodes)) // node id -> op index
	nameCount := map[string]int{}
	colorCount := map[string]int{}
	for i := range f.Nodes {
		fn := &f.Nodes[i]
		n := &nodes[i]
		where := fmt.Sprintf("nodes[%d]", i)
		id, ok, msg := integer(fn.ID)
		switch {
		case msg != "":
			return nil, meta, d.errorf(where, "id", "%s", msg)
		case !ok:
			return nil, meta, d.errorf(where, "id", "missing")
		}
		n.id = id
		where = fmt.Sprintf("nodes[%d] (id %d)", i, id)
		if s, ok, msg := str(fn.Name); msg != "" {
			return nil, meta, d.errorf(where, "name", "%s", msg)
		} else if ok {
			n.name = s
			where = fmt.Sprintf("nodes[%d] (id %d %q)", i, id, s)
		}
		if j, dup := index[id]; dup {
			return nil, meta, d.errorf(where, "id", "duplicate: nodes[%d] has id %d too", j, id)
		}
		index[id] = i

		ms, ok, msg := number(fn.FpgaLatency)
		switch {
		case msg != "":
			return nil, meta, d.errorf(where, "fpgaLatency", "%s", msg)
		case !ok:
			return nil, meta, d.errorf(where, "fpgaLatency", "missing")
		}
		if msg := graph.BadNumber(ms); msg != "" {
			return nil, meta, d.errorf(where, "fpgaLatency", "%s", msg)
		}
		n.ms = ms
		if n.size, msg = bytesOf(fn.Size); msg != "" {
			return nil, meta, d.errorf(where, "size", "%s", msg)
		}
		if n.backward, _, msg = flag(fn.IsBackwardNode); msg != "" {
			return nil, meta, d.errorf(where, "isBackwardNode", "%s", msg)
		}
		supported, ok, msg := flag(fn.SupportedOnFpga)
		if msg != "" {
			return nil, meta, d.errorf(where, "supportedOnFpga", "%s", msg)
		}
		if ok && !supported {
			meta.CPUOnly++
		}
		if n.color, msg = colorOf(fn.ColorClass); msg != "" {
			return nil, meta, d.errorf(where, "colorClass", "%s", msg)
		}
		nameCount[n.name]++
		if n.color != "" {
			colorCount[n.color]++
		}
	}

	b := graph.NewBuilder(name)
	d.ids = make([]int64, len(nodes))
	d.name = make([]string, len(nodes))
	d.byName = make(map[string]int, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		// Names are debug information in this format: a missing one is
		// made from the id, a repeated one gets the id appended.
		opName := n.name
		switch {
		case opName == "":
			opName = fmt.Sprintf("node%d", n.id)
		case nameCount[opName] > 1:
			opName = fmt.Sprintf("%s#%d", opName, n.id)
		}
		if j, taken := b.Lookup(opName); taken {
			return nil, meta, d.errorf(d.node(i, n.name), "name", "op name %q is taken by nodes[%d] (id %d)", opName, j, d.ids[j])
		}
		op := graph.Op{
			Name:       opName,
			Class:      graph.ClassUnknown,
			ParamBytes: n.size,
			HasTime:    true,
			Time:       n.ms / 1000,
			Backward:   n.backward,
			// The format's size is all the memory the node takes on
			// its device, its outputs included; the edges' sizes are
			// those same bytes again. Marking the op's outputs as
			// views keeps them out of the producer's memory (they are
			// in ParamBytes) while a copy sent to another device still
			// moves and is held there at its full size.
			Alias: true,
		}
		// A class of one node constrains nothing; only shared classes
		// become co-location groups.
		if n.color != "" && colorCount[n.color] > 1 {
			op.Colocation = "color-" + n.color
		}
		b.AddOp(op)
		d.ids[i], d.name[i] = n.id, n.name
		d.byName[opName] = i
	}

	// Edges: one tensor per (source, size, cost); each edge adds a consumer.
	type key struct {
		src     int
		size    int64
		hasCost bool
		cost    uint64
	}
	tensors := map[key]int{}
	consumed := map[[2]int]bool{} // (tensor, consumer) already added
	for k := range f.Edges {
		fe := &f.Edges[k]
		where := fmt.Sprintf("edges[%d]", k)
		srcID, ok, msg := integer(fe.SourceID)
		switch {
		case msg != "":
			return nil, meta, d.errorf(where, "sourceId", "%s", msg)
		case !ok:
			return nil, meta, d.errorf(where, "sourceId", "missing")
		}
		dstID, ok, msg := integer(fe.DestID)
		switch {
		case msg != "":
			return nil, meta, d.errorf(where, "destId", "%s", msg)
		case !ok:
			return nil, meta, d.errorf(where, "destId", "missing")
		}
		where = fmt.Sprintf("edges[%d] (%d -> %d)", k, srcID, dstID)
		src, ok := index[srcID]
		if !ok {
			return nil, meta, d.errorf(where, "sourceId", "node id %d does not exist", srcID)
		}
		dst, ok := index[dstID]
		if !ok {
			return nil, meta, d.errorf(where, "destId", "node id %d does not exist", dstID)
		}
		if src == dst {
			return nil, meta, d.errorf(where, "", "cycle: %s depends on itself", d.node(src, d.name[src]))
		}
		ms, hasCost, msg := number(fe.Cost)
		if msg == "" && hasCost {
			msg = graph.BadNumber(ms)
		}
		if msg != "" {
			return nil, meta, d.errorf(where, "cost", "%s", msg)
		}
		size, msg := bytesOf(fe.Size)
		if msg != "" {
			return nil, meta, d.errorf(where, "size", "%s", msg)
		}
		kk := key{src: src, size: size, hasCost: hasCost}
		if hasCost {
			kk.cost = math.Float64bits(ms)
		}
		t, ok := tensors[kk]
		if !ok {
			t = b.AddTensorFull(graph.Tensor{
				Producer:        src,
				Bytes:           size,
				HasTransferTime: hasCost,
				TransferTime:    ms / 1000,
			})
			tensors[kk] = t
		}
		if consumed[[2]int{t, dst}] {
			continue // the same edge twice: one consumption
		}
		consumed[[2]int{t, dst}] = true
		b.Consume(t, dst)
	}

	g, err := b.Build()
	if err != nil {
		var cyc *graph.CycleError
		if errors.As(err, &cyc) {
			return nil, meta, d.cycle(cyc)
		}
		return nil, meta, fmt.Errorf("%s: %v", d.what, err)
	}
	return g, meta, nil
}

// node describes op i for an error message: `node 7 "conv1"`.
func (d *decoder) node(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("node %d", d.ids[i])
	}
	return fmt.Sprintf("node %d %q", d.ids[i], name)
}

// cycle rewrites a graph.CycleError in terms of node ids and names.
func (d *decoder) cycle(e *graph.CycleError) error {
	const max = 8
	parts := make([]string, 0, max+1)
	for j, op := range e.Ops {
		if j == max {
			parts = append(parts, fmt.Sprintf("... (%d nodes)", len(e.Ops)))
			break
		}
		if i, ok := d.byName[op]; ok {
			parts = append(parts, d.node(i, d.name[i]))
		} else {
			parts = append(parts, strconv.Quote(op))
		}
	}
	if len(e.Ops) <= max {
		parts = append(parts, parts[0])
	}
	return fmt.Errorf("%s: cycle: %s", d.what, strings.Join(parts, " -> "))
}

// meta reads the machine description.
func (d *decoder) meta(f *file) (Meta, error) {
	var m Meta
	v, ok, msg := number(f.MaxSizePerFPGA)
	if msg == "" && ok {
		msg = graph.BadNumber(v)
		if msg == "" && v >= math.MaxInt64 {
			msg = "is too large"
		}
	}
	if msg != "" {
		return m, fmt.Errorf("%s: maxSizePerFPGA: %s", d.what, msg)
	}
	m.MaxBytesPerDevice = int64(v)
	for _, c := range []struct {
		field string
		raw   json.RawMessage
		dst   *int
	}{{"maxFPGAs", f.MaxFPGAs, &m.Devices}, {"maxCPUs", f.MaxCPUs, &m.CPUs}} {
		n, _, msg := integer(c.raw)
		if msg == "" && n < 0 {
			msg = "is negative"
		}
		if msg == "" && n > math.MaxInt32 {
			msg = "is too large"
		}
		if msg != "" {
			return m, fmt.Errorf("%s: %s: %s", d.what, c.field, msg)
		}
		*c.dst = int(n)
	}
	return m, nil
}

// kind names the JSON type of a raw value for error messages.
func kind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func absent(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// number parses a JSON number, or one of the strings "NaN", "Infinity" and
// "-Infinity" (quoteNonFinite makes Python's bare NaN and Infinity into
// these). ok is false when the value is absent or null; msg says what is
// wrong, or is "".
func number(raw json.RawMessage) (v float64, ok bool, msg string) {
	if absent(raw) {
		return 0, false, ""
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			switch s {
			case "NaN":
				return math.NaN(), true, ""
			case "Infinity":
				return math.Inf(1), true, ""
			case "-Infinity":
				return math.Inf(-1), true, ""
			}
		}
		return 0, false, fmt.Sprintf("want a number, got the string %s", clip(raw))
	}
	if k := kind(raw); k != "a number" {
		return 0, false, fmt.Sprintf("want a number, got %s", k)
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false, fmt.Sprintf("want a number, got %s", clip(raw))
	}
	return v, true, "" // out of range: ±Inf, reported by the caller
}

// maxExact is the largest integer every float64 below it represents exactly.
const maxExact = 1 << 53

// integer parses a JSON number that must be a whole number (1 and 1.0 both
// do).
func integer(raw json.RawMessage) (v int64, ok bool, msg string) {
	if absent(raw) {
		return 0, false, ""
	}
	if kind(raw) == "a number" {
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return n, true, ""
		}
	}
	f, ok, msg := number(raw)
	if msg != "" || !ok {
		return 0, ok, msg
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, false, fmt.Sprintf("want a whole number, got %v", f)
	case f != math.Trunc(f):
		return 0, false, fmt.Sprintf("want a whole number, got %s", clip(raw))
	case math.Abs(f) > maxExact:
		return 0, false, fmt.Sprintf("%s is out of range", clip(raw))
	}
	return int64(f), true, ""
}

// bytesOf parses an optional size in bytes; a fraction of a byte is rounded
// up (the samples hold 0.125-byte tensors: one bit).
func bytesOf(raw json.RawMessage) (int64, string) {
	v, ok, msg := number(raw)
	if msg != "" || !ok {
		return 0, msg
	}
	if msg := graph.BadNumber(v); msg != "" {
		return 0, msg
	}
	v = math.Ceil(v)
	if v >= math.MaxInt64 {
		return 0, "is too large"
	}
	return int64(v), ""
}

// flag parses a boolean written as true/false or 0/1.
func flag(raw json.RawMessage) (v, ok bool, msg string) {
	if absent(raw) {
		return false, false, ""
	}
	switch string(raw) {
	case "true":
		return true, true, ""
	case "false":
		return false, true, ""
	}
	if kind(raw) == "a number" {
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil && (f == 0 || f == 1) {
			return f == 1, true, ""
		}
		return false, false, fmt.Sprintf("want true, false, 0 or 1, got %s", clip(raw))
	}
	return false, false, fmt.Sprintf("want true, false, 0 or 1, got %s", kind(raw))
}

// str parses an optional string.
func str(raw json.RawMessage) (string, bool, string) {
	if absent(raw) {
		return "", false, ""
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false, fmt.Sprintf("want a string, got %s", kind(raw))
	}
	return s, true, ""
}

// colorOf parses an optional colorClass: a whole number or a string.
func colorOf(raw json.RawMessage) (string, string) {
	if absent(raw) {
		return "", ""
	}
	if raw[0] == '"' {
		s, _, msg := str(raw)
		return s, msg
	}
	n, _, msg := integer(raw)
	if msg != "" {
		return "", msg
	}
	return strconv.FormatInt(n, 10), ""
}

// clip returns a number or string as written, shortened for an error
// message (raw JSON scalars hold no line breaks).
func clip(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// quoteNonFinite turns the bare NaN, Infinity and -Infinity that Python's
// json module writes (and that JSON does not allow) into strings, so that
// the value reaches the field it belongs to and is reported there. It
// returns data itself when there are none, and the offsets (in the result)
// where each quoted token begins.
func quoteNonFinite(data []byte) ([]byte, []int) {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data, nil
	}
	var out []byte
	var at []int
	inString, escaped := false, false
	last := 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			continue
		}
		var tok string
		for _, t := range []string{"NaN", "Infinity", "-Infinity"} {
			if bytes.HasPrefix(data[i:], []byte(t)) {
				tok = t
				break
			}
		}
		if tok == "" {
			continue
		}
		out = append(out, data[last:i]...)
		at = append(at, len(out))
		out = append(out, '"')
		out = append(out, tok...)
		out = append(out, '"')
		i += len(tok) - 1
		last = i + 1
	}
	if at == nil {
		return data, nil
	}
	return append(out, data[last:]...), at
}

// unshift maps the offset in a JSON error on quoteNonFinite's output back
// to the original data: each quoted token before it added two bytes.
func unshift(err error, quoted []int) {
	if len(quoted) == 0 {
		return
	}
	back := func(off int64) int64 {
		shift := int64(0)
		for _, q := range quoted {
			if int64(q) >= off {
				break
			}
			shift += 2
		}
		return max(off-shift, 0)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		syn.Offset = back(syn.Offset)
	case errors.As(err, &typ):
		typ.Offset = back(typ.Offset)
	}
}

// typeError rephrases a *json.UnmarshalTypeError (the file, nodes or edges
// of the wrong JSON type) without Go type names; graph.JSONError still
// finds its offset through Unwrap.
type typeError struct {
	err *json.UnmarshalTypeError
	msg string
}

func (e *typeError) Error() string { return e.msg }
func (e *typeError) Unwrap() error { return e.err }

func rephrase(err error) error {
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) || typ.Type == nil {
		return err
	}
	field := typ.Field
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		field = field[i+1:]
	}
	want := "an object"
	if typ.Type.Kind() == reflect.Slice {
		want = "an array"
	} else if field != "" {
		field += "[...]"
	}
	if field == "" {
		field = "the file"
	}
	return &typeError{err: typ, msg: fmt.Sprintf("%s: want %s, got %s", field, want, typ.Value)}
}
