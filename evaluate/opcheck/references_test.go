package opcheck

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/graph"
)

var update = flag.Bool("update", false, "write references.json from measurements/")

// derive makes the references from the profiled graphs under
// measurements/.
func derive(t *testing.T) []Reference {
	t.Helper()
	var refs []Reference
	for _, s := range Sources {
		f, err := os.Open(filepath.Join("..", "..", filepath.FromSlash(s.Path)))
		if err != nil {
			t.Fatal(err)
		}
		g, err := graph.Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", s.Path, err)
		}
		r, err := Summarise(s, g)
		if err != nil {
			t.Fatalf("%s: %v", s.Path, err)
		}
		refs = append(refs, r)
	}
	return refs
}

// TestReferencesFromMeasurements derives the references from
// measurements/ and holds the embedded file to them: it is the
// measurements' summary, never a hand-edited table.
func TestReferencesFromMeasurements(t *testing.T) {
	refs := derive(t)
	want, err := MarshalReferences(refs)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("references.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(referencesJSON, want) {
		t.Fatal("references.json differs from what measurements/ gives: go test ./evaluate/opcheck -update writes it")
	}
	got, err := References()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(Sources) {
		t.Fatalf("%d references, want one per source (%d)", len(got), len(Sources))
	}
	for _, r := range got {
		if len(r.Kinds) == 0 {
			t.Errorf("%s: no kind", r.Name)
		}
		for _, k := range r.Kinds {
			if k.Ops <= 0 || k.Measured <= 0 || k.Roofline <= 0 {
				t.Errorf("%s %s: ops %d, measured %g, roofline %g: want all positive", r.Name, k.Kind, k.Ops, k.Measured, k.Roofline)
			}
		}
	}
}
