package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHFWorkloadCLI: --workload hf:PATH/config.json[:seq=...,batch=...]
// is a transformer at cluster scale for eval and search, PATH the file
// or the model's folder; a config.json placer cannot read is one line
// naming the file and the field, exit 1.
func TestHFWorkloadCLI(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../graph/transformer/testdata/hf/llama3-8b.json")
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "Meta-Llama-3-8B")
	if err := os.Mkdir(model, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(model, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=4096,vocab=128256,batch=512"
	for _, args := range [][]string{
		{"eval", "--workload", "hf:" + model + "/config.json:seq=4096,batch=512", "--cluster", "dgx-h100:8", "--strategy", "tp=1,pp=1,dp=64,mbs=1,distopt=on", "--json"},
		{"search", "--workload", "hf:" + model + ":seq=4096,batch=512", "--cluster", "dgx-h100:8", "--json", "-q"},
	} {
		code, stdout, stderr := placer(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if !strings.Contains(stdout, want) {
			t.Errorf("%v: the model is not %s: %.300s", args, want, stdout)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Errorf("%v: not JSON: %v", args, err)
		}
	}

	bias := strings.Replace(string(data), `"attention_bias": false`, `"attention_bias": true`, 1)
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(bias), 0o644); err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.json")
	if err := os.WriteFile(trunc, data[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
		code int // 1: the config.json is bad; 2: the command line
	}{
		{[]string{"eval", "--workload", "hf:" + bad + ":seq=4096,batch=512", "--cluster", "dgx-h100:8", "--strategy", "tp=8"},
			bad + `: field "attention_bias" (true): placer does not model it`, 1},
		{[]string{"search", "--workload", "hf:" + trunc, "--gpus", "8"}, trunc + ": not JSON", 1},
		{[]string{"eval", "--workload", "hf:" + filepath.Join(dir, "none.json"), "--gpus", "8"}, "--workload hf:" + filepath.Join(dir, "none.json") + ": cannot read " + filepath.Join(dir, "none.json") + ": no such file or directory", 1},
		{[]string{"search", "--workload", "hf:" + model, "--gpus", "8", "--method", "go"}, "--method does not apply to a transformer at cluster scale", 2},
	} {
		code, _, stderr := placer(t, c.args...)
		errs := strings.TrimSpace(stderr)
		if code != c.code || !strings.Contains(errs, c.want) || strings.Contains(errs, "\n") || !strings.HasPrefix(errs, "placer: ") {
			t.Errorf("%v: exit %d, %q; want exit %d and one line with %q", c.args, code, errs, c.code, c.want)
		}
	}
}
