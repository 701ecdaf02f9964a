#!/bin/bash
# phase 1 (not run): --max_seq_length=128
BERT_CMD="./run_pretraining.py --train_batch_size=${BATCHSIZE} --phase2 --max_seq_length=512 \
    --max_predictions_per_seq=76 --fp16 \
    --distributed_lamb --dwu-num-blocks=1 --gradient_accumulation_steps=${GRADIENT_STEPS} ${EXTRA_PARAMS}"
#    BERT_CMD="${BERT_CMD} --bf16"
