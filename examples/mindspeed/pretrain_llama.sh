#!/bin/bash
# A MindSpeed launch script with the mistakes npulint's NPU5xx rules catch before the job is
# scheduled. `npulint examples/mindspeed` reports them at the flags' own tokens, judged on the
# release pyproject.toml beside this script names (adaptive memory optimization is a feature of
# the core_r0.8.0-era MindSpeed releases).
GPUS_PER_NODE=8
TP=1
PP=1

GPT_ARGS="
    --tensor-model-parallel-size ${TP} \
    --pipeline-model-parallel-size ${PP} \
    --num-layers 32 \
    --hidden-size 4096 \
    --sequence-parallel \
    --reuse-fp32-param \
    --fp16
"
# NPU504: --reuse-fp32-param needs --bf16 (--fp16 above)

if [ "$FULL_RECOMPUTE" = 1 ]; then
    MEMORY_ARGS="--recompute-granularity full --recompute-method uniform"
else
    # the other branch: AMO and full recompute are never on one path, which is fine
    MEMORY_ARGS="--adaptive-memory-optimization"
fi
MEMORY_ARGS="$MEMORY_ARGS --swap-attention"  # NPU501: AMO is not compatible with swap-attention

torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py $GPT_ARGS $MEMORY_ARGS \
    --num-layers-per-virtual-pipline-stage 4  # NPU502: did you mean --num-layers-per-virtual-pipeline-stage?
