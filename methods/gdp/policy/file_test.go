package policy

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/nn/graphsage"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	cfg := smallConfig()
	cfg.Coarsen = true
	cfg.Normalization = graphsage.Normalization{FLOPsUnit: 1e9, BytesUnit: 1 << 20, TimeUnit: 1e-3, MinStd: 0.2, Clip: 4}
	p, err := New(cfg, 99)
	if err != nil {
		t.Fatal(err)
	}
	// Change some weights, as training would.
	for _, q := range p.Params() {
		for i := range q.W {
			q.W[i] += float32(i%7) * 0.01
		}
	}
	path := filepath.Join(t.TempDir(), "policy.bin")
	if err := p.Save(path); err != nil {
		t.Fatal(err)
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if q.Config() != p.Config() || q.Seed() != 99 {
		t.Fatalf("config or seed lost: %+v seed %d", q.Config(), q.Seed())
	}
	for i, a := range p.Params() {
		b := q.Params()[i]
		for j := range a.W {
			if a.W[j] != b.W[j] {
				t.Fatalf("%s[%d] = %v after loading, want %v", a.Name, j, b.W[j], a.W[j])
			}
		}
	}
	g := testGraph(t, 80, 5)
	in1, _ := p.Prepare(g, 3, nil)
	in2, _ := q.Prepare(g, 3, nil)
	o1, _ := p.Forward(in1)
	o2, _ := q.Forward(in2)
	if o1.Value() != o2.Value() || o1.Entropy() != o2.Entropy() {
		t.Fatal("the loaded policy computes something else")
	}
}

func TestLoadErrors(t *testing.T) {
	p, err := New(smallConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := p.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	otherVersion := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(otherVersion[len(fileMagic):], FileVersion+1)
	corrupt := append([]byte(nil), good...)
	corrupt[len(corrupt)-10] ^= 0xff
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"foreign.json", []byte(`{"format": "placer-graph", "version": 1}`), "is not a placer policy file"},
		{"empty", nil, "is not a placer policy file"},
		{"v2.bin", otherVersion, "format version 2; this placer reads version 1"},
		{"truncated.bin", good[:len(good)-100], "is truncated"},
		{"truncated-header.bin", good[:30], "is truncated"},
		{"corrupt.bin", corrupt, "checksum mismatch"},
		{"long.bin", append(append([]byte(nil), good...), 0), "unexpected bytes at the end"},
	}
	for _, c := range cases {
		path := write(c.name, c.data)
		_, err := Load(path)
		if err == nil {
			t.Fatalf("%s: loaded", c.name)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, path) || strings.Contains(msg, "\n") {
			t.Fatalf("%s: error %q, want one line naming the file and saying %q", c.name, msg, c.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.bin")); err == nil {
		t.Fatal("missing file loaded")
	}
}

// TestClone: a clone writes the same file as its original, and changing
// the clone's weights leaves the original's alone.
func TestClone(t *testing.T) {
	p, err := New(&Config{SageLayers: 1, SageDim: 8, DModel: 8, Heads: 1, HeadDim: 8, Inner: 8, CondDim: 8, HeadHidden: 8}, 4)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Clone()
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	p.WriteTo(&a)
	c.WriteTo(&b)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("the clone writes another file")
	}
	c.Params()[0].W[0] += 1
	var a2 bytes.Buffer
	p.WriteTo(&a2)
	if !bytes.Equal(a.Bytes(), a2.Bytes()) {
		t.Error("changing the clone changed the original")
	}
}
