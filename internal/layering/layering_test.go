package layering

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseAndAllows(t *testing.T) {
	cases := []struct {
		text    string
		imports map[string]bool
		bad     bool
	}{
		{text: "no other placer package", imports: map[string]bool{"graph": false}},
		{text: " graph, decision", imports: map[string]bool{"graph": true, "decision": true, "graph/partition": false, "evaluate": false}},
		{text: "graph/..., evaluate", imports: map[string]bool{"graph": true, "graph/partition": true, "graphs": false, "evaluate/roofline": false}},
		{text: "graph decision", bad: true},
		{text: "graph,, decision", bad: true},
		{text: "/graph", bad: true},
	}
	for _, c := range cases {
		r, err := Parse(c.text)
		if (err != nil) != c.bad {
			t.Errorf("Parse(%q) error %v, want an error %v", c.text, err, c.bad)
			continue
		}
		for imp, want := range c.imports {
			if got := r.Allows(imp); got != want {
				t.Errorf("%q allows %s = %v, want %v", c.text, imp, got, want)
			}
		}
	}
}

type listed struct {
	ImportPath, Dir string
	Imports         []string
	Error           *struct{ Err string }
}

// TestImportsFollowDocs holds every package of the module to its doc.go's
// "May import:" line.
func TestImportsFollowDocs(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH: go list is what this test reads")
	}
	cmd := exec.Command(goTool, "list", "-e", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	mod := "github.com/placer/placer"
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Errorf("%s: %s", p.ImportPath, p.Error.Err)
			continue
		}
		n++
		rel := strings.TrimPrefix(p.ImportPath, mod+"/")
		rules, err := Read(p.Dir)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		for _, imp := range p.Imports {
			ir, ok := strings.CutPrefix(imp, mod+"/")
			if !ok {
				continue
			}
			if !rules.Allows(ir) {
				t.Errorf("%s imports %s; its doc.go allows %s", rel, ir, describe(rules))
			}
		}
	}
	if n < 30 {
		t.Errorf("go list found %d packages, want the whole module", n)
	}
}

func describe(r Rules) string {
	if len(r) == 0 {
		return "no other placer package"
	}
	return strings.Join(r, ", ")
}
