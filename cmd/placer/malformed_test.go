package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// malformedCase is one hostile input: the command line, the exit status
// the rule gives (2 a wrong command line, 1 bad input) and what the one
// error line must name (the file, the flag, the field).
type malformedCase struct {
	name string
	args []string
	code int
	want string
}

// TestMalformedInputs runs the real binary on at least 150 malformed
// inputs across every input kind (graph, decision and result, hardware
// profile, policy configuration, model file) and flag: no panic, no hang
// (20 s each), one error line starting "placer: " that names what and
// where, and the exit status by the rule.
func TestMalformedInputs(t *testing.T) {
	bin := placerBinary(t)
	_ = bin
	dir := t.TempDir()
	cases := malformedCases(t, dir)
	if len(cases) < 150 {
		t.Fatalf("only %d cases", len(cases))
	}
	var mu sync.Mutex
	counts := map[int]int{}
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, tc := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := runBinary(t, dir, 20*time.Second, nil, tc.args...)
			mu.Lock()
			counts[r.code]++
			mu.Unlock()
			errs := strings.TrimSpace(r.stderr)
			switch {
			case r.timedOut:
				t.Errorf("%s: hung (killed after 20 s): %v", tc.name, tc.args)
			case strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic:") || strings.Contains(errs, "fatal error"):
				t.Errorf("%s: crashed: %.300s", tc.name, errs)
			case r.code != tc.code:
				t.Errorf("%s: exit %d, want %d: %q (%v)", tc.name, r.code, tc.code, errs, tc.args)
			case strings.Contains(errs, "\n") || !strings.HasPrefix(errs, "placer: "):
				t.Errorf("%s: stderr is not one 'placer: ' line: %q", tc.name, errs)
			case !strings.Contains(errs, tc.want):
				t.Errorf("%s: %q does not name %q", tc.name, errs, tc.want)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d malformed inputs: exit statuses %v", len(cases), counts)
}

func malformedCases(t *testing.T, dir string) []malformedCase {
	t.Helper()
	data, err := os.ReadFile("../../examples/tiny.json")
	if err != nil {
		t.Fatal(err)
	}
	var base map[string]any
	if err := json.Unmarshal(data, &base); err != nil {
		t.Fatal(err)
	}
	n := 0
	write := func(content string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("in%03d.json", n))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// mutate returns the tiny graph with f applied to a deep copy.
	mutate := func(f func(g map[string]any)) string {
		var g map[string]any
		json.Unmarshal(data, &g)
		f(g)
		return js(g)
	}
	op := func(g map[string]any, i int) map[string]any { return g["ops"].([]any)[i].(map[string]any) }
	tensor := func(g map[string]any, i int) map[string]any { return g["tensors"].([]any)[i].(map[string]any) }
	good := write(string(data))
	var cs []malformedCase
	add := func(name string, code int, want string, args ...string) {
		cs = append(cs, malformedCase{name: name, args: args, code: code, want: want})
	}
	evalG := func(name, content, want string) {
		p := write(content)
		add("graph: "+name, 1, want, "eval", "--graph", p, "--gpus", "2")
	}

	// Graphs: every numeric field at the edges of its type and range.
	for _, f := range []string{"flops", "bytes_read", "bytes_written", "param_bytes", "temp_bytes", "time_s"} {
		vals := []any{-1, 1e300, 9.3e18, 9223372036854775000, "x", true, []int{1}}
		if f == "flops" || f == "time_s" { // floats: 9.3e18 FLOPs is in range
			vals = []any{-1, 1e300, 1e22, 1.7976931348623157e308, "x", true, []int{1}}
		}
		for _, v := range vals {
			evalG(fmt.Sprintf("op %s = %v", f, v), mutate(func(g map[string]any) { op(g, 1)[f] = v }), filepath.Base(filepath.Join(dir, fmt.Sprintf("in%03d.json", n+1))))
		}
	}
	for _, v := range []any{-1, 1e300, 9223372036854775000, "x"} {
		evalG(fmt.Sprintf("tensor bytes = %v", v), mutate(func(g map[string]any) { tensor(g, 0)["bytes"] = v }), "graph")
		evalG(fmt.Sprintf("tensor transfer_s = %v", v), mutate(func(g map[string]any) { tensor(g, 0)["transfer_s"] = v }), "graph")
	}
	// Byte counts that each fit but overflow together.
	evalG("byte counts adding up past int64", mutate(func(g map[string]any) {
		for i := 0; i < 4; i++ {
			op(g, i)["param_bytes"] = int64(1) << 50
			op(g, i)["temp_bytes"] = int64(1) << 50
		}
		for k := 0; k < 70; k++ {
			g["ops"] = append(g["ops"].([]any), map[string]any{"name": fmt.Sprintf("pad%d", k), "param_bytes": int64(1) << 50})
		}
	}), "64 PiB")
	for name, f := range map[string]func(g map[string]any){
		"newline in graph name": func(g map[string]any) { g["name"] = "a\nb" },
		"tab in graph name":     func(g map[string]any) { g["name"] = "x\ty" },
		"empty op name":         func(g map[string]any) { op(g, 0)["name"] = "" },
		"long op name":          func(g map[string]any) { op(g, 0)["name"] = strings.Repeat("a", 5000) },
		"duplicate op name":     func(g map[string]any) { op(g, 1)["name"] = "x" },
		"unknown class":         func(g map[string]any) { op(g, 0)["class"] = "quantum" },
		"unknown dtype":         func(g map[string]any) { op(g, 0)["dtype"] = "f7" },
		"negative shape":        func(g map[string]any) { op(g, 0)["shape"] = []int{-1} },
		"huge shape":            func(g map[string]any) { op(g, 0)["shape"] = []float64{1e15} },
		"unknown field":         func(g map[string]any) { op(g, 0)["colour"] = "red" },
		"unknown producer":      func(g map[string]any) { tensor(g, 0)["producer"] = "nobody" },
		"unknown consumer":      func(g map[string]any) { tensor(g, 0)["consumers"] = []string{"nobody"} },
		"self consumer":         func(g map[string]any) { tensor(g, 0)["consumers"] = []string{"x"} },
		"consumer twice":        func(g map[string]any) { tensor(g, 0)["consumers"] = []string{"dense/MatMul", "dense/MatMul"} },
		"control to itself":     func(g map[string]any) { g["control"] = []any{map[string]any{"from": "x", "to": "x"}} },
		"control to nobody":     func(g map[string]any) { g["control"] = []any{map[string]any{"from": "x", "to": "nobody"}} },
		"cycle": func(g map[string]any) {
			g["control"] = []any{map[string]any{"from": "sgd/dense", "to": "x"}, map[string]any{"from": "dense/Relu", "to": "sgd/dense"}}
		},
		"wrong format":            func(g map[string]any) { g["format"] = "onnx" },
		"wrong version":           func(g map[string]any) { g["version"] = 99 },
		"no ops":                  func(g map[string]any) { g["ops"] = []any{}; g["tensors"] = []any{}; g["control"] = []any{} },
		"ops not a list":          func(g map[string]any) { g["ops"] = 5 },
		"tensors not a list":      func(g map[string]any) { g["tensors"] = "x" },
		"name a number":           func(g map[string]any) { g["name"] = 7 },
		"NUL in graph name":       func(g map[string]any) { g["name"] = "a\x00b" },
		"carriage return in name": func(g map[string]any) { g["name"] = "a\rb" },
	} {
		evalG(name, mutate(f), "graph")
	}
	evalG("trailing garbage", string(data)+" garbage", "unexpected data")
	evalG("two objects", string(data)+string(data), "unexpected data")
	evalG("empty file", "", "in")
	evalG("not JSON", "hello", "in")
	evalG("a JSON array", "[1,2]", "in")
	evalG("null", "null", "in")
	for _, cut := range []int{1, 10, 50, 100, 200, 400, len(data) - 2} {
		evalG(fmt.Sprintf("truncated at %d", cut), string(data[:cut]), "in")
	}
	add("graph: missing file", 1, "nosuch.json", "eval", "--graph", filepath.Join(dir, "nosuch.json"))
	add("graph: a folder", 1, "is a directory", "eval", "--graph", dir, "--format", "native")

	// Decisions and result files, for the tiny graph on 2 GPUs.
	dec := func(f func(d map[string]any)) string {
		d := map[string]any{"format": "placer-decision", "version": 1, "graph": "tiny", "ops": 4, "devices": 2, "device": []int{0, 0, 1, 1}}
		f(d)
		return write(js(d))
	}
	evalD := func(name string, p string, want string) {
		add("decision: "+name, 1, want, "eval", "--graph", good, "--gpus", "2", "--placement", p)
	}
	const i64max, i64min = 9223372036854775807, -9223372036854775808
	for name, f := range map[string]func(d map[string]any){
		"device -1":             func(d map[string]any) { d["device"] = []int{0, -1, 0, 0} },
		"device 2":              func(d map[string]any) { d["device"] = []int{0, 2, 0, 0} },
		"device huge":           func(d map[string]any) { d["device"] = []int{0, i64max, 0, 0} },
		"too few devices":       func(d map[string]any) { d["device"] = []int{0} },
		"too many devices":      func(d map[string]any) { d["device"] = []int{0, 0, 0, 0, 0} },
		"fusion int64 extremes": func(d map[string]any) { d["fusion"] = []int{i64min + 1, i64max, 0, 1} },
		"fusion int64 max":      func(d map[string]any) { d["fusion"] = []int{i64max, i64max, i64max, 0} },
		"fusion short":          func(d map[string]any) { d["fusion"] = []int{1} },
		"priority extremes":     func(d map[string]any) { d["priority"] = []int{i64min, i64max, 0, 0} },
		"priority short":        func(d map[string]any) { d["priority"] = []int{1, 2} },
		"transfer wrong length": func(d map[string]any) { d["transfer"] = []int{1} },
		"transfer extremes":     func(d map[string]any) { d["transfer"] = []int{i64max, 0, 0, 0} },
		"ops mismatch":          func(d map[string]any) { d["ops"] = 5 },
		"made for 4 devices":    func(d map[string]any) { d["devices"] = 4 },
		"other graph's hash":    func(d map[string]any) { d["graph_sha256"] = strings.Repeat("ab", 32) },
		"wrong format":          func(d map[string]any) { d["format"] = "placer-graph" },
		"wrong version":         func(d map[string]any) { d["version"] = 3 },
		"strategy in version 1": func(d map[string]any) { d["strategy"] = map[string]any{"replicas": 2} },
		"strategy bad schedule": func(d map[string]any) {
			d["version"] = 2
			d["strategy"] = map[string]any{"micro_batches": 2, "schedule": "zigzag"}
		},
		"strategy negative":      func(d map[string]any) { d["version"] = 2; d["strategy"] = map[string]any{"replicas": -1} },
		"strategy not simulated": func(d map[string]any) { d["version"] = 2; d["strategy"] = map[string]any{"replicas": 2} },
		"unknown field":          func(d map[string]any) { d["colour"] = 1 },
		"device not a list":      func(d map[string]any) { d["device"] = "0,0,1,1" },
		"device floats":          func(d map[string]any) { d["device"] = []float64{0.5, 0, 1, 1} },
		"result of another kind": func(d map[string]any) { d["format"] = "placer-result" },
	} {
		evalD(name, dec(f), "in")
	}
	dgood := dec(func(map[string]any) {})
	dd, _ := os.ReadFile(dgood)
	evalD("trailing garbage", write(string(dd)+"}}"), "after top-level value")
	evalD("truncated", write(string(dd[:20])), "in")
	evalD("empty", write(""), "in")
	add("strategy: replicas do not divide the GPUs", 1, "do not divide", "eval", "--graph", good, "--gpus", "2", "--strategy", "dp=3")
	add("strategy: no batch information", 1, "no batch information", "eval", "--graph", good, "--gpus", "2", "--strategy", "dp=2")
	add("strategy: syntax", 2, "not a whole number", "eval", "--graph", good, "--gpus", "2", "--strategy", "dp=two")
	add("strategy: micro-batches above the batch", 1, "more than the batch", "eval", "--workload", "trxl2", "--gpus", "2", "--strategy", "dp=2,mb=4096")
	add("strategy: zero2 with one replica", 2, "sharding needs replicas", "eval", "--workload", "trxl2", "--gpus", "2", "--strategy", "shard=zero2")
	add("decision: missing file", 1, "nosuch.json", "eval", "--graph", good, "--gpus", "2", "--placement", filepath.Join(dir, "nosuch.json"))
	add("decision: schedule file without priorities", 1, "no priorities", "eval", "--graph", good, "--gpus", "2", "--schedule", dgood)
	add("decision: fusion file without fusion", 1, "no fusion", "eval", "--graph", good, "--gpus", "2", "--fusion", dgood)

	// Hardware profiles.
	evalH := func(name string, prof map[string]any, want string) {
		p := write(js(prof))
		add("hardware: "+name, 1, want, "eval", "--graph", good, "--gpus", "2", "--hardware", p)
	}
	for _, f := range []string{"fp32_flops", "mem_bandwidth", "pcie_bandwidth", "nvlink_bandwidth", "fp16_tensor_flops"} {
		for _, v := range []any{-1, 1e308, 1e-300} {
			evalH(fmt.Sprintf("%s = %v", f, v), map[string]any{"base": "v100", f: v}, f)
		}
	}
	for _, f := range []string{"launch_s", "nvlink_latency_s", "pcie_latency_s"} {
		for _, v := range []any{-1, 1e308, 2} {
			evalH(fmt.Sprintf("%s = %v", f, v), map[string]any{"base": "v100", f: v}, f)
		}
	}
	for _, v := range []any{0, -1, 1000} {
		evalH(fmt.Sprintf("nvlinks = %v", v), map[string]any{"base": "v100", "nvlinks": v}, "nvlinks")
	}
	for _, v := range []any{-1, 0, 9223372036854775807} {
		evalH(fmt.Sprintf("memory = %v", v), map[string]any{"base": "v100", "memory": v}, "memory")
	}
	for _, v := range []float64{2, 0, -0.5, 1e-9} {
		evalH(fmt.Sprintf("compute_eff = %v", v), map[string]any{"base": "v100", "compute_eff": []float64{v, v, v, v, v, v, v}}, "compute_eff")
		evalH(fmt.Sprintf("mem_eff = %v", v), map[string]any{"base": "v100", "mem_eff": []float64{0.5, v, 0.5, 0.5, 0.5, 0.5, 0.5}}, "mem_eff")
	}
	evalH("unknown base", map[string]any{"base": "tpu9"}, "base")
	evalH("unknown field", map[string]any{"base": "v100", "warp_speed": 9}, "warp_speed")
	evalH("nvlink_gen -1", map[string]any{"base": "v100", "nvlink_gen": -1}, "nvlink_gen")
	add("hardware: trailing garbage", 1, "after top-level value", "eval", "--graph", good, "--hardware", write(`{"base":"v100"} x`))
	add("hardware: truncated", 1, "in", "eval", "--graph", good, "--hardware", write(`{"base":"v1`))

	// Policy configurations (--policy FILE), checked before anything is allocated.
	search := func(extra ...string) []string {
		return append([]string{"search", "--graph", good, "--gpus", "2", "--steps", "1", "-q"}, extra...)
	}
	for name, cfg := range map[string]string{
		"huge sage_dim":      `{"sage_dim": 1000000000}`,
		"huge layers":        `{"layers": 100000, "d_model": 4096}`,
		"huge in total":      `{"sage_dim": 4096, "d_model": 4096, "inner": 16384, "layers": 64, "heads": 64, "head_dim": 1024}`,
		"negative heads":     `{"heads": -3}`,
		"max_devices 1":      `{"max_devices": 1}`,
		"neighbours 1000":    `{"sage_neighbors": 1000}`,
		"unknown field":      `{"sage_dims": 3}`,
		"string for number":  `{"sage_dim": "big"}`,
		"trailing garbage":   `{"sage_dim": 8} }`,
		"truncated":          `{"sage_dim": `,
		"int overflow":       `{"sage_dim": 99999999999999999999}`,
		"levels huge":        `{"priority_levels": 1048576}`,
		"segment_len 100000": `{"segment_len": 100000}`,
	} {
		add("policy: "+name, 1, "--policy", search("--policy", write(cfg))...)
	}
	// Model files (--model).
	for name, content := range map[string]string{"garbage": "hello world", "empty": "", "json": `{"format":"x"}`, "magic only": "PLACERPOL"} {
		add("model: "+name, 1, "policy", "infer", "--graph", good, "--gpus", "2", "--model", write(content))
	}

	// Flags: values out of range or of the wrong type, unknown names.
	type fl struct {
		args []string
		want string
	}
	for _, f := range []fl{
		{[]string{"eval", "--graph", good, "--gpus", "0"}, "--gpus"},
		{[]string{"eval", "--graph", good, "--gpus", "-1"}, "--gpus"},
		{[]string{"eval", "--graph", good, "--gpus", "65"}, "--gpus"},
		{[]string{"eval", "--graph", good, "--gpus", "1000"}, "--gpus"},
		{[]string{"eval", "--graph", good, "--gpus", "two"}, "--gpus"},
		{[]string{"eval", "--graph", good, "--gpus", "99999999999999999999"}, "--gpus"},
		{[]string{"eval", "--graph", good, "--memory", "-1"}, "--memory"},
		{[]string{"eval", "--graph", good, "--memory", "0"}, "--memory"},
		{[]string{"eval", "--graph", good, "--memory", "1152921504606846976"}, "--memory"},
		{[]string{"eval", "--graph", good, "--topology", "torus"}, "--topology"},
		{[]string{"eval", "--graph", good, "--format", "onnx2"}, "--format"},
		{[]string{"eval", "--graph", good, "--hardware", "tpu9"}, "--hardware"},
		{[]string{"eval", "--workload", "nosuch"}, "--workload"},
		{[]string{"eval", "--graph", good, "--workload", "trxl2"}, "not both"},
		{[]string{"eval"}, "--graph"},
		{[]string{"eval", "--graph", good, "--placement", "magic"}, "magic"},
		{[]string{"eval", "--graph", good, "--repeats", "0"}, "--repeats"},
		{[]string{"eval", "--graph", good, "extra"}, "extra"},
		{[]string{"eval", "--bogus"}, "--bogus"},
		{[]string{"evaluate"}, "evaluate"},
		{[]string{"workloads", "export", "nosuch"}, "nosuch"},
		{[]string{"workloads", "export"}, "arg"},
		{[]string{"workloads", "synth", "--count", "0", "-o", dir}, "--count"},
		{search("--time", "-1s"), "--time"},
		{search("--time", "soon"), "--time"},
		{search("--time", "100000h"), "--time"},
		{search("--warmup", "-5"), "--warmup"},
		{search("--steps", "-1"), "--steps"},
		{search("--samples", "-1"), "--samples"},
		{search("--samples", "100000"), "--samples"},
		{search("--budget", "-1"), "--budget"},
		{search("--lr", "0"), "--lr"},
		{search("--lr", "-1"), "--lr"},
		{search("--lr", "NaN"), "--lr"},
		{search("--lr", "Inf"), "--lr"},
		{search("--epochs", "0"), "--epochs"},
		{search("--minibatches", "0"), "--minibatches"},
		{search("--clip", "0"), "--clip"},
		{search("--entropy", "-1"), "--entropy"},
		{search("--target-kl", "NaN"), "--target-kl"},
		{search("--max-grad-norm", "-2"), "--max-grad-norm"},
		{search("--methods", "nosuch"), "nosuch"},
		{search("--tasks", "speed"), "--tasks"},
		{search("--seed", "-1"), "--seed"},
		{search("--policy", "huge"), "--policy"},
		{[]string{"baselines", "--graph", good, "--time", "-1s"}, "--time"},
		{[]string{"baselines", "--graph", good, "--budget", "-5"}, "--budget"},
		{[]string{"baselines", "--graph", good, "--methods", "nosuch"}, "nosuch"},
		{[]string{"pretrain", "--graphs", dir, "--gpus", "2", "--out", filepath.Join(dir, "m"), "--checkpoint-every", "-1"}, "--checkpoint-every"},
		{[]string{"pretrain", "--graphs", dir, "--gpus", "2", "--out", filepath.Join(dir, "m"), "--extra-gpus", "0"}, "--extra-gpus"},
		{[]string{"infer", "--graph", good, "--samples", "-2"}, "--samples"},
		{[]string{"finetune", "--graph", good, "--steps", "-1"}, "--steps"},
		{[]string{"version", "--json", "extra"}, "extra"},
	} {
		add("flag: "+strings.Join(f.args[1:], " "), 2, f.want, f.args...)
	}
	return cs
}
