#!/bin/bash
# A MindSpeed launch script. npulint discovers shell launch scripts; the MindSpeed flag
# rules (NPU5xx) that read them are not implemented yet, so this file has no findings.
GPUS_PER_NODE=8
TP=2
PP=1

GPT_ARGS="
    --tensor-model-parallel-size ${TP} \
    --pipeline-model-parallel-size ${PP} \
    --num-layers 32 \
    --hidden-size 4096 \
    --bf16
"

torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py $GPT_ARGS
