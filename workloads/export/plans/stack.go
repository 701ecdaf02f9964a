package plans

import (
	"fmt"
	"strings"

	"github.com/placer/placer/planner/plan"
)

// A plan at cluster scale is costed on a software stack (plan.Software:
// stack= and the keys beside it), and the file an export writes runs on
// its framework's: the same plan is another step time on another stack
// (docs/stacks.md: Llama 3 8B's quick-start plan is 5.92 s a step on
// placer's default stack, 7.25 s on torchtitan's eager one). So each
// framework has the stack its file runs, search --for costs its plans on
// it, and export writes a plan costed on another stack only after costing
// it again on its framework's.

// FrameworkSoftware is the stack the file of framework format (--to,
// --for: "megatron", "torchtitan", "deepspeed") runs, the one its plans
// are costed on:
//   - torchtitan: stack=torchtitan-0.2 with compile=on. torchtitan compiles
//     nothing by default (0.2.2 job_config.py Compile.enable False; 0.3's
//     CompileConfig alike), but its published Llama 3.1 runs are compiled
//     but for one row (docs/stacks.md) and a compiled plan is faster
//     (Llama 3 8B's quick-start plan 5.92 s against 7.25 s eager): the
//     export writes compile on (0.2: [compile] enable = true; 0.3:
//     compile.enable). For 0.3 too: placer has no torchtitan 0.3 stack of
//     its own; compiled, a dense layer is the same fused kernels, and
//     0.3's FSDP2 keeps BF16 parameters as 0.2's did
//     (ParallelismConfig.mixed_precision_param "bfloat16").
//   - megatron: placer's default stack (Megatron-Core with Transformer
//     Engine's fused kernels), what the cluster-scale model is checked
//     against (placer report megatron).
//   - deepspeed: placer's default stack too; the model is the user's code
//     (the export writes DeepSpeed's configuration, and DeepSpeed-MoE's
//     layers with experts), which placer does not see.
func FrameworkSoftware(format string) plan.Software {
	if format == "torchtitan" {
		return plan.Software{Stack: titanStack, Compile: plan.On}
	}
	return plan.Software{}
}

// RunsOn reports whether a plan of software sw is costed on a stack
// framework format's file runs: torchtitan's (stack=torchtitan-*, compiled
// or not as written) for torchtitan; placer's default or a Megatron stack
// (megatron-core-*, megatron-bridge-*, model-zoo-moe-dev), compile not
// written, for megatron; placer's default, no stack or compile written,
// for deepspeed. Any other format (torch-plan, any) takes every stack.
func RunsOn(format string, sw plan.Software) bool {
	switch format {
	case "torchtitan":
		return sw.Framework() == plan.FrameworkTorchTitan
	case "megatron", "megatron-bridge":
		return sw.Framework() == plan.FrameworkMegatron && sw.Compile == plan.Unset
	case "deepspeed":
		return sw.Stack == "" && sw.Compile == plan.Unset
	}
	return true
}

// ForSoftware is the software a search for framework format (--for)
// costs its plans on, given what --strategy wrote: written's own stack
// where it names one that framework runs, else the framework's
// (FrameworkSoftware), with the keys written beside it kept (compile=off
// for torchtitan: its eager stack). A stack or compile setting the
// framework does not run is a one-line error.
func ForSoftware(format string, written plan.Software) (plan.Software, error) {
	if format == "" || format == "any" {
		return written, nil
	}
	sw := written
	if sw.Stack == "" {
		fw := FrameworkSoftware(format)
		sw.Stack = fw.Stack
		if sw.Compile == plan.Unset {
			sw.Compile = fw.Compile
		}
	}
	if !RunsOn(format, sw) {
		return written, fmt.Errorf("--for %s: %s: %s; --for any searches on any stack", format, stackKeys(written), frameworkStackLine(format))
	}
	return sw, nil
}

// AsRunOn is plan software sw as framework format's file runs it: sw
// itself where the framework runs it (RunsOn), else the framework's stack
// and compile setting (FrameworkSoftware) with sw's other keys kept.
// converted says it changed.
func AsRunOn(format string, sw plan.Software) (out plan.Software, converted bool) {
	if RunsOn(format, sw) {
		return sw, false
	}
	fw := FrameworkSoftware(format)
	sw.Stack, sw.Compile = fw.Stack, fw.Compile
	return sw, true
}

// stackKeys is sw's stack and compile keys as written.
func stackKeys(sw plan.Software) string {
	var keys []string
	if sw.Stack != "" {
		keys = append(keys, "stack="+sw.Stack)
	}
	switch sw.Compile {
	case plan.On:
		keys = append(keys, "compile=on")
	case plan.Off:
		keys = append(keys, "compile=off")
	}
	if len(keys) == 0 {
		return "placer's default stack"
	}
	return strings.Join(keys, ",")
}

// frameworkStackLine says which stacks framework format runs.
func frameworkStackLine(format string) string {
	switch format {
	case "torchtitan":
		return "torchtitan's file runs stack=torchtitan-0.2 (compiled; eager with compile=off), no other framework's stack"
	case "megatron", "megatron-bridge":
		who := map[string]string{"megatron": "Megatron-LM", "megatron-bridge": "Megatron-Bridge"}[format]
		return who + "'s file runs placer's default stack or stack=megatron-core-0.16, megatron-bridge-*, model-zoo-moe-dev, with no compile= (its layers are Transformer Engine's)"
	case "deepspeed":
		return "DeepSpeed's file is costed on placer's default stack: no stack= or compile="
	}
	return format
}
