package plans

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// megatronFlag is one line of testdata/megatron-lm-core_v0.16.1-args.txt:
// a flag of Megatron-LM core_v0.16.1's pretrain_gpt.py (its header says
// where the list comes from).
type megatronFlag struct {
	dest, action, nargs string
	choices             []string
}

func readMegatronFlags(t *testing.T) map[string]megatronFlag {
	t.Helper()
	f, err := os.Open("testdata/megatron-lm-core_v0.16.1-args.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags := map[string]megatronFlag{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		col := strings.Split(line, "\t")
		if len(col) != 7 || !strings.HasPrefix(col[0], "--") {
			t.Fatalf("testdata: not flag, dest, action, type, nargs, default, choices: %q", line)
		}
		fl := megatronFlag{dest: col[1], action: col[2], nargs: col[4]}
		if col[6] != "-" {
			var cs []any
			if err := json.Unmarshal([]byte(col[6]), &cs); err != nil {
				t.Fatalf("testdata: %s choices %s: %v", col[0], col[6], err)
			}
			for _, c := range cs {
				if s, ok := c.(string); ok {
					fl.choices = append(fl.choices, s)
				}
			}
		}
		flags[col[0]] = fl
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(flags) < 600 {
		t.Fatalf("testdata: %d flags; Megatron-LM core_v0.16.1's pretrain_gpt.py has 681", len(flags))
	}
	return flags
}

// TestMegatronArgsNames: every flag the exporter can write is one of
// Megatron-LM core_v0.16.1's pretrain_gpt.py flags (the test data), with
// as many values as the flag takes and each value among its choices;
// plans covering every setting of MegatronArgs write every flag its
// source names.
func TestMegatronArgsNames(t *testing.T) {
	flags := readMegatronFlags(t)
	src, err := os.ReadFile("megatron.go")
	if err != nil {
		t.Fatal(err)
	}
	inSource := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(--[a-z0-9][a-z0-9-]*)"`).FindAllStringSubmatch(string(src), -1) {
		inSource[m[1]] = true
	}
	if len(inSource) < 40 {
		t.Fatalf("megatron.go names %d flags; want the exporter's (more than 40)", len(inSource))
	}
	for fl := range inSource {
		if _, ok := flags[fl]; !ok {
			t.Errorf("megatron.go writes %s, which Megatron-LM core_v0.16.1's pretrain_gpt.py does not accept", fl)
		}
	}

	const (
		small = "gpt:layers=8,hidden=64,heads=8,seq=64,vocab=128,batch=16"
		llama = "llama:layers=16,hidden=64,heads=8,kv_heads=2,ffn=192,seq=64,vocab=128,batch=16,head_dim=16"
		moe   = "llama:layers=8,hidden=64,heads=8,kv_heads=2,ffn=192,seq=64,vocab=128,batch=16,experts=8,topk=2,expert_ffn=32,shared=1,dense_layers=1"
	)
	plans := []struct{ workload, pod, plan string }{
		{small + ",tied=false", "dgx-h100:1", "tp=2,pp=2,dp=2,mbs=2,recompute=selective"},
		{small, "dgx-h100:1", "tp=2,pp=1,dp=4,mbs=1,sp=on,tpoverlap=on,distopt=on,grads=bf16"},
		{llama, "dgx-h100:1", "tp=2,cp=2,pp=1,dp=2,mbs=1,sp=on,recompute=full"},
		{llama, "dgx-h100:1", "tp=2,cp=2,pp=1,dp=2,mbs=1,sp=on,cp-comm-type=all_gather"},
		{llama, "dgx-h100:1", "tp=1,cp=2,pp=1,dp=4,mbs=1,cp-comm-type=a2a"},
		{llama, "dgx-h100:1", "tp=1,pp=4,dp=2,vp=2,mbs=1,recompute=full,recompute-layers=1"},
		{llama, "dgx-h100:1", "tp=1,pp=4,dp=2,vp=2,mbs=1,first=2,last=2"},
		{strings.Replace(llama, "layers=16", "layers=14", 1), "dgx-h100:1", "tp=1,pp=4,dp=2,vp=2,mbs=1,embedding-layer=on,loss-layer=on"},
		{llama, "dgx-h100:1", "tp=2,pp=1,dp=4,mbs=1,sp=on,recompute-modules=core_attn+mlp,fp8=current"},
		{llama, "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1,fp8=delayed"},
		{llama, "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1,distopt=on,fp8=delayed,fp8-params=on,hidden-dropout=0"},
		{llama, "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1,offload-layers=2"},
		{llama, "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1,fsdp=on,fp8=blockwise"},
		{llama, "dgx-b200:1", "tp=2,pp=1,dp=4,mbs=1,sp=on,distopt=on,fp8=mxfp8"},
		{llama, "dgx-b200:1", "tp=1,pp=2,dp=4,mbs=1,distopt=on,fp4=nvfp4"},
		{llama, "dgx-b200:1", "tp=1,pp=1,dp=8,mbs=1,distopt=on,fp4=nvfp4,fp8-params=on"},
		{moe, "dgx-h100:1", "tp=2,pp=2,dp=2,vp=2,mbs=1,sp=on,distopt=on,ep=2,etp=1,epoverlap=on"},
		{moe, "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1,ep=4,recompute-modules=moe_act+layernorm"},
		{strings.Replace(moe, "topk=2", "topk=1", 1), "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1,ep=4"},
		{"llama:layers=8,hidden=64,heads=8,ffn=192,seq=64,vocab=128,batch=16,head_dim=16,q_lora=32,kv_lora=16,rope_dim=8,mtp=1", "dgx-h100:1", "tp=2,pp=2,dp=2,mbs=1,sp=on"},
		{llama + ",window=32,window_every=2", "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1"},
		{llama + ",window=32,window_every=3", "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1"},
		{llama + ",window=32,global_every=4", "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1"},
		{"hf:../../../graph/transformer/testdata/hf/nemotron-4-15b.json:seq=64,batch=16", "dgx-h100:1", "tp=2,pp=1,dp=4,mbs=1,sp=on"},
		{moe, "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1,ep=4,dispatcher=flex,cuda-graphs=dense"},
		{moe, "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1,ep=4,routing=capacity:1.25,cuda-graphs=full"},
		{moe, "dgx-h100:1", "tp=1,pp=1,dp=8,mbs=1,ep=4,stack=megatron-core-0.16"},
		{llama, "dgx-h100:1", "tp=2,pp=1,dp=4,mbs=1,sp=on,cuda-graphs=dense"},
		{llama, "dgx-b200:1", "tp=2,pp=1,dp=4,mbs=1,sp=on,loss-fusion=on"},
	}
	written := map[string]bool{}
	for _, c := range plans {
		m, err := transformer.Parse(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		pod, err := plan.ParsePod(c.pod)
		if err != nil {
			t.Fatal(err)
		}
		s, err := plan.ParseStrategy(c.plan)
		if err != nil {
			t.Fatalf("%s: %v", c.plan, err)
		}
		pl, err := plan.Resolve(m, s, pod)
		if err != nil {
			t.Fatalf("%s: %v", c.plan, err)
		}
		args, err := MegatronArgs(m, pl.Strategy, pod.GPUs())
		if err != nil {
			t.Fatalf("%s: %v", c.plan, err)
		}
		for i := 0; i < len(args); {
			flag, j := args[i], i+1
			for j < len(args) && !strings.HasPrefix(args[j], "--") {
				j++
			}
			values := args[i+1 : j]
			i = j
			written[flag] = true
			fl, ok := flags[flag]
			if !ok {
				t.Errorf("%s: %s is not a flag of Megatron-LM core_v0.16.1's pretrain_gpt.py", c.plan, flag)
				continue
			}
			switch fl.nargs {
			case "0":
				if len(values) != 0 {
					t.Errorf("%s: %s takes no value; written with %q", c.plan, flag, values)
				}
			case "1":
				if len(values) != 1 {
					t.Errorf("%s: %s takes one value; written with %q", c.plan, flag, values)
				}
			case "+":
				if len(values) == 0 {
					t.Errorf("%s: %s takes one value or more; written with none", c.plan, flag)
				}
			}
			for _, v := range values {
				if fl.choices != nil && !slices.Contains(fl.choices, v) {
					t.Errorf("%s: %s %s: not among its choices %q", c.plan, flag, v, fl.choices)
				}
			}
		}
		// The launch line the script's header gives names flags too.
		script := MegatronScript(m, c.plan, pod.GPUs(), pod.PerNode, args)
		for _, line := range strings.Split(script, "\n") {
			if !strings.HasPrefix(line, "#") {
				continue
			}
			for _, fl := range regexp.MustCompile(`(?:^|\s)(--[a-z][a-z0-9-]*)`).FindAllStringSubmatch(line, -1) {
				if _, ok := flags[fl[1]]; !ok && fl[1] != "--nnodes" && fl[1] != "--nproc-per-node" {
					t.Errorf("the script's header names %s, which Megatron-LM core_v0.16.1's pretrain_gpt.py does not accept", fl[1])
				}
			}
		}
	}
	var missed []string
	for fl := range inSource {
		if !written[fl] {
			missed = append(missed, fl)
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("no plan of the table writes %s: add a plan with that setting", strings.Join(missed, ", "))
	}
}

// TestShellWord: a word bash would read otherwise is single-quoted, a
// quote inside it closed, escaped and reopened; plain words stay as they
// are.
func TestShellWord(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"--num-layers", "--num-layers"}, {"128", "128"}, {"core_attn", "core_attn"},
		{"([0]*3+[1]*58)", "'([0]*3+[1]*58)'"}, {"a b", "'a b'"}, {"it's", `'it'\''s'`}, {"", "''"},
	} {
		if got := shellWord(c.in); got != c.want {
			t.Errorf("shellWord(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
