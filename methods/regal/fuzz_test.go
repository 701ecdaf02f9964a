package regal

import (
	"bytes"
	"testing"
)

// FuzzRead: the model file decoder never panics, and a file it accepts
// writes back to a file that reads the same.
func FuzzRead(f *testing.F) {
	m, err := NewModel(Config{Dim: 2, Hidden: 2, Neighbors: 1, Layers: 1, MeanBuckets: 2, VarBuckets: 1}, 1)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"placer-regal-model","version":1,"config":{},"seed":0,"params":[]}`))
	f.Add([]byte(`{"format":"placer-regal-model","version":1,"config":{"devices":99}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := m.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		m2, err := Read(&out)
		if err != nil || m2.Config() != m.Config() {
			t.Fatalf("round trip: %v", err)
		}
	})
}
