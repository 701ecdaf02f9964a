source $(dirname ${BASH_SOURCE[0]})/config_common.sh
export MINIBS=2
export TP=8
export DGXNNODES=2
