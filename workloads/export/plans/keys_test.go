package plans

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/workloads/export"
)

// The plans of TestEveryKeyEveryTarget: each key of a plan at cluster
// scale at a value other than its default, on 16 GPUs.
const (
	keysDense = "llama:layers=8,hidden=512,heads=8,kv_heads=4,ffn=1024,seq=1024,vocab=4096,batch=64"
	keysMoE   = keysDense + ",experts=8,topk=2,expert_ffn=256"
)

var keyPlans = []struct{ workload, plan string }{
	{keysDense, "dp=16,mbs=1"},
	{keysDense, "dp=16,mbs=2"},
	{keysDense, "dp=16,mbs=1,distopt=on"},
	{keysDense, "dp=16,mbs=1,fsdp=on"},
	{keysDense, "tp=2,dp=8,mbs=1"},
	{keysDense, "tp=2,dp=8,mbs=1,sp=on"},
	{keysDense, "tp=2,dp=8,mbs=1,sp=on,tpoverlap=on"},
	{keysDense, "tp=2,dp=8,mbs=1,sp=on,fsdp=on"},
	{keysDense, "cp=2,dp=8,mbs=1,fsdp=on"},
	{keysDense, "pp=2,dp=8,mbs=1,fsdp=on"},
	{keysDense, "pp=2,dp=8,mbs=1"},
	{keysDense, "pp=2,vp=2,dp=8,mbs=1,fsdp=on"},
	{keysDense, "pp=2,dp=8,mbs=1,first=2,last=6"},
	{keysDense, "pp=2,dp=8,mbs=1,fsdp=on,embedding-layer=on,loss-layer=on"},
	{keysDense, "dp=16,mbs=1,recompute=full"},
	{keysDense, "dp=16,mbs=1,recompute=full,recompute-layers=1"},
	{keysDense, "dp=16,mbs=1,recompute=selective"},
	{keysDense, "dp=16,mbs=1,recompute-modules=mlp"},
	{keysDense, "dp=16,mbs=1,fp8=current"},
	{keysDense, "dp=16,mbs=1,fp8=blockwise"},
	{keysDense, "dp=16,mbs=1,fp8=mxfp8"},
	{keysDense, "dp=16,mbs=1,fp4=nvfp4"},
	{keysDense, "dp=16,mbs=1,grads=bf16"},
	{keysDense, "dp=16,mbs=1,cuda-graphs=dense"},
	{keysDense, "dp=16,mbs=1,loss-fusion=on"},
	{keysDense, "dp=16,mbs=1,stack=megatron-core-0.16"},
	{keysMoE, "dp=16,mbs=1,ep=4"},
	{keysMoE, "dp=16,mbs=1,ep=4,distopt=on"},
	{keysMoE, "dp=16,mbs=1,ep=4,fsdp=on"},
	{keysMoE, "dp=16,mbs=1,ep=4,imbalance=1.5"},
	{keysMoE, "dp=16,mbs=1,ep=4,dispatcher=allgather"},
	{keysMoE, "dp=16,mbs=1,ep=4,grouped-gemm=off,permute-fusion=off"},
	{keysMoE, "dp=16,mbs=1,ep=4,routing=capacity:1.5"},
	{keysMoE, "dp=16,mbs=1,ep=4,epoverlap=on"},
	{keysMoE, "tp=2,dp=8,mbs=1,sp=on,ep=4,etp=1,fsdp=on"},
	{keysMoE, "dp=16,mbs=1,ep=4,fsdp=on,stack=torchtitan-0.2"},
	// The memory recipe's keys (planner/plan recipe.go).
	{keysDense, "dp=16,mbs=1,distopt=on,fp8=delayed,fp8-params=on"},
	{keysDense, "dp=16,mbs=1,offload-layers=2"},
	{keysDense, "dp=16,mbs=1,hidden-dropout=0"},
	{keysDense, "dp=16,mbs=1,cuda-graphs=dense,graph-pool=layers"},
	{keysDense, "dp=16,mbs=1,fp8=delayed,fp8-dpa=on"},
	{keysDense, "dp=16,mbs=1,distopt=on,fp8=delayed,fp8-params=on,fp8-transpose-cache=off"},
	{keysDense, "dp=16,mbs=1,gc-threshold=0.6,memory-fraction=0.9"},
}

// TestEveryKeyEveryTarget: every key of a plan is written to each
// target that has a setting for it, or the export is refused in one line
// naming a key of the plan and the target: each file read back (its
// settings, not its comments) is the plan placer evaluated, key for key
// (the pipeline's split as each stage's layers).
func TestEveryKeyEveryTarget(t *testing.T) {
	pod, err := plan.ParsePod("dgx-h100:2")
	if err != nil {
		t.Fatal(err)
	}
	b200, err := plan.ParsePod("dgx-b200:2")
	if err != nil {
		t.Fatal(err)
	}
	gpus := pod.GPUs()
	targets := []struct {
		name, target string
		write        func(m transformer.Spec, s plan.Strategy) (map[string]string, error)
	}{
		{"megatron", "megatron", func(m transformer.Spec, s plan.Strategy) (map[string]string, error) {
			args, err := MegatronArgs(m, s, gpus)
			if err != nil {
				return nil, err
			}
			return readMegatron(t, m, args, gpus), nil
		}},
		{"torch-plan", "torch plan", func(m transformer.Spec, s plan.Strategy) (map[string]string, error) {
			tp, err := NewTransformerPlan(m, s, gpus)
			if err != nil {
				return nil, err
			}
			data, err := tp.Encode()
			if err != nil {
				t.Fatal(err)
			}
			return readTorchPlan(t, data), nil
		}},
		{"deepspeed", "deepspeed", func(m transformer.Spec, s plan.Strategy) (map[string]string, error) {
			cfg, moe, err := DeepSpeedTransformer(m, s, gpus, "", "ds.json")
			if err != nil {
				return nil, err
			}
			return readDeepSpeed(t, m, cfg, moe), nil
		}},
		{"torchtitan@0.2", "torchtitan", func(m transformer.Spec, s plan.Strategy) (map[string]string, error) {
			out, err := TorchTitanTransformer(m, s, gpus, "0.2")
			if err != nil {
				return nil, err
			}
			return readTitan02(t, m, string(out)), nil
		}},
		{"torchtitan@0.3", "torchtitan", func(m transformer.Spec, s plan.Strategy) (map[string]string, error) {
			out, err := TorchTitanTransformer(m, s, gpus, "0.3")
			if err != nil {
				return nil, err
			}
			return readTitan03(t, m, string(out)), nil
		}},
	}
	written := map[string]int{}
	for _, c := range keyPlans {
		m, err := transformer.Parse(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		s, err := plan.ParseStrategy(c.plan)
		if err != nil {
			t.Fatalf("%s: %v", c.plan, err)
		}
		on := pod
		if s.FP8 == plan.FP8MX || s.FP8 == plan.FP4NV {
			on = b200 // block-scaled formats: refused on H100
		}
		pl, err := plan.Resolve(m, s, on)
		if err != nil {
			t.Fatalf("%s: %v", c.plan, err)
		}
		for _, tg := range targets {
			got, err := tg.write(m, pl.Strategy)
			if err != nil {
				msg := err.Error()
				named := false
				for _, kv := range strings.Split(pl.String(), ",") {
					k, _, _ := strings.Cut(kv, "=")
					named = named || strings.Contains(msg, k+"=") || strings.Contains(msg, k+" ")
				}
				if !named || !strings.Contains(msg, tg.target) || strings.Contains(msg, "\n") {
					t.Errorf("%s --to %s: refused in %q: not one line naming a key of the plan and the target", pl, tg.name, msg)
				}
				continue
			}
			written[tg.name]++
			want := planKeys(t, m, pl, tg.name)
			if !maps.Equal(got, want) {
				t.Errorf("%s --to %s: read back\n%v, want\n%v", pl, tg.name, got, want)
			}
		}
	}
	for _, tg := range targets {
		if written[tg.name] < 5 {
			t.Errorf("--to %s wrote %d of the %d plans: too few to check its keys", tg.name, written[tg.name], len(keyPlans))
		}
	}
}

// planKeys is plan pl of m as a reader of target's file sees it: its
// keys (Plan.String's), the pipeline split as "stages", the software
// stack as the settings Megatron-LM writes (torchtitan's own stack is
// what torchtitan runs: no setting).
func planKeys(t *testing.T, m transformer.Spec, pl plan.Plan, target string) map[string]string {
	t.Helper()
	keys := map[string]string{}
	for _, kv := range strings.Split(pl.String(), ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "first", "last", "embedding-layer", "loss-layer", "stack", "dispatcher", "permute-fusion", "router-fusion", "grouped-gemm", "cuda-graphs", "routing":
		case "graph-pool":
			// Megatron-LM: written by the graphs' own settings
			// (Transformer Engine's per-layer graphs), softwareKeys'
			// cuda-graphs.
			if target != "megatron" {
				keys[k] = v
			}
		case "hidden-dropout":
			// torchtitan: its decoders have no dropout (keys.go).
			if !strings.HasPrefix(target, "torchtitan") {
				keys[k] = v
			}
		default:
			keys[k] = v
		}
	}
	stages, err := pl.Strategy.StageLayers(m.Layers)
	if err != nil {
		t.Fatal(err)
	}
	keys["stages"] = joinInts(stages)
	if target == "megatron" {
		maps.Copy(keys, softwareKeys(m, pl.Strategy.Software.Settings()))
	}
	return keys
}

// softwareKeys are the stack's settings Megatron-LM's arguments carry.
func softwareKeys(m transformer.Spec, st plan.Settings) map[string]string {
	keys := map[string]string{}
	onOff := map[bool]string{true: "on", false: "off"}
	if m.MoE() {
		keys["dispatcher"] = st.Dispatcher
		keys["permute-fusion"], keys["router-fusion"], keys["grouped-gemm"] = onOff[!st.UnfusedPermute], onOff[!st.UnfusedRouter], onOff[!st.ExpertLoop]
		if st.Capacity > 0 {
			keys["routing"] = "capacity:" + strconv.FormatFloat(st.Capacity, 'g', -1, 64)
		}
	}
	if st.Graphs != "" && st.Graphs != plan.GraphsOff {
		keys["cuda-graphs"] = st.Graphs
	}
	return keys
}

// stagesOf is the split a plan of p stages and these keys gives (the
// readers' way back from a framework's split settings).
func stagesOf(t *testing.T, m transformer.Spec, text string) string {
	t.Helper()
	s, err := plan.ParseStrategy(text)
	if err != nil {
		t.Fatalf("read back %s: %v", text, err)
	}
	st, err := s.StageLayers(m.Layers)
	if err != nil {
		t.Fatalf("read back %s: %v", text, err)
	}
	return joinInts(st)
}

// readMegatron reads Megatron-LM's arguments back into a plan's keys.
func readMegatron(t *testing.T, m transformer.Spec, args []string, gpus int) map[string]string {
	t.Helper()
	flags := map[string][]string{}
	for i := 0; i < len(args); {
		j := i + 1
		for j < len(args) && !strings.HasPrefix(args[j], "--") {
			j++
		}
		flags[args[i]] = args[i+1 : j]
		i = j
	}
	num := func(f string, def int) int {
		v, ok := flags[f]
		if !ok {
			return def
		}
		n, err := strconv.Atoi(v[0])
		if err != nil {
			t.Fatalf("%s %v", f, v)
		}
		return n
	}
	has := func(f string) bool { _, ok := flags[f]; return ok }
	T, P, C := num("--tensor-model-parallel-size", 1), num("--pipeline-model-parallel-size", 1), num("--context-parallel-size", 1)
	k := map[string]string{"tp": strconv.Itoa(T), "pp": strconv.Itoa(P), "dp": strconv.Itoa(gpus / (T * C * P)), "mbs": strconv.Itoa(num("--micro-batch-size", 0))}
	if C > 1 {
		k["cp"] = strconv.Itoa(C)
	}
	split := fmt.Sprintf("pp=%d", P)
	if n := num("--num-layers-per-virtual-pipeline-stage", 0); n > 0 {
		k["vp"] = strconv.Itoa(m.Layers / P / n)
	}
	if v := num("--num-virtual-stages-per-pipeline-rank", 0); v > 0 {
		k["vp"] = strconv.Itoa(v)
	}
	if v, ok := k["vp"]; ok {
		split += ",vp=" + v
	}
	if n := num("--decoder-first-pipeline-num-layers", 0); n > 0 {
		split += fmt.Sprintf(",first=%d", n)
	}
	if n := num("--decoder-last-pipeline-num-layers", 0); n > 0 {
		split += fmt.Sprintf(",last=%d", n)
	}
	if has("--account-for-embedding-in-pipeline-split") {
		split += ",embedding-layer=on"
	}
	if has("--account-for-loss-in-pipeline-split") {
		split += ",loss-layer=on"
	}
	k["stages"] = stagesOf(t, m, split)
	for f, key := range map[string]string{"--sequence-parallel": "sp", "--tp-comm-overlap": "tpoverlap", "--use-megatron-fsdp": "fsdp", "--overlap-moe-expert-parallel-comm": "epoverlap"} {
		if has(f) {
			k[key] = "on"
		}
	}
	if has("--use-distributed-optimizer") && !has("--use-megatron-fsdp") {
		k["distopt"] = "on"
	}
	if has("--grad-reduce-in-bf16") {
		k["grads"] = "bf16"
	}
	if g := flags["--recompute-granularity"]; len(g) > 0 {
		k["recompute"] = g[0]
		if mods := flags["--recompute-modules"]; len(mods) > 0 {
			k["recompute-modules"] = strings.Join(mods, "+")
		}
		if meth := flags["--recompute-method"]; len(meth) > 0 && meth[0] == "block" {
			k["recompute-layers"] = strconv.Itoa(num("--recompute-num-layers", 0))
		}
	}
	if r := flags["--fp8-recipe"]; len(r) > 0 {
		k["fp8"] = map[string]string{"tensorwise": plan.FP8Current, "delayed": plan.FP8Delayed, "blockwise": plan.FP8Blockwise, "mxfp8": plan.FP8MX}[r[0]]
	}
	if r := flags["--fp4-recipe"]; len(r) > 0 {
		k["fp4"] = r[0]
	}
	if ep := num("--expert-model-parallel-size", 1); ep > 1 {
		k["ep"] = strconv.Itoa(ep)
	}
	if etp := num("--expert-tensor-parallel-size", T); etp != T {
		k["etp"] = strconv.Itoa(etp)
	}
	onOff := map[bool]string{true: "on", false: "off"}
	if d := flags["--moe-token-dispatcher-type"]; len(d) > 0 {
		k["dispatcher"] = d[0]
		k["permute-fusion"], k["router-fusion"], k["grouped-gemm"] = onOff[has("--moe-permute-fusion")], onOff[has("--moe-router-fusion")], onOff[has("--moe-grouped-gemm")]
	}
	if c := flags["--moe-expert-capacity-factor"]; len(c) > 0 {
		k["routing"] = "capacity:" + c[0]
	}
	if has("--cross-entropy-loss-fusion") && slices.Contains(flags["--cross-entropy-fusion-impl"], "te") {
		k["loss-fusion"] = "on"
	}
	if has("--fp8-param-gather") || has("--fp4-param-gather") {
		k["fp8-params"] = "on"
	}
	if n := num("--cpu-offloading-num-layers", 0); n > 0 {
		k["offload-layers"] = strconv.Itoa(n)
	}
	if slices.Equal(flags["--hidden-dropout"], []string{"0"}) {
		k["hidden-dropout"] = "0"
	}
	if scope := flags["--cuda-graph-scope"]; len(scope) > 0 {
		k["cuda-graphs"] = plan.GraphsDense
		if slices.Contains(scope, "moe") {
			k["cuda-graphs"] = plan.GraphsFull
		}
	}
	return k
}

// readTorchPlan reads a transformer plan back into a plan's keys.
func readTorchPlan(t *testing.T, data []byte) map[string]string {
	t.Helper()
	p, err := export.DecodeTransformerPlan(data)
	if err != nil {
		t.Fatal(err)
	}
	k := map[string]string{"tp": strconv.Itoa(p.Tensor), "pp": strconv.Itoa(p.Pipeline), "dp": strconv.Itoa(p.Replicas), "mbs": strconv.Itoa(p.MicroBatchSize)}
	on := func(b bool, key string) {
		if b {
			k[key] = "on"
		}
	}
	on(p.SequenceParallel, "sp")
	on(p.DistributedOpt, "distopt")
	on(p.FSDP, "fsdp")
	if p.Recompute != "" && p.Recompute != plan.NoRecompute {
		k["recompute"] = string(p.Recompute)
	}
	if len(p.RecomputeModules) > 0 {
		k["recompute-modules"] = strings.Join(p.RecomputeModules, "+")
	}
	if p.RecomputeLayers > 0 {
		k["recompute-layers"] = strconv.Itoa(p.RecomputeLayers)
	}
	if p.ExpertParallel > 1 {
		k["ep"] = strconv.Itoa(p.ExpertParallel)
	}
	if p.Transformer.Experts > 0 && p.ExpertTensor != p.Tensor {
		k["etp"] = strconv.Itoa(p.ExpertTensor)
	}
	var st []int
	for _, s := range p.Stages {
		st = append(st, len(s.Layers))
	}
	k["stages"] = joinInts(st)
	return k
}

// readDeepSpeed reads a DeepSpeed configuration (and its experts'
// module) back into a plan's keys.
func readDeepSpeed(t *testing.T, m transformer.Spec, cfg, moe []byte) map[string]string {
	t.Helper()
	var c struct {
		Batch int `json:"train_batch_size"`
		Micro int `json:"train_micro_batch_size_per_gpu"`
		Accum int `json:"gradient_accumulation_steps"`
		Zero  struct {
			Stage int `json:"stage"`
		} `json:"zero_optimization"`
	}
	if err := json.Unmarshal(cfg, &c); err != nil {
		t.Fatal(err)
	}
	k := map[string]string{"tp": "1", "pp": "1", "dp": strconv.Itoa(c.Batch / (c.Micro * c.Accum)), "mbs": strconv.Itoa(c.Micro), "stages": strconv.Itoa(m.Layers)}
	switch c.Zero.Stage {
	case 1:
		k["distopt"] = "on"
	case 3:
		k["fsdp"] = "on"
	}
	if moe != nil {
		ep := regexp.MustCompile(`(?m)^EP_SIZE = (\d+)$`).FindSubmatch(moe)
		if ep == nil {
			t.Fatalf("no EP_SIZE in\n%s", moe)
		}
		if string(ep[1]) != "1" {
			k["ep"] = string(ep[1])
		}
	}
	return k
}

// titanKeys reads torchtitan's settings (section.field -> value) back
// into a plan's keys.
func titanKeys(t *testing.T, m transformer.Spec, f map[string]string, parts [][]string, release string) map[string]string {
	t.Helper()
	n := func(field string) int {
		v, err := strconv.Atoi(f[field])
		if err != nil {
			t.Fatalf("%s = %q", field, f[field])
		}
		return v
	}
	rep, shard, T, C, P := n("parallelism.data_parallel_replicate_degree"), n("parallelism.data_parallel_shard_degree"), n("parallelism.tensor_parallel_degree"), n("parallelism.context_parallel_degree"), n("parallelism.pipeline_parallel_degree")
	k := map[string]string{"tp": strconv.Itoa(T), "pp": strconv.Itoa(P), "dp": strconv.Itoa(rep * shard)}
	if C > 1 {
		k["cp"] = strconv.Itoa(C)
	}
	if shard > 1 {
		k["fsdp"] = "on"
	}
	if T > 1 && (release == "0.2" || f["parallelism.enable_sequence_parallel"] == "true") {
		k["sp"] = "on" // 0.2's tensor parallelism always shards the sequence
	}
	if f["parallelism.enable_async_tensor_parallel"] == "true" || f["compile.enable_async_tensor_parallel"] == "true" {
		k["tpoverlap"] = "on"
	}
	if ep, ok := f["parallelism.expert_parallel_degree"]; ok && ep != "1" {
		k["ep"] = ep
		if T > 1 {
			k["etp"] = "1" // torchtitan's experts borrow the tensor ranks whole
		}
	}
	if f["activation_checkpoint.mode"] == "full" {
		k["recompute"] = "full"
	}
	if f["quantize.linear.float8.recipe_name"] == "tensorwise" {
		k["fp8"] = plan.FP8Current
	}
	if P > 1 {
		k["mbs"] = f["parallelism.pipeline_parallel_microbatch_size"]
		V := len(parts) / P
		if V > 1 {
			k["vp"] = strconv.Itoa(V)
		}
		st := make([]int, P)
		for j, q := range parts {
			for _, mod := range q {
				if strings.HasPrefix(mod, "layers.") {
					st[j%P]++
				}
			}
		}
		k["stages"] = joinInts(st)
	} else {
		k["mbs"] = f["training.local_batch_size"]
		k["stages"] = strconv.Itoa(m.Layers)
	}
	return k
}

// readTitan02 reads torchtitan 0.2's TOML (its settings, not its
// comments) back into a plan's keys.
func readTitan02(t *testing.T, m transformer.Spec, toml string) map[string]string {
	t.Helper()
	f := map[string]string{}
	var parts [][]string
	section, inParts := "", false
	for _, line := range strings.Split(toml, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		switch {
		case inParts && line == "]":
			inParts = false
		case inParts:
			var q []string
			if err := json.Unmarshal([]byte(strings.TrimSuffix(line, ",")), &q); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			parts = append(parts, q)
		case line == "":
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			key, v, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			key, v = strings.TrimSpace(key), strings.Trim(strings.TrimSpace(v), `"`)
			if key == "module_fqns_per_model_part" {
				inParts = true
				continue
			}
			f[section+"."+key] = v
		}
	}
	return titanKeys(t, m, f, parts, "0.2")
}

// readTitan03 reads torchtitan 0.3's module (OVERRIDES: its settings as
// torchtitan.train's command line) back into a plan's keys.
func readTitan03(t *testing.T, m transformer.Spec, py string) map[string]string {
	t.Helper()
	i := strings.Index(py, "\nOVERRIDES = [\n")
	j := strings.Index(py[i+1:], "\n]\n")
	if i < 0 || j < 0 {
		t.Fatalf("no OVERRIDES in\n%s", py)
	}
	var args []string
	for _, q := range regexp.MustCompile(`"(?:[^"\\]|\\.)*"`).FindAllString(py[i:i+1+j], -1) {
		s, err := strconv.Unquote(q)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, s)
	}
	f := map[string]string{}
	var parts [][]string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "activation-checkpoint:"):
			f["activation_checkpoint.mode"] = strings.TrimPrefix(a, "activation-checkpoint:")
		case a == "--parallelism.module_fqns_per_model_part":
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") && !strings.HasPrefix(args[i+1], "activation-checkpoint:") {
				i++
				parts = append(parts, strings.Split(args[i], ","))
			}
		case strings.HasPrefix(a, "--"):
			field := strings.TrimPrefix(a, "--")
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") && !strings.HasPrefix(args[i+1], "activation-checkpoint:") {
				f[field] = args[i+1]
				i++
			} else if sec, name, _ := strings.Cut(field, "."); strings.HasPrefix(name, "no-") {
				f[sec+"."+strings.TrimPrefix(name, "no-")] = "false"
			} else {
				f[field] = "true"
			}
		}
	}
	return titanKeys(t, m, f, parts, "0.3")
}

// joinInts is v joined by " and ", as the exports' refusals list stages.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " and ")
}
