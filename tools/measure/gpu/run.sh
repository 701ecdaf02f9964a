#!/bin/sh
# make gpu: everything a lent GPU settles, in one command (docs/hardware.md,
# "make gpu"), within about 8 minutes on one H100 or H200. Each step runs under its
# own time limit and the run goes on when one fails; what each wrote goes
# to OUT, and summary.json says what ran, how long, and why a step did not.
#
#   1. layerbench: one block of each Megatron H100 row timed against
#      placer's per-layer prediction (tools/measure/layerbench), then placer
#      report layers on them: the GEMM efficiency they give;
#   2. fidelity: the zoo's real training steps at full and quarter batch,
#      with torch.profiler, against placer eval (tools/measure/fidelity);
#   3. hw bench: bin/placer-cuda's measured hardware profile (the run-time
#      cuBLAS);
#   1b. kernelbench: the kernels one by one (FP8, grouped GEMMs, what
#      sits between the blocks);
#   1c. sustained: blocks held for seconds, with and without idle
#      shares, beside nvidia-smi (clocks under the power cap);
#   1g. longattn, hflayer: attention at long sequences and a ring's
#      chunks; transformers' own decoder layers (kernelbench);
#   1d. moehost: a whole eager MoE layer's wall time against its
#      kernels' busy time;
#   4. torchexport --profile on CUDA: ResNet-50's step with its kernels'
#      measured times and a cost table (graph/testdata/profile's format);
#   5. placer profile of a Llama 3.2 1B layer, Megatron's 1.7B row's,
#      Qwen3-30B-A3B's experts and Llama 3 8B's layer in BF16 and under
#      FP8 current scaling (profile-llama1b, profile-megatron-1.7b,
#      profile-qwen3-30b-a3b, profile-llama3-8b-fp8: docs/profile.md),
#      Qwen3-30B-A3B's experts and Qwen2-7B's biased layer under FP8
#      (profile-qwen3-30b-a3b-fp8, profile-qwen2-7b-fp8);
#   5c. named steps (GPU_STEPS runs them, a plain run does not):
#      placer profile of GPT-OSS 120B's layers (sliding windows of 128
#      keys every other layer) and DeepSeek-V3's (latent attention), each
#      with eval --profile of a published plan, the windowed attention
#      alone (kernelbench --only window), and Llama 3.2 1B's layer
#      as transformers and torchtitan build it (--framework hf,
#      torchtitan);
#   5b. placer profile --model resnet50 (BF16, op by op) and eval
#      --profile of it (profile-ops-resnet50, eval-ops-resnet50);
#   6. llamasweep: a plain-PyTorch Llama 3.2 1B's step and peak memory
#      under micro-batches 1 to 8 with and without full recomputation.
#
# The next lent GPU's short list (the waiting list of 2026-11-27 ran:
# measurements/2026-11-27-h100): hw bench once more (its benchmark loop was
# split into named parts since, never run on a GPU), the held blocks
# again beside nvidia-smi, and the two profiles that stopped at their
# budget, whole:
#   GPU_STEPS=hw-bench,sustained,profile-megatron-1.7b,profile-qwen3-30b-a3b GPU_PROFILE_BUDGET=240s make gpu
# Not yet steps: a memory-bound kernel held for seconds (its power: the
# power model's MemoryPowerShare is an assumption), idle gaps of several
# lengths at one share (how long the power controller averages over),
# GPT-OSS's attention sinks (the profile's layers build none), Megatron-Core's layers under FP8
# (MoE and FP8 grouped GEMMs, the host a layer).
#
# The GPU host has no Go: build bin/placer and bin/placer-cuda here (make
# build; make test's cuda-check builds bin/placer-cuda) and carry bin/.
# The host's own torch runs the Python (TORCH_PY, default python3).
#
#   tools/measure/gpu/run.sh [OUT]           (make gpu)
#   tools/measure/gpu/run.sh --list [OUT]    (every step: name, limit, default or
#                                    named, command; runs none)
#   GPU_DEVICE=cpu GPU_QUICK=1 tools/measure/gpu/run.sh out/gpu-cpu
#                                    (the plumbing on a CPU: make gpu-check)
#
# GPU_QUICK=1 shrinks every step to a smoke test (one layerbench row, one
# model at two small batches, hw bench --quick); the figures are then
# meaningless, the files' shapes are not.
set -u
# --list: print every step (its name, time limit, whether a plain run
# takes it, its command line) and run nothing.
LIST=0
if [ "${1:-}" = "--list" ]; then
	LIST=1
	shift
fi
OUT=${1:-out/gpu}
PY=${TORCH_PY:-python3}
DEVICE=${GPU_DEVICE:-cuda}
QUICK=${GPU_QUICK:-0}
BIN=${PLACER:-bin/placer}
CUDA_BIN=${PLACER_CUDA:-bin/placer-cuda}
if [ "$LIST" = 0 ]; then
	mkdir -p "$OUT"
	: > "$OUT/steps.jsonl"
fi

# step NAME LIMIT_S CMD...: runs CMD under a time limit, its output in
# OUT/NAME.log, one line of JSON about it in OUT/steps.jsonl.
# GPU_STEPS=a,b,...: only those steps (the others leave no line), for a
# session whose device time is short.
step() {
	name=$1
	limit=$2
	shift 2
	if [ -n "${GPU_STEPS:-}" ]; then
		case ",$GPU_STEPS," in
		*",$name,"*) ;;
		*) return 0 ;;
		esac
	fi
	if [ "$LIST" = 1 ]; then
		printf '%s\t%s\t%s\t%s\n' "$name" "$limit" "${STEP_KIND:-default}" "$*"
		return 0
	fi
	echo "gpu: $name (at most ${limit} s)" >&2
	t0=$(date +%s)
	timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
	rc=$?
	t1=$(date +%s)
	status=ok
	[ $rc -eq 124 ] && status=timeout
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && status=failed
	printf '{"step": "%s", "status": "%s", "exit": %d, "seconds": %d, "log": "%s"}\n' "$name" "$status" "$rc" "$((t1 - t0))" "$OUT/$name.log" >> "$OUT/steps.jsonl"
	packed
}

# packed: with GPU_TAR set (tools/measure/gpu/device.sh), everything in OUT so far
# as one archive, after every step: a run stopped at its limit still
# brings back what it measured, and the device tool brings back a few
# files only.
packed() {
	[ -n "${GPU_TAR:-}" ] && tar czf "$GPU_TAR.tmp" -C "$OUT" . && mv "$GPU_TAR.tmp" "$GPU_TAR"
	return 0
}

# named NAME LIMIT CMD...: a step that runs only where GPU_STEPS names it
# or GPU_NAMED=1 (make gpu-check's; a plain make gpu leaves it out: its
# default list is already past the 8 minutes), listed by --list as "named".
named() {
	case ",${GPU_STEPS:-}," in
	*",$1,"*) ;;
	*)
		[ "${GPU_NAMED:-0}" = 1 ] && { STEP_KIND=named step "$@"; return 0; }
		[ "$LIST" = 1 ] && [ -z "${GPU_STEPS:-}" ] && STEP_KIND=named step "$@"
		return 0
		;;
	esac
	STEP_KIND=named step "$@"
}

# skip NAME WHY: a step that cannot run here, said in steps.jsonl.
skip() {
	if [ "$LIST" = 1 ]; then
		printf '%s\t-\tskipped\t%s\n' "$1" "$2"
		return 0
	fi
	printf '{"step": "%s", "status": "skipped", "why": "%s"}\n' "$1" "$2" >> "$OUT/steps.jsonl"
	echo "gpu: $1 skipped: $2" >&2
}

if [ "$LIST" = 0 ] && [ ! -x "$BIN" ]; then
	echo "gpu: no $BIN: run make build where Go is and carry bin/" >&2
	exit 1
fi
export PLACER="$PWD/$BIN"

# 1. layerbench.
if [ "$QUICK" = 1 ]; then
	LB="--rows 1.7B --runs 1 --warmup 0"
	[ "$DEVICE" = cpu ] && LB="$LB --dtype float32"
else
	LB=""
fi
step layerbench 60 sh -c "$PY tools/measure/layerbench/layerbench.py --device $DEVICE --json $LB > $OUT/layerbench.jsonl"
# The blocks against the pod's kernels and the GEMM efficiency they give
# (placer report layers: the figure scale.Kernels.GEMM takes; no GPU time).
step layers-fit 30 sh -c "$BIN report layers --measured $OUT/layerbench.jsonl --json > $OUT/layers-fit.json"

# 1b. kernelbench: GEMMs at the rows' shard shapes, FP8 (tensorwise,
# rowwise, blockwise), grouped expert GEMMs, memory-bound kernels and what a
# step has between its blocks (tools/measure/kernelbench).
if [ "$QUICK" = 1 ]; then
	KB="--quick --runs 2 --warmup 1"
else
	KB=""
fi
step kernelbench 180 sh -c "$PY tools/measure/kernelbench/kernelbench.py --device $DEVICE --json $KB > $OUT/kernelbench.jsonl"

# 1c. sustained: what a GPU under held load keeps of its burst figures
# (docs/history.md, "Held, not burst"), the 1.7B and 70B blocks back to
# back and with the GPU idle 10%, 25% and 50% of the time, nvidia-smi's
# clocks and power beside them (CUDA only; about 150 s).
if [ "$DEVICE" = cpu ]; then
	skip sustained "needs a GPU and nvidia-smi (kernelbench --only sustained)"
else
	SU="--sustain 15 --sustain-rows 1.7B,70B --idle 0,0.1,0.25,0.5"
	[ "$QUICK" = 1 ] && SU="--quick --idle 0,0.5"
	step sustained 200 sh -c "nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active \
		--format=csv -lms 500 > $OUT/smi-sustained.csv 2>&1 & P=\$!; \
		$PY tools/measure/kernelbench/kernelbench.py --device $DEVICE --only sustained $SU --json > $OUT/sustained.jsonl; r=\$?; kill \$P; exit \$r"
fi

# 1d. moehost: a whole eager MoE layer at Megatron-Bridge's H100 rows'
# tokens a GPU, its wall time against its kernels' busy time (is
# Qwen3-30B-A3B's layer host-bound?; about 20 s).
if [ "$QUICK" = 1 ]; then
	MH="--quick --runs 2 --warmup 1"
else
	MH=""
fi
step moehost 60 sh -c "$PY tools/measure/kernelbench/kernelbench.py --device $DEVICE --only moehost --json $MH > $OUT/moehost.jsonl"

# 1e. host: what eager PyTorch's CPU costs per kernel it issues (by op
# kind, a module call, an autograd node), a device-to-host sync idle and
# behind a queued kernel, a CUDA graph's replay (the host model's rates,
# docs/performance-model.md; a few seconds).
step host 60 sh -c "$PY tools/measure/kernelbench/kernelbench.py --device $DEVICE --only host --json $MH > $OUT/host.jsonl"

# 1f. shapes: grouped expert GEMMs by tokens per expert, the zoo's
# depthwise, grouped, pointwise and dense convolutions, cuDNN LSTMs
# (kernels by shape; about a minute), small GEMMs in FP32, TF32 and BF16
# (none measured before).
step shapes 150 sh -c "$PY tools/measure/kernelbench/kernelbench.py --device $DEVICE --only tpe,conv,lstm,smallmm --json $MH > $OUT/shapes.jsonl"

# 1g. longattn: fused attention at long sequences and a context-parallel
# ring's chunks, and torch's load-balanced ring's two calls (two query
# chunks against one key chunk, one against two) as it passes them
# (Llama 3 8B's heads; about 50 s); hflayer: transformers'
# own decoder layers (Llama 3.2 1B, Llama 3 8B, Qwen3-30B-A3B's MoE), wall
# time against the GPU's busy time (the layer a user's framework builds,
# beside the profile's own; about 30 s).
step longattn 90 sh -c "$PY tools/measure/kernelbench/kernelbench.py --device $DEVICE --only longattn --json $MH > $OUT/longattn.jsonl"
step hflayer 90 sh -c "$PY tools/measure/kernelbench/kernelbench.py --device $DEVICE --only hflayer --json $MH > $OUT/hflayer.jsonl"

# 2. fidelity: full and quarter batch (the zoo's B and B/4).
if [ "$QUICK" = 1 ]; then
	step fidelity 240 "$PY" tools/measure/fidelity/fidelity.py --device "$DEVICE" --model resnet50 --batches 4,1 \
		--warmup 1 --steps 1 --profile-steps 1 --placer "$PLACER" --json -o "$OUT/fidelity.json"
else
	step fidelity 330 sh -c "for m in resnet50 inception_v3 vit_b_16 bert_base gpt2_small; do \
		B=\$(PYTHONPATH=python/placer_torch $PY -c \"from placer_torch import zoo; print(zoo.MODELS['\$m'].batch)\") || exit 1; \
		$PY tools/measure/fidelity/fidelity.py --device $DEVICE --model \$m --batches \$B,\$((B / 4)) --placer $PLACER --json -o $OUT/fidelity-\$m.json || exit 1; done"
fi

# 2b. fidelity beyond the zoo's five: the models whose steps a roofline
# misses most (RegNetY-1.6GF's grouped convolutions, EfficientNet-B0's and
# MobileNetV3's depthwise ones, an LSTM language model), one batch each
# (op level; about 40 s a model).
step fidelity-more 300 sh tools/measure/gpu/fidelity_more.sh "$OUT" "$DEVICE" "$QUICK"

# 3. hw bench (CUDA only).
if [ "$DEVICE" = cpu ]; then
	skip hw-bench "needs a GPU (bin/placer-cuda hw bench)"
elif [ ! -x "$CUDA_BIN" ]; then
	skip hw-bench "no $CUDA_BIN: make cuda where Go is (make test's cuda-check builds it) and carry bin/"
else
	HB=""
	[ "$QUICK" = 1 ] && HB="--quick"
	step hw-bench 30 "$CUDA_BIN" hw bench $HB --quiet --json --profile "$OUT/hw-profile.json"
fi

# 4. torchexport --profile on the device.
step torchexport-profile 45 "$PY" tools/dev/torchexport/torchexport.py --model resnet50 --device "$DEVICE" \
	--profile --profile-steps 2 --cost-table "$OUT/resnet50.costs.json" -o "$OUT/resnet50.json"

# 6. (run before the profiles: the shorter step, kept when a lease runs
# out) A plain-PyTorch Llama 3.2 1B trained on the GPU under each plan of a
# one-GPU sweep (placer_torch.profile.sweep: BF16 autocast, fused AdamW,
# global batch 16, micro-batch 1 to 8, with and without full
# recomputation): each plan's step and torch.cuda.max_memory_allocated
# and reserved, or oom, beside the placer eval command line of the same
# plan (the plain-PyTorch step and the peak as tests).
if [ "$QUICK" = 1 ]; then
	LS="--quick"
else
	LS="--shape llama3.2-1b --batch 16 --mbs 1,2,4,8 --recompute none,full"
fi
step llamasweep 240 sh -c "PYTHONPATH=python/placer_torch $PY -m placer_torch.profile.sweep --device $DEVICE $LS > $OUT/llamasweep.jsonl"

# 5. placer profile (docs/profile.md): a zoo-shaped Llama (Llama 3.2 1B's
# layer) and the Megatron H100 table's 1.7B row's layer (GPT, h 2304,
# 24 heads, seq 2048), each within its --budget of the GPU; the files
# are what eval and search --profile read, kept in measurements/.
# GPU_PROFILE_BUDGET: each profile's --budget (default 120s; a short
# lease's list runs them at 45s).
PB=${GPU_PROFILE_BUDGET:-120s}
[ "$QUICK" = 1 ] && PB=20s
step profile-llama1b 150 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $PB \
	--workload llama:layers=16,hidden=2048,heads=32,kv_heads=8,ffn=8192,seq=2048,vocab=128256,batch=64 \
	--out "$OUT/llama1b.profile.json"
step profile-megatron-1.7b 150 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $PB \
	--workload gpt:layers=24,hidden=2304,heads=24,seq=2048,vocab=131072,batch=512 \
	--out "$OUT/megatron-1.7b.profile.json"
# A mixture of experts' layer (Qwen3-30B-A3B's: 128 experts, top 8, QK
# norms) at each expert-parallel shard one GPU can time alone (ep 1 to 8:
# 128/ep experts, the tokens they get under forced balance), for the
# MoE rows placer predicts 3.4x too fast.
QE=""
[ "$QUICK" = 1 ] && QE="--ep 8" # a CPU's smoke test: 16 local experts, not 128
step profile-qwen3-30b-a3b 150 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $PB \
	--workload hf:graph/transformer/testdata/hf/qwen3-30b-a3b.json:seq=4096,batch=512 --mbs 1,2 --cp 1 $QE \
	--out "$OUT/qwen3-30b-a3b.profile.json"
# The Megatron H100 table's FP8 rows (Llama 3 8B and 70B, FP8 current
# scaling) priced from measured layers: Llama 3 8B's layer at the 8B
# row's shard (tp 1, micro-batch 1, sequence 8192, no recomputation) in
# BF16 and under --fp8 current (Transformer Engine's Float8CurrentScaling
# where the host's torch imports TE, else placer_torch.profile.fp8's
# torchao-style tensorwise scaling: the profile's software.fp8 says
# which). A step of its own: profile-megatron-1.7b times 126 BF16 shapes
# (7 tensor degrees x 3 micro-batches x 2 sequences x 3 recomputations)
# within its 120 s budget, and each timed twice more would leave shapes
# out (an estimate: no H100 has run that step yet).
if [ "$QUICK" = 1 ]; then
	F8="--workload llama:layers=1,hidden=64,heads=2,kv_heads=2,ffn=128,seq=32,vocab=256,batch=2 --repeats 1"
else
	F8="--workload llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256,batch=128"
fi
step profile-llama3-8b-fp8 150 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $PB \
	$F8 --tp 1 --mbs 1 --cp 1 --recompute none --fp8 current \
	--out "$OUT/llama3-8b-fp8.profile.json"
# FP8 profiles of layers with experts and with biases (placer_torch/
# profile/fp8.py: every linear but the router's in FP8, the experts'
# GEMMs through Transformer Engine's GroupedLinear where the host's torch
# imports TE, else torchao's FP8 grouped GEMM through
# torch._scaled_grouped_mm; the profile's software.fp8 says which), each
# in BF16 and under --fp8 current at one shard, then eval of the shard's
# plan on the profile (its "profile's FP8 layers" row; no GPU time):
# Qwen3-30B-A3B's MoE layer at ep 8 (16 of its 128 experts, top 8, 2,048
# token copies an expert at sequence 4096) and Qwen2-7B's layer (query,
# key and value biases) at tp 1, sequence 4096. Each: about 15 s to start
# and import torch (and TE), a few for the embedding, loss and optimizer,
# then 2 layer shapes of a few seconds: about 40 s, under a --budget of
# 60 s and a limit of 90 s (an estimate: no GPU has run them yet). Alone:
#   GPU_STEPS=profile-qwen3-30b-a3b-fp8,eval-qwen3-30b-a3b-fp8,profile-qwen2-7b-fp8,eval-qwen2-7b-fp8 make gpu
if [ "$QUICK" = 1 ]; then
	FQ="hf:tools/measure/gpu/qwen2-moe-tiny.json:seq=32,batch=2"
	FB="hf:tools/measure/gpu/qwen2-moe-tiny.json:seq=32,batch=2"
	FE="--ep 1 --repeats 1"
	FS="--gpus 1 --strategy tp=1,pp=1,dp=1,mbs=1,fp8=current"
	FPB=20s
else
	FQ="hf:graph/transformer/testdata/hf/qwen3-30b-a3b.json:seq=4096,batch=512"
	FB="hf:graph/transformer/testdata/hf/qwen2-7b.json:seq=4096,batch=128"
	FE="--ep 8"
	FS="--gpus 8 --strategy tp=1,pp=1,dp=8,ep=8,mbs=1,fp8=current"
	FPB=60s
fi
step profile-qwen3-30b-a3b-fp8 90 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $FPB \
	--workload "$FQ" --tp 1 $FE --mbs 1 --cp 1 --recompute none --fp8 current \
	--out "$OUT/qwen3-30b-a3b-fp8.profile.json"
step eval-qwen3-30b-a3b-fp8 30 sh -c "\"$BIN\" eval --workload \"$FQ\" --profile \"$OUT/qwen3-30b-a3b-fp8.profile.json\" \
	$FS > \"$OUT/qwen3-30b-a3b-fp8.eval.txt\""
step profile-qwen2-7b-fp8 90 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $FPB \
	--workload "$FB" --tp 1 --mbs 1 --cp 1 --recompute none --fp8 current \
	--out "$OUT/qwen2-7b-fp8.profile.json"
step eval-qwen2-7b-fp8 30 sh -c "\"$BIN\" eval --workload \"$FB\" --profile \"$OUT/qwen2-7b-fp8.profile.json\" \
	--gpus 1 --strategy tp=1,pp=1,dp=1,mbs=1,fp8=current > \"$OUT/qwen2-7b-fp8.eval.txt\""
# The layer Megatron-Core builds (placer profile --framework megatron,
# docs/profile.md "Another framework's layer"): its TE spec where the
# host's torch imports transformer_engine, else its local spec (the
# profile's software.layer says which), at Llama 3.2 1B's layer (tp 1,
# the GPU's one group) and Qwen3-30B-A3B's MoE layer (ep 1: its 128
# experts on the one GPU), beside profile-llama1b's and
# profile-qwen3-30b-a3b's own layer. megatron-core 0.16.1's folder (make
# venv-megatron) is PLACER_MEGATRON, else megatron beside the host's
# virtualenv; without it the step fails in one line.
if [ "$QUICK" = 1 ]; then
	MC="llama:layers=1,hidden=64,heads=2,kv_heads=2,ffn=128,seq=32,vocab=256,batch=2"
	MQ="llama:layers=1,hidden=64,heads=2,ffn=128,seq=32,vocab=256,batch=2,experts=4,topk=2,expert_ffn=64"
else
	MC="llama:layers=16,hidden=2048,heads=32,kv_heads=8,ffn=8192,seq=2048,vocab=128256,batch=64"
	MQ="hf:graph/transformer/testdata/hf/qwen3-30b-a3b.json:seq=4096,batch=512"
fi
step profile-llama1b-mcore 150 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $PB --framework megatron \
	--workload "$MC" --tp 1 --mbs 1,2 --cp 1 --recompute none,full --out "$OUT/llama1b.mcore.profile.json"
step profile-qwen3-30b-a3b-mcore 150 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $PB --framework megatron \
	--workload "$MQ" --tp 1 --mbs 1 --cp 1 --recompute none --out "$OUT/qwen3-30b-a3b.mcore.profile.json"

# 5c. The attention placer costs beyond causal GQA, each a placer profile
# of a whole layer at a published plan's shard and eval --profile of that
# plan (no GPU time), as the FP8 steps above:
# - profile-gpt-oss-window: GPT-OSS 120B's layers (64 query heads, 8
#   key-value, head 64, 128 experts top 4; every other layer a
#   sliding window of 128 keys, layers.window_of) at Megatron-Bridge
#   25.11's H100 row's shard (tp 1, ep 8: 16 local experts, seq 4096,
#   micro-batch 4, and 1), the 4 layers a profile stacks two windowed and
#   two full; the windowed ones through FlexAttention with the window's
#   block mask on CUDA (layers.windowed_attention), the work placer's
#   cost counts (the window's keys). Without GPT-OSS's attention sinks:
#   layers.py builds none. eval-gpt-oss-window: that row's plan
#   (pp 4, dp 16, ep 8, mbs 4 on 64 GPUs) on the profile.
# - window-attn: the attention alone (kernelbench --only window): GPT-OSS
#   120B's heads, window 128, micro-batch 1 at 4K, 16K and 64K tokens, as
#   the profile's windowed layers run it (FlexAttention, compiled: the
#   first call of each sequence compiles), as SDPA with the window as a
#   mask (to 16K) and causal over the whole sequence (an estimate of 60
#   to 120 s, most of it compiling: no GPU has run FlexAttention here;
#   limit 150 s).
# - profile-deepseek-v3-mla: DeepSeek-V3's layers (latent attention:
#   128 heads, query and key 192 = 128 + 64 rotary, value 128, the
#   query's and key-value's low-rank projections; 256 experts top 8, one
#   shared; its first layers dense) at ep 64 (DeepSeek-V3 Technical
#   Report, arXiv 2412.19437v1, section 3.2.1: 16-way pipeline, 64-way
#   expert parallelism; 4 local experts), tp 1, seq 4096, micro-batch 1.
#   eval-deepseek-v3-mla: pp 16 (first stage 1 layer, the other 60 four
#   each: placer's split, not DeepSeek's), ep 64, dp 128 on 2,048 GPUs,
#   global batch 15,360 (the report's section 4.2: its last batch size).
# - profile-llama1b-hf, profile-llama1b-titan: Llama 3.2 1B's layer as
#   transformers' LlamaDecoderLayer and torchtitan 0.2.2's TransformerBlock
#   build it (placer profile --framework hf|torchtitan; beside
#   profile-llama1b's own layer and profile-llama1b-mcore's), tp 1 (one
#   GPU), micro-batch 1 and 2. torchtitan from PLACER_FRAMEWORKS (make
#   venv-frameworks' folder) or frameworks beside the host's virtualenv;
#   without it the step fails in one line.
# Each about 45 s (profile-llama1b took 41 s and profile-qwen3-30b-a3b 44 s
# within a 45 s budget on the H100 of measurements/2026-11-27-h100), within
# a --budget of 60 s (GPU_NAMED_BUDGET) and a limit of 90 s: about 5 minutes
# for the seven with window-attn. Named steps (the default list is past
# the 8 minutes already):
#   GPU_STEPS=profile-gpt-oss-window,eval-gpt-oss-window,window-attn,profile-deepseek-v3-mla,eval-deepseek-v3-mla,profile-llama1b-hf,profile-llama1b-titan make gpu
NB=${GPU_NAMED_BUDGET:-60s}
if [ "$QUICK" = 1 ]; then
	NB=20s
	WW="llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128,seq=64,vocab=256,batch=2,window=16,window_every=2"
	WS="--tp 1 --mbs 1 --repeats 1"
	WE="--gpus 1 --strategy tp=1,pp=1,dp=1,mbs=1"
	WM="llama:layers=2,hidden=64,heads=2,ffn=128,seq=32,vocab=256,batch=2,kv_lora=32,rope_dim=16"
	WMS="--tp 1 --mbs 1 --repeats 1"
	WME="--gpus 1 --strategy tp=1,pp=1,dp=1,mbs=1"
	WF="$MC"
	WFS="--mbs 1 --repeats 1"
else
	WW="gpt-oss-120b:seq=4096,batch=512"
	WS="--tp 1 --ep 8 --mbs 1,4"
	WE="--cluster dgx-h100:8 --strategy tp=1,pp=4,dp=16,ep=8,mbs=4"
	WM="deepseek-v3:seq=4096,batch=15360"
	WMS="--tp 1 --ep 64 --mbs 1"
	WME="--cluster dgx-h100:256 --strategy tp=1,pp=16,dp=128,ep=64,mbs=1,first=1"
	WF="$MC"
	WFS="--mbs 1,2"
fi
named profile-gpt-oss-window 90 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $NB \
	--workload "$WW" $WS --cp 1 --recompute none --out "$OUT/gpt-oss-window.profile.json"
named eval-gpt-oss-window 30 sh -c "\"$BIN\" eval --workload \"$WW\" --profile \"$OUT/gpt-oss-window.profile.json\" \
	$WE > \"$OUT/gpt-oss-window.eval.txt\""
named window-attn 150 sh -c "PYTHONPATH=python/placer_torch $PY tools/measure/kernelbench/kernelbench.py --device $DEVICE --only window --json $MH > $OUT/window.jsonl"
named profile-deepseek-v3-mla 90 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $NB \
	--workload "$WM" $WMS --cp 1 --recompute none --out "$OUT/deepseek-v3-mla.profile.json"
named eval-deepseek-v3-mla 30 sh -c "\"$BIN\" eval --workload \"$WM\" --profile \"$OUT/deepseek-v3-mla.profile.json\" \
	$WME > \"$OUT/deepseek-v3-mla.eval.txt\""
named profile-llama1b-hf 90 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $NB --framework hf \
	--workload "$WF" --tp 1 $WFS --cp 1 --recompute none --out "$OUT/llama1b.hf.profile.json"
named profile-llama1b-titan 90 env TORCH_PY="$PY" "$BIN" profile --device "$DEVICE" --budget $NB --framework torchtitan \
	--workload "$WF" --tp 1 $WFS --cp 1 --recompute none --out "$OUT/llama1b.titan.profile.json"

# 5d. timm-val (named): the timm bench's validation part (docs/timm-bench.md)
# trained on this GPU as timm's benchmark.py trains it, at the batch and
# image size of timm's RTX 3090 files, model after model in the sample's
# hash order within a budget of 240 s (tools/measure/timmbench/timmbench.py
# measure). Here, after: timmbench.py report --measured OUT/timm-val.csv
# --hardware h100 (or h200) --out DIR, the validation part's figures on
# this GPU. timm comes from the host's Python or else from the wheel
# make gpu-carry puts in out/carry (pure Python; it imports torchvision,
# huggingface_hub and safetensors, which the device's image holds).
TV="--budget 240"
[ "$QUICK" = 1 ] && TV="--quick --limit 1 --budget 60"
named timm-val 300 sh -c "W=\$(ls out/carry/timm-*.whl 2>/dev/null | head -1); T=\${TMPDIR:-/tmp}/placer-timm; \
	if ! $PY -c 'import timm' 2>/dev/null && [ -n \"\$W\" ]; then rm -rf \$T && $PY -m zipfile -e \"\$W\" \$T || exit 1; fi; \
	PYTHONPATH=\$T $PY tools/measure/timmbench/timmbench.py measure --device $DEVICE --part val $TV -o $OUT/timm-val.csv"

# 5b. placer profile --model (docs/profile.md, Op graphs): the zoo's
# ResNet-50 at batch 32 in BF16 autocast, each op of its step timed on the
# GPU with its dispatch time, and placer eval --profile of it (each figure
# measured or modelled): what the profile costs in GPU time, and the
# step it predicts beside fidelity's measured step of the same model.
if [ "$QUICK" = 1 ]; then
	OM="--model mlp --steps 1"
else
	OM="--model resnet50 --batch 32 --precision bf16"
fi
step profile-ops-resnet50 150 env TORCH_PY="$PY" "$BIN" profile $OM --device "$DEVICE" \
	--out "$OUT/resnet50.ops.profile.json"
step eval-ops-resnet50 30 sh -c "\"$BIN\" eval --profile \"$OUT/resnet50.ops.profile.json\" --json > \"$OUT/resnet50.ops.eval.json\""

[ "$LIST" = 1 ] && exit 0

# The summary: every step's status and time, on stderr and in summary.json.
"$PY" - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
steps = [json.loads(l) for l in open(os.path.join(out, "steps.jsonl")) if l.strip()]
files = sorted(f for f in os.listdir(out) if not f.endswith(".log") and f not in ("steps.jsonl", "summary.json"))
summary = {"steps": steps, "files": files}
tmp = os.path.join(out, "summary.json.tmp")
with open(tmp, "w") as f:
    json.dump(summary, f, indent=2)
os.replace(tmp, os.path.join(out, "summary.json"))
for s in steps:
    extra = s.get("why") or ("%d s" % s["seconds"] if "seconds" in s else "")
    print("gpu: %-20s %-8s %s" % (s["step"], s["status"], extra), file=sys.stderr)
print("gpu: %d files in %s" % (len(files), out), file=sys.stderr)
sys.exit(0 if all(s["status"] in ("ok", "skipped") for s in steps) else 1)
PY
status=$?
packed
exit $status
