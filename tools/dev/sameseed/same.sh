#!/bin/sh
# same.sh BIN DIR: what a move of code must leave byte-identical (docs/history.md's
# "same.sh"): run.sh's outputs beside it, the three reports' --json, eval and search
# --json of one dense, one MoE, one hybrid and one LoRA plan, gnmt8's op-level search
# with a fixed seed, a torchtitan export and the help texts, timing fields removed.
# Run from the checkout's root, once with each binary; two binaries agree when
# `diff -r` of their two DIRs shows only sameseed.err's lines naming the folder.
#
#   tools/dev/sameseed/same.sh BIN DIR
#
# About two minutes on 2 quiet cores; needs jq.
set -u
BIN=$1; DIR=$2
mkdir -p "$DIR"
sh tools/dev/sameseed/run.sh "$BIN" "$DIR/sameseed" > /dev/null 2> "$DIR/sameseed.err"
strip() { jq -S 'walk(if type == "object" then with_entries(select(.key | test("search_time|per_s$|elapsed|_cpu_s$|wall_s$|took|cpu_seconds") | not)) else . end)'; }
"$BIN" report bench --json | strip > "$DIR/bench.json" 2>&1
"$BIN" report sweeps --json | strip > "$DIR/sweeps.json" 2>&1
"$BIN" report megatron --json | strip > "$DIR/megatron.json" 2>&1
HF=hf:graph/transformer/testdata/hf
"$BIN" search --workload llama3-70b:seq=4096,batch=512 --cluster dgx-h100:8 --json | strip > "$DIR/dense-search.json" 2>&1
"$BIN" eval --workload llama3-70b:seq=4096,batch=512 --cluster dgx-h100:8 --strategy tp=8,pp=4,dp=2,mbs=1,sp=on,distopt=on --json | strip > "$DIR/dense-eval.json" 2>&1
"$BIN" search --workload qwen3-30b-a3b:seq=4096,batch=512 --cluster dgx-h100:2 --strategy fp8=current,grads=bf16 --json | strip > "$DIR/moe-search.json" 2>&1
"$BIN" eval --workload $HF/qwen3-30b-a3b.json:seq=4096,batch=512 --cluster dgx-h100:2 --strategy tp=2,ep=8,sp=on --json | strip > "$DIR/moe-eval.json" 2>&1
"$BIN" search --workload $HF/nemotron-h-8b.json:seq=4096,batch=256 --cluster dgx-h100:2 --json | strip > "$DIR/hybrid-search.json" 2>&1
"$BIN" eval --workload $HF/nemotron-h-8b.json:seq=4096,batch=256 --cluster dgx-h100:2 --strategy tp=2,dp=8,mbs=1 --json | strip > "$DIR/hybrid-eval.json" 2>&1
"$BIN" search --workload llama3-8b:seq=4096,batch=64 --cluster dgx-h100:1 --strategy peft=lora,lora-rank=8 --for megatron-bridge --json | strip > "$DIR/lora-search.json" 2>&1
"$BIN" eval --workload llama3-8b:seq=4096,batch=64 --cluster dgx-h100:1 --strategy tp=1,dp=8,mbs=1,peft=lora,lora-rank=16 --json | strip > "$DIR/lora-eval.json" 2>&1
"$BIN" search --workload gnmt8 --gpus 8 --evals 1500 --seed 11 --json -q | strip > "$DIR/gnmt8-search.json" 2>&1
"$BIN" export --workload llama3-8b:seq=8192,batch=256 --cluster dgx-h100:4 --strategy tp=1,pp=1,dp=32,mbs=1,fsdp=on --to torchtitan -o "$DIR/titan.py" > /dev/null 2>&1
for c in "" search eval export report hw; do "$BIN" $c --help > "$DIR/help-$c.txt" 2>&1; done
echo "same.sh: $(find "$DIR" -type f | wc -l) files in $DIR"
