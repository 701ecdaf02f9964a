package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// outputFlag is a README command's file it writes: -o, --out, --plot or
// --trace and the path after it.
var outputFlag = regexp.MustCompile(`(?:^|\s)(?:-o|--out|--plot|--trace)[ =]([^\s` + "`" + `)]+)`)

// TestREADMEOutputsIgnored: the README says files written in the
// checkout's root are ignored by git; every file its commands write there
// (-o, --out, --plot, --trace: the quick start's plan.json, plan.py and
// llama3-8b.sh, the op graph's trxl2.json and trxl2.svg, ...), and what
// the quick start's other exports write (--to torchtitan@0.2's TOML,
// DeepSpeed's configuration and its module), is, by .gitignore's rules
// (git check-ignore --no-index: whether or not such a file is there).
func TestREADMEOutputsIgnored(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skip("not a git checkout")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"plan.toml", "ds_config.json", "ds_config_moe.py"}
	for _, m := range outputFlag.FindAllStringSubmatch(string(src), -1) {
		f := m[1]
		if strings.ContainsAny(f, "$*<>") || strings.ToUpper(f) == f || filepath.IsAbs(f) || strings.HasPrefix(f, "..") {
			continue // a placeholder (FILE, $OUT), not a file written in the checkout
		}
		if !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	for _, want := range []string{"plan.json", "plan.py", "llama3-8b.sh", "trxl2.json", "trxl2.svg"} {
		if !slices.Contains(files, want) {
			t.Errorf("the README's commands write no %s: the quick start changed; keep this test's list with it", want)
		}
	}
	for _, f := range files {
		cmd := exec.Command("git", "check-ignore", "-q", "--no-index", f)
		cmd.Dir = root
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit) && exit.ExitCode() == 1:
			t.Errorf("%s, which a README command writes in the checkout's root, is not ignored by git (.gitignore)", f)
		default:
			t.Fatalf("git check-ignore %s: %v", f, err)
		}
	}
}
