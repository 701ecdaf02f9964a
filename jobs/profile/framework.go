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

// megatronRefusal is why --framework megatron is refused: megatron-core
// 0.16.1's layer with its local spec (no Transformer Engine) allocates
// its attention's scores on CUDA whatever the tensors' device
// (megatron/core/utils.py, GlobalMemoryBuffer.get_tensor:
// device=torch.cuda.current_device(), called by
// transformer/dot_product_attention.py's forward; so do
// rotary_pos_embedding.py's RotaryEmbedding.get_emb), so it cannot run
// on a CPU; its GPU path (Transformer Engine's spec) is not built: no
// GPU was lent to test it.
const megatronRefusal = "--framework megatron: not profiled: megatron-core 0.16.1's layer allocates its attention's buffer on CUDA (megatron/core/utils.py GlobalMemoryBuffer.get_tensor), so it cannot run on a CPU, and its GPU path (Transformer Engine's spec) is not built yet; hf and torchtitan run here"

// checkFramework refuses a --framework placer does not know, and what
// the named framework's layer does not build (frameworks.py), each in
// one line naming the flag; it fills in the defaults the framework
// takes: tensor and expert degree 1 for hf (transformers' tensor
// parallelism shards a whole pretrained model, not a layer), no
// selective recomputation (neither framework's layer checkpoints its
// attention core alone).
func checkFramework(m transformer.Spec, o *Options) error {
	fw := o.Framework
	switch {
	case fw == "":
		return nil
	case !slices.Contains(Frameworks, fw):
		return fail.Usagef("--framework %q: want hf, torchtitan or megatron (left out: placer's own layer)", fw)
	case fw == "megatron":
		return fail.Usagef("%s", megatronRefusal)
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
	if fw != "hf" {
		return nil
	}
	for _, l := range []struct {
		flag string
		v    *[]int
	}{{"--tp", &o.TP}, {"--ep", &o.EP}, {"--etp", &o.ETP}} {
		if *l.v == nil {
			if l.flag != "--tp" && !m.MoE() {
				continue // checkProfileOptions refuses --ep and --etp without experts
			}
			*l.v = []int{1}
			continue
		}
		for _, x := range *l.v {
			if x != 1 {
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

// frameworkPath is the folder to put on PYTHONPATH for fw's package
// where it is not in the virtualenv: torchtitan's, which make
// venv-frameworks installs with pip --target ($PLACER_FRAMEWORKS, else
// ${XDG_CACHE_HOME:-~/.cache}/placer/frameworks beside the
// virtualenv); "" for others, or where the folder is not there.
func frameworkPath(fw string) string {
	if fw != "torchtitan" {
		return ""
	}
	dir := os.Getenv("PLACER_FRAMEWORKS")
	if v := torchenv.DefaultVenv(); dir == "" && v != "" {
		dir = filepath.Join(filepath.Dir(v), "frameworks")
	}
	if dir == "" {
		return ""
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}
