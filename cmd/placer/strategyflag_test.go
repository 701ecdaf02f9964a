package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStrategyRepeats: --strategy given more than once joins its texts
// (tp=2 then pp=2 is tp=2,pp=2: it was pp=2 alone, tp=2 silently
// dropped), in eval, search and export alike; a key written twice across
// them is refused in one line, exit 2.
func TestStrategyRepeats(t *testing.T) {
	dir := t.TempDir()
	w := []string{"--workload", "llama3-8b:seq=4096,batch=64", "--cluster", "dgx-h100:1"}
	for _, c := range []struct {
		args []string
		code int
		want string // in stdout (0) or stderr
	}{
		{append([]string{"eval"}, append(w, "--strategy", "tp=2", "--strategy", "pp=2")...), 0, "tp=2,pp=2,dp=2,mbs=1"},
		{append([]string{"eval"}, append(w, "--strategy", "tp=2,pp=2")...), 0, "tp=2,pp=2,dp=2,mbs=1"},
		{append([]string{"search", "--json"}, append(w, "--strategy", "tp=2", "--strategy", "pp=2")...), 0, `"kept": "tp=2,pp=2"`},
		{append([]string{"export", "--to", "megatron", "-o", filepath.Join(dir, "m.sh")}, append(w, "--strategy", "tp=2,dp=2", "--strategy", "pp=2")...), 0, ""},
		{append([]string{"eval"}, append(w, "--strategy", "tp=2", "--strategy", "tp=4")...), 2, `"tp" given twice`},
	} {
		var out, errb bytes.Buffer
		code := runContext(context.Background(), c.args, strings.NewReader(""), &out, &errb)
		got := out.String()
		if c.code != 0 {
			got = errb.String()
		}
		if code != c.code || !strings.Contains(got, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d with %q (stderr %q)", c.args, code, got, c.code, c.want, errb.String())
		}
	}
	sh, err := os.ReadFile(filepath.Join(dir, "m.sh"))
	for _, want := range []string{"--tensor-model-parallel-size 2", "--pipeline-model-parallel-size 2"} {
		if err != nil || !strings.Contains(string(sh), want) {
			t.Errorf("export --strategy tp=2,dp=2 --strategy pp=2: the script has no %q (%v)", want, err)
		}
	}
}
