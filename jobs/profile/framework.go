package profile

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/internal/torchenv"
)

// Frameworks is what --framework takes: whose layer placer profile
// --workload times in place of placer_torch.profile.layers' own
// (placer_torch/profile/frameworks.py; "" is the project's own).
var Frameworks = []string{"hf", "torchtitan", "megatron"}

// checkFramework refuses a --framework placer does not know, and what
// the named framework's layer does not build (frameworks.py), each in
// one line naming the flag; it fills in the defaults the framework
// takes: tensor and expert degree 1 for hf (transformers' tensor
// parallelism shards a whole pretrained model, not a layer), expert
// degree 1 for megatron (mcore.py builds its experts on one rank), no
// selective recomputation (no framework's layer here checkpoints its
// attention core alone).
func checkFramework(m transformer.Spec, o *Options) error {
	fw := o.Framework
	switch {
	case fw == "":
		return nil
	case !slices.Contains(Frameworks, fw):
		return fail.Usagef("--framework %q: want hf, torchtitan or megatron (left out: placer's own layer)", fw)
	case len(o.FP8) > 0:
		return fail.Usagef("--framework %s with --fp8: not profiled (placer_torch/profile/fp8.py converts placer's own layer's linears)", fw)
	case slices.Contains(o.Recompute, "selective"):
		return fail.Usagef("--framework %s --recompute selective: not profiled (its layer checkpoints whole, not its attention core alone)", fw)
	}
	if why := frameworkBuilds(m, fw); why != "" {
		return fail.Usagef("--framework %s: %s: %s", fw, m, why)
	}
	if o.Recompute == nil {
		o.Recompute = []string{"none", "full"}
	}
	if fw == "torchtitan" {
		return nil
	}
	for _, l := range []struct {
		flag string
		v    *[]int
	}{{"--tp", &o.TP}, {"--ep", &o.EP}, {"--etp", &o.ETP}} {
		if fw == "megatron" && l.flag == "--tp" {
			continue // Megatron-Core's linears over the tensor group
		}
		if *l.v == nil {
			if l.flag != "--tp" && !m.MoE() {
				continue // checkProfileOptions refuses --ep and --etp without experts
			}
			*l.v = []int{1}
			continue
		}
		for _, x := range *l.v {
			switch {
			case x != 1 && fw == "megatron":
				return fail.Usagef("--framework megatron %s %d: Megatron-Core's MoE layer is timed at expert degree 1 only (its experts over expert groups are not built)", l.flag, x)
			case x != 1:
				return fail.Usagef("--framework hf %s %d: transformers' layer is timed at degree 1 only (its tensor parallelism, from_pretrained's tp_plan, shards a whole model, not one layer)", l.flag, x)
			}
		}
	}
	return nil
}

// frameworkBuilds is "" where frameworks.py builds m's layer as fw runs
// it, else what it does not build: transformers' LlamaDecoderLayer,
// Qwen3DecoderLayer (QK norm), MixtralDecoderLayer and
// Qwen3MoeDecoderLayer (experts, softmax routing, no shared experts);
// torchtitan 0.2.2's Llama 3 TransformerBlock (no experts, QK norm, or
// head width other than hidden over heads).
func frameworkBuilds(m transformer.Spec, fw string) string {
	c := m.Config
	switch {
	case m.MLA():
		return "latent attention is not built (frameworks.py builds Llama-style attention)"
	case m.Act != "" || m.NormsPerBlock() != 2 || m.Chunk > 0:
		return "Gemma's GeGLU and post-norms, Nemotron's squared ReLU and Llama 4's chunked attention are not built"
	case m.Window > 0:
		return "sliding windows are not built"
	case c.QKVBias || c.LinearBias:
		return "biases are not built"
	case fw == "torchtitan" && m.MoE():
		return "experts are not built (torchtitan's Llama 3 TransformerBlock has none)"
	case fw == "torchtitan" && c.QKNorm:
		return "QK norm is not built (torchtitan's Llama 3 TransformerBlock has none)"
	case fw == "torchtitan" && m.Head > 0 && m.Head*m.Heads != m.Hidden:
		return "a head width other than hidden/heads is not built (torchtitan's Llama 3 attention takes dim // n_heads)"
	case m.MoE() && (m.SharedExperts > 0 || m.DenseLayers > 0):
		return "shared experts and dense layers before the experts are not built (Mixtral's and Qwen3-MoE's layers have none)"
	case m.MoE() && (c.RouterScore == "sigmoid" || c.RouterGroups > 0 || c.ExpertBias):
		return "sigmoid, group-limited or biased routing is not built (Mixtral's and Qwen3-MoE's routers are softmax top-k)"
	}
	return ""
}

// frameworkFolders is, for a framework installed beside the virtualenv,
// the variable naming its folder and the folder's default name.
var frameworkFolders = map[string][2]string{"torchtitan": {"PLACER_FRAMEWORKS", "frameworks"}, "megatron": {"PLACER_MEGATRON", "megatron"}}

// frameworkPath is the folder to put on PYTHONPATH for fw's package
// where it is not in the virtualenv: torchtitan's, which make
// venv-frameworks installs with pip --target ($PLACER_FRAMEWORKS, else
// ${XDG_CACHE_HOME:-~/.cache}/placer/frameworks beside the
// virtualenv); megatron-core's, which make venv-megatron installs the
// same way ($PLACER_MEGATRON, else .../placer/megatron); "" for
// others, or where the folder is not there.
func frameworkPath(fw string) string {
	where, ok := frameworkFolders[fw]
	if !ok {
		return ""
	}
	env, folder := where[0], where[1]
	dir := os.Getenv(env)
	if v := torchenv.DefaultVenv(); dir == "" && v != "" {
		dir = filepath.Join(filepath.Dir(v), folder)
	}
	if dir == "" {
		return ""
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}
