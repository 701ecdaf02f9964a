"""Hugging Face config.json files as transformers itself writes them.

For every model type placer reads (graph/transformer's HFModelTypes),
builds transformers' own config class at small sizes (no weights, no
download: a config only) and writes it with ``save_pretrained``, the
call a user's checkpoint comes from; then, with ``--placer BIN``, has
placer read each one (``placer eval --workload hf:DIR/config.json:...
--json``) and checks the model it read against the sizes given.

    python tools/measure/hfconfigs/hfconfigs.py --out DIR [--placer bin/placer]
    python tools/measure/hfconfigs/hfconfigs.py --testdata graph/transformer/testdata/hf5

``--testdata`` writes the files the Go tests read (TestHFTransformers5),
one ``<family>.json`` each, as save_pretrained wrote them. Runs in the
virtualenv of make venv-test (transformers pinned there, PY_TEST_PINS).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

# Each family: transformers' config class, its small sizes, and what
# placer's model string must then hold (its keys as Spec.String writes
# them). The sizes are consistent (heads divide the width, the
# patterns' lengths are the layers) so that the file is a model.
DENSE = dict(num_hidden_layers=4, hidden_size=256, intermediate_size=512, num_attention_heads=4,
             num_key_value_heads=2, vocab_size=1024)
DENSE_KEYS = ["layers=4", "hidden=256", "heads=4", "kv_heads=2", "ffn=512", "vocab=1024"]

FAMILIES = {
    "llama": ("LlamaConfig", dict(DENSE, rope_theta=500000.0), DENSE_KEYS),
    "mistral": ("MistralConfig", dict(DENSE, sliding_window=128), DENSE_KEYS + ["window=128"]),
    "mixtral": ("MixtralConfig", dict(DENSE, num_local_experts=4, num_experts_per_tok=2, sliding_window=None),
                DENSE_KEYS + ["experts=4", "topk=2", "expert_ffn=512"]),
    "qwen2": ("Qwen2Config", dict(DENSE), DENSE_KEYS),
    "qwen3": ("Qwen3Config", dict(DENSE, head_dim=64), DENSE_KEYS),
    "qwen2_moe": ("Qwen2MoeConfig", dict(DENSE, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=128,
                                         shared_expert_intermediate_size=256),
                  DENSE_KEYS + ["experts=8", "topk=2", "expert_ffn=128", "shared=2"]),
    "qwen3_moe": ("Qwen3MoeConfig", dict(DENSE, head_dim=64, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=128),
                  DENSE_KEYS + ["experts=8", "topk=2", "expert_ffn=128"]),
    "deepseek_v2": ("DeepseekV2Config", dict(DENSE, num_key_value_heads=4, n_routed_experts=8, n_shared_experts=1,
                                             num_experts_per_tok=2, moe_intermediate_size=128, first_k_dense_replace=1,
                                             kv_lora_rank=64, q_lora_rank=96, qk_rope_head_dim=16, qk_nope_head_dim=32,
                                             v_head_dim=32),
                    ["layers=4", "hidden=256", "heads=4", "ffn=512", "vocab=1024", "experts=8", "topk=2", "expert_ffn=128",
                     "shared=1", "dense_layers=1", "kv_lora=64", "q_lora=96"]),
    "deepseek_v3": ("DeepseekV3Config", dict(DENSE, num_key_value_heads=4, n_routed_experts=8, n_shared_experts=1,
                                             num_experts_per_tok=2, moe_intermediate_size=128, first_k_dense_replace=1,
                                             kv_lora_rank=64, q_lora_rank=96, qk_rope_head_dim=16, qk_nope_head_dim=32,
                                             v_head_dim=32, n_group=2, topk_group=1, num_nextn_predict_layers=1),
                    ["layers=4", "hidden=256", "heads=4", "ffn=512", "vocab=1024", "experts=8", "topk=2", "expert_ffn=128",
                     "shared=1", "dense_layers=1", "kv_lora=64", "q_lora=96", "mtp=1"]),
    "gpt_oss": ("GptOssConfig", dict(DENSE, head_dim=64, intermediate_size=256, num_local_experts=4, num_experts_per_tok=2,
                                     sliding_window=128),
                ["layers=4", "hidden=256", "heads=4", "kv_heads=2", "vocab=1024", "experts=4", "topk=2", "expert_ffn=256",
                 "window=128"]),
    "gemma3_text": ("Gemma3TextConfig", dict(DENSE, num_hidden_layers=6, head_dim=64, sliding_window=128),
                    ["layers=6", "hidden=256", "heads=4", "kv_heads=2", "ffn=512", "vocab=1024", "act=geglu", "window=128",
                     "global_every=6"]),
    "gemma3": ("Gemma3Config", dict(text_config=dict(DENSE, num_hidden_layers=6, head_dim=64, sliding_window=128),
                                    vision_config=dict(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                                       num_attention_heads=2, image_size=28, patch_size=14),
                                    mm_tokens_per_image=4),
               ["layers=6", "hidden=256", "heads=4", "kv_heads=2", "ffn=512", "vocab=1024", "act=geglu", "window=128",
                "global_every=6"]),
    "nemotron": ("NemotronConfig", dict(DENSE), DENSE_KEYS + ["act=relu2"]),
    "glm4_moe": ("Glm4MoeConfig", dict(DENSE, head_dim=64, n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2,
                                       moe_intermediate_size=128, first_k_dense_replace=1, num_nextn_predict_layers=1),
                 ["layers=4", "hidden=256", "heads=4", "kv_heads=2", "ffn=512", "vocab=1024", "experts=8", "topk=2",
                  "expert_ffn=128", "shared=1", "dense_layers=1", "mtp=1"]),
    "llama4_text": ("Llama4TextConfig", dict(DENSE, intermediate_size_mlp=512, num_local_experts=4, num_experts_per_tok=1,
                                             interleave_moe_layer_step=1, attention_chunk_size=128),
                    ["layers=4", "hidden=256", "heads=4", "kv_heads=2", "vocab=1024", "experts=4", "topk=1", "expert_ffn=512",
                     "shared=1", "global_every=4", "chunk=128"]),
    "llama4": ("Llama4Config", dict(text_config=dict(DENSE, intermediate_size_mlp=512, num_local_experts=4,
                                                     num_experts_per_tok=1, interleave_moe_layer_step=1,
                                                     attention_chunk_size=128),
                                    vision_config=dict(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                                       num_attention_heads=2, image_size=28, patch_size=14,
                                                       vision_output_dim=64, projector_input_dim=64,
                                                       projector_output_dim=64)),
               ["layers=4", "hidden=256", "heads=4", "kv_heads=2", "vocab=1024", "experts=4", "topk=1", "expert_ffn=512",
                "shared=1", "global_every=4", "chunk=128"]),
    "qwen3_next": ("Qwen3NextConfig", dict(DENSE, head_dim=64, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=128,
                                           shared_expert_intermediate_size=128, linear_num_key_heads=2,
                                           linear_num_value_heads=4, linear_key_head_dim=32, linear_value_head_dim=32,
                                           linear_conv_kernel_dim=4),
                   ["layers=4", "hidden=256", "heads=4", "kv_heads=2", "vocab=1024", "experts=8", "topk=2", "expert_ffn=128",
                    "shared=1", "mixers=GGG*"]),
    # transformers 5 writes NemotronH's layers as layers_block_type (its
    # hybrid_override_pattern and num_hidden_layers derived, not written),
    # and time_step_limit's upper end, Infinity, as {"__float__": "Infinity"}.
    "nemotron_h": ("NemotronHConfig", dict(hidden_size=256, intermediate_size=512, num_attention_heads=4, num_key_value_heads=2,
                                           head_dim=64, vocab_size=1024, mamba_num_heads=8, mamba_head_dim=32, ssm_state_size=16,
                                           n_groups=2, conv_kernel=4, chunk_size=64,
                                           layers_block_type=["linear_attention", "mlp", "full_attention", "mlp"]),
                   ["layers=4", "hidden=256", "heads=4", "kv_heads=2", "ffn=512", "vocab=1024", "act=relu2", "pattern=M-*-"]),
}

# What a user's file carries besides the model: a classifier's labels,
# the attention kernel the model was loaded with, the outputs asked of
# it, its dtype and token ids (PreTrainedConfig's own fields), written
# by save_pretrained on one family's file ("llama-bookkeeping").
BOOKKEEPING = dict(id2label={0: "A", 1: "B", 2: "C"}, return_dict=False, output_hidden_states=True, dtype="bfloat16",
                   pad_token_id=0, bos_token_id=1, eos_token_id=2, architectures=["LlamaForCausalLM"],
                   problem_type="single_label_classification", attn_implementation="sdpa")


def build(family):
    """The config of family at its small sizes, transformers' own class."""
    import transformers

    cls, kwargs, _ = FAMILIES[family.split("-")[0]]
    kwargs = dict(kwargs)
    if family.endswith("-bookkeeping"):
        kwargs.update(BOOKKEEPING)
    return getattr(transformers, cls)(**kwargs)


def families():
    return list(FAMILIES) + ["llama-bookkeeping"]


def expected(family):
    return FAMILIES[family.split("-")[0]][2]


def save_all(out):
    """save_pretrained of every family into out/<family>/config.json."""
    paths = {}
    for f in families():
        d = os.path.join(out, f)
        build(f).save_pretrained(d)
        paths[f] = os.path.join(d, "config.json")
    return paths


def read_with_placer(placer, path):
    """placer's reading of path: (the model string, None) or (None, its error)."""
    p = subprocess.run([placer, "eval", "--workload", "hf:" + path + ":seq=256,batch=8", "--gpus", "8", "--json"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None, (p.stderr.strip() or p.stdout.strip())
    return json.loads(p.stdout)["model"], None


def check(placer, paths):
    """Every family's file read by placer as the model it was built as;
    the failures, one line each."""
    bad = []
    for f, path in paths.items():
        model, err = read_with_placer(placer, path)
        if err:
            bad.append(f"{f}: placer refused transformers' own file: {err}")
            continue
        keys = set(model.split(":", 1)[-1].split(","))
        missing = [k for k in expected(f) if k not in keys]
        if missing:
            bad.append(f"{f}: placer read {model}, without {', '.join(missing)}")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="folder to write each family's config.json into (default: a temporary one)")
    ap.add_argument("--placer", help="placer binary: check that it reads each file as the model built")
    ap.add_argument("--testdata", help="write <family>.json files into this folder (graph/transformer/testdata/hf5)")
    a = ap.parse_args(argv)
    import transformers

    tmp = None
    out = a.out
    if out is None:
        tmp = out = tempfile.mkdtemp(prefix="hfconfigs-")
    try:
        paths = save_all(out)
        if a.testdata:
            os.makedirs(a.testdata, exist_ok=True)
            for f, p in paths.items():
                shutil.copyfile(p, os.path.join(a.testdata, f + ".json"))
            print(f"wrote {len(paths)} config.json files of transformers {transformers.__version__} to {a.testdata}")
        if a.placer:
            bad = check(a.placer, paths)
            for line in bad:
                print(line, file=sys.stderr)
            print(f"placer read {len(paths) - len(bad)} of {len(paths)} files transformers {transformers.__version__} wrote")
            return 1 if bad else 0
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
