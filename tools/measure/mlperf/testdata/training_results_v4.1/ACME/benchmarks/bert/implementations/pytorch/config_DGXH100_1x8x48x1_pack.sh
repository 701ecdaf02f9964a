## DL params
export BATCHSIZE=48
export PACKING_FACTOR=2
export GRADIENT_STEPS=1
export EXTRA_PARAMS="--dense_seq_output --pad_fmha --fused_bias_fc --fused_bias_mha --packed_samples --cuda_graph_mode 'segmented' --use_cuda_graph "
export PHASE=2
export DGXNNODES=1
source $(dirname ${BASH_SOURCE[0]})/config_DGXH100_common.sh
export USE_DDP=1
