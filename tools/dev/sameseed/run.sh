#!/bin/sh
# Same seed, same output: runs a fixed set of placer commands (search with
# every search method, baselines, eval, export, the cluster-scale search,
# eval, export and report) with fixed seeds and evaluation or step budgets,
# and writes each command's JSON with its timing fields removed (search
# times, evaluations per second, elapsed times: what the clock decides)
# into DIR, one file per command. Two binaries agree when `diff -r` of
# their two DIRs is empty. Used by refactors to show the output did not
# change; about two minutes on 2 cores.
#
#   tools/dev/sameseed/run.sh BIN DIR
#
# A zoo model is used when out/zoo/bert_base.json exists (make zoo), else
# the committed PyTorch export graph/testdata/profile/cnn.json; the
# msr-fiddle graph is read from ../shared/data/msr-fiddle and skipped with
# a note when absent.
set -eu
BIN=$1
DIR=$2
mkdir -p "$DIR"
GPT=gpt:layers=96,hidden=12288,heads=96,seq=4096,vocab=131072,batch=1152
MSR=../shared/data/msr-fiddle/throughput-LayerGraphs-resnet50_training.json
ZOO=out/zoo/bert_base.json
[ -f "$ZOO" ] || ZOO=graph/testdata/profile/cnn.json
echo "zoo model: $ZOO" > "$DIR/inputs.txt"

# norm NAME CMD...: runs CMD, its stdout (JSON) without timing fields into DIR/NAME.json
norm() {
	name=$1
	shift
	"$@" | jq -S 'walk(if type == "object" then with_entries(select(.key | test("search_time|per_s$|elapsed|_cpu_s$|wall_s$|took") | not)) else . end)' > "$DIR/$name.json"
}

norm trxl4-search "$BIN" search --workload trxl4 --gpus 4 --evals 1500 --seed 3 --json -q -o "$DIR/trxl4.result.json"
jq -S 'walk(if type == "object" then with_entries(select(.key | test("search_time|per_s$|elapsed") | not)) else . end)' "$DIR/trxl4.result.json" > "$DIR/trxl4.result.norm.json"
rm "$DIR/trxl4.result.json"
"$BIN" search --workload trxl4 --gpus 4 --evals 1500 --seed 3 -q -o "$DIR/trxl4.r2.json" > /dev/null
norm trxl4-eval "$BIN" eval --workload trxl4 --gpus 4 --placement "$DIR/trxl4.r2.json" --json
"$BIN" export --workload trxl4 --placement "$DIR/trxl4.r2.json" --to tf-device-map -o "$DIR/trxl4.tfmap.json" > /dev/null
rm "$DIR/trxl4.r2.json"
norm trxl4-baselines "$BIN" baselines --workload trxl4 --gpus 4 --budget 300 --seed 3 --json -q
for m in local-search sa local-search-anchored brkga; do
	norm "trxl2-$m" "$BIN" search --workload trxl2 --gpus 2 --method "$m" --evals 400 --seed 5 --json -q
done
for m in go rl17 hdp; do
	norm "trxl2-$m" "$BIN" search --workload trxl2 --gpus 2 --method "$m" --steps 2 --samples 4 --seed 5 --json -q
done
norm trxl2-regal "$BIN" search --workload trxl2 --gpus 2 --method regal --evals 300 --seed 5 --json -q
norm trxl2-infer "$BIN" infer --workload trxl2 --gpus 2 --seed 5 --json -q
norm zoo-search "$BIN" search --graph "$ZOO" --gpus 4 --evals 1000 --seed 7 --json -q
norm zoo-baselines "$BIN" baselines --graph "$ZOO" --gpus 4 --budget 200 --seed 7 --json -q
if [ -f "$MSR" ]; then
	norm msr-search "$BIN" search --graph "$MSR" --gpus 4 --evals 1000 --seed 9 --json -q
	norm msr-baselines "$BIN" baselines --graph "$MSR" --gpus 4 --budget 200 --seed 9 --json -q
else
	echo "msr-fiddle: SKIP: $MSR absent" >> "$DIR/inputs.txt"
fi
norm gpt-search "$BIN" search --workload "$GPT" --cluster dgx-h100:288 --json
norm gpt-eval "$BIN" eval --workload "$GPT" --cluster dgx-h100:288 --strategy tp=8,pp=6,dp=48,mbs=1,sp=on,tpoverlap=on,distopt=on --json
"$BIN" export --workload "$GPT" --cluster dgx-h100:288 --strategy tp=8,pp=6,dp=48,vp=8,mbs=1,sp=on,tpoverlap=on,distopt=on --to megatron -o "$DIR/gpt.megatron.sh" > /dev/null
norm megatron-report "$BIN" report megatron --json
# Paths differ from one DIR to another: written as DIR.
sed -i "s|$DIR|DIR|g" "$DIR"/*.json
echo "sameseed: $(ls "$DIR" | wc -l) files in $DIR"
