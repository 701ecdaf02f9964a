package costtable

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/bounded"
)

// FormatName and FormatVersion identify a cost table file.
const (
	FormatName    = "placer-cost-table"
	FormatVersion = 1
)

// Key identifies a measurement: an op's type, dtype, first output's
// shape, FLOPs and bytes, and the device's name (a GPU's name, or
// "cpu: MODEL, N threads").
type Key struct {
	Device       string  `json:"device"`
	Type         string  `json:"type"`
	DType        string  `json:"dtype"`
	Shape        []int64 `json:"shape"`
	FLOPs        float64 `json:"flops"`
	BytesRead    int64   `json:"bytes_read"`
	BytesWritten int64   `json:"bytes_written"`
}

// Entry is one key's measurements: their median and how many there are.
type Entry struct {
	Key     Key     `json:"key"`
	Time    float64 `json:"time_s"`
	Samples int     `json:"samples"`
}

// Table is a cost table: entries by key.
type Table struct {
	entries map[string]Entry
	devices []string // sorted, distinct
}

// ErrDevice says that the table holds another device's measurements, or
// several devices' and none was named.
var ErrDevice = errors.New("costtable: device")

// Read reads a cost table file. Errors name the file and the entry.
func Read(path string) (*Table, error) {
	data, err := bounded.ReadFile(path, bounded.Decision, "a cost table")
	if err != nil {
		return nil, fmt.Errorf("cost table: %w", err)
	}
	var f struct {
		Format  string  `json:"format"`
		Version int     `json:"version"`
		Entries []Entry `json:"entries"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("cost table %s: %w", path, err)
	}
	if f.Format != FormatName {
		return nil, fmt.Errorf("cost table %s: format %q, want %q (torchexport --profile --cost-table writes one)", path, f.Format, FormatName)
	}
	if f.Version != FormatVersion {
		return nil, fmt.Errorf("cost table %s: version %d, this placer reads %d", path, f.Version, FormatVersion)
	}
	t := &Table{entries: make(map[string]Entry, len(f.Entries))}
	for i, e := range f.Entries {
		if s := graph.BadNumber(e.Time); s != "" || e.Time > graph.MaxTime || e.Key.Type == "" || e.Key.Device == "" {
			if s == "" {
				s = "has no type or device, or a time above the largest allowed"
			}
			return nil, fmt.Errorf("cost table %s: entry %d (%s): time_s %s", path, i, e.Key.Type, s)
		}
		t.entries[e.Key.text()] = e
		if !slices.Contains(t.devices, e.Key.Device) {
			t.devices = append(t.devices, e.Key.Device)
		}
	}
	slices.Sort(t.devices)
	return t, nil
}

// KeyOf is op's key on device.
func KeyOf(op *graph.Op, device string) Key {
	return Key{Device: device, Type: op.Type, DType: op.DType.String(), Shape: op.Shape, FLOPs: op.FLOPs, BytesRead: op.BytesRead, BytesWritten: op.BytesWritten}
}

// text is the key as a map key: exact in every field.
func (k Key) text() string {
	var b strings.Builder
	b.WriteString(k.Device)
	b.WriteByte(0)
	b.WriteString(k.Type)
	b.WriteByte(0)
	b.WriteString(k.DType)
	for _, d := range k.Shape {
		b.WriteByte(0)
		b.WriteString(strconv.FormatInt(d, 10))
	}
	fmt.Fprintf(&b, "\x01%x\x00%d\x00%d", math.Float64bits(k.FLOPs), k.BytesRead, k.BytesWritten)
	return b.String()
}

// Lookup is the measured time of op on device, if the table has it.
func (t *Table) Lookup(op *graph.Op, device string) (float64, bool) {
	e, ok := t.entries[KeyOf(op, device).text()]
	return e.Time, ok
}

// Device resolves the device to use: name when given (it must be in the
// table), else the table's only one.
func (t *Table) Device(name string) (string, error) {
	if name != "" {
		if !slices.Contains(t.devices, name) {
			return "", fmt.Errorf("%w %q: the table has measurements of %s", ErrDevice, name, quoted(t.devices))
		}
		return name, nil
	}
	switch len(t.devices) {
	case 0:
		return "", nil
	case 1:
		return t.devices[0], nil
	}
	return "", fmt.Errorf("%w: the table has measurements of %s: name one (--cost-device)", ErrDevice, quoted(t.devices))
}

func quoted(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// Fill returns g with the ops that have no measured time and whose key
// is in the table (on device) given the table's time, and how many it
// filled. Ops with a time of their own keep it. g is not changed.
func (t *Table) Fill(g *graph.Graph, device string) (*graph.Graph, int, error) {
	times := make([]float64, g.NumOps())
	n := 0
	for i := range times {
		times[i] = -1
		op := g.Op(i)
		if op.HasTime {
			continue
		}
		if x, ok := t.Lookup(op, device); ok {
			times[i] = x
			n++
		}
	}
	if n == 0 {
		return g, 0, nil
	}
	ng, err := graph.WithTimes(g, times)
	return ng, n, err
}
