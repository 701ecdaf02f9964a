"""placer's `--to megatron` exports read by Megatron-Core's own
configuration classes (make test-megatron; megatron_check.py says how).

bin/placer exports each plan; megatron_check.py reads the export with
bash, parses it with Megatron-LM core_v0.16.1's flags and defaults
(workloads/export/plans/testdata/megatron-lm-core_v0.16.1-args.txt), runs
validate_args's steps and core_transformer_config_from_args, and builds
megatron-core 0.16.1's TransformerConfig (with ModelParallelConfig),
DistributedDataParallelConfig, micro-batch count and layers per pipeline
rank; each built config is then held against the plan and the model the
export names. The plans:

  - the docs' examples of `--to megatron` (docs/*.md, `placer export
    --help`), read from them;
  - every plan of `placer report megatron --json` (Megatron-LM's table,
    its strong scaling, the 2022 A100 table, Llama 3 405B and
    Megatron-Bridge's table: each row's Megatron plan and placer's);
  - small plans covering every setting the exporter writes;
  - Megatron-Bridge's rows as its recipes (v0.2.1) set Megatron-Core where
    they differ from the export (BRIDGE);
  - plans Megatron-Core refuses, which placer refuses too, in one line
    naming the setting (REFUSED_BOTH).

An export Megatron-Core refuses is a failure unless KNOWN lists it (with
the refusal's words, which must still be what it says: fix the exporter,
then drop the entry).

PLACER names the binary (default: bin/placer of this checkout);
PLACER_MEGATRON the folder megatron-core is installed in (make
venv-megatron: a pip --target folder); without it the tests are
skipped, saying so.
"""

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PLACER = os.environ.get("PLACER") or os.path.join(ROOT, "bin", "placer")
MEGATRON = os.environ.get("PLACER_MEGATRON", "")
# placer report megatron --json as make test wrote it with PLACER, once
# for the tests that read it (the Makefile's megatron-report); unset, the
# report is run here.
REPORT_FILE = os.environ.get("PLACER_REPORT_MEGATRON", "")

mc = None


def setUpModule():
    global mc, _report_run
    if not MEGATRON:
        raise unittest.SkipTest("PLACER_MEGATRON is not set (make test-megatron sets it)")
    # The report's searches (seconds) run beside megatron-core's import;
    # make test runs the report once for this test and layerbench's
    # (PLACER_REPORT_MEGATRON, the Makefile's megatron-report).
    if not REPORT_FILE:
        _report_run = subprocess.Popen([PLACER, "report", "megatron", "--json"], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
    # megatron-core from PLACER_MEGATRON's folder, which make
    # test-megatron also puts on PYTHONPATH; megatron_check beside this
    # file (unittest discover -s tools/dev/frameworks puts it on the path).
    import megatron_check

    mc = megatron_check


SMALL_GPT = "gpt:layers=8,hidden=64,heads=8,seq=64,vocab=128,batch=16"
SMALL_LLAMA = "llama:layers=8,hidden=64,heads=8,kv_heads=2,ffn=192,seq=64,vocab=128,batch=16"
LLAMA_14 = "llama:layers=14,hidden=64,heads=8,kv_heads=2,ffn=192,seq=64,vocab=128,batch=16"
LLAMA_16 = "llama:layers=16,hidden=64,heads=8,kv_heads=2,ffn=192,seq=64,vocab=128,batch=16"
HEAD_DIM = "llama:layers=4,hidden=64,heads=8,kv_heads=8,ffn=192,seq=64,vocab=128,batch=16,head_dim=16"
MOE = "llama:layers=4,hidden=32,heads=4,kv_heads=2,ffn=96,seq=64,vocab=64,batch=16,head_dim=16,experts=8,topk=2,expert_ffn=64,shared=1"
MOE_DENSE = MOE + ",dense_layers=1"
GPT_48 = SMALL_GPT.replace("batch=16", "batch=48")
MOE_48 = MOE.replace("batch=16", "batch=48")
# Models' attention and heads the export writes (workloads/export/plans/
# megatron.go): latent attention (MLATransformerConfig), multi-token
# prediction, sliding windows; held against the config in against_plan.
HF = os.path.join(ROOT, "graph", "transformer", "testdata", "hf")
NEMOTRON_H_DEFAULTS = "hf:" + os.path.join(HF + "5", "nemotron_h-defaults.json") + ":seq=4096,batch=64"
MLA = "llama:layers=8,hidden=64,heads=8,ffn=192,seq=64,vocab=128,batch=16,head_dim=16,q_lora=32,kv_lora=16,rope_dim=8"
MLA_MOE = MOE.replace("kv_heads=2,", "") + ",kv_lora=16,rope_dim=8,mtp=1"
WINDOW = SMALL_LLAMA + ",window=16"

# Every setting the exporter writes (workloads/export/plans/megatron.go), on
# small models: name -> (workload, GPUs, plan).
SETTINGS = {
    "tp-pp-dp": (SMALL_GPT, 8, "tp=2,pp=2,dp=2,mbs=2"),
    "sp-tpoverlap-distopt": (SMALL_GPT, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,tpoverlap=on,distopt=on"),
    "tied-gpt": (SMALL_GPT, 4, "tp=1,pp=1,dp=4,mbs=2"),
    "untied-gpt": (SMALL_GPT + ",tied=false", 4, "tp=1,pp=1,dp=4,mbs=2"),
    "llama-gqa": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on"),
    "head-dim": (HEAD_DIM, 4, "tp=2,pp=1,dp=2,mbs=1,sp=on"),
    "cp": (SMALL_LLAMA, 8, "tp=2,cp=2,pp=1,dp=2,mbs=1,sp=on"),
    "cp-all-gather": (SMALL_LLAMA, 8, "tp=2,cp=2,pp=1,dp=2,mbs=1,sp=on,cp-comm-type=all_gather"),
    "cp-a2a": (SMALL_LLAMA, 8, "tp=1,cp=2,pp=1,dp=4,mbs=1,cp-comm-type=a2a"),
    "vp": (SMALL_GPT, 8, "tp=1,pp=4,dp=2,vp=2,mbs=1"),
    "vp-pp2": (SMALL_GPT, 4, "tp=1,pp=2,dp=2,vp=2,mbs=1"),
    "first-last": (SMALL_LLAMA, 8, "tp=1,pp=4,dp=2,mbs=1,first=1,last=1"),
    "first-only": (SMALL_LLAMA, 8, "tp=1,pp=4,dp=2,mbs=1,first=5"),
    "first-last-vp": (LLAMA_16, 8, "tp=1,pp=4,dp=2,vp=2,mbs=1,first=2,last=2"),
    "embedding-loss": (LLAMA_14, 8, "tp=1,pp=4,dp=2,mbs=1,embedding-layer=on,loss-layer=on"),
    "embedding-loss-vp": (LLAMA_14, 8, "tp=1,pp=4,dp=2,vp=2,mbs=1,embedding-layer=on,loss-layer=on"),
    "embedding-only": (LLAMA_16.replace("layers=16", "layers=15"), 8, "tp=1,pp=4,dp=2,mbs=1,embedding-layer=on"),
    "recompute-selective": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,recompute=selective"),
    "recompute-modules": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,recompute-modules=core_attn+mlp"),
    "recompute-full": (SMALL_LLAMA, 8, "tp=2,pp=2,dp=2,mbs=1,sp=on,recompute=full"),
    "recompute-block": (SMALL_LLAMA, 8, "tp=2,pp=2,dp=2,mbs=1,sp=on,recompute=full,recompute-layers=2"),
    "fp8-current": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,fp8=current"),
    "fp8-delayed": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,fp8=delayed"),
    "fp8-blockwise": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,fp8=blockwise"),
    # Megatron-Core's BF16 first and last layers (planner/mechanisms/firstlast.go
    # declares the key and the arguments it writes).
    "first-last-bf16": (SMALL_LLAMA, 8, "tp=1,pp=2,dp=4,mbs=1,fp8=current,first-last-layers-bf16=1:2"),
    "grads-bf16": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,distopt=on,grads=bf16"),
    "loss-fusion": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,loss-fusion=on"),
    "fsdp": (SMALL_LLAMA, 8, "tp=1,pp=1,dp=8,mbs=1,fsdp=on"),
    "moe-ep": (MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,distopt=on"),
    "moe-etp": (MOE, 8, "tp=2,pp=1,dp=4,ep=2,etp=1,mbs=1,sp=on"),
    "moe-epoverlap": (MOE, 8, "tp=1,pp=2,dp=4,vp=2,ep=4,mbs=1,epoverlap=on"),
    "moe-recompute": (MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,recompute-modules=moe_act+layernorm,fp8=current"),
    "moe-dense-layers": (MOE_DENSE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1"),
    "moe-top1": (MOE.replace("topk=2", "topk=1"), 8, "tp=1,pp=1,dp=8,ep=4,mbs=1"),
    # A hybrid with a block of experts (pretrain_mamba.py, pattern ME*-):
    # transformers 5.24.0's NemotronHConfig() file, its E layer
    # Megatron-Core's MoETransformerLayer.
    "hybrid-experts": (NEMOTRON_H_DEFAULTS, 8, "tp=1,pp=1,dp=8,ep=8,mbs=1"),
    "hybrid-experts-pp": (NEMOTRON_H_DEFAULTS, 8, "tp=2,pp=2,dp=2,ep=2,mbs=1,sp=on"),
    "deepseek-v3": ("deepseek-v3:seq=4096,batch=64", 64, "tp=1,pp=4,dp=16,ep=16,mbs=1,distopt=on,first=16,last=15"),
    "gpt-oss-120b": ("gpt-oss-120b:seq=4096,batch=64", 64, "tp=1,pp=4,dp=16,ep=8,mbs=1,distopt=on"),
    "mla": (MLA, 8, "tp=2,pp=2,dp=2,mbs=1,sp=on"),
    "mla-full-queries": (MLA.replace("q_lora=32,", ""), 8, "tp=1,pp=1,dp=8,mbs=1"),
    "mla-recompute-up-proj": (MLA, 8, "tp=1,pp=1,dp=8,mbs=1,recompute-modules=mla_up_proj"),
    "mla-moe-mtp-epoverlap": (MLA_MOE, 8, "tp=1,pp=2,dp=4,vp=2,ep=4,mbs=1,epoverlap=on"),
    "mtp": (SMALL_LLAMA + ",mtp=2", 8, "tp=1,pp=2,dp=4,mbs=1"),
    "window-every-layer": (WINDOW, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on"),
    "window-every-2": (WINDOW + ",window_every=2", 8, "tp=1,pp=2,dp=4,mbs=1"),
    "window-every-3": (WINDOW + ",window_every=3", 8, "tp=1,pp=4,dp=2,vp=2,mbs=1"),
    "hf-deepseek-v2": ("hf:" + os.path.join(HF, "deepseek-v2.json") + ":seq=4096,batch=64", 64, "tp=1,pp=4,dp=16,ep=16,mbs=1,distopt=on"),
    "hf-deepseek-v3": ("hf:" + os.path.join(HF, "deepseek-v3.json") + ":seq=4096,batch=64", 64,
                       "tp=1,pp=2,dp=32,ep=32,mbs=1,distopt=on,first=31,last=30"),
    # hf:gpt-oss-120b.json is refused (its rope_scaling yarn has no pretrain_gpt.py
    # flag: TestMegatronModelAutoBridge); the preset above holds its windows.
    # The software stack (planner/stack.go, docs/stacks.md): the
    # dispatcher, fusions, grouped GEMMs, capacity and CUDA graphs as
    # placer costs them, written as Megatron-Core 0.16's arguments.
    "stack-flex-graphs-dense": (MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,dispatcher=flex,cuda-graphs=dense"),
    "stack-hybridep": (MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,dispatcher=hybridep"),
    "stack-capacity-graphs-full": (MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,routing=capacity:1.25,cuda-graphs=full"),
    "stack-megatron-core-0.16": (MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,stack=megatron-core-0.16"),
    "stack-dense-layers-graphs": (MOE_DENSE, 8, "tp=1,pp=2,dp=4,ep=4,mbs=1,cuda-graphs=dense,recompute-modules=moe_act+layernorm"),
    "stack-epoverlap-graphs": (MOE, 8, "tp=1,pp=2,dp=4,vp=2,ep=4,mbs=1,epoverlap=on,cuda-graphs=dense"),
    "stack-dense-model-graphs": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,cuda-graphs=full"),
    # The memory-recipe keys (planner/plan recipe.go) pretrain_gpt.py has.
    "fp8-params-hidden-dropout": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,distopt=on,fp8=delayed,fp8-params=on,hidden-dropout=0"),
    # FP8 primary weights with experts: --fp8-param-gather on an MoE model
    # (the distributed optimizer gathers the experts' FP8 weights too).
    "moe-fp8-params": (MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,distopt=on,fp8=delayed,fp8-params=on"),
    "offload-layers": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,offload-layers=2"),
    "graph-pool-layers": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,cuda-graphs=dense,graph-pool=layers"),
    "gc-threshold": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,gc-threshold=0.6"),
    "hf-mistral-7b": ("hf:" + os.path.join(HF, "mistral-7b-v0.1.json") + ":seq=8192,batch=64", 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,distopt=on"),
}

# Megatron-Bridge v0.2.1's performance recipes where they set Megatron-Core
# otherwise than the export of the table's plan (planner's
# MegatronBridge reads its rows from them): row -> (the plan in placer's
# words, arguments added to the export, why). Llama 3.1 405B's and
# Qwen3-235B-A22B's recipes (llama31_405b_pretrain_config,
# qwen3_235b_a22b_pretrain_config) count the embedding and the loss as
# layers (account_for_embedding_in_pipeline_split,
# account_for_loss_in_pipeline_split), where the table's plan is placer's
# nearest split, one layer fewer on each end stage (first=, last=).
# Llama 3 8B's Megatron-FSDP: the recipe turns gradient accumulation
# fusion off (as the export does) and saves no checkpoint, so Bridge
# asks no checkpoint format; Megatron-LM's validate_args asks
# fsdp_dtensor whether or not it saves.
BRIDGE = {
    "Llama 3.1 405B": ("tp=8,cp=2,pp=8,dp=8,vp=8,mbs=1,sp=on,tpoverlap=on,distopt=on,embedding-layer=on,loss-layer=on,fp8=current,grads=bf16",
                       [], "account_for_embedding/loss_in_pipeline_split"),
    "Qwen3-235B-A22B": ("tp=2,pp=8,dp=16,vp=4,mbs=1,sp=on,distopt=on,embedding-layer=on,loss-layer=on,ep=32,etp=1,fp8=current,grads=bf16,epoverlap=on",
                        [], "account_for_embedding/loss_in_pipeline_split"),
    "Llama 3 8B": ("tp=1,pp=1,dp=8,mbs=1,fp8=current,fsdp=on,grads=bf16", ["--ckpt-format", "fsdp_dtensor"], "ckpt_format fsdp_dtensor"),
}

# Plans Megatron-Core refuses: name -> (workload, GPUs, the plan, a plan
# placer exports, edits that make its arguments the refused plan's,
# placer's words, Megatron-Core's words).
REFUSED_BOTH = {
    "graphs-recompute-full": (SMALL_LLAMA, 8, "tp=2,pp=2,dp=2,mbs=1,sp=on,recompute=full,cuda-graphs=dense",
                              "tp=2,pp=2,dp=2,mbs=1,sp=on,recompute=full",
                              {"--cuda-graph-impl": "transformer_engine", "--cuda-graph-scope": ["attn", "mlp"]},
                              "cuda-graphs=dense with recompute=full",
                              "full recompute is only supported with full iteration CUDA graph"),
    "graphs-recompute-core-attn": (SMALL_LLAMA, 8, "tp=2,pp=1,dp=4,mbs=1,sp=on,recompute=selective,cuda-graphs=dense",
                                   "tp=2,pp=1,dp=4,mbs=1,sp=on,recompute=selective",
                                   {"--cuda-graph-impl": "transformer_engine", "--cuda-graph-scope": ["attn", "mlp"]},
                                   "beside recompute=selective of the attention core",
                                   "attention dropout is not supported with graphed attention recomputation"),
    "graphs-mlp-epoverlap": (MOE_DENSE, 8, "tp=1,pp=2,dp=4,vp=2,ep=4,mbs=1,epoverlap=on,cuda-graphs=dense",
                             "tp=1,pp=2,dp=4,vp=2,ep=4,mbs=1,epoverlap=on",
                             {"--cuda-graph-impl": "transformer_engine", "--cuda-graph-scope": ["attn", "mlp"]},
                             "beside epoverlap=on",
                             "CUDA graph scope on moe and mlp is not supported with overlap_moe_expert_parallel_comm"),
    # HybridEP's static budget (rank-capacity=F): Megatron-Core 0.16.1
    # has no moe_expert_rank_capacity_factor (0.18.0 does: the Bridge
    # export writes it, test_bridge.py).
    "rank-capacity": (MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,dispatcher=hybridep,rank-capacity=1.25",
                      "tp=1,pp=1,dp=8,ep=4,mbs=1,dispatcher=hybridep", {"--moe-expert-rank-capacity-factor": "1.25"},
                      "rank-capacity=1.25 has no megatron setting", "unrecognized arguments: --moe-expert-rank-capacity-factor"),
    # Delayed scaling with BF16 first and last layers (transformer_config.py __post_init__).
    "first-last-bf16-delayed": (SMALL_LLAMA, 8, "tp=1,pp=2,dp=4,mbs=1,fp8=delayed,first-last-layers-bf16=1:1",
                                "tp=1,pp=2,dp=4,mbs=1,fp8=delayed",
                                {"--first-last-layers-bf16": [], "--num-layers-at-start-in-bf16": "1", "--num-layers-at-end-in-bf16": "1"},
                                "Megatron-Core refuses it with fp8=delayed", "Delayed scaling does not support first / last layer in BF16"),
    # A count above a stage's layers under an FP8 recipe.
    "first-last-bf16-stage": (SMALL_LLAMA, 8, "tp=1,pp=2,dp=4,mbs=1,fp8=current,first-last-layers-bf16=5:0",
                              "tp=1,pp=2,dp=4,mbs=1,fp8=current",
                              {"--first-last-layers-bf16": [], "--num-layers-at-start-in-bf16": "5", "--num-layers-at-end-in-bf16": "0"},
                              "between 0 and a pipeline stage's layers (4)", "must be between 0 and number of layers per pipeline stage (4)"),
    "heads-tp": (GPT_48, 24, "tp=3,pp=1,dp=8,mbs=2", "tp=1,pp=1,dp=24,mbs=2", {"--tensor-model-parallel-size": "3"},
                 "tp=3 does not divide the 8 attention heads", "num_attention_heads (8) must be a multiple of tensor_model_parallel_size (3)"),
    "groups-tp": ("llama:layers=8,hidden=96,heads=6,kv_heads=3,ffn=192,seq=64,vocab=128,batch=16", 8, "tp=2,pp=1,dp=4,mbs=1,sp=on",
                  "tp=1,pp=1,dp=8,mbs=1", {"--tensor-model-parallel-size": "2", "--sequence-parallel": []},
                  "tp=2 does not divide the 3 key/value heads", "num_query_groups (3) must be a multiple or divisor of tensor_model_parallel_size (2)"),
    "layers-pp": (GPT_48, 24, "tp=1,pp=3,dp=8,mbs=1", "tp=1,pp=1,dp=24,mbs=1", {"--pipeline-model-parallel-size": "3"},
                  "pp=3 x vp=1 does not divide the 8 layers", "Number of layers should be divisible by the pipeline-model-parallel size"),
    "cp-seq": (GPT_48, 24, "tp=1,cp=3,pp=1,dp=8,mbs=2", "tp=1,pp=1,dp=24,mbs=2", {"--context-parallel-size": "3"},
               "cp=3: the sequence of 64 does not split into 2 x cp = 6 equal chunks",
               "seq-length should be a multiple of 2 * context-parallel-size"),
    "ep-experts": (MOE_48, 24, "tp=1,pp=1,dp=24,ep=3,mbs=1", "tp=1,pp=1,dp=24,ep=4,mbs=1", {"--expert-model-parallel-size": "3"},
                   "ep=3 does not divide the 8 experts", "Number of experts should be a multiple of expert model parallel_size"),
    "tpoverlap-without-sp": (SMALL_GPT, 8, "tp=2,pp=1,dp=4,mbs=1,tpoverlap=on", "tp=2,pp=1,dp=4,mbs=1,sp=on,tpoverlap=on",
                             {"--sequence-parallel": None}, "tpoverlap=on without sp=on",
                             "Tensor parallel communication/GEMM overlap can happen only when sequence parallelism is enabled"),
    "epoverlap-pp-without-vp": (MOE, 8, "tp=1,pp=2,dp=4,ep=4,mbs=1,epoverlap=on", "tp=1,pp=2,dp=4,vp=2,ep=4,mbs=1,epoverlap=on",
                                {"--num-layers-per-virtual-pipeline-stage": None}, "epoverlap=on with pp=2 and no virtual stages",
                                "virtual_pipeline_model_parallel_size must be specified when pipeline_model_parallel_size > 1"),
    "epoverlap-full-recompute": (MOE, 8, "tp=1,pp=2,dp=4,vp=2,ep=4,mbs=1,epoverlap=on,recompute=full", "tp=1,pp=2,dp=4,vp=2,ep=4,mbs=1,epoverlap=on",
                                 {"--recompute-granularity": "full", "--recompute-method": "uniform", "--recompute-num-layers": "1"},
                                 "epoverlap=on with recompute=full", "disable full recomputation when enabling overlap_moe_expert_parallel_comm"),
    "epoverlap-without-ep": (MOE, 8, "tp=1,pp=2,dp=4,vp=2,ep=1,mbs=1,epoverlap=on", "tp=1,pp=2,dp=4,vp=2,ep=4,mbs=1,epoverlap=on",
                             {"--expert-model-parallel-size": "1"}, "epoverlap=on without expert parallelism",
                             "overlap_moe_expert_parallel_comm is only supported with expert model parallelism"),
    "first-with-embedding": (LLAMA_14, 8, "tp=1,pp=4,dp=2,mbs=1,first=2,embedding-layer=on,loss-layer=on",
                             "tp=1,pp=4,dp=2,mbs=1,embedding-layer=on,loss-layer=on", {"--decoder-first-pipeline-num-layers": "2"},
                             "embedding-layer=on", "num_layers_in_first_pipeline_stage and num_layers_in_last_pipeline_stage cannot be"),
    "moe-act-dense": (SMALL_LLAMA, 8, "tp=1,pp=1,dp=8,mbs=1,recompute-modules=moe_act", "tp=1,pp=1,dp=8,mbs=1,recompute=selective",
                      {"--recompute-modules": "moe_act"}, "recompute-modules=moe_act",
                      "moe_act in recompute_modules is only supported with moe_grouped_gemm"),
    "mla-up-proj-without-mla": (SMALL_LLAMA, 8, "tp=1,pp=1,dp=8,mbs=1,recompute-modules=mla_up_proj", "tp=1,pp=1,dp=8,mbs=1,recompute=selective",
                                {"--recompute-modules": "mla_up_proj"}, "recompute-modules=mla_up_proj",
                                "mla_up_proj in recompute_modules is only supported with multi_latent_attention"),
    "epoverlap-mtp-pp1": (MLA_MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,epoverlap=on", "tp=1,pp=1,dp=8,ep=4,mbs=1",
                          {"--overlap-moe-expert-parallel-comm": [], "--delay-wgrad-compute": []}, "epoverlap=on with mtp=1 and pp=1",
                          "Pipeline model parallel size must be larger than 1"),
    "vp-micro-batches": (SMALL_GPT, 8, "tp=1,pp=4,dp=2,vp=2,mbs=4", "tp=1,pp=4,dp=2,vp=2,mbs=1", {"--micro-batch-size": "4"},
                         "interleaved stages need the 2 micro-batches to be a multiple of pp=4",
                         "The number of contiguous micro-batches in a virtual pipeline stage"),
}

# Exports Megatron-Core refuses, to fix in the exporter (then drop the
# entry): case -> the refusal's words.
FIRST_VP = "must be divisible by virtual pipeline"
KNOWN = {
    # Uneven end stages with virtual stages: Megatron-Core puts first= (and
    # last=) layers in equal model chunks (first % vp == 0); the published
    # plans as placer reads them, first=7 at vp=4 (Llama 3 405B's, Meta's
    # stack), first=15 at vp=8 and first=11 at vp=4 (Megatron-Bridge's
    # recipes, which count the embedding and the loss as layers instead:
    # BRIDGE), are not. placer's own plans are searched for Megatron
    # (placer search --for megatron, the default) and are none of these.
    "llama3_405b/405B/megatron": FIRST_VP,
    "llama3_405b/405B@dgx-h100:2048/megatron": FIRST_VP,
    "llama3_405b/405B 128K/megatron": FIRST_VP,
    "bridge/Llama 3.1 405B/megatron": FIRST_VP,
    "bridge/Qwen3-235B-A22B/megatron": FIRST_VP,
}


_report, _report_run = None, None


def report():
    """placer report megatron --json (once, started by setUpModule, or
    REPORT_FILE)."""
    global _report
    if _report is None and REPORT_FILE:
        with open(REPORT_FILE) as f:
            _report = json.load(f)
    if _report is None:
        out, err = _report_run.communicate()
        if _report_run.returncode != 0:
            raise AssertionError("placer report megatron --json: " + err)
        _report = json.loads(out)
    return _report


def export(workload, plan, gpus=None, cluster=None):
    """(return code, standard output, standard error) of placer export
    --to megatron."""
    cmd = [PLACER, "export", "--allow-over", "--workload", workload, "--strategy", plan, "--to", "megatron"]
    cmd += ["--cluster", cluster] if cluster else ["--gpus", str(gpus)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def doc_examples():
    """The `placer export ... --to megatron` command lines of docs/*.md and
    of placer export --help: (where, workload, cluster or None, gpus or
    None, plan)."""
    texts = []
    docs = os.path.join(ROOT, "docs")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".md"):
            with open(os.path.join(docs, name)) as f:
                texts.append(("docs/" + name, f.read()))
    p = subprocess.run([PLACER, "export", "--help"], capture_output=True, text=True)
    texts.append(("placer export --help", p.stdout + p.stderr))
    out = []
    for where, text in texts:
        joined = re.sub(r"\\\n\s*", " ", text)
        for line in joined.splitlines():
            if "placer export" not in line or "--to megatron" not in line:
                continue
            flags = dict(re.findall(r"--(workload|cluster|gpus|strategy)[ =](\S+)", line))
            if "workload" in flags and "strategy" in flags:
                out.append((where, flags["workload"], flags.get("cluster"), flags.get("gpus"), flags["strategy"]))
    return out


def plan_keys(plan):
    return dict(kv.split("=", 1) for kv in plan.split(","))


# BIASED_PRESETS are the llama-family presets with biases on their linear
# layers (graph/transformer/presets.go: gpt-oss-120b carries
# attention_bias and the experts' biases of openai/gpt-oss-120b's
# config.json), which the export's header spec does not print.
BIASED_PRESETS = ("gpt-oss-120b",)


def biased_preset(workload):
    """Whether workload names a llama-family preset with linear biases."""
    return workload.partition(":")[0] in BIASED_PRESETS


def header_model(text):
    """The model and GPUs the export's header names (presets resolved)."""
    m = re.match(r"# placer: Megatron-LM arguments for (\S+) under (\S+) on (\d+) GPUs", text)
    spec = m.group(1)
    family, _, rest = spec.partition(":")
    return family, plan_keys(rest), int(m.group(3))


def stage_layers(L, plan):
    """Each pipeline stage's layers under the plan, as placer splits them
    (planner's StageLayers)."""
    k = plan_keys(plan)
    P = int(k.get("pp", 1))
    emb, loss = k.get("embedding-layer") == "on", k.get("loss-layer") == "on"
    if emb or loss:
        per = (L + emb + loss) // P
        out = [per] * P
        out[0] -= emb
        out[-1] -= loss
        return out
    first, last = int(k.get("first", 0)), int(k.get("last", 0))
    inner = P - (first > 0) - (last > 0)
    mid = (L - first - last) // inner if inner else 0
    out = [mid] * P
    if first:
        out[0] = first
    if last:
        out[-1] = last
    return out


class Megatron(unittest.TestCase):
    maxDiff = None

    def check_export(self, key, workload, plan, gpus=None, cluster=None, extra=()):
        """Export, check with Megatron-Core, hold the built configs against
        the plan and the model; a refusal KNOWN lists must still be it."""
        rc, out, err = export(workload, plan, gpus, cluster)
        if KNOWN.get(key) == FIRST_VP:
            # placer refuses what Megatron-Core would: one line, exit 1.
            self.assertEqual(rc, 1, "%s: placer exported %s, which Megatron-Core refuses" % (key, plan))
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn("Megatron-Core splits an end stage's layers into vp equal model chunks", err)
            return None
        self.assertEqual(rc, 0, "%s: placer export refused %s: %s" % (key, plan, err))
        try:
            argv, world = mc.read_export(out)
            r = mc.check(argv + list(extra), world)
        except mc.Refused as e:
            if key in KNOWN:
                self.assertIn(KNOWN[key], str(e), key)
                print("\n  known: %s: %s: refused: %s" % (key, plan, str(e)[:300]), file=sys.stderr)
                return None
            self.fail("%s: Megatron-Core refuses placer's export of %s on %s: %s" % (key, plan, cluster or gpus, e))
        self.assertNotIn(key, KNOWN, "%s: accepted now: drop it from KNOWN" % key)
        self.against_plan(key, out, plan, r, workload)
        return r

    def against_plan(self, key, out, plan, r, workload=""):
        import torch

        c, d, a = r["config"], r["ddp"], r["args"]
        family, model, gpus = header_model(out)
        k = plan_keys(plan)
        on = lambda name: k.get(name) == "on"
        T, C, P = int(k.get("tp", 1)), int(k.get("cp", 1)), int(k.get("pp", 1))
        V, E = int(k.get("vp", 1)), int(k.get("ep", 1))
        D = gpus // (T * C * P)
        L = int(model["layers"])
        want = {
            "tensor_model_parallel_size": T, "context_parallel_size": C, "pipeline_model_parallel_size": P,
            "virtual_pipeline_model_parallel_size": V if V > 1 else None, "expert_model_parallel_size": E,
            "expert_tensor_parallel_size": int(k.get("etp", T)), "sequence_parallel": on("sp") and T > 1,
            "tp_comm_overlap": on("tpoverlap"), "overlap_moe_expert_parallel_comm": on("epoverlap"),
            "delay_wgrad_compute": on("epoverlap"),
            "num_layers": L, "hidden_size": int(model["hidden"]), "num_attention_heads": int(model["heads"]),
            "num_query_groups": int(model.get("kv_heads", model["heads"])),
            "kv_channels": int(model.get("head_dim", int(model["hidden"]) // int(model["heads"]))),
            "ffn_hidden_size": int(model.get("ffn", 4 * int(model["hidden"]))),
            "gated_linear_unit": family == "llama" and model.get("act", "swiglu") != "relu2", "normalization": "RMSNorm" if family == "llama" else "LayerNorm",
            "add_bias_linear": family != "llama" or biased_preset(workload), "bf16": True,
            "pipeline_dtype": torch.bfloat16,
        }
        st = stack_settings(k)
        routing = st["routing"]
        cap = float(routing.split(":")[1]) if routing.startswith("capacity:") else None
        rk = k.get("recompute", "selective" if "recompute-modules" in k else None)
        want["recompute_granularity"] = rk
        if rk == "full":
            n = k.get("recompute-layers")
            want["recompute_method"], want["recompute_num_layers"] = ("block", int(n)) if n else ("uniform", 1)
        if rk == "selective":
            want["recompute_modules"] = k["recompute-modules"].split("+") if "recompute-modules" in k else ["core_attn"]
        fp8 = {"current": ("hybrid", "tensorwise"), "delayed": ("hybrid", "delayed"), "blockwise": ("e4m3", "blockwise"),
               "mxfp8": ("e4m3", "mxfp8")}
        want["fp8"], recipe = fp8.get(k.get("fp8"), (None, None))
        if "experts" in model:
            x, f = int(model["experts"]), int(model["expert_ffn"])
            dense = int(model.get("dense_layers", 0))
            want.update({"num_moe_experts": x, "moe_router_topk": int(model["topk"]), "moe_ffn_hidden_size": f,
                         "moe_shared_expert_intermediate_size": int(model["shared"]) * f if "shared" in model else None,
                         "moe_layer_freq": [0] * dense + [1] * (L - dense) if dense else 1,
                         "moe_token_dispatcher_type": "flex" if st["dispatcher"] == "hybridep" else st["dispatcher"],
                         "moe_grouped_gemm": st["grouped GEMM"] == "on",
                         "moe_permute_fusion": st["permute fusion"] == "on", "moe_router_fusion": st["router fusion"] == "on",
                         "moe_expert_capacity_factor": cap, "moe_pad_expert_input_to_capacity": cap is not None})
            if st["dispatcher"] in ("flex", "hybridep"):
                # HybridEP is the flex dispatcher's other backend.
                want["moe_flex_dispatcher_backend"] = "hybridep" if st["dispatcher"] == "hybridep" else "deepep"
        else:
            want["num_moe_experts"] = None
        graphs = st["CUDA graphs"]
        want["cuda_graph_impl"] = "none" if graphs == "off" else "transformer_engine"
        scope = []
        if graphs != "off":
            scope = ["attn"] + (["mlp"] if "experts" not in model or "dense_layers" in model else [])
            if graphs == "full" and "experts" in model:
                scope.append("moe")
        # The memory recipe's keys.
        want["fp8_param"] = on("fp8-params") and "fp4" not in k
        want["fp4_param"] = on("fp8-params") and "fp4" in k
        want["fp4"] = "e2m1" if k.get("fp4") == "nvfp4" else None
        bf16 = [int(x) for x in k.get("first-last-layers-bf16", "0:0").split(":")]
        want["first_last_layers_bf16"] = bf16 != [0, 0]
        if bf16 != [0, 0]:
            want["num_layers_at_start_in_bf16"], want["num_layers_at_end_in_bf16"] = bf16
        want["cpu_offloading"] = "offload-layers" in k
        want["cpu_offloading_num_layers"] = int(k.get("offload-layers", 0))
        if k.get("hidden-dropout") == "0":
            want["hidden_dropout"] = 0.0
        # gc-threshold: the environment line the sourced script exports.
        env = [l for l in out.splitlines() if l.startswith("export ")]
        self.assertEqual(env, ["export PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:" + k["gc-threshold"]] if "gc-threshold" in k else [], key)
        if "pattern" in model:
            # A hybrid (pretrain_mamba.py): its layers' pattern, E its
            # blocks of experts (Megatron-Core's MoETransformerLayer).
            self.assertEqual(a.hybrid_override_pattern, model["pattern"], key)
        got = {name: getattr(c, name) for name in want}
        self.assertEqual(got, want, key)
        # DeepEP's fused multihot conversion, which placer's default stack
        # costs, runs only under Megatron-Core's experimental features.
        deepep = "experts" in model and st["dispatcher"] == "flex" and st["permute fusion"] == "on"
        self.assertEqual(a.enable_experimental, deepep, key)
        if scope:
            self.assertEqual([x.name for x in c.cuda_graph_scope], scope, key)
        if recipe:
            self.assertEqual(getattr(c.fp8_recipe, "value", c.fp8_recipe), recipe, key)
        self.assertEqual(a.data_parallel_size, D, key)
        self.assertEqual(a.micro_batch_size, int(k["mbs"]), key)
        self.assertEqual(r["micro_batches"] * D * int(k["mbs"]), int(model["batch"]), key)
        self.assertEqual(a.seq_length, int(model["seq"]), key)
        tied = model.get("tied", "true" if family == "gpt" else "false") == "true"
        self.assertEqual(a.untie_embeddings_and_output_weights, not tied, key)
        self.assertEqual([sum(x) for x in r["layers"]], stage_layers(L, plan), key)
        self.assertEqual(d.use_megatron_fsdp, on("fsdp"), key)
        self.assertEqual(d.use_distributed_optimizer, on("distopt") or on("fsdp"), key)
        self.assertEqual(d.grad_reduce_in_fp32, k.get("grads", "fp32") == "fp32", key)
        self.assertEqual(d.overlap_grad_reduce, D > 1 or on("distopt") or on("fsdp"), key)
        # Packed sequences (pack-len=, pack=on): Megatron-LM's --sft, its
        # dataset of packed conversations attending within each one.
        self.assertEqual(bool(getattr(a, "sft", False)), "pack-len" in k or on("pack"), key)
        # Transformer Engine's fused cross-entropy (loss-fusion=on):
        # --cross-entropy-loss-fusion --cross-entropy-fusion-impl te.
        self.assertEqual(bool(getattr(a, "cross_entropy_loss_fusion", False)), on("loss-fusion"), key)
        if on("loss-fusion"):
            self.assertEqual(a.cross_entropy_fusion_impl, "te", key)
        # Transformer Engine's context-parallel exchange (cp-comm-type=):
        # --cp-comm-type, Megatron-LM's default p2p when unset.
        self.assertEqual(a.cp_comm_type, [k.get("cp-comm-type", "p2p")], key)
        known = {"tp", "cp", "pp", "dp", "vp", "ep", "etp", "mbs", "sp", "tpoverlap", "epoverlap", "distopt", "fsdp", "grads",
                 "recompute", "recompute-modules", "recompute-layers", "fp8", "fp4", "first", "last", "embedding-layer", "loss-layer", "mb",
                 "stack", "pack", "pack-len", "loss-fusion", "cp-comm-type",
                 "fp8-params", "hidden-dropout", "offload-layers", "graph-pool", "gc-threshold", "first-last-layers-bf16"} | set(STACK_KEYS)
        self.assertEqual(set(k) - known, set(), "%s: plan settings this test does not hold against the config" % key)
        self.against_model(key, model, c)

    def against_model(self, key, model, c):
        """The model's latent attention, multi-token prediction and
        sliding window, as the config builds them."""
        from megatron.core.transformer import MLATransformerConfig
        from megatron.core.transformer.utils import is_layer_window_attention

        L, head = int(model["layers"]), int(model.get("head_dim", int(model["hidden"]) // int(model["heads"])))
        mla = "kv_lora" in model
        self.assertEqual(isinstance(c, MLATransformerConfig), mla, key)
        self.assertEqual(c.multi_latent_attention, mla, key)
        if mla:
            got = {k: getattr(c, k) for k in ("q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim")}
            want = {"q_lora_rank": int(model["q_lora"]) if "q_lora" in model else None, "kv_lora_rank": int(model["kv_lora"]),
                    "qk_head_dim": head, "qk_pos_emb_head_dim": int(model["rope_dim"]), "v_head_dim": head}
            self.assertEqual(got, want, key)
        self.assertEqual(c.mtp_num_layers, int(model["mtp"]) if "mtp" in model else None, key)
        W = int(model.get("window", 0))
        self.assertEqual(c.window_size, (W - 1, 0) if W else None, key)
        every = max(1, int(model.get("window_every", 1)))
        windowed = [is_layer_window_attention(c.window_size, c.window_attn_skip_freq, n + 1) for n in range(L)]
        self.assertEqual(windowed, [bool(W) and n % every == 0 for n in range(L)], key)

    def test_docs_examples(self):
        examples = doc_examples()
        self.assertGreaterEqual(len(examples), 2, "the docs' --to megatron examples")
        for where, workload, cluster, gpus, plan in examples:
            with self.subTest(where=where, plan=plan):
                self.check_export("docs/" + plan, workload, plan, gpus=gpus, cluster=cluster)

    def test_report_plans(self):
        n = 0
        for section, short in (("rows", "rows"), ("strong_scaling", "strong_scaling"), ("a100_2022", "a100_2022"),
                               ("llama3_405b", "llama3_405b"), ("megatron_bridge", "bridge")):
            seen = set()
            for row in report()[section]:
                name = row["model"]
                if name in seen:
                    name += "@" + row["cluster"]
                seen.add(name)
                for which in ("megatron", "placer"):
                    key = "%s/%s/%s" % (short, name, which)
                    with self.subTest(key=key):
                        self.check_export(key, row["workload"], row[which + "_plan"], cluster=row["cluster"])
                        n += 1
        self.assertGreaterEqual(n, 50)

    def test_settings(self):
        for name, (workload, gpus, plan) in SETTINGS.items():
            with self.subTest(name=name):
                self.check_export("settings/" + name, workload, plan, gpus=gpus)

    def test_fp4_params(self):
        # NVFP4 primary weights (fp8-params=on under fp4=nvfp4) on a
        # Blackwell pod: --fp4-param-gather, TransformerConfig.fp4_param.
        self.check_export("settings/fp4-params", SMALL_LLAMA, "tp=2,pp=1,dp=4,mbs=1,sp=on,distopt=on,fp4=nvfp4,fp8-params=on",
                          cluster="dgx-b200:1")
        # With the last 4 layers in BF16, as Megatron-Bridge 0.5.0's
        # llama3_8b NVFP4 recipe sets them (first_last_layers_bf16,
        # num_layers_at_end_in_bf16=4).
        self.check_export("settings/fp4-first-last-bf16", SMALL_LLAMA,
                          "tp=2,pp=1,dp=4,mbs=1,sp=on,distopt=on,fp4=nvfp4,fp8-params=on,first-last-layers-bf16=0:4", cluster="dgx-b200:1")

    def test_bridge_recipes(self):
        """Megatron-Bridge's rows as its recipes set Megatron-Core: accepted."""
        rows = {r["model"]: r for r in report()["megatron_bridge"]}
        for name, (plan, extra, why) in BRIDGE.items():
            with self.subTest(row=name, why=why):
                row = rows[name]
                r = self.check_export("bridge-recipe/" + name, row["workload"], plan, cluster=row["cluster"], extra=extra)
                if "embedding-layer=on" in plan:
                    self.assertTrue(r["config"].account_for_embedding_in_pipeline_split and r["config"].account_for_loss_in_pipeline_split)

    def test_refused_by_both(self):
        """What Megatron-Core refuses, placer refuses in one line naming the
        setting, and Megatron-Core is shown refusing the same plan."""
        for name, (workload, gpus, plan, base, edits, placer_words, megatron_words) in REFUSED_BOTH.items():
            with self.subTest(name=name):
                rc, out, err = export(workload, plan, gpus)
                self.assertNotEqual(rc, 0, "%s: placer exports %s" % (name, plan))
                self.assertEqual(out, "", name)
                self.assertEqual(len(err.strip().splitlines()), 1, "%s: one line: %r" % (name, err))
                self.assertIn(placer_words, err, name)
                rc, out, err = export(workload, base, gpus)
                self.assertEqual(rc, 0, "%s: the base plan %s: %s" % (name, base, err))
                argv, world = mc.read_export(out)
                argv = edit(argv, edits)
                with self.assertRaises(mc.Refused, msg=name) as cm:
                    mc.check(argv, world)
                self.assertIn(megatron_words, str(cm.exception), name)

    def test_mtp_learned_positions(self):
        """Multi-token prediction on a GPT's learned positions: placer
        refuses the model in one line; Megatron-LM refuses its arguments
        with --mtp-num-layers added."""
        rc, out, err = export(SMALL_GPT + ",mtp=1", "tp=1,pp=1,dp=8,mbs=1", 8)
        self.assertEqual((rc, out), (1, ""))
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("mtp=1 on gpt's learned positions", err)
        self.assertNotIn("--for", err)  # no plan of this model runs
        rc, out, err = export(SMALL_GPT, "tp=1,pp=1,dp=8,mbs=1", 8)
        self.assertEqual(rc, 0, err)
        argv, world = mc.read_export(out)
        with self.assertRaises(mc.Refused) as cm:
            mc.check(edit(argv, {"--mtp-num-layers": "1"}), world)
        self.assertIn("Multi-Token Prediction (MTP) needs rope or none position embeddings", str(cm.exception))

    def test_unknown_flag_refused(self):
        with self.assertRaises(mc.Refused) as cm:
            mc.check(["--num-layers", "2", "--no-such-flag"], 1)
        self.assertIn("unrecognized arguments: --no-such-flag", str(cm.exception))
        with self.assertRaises(mc.Refused) as cm:
            mc.check(["--num-layers", "2", "--fp8-recipe", "nosuch"], 1)
        self.assertIn("invalid choice", str(cm.exception))

    def test_command_line(self):
        """megatron_check.py's main: an export's file, or the arguments
        themselves; one line, exit status 0 or 1."""
        rc, out, err = export(SMALL_GPT, "tp=2,pp=2,dp=2,mbs=2", 8)
        with tempfile.NamedTemporaryFile("w", suffix=".sh") as f:
            f.write(out)
            f.flush()
            for argv, want_rc, want in (
                    ([f.name], 0, r"^ok: megatron-core 0\.16\.1: layers 8, .*TP 2, CP 1, PP 2, VP -, DP 2,.* stages 4,4;"),
                    (["--gpus", "6", f.name], 1, r"^refused: validate_args: world size \(6\) is not divisible"),
                    (["--gpus", "2", "--", "--num-layers", "2", "--hidden-size", "8", "--num-attention-heads", "2",
                      "--max-position-embeddings", "8", "--seq-length", "8", "--micro-batch-size", "1", "--bf16",
                      "--pipeline-model-parallel-size", "2"], 0, r"^ok: .*PP 2, VP -, DP 1,.* stages 1,1;.*pipeline_dtype bfloat16")):
                stdout = io.StringIO()
                with contextlib.redirect_stdout(stdout):
                    got = mc.main(argv)
                self.assertEqual(got, want_rc, stdout.getvalue())
                self.assertEqual(len(stdout.getvalue().splitlines()), 1, stdout.getvalue())
                self.assertRegex(stdout.getvalue(), want)


# The software keys (docs/stacks.md's first table) and the named stacks
# (its stack table, which planner's TestBridgeStacks holds against
# placer's own): a plan's settings as placer costs them, held against the
# config its export builds.
STACK_KEYS = {"dispatcher": "dispatcher", "permute-fusion": "permute fusion", "router-fusion": "router fusion",
              "grouped-gemm": "grouped GEMM", "cuda-graphs": "CUDA graphs", "routing": "routing"}


def read_stacks(path=os.path.join(ROOT, "docs", "stacks.md")):
    """stack name ("" for placer's default) -> its settings, from the
    docs' stack table."""
    stacks, head = {}, None
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells and cells[0] == "stack":
                head = cells
            elif head and line.startswith("|") and not cells[0].startswith("---"):
                name = "" if cells[0].startswith("(none") else cells[0].strip("`")
                stacks[name] = dict(zip(head[1:7], cells[1:7]))
            elif head and not line.startswith("|"):
                head = None
    return stacks


def stack_settings(keys):
    """The settings of a plan's keys: its stack's, its own keys over them."""
    stacks = read_stacks()
    st = dict(stacks[""])
    st.update(stacks[keys["stack"]] if "stack" in keys else {})
    for key, column in STACK_KEYS.items():
        if key in keys:
            st[column] = keys[key]
    return st


def edit(argv, edits):
    """argv with each flag of edits set to its value (a string, or a list
    of values: [] for a switch), or removed (None); flags not there are
    appended."""
    out, i = [], 0
    while i < len(argv):
        flag, j = argv[i], i + 1
        while j < len(argv) and not argv[j].startswith("--"):
            j += 1
        if flag in edits:
            v = edits[flag]
            if v is not None:
                out += [flag] + ([v] if isinstance(v, str) else list(v))
        else:
            out += argv[i:j]
        i = j
    for flag, v in edits.items():
        if flag not in argv and v is not None:
            out += [flag] + ([v] if isinstance(v, str) else list(v))
    return out


if __name__ == "__main__":
    unittest.main()
