package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizeCommand: placer size answers two candidates in JSON, writes
// the chosen plan where placer export reads it, and draws the plot.
func TestSizeCommand(t *testing.T) {
	dir := t.TempDir()
	plan, plot := filepath.Join(dir, "plan.json"), filepath.Join(dir, "size.svg")
	gpt := "gpt:layers=4,hidden=1024,heads=16,seq=2048,vocab=32000,batch=64"
	var out, errb bytes.Buffer
	code := runContext(context.Background(), []string{"size", "--workload", gpt, "--tokens", "1B",
		"--clusters", "dgx-h100:1..2", "--deadline", "30d", "--json", "-q", "-o", plan, "--plot", plot},
		strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		Candidates []struct {
			Cluster string `json:"cluster"`
			GPUs    int    `json:"gpus"`
		} `json:"candidates"`
		Chosen int    `json:"chosen"`
		Out    string `json:"out"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Candidates) != 2 || rep.Candidates[1].GPUs != 16 || rep.Chosen < 0 || rep.Out != plan {
		t.Fatalf("answer %+v", rep)
	}
	if fi, err := os.Stat(plot); err != nil || fi.Size() == 0 {
		t.Fatalf("plot: %v", err)
	}
	chosen := rep.Candidates[rep.Chosen].Cluster
	out.Reset()
	errb.Reset()
	code = runContext(context.Background(), []string{"export", "--workload", gpt, "--cluster", chosen, "--plan", plan, "--to", "megatron"},
		strings.NewReader(""), &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "Megatron-LM arguments") {
		t.Fatalf("export of size's plan: exit %d, %s", code, errb.String())
	}
}
