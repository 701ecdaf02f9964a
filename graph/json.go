package graph

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// FormatName and the versions identify the native JSON graph format
// (docs/graph-format.md). This placer reads versions 1 and 2. Write
// writes FormatVersion (1) for a graph without batch information, so that
// such a file reads as it always did, and FormatVersionBatch (2), which
// adds the keys batch, batch_dim and fixed_*, for one with it.
const (
	FormatName         = "placer-graph"
	FormatVersion      = 1
	FormatVersionBatch = 2
)

type fileGraph struct {
	Format  string         `json:"format"`
	Version int            `json:"version"`
	Name    string         `json:"name"`
	Batch   int            `json:"batch,omitempty"`
	Exec    *fileExecution `json:"execution,omitempty"`
	Ops     []fileOp       `json:"ops"`
	Tensors []fileTensor   `json:"tensors"`
	Control []fileControl  `json:"control,omitempty"`
}

type fileOp struct {
	Name         string   `json:"name"`
	Type         string   `json:"type,omitempty"`
	Class        string   `json:"class,omitempty"`
	DType        string   `json:"dtype,omitempty"`
	Shape        []int64  `json:"shape,omitempty"`
	FLOPs        float64  `json:"flops,omitempty"`
	BytesRead    int64    `json:"bytes_read,omitempty"`
	BytesWritten int64    `json:"bytes_written,omitempty"`
	ParamBytes   int64    `json:"param_bytes,omitempty"`
	TempBytes    int64    `json:"temp_bytes,omitempty"`
	Time         *float64 `json:"time_s,omitempty"`
	Dispatch     *float64 `json:"dispatch_s,omitempty"`
	Launches     *int     `json:"launches,omitempty"`
	Colocation   string   `json:"colocation,omitempty"`
	Backward     bool     `json:"backward,omitempty"`
	Alias        bool     `json:"alias,omitempty"`

	FixedFLOPs        float64 `json:"fixed_flops,omitempty"`
	FixedBytesRead    int64   `json:"fixed_bytes_read,omitempty"`
	FixedBytesWritten int64   `json:"fixed_bytes_written,omitempty"`
	FixedTempBytes    int64   `json:"fixed_temp_bytes,omitempty"`
}

type fileTensor struct {
	Name         string   `json:"name,omitempty"`
	Producer     string   `json:"producer"`
	Consumers    []string `json:"consumers"`
	Bytes        int64    `json:"bytes"`
	TransferTime *float64 `json:"transfer_s,omitempty"`
	BatchDim     *int     `json:"batch_dim,omitempty"`
}

type fileControl struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Write encodes g in the native JSON format: version 1 when g has no
// batch information, else version 2 with it.
func Write(w io.Writer, g *Graph) error { return write(w, g, true) }

// write encodes g, with its batch information (when g has some) and its
// execution settings when full is set.
func write(w io.Writer, g *Graph, full bool) error {
	batch := full && g.batch > 0
	f := fileGraph{Format: FormatName, Version: FormatVersion, Name: g.name}
	if full {
		f.Exec = toFileExec(g)
	}
	if batch {
		f.Version, f.Batch = FormatVersionBatch, g.batch
	}
	f.Ops = make([]fileOp, len(g.ops))
	for i := range g.ops {
		op := &g.ops[i]
		fo := fileOp{
			Name: op.Name, Type: op.Type, Class: op.Class.String(), DType: op.DType.String(), Shape: op.Shape,
			FLOPs: op.FLOPs, BytesRead: op.BytesRead, BytesWritten: op.BytesWritten,
			ParamBytes: op.ParamBytes, TempBytes: op.TempBytes, Colocation: op.Colocation, Backward: op.Backward, Alias: op.Alias,
		}
		if batch {
			fo.FixedFLOPs, fo.FixedBytesRead, fo.FixedBytesWritten, fo.FixedTempBytes = op.FixedFLOPs, op.FixedBytesRead, op.FixedBytesWritten, op.FixedTempBytes
		}
		if op.HasTime {
			t := op.Time
			fo.Time = &t
		}
		if op.HasDispatch {
			t := op.Dispatch
			fo.Dispatch = &t
		}
		if op.HasLaunches {
			n := op.Launches
			fo.Launches = &n
		}
		f.Ops[i] = fo
	}
	f.Tensors = make([]fileTensor, len(g.tensors))
	for t := range g.tensors {
		ts := &g.tensors[t]
		ft := fileTensor{Name: ts.Name, Producer: g.ops[ts.Producer].Name, Bytes: ts.Bytes, Consumers: make([]string, len(ts.Consumers))}
		for j, c := range ts.Consumers {
			ft.Consumers[j] = g.ops[c].Name
		}
		if ts.HasTransferTime {
			x := ts.TransferTime
			ft.TransferTime = &x
		}
		if batch && ts.BatchDim != NoBatch {
			d := ts.BatchDim
			ft.BatchDim = &d
		}
		f.Tensors[t] = ft
	}
	for _, e := range g.control {
		f.Control = append(f.Control, fileControl{From: g.ops[e.From].Name, To: g.ops[e.To].Name})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(&f)
}

// Read decodes a graph in the native JSON format and validates it. Errors
// name the line (syntax) or the op, tensor and field (content). From an
// io.ReadSeeker (a file) it reads the input once, in small pieces (see
// fastDecode), unless the input is malformed or unusual: then it seeks
// back and decodes the whole input as Decode does.
func Read(r io.Reader) (*Graph, error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		if start, err := rs.Seek(0, io.SeekCurrent); err == nil {
			g, err := fastDecode(rs, nil)
			if err != errSlow {
				return g, err
			}
			if _, err := rs.Seek(start, io.SeekStart); err != nil {
				return nil, fmt.Errorf("graph: read: %w", err)
			}
		}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("graph: read: %w", err)
	}
	return Decode(data)
}

// Decode is Read on a byte slice.
func Decode(data []byte) (*Graph, error) {
	g, err := fastDecode(nil, data)
	if err != errSlow {
		return g, err
	}
	return decodeRef(data)
}

// decodeRef is the reference decoder: encoding/json into fileGraph, then
// the Builder. Every error message of the format is its own.
func decodeRef(data []byte) (*Graph, error) {
	var f fileGraph
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, JSONError("graph", data, err)
	}
	if err := CheckEnd("graph", data, dec); err != nil {
		return nil, err
	}
	if f.Format != FormatName {
		return nil, fmt.Errorf("graph: format is %q, want %q (is this a placer graph file?)", f.Format, FormatName)
	}
	if f.Version != FormatVersion && f.Version != FormatVersionBatch {
		return nil, fmt.Errorf("graph: format version %d is not supported (this placer reads versions %d and %d)", f.Version, FormatVersion, FormatVersionBatch)
	}
	if f.Batch != 0 && f.Version < FormatVersionBatch {
		return nil, fmt.Errorf("graph: batch: batch information needs format version %d (this file says version %d)", FormatVersionBatch, f.Version)
	}
	b := NewBuilder(f.Name)
	b.SetBatch(f.Batch)
	for i := range f.Ops {
		fo := &f.Ops[i]
		op := Op{
			Name: fo.Name, Type: fo.Type, Shape: fo.Shape, FLOPs: fo.FLOPs, BytesRead: fo.BytesRead,
			BytesWritten: fo.BytesWritten, ParamBytes: fo.ParamBytes, TempBytes: fo.TempBytes,
			Colocation: fo.Colocation, Backward: fo.Backward, Alias: fo.Alias,
			FixedFLOPs: fo.FixedFLOPs, FixedBytesRead: fo.FixedBytesRead, FixedBytesWritten: fo.FixedBytesWritten, FixedTempBytes: fo.FixedTempBytes,
		}
		if fo.Name == "" {
			return nil, fmt.Errorf("graph: op #%d: name: empty", i)
		}
		if fo.Class != "" {
			c, err := ParseClass(fo.Class)
			if err != nil {
				return nil, &Error{Op: fo.Name, Tensor: -1, Field: "class", Msg: err.Error()}
			}
			op.Class = c
		}
		if fo.DType != "" {
			d, err := ParseDType(fo.DType)
			if err != nil {
				return nil, &Error{Op: fo.Name, Tensor: -1, Field: "dtype", Msg: err.Error()}
			}
			op.DType = d
		}
		if fo.Time != nil {
			op.HasTime, op.Time = true, *fo.Time
		}
		if fo.Dispatch != nil {
			op.HasDispatch, op.Dispatch = true, *fo.Dispatch
		}
		if fo.Launches != nil {
			op.HasLaunches, op.Launches = true, *fo.Launches
		}
		b.AddOp(op)
	}
	if len(b.errs) > 0 {
		return nil, b.errs[0]
	}
	lookup := func(t int, field, name string) (int, error) {
		i, ok := b.Lookup(name)
		if !ok {
			return 0, &Error{Tensor: t, Field: field, Msg: fmt.Sprintf("op %q does not exist", name)}
		}
		return i, nil
	}
	for t := range f.Tensors {
		ft := &f.Tensors[t]
		p, err := lookup(t, "producer", ft.Producer)
		if err != nil {
			return nil, err
		}
		ts := Tensor{Name: ft.Name, Producer: p, Bytes: ft.Bytes, Consumers: make([]int, len(ft.Consumers)), BatchDim: NoBatch}
		if ft.BatchDim != nil && *ft.BatchDim != NoBatch {
			if f.Batch == 0 {
				return nil, &Error{Tensor: t, Field: "batch_dim", Msg: "set, but the graph has no batch (top-level \"batch\")"}
			}
			ts.BatchDim = *ft.BatchDim
		}
		for j, c := range ft.Consumers {
			if ts.Consumers[j], err = lookup(t, "consumers", c); err != nil {
				return nil, err
			}
		}
		if ft.TransferTime != nil {
			ts.HasTransferTime, ts.TransferTime = true, *ft.TransferTime
		}
		b.AddTensorFull(ts)
	}
	if f.Exec != nil {
		e, err := fromFileExec(f.Exec, b.Lookup)
		if err != nil {
			return nil, err
		}
		b.g.exec = e
	}
	for k, e := range f.Control {
		from, ok1 := b.Lookup(e.From)
		to, ok2 := b.Lookup(e.To)
		if !ok1 || !ok2 {
			missing := e.From
			if ok1 {
				missing = e.To
			}
			return nil, &Error{Tensor: -1, Field: fmt.Sprintf("control[%d]", k), Msg: fmt.Sprintf("op %q does not exist", missing)}
		}
		b.AddControl(from, to)
	}
	return b.Build()
}

// JSONError turns an encoding/json error into a one-line error that names
// the line and column where decoding failed. what prefixes the message.
func JSONError(what string, data []byte, err error) error {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		if syn.Error() == "unexpected end of JSON input" {
			return fmt.Errorf("%s: truncated or empty file (unexpected end of input at line %d)", what, lineOf(data, int64(len(data))))
		}
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
		err = typeError(typ)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: truncated or empty file (unexpected end of input at line %d)", what, lineOf(data, int64(len(data))))
	}
	if off < 0 {
		return fmt.Errorf("%s: %v", what, err)
	}
	line, col := lineCol(data, off)
	return fmt.Errorf("%s: line %d, column %d: %v", what, line, col, err)
}

// typeError is a JSON value of the wrong kind in the file's words, not
// Go's: `field "gpus": want a number, got a string` where encoding/json
// says "cannot unmarshal string into Go struct field .gpus of type int".
func typeError(e *json.UnmarshalTypeError) error {
	want := "a value of another kind"
	switch e.Type.Kind() {
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "a whole number"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	}
	got := e.Value
	switch {
	case got == "object" || got == "array":
		got = "an " + got
	case got == "bool":
		got = "true or false"
	case strings.HasPrefix(got, "number "):
		got = "the number" + strings.TrimPrefix(got, "number")
	default:
		got = "a " + got
	}
	if e.Field == "" {
		return fmt.Errorf("want %s, got %s", want, got)
	}
	return fmt.Errorf("field %q: want %s, got %s", e.Field, want, got)
}

func lineOf(data []byte, off int64) int {
	l, _ := lineCol(data, off)
	return l
}

func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col = 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// CheckEnd reports data left after the one JSON value dec has read from
// data (trailing garbage, a second object): what names the file kind.
func CheckEnd(what string, data []byte, dec *json.Decoder) error {
	off := dec.InputOffset()
	rest := bytes.TrimSpace(data[min(int(off), len(data)):])
	if len(rest) == 0 {
		return nil
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return fmt.Errorf("%s: unexpected data after the JSON value at line %d (byte %d): %.20q", what, line, off, rest)
}

// Hash is the hex SHA-256 of g's native encoding (Write) without its
// batch information and execution settings: what decision and result
// files record to tell the graph they were made for. The batch marks
// change nothing at the graph's own batch, and the execution settings
// change costs, not ops, so that a decision made before a graph had them
// still matches it.
func Hash(g *Graph) string {
	h := sha256.New()
	if err := write(h, g, false); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
