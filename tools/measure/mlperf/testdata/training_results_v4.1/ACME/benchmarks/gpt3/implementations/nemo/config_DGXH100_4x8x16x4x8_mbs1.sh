export MINIBS="${MINIBS:=64}"
export TENSOR_MODEL_PARALLEL=4   #  training.model.tensor_model_parallel_size
export PIPELINE_MODEL_PARALLEL=8
export DGXNNODES="${DGXNNODES:=4}"
export DGXNGPU=8
if [[ "${MLPERF_VERSION:-}" == "v31" ]]; then
    source $(dirname ${BASH_SOURCE[0]})/config_common_v31.sh
else
    source $(dirname ${BASH_SOURCE[0]})/config_common.sh
fi
export MICRO_BATCH_SIZE=1
export INTERLEAVED_PIPELINE=12
