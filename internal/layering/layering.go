package layering

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Rules is the "May import:" line of one package: the patterns it names,
// relative to the module (nil for "no other placer package").
type Rules []string

// Allows reports whether a package whose rules are r may import the
// module's package rel (a path relative to the module).
func (r Rules) Allows(rel string) bool {
	for _, p := range r {
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if rel == base || strings.HasPrefix(rel, base+"/") {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}

// Read reads the rules of the package in dir from its doc.go: the comment
// line starting "// May import:" and the comment lines after it up to the
// package clause or an empty comment line.
func Read(dir string) (Rules, error) {
	path := filepath.Join(dir, "doc.go")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var text string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "// May import:"); ok {
			in, text = true, rest
			continue
		}
		if !in {
			continue
		}
		rest, ok := strings.CutPrefix(line, "//")
		if !ok || strings.TrimSpace(rest) == "" {
			break
		}
		text += " " + rest
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !in {
		return nil, fmt.Errorf("%s: no \"May import:\" line", path)
	}
	return Parse(text)
}

// Parse reads the list after "May import:": patterns separated by commas,
// or "no other placer package".
func Parse(text string) (Rules, error) {
	text = strings.TrimSpace(text)
	if text == "no other placer package" {
		return nil, nil
	}
	var r Rules
	for _, p := range strings.Split(text, ",") {
		p = strings.TrimSpace(p)
		if p == "" || strings.ContainsAny(p, " \t") || strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("May import: bad pattern %q in %q", p, text)
		}
		r = append(r, p)
	}
	return r, nil
}
