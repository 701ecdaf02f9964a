// Package bench is placer's test bench of real runs: every MLPerf
// Training submission of GPT-3 175B pretraining, Llama 2 70B LoRA
// fine-tuning, BERT-large and (v5.0) Llama 3.1 405B pretraining on NVIDIA
// GPUs of rounds v3.0 to v5.0 (measurements/mlperf:
// runs.csv, read by tools/measure/mlperf/mlperf_bench.py from mlcommons' results
// repositories), each read as the workload, cluster and strategy placer
// eval takes, and the split of the bench (these rows and the published
// sweeps placer carries) into a development part, on which mechanisms
// are chosen, and a validation part, reported only as aggregates
// (DESIGN.md §14). A measured figure here is a test, never an
// input: Read never looks at a row's step time.
//
// May import: planner, planner/plan, planner/published, measurements/mlperf
package bench
