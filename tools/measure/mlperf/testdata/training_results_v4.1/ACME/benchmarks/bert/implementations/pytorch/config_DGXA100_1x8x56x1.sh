export BATCHSIZE=56
export GRADIENT_STEPS=1
export EXTRA_PARAMS="--dense_seq_output --unpad --unpad_fmha --exchange_padding"
export DGXNNODES=1
export DGXNGPU=8
