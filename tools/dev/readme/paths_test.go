package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// foreignPaths are paths the docs name in another repository that start
// with a folder name of this one: not this repository's, not checked.
var foreignPaths = []string{
	"docs/performance.md",                             // pytorch/torchtitan
	"docs/performance-summary.md",                     // NVIDIA-NeMo/Megatron-Bridge
	"docs/performance-summary-archive.md",             // NVIDIA-NeMo/Megatron-Bridge
	"docs/versions1.json",                             // NVIDIA-NeMo/Megatron-Bridge
	"docs/releases/software-versions.md",              // NVIDIA NeMo
	"docs/user-guide/features/megatron_fsdp.md",       // NVIDIA/Megatron-LM
	"examples/gpt3/train_gpt3_175b_distributed.sh",    // NVIDIA/Megatron-LM
	"examples/qwen3/readme.md",                        // yanring/Megatron-MoE-ModelZoo
	"docs/legacy.md",                                  // deepseek-ai/DeepEP
	"docs/examples/gemm_profiling/gemm_profiling.rst", // NVIDIA/TransformerEngine
}

// TestDocPathsExist: every path of this repository that README.md and
// docs/*.md name (a word that begins with one of its top folders, as `git
// ls-files` lists them: planner/plan/keys.go, tools/dev/readme/,
// planner/plan.Strategy for a package's name) exists, so the
// README's map and the docs' references stay true when files move.
// docs/history.md is exempt: it tells what the tree was.
func TestDocPathsExist(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	tops := topFolders(t, root)
	for _, page := range docPages(t, root) {
		if filepath.Base(page) == "history.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, p := range repoPaths(line, tops) {
				if !pathExists(root, p) && !slices.Contains(foreignPaths, p) {
					t.Errorf("%s:%d: %s does not exist", page, i+1, p)
				}
			}
			dirs, names := mapRow(line, tops)
			for _, n := range names {
				found := false
				for _, d := range dirs {
					found = found || pathExists(root, d+n)
				}
				if !found {
					t.Errorf("%s:%d: %s is in none of %s", page, i+1, n, strings.Join(dirs, ", "))
				}
			}
		}
	}
}

// topFolders are the repository's top folders (git ls-files'), or those
// under root where git is not at hand.
func topFolders(t *testing.T, root string) []string {
	var tops []string
	if out, err := exec.Command("git", "-C", root, "ls-files").Output(); err == nil {
		for _, f := range strings.Split(string(out), "\n") {
			if top, _, ok := strings.Cut(f, "/"); ok && !strings.HasPrefix(top, ".") && !slices.Contains(tops, top) {
				tops = append(tops, top)
			}
		}
		return tops
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "bin" && e.Name() != "out" {
			tops = append(tops, e.Name())
		}
	}
	return tops
}

// pathWord is a word that may be a path: after a start of line, a space,
// a quote, a bracket, "=", ":" or ",".
var pathWord = regexp.MustCompile("(?:^|[\\s`'\"(\\[=:,])([A-Za-z0-9_][A-Za-z0-9_./*<>{}-]*/[A-Za-z0-9_./*<>{}-]*)")

// placeholder is a path with a word in capitals for a part
// (measurements/DATE-GPU/).
var placeholder = regexp.MustCompile(`/[A-Z][A-Z0-9_-]+(/|$)`)

// repoPaths are the words of line that name a path under one of tops:
// "a/b/c.go", trailing punctuation and a ":line" or ":keys" suffix
// dropped; a pattern (*, <...>, {...}, "...") is not a path.
func repoPaths(line string, tops []string) []string {
	var out []string
	for _, m := range pathWord.FindAllStringSubmatch(line, -1) {
		p := m[1]
		top, _, _ := strings.Cut(p, "/")
		if !slices.Contains(tops, top) || strings.ContainsAny(p, "*<>{}") || strings.Contains(p, "...") || placeholder.MatchString(p) {
			continue
		}
		p = strings.TrimRight(p, ".,;")
		out = append(out, p)
	}
	return out
}

// pathExists reports whether p names a file or folder under root, or a
// package's identifier (planner/plan.Strategy: the folder
// planner/plan).
func pathExists(root, p string) bool {
	if _, err := os.Stat(filepath.Join(root, p)); err == nil {
		return true
	}
	dir, file := filepath.Split(p)
	if pkg, ident, ok := strings.Cut(file, "."); ok && pkg != "" && ident != "" && ident[0] >= 'A' && ident[0] <= 'Z' {
		if fi, err := os.Stat(filepath.Join(root, dir, pkg)); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// mapRow reads a row of a map of the code (a table row whose first cell
// names folders: "| `planner/` | ... `kernels.go` ... |"): its
// folders, and the names its other cells give relative to them (a
// backticked word with no top folder that ends in "/" or a file's
// extension: `kernels.go`, `policy/`). Not such a row: nothing.
func mapRow(line string, tops []string) (dirs, names []string) {
	cells := strings.SplitN(line, " | ", 2)
	if !strings.HasPrefix(line, "| `") || len(cells) < 2 {
		return nil, nil
	}
	for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
		top, _, _ := strings.Cut(m[1], "/")
		if !strings.HasSuffix(m[1], "/") || !slices.Contains(tops, top) {
			return nil, nil
		}
		dirs = append(dirs, m[1])
	}
	for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
		w := m[1]
		top, _, _ := strings.Cut(w, "/")
		if slices.Contains(tops, top) || !relName.MatchString(w) {
			continue
		}
		names = append(names, w)
	}
	return dirs, names
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	// relName is a file or folder name: a/b/, x.go, x.py, ...
	relName = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*(/|\.(go|py|sh|md|json|jsonl|toml|yaml|txt))$`)
)

// TestRepoPathsAndMapRow: the words read as paths, and a map row's
// relative names, by hand.
func TestRepoPathsAndMapRow(t *testing.T) {
	tops := []string{"evaluate", "planner", "docs", "tools"}
	cases := []struct{ line, want string }{
		{"see planner/plan/keys.go, and docs/stacks.md.", "planner/plan/keys.go docs/stacks.md"},
		{"`hf:evaluate/x.json:seq=8` (planner/plan.Strategy)", "evaluate/x.json planner/plan.Strategy"},
		{"megatron/core/x.py, measurements/DATE-GPU/, tools/*.sh, docs/a/.../b", ""},
	}
	for _, c := range cases {
		if got := strings.Join(repoPaths(c.line, tops), " "); got != c.want {
			t.Errorf("repoPaths(%q) = %q, want %q", c.line, got, c.want)
		}
	}
	dirs, names := mapRow("| `planner/`, `tools/` | the kernels (`kernels.go`, `pod/`, `tp=8`, `docs/x.md`, `Resolve`) |", tops)
	if strings.Join(dirs, " ") != "planner/ tools/" || strings.Join(names, " ") != "kernels.go pod/" {
		t.Errorf("mapRow: %q, %q", dirs, names)
	}
	if dirs, names := mapRow("| `placer eval` | `kernels.go` |", tops); dirs != nil || names != nil {
		t.Errorf("mapRow of a command's row: %q, %q", dirs, names)
	}
	if !pathExists("../../..", "planner/plan.Strategy") || pathExists("../../..", "planner/kernels.go") {
		t.Error("pathExists: a package's identifier, or a file named as a package")
	}
}
