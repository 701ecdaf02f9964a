"""placer's `--to megatron-bridge` exports read by Megatron-Bridge
0.5.0's own override machinery and configuration classes (make
test-bridge; bridge_check.py says what of Bridge runs and what not).

bin/placer exports each plan below; bridge_check applies the export's
overrides to a ConfigContainer with Bridge's process_config_with_overrides
(every key must be one of the container's, every value must land as
written), resolves the mixed-precision recipe named, and runs
GPTModelProvider.finalize() (Megatron-Core 0.18.0's TransformerConfig
checks); the resulting config is then held against the plan: the
degrees, batch, recomputation, FP8 recipe, experts' stack, LoRA and
packing as Bridge holds them.

PLACER names the binary (default: bin/placer of this checkout);
PLACER_BRIDGE the folder Bridge is installed in (make venv-bridge);
without it the tests are skipped, saying so.
"""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PLACER = os.environ.get("PLACER") or os.path.join(ROOT, "bin", "placer")
BRIDGE = os.environ.get("PLACER_BRIDGE", "")
HF = os.path.join(ROOT, "graph", "transformer", "testdata", "hf")
LLAMA = "hf:" + os.path.join(HF, "llama3-8b.json") + ":seq=8192,batch=256"
MIXTRAL = "hf:" + os.path.join(HF, "mixtral-8x7b.json") + ":seq=4096,batch=256"
QWEN3 = "hf:" + os.path.join(HF, "qwen3-8b.json") + ":seq=4096,batch=128"
QWEN3_MOE = "hf:" + os.path.join(HF, "qwen3-30b-a3b.json") + ":seq=2048,batch=32"
GPT_OSS_20B = "hf:" + os.path.join(HF, "gpt-oss-20b.json") + ":seq=2048,batch=128"
NEMOTRON_H_DEFAULTS = "hf:" + os.path.join(HF + "5", "nemotron_h-defaults.json") + ":seq=4096,batch=64"

# name -> (workload, GPUs, strategy, what Bridge must hold: dotted field
# -> value, read from the config after the overrides).
PLANS = {
    "pre-training, cp and distopt": (LLAMA, 32, "tp=1,cp=2,pp=1,dp=16,mbs=1,distopt=on",
                                     {"model.context_parallel_size": 2, "ddp.use_distributed_optimizer": True, "train.global_batch_size": 256}),
    "cp, all-gather exchange": (LLAMA, 32, "tp=2,cp=2,pp=1,dp=8,mbs=1,cp-comm-type=all_gather,distopt=on",
                                {"model.context_parallel_size": 2, "model.cp_comm_type": "all_gather"}),
    "cp, a2a exchange": (LLAMA, 32, "tp=2,cp=2,pp=1,dp=8,mbs=1,cp-comm-type=a2a,distopt=on",
                         {"model.context_parallel_size": 2, "model.cp_comm_type": "a2a"}),
    "interleaved, uneven ends": (LLAMA, 64, "tp=4,pp=4,vp=2,dp=4,mbs=1,sp=on,tpoverlap=on,first=6,last=6,distopt=on",
                                 {"model.virtual_pipeline_model_parallel_size": 2, "model.num_layers_in_first_pipeline_stage": 6,
                                  "model.tp_comm_overlap": True, "model.sequence_parallel": True}),
    "embedding and loss as layers": (LLAMA, 32, "tp=2,pp=2,dp=8,mbs=1,embedding-layer=on,loss-layer=on,distopt=on",
                                     {"model.account_for_embedding_in_pipeline_split": True, "model.account_for_loss_in_pipeline_split": True}),
    "selective modules, fp8 current": (LLAMA, 32, "tp=2,pp=1,dp=16,mbs=1,recompute=selective,recompute-modules=core_attn+mlp,fp8=current,distopt=on",
                                       {"model.recompute_modules": ["core_attn", "mlp"], "mixed_precision": "bf16_with_fp8_current_scaling_mixed", "@fp8_recipe": "tensorwise"}),
    "full block recompute, mxfp8": (LLAMA, "dgx-b200:4", "tp=4,pp=2,dp=4,mbs=1,recompute=full,recompute-layers=2,fp8=mxfp8,distopt=on",
                                    {"model.recompute_method": "block", "model.recompute_num_layers": 2, "@fp8_recipe": "mxfp8"}),
    "blockwise": (LLAMA, 16, "tp=2,pp=1,dp=8,mbs=2,fp8=blockwise,distopt=on", {"@fp8_recipe": "blockwise"}),
    "nvfp4": (LLAMA, "dgx-b200:2", "tp=2,pp=1,dp=8,mbs=2,fp4=nvfp4,distopt=on", {"@fp4_recipe": "nvfp4"}),
    # fp8-output-proj=on: Megatron-Core 0.18.0's fp8_output_proj, which its
    # __post_init__ accepts with fp8_recipe 'mxfp8' only.
    "mxfp8 output layer": (LLAMA, "dgx-b200:2", "tp=2,pp=1,dp=8,mbs=2,fp8=mxfp8,fp8-output-proj=on,distopt=on",
                           {"model.fp8_output_proj": True, "@fp8_recipe": "mxfp8"}),
    "delayed": (LLAMA, 16, "tp=2,pp=1,dp=8,mbs=2,fp8=delayed,distopt=on", {"@fp8_recipe": "delayed"}),
    "megatron-fsdp": (LLAMA, 32, "tp=1,pp=1,dp=32,mbs=1,fsdp=on", {"ddp.use_megatron_fsdp": True, "ddp.data_parallel_sharding_strategy": "optim_grads_params"}),
    "cuda graphs": (LLAMA, 16, "tp=2,pp=1,dp=8,mbs=2,cuda-graphs=dense,distopt=on", {"model.cuda_graph_impl": "transformer_engine", "model.cuda_graph_modules": ["attn", "mlp"]}),
    "experts, flex, a2a overlap": (MIXTRAL, 64, "tp=2,pp=2,vp=4,dp=16,ep=8,etp=1,mbs=1,sp=on,distopt=on,epoverlap=on,dispatcher=flex",
                                   {"model.expert_model_parallel_size": 8, "model.expert_tensor_parallel_size": 1, "model.moe_token_dispatcher_type": "flex",
                                    "model.moe_flex_dispatcher_backend": "deepep", "model.overlap_moe_expert_parallel_comm": True,
                                    "dist.enable_megatron_core_experimental": True}),
    "experts, hybridep": (MIXTRAL, 64, "tp=2,pp=2,dp=16,ep=8,etp=1,mbs=1,sp=on,distopt=on,dispatcher=hybridep",
                          {"model.moe_token_dispatcher_type": "flex", "model.moe_flex_dispatcher_backend": "hybridep"}),
    # HybridEP's static budget and the whole layer graphed over the
    # dropless experts (planner/plan/rankcapacity.go): Megatron-Core
    # 0.18.0 asks the op fuser beside the budget, and refuses the attn and
    # moe scopes without a capacity factor.
    "experts, hybridep budget, graphed": (MIXTRAL, 64, "tp=2,pp=2,dp=16,ep=8,etp=1,mbs=1,sp=on,distopt=on,dispatcher=hybridep,rank-capacity=1.25,cuda-graphs=full",
                                          {"model.moe_expert_rank_capacity_factor": 1.25, "model.use_transformer_engine_op_fuser": True,
                                           "model.cuda_graph_impl": "transformer_engine", "model.cuda_graph_modules": []}),
    "lora": (LLAMA, 8, "tp=1,pp=1,dp=8,mbs=1,peft=lora,lora-rank=8,lora-alpha=16,lora-targets=qkv+proj,distopt=on",
             {"peft.dim": 8, "peft.alpha": 16, "peft.target_modules": ["linear_qkv", "linear_proj"], "dataset.packed_sequence_specs": None}),
    "lora, packed": (QWEN3, 8, "tp=2,pp=1,dp=4,mbs=1,peft=lora,pack=on,pack-len=1024:2048,distopt=on",
                     {"peft.dim": 16, "peft.alpha": 32, "dataset.packed_sequence_specs.packed_sequence_size": 4096}),
    # The memory-recipe keys (planner/plan recipe.go): fp8-params is
    # the FP8 recipe's own fp8_param_gather, the others the model's fields.
    # (fp8-activation=on: test_fp8_activation_store, on a SwiGLU model.)
    "memory recipe, fp8": (LLAMA, 16, "tp=2,pp=1,dp=8,mbs=1,sp=on,fp8=delayed,fp8-params=on,fp8-transpose-cache=off,hidden-dropout=0,distopt=on",
                           {"@fp8_param_gather": True, "model.fp8_param": True,
                            "model.disable_parameter_transpose_cache": True, "model.hidden_dropout": 0.0}),
    "cpu offload": (LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,offload-layers=2,distopt=on",
                    {"model.cpu_offloading": True, "model.cpu_offloading_num_layers": 2}),
    "graph pool": (LLAMA, 16, "tp=2,pp=1,dp=8,mbs=2,cuda-graphs=dense,graph-pool=layers,distopt=on", {"model.cuda_graph_impl": "transformer_engine"}),
    # LoRA on experts: Qwen3-30B-A3B's recipe (the experts frozen, not
    # adapted) and GPT-OSS 20B's (Bridge's default targets: the experts'
    # shared adapters, the layout placer prices, written explicitly).
    "lora, experts frozen": (QWEN3_MOE, 8, "tp=4,pp=1,dp=2,ep=4,etp=1,mbs=1,sp=on,peft=lora,lora-rank=8,lora-alpha=16,lora-targets=qkv+proj,distopt=on",
                             {"peft.dim": 8, "peft.alpha": 16, "peft.target_modules": ["linear_qkv", "linear_proj"],
                              "model.expert_model_parallel_size": 4, "peft.share_expert_adapters": True}),
    "lora, experts adapted": (GPT_OSS_20B, 8, "tp=1,pp=1,dp=8,ep=8,mbs=1,peft=lora,distopt=on",
                              {"peft.dim": 16, "peft.target_modules": ["linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"],
                               "peft.share_expert_adapters": True, "peft.normalize_moe_lora": False, "model.num_moe_experts": 32}),
    "lora dropout": (LLAMA, 8, "tp=1,pp=1,dp=8,mbs=1,peft=lora,lora-rank=8,lora-dropout=0.1,distopt=on", {"peft.dropout": 0.1, "peft.dropout_position": "pre"}),
    "full fine-tuning, packed": (QWEN3, 16, "tp=2,pp=2,dp=4,mbs=1,pack=on,pack-len=512,distopt=on", {"dataset.packed_sequence_specs.packed_sequence_size": 4096, "peft": None}),
}

bc = None


def setUpModule():
    global bc
    if not BRIDGE:
        raise unittest.SkipTest("PLACER_BRIDGE is not set (make test-bridge sets it)")
    import bridge_check

    bc = bridge_check
    bc.load(BRIDGE)


def tearDownModule():
    # What finalize() ran without (bridge_check.TE_ONLY), said so.
    if bc and bc.FINALIZED_WITHOUT:
        print(f"\nfinalize() ran with {', '.join(sorted(bc.FINALIZED_WITHOUT))} off on a copy (Transformer Engine is absent)", file=sys.stderr)


def export(workload, gpus, strategy):
    """placer's export of the plan on gpus H100s (a number) or a
    cluster (dgx-b200:N: Blackwell's MXFP8 and NVFP4)."""
    where = ["--gpus", str(gpus)] if isinstance(gpus, int) else ["--cluster", gpus]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "plan.sh")
        r = subprocess.run([PLACER, "export", "--allow-over", "--workload", workload, *where, "--strategy", strategy,
                            "--to", "megatron-bridge", "-o", out], capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"placer export {strategy}: {r.stderr.strip()}")
        with open(out) as f:
            return f.read()


class BridgeReadsExports(unittest.TestCase):
    def test_plans(self):
        b = bc.load(BRIDGE)
        for name, (workload, gpus, strategy, want) in PLANS.items():
            with self.subTest(name):
                kind, overrides = bc.read_export(export(workload, gpus, strategy))
                cfg, recipe = bc.check(b, kind, overrides)
                for k, v in want.items():
                    got = getattr(recipe, k[1:]) if k.startswith("@") else bc.field(cfg, k)
                    if isinstance(got, (list, tuple)):
                        got = [getattr(x, "name", x) for x in got]
                    self.assertEqual(got, v, f"{name}: {k}")
                # Every recipe placer names reduces gradients in FP32
                # (why grads=bf16 is refused).
                self.assertTrue(recipe.grad_reduce_in_fp32)

    def test_fp8_activation_store(self):
        # fp8-activation=on's model.activation_func_fp8_input_store:
        # Megatron-Core stores the activation's input in FP8 for SwiGLU
        # only ("Storing activation input in FP8 is supported only for
        # SwiGLU"), which the llama family's provider holds (Bridge 0.5.0
        # models/llama/llama_bridge.py: gated_linear_unit True, silu) and
        # no override writes; without it Bridge refuses.
        import torch.nn.functional as F

        b = bc.load(BRIDGE)
        kind, overrides = bc.read_export(export(LLAMA, 16, "tp=2,pp=1,dp=8,mbs=1,sp=on,fp8=delayed,fp8-params=on,fp8-activation=on,distopt=on"))
        self.assertIn("model.activation_func_fp8_input_store=true", overrides)
        cfg, recipe = bc.check(b, kind, overrides, model={"gated_linear_unit": True, "activation_func": F.silu})
        self.assertTrue(cfg.model.activation_func_fp8_input_store)
        with self.assertRaisesRegex(ValueError, "only for SwiGLU"):
            bc.check(b, kind, overrides)

    def test_hybrid_experts(self):
        # A Nemotron-H with a block of experts (transformers 5.24.0's
        # NemotronHConfig() file, pattern ME*-): the export names Bridge
        # 0.5.0's recipe with experts (recipes/nemotronh/nemotron_3_nano.py,
        # its functions read from the file: its module imports what this
        # machine lacks) and its overrides land on MambaModelProvider,
        # whose finalize() counts the layers from the pattern.
        import re

        b = bc.load(BRIDGE)
        with open(os.path.join(BRIDGE, "megatron", "bridge", "recipes", "nemotronh", "nemotron_3_nano.py")) as f:
            recipes = set(re.findall(r"^def (nemotron_3_nano_\w+_config)\(", f.read(), re.M))
        for strategy, ep, T in [("tp=1,pp=1,dp=8,ep=8,mbs=1", 8, 1), ("tp=2,pp=2,dp=2,ep=2,mbs=1,sp=on", 2, 2)]:
            with self.subTest(strategy):
                text = export(NEMOTRON_H_DEFAULTS, 8, strategy)
                recipe = re.search(r"--recipe (\w+)", text).group(1)
                self.assertEqual(recipe, "nemotron_3_nano_pretrain_config")
                self.assertIn(recipe, recipes)
                kind, overrides = bc.read_export(text)
                cfg, _ = bc.check(b, kind, overrides, provider=b.MambaModelProvider)
                m = cfg.model
                got = (m.hybrid_layer_pattern, m.num_layers, m.num_moe_experts, m.moe_router_topk, m.moe_ffn_hidden_size,
                       m.moe_shared_expert_intermediate_size, m.mamba_num_heads, m.mamba_head_dim, m.mamba_state_dim,
                       m.mamba_num_groups, m.moe_router_score_function, m.moe_router_enable_expert_bias,
                       m.expert_model_parallel_size, m.tensor_model_parallel_size)
                self.assertEqual(got, ("ME*-", 4, 8, 2, 7688, 7688, 128, 64, 128, 8, "sigmoid", True, ep, T))

    def test_refused(self):
        # What Bridge has no key for is refused by placer in one line.
        for strategy, words in [("tp=1,pp=1,dp=8,mbs=1,grads=bf16,distopt=on", "grads=bf16"),
                                ("tp=1,pp=1,dp=8,mbs=1,fp8=rowwise,distopt=on", "fp8=rowwise"),
                                ("tp=1,pp=1,dp=8,mbs=1,fp8=delayed,fp8-dpa=on,distopt=on", "fp8-dpa=on"),
                                ("tp=1,pp=1,dp=8,mbs=1,memory-fraction=0.9,distopt=on", "memory-fraction=0.9")]:
            with self.subTest(strategy):
                r = subprocess.run([PLACER, "export", "--workload", LLAMA, "--gpus", "8", "--strategy", strategy, "--to", "megatron-bridge"],
                                   capture_output=True, text=True)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(words, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_unknown_key_refused_by_bridge(self):
        # The machinery is strict: a key the container lacks is an error,
        # so test_plans' keys are Bridge's own.
        b = bc.load(BRIDGE)
        with self.assertRaises(Exception):
            bc.check(b, "pretrain", ["model.no_such_field=1"])


if __name__ == "__main__":
    unittest.main()
