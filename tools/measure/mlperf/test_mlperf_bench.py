"""Tests of the MLPerf bench reader on hand-written excerpts in the format of
mlcommons' training_results repositories (testdata/training_results_v4.1: a
made-up submitter, ACME, with two LoRA systems, one GPT-3 system and a TPU
system that is not read). Every expected figure is worked by hand beside it.

    python3 -m unittest discover -s tools/measure/mlperf -p 'test_*.py'
"""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

# unittest discover -s tools/measure/mlperf puts this folder first on sys.path.
import mlperf_bench as mb  # noqa: E402

FIXTURE = os.path.join(HERE, "testdata", "training_results_v4.1")


def ev(key, t, value=None, **md):
    return {"key": key, "time_ms": t, "value": value, "metadata": md}


class StepTimeTest(unittest.TestCase):
    def test_train_step_timing_median_both_spellings(self):
        evs = [ev("tracked_stats", 1, {"train_step_timing in s": 9.0}),
               ev("tracked_stats", 2, {"train_step_timing": 3.0}),
               ev("tracked_stats", 3, {"train_step_timing in s": 4.0})]
        # median of 9, 3, 4 = 4
        self.assertEqual(mb.step_time(evs, "gpt3", 64, 2048), (4.0, "train_step_timing", 3))

    def test_throughput_is_global_batch_over_samples_per_second(self):
        evs = [ev("tracked_stats", 1, {"throughput": 8.0}), ev("tracked_stats", 2, {"throughput": 16.0}),
               ev("tracked_stats", 3, {"throughput": 10.0})]
        # median 10 samples/s, global batch 8 -> 0.8 s a step
        self.assertEqual(mb.step_time(evs, "llama2_70b_lora", 8, 8192), (0.8, "throughput", 3))

    def test_train_loss_timestamps(self):
        evs = [ev("train_loss", 10000, 1.5, samples_count=40), ev("train_loss", 14000, 1.4, samples_count=80),
               ev("train_loss", 19000, 1.3, samples_count=120), ev("train_loss", 23000, 1.2, samples_count=160)]
        # 40 samples = 20 steps of 2: 4 s, 5 s, 4 s -> 0.2, 0.25, 0.2 s a step; median 0.2
        self.assertEqual(mb.step_time(evs, "llama2_70b_lora", 2, 8192), (0.2, "train_loss_timestamps", 60))

    def test_block_timestamps_drop_the_warm_first_block(self):
        evs = [ev("block_start", 1000, epoch_count=524288), ev("block_stop", 41000, epoch_count=524288),
               ev("block_start", 50000, epoch_count=524288), ev("block_stop", 70000, epoch_count=524288)]
        # 524288 tokens / (64 x 2048) = 4 steps; blocks 10 s and 5 s a step; the first dropped
        self.assertEqual(mb.step_time(evs, "gpt3", 64, 2048), (5.0, "block_timestamps", 4))

    def test_block_samples_between_stops(self):
        # LoRA blocks count samples at each stop: 0..96 then 96..192 (12 steps of 8 each)
        evs = [ev("block_start", 0, samples_count=0), ev("block_stop", 60000, samples_count=96),
               ev("block_start", 70000, samples_count=96), ev("block_stop", 106000, samples_count=192)]
        self.assertEqual(mb.step_time(evs, "llama2_70b_lora", 8, 8192), (3.0, "block_timestamps", 12))

    def test_train_step_time_before_blocks(self):
        # NVIDIA's v5.0 405B GB200 logs: per-step train_step_time, five
        # block_starts and one block_stop; the steps' median, 12 s (of 11,
        # 12, 30), not the last block paired with the one stop
        evs = [ev("block_start", 0, samples_count=0), ev("tracked_stats", 1, {"train_step_time": 11.0, "reduced_train_loss": 2.0}),
               ev("tracked_stats", 2, {"train_step_time": 12.0}), ev("tracked_stats", 3, {"train_step_time": 30.0}),
               ev("block_start", 100000, samples_count=896), ev("block_stop", 112000, samples_count=896 * 5)]
        self.assertEqual(mb.step_time(evs, "llama31_405b", 896, 8192), (12.0, "train_step_time", 3))
        # a throughput logged wins: global batch 896 / 112 samples/s = 8 s
        evs.append(ev("tracked_stats", 4, {"throughput": 112.0, "train_step_time": 9.0}))
        self.assertEqual(mb.step_time(evs, "llama31_405b", 896, 8192), (8.0, "throughput", 1))

    def test_bert_run_throughput_and_run_timestamps(self):
        # NVIDIA's BERT: one throughput at the run's end, 7,680 samples/s; global batch 768 -> 0.1 s;
        # 2,304,000 samples / 768 = 3,000 steps
        evs = [ev("run_start", 2000), ev("run_stop", 302000), ev("train_samples", 302000, 2304000),
               ev("tracked_stats", 302000, {"throughput": 7680.0, "epoch_num": 2304000})]
        self.assertEqual(mb.step_time(evs, "bert", 768, 512), (0.1, "run_throughput", 3000))
        # no throughput: 1,536,000 samples in 250 - 10 = 240 s, 6,400 samples/s -> 768 / 6,400 = 0.12 s
        evs = [ev("run_start", 10000), ev("run_stop", 250000), ev("train_samples", 250000, 1536000)]
        st, method, n = mb.step_time(evs, "bert", 768, 512)
        self.assertAlmostEqual(st, 0.12, places=12)
        self.assertEqual((method, n), ("run_timestamps", 2000))
        self.assertEqual(mb.step_time(evs[:2], "bert", 768, 512), (None, "no timing in log", 0))

    def test_bert_train_time_leaves_the_evaluations_out(self):
        # run 0..200 s; evaluations 90-100 s and 190-200 s: 180 s of training for 1,728,000
        # samples, 9,600 samples/s -> 768 / 9,600 = 0.08 s (the whole run's rate would give
        # 768 x 200 / 1,728,000 = 0.0889 s); 1,728,000 / 768 = 2,250 steps
        evs = [ev("run_start", 0), ev("tracked_stats", 90000, {"throughput": 9600.0}),
               ev("eval_start", 90000, 864000), ev("eval_stop", 100000, 864000),
               ev("eval_start", 190000, 1728000), ev("eval_stop", 200000, 1728000),
               ev("run_stop", 200000), ev("train_samples", 200000, 1728000)]
        st, method, n = mb.step_time(evs, "bert", 768, 512)
        self.assertAlmostEqual(st, 0.08, places=12)
        self.assertEqual((method, n), ("train_time", 2250))
        # an eval_start with no eval_stop is no evaluation span: the run's throughput is used
        evs2 = [e for e in evs if not (e["key"] == "eval_stop")]
        self.assertEqual(mb.eval_spans(evs2), [])
        self.assertEqual(mb.step_time(evs2, "bert", 768, 512), (0.08, "run_throughput", 2250))
        self.assertEqual(mb.eval_spans(evs), [(90000, 100000), (190000, 200000)])

    def test_bert_steady_v30_eval_marks(self):
        # testdata/bert_steady/v30_eval_marks.txt, as NVIDIA's v3.0 logs: eval_accuracy marks only,
        # samples in metadata epoch_num, global batch 3,072. The first block, run_start 100 ms to
        # the first mark 2,000 ms (153,600 samples = 50 steps at 38 ms: warm-up), is left out.
        # Marks 2,000 / 3,100 / 4,200 / 5,300 ms at 153,600 / 307,200 / 460,800 / 614,400 samples
        # (rank 8's copy of the 3,100 ms mark is read once): 3,300 ms for 460,800 samples,
        # 3,072 x 3.3 s / 460,800 = 0.022 s a step over 150 steps, the evaluations in it
        # (v3.0 does not bracket them). The run's throughput, 614,400 / 5.4 s = 113,777.8
        # samples/s, would give 3,072 / 113,777.8 = 0.027 s (the first block in it).
        with open(os.path.join(HERE, "testdata", "bert_steady", "v30_eval_marks.txt")) as f:
            evs = mb.mllog_events(f.read())
        st, method, n = mb.step_time(evs, "bert", 3072, 512)
        self.assertAlmostEqual(st, 0.022, places=12)
        self.assertEqual((method, n), ("steady_eval_marks", 150))
        # with fewer than two marks the fallback is the run's throughput
        one = [e for e in evs if e["key"] != "eval_accuracy" or e["time_ms"] == 2000]
        st, method, n = mb.step_time(one, "bert", 3072, 512)
        self.assertAlmostEqual(st, 0.027, places=12)
        self.assertEqual((method, n), ("run_throughput", 200))

    def test_bert_steady_v31_eval_spans(self):
        # testdata/bert_steady/v31_eval_spans.txt, as NVIDIA's v3.1 logs: eval_start/eval_stop
        # around each evaluation (5 ms), eval_accuracy after it; global batch 13,888; each block
        # 277,760 samples = 20 steps. First block 0-700 ms (35 ms a step) left out. Marks at
        # 705 / 1,070 / 1,435 ms, 277,760 / 555,520 / 833,280 samples: 730 ms less the two
        # evaluations in it (1,065-1,070, 1,430-1,435) = 720 ms for 555,520 samples,
        # 13,888 x 0.72 / 555,520 = 0.018 s over 40 steps. train_time (the fallback) would be
        # 13,888 x (1,435 - 15) ms / 833,280 = 0.023667 s.
        with open(os.path.join(HERE, "testdata", "bert_steady", "v31_eval_spans.txt")) as f:
            evs = mb.mllog_events(f.read())
        st, method, n = mb.step_time(evs, "bert", 13888, 512)
        self.assertAlmostEqual(st, 0.018, places=12)
        self.assertEqual((method, n), ("steady_train_time", 40))
        # an evaluation left unbracketed (its eval_stop lost) makes the span hold it: 730 - 5 ms
        evs2 = [e for e in evs if not (e["key"] == "eval_stop" and e["time_ms"] == 1070)]
        st, method, n = mb.step_time(evs2, "bert", 13888, 512)
        self.assertAlmostEqual(st, 13888 * 0.725 / 555520, places=12)
        self.assertEqual(method, "steady_eval_marks")

    def test_no_timing(self):
        self.assertEqual(mb.step_time([ev("global_batch_size", 1, 8)], "gpt3", 8, 2048), (None, "no timing in log", 0))
        self.assertEqual(mb.step_time([], "gpt3", 0, 2048), (None, "no global_batch_size", 0))

    def test_mllog_lines_with_rank_prefix_and_junk(self):
        text = ('0: :::MLLOG {"key": "global_batch_size", "value": 8, "time_ms": 1}\n'
                'plain line\n'
                ':::MLLOG {"broken\n'
                '  12: :::MLLOG {"key": "seed", "value": 3, "time_ms": 2}\n')
        self.assertEqual([e["key"] for e in mb.mllog_events(text)], ["global_batch_size", "seed"])


class BertLogArgsTest(unittest.TestCase):
    # Dell's v3.0 4xXE8545x4A100-SXM-40GB result_0.txt prints run_pretraining.py's
    # Namespace (cut here to its switches); its folder holds two 4-node configs of
    # global batch 448, and the first one's EXTRA_PARAMS has no fused flags.
    LOG = (" 0: Namespace(allreduce_post_accumulation=True, cuda_graph_mode='segmented', "
           "dense_seq_output=True, device=device(type='cuda', index=0), distributed_lamb=True, "
           "dwu_group_size=0, dwu_overlap_reductions=False, exchange_padding=True, fp16=True, "
           "fused_bias_fc=True, fused_bias_fc_loss_head=False, fused_bias_mha=True, "
           "fused_dropout_add=True, fused_gemm_gelu=True, fused_mha=False, pad_fmha=False, "
           "unpad=True, unpad_fmha=True, use_cuda_graph=False)\n")

    def test_switches_as_printed(self):
        got = mb.bert_log_args(["no namespace here\n", self.LOG])
        # fused_bias_fc_loss_head and dwu_group_size are not switches the bench reads;
        # dwu_overlap_reductions is the flag --dwu-overlap-reductions
        want = {"allreduce_post_accumulation": True, "dense_seq_output": True, "distributed_lamb": True,
                "dwu-overlap-reductions": False, "exchange_padding": True, "fp16": True,
                "fused_bias_fc": True, "fused_bias_mha": True, "fused_dropout_add": True,
                "fused_gemm_gelu": True, "fused_mha": False, "pad_fmha": False, "unpad": True,
                "unpad_fmha": True, "use_cuda_graph": False, "cuda_graph_mode": "segmented"}
        self.assertEqual(got, want)
        self.assertEqual(mb.bert_log_args(["no namespace\n"]), {})

    def test_namespace_cut_by_the_launcher(self):
        # a multi-node job's log (Dell's 4- and 32-node XE8545 rows): the line cut in
        # two under rank 0's prefix, rank 13's line between
        log = (" 0: Namespace(device=device(type='cuda', index=0), fused_bias_fc=True, gradient_accumulation_ste\n"
               "13: device: cuda:1 n_gpu: 16, distributed training: True\n"
               " 0: ps=2, unpad=True, use_cuda_graph=False)\n")
        self.assertEqual(mb.namespace_text(log), "Namespace(device=device(type='cuda', index=0), fused_bias_fc=True, "
                                                 "gradient_accumulation_steps=2, unpad=True, use_cuda_graph=False)")
        self.assertEqual(mb.bert_log_args([log]), {"fused_bias_fc": True, "unpad": True, "use_cuda_graph": False})
        # one that never closes is not read
        self.assertEqual(mb.namespace_text(" 0: Namespace(fp16=True, unpad\n"), "")

    def test_recipe_from_the_log_without_a_config(self):
        # no config matched (Dell's 32-node row): the columns from the printed switches
        evs = [ev("d_batch_size", 1, 24), ev("gradient_accumulation_steps", 1, 1)]
        r = mb.bert_recipe(None, None, {}, evs, 3072, 128, [self.LOG])
        self.assertEqual(r["recipe_flags"], "allreduce_post_accumulation dense_seq_output distributed_lamb "
                                            "exchange_padding fp16 fused_bias_fc fused_bias_mha fused_dropout_add "
                                            "fused_gemm_gelu unpad unpad_fmha")
        # 3072 / (24 x 1 x 128) = 1 sample a sequence
        want = {"mbs": 24, "grad_accum": 1, "packing": 1, "precision": "fp16", "fused_mha": "1", "unpad": "1",
                "dense_seq_output": "1", "cuda_graph": "0", "dist_optimizer": "1", "from_log_config": "recipe_flags"}
        for k, v in want.items():
            self.assertEqual(r[k], v, k)
        self.assertNotIn("cuda_graph_mode", r)  # the mode only where graphs run
        # neither a config nor a printed Namespace: the log's batch only
        self.assertNotIn("recipe_flags", mb.bert_recipe(None, None, {}, evs, 3072, 128, ["x\n"]))


class ShellAndYamlTest(unittest.TestCase):
    def test_expand(self):
        env = {"A": "1"}
        self.assertEqual(mb._expand('"${MINIBS:=256}"', env), "256")
        self.assertEqual(env["MINIBS"], "256")
        self.assertEqual(mb._expand('"${MINIBS:=128}"', env), "256")  # already set: kept
        self.assertEqual(mb._expand("${B:-7}", env), "7")
        self.assertNotIn("B", env)
        self.assertEqual(mb._expand("x$A  # comment", env), "x1")
        self.assertEqual(mb._expand("'$A'", env), "$A")

    def test_resolve_yaml(self):
        used = []
        self.assertEqual(mb.resolve_yaml("${oc.decode:${oc.env:TP,1}}", {"TP": "4"}, used), "4")
        self.assertEqual(used, [])
        self.assertEqual(mb.resolve_yaml("${oc.decode:${oc.env:TP,1}}", {}, used), "1")
        self.assertEqual(used, ["TP"])
        self.assertIsNone(mb.resolve_yaml("${multiply:${oc.env:A},2}", {"A": "1"}))
        self.assertIsNone(mb.resolve_yaml("${oc.env:FP8_AMAX_ALGO}", {}))
        self.assertEqual(mb.resolve_yaml("False", {}), "False")

    def test_then_branch_with_else_skipped(self):
        lines = ["if [[ x ]]; then", "source a.sh", "else", "source b.sh", "fi", "if y; then", "source c.sh", "fi"]
        self.assertEqual(mb._then_branches_with_else(lines), {1})

    def test_rounds_and_parts(self):
        self.assertEqual(mb.round_of("/m/mlcommons+training_results_v4.1/repo"), "v4.1")
        self.assertEqual(mb.round_of("/m/mlcommons+training_results_v5.0/repo"), "v5.0")
        for held in ("/m/training_results_v5.1/repo", "/m/training_results_v5.2", "/m/training_results_v6.0"):
            with self.assertRaises(ValueError):
                mb.round_of(held)
        self.assertEqual(mb.part_of("v4.1"), "validation")
        self.assertEqual(mb.part_of("v4.1", "llama2_70b_lora"), "validation")
        for r in ("v3.0", "v3.1", "v4.0"):
            self.assertEqual(mb.part_of(r), "development")
        self.assertEqual(mb.part_of("v5.0", "llama31_405b"), "validation")
        self.assertEqual(mb.part_of("v5.0", "llama2_70b_lora", "MI325X"), "validation")
        self.assertEqual(mb.part_of("v5.0", "llama2_70b_lora", "MI300X"), "development")
        self.assertEqual(mb.part_of("v4.0", "llama2_70b_lora", "MI325X"), "development")
        for b in ("bert", "llama2_70b_lora"):
            self.assertEqual(mb.part_of("v5.0", b), "development")

    def test_v50_yaml_and_keys(self):
        # A config directly under benchmarks/<benchmark>/ finds the YAML
        # beside it; a folder with no YAML whose README names NVIDIA's
        # MLPerf container takes NVIDIA's implementation's; one that
        # names none takes nothing.
        files = {
            "Lenovo/benchmarks/llama2_70b_lora/config_B200_1x8.sh": "export TP=1\n",
            "Lenovo/benchmarks/llama2_70b_lora/conf/megatron_gpt_peft_tuning_config.yaml": "  fp8_params: True\n",
            "Lambda/benchmarks/llama2_70b_lora/implementations/b200/config_B200_1x8.sh": "export TP=1\n",
            "Lambda/benchmarks/llama2_70b_lora/implementations/b200/README.md": "export CONT=nvcr.io/nvdlfwea/mlperftv50/llama2_70b_lora-amd:20250416\n",
            "Other/benchmarks/llama2_70b_lora/implementations/b200/config_B200_1x8.sh": "export TP=1\n",
            "NVIDIA/benchmarks/llama2_70b_lora/implementations/n1/config_DGXB200_1x8.sh": "export TP=1\n",
            "NVIDIA/benchmarks/llama2_70b_lora/implementations/n1/conf/megatron_gpt_peft_tuning_config.yaml":
                "  fp8_params: ${oc.decode:${oc.env:FP8,True}}\n  enable_cuda_graph: ${oc.decode:${oc.env:MCORE_CUDA_GRAPH,False}}\n",
        }
        with tempfile.TemporaryDirectory() as d:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w") as f:
                    f.write(text)
            tree = mb.Tree(d)
            self.assertEqual(mb.yamls_for(tree, "Lenovo/benchmarks/llama2_70b_lora/config_B200_1x8.sh"), {"fp8_params": ["True"]})
            lam = "Lambda/benchmarks/llama2_70b_lora/implementations/b200/config_B200_1x8.sh"
            self.assertEqual(mb.yamls_for(tree, lam), {})
            self.assertEqual(mb.nvidia_yaml_for(tree, lam, "llama2_70b_lora"),
                             "NVIDIA/benchmarks/llama2_70b_lora/implementations/n1/config_DGXB200_1x8.sh")
            self.assertEqual(mb.nvidia_yaml_for(tree, "Other/benchmarks/llama2_70b_lora/implementations/b200/config_B200_1x8.sh", "llama2_70b_lora"), "")
        # MCORE_CUDA_GRAPH is its own column; LAYER_CUDA_GRAPH stays cuda_graph;
        # ASYM_PP_EMBED / ASYM_PP_LOSS the pipeline split's end layers.
        keys, _ = mb.plan_keys({"LAYER_CUDA_GRAPH": "0", "MCORE_CUDA_GRAPH": "1", "ASYM_PP_EMBED": "True", "ASYM_PP_LOSS": "True"}, {})
        self.assertEqual((keys["cuda_graph"], keys["mcore_cuda_graph"], keys["pp_embed_layer"], keys["pp_loss_layer"]), ("0", "1", "True", "True"))

    def test_v50_405b_and_amd_configs(self):
        # GB200 405B configs: FP8_PARAM_GATHER is fp8_params; the global
        # batch MINIBS x GPUs / (tp x pp x cp) with CONTEXT_PARALLEL:
        # 48 x 1024 / (4 x 8 x 2) = 768
        keys, _ = mb.plan_keys({"FP8_PARAM_GATHER": "True"}, {})
        self.assertEqual(keys["fp8_params"], "True")
        env = {"MINIBS": "48", "TENSOR_MODEL_PARALLEL": "4", "PIPELINE_MODEL_PARALLEL": "8", "CONTEXT_PARALLEL": "2"}
        self.assertEqual(mb.config_gbs(env, 1024), 768)
        self.assertEqual(mb.config_gbs({"MINIBS": "1", "TP": "1", "PP": "1", "CP": "1"}, 8), 8)
        self.assertEqual(mb.gpu_of("AMD Instinct MI300X 192GB HBM3"), "MI300X")
        self.assertEqual(mb.gpu_of("AMD Instinct MI325X 256GB HBM3E DLC"), "MI325X")

    def test_chains_and_a_sourced_file_of_a_sibling_folder(self):
        # AMD's `export ACG=full && export ACM=block && export ACL=21`; a
        # config sourcing config_common_cg.sh its folder lacks, held by the
        # one other folder of the same container (_ngc25.04)
        with tempfile.TemporaryDirectory() as d:
            impl = "NV/benchmarks/llama31_405b/implementations"
            files = {
                impl + "/a_ngpu256_ngc25.04_nemo/config_X.sh":
                    "source $(dirname ${BASH_SOURCE[0]})/config_common_cg.sh\nexport ACG=full && export ACM=block && export ACL=21\n",
                impl + "/a_ngpu512_ngc25.04_nemo/config_common_cg.sh": "export FULL_CUDA_GRAPH=True\n",
                impl + "/a_ngpu64_ngc25.01_nemo/config_common_cg.sh": "export FULL_CUDA_GRAPH=False\n",
            }
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w") as f:
                    f.write(text)
            env = mb.parse_config(mb.Tree(d), impl + "/a_ngpu256_ngc25.04_nemo/config_X.sh")
        self.assertEqual((env["ACG"], env["ACM"], env["ACL"], env["FULL_CUDA_GRAPH"]), ("full", "block", "21", "True"))

    def test_gpu_and_memory(self):
        self.assertEqual(mb.gpu_of("NVIDIA H100-SXM5-80GB"), "H100")
        self.assertEqual(mb.gpu_of("NVIDIA B200-SXM-180GB"), "B200")
        self.assertEqual(mb.gpu_of("NVIDIA L40S"), "L40S")
        self.assertEqual(mb.gpu_of("TPU v5p"), "")
        # BERT's other NVIDIA GPUs, the longer names first (L40S, L40, then L4)
        for name, want in (("NVIDIA L40", "L40"), ("NVIDIA L4", "L4"), ("NVIDIA A30", "A30"),
                           ("NVIDIA RTX A5000", "A5000"), ("NVIDIA GeForce RTX 4090", "RTX4090"),
                           ("AMD Radeon RX 7900 XTX", ""), ("Intel Gaudi2", ""), ("N/A", "")):
            self.assertEqual(mb.gpu_of(name), want, name)
        self.assertEqual(mb.mem_gib("81559 MiB"), "79.6")  # 81559 / 1024
        self.assertEqual(mb.mem_gib("141 GB"), "131.3")  # 141e9 / 2^30


class HostNetworkTest(unittest.TestCase):
    """The compute network a system description states (host_networking of
    the v3.0-v4.0 descriptions, as written there), worked by hand."""

    def test_compute_network(self):
        cases = (
            # Dell XE8545: one item, 2 cards of 200 Gb/s
            ("2x ConnectX-6 IB HDR 200Gb/Sec", (2, 200.0)),
            # DGX H100: the Compute: label's text, not Storage's 2 x 400
            ("Storage: 2x ConnectX-7 IB NDR 400Gb/s, Compute: 8x ConnectX-7 IB NDR 400Gb/s, "
             "Management: 100Gb/s Ethernet NIC", (8, 400.0)),
            ("Storage+Management: 1x NVIDIA BlueField 2 DPU 100Gb/s, Compute: 8x NVIDIA ConnectX-7 IB NDR 400Gb/s",
             (8, 400.0)),
            # Clemson: spaced count and rate; HDR100's digits are no rate
            ("Management: 1 x 25 Gb / Sec Ethernet, Compute: 1 x ConnectX - 6 IB HDR100 100 Gb / Sec", (1, 100.0)),
            # no label: the widest item, 8 x 400 = 3,200 over 1 x 80
            ("1x Ethernet 80Gb/Sec, 8x NVIDIA NDR (400Gb/s)", (8, 400.0)),
            # NVIDIA's L40S nodes: 2 x 400 east-west = 800 over 1 x 200
            ("BF3 200Gbps for NS and 2xBF3 400Gbps for EW", (2, 400.0)),
            # Dell R750xa: one Omni-Path card ("100 Series" is a model, no rate)
            ("1x Cornelis Networks Omni-Path HFI Adapter 100 Series 100Gb/Sec", (1, 100.0)),
            ("8x 200Gbe Infiniband, 2x 10GbE Ethernet", (8, 200.0)),
            # bytes a second are not a line rate; no rate at all: None
            ("ROCE2; Data bandwidth for GPU-PCIe: 504 GB/s; PCIe-NIC: 500 GB/s", None),
            ("Ethernet, Infiniband", None),
            ("", None),
        )
        for text, want in cases:
            self.assertEqual(mb.compute_network(text), want, text)

    def test_host_network_falls_back_to_topology(self):
        # HPE's XD670: no rate in host_networking, none in
        # host_network_card_count, 8 x 200 in host_networking_topology
        sysjson = {"host_networking": "Infiniband, Ethernet", "host_network_card_count": "",
                   "host_networking_topology": "8x 200Gbe Infiniband, 2x 10GbE Ethernet"}
        self.assertEqual(mb.host_network(sysjson), (8, 200.0, "8x 200Gbe Infiniband, 2x 10GbE Ethernet"))
        self.assertEqual(mb.host_network({"host_networking": "Gig Ethernet"}), ("", "", ""))


class _Files:
    """A Tree of file names only (candidate_configs reads none)."""

    def __init__(self, names):
        self.names = sorted(names)

    def files(self):
        return self.names


class CandidateConfigsTest(unittest.TestCase):
    def test_benchmark_folder_singular(self):
        # GIGABYTE's v3.0, GigaComputing's and Quanta's BERT code sits under
        # benchmark/, not benchmarks/: both are read; a common file, a
        # vendored Megatron-LM's config and another benchmark's are not.
        tree = _Files([
            "GIGABYTE/benchmark/bert/implementations/pytorch/config_G593-SD0_1x8x48x1_pack.sh",
            "GIGABYTE/benchmark/bert/implementations/pytorch/config_G593-SD0_common.sh",
            "GIGABYTE/benchmark/bert/implementations/pytorch/run_and_time.sh",
            "ACME/benchmarks/bert/implementations/pytorch/config_DGXH100_1x8x48x1_pack.sh",
            "ACME/benchmarks/gpt3/implementations/Megatron-LM/config_x.sh",
        ])
        self.assertEqual(mb.candidate_configs(tree, "GIGABYTE", "bert"),
                         ["GIGABYTE/benchmark/bert/implementations/pytorch/config_G593-SD0_1x8x48x1_pack.sh"])
        self.assertEqual(mb.candidate_configs(tree, "ACME", "bert"),
                         ["ACME/benchmarks/bert/implementations/pytorch/config_DGXH100_1x8x48x1_pack.sh"])
        self.assertEqual(mb.candidate_configs(tree, "ACME", "gpt3"), [])


class _Texts(_Files):
    """A Tree of files with their text."""

    def __init__(self, texts):
        super().__init__(texts)
        self.texts = texts

    def read(self, name):
        return self.texts[name]


class BertRecipeTest(unittest.TestCase):
    def test_run_and_time_in_scripts(self):
        # Lenovo's v3.1 SR675v3-8xH100_PCIe_80GB_350W keeps its
        # run_and_time.sh in scripts/ beside the config: its --fp16
        # --distributed_lamb are read (its logs print
        # distributed_lamb=True); a commented line is not.
        impl = "Lenovo/benchmarks/bert/implementations/SR675v3-8xH100_PCIe_80GB_350W"
        cfg = impl + "/config_DGXH100_1x8x48x1_pack.sh"
        tree = _Texts({cfg: "", impl + "/scripts/run_and_time.sh":
                       "BERT_CMD=\"python run_pretraining.py --fp16 \\\n --distributed_lamb --max_seq_length=512\"\n"
                       "#    BERT_CMD=\"${BERT_CMD} --allreduce_post_accumulation\"\n"})
        mb._INDEX.clear()
        out = mb.bert_recipe(tree, cfg, {"EXTRA_PARAMS": "--use_cuda_graph --cuda_graph_mode 'segmented'"}, [], 768, 8)
        self.assertEqual(out["recipe_flags"], "cuda_graph_mode distributed_lamb fp16 use_cuda_graph")
        self.assertEqual((out["dist_optimizer"], out["precision"], out["seq_len"], out["cuda_graph_mode"]),
                         ("1", "fp16", 512, "segmented"))


    def test_graph_iterations_of_full_iteration_graphs(self):
        # NVIDIA's eos config (config_DGXH100_434x8x2x1_pack_clipafter.sh): --cuda_graph_mode
        # 'full_iteration' --max_iterations_per_graph 1 -> 1 step a graph; the same mode without
        # the switch -> run_pretraining.py's default 4; segmented graphs -> no column.
        cfg = "NVIDIA/benchmarks/bert/implementations/pytorch/config_DGXH100_434x8x2x1_pack_clipafter.sh"
        tree = _Texts({cfg: ""})
        mb._INDEX.clear()
        full = "--use_cuda_graph --pad_fmha --cuda_graph_mode 'full_iteration' --max_iterations_per_graph 1 --packed_samples"
        out = mb.bert_recipe(tree, cfg, {"EXTRA_PARAMS": full}, [], 6944, 3472)
        self.assertEqual((out["cuda_graph_mode"], out["graph_iterations"]), ("full_iteration", 1))
        out = mb.bert_recipe(tree, cfg, {"EXTRA_PARAMS": full.replace(" --max_iterations_per_graph 1", "")}, [], 6944, 3472)
        self.assertEqual(out["graph_iterations"], 4)
        out = mb.bert_recipe(tree, cfg, {"EXTRA_PARAMS": "--use_cuda_graph --cuda_graph_mode 'segmented'"}, [], 768, 8)
        self.assertNotIn("graph_iterations", out)


class BuildTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tree = mb.Tree(FIXTURE)
        cls.rows, cls.runs = mb.build([("v4.1", tree)])
        cls.by = {r["system"] + "/" + r["benchmark"]: r for r in cls.rows}

    def test_only_nvidia_gpus(self):
        self.assertEqual(sorted(self.by), ["acme_n1/bert", "acme_n1/llama2_70b_lora", "acme_n2/llama2_70b_lora", "acme_n4/gpt3"])
        self.assertEqual(len(self.runs), 8)

    def test_bert_row(self):
        r = self.by["acme_n1/bert"]
        # result_0 0.1 s (run_throughput), result_1 0.12 s (run_timestamps), result_2 0.08 s
        # (steady_train_time: from its first eval_accuracy mark, 100 s at 864,000 samples, to its
        # second, 200 s at 1,728,000, less the 190-200 s evaluation: 90 s for 864,000 samples,
        # 768 x 90 / 864,000 = 0.08): median 0.1
        self.assertEqual((r["step_s"], r["step_s_min"], r["step_s_max"], r["n_results"]), ("0.1000", "0.0800", "0.1200", 3))
        self.assertEqual(r["step_method"], "run_throughput+run_timestamps+steady_train_time")
        # 48 x 8 GPUs x 1 x PACKING_FACTOR 2 = 768, the log's global batch; the DGXA100 config's 56 x 8 = 448 is not
        self.assertEqual(r["config_match"], "nodes, GPUs and global batch")
        self.assertTrue(r["config_path"].endswith("bert/implementations/pytorch/config_DGXH100_1x8x48x1_pack.sh"))
        # packing 768 / (48 x 1 x 8) = 2; --fp16 and --distributed_lamb from run_and_time.sh, the
        # commented --bf16 not; the phase-1 comment's 128 not the sequence
        want = {"tp": 1, "pp": 1, "dp": 8, "mbs": 48, "grad_accum": 1, "packing": 2, "gbs": 768, "seq_len": 512,
                "precision": "fp16", "optimizer": "lamb", "fused_mha": "1", "unpad": "0", "dense_seq_output": "1",
                "cuda_graph": "1", "cuda_graph_mode": "segmented", "dist_optimizer": "1", "ddp": "1",
                "gpu": "H200", "lora_rank": "", "fp8": "", "same_logs_as": ""}
        for k, v in want.items():
            self.assertEqual(r[k], v, k)
        self.assertEqual(r["recipe_flags"], "cuda_graph_mode dense_seq_output distributed_lamb fp16 fused_bias_fc "
                                            "fused_bias_mha packed_samples pad_fmha use_cuda_graph")

    def test_same_runs_found_by_their_times(self):
        a = [ev("run_start", 5), ev("run_stop", 9)]
        self.assertEqual(mb.run_span(a), (5, 9))
        self.assertIsNone(mb.run_span(a[:1]))

    def test_lora_row(self):
        r = self.by["acme_n2/llama2_70b_lora"]
        # result_0: throughput 8, 10, 16 -> median 10 samples/s, batch 2 -> 0.2 s;
        # result_1: train_loss every 20 steps at 4, 5, 4 s -> 0.2 s
        self.assertEqual((r["step_s"], r["step_s_min"], r["step_s_max"], r["n_results"]), ("0.2000", "0.2000", "0.2000", 2))
        self.assertEqual(r["step_method"], "throughput+train_loss_timestamps")
        self.assertEqual(r["config_match"], "named in the log")
        self.assertTrue(r["config_path"].endswith("nemo/config_DGXH100_2x8x1xtp4pp1cp2.sh"))
        # NeMo/examples' vendored YAML (micro_batch_size 4, four targets) is not the run's
        want = {"tp": "4", "pp": "1", "cp": "2", "dp": 2, "mbs": "1", "gbs": 2, "sp": "0", "seq_len": "8192",
                "fp8": "1", "fp8_format": "hybrid", "fp8_amax_history": "32", "fp8_params": "1",
                "recompute_granularity": "full", "recompute_method": "uniform", "recompute_layers": "21",
                "cuda_graph": "1", "cpu_offload": "0",
                "alloc_conf": "expandable_segments:True,garbage_collection_threshold:0.9",
                "lora_rank": 16, "lora_targets": "['attention']", "gpus": 16, "nodes": 2, "gpus_per_node": 8,
                "no_transpose_cache": "1", "hidden_dropout": "0.0", "lora_dropout": "0.1", "lora_a2a": "1", "cpu_offload_layers": "20",
                "gpu": "H100", "part": "validation", "framework": "NVIDIA NeMo Framework Release 24.09"}
        for k, v in want.items():
            self.assertEqual(r[k], v, k)
        # pp, sp, the sequence, the FP8 format and the recompute method are the YAML's defaults
        # (the LoRA rank too, but the log states it); mbs is the log's printed config
        self.assertEqual(r["yaml_defaults"].split(), ["pp", "sp", "seq_len", "fp8_hybrid", "recompute_method",
                                                      "lora_dropout", "cpu_offload_layers"])
        self.assertEqual(r["from_log_config"], "mbs")

    def test_gpt3_row(self):
        r = self.by["acme_n4/gpt3"]
        # result_0: train_step_timing 9, 3, 4 -> 4; result_1: the second block, 20 s over 4 steps -> 5
        self.assertEqual((r["step_s"], r["step_s_min"], r["step_s_max"]), ("4.5000", "4.0000", "5.0000"))
        self.assertEqual(r["step_method"], "block_timestamps+train_step_timing")
        self.assertEqual(r["config_match"], "nodes, GPUs and global batch")
        # the else branch's config_common.sh, not config_common_v31.sh
        want = {"tp": "4", "pp": "8", "vp": "12", "dp": 1, "mbs": "1", "gbs": 64, "seq_len": 2048, "sp": "1",
                "fp8": "1", "fp8_params": "1", "dist_optimizer": "1", "cuda_graph": "0", "lora_rank": "",
                "lora_dropout": "", "lora_a2a": "", "no_transpose_cache": "", "hidden_dropout": "",
                # config_common.sh's NVTE_ exports (async normalized to 1/0)
                "amax_dp_interval": "0", "amax_async": "1",
                # config_common.sh's export CUDA_DEVICE_MAX_CONNECTIONS=1, as written
                "connections": "1",
                # the Dockerfile beside the config: its ARG <name>_REVISION lines (indented one too)
                "te_revision": "v1.6rc1", "nemo_revision": "v2.0.0.rc0.beta", "megatron_revision": "core_v0.7.0.beta"}
        for k, v in want.items():
            self.assertEqual(r[k], v, k)
        # the LoRA systems' folder has no Dockerfile: no revision
        self.assertEqual(self.by["acme_n1/llama2_70b_lora"]["te_revision"], "")
        # the LoRA configs export no CUDA_DEVICE_MAX_CONNECTIONS: ""
        self.assertEqual(self.by["acme_n1/llama2_70b_lora"]["connections"], "")
        self.assertEqual(self.by["acme_n1/llama2_70b_lora"]["te_revision"], "")

    def test_plan_from_printed_config_when_no_script(self):
        r = self.by["acme_n1/llama2_70b_lora"]
        self.assertTrue(r["config_match"].startswith("none: "))
        self.assertEqual((r["tp"], r["cp"], r["mbs"], r["fp8"], r["dp"]), ("2", "1", "1", "1", 4))
        self.assertEqual(r["from_log_config"], "tp cp mbs fp8 lora_targets")
        self.assertEqual(r["lora_targets"], "['attention', 'mlp_fc1']")  # a block list in the printed config
        self.assertEqual((r["gpu"], r["gpu_mem_gib"], r["step_s"]), ("H200", "131.3", "3.2000"))  # 8 / 2.5

    def test_command_writes_both_tables(self):
        with tempfile.TemporaryDirectory() as d:
            mirror = os.path.join(d, "training_results_v4.1")
            os.symlink(FIXTURE, mirror)
            out = os.path.join(d, "out")
            p = subprocess.run([sys.executable, os.path.join(HERE, "mlperf_bench.py"), "--out", out, mirror],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(out, "runs.csv")) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(list(rows[0].keys()), mb.COLUMNS)
            self.assertEqual(len(rows), 4)
            with open(os.path.join(out, "logs.csv")) as f:
                self.assertEqual(len(list(csv.DictReader(f))), 8)
            held = os.path.join(d, "training_results_v5.1")
            os.symlink(FIXTURE, held)
            p = subprocess.run([sys.executable, os.path.join(HERE, "mlperf_bench.py"), "--out", out, held],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("held out", p.stderr)


if __name__ == "__main__":
    unittest.main()
