package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestOutputPathsCheckedFirst: every output flag of every command, given
// a path in a folder that does not exist, is refused in one line naming
// the flag and the folder, exit 2, before any work (each within a second,
// where search, report or export would run for minutes).
func TestOutputPathsCheckedFirst(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nodir")
	file := writeFile(t, "file", "")
	// A command whose own arguments cobra checks first gets them here.
	args := map[string][]string{
		"placer workloads export": {"mlp"},
	}
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !outputFlags[f.Name] || f.Hidden || f.Annotations[inputAnnotation] != nil {
				return // an input of an output's name (eval's --profile) is read
			}
			n++
			path, want := filepath.Join(missing, "x.json"), "folder "+missing+" does not exist"
			if name, _ := pflag.UnquoteUsage(f); name == "DIR" || name == "FOLDER" {
				// A missing folder is made: one under a file cannot be.
				path, want = filepath.Join(file, "x"), file+" is a file, not a folder"
			}
			t.Run(c.CommandPath()+" --"+f.Name, func(t *testing.T) {
				line := append(strings.Fields(c.CommandPath())[1:], args[c.CommandPath()]...)
				line = append(line, "--"+f.Name, path)
				// A command that does its work in spite of the mistake
				// is stopped (refusalGuard), and fails below.
				ctx, cancel := context.WithTimeout(context.Background(), refusalGuard)
				defer cancel()
				var out, errb bytes.Buffer
				code := runContext(ctx, line, strings.NewReader(""), &out, &errb)
				want := "placer: --" + f.Name + " " + path + ": " + want + "\n"
				if errs := errb.String(); code != 2 || errs != want {
					t.Errorf("%v: exit %d, stderr %q; want exit 2, %q", line, code, errs, want)
				}
			})
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&streams{}))
	if n < 25 {
		t.Errorf("%d output flags seen, want every one (at least 25)", n)
	}
}
