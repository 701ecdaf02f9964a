// Package mlperf holds the MLPerf Training bench as data: runs.csv, one
// row per submission of GPT-3 175B, Llama 2 70B LoRA, BERT-large and Llama
// 3.1 405B on NVIDIA GPUs of rounds v3.0 to v5.0, written by tools/measure/mlperf/mlperf_bench.py from
// mlcommons' results repositories (README.md in this folder: the columns,
// the rebuild command, the validation part). planner/bench reads
// it.
//
// May import: no other placer package
package mlperf
