package plans

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// megatronFields is Megatron-Core's model fields as pretrain_gpt.py sets
// them from args: each flag's value where written, its core_v0.16.1
// default where not (testdata/megatron-lm-core_v0.16.1-args.txt).
func megatronFields(t *testing.T, args []string) map[string]string {
	t.Helper()
	f, err := os.Open("testdata/megatron-lm-core_v0.16.1-args.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type flag struct{ dest, action, def string }
	flags := map[string]flag{}
	fields := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		if len(col) != 7 || !strings.HasPrefix(col[0], "--") {
			continue
		}
		fl := flag{dest: col[1], action: col[2], def: strings.Trim(col[5], `"`)}
		flags[col[0]] = fl
		if _, ok := fields[fl.dest]; !ok || fl.action != "store_false" {
			fields[fl.dest] = fl.def
		}
	}
	for i := 0; i < len(args); {
		j := i + 1
		for j < len(args) && !strings.HasPrefix(args[j], "--") {
			j++
		}
		fl, ok := flags[args[i]]
		if !ok {
			t.Fatalf("%s is not a flag of Megatron-LM core_v0.16.1's pretrain_gpt.py", args[i])
		}
		switch fl.action {
		case "store_true":
			fields[fl.dest] = "true"
		case "store_false":
			fields[fl.dest] = "false"
		default:
			fields[fl.dest] = strings.Join(args[i+1:j], " ")
		}
		i = j
	}
	return fields
}

// sameValue compares a field's values as numbers where both are.
func sameValue(a, b string) bool {
	x, errx := strconv.ParseFloat(a, 64)
	y, erry := strconv.ParseFloat(b, 64)
	if errx == nil && erry == nil {
		return x == y
	}
	return a == b
}

// TestMegatronModelAutoBridge: the Megatron-LM arguments exported for
// Llama 3 8B, Qwen3 8B and 30B-A3B, DeepSeek-V3 and GPT-OSS 120B from
// their config.json set Megatron-Core's model fields as Megatron-Bridge
// v0.6.0's AutoBridge maps the same files, field by field (its values:
// testdata/megatron-bridge-v0.6.0-autobridge.tsv, with their sources).
// Before the export read the files' settings, Llama 3 8B's rotary base
// was Megatron-LM's 10000 and its dropout 0.1.
func TestMegatronModelAutoBridge(t *testing.T) {
	f, err := os.Open("testdata/megatron-bridge-v0.6.0-autobridge.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]map[string]string{}
	var files []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		col := strings.Split(line, "\t")
		if len(col) != 3 {
			t.Fatalf("testdata: not file, field, value: %q", line)
		}
		if want[col[0]] == nil {
			want[col[0]] = map[string]string{}
			files = append(files, col[0])
		}
		want[col[0]][col[1]] = col[2]
	}
	if len(files) != 5 {
		t.Fatalf("testdata: %d models, want Llama 3 8B, Qwen3 8B and 30B-A3B, DeepSeek-V3, GPT-OSS 120B", len(files))
	}
	pod, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		m, err := transformer.ReadHFConfig(filepath.Join("..", "..", "..", "graph", "transformer", "testdata", "hf", file))
		if err != nil {
			t.Fatal(err)
		}
		m.Batch = 64
		text := "tp=1,pp=1,dp=8,mbs=1"
		if m.MoE() {
			text += ",ep=8"
		}
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, pod)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		// GPT-OSS's YaRN has no pretrain_gpt.py flag: MegatronArgs
		// refuses it in one line; its other fields are still AutoBridge's.
		_, err = MegatronArgs(m, pl.Strategy, pod.GPUs())
		if yarn := file == "gpt-oss-120b.json"; yarn != (err != nil) || yarn && (!strings.Contains(err.Error(), "rope_scaling yarn") || !strings.Contains(err.Error(), "pretrain_gpt.py") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%s: %v, want a refusal naming rope_scaling yarn and pretrain_gpt.py for GPT-OSS only", file, err)
		}
		args, err := megatronArgs(m, pl.Strategy, pod.GPUs())
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		got := megatronFields(t, args)
		for field, v := range want[file] {
			if !sameValue(got[field], v) {
				t.Errorf("%s: %s = %q, AutoBridge's %q", file, field, got[field], v)
			}
		}
	}
}

// TestGraphedAttentionDropout: Megatron-Core refuses graphed attention
// beside the recomputed attention core only at a non-zero attention
// dropout. A model by its shape keeps Megatron-LM's 0.1 and is refused;
// Llama 3 8B from its config.json exports --attention-dropout 0 and the
// same plan is written.
func TestGraphedAttentionDropout(t *testing.T) {
	pod, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=2,pp=1,dp=4,mbs=1,sp=on,recompute=selective,cuda-graphs=dense")
	if err != nil {
		t.Fatal(err)
	}
	hf, err := transformer.ReadHFConfig(filepath.Join("..", "..", "..", "graph", "transformer", "testdata", "hf", "llama3-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	hf.Seq, hf.Batch = 4096, 64
	shape, err := transformer.Parse("llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=4096,vocab=128256,batch=64")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		m       transformer.Spec
		refused bool
	}{{"by its shape", shape, true}, {"config.json", hf, false}} {
		pl, err := plan.Resolve(c.m, s, pod)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		args, err := MegatronArgs(c.m, pl.Strategy, pod.GPUs())
		if c.refused {
			if err == nil || !strings.Contains(err.Error(), "attention dropout of 0.1") {
				t.Errorf("%s: %v, want a refusal at the attention dropout of 0.1", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		line := " " + strings.Join(args, " ") + " "
		if !strings.Contains(line, " --attention-dropout 0 ") || !strings.Contains(line, " --cuda-graph-scope attn mlp ") {
			t.Errorf("%s: %s, want --attention-dropout 0 and the graphs' scope attn mlp", c.name, line)
		}
	}
}

// TestRotaryBaseIsInt: Megatron-LM parses --rotary-base as an int
// (megatron/training/arguments.py: type=int), so every config.json's
// rope_theta is written in digits equal to it (Mixtral's and Qwen3's
// 1,000,000 was written 1e+06, which int() refuses).
func TestRotaryBaseIsInt(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "graph", "transformer", "testdata", "hf", "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d config.json files (%v), want the 13 of testdata/hf", len(files), err)
	}
	seen := 0
	for _, f := range files {
		m, err := transformer.ReadHFConfig(f)
		if err != nil {
			continue // a family placer refuses
		}
		if m.Config.RopeTheta <= 0 {
			continue
		}
		seen++
		args := megatronModel(m)
		for i, a := range args {
			if a != "--rotary-base" {
				continue
			}
			v := args[i+1]
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || float64(n) != m.Config.RopeTheta {
				t.Errorf("%s: --rotary-base %s, want the digits of rope_theta %g", filepath.Base(f), v, m.Config.RopeTheta)
			}
		}
	}
	if seen < 8 {
		t.Errorf("%d files with a rope_theta read, want at least 8", seen)
	}
}
