#!/bin/bash
source $(dirname ${BASH_SOURCE[0]})/config_common.sh

export MINIBS=1   # local batch
export TP=4
export CP=2
export LAYER_CUDA_GRAPH=1
export PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True,garbage_collection_threshold:0.9"
export DGXNNODES=2
