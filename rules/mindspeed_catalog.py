"""The MindSpeed flag catalog (NPU501, NPU504): pure data, one entry per rule MindSpeed enforces
at start-up. Adding a rule is adding one entry.

A *condition* is a tuple:

* ``("on", "--flag")``: the flag is given (a switch, or a flag with any value);
* ``("gt", "--flag", n)`` / ``("le", "--flag", n)``: its numeric value (or its default) is > n / <= n;
* ``("eq", "--flag", "v")`` / ``("ne", "--flag", "v")``: its value (or default) is / is not v;
* ``("in", "--flag", (...))`` / ``("notin", "--flag", (...))``: its value is / is not one of them.

Kinds: ``conflict`` (``a`` and ``b`` both hold: NPU501), ``requires`` (``a`` holds, ``b`` does
not: NPU504), ``choices`` / ``range`` (``--flag``'s given value is not allowed: NPU504).
``stacks`` says which ``mindspeed-stack`` settings the rule applies to.

Sources are ``repo@ref path:line``; refs as in research/mindspeed-flags.md §0:
``MS@master`` = Ascend/MindSpeed 028de58c, ``MS@200r08`` = 2.0.0_core_r0.8.0 c721ce33,
``LLM@master`` = Ascend/MindSpeed-LLM c77308a1, ``LLM@2.0.0`` = b626d239,
``MEG@0.12.1`` = NVIDIA/Megatron-LM core_v0.12.1.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

BOTH = ("current", "legacy")
LEGACY = ("legacy",)

# Values of absent flags (Megatron/MindSpeed argparse defaults) that conditions compare.
DEFAULTS = {
    "--pipeline-model-parallel-size": 1,  # MEG@0.12.1 megatron/training/arguments.py
    "--tensor-model-parallel-size": 1,
    "--context-parallel-size": 1,
    "--expert-model-parallel-size": 1,
    "--ampipe-degree": 1,  # MS@master mindspeed/arguments.py (default 1)
    "--adaptive-recompute-device-size": -1,  # MS@master mindspeed/arguments.py:282 (default -1)
    "--moe-zero-memory": "disable",  # MS@master mindspeed/features_manager/moe/moe_zero_memory.py:18
    "--context-parallel-cache-interval": 0,
    "--moe-model-type": "megatron_moe",  # MS@master mindspeed/arguments.py:122 (legacy parser)  # MS@master .../context_parallel/context_parallel_kv_cache.py:40
}
# A value condition on an absent flag with no default here is unknown: nothing is reported.

# Entry scripts whose arguments are Megatron/MindSpeed training flags (the checks apply to
# launches of these only: a preprocessing or conversion tool has its own parser).
TRAINING_ENTRIES = r"(pretrain|posttrain|finetune)_[A-Za-z0-9_]*\.py"


@dataclasses.dataclass(frozen=True)
class Entry:
    kind: str  # conflict | requires | choices | range
    a: tuple
    b: Optional[tuple]
    message: str
    source: str
    stacks: Tuple[str, ...] = BOTH


def conflict(a, b, message, source, stacks=BOTH):
    return Entry("conflict", a, b, message, source, stacks)


def requires(a, b, message, source, stacks=BOTH):
    return Entry("requires", a, b, message, source, stacks)


def choices(flag, values, source, stacks=BOTH):
    return Entry("choices", ("on", flag), ("in", flag, tuple(values)),
                 f"{flag} must be one of {', '.join(map(str, values))}", source, stacks)


def value_range(flag, lo, hi, source, stacks=BOTH):
    return Entry("range", ("on", flag), (flag, lo, hi),
                 f"{flag} must be in [{lo}, {hi}]" if hi is not None else f"{flag} must be >= {lo}", source, stacks)


def on(flag):
    return ("on", flag)


AMO = on("--adaptive-memory-optimization")
DUALPIPEV = ("eq", "--schedules-method", "dualpipev")
_ARGS = "MS@master mindspeed/arguments.py"
_ARGS200 = "MS@200r08 mindspeed/arguments.py"
_FM = "MS@master mindspeed/features_manager/"
_LFM = "LLM@master mindspeed_llm/features_manager/"
_LLM200 = "LLM@2.0.0 mindspeed_llm/training/arguments.py"
_AMO_MSG = "adaptive memory optimization is not compatible with "
ADAPTIVE_RECOMPUTE = (("gt", "--adaptive-recompute-device-size", 0), on("--adaptive-recompute-device-swap"))

# Not catalogued although in research §2A: feature checks that MindSpeed-LLM's feature list
# (LLM@master mindspeed_llm/features_manager/__init__.py) does not run, so a launch of an LLM
# entry script would be wrongly reported: --fix-router needs EP > 1 (MoEFixRouterFeature),
# --reset-bucket-group-order needs --overlap-param-gather (ResetBucketGroupOrderFeature),
# --compress-dense vs --recompute-activation-function (AnsCompressTensorFeature),
# --use-fused-rotary-pos-emb needs rope (FusedRoPEFeature; Megatron also turns the legacy
# --use-rotary-position-embeddings into rope), --param-and-grad-buffer-pad > 0 (BufferPadFeature).

CATALOG: Tuple[Entry, ...] = (
    # -- §1.1 / docs/003: --adaptive-memory-optimization (validate_args_wrapper, `if args.adaptive_memory_optimization:`)
    conflict(AMO, ("gt", "--ampipe-degree", 1), _AMO_MSG + "ampipe (--ampipe-degree > 1)",
             f"{_ARGS}:728 ({_ARGS200}:832); docs/003"),
    conflict(AMO, ADAPTIVE_RECOMPUTE[0], _AMO_MSG + "adaptive selective recompute",
             f"{_ARGS}:729 ({_ARGS200}:833); docs/003 自适应选择重计算"),
    conflict(AMO, ADAPTIVE_RECOMPUTE[1], _AMO_MSG + "adaptive selective recompute",
             f"{_ARGS}:729 ({_ARGS200}:833); docs/003 自适应选择重计算"),
    conflict(AMO, on("--recompute-granularity"), _AMO_MSG + "recompute_granularity (full or selective)",
             f"{_ARGS}:730-731 ({_ARGS200}:834-835); docs/003 全重计算"),
    conflict(AMO, on("--recompute-method"), _AMO_MSG + "recompute_method",
             f"{_ARGS}:730-731 ({_ARGS200}:834-835); docs/003 全重计算"),
    conflict(AMO, on("--recompute-activations"),
             _AMO_MSG + "recompute_granularity (--recompute-activations sets it to selective)",
             f"{_ARGS}:730-731; MEG@0.12.1 megatron/training/arguments.py:379-380"),
    conflict(AMO, on("--recompute-activation-function"), _AMO_MSG + "recompute_activation_function",
             f"{_ARGS}:732-733 ({_ARGS200}:836-837)"),
    conflict(AMO, on("--swap-attention"), _AMO_MSG + "swap_attention",
             f"{_ARGS}:734 ({_ARGS200}:838); {_FM}memory/swap_attention.py:26; docs/003"),
    conflict(AMO, on("--recompute-in-bubble"), _AMO_MSG + "recompute_in_bubble",
             f"{_ARGS}:735 ({_ARGS200}:839); {_FM}pipeline_parallel/ripipe_schedules_feature.py:51; docs/003"),
    conflict(AMO, on("--memory-fragmentation"), _AMO_MSG + "memory_fragmentation (both replace the memory manager)",
             f"{_ARGS200}:840-841 (MS@core010 :765-766; the flag no longer exists on master); docs/003 注意事项"),

    # -- §1.2 sibling rules (legacy validator; the feature manager has no adaptive-recompute feature)
    *[conflict(ar, on(f), "adaptive selective recompute is not compatible with " + f,
               f"{_ARGS}:715-724 (`if adaptive_recompute_enable:`)", LEGACY)
      for ar in ADAPTIVE_RECOMPUTE
      for f in ("--recompute-granularity", "--recompute-method", "--recompute-activation-function",
                "--swap-attention", "--recompute-in-advance", "--recompute-in-bubble")],
    conflict(on("--smart-swap"), ADAPTIVE_RECOMPUTE[0], "smart swap is not compatible with adaptive selective recompute",
             f"{_ARGS}:725-726; {_FM}memory/smart_swap.py:20-22"),
    requires(on("--adaptive-recompute-device-swap"), on("--use-legacy-models"),
             "--adaptive-recompute-device-swap is not available with mcore models (needs --use-legacy-models)",
             f"{_ARGS}:713-714", LEGACY),
    conflict(on("--memory-fragmentation"), on("--use-fused-rotary-pos-emb"),
             "memory fragmentation is not compatible with --use-fused-rotary-pos-emb", f"{_ARGS200}:825-827", LEGACY),
    conflict(on("--memory-fragmentation"), ADAPTIVE_RECOMPUTE[0],
             "memory fragmentation is not compatible with adaptive selective recompute", f"{_ARGS200}:823-824", LEGACY),
    conflict(on("--memory-fragmentation"), on("--smart-swap"),
             "memory fragmentation is not compatible with smart swap", f"{_ARGS200}:828-830", LEGACY),

    # -- §2A feature manager: memory
    conflict(on("--reuse-fp32-param"), on("--enable-zero3"), "reuse_fp32_param and enable_zero3 are incompatible",
             f"{_FM}memory/reuse_fp32_param.py:18"),
    requires(on("--reuse-fp32-param"), on("--bf16"), "reuse_fp32_param requires bf16",
             f"{_FM}memory/reuse_fp32_param.py:19 (dependency_check); {_ARGS}:578-579"),
    conflict(on("--reuse-fp32-param"), ("eq", "--optimizer-selection", "fused_ema_adamw"),
             "fused_ema_adamw optimizer is not compatible with reuse_fp32_param", f"{_FM}memory/reuse_fp32_param.py:24"),
conflict(on("--swap-optimizer"), on("--reuse-fp32-param"), "swap_optimizer and reuse_fp32_param are incompatible",
             f"{_FM}optimizer/swap_optimizer_feature.py:21"),
    # -- §2A pipeline schedules
    conflict(on("--recompute-in-bubble"), on("--optimize-send-recv-comm"),
             "recompute_in_bubble and optimize_send_recv_comm are incompatible",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:17"),
    conflict(on("--recompute-in-advance"), on("--optimize-send-recv-comm"),
             "recompute_in_advance and optimize_send_recv_comm are incompatible",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:17"),
    conflict(on("--recompute-in-bubble"), ("gt", "--ampipe-degree", 1), "recompute_in_bubble and ampipe are incompatible",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:19-20"),
    conflict(on("--recompute-in-advance"), ("gt", "--ampipe-degree", 1), "recompute_in_advance and ampipe are incompatible",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:19-20"),
    requires(on("--recompute-in-bubble"), ("gt", "--pipeline-model-parallel-size", 1),
             "recompute_in_bubble only supports pipelining with interleaving (pipeline size > 1)",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:64"),
    requires(on("--recompute-in-bubble"), on("--num-layers-per-virtual-pipeline-stage"),
             "recompute_in_bubble only supports pipelining with interleaving (--num-layers-per-virtual-pipeline-stage)",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:64"),
    conflict(on("--recompute-in-bubble"), on("--swap-attention"), "recompute-in-bubble does not support swap-attention",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:77"),
    conflict(on("--recompute-in-bubble"), on("--no-overlap-p2p-communication"),
             "recompute_in_bubble is not supported when overlap_p2p_comm is off",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:80"),
    conflict(on("--recompute-in-advance"), ("eq", "--recompute-method", "uniform"),
             "recompute_in_advance does not support uniform recompute_method",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:108"),
    requires(on("--recompute-in-advance"), ("gt", "--pipeline-model-parallel-size", 1),
             "recompute_in_advance only supports pipelining with interleaving (pipeline size > 1)",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:112"),
    requires(on("--recompute-in-advance"), on("--num-layers-per-virtual-pipeline-stage"),
             "recompute_in_advance only supports pipelining with interleaving (--num-layers-per-virtual-pipeline-stage)",
             f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:112"),
    # -- §2A tensor parallel / communication fusion
    conflict(on("--use-ascend-mc2"), on("--unaligned-linear"), "use_ascend_mc2 and unaligned_linear are incompatible",
             f"{_FM}tensor_parallel/mc2.py:19"),
    conflict(on("--use-ascend-mc2"), on("--use-ascend-coc"), "mc2 and coc can not be used together",
             f"{_FM}tensor_parallel/mc2.py:22; {_FM}tensor_parallel/locl_coc.py:23; {_ARGS}:756-758"),
    requires(on("--use-ascend-mc2"), on("--sequence-parallel"), "mc2 requires --sequence-parallel",
             f"{_FM}tensor_parallel/mc2.py:24"),
    requires(on("--use-ascend-mc2"), ("gt", "--tensor-model-parallel-size", 1),
             "mc2 requires tensor parallel size > 1", f"{_FM}tensor_parallel/mc2.py:24"),
    conflict(on("--use-ascend-mc2"), on("--use-pipe-experts"), "mc2 is not compatible with use_pipe_experts",
             f"{_FM}tensor_parallel/mc2.py:30"),
    conflict(on("--use-ascend-mc2"), on("--use-nanopipe"), "mc2 is not compatible with use_nanopipe",
             f"{_FM}tensor_parallel/mc2.py:32"),
    conflict(on("--use-ascend-coc"), on("--unaligned-linear"), "use_ascend_coc and unaligned_linear are incompatible",
             f"{_FM}tensor_parallel/locl_coc.py:20"),
    # -- §2A MoE
    *[conflict(on("--moe-fb-overlap"), on(f), f"moe_fb_overlap and {f[2:].replace('-', '_')} are incompatible",
               f"{_FM}moe/fb_overlap.py:{line}")
      for f, line in (("--moe-alltoall-overlap-comm", 76), ("--overlap-grad-reduce", 77),
                      ("--moe-zero-memory-num-layers", 79), ("--use-nanopipe", 80), ("--automated-pipeline", 81),
                      ("--recompute-in-bubble", 82), ("--recompute-in-advance", 83), ("--use-legacy-models", 84),
                      ("--moe-tp-extend-ep", 85), ("--swap-attention", 86))],
    requires(on("--moe-fb-overlap"), on("--moe-grouped-gemm"), "moe_fb_overlap requires moe_grouped_gemm",
             f"{_FM}moe/fb_overlap.py:87"),
    requires(on("--moe-unperm2-mem-optim-swap"), on("--moe-fb-overlap"),
             "--moe-unperm2-mem-optim-swap can only be used with --moe-fb-overlap", f"{_FM}moe/fb_overlap.py:97"),
    requires(on("--gemm-gradient-accumulation-fusion"), on("--moe-grouped-gemm"),
             "--gemm-gradient-accumulation-fusion only works with --moe-grouped-gemm", f"{_FM}moe/gmm.py:19"),
# -- §2A attention / optimizer / distributed
requires(on("--swap-optimizer"), on("--use-distributed-optimizer"),
             "--swap-optimizer needs --use-distributed-optimizer", f"{_FM}optimizer/swap_optimizer_feature.py:27"),
requires(on("--fsdp2-config-path"), on("--use-torch-fsdp2"), "--fsdp2-config-path only used with --use-torch-fsdp2",
             f"{_FM}distributed/torch_fully_sharded_data_parallel.py:28"),
    requires(on("--context-parallel-kv-cache-policy"), ("gt", "--context-parallel-size", 1),
             "--context-parallel-kv-cache-policy needs context parallel size > 1",
             f"{_FM}context_parallel/context_parallel_kv_cache.py:33"),
    requires(on("--context-parallel-kv-cache-policy"), on("--use-flash-attn"),
             "--context-parallel-kv-cache-policy only supports flash attention (--use-flash-attn)",
             f"{_FM}context_parallel/context_parallel_kv_cache.py:36"),
    requires(("gt", "--context-parallel-cache-interval", 0), on("--context-parallel-kv-cache-policy"),
             "--context-parallel-cache-interval needs --context-parallel-kv-cache-policy",
             f"{_FM}context_parallel/context_parallel_kv_cache.py:40-42"),
    requires(on("--use-ulysses-allgather-kv"), ("gt", "--context-parallel-size", 1),
             "--use-ulysses-allgather-kv needs context parallel size > 1",
             f"{_FM}context_parallel/context_parallel_kv_cache.py:54-56"),
    requires(on("--use-ulysses-allgather-kv"), on("--group-query-attention"),
             "--use-ulysses-allgather-kv needs --group-query-attention",
             f"{_FM}context_parallel/context_parallel_kv_cache.py:62-63"),
    conflict(on("--swap-attention"), on("--lora-target-modules"), "swap attention is not compatible with LoRA",
             f"{_FM}memory/swap_attention.py:27-29"),
    *[conflict(on(f), on("--no-align-grad-reduce"), f"{f[2:].replace('-', '_')} is only usable when align_grad_reduce is on",
               f"{_FM}pipeline_parallel/ripipe_schedules_feature.py:{line}")
      for f, line in (("--recompute-in-bubble", "85-86"), ("--recompute-in-advance", "116-117"))],
    conflict(on("--unaligned-linear"), on("--tp-2d"), "unaligned_linear and tp_2d are incompatible",
             f"{_FM}tensor_parallel/unaligned_linear_feature.py:22"),
    *[conflict(on("--pipeline-model-parallel-layout"), b, f"--pipeline-model-parallel-layout is incompatible with {m}",
               f"{_FM}pipeline_parallel/pipeline_model_parallel_layout_feature.py:{line}")
      for b, m, line in ((("eq", "--schedules-method", "dualpipev"), "--schedules-method dualpipev", "103-104"),
                         (on("--pipeline-num-transformer-layers"), "--pipeline-num-transformer-layers", "105-106"),
                         (on("--noop-layers"), "--noop-layers", "109-110"),
                         (on("--recompute-in-bubble"), "--recompute-in-bubble", "111-112"),
                         (on("--recompute-in-advance"), "--recompute-in-advance", "111-112"))],
    *[conflict(on("--pipeline-num-transformer-layers"), on(f),
               f"pipeline_num_transformer_layers and {f[2:].replace('-', '_')} are incompatible",
               f"{_FM}pipeline_parallel/unaligned_pineline_feature.py:{line}")
      for f, line in (("--noop-layers", 42), ("--num-layer-list", 43))],
    *[conflict(DUALPIPEV, b, f"the dualpipev schedule and {m} are incompatible",
               f"{_FM}pipeline_parallel/dualpipev_feature.py:21,{line}")
      for b, m, line in ((on("--use-custom-fsdp"), "--use-custom-fsdp", "22-23"),
                         (on("--overlap-grad-reduce"), "--overlap-grad-reduce", "25-26"),
                         (on("--swap-attention"), "--swap-attention", "31-32"),
                         (("gt", "--context-parallel-size", 1), "context parallelism", "34-35"),
                         (on("--num-layers-per-virtual-pipeline-stage"), "a virtual pipeline", "37-38"),
                         (on("--tp-2d"), "--tp-2d", "49-50"))],
    requires(DUALPIPEV, on("--untie-embeddings-and-output-weights"),
             "the dualpipev schedule requires --untie-embeddings-and-output-weights",
             f"{_FM}pipeline_parallel/dualpipev_feature.py:21,28-29"),
    requires(DUALPIPEV, ("gt", "--pipeline-model-parallel-size", 1),
             "the dualpipev schedule needs pipeline size > 1", f"{_FM}pipeline_parallel/dualpipev_feature.py:21,40-41"),
    *[conflict(on("--tp-2d"), on(f), f"tp_2d and {f[2:].replace('-', '_')} are incompatible",
               f"{_FM}tensor_parallel/tp_2d.py:{line}")
      for f, line in (("--sequence-parallel", 29), ("--use-fused-rmsnorm", 30), ("--use-nanopipe", 31),
                      ("--use-ascend-coc", 32))],
    conflict(on("--tp-2d"), ("gt", "--expert-model-parallel-size", 1), "2d tp does not support moe (EP > 1)",
             f"{_FM}tensor_parallel/tp_2d.py:41"),
    # -- §2A MoE communication overlap
    conflict(on("--moe-alltoall-overlap-comm"), on("--use-ascend-mc2"),
             "moe_alltoall_overlap_comm and use_ascend_mc2 are incompatible", f"{_FM}moe/moe_alltoall_overlap.py:23"),
    requires(on("--moe-alltoall-overlap-comm"), ("gt", "--expert-model-parallel-size", 1),
             "--moe-alltoall-overlap-comm needs --expert-model-parallel-size > 1", f"{_FM}moe/moe_alltoall_overlap.py:27-28"),
    conflict(on("--moe-allgather-overlap-comm"), on("--use-ascend-mc2"),
             "moe_allgather_overlap_comm and use_ascend_mc2 are incompatible", f"{_FM}moe/moe_allgather_overlap.py:23"),
    requires(on("--moe-allgather-overlap-comm"), on("--moe-permutation-async-comm"),
             "--moe-allgather-overlap-comm needs --moe-permutation-async-comm", f"{_FM}moe/moe_allgather_overlap.py:27-28"),
    requires(on("--moe-allgather-overlap-comm"), on("--moe-grouped-gemm"),
             "--moe-allgather-overlap-comm needs --moe-grouped-gemm", f"{_FM}moe/moe_allgather_overlap.py:29-30"),
    *[conflict(on("--moe-alltoall-mc2"), on(f), f"moe_alltoall_mc2 and {f[2:].replace('-', '_')} are incompatible",
               f"{_FM}moe/moe_alltoall_mc2.py:{line}")
      for f, line in (("--use-ascend-mc2", 22), ("--moe-alltoall-overlap-comm", 23), ("--moe-allgather-overlap-comm", 24),
                      ("--moe-fb-overlap", 25), ("--moe-tp-extend-ep", 26))],
    requires(on("--moe-zero-memory-num-layers"), ("ne", "--moe-zero-memory", "disable"),
             "--moe-zero-memory must be enabled when using --moe-zero-memory-num-layers",
             f"{_FM}moe/moe_zero_memory.py:31-32"),
    # -- §2C MindSpeed-LLM feature manager
    requires(on("--wandb-exp-name"), on("--use-wandb"), "--wandb-exp-name needs --use-wandb", f"{_LFM}dpo/dpo.py:12"),
    requires(on("--enable-hbmfault-repair"), on("--enable-high-availability"),
             "--enable-hbmfault-repair needs --enable-high-availability",
             f"{_LFM}high_availability/high_availability.py:39-40"),
    requires(on("--enable-elastic-training"), on("--enable-high-availability"),
             "--enable-elastic-training needs --enable-high-availability",
             f"{_LFM}high_availability/high_availability.py:55-56"),
    requires(on("--enable-elastic-training"), on("--use-distributed-optimizer"),
             "--enable-elastic-training needs --use-distributed-optimizer",
             f"{_LFM}high_availability/high_availability.py:59-60"),
    *[conflict(on("--enable-high-availability"), on(f), f"high availability is not supported with {f}",
               f"{_LFM}high_availability/high_availability.py:{line}")
      for f, line in (("--use-dist-ckpt", "43-44"), ("--swap-attention", "45-46"), ("--disable-gloo-group", "49-50"),
                      ("--swap-optimizer", "53-54"))],
    *[conflict(on("--enable-elastic-training"), on(f), f"elastic training is not supported with {f}",
               f"{_LFM}high_availability/high_availability.py:{line}")
      for f, line in (("--use-custom-fsdp", "63-64"), ("--reuse-fp32-param", "67-68"))],
    requires(on("--neat-pack"), on("--reset-attention-mask"), "--neat-pack needs --reset-attention-mask",
             f"{_LFM}megatron_basic/training_basic.py:55"),
    # -- value choices and ranges (argparse choices / validate checks)
    choices("--context-parallel-kv-cache-policy", ("full", "half"), f"{_FM}context_parallel/context_parallel_kv_cache.py"),
    choices("--moe-zero-memory", ("disable", "level0", "level1"), f"{_FM}moe/moe_zero_memory.py"),
    choices("--recompute-granularity", ("full", "selective"), "MEG@0.12.1 megatron/training/arguments.py:1533-1534"),
    choices("--recompute-method", ("uniform", "block"), "MEG@0.12.1 megatron/training/arguments.py:1554-1555"),
    choices("--alibi-fusion-attn-type", ("0", "2"), f"{_FM}transformer/flash_attention/alibi_feature.py:73"),
    value_range("--context-parallel-cache-interval", 0, None,
                f"{_FM}context_parallel/context_parallel_kv_cache.py:40,49-50"),
    value_range("--moe-zero-memory-num-layers", 0, None, f"{_FM}moe/moe_zero_memory.py:27-30"),
# -- §2B legacy validator only (mindspeed/arguments.py validate_args_wrapper)
    conflict(on("--enable-zero3"), on("--use-ascend-mc2"), "enable_zero3 is not compatible with use_ascend_mc2",
             f"{_ARGS}:524-530", LEGACY),
    conflict(on("--enable-zero3"), on("--recompute-granularity"), "enable_zero3 is not compatible with recompute",
             f"{_ARGS}:524-530", LEGACY),
    conflict(on("--enable-zero3"), on("--use-pipe-experts"), "enable_zero3 is not compatible with use_pipe_experts",
             f"{_ARGS}:524-530", LEGACY),
    requires(on("--optimize-vpp-send-recv-comm"), on("--num-layers-per-virtual-pipeline-stage"),
             "--optimize-vpp-send-recv-comm needs a virtual pipeline", f"{_ARGS}:519-520", LEGACY),
    requires(on("--use-fused-swiglu"), on("--swiglu"), "--use-fused-swiglu needs --swiglu", f"{_ARGS}:566-570", LEGACY),
    requires(on("--use-fused-rmsnorm"), ("eq", "--normalization", "RMSNorm"),
             "--use-fused-rmsnorm needs --normalization RMSNorm", f"{_ARGS}:558-565", LEGACY),
    requires(on("--use-nanopipe"), on("--use-legacy-models"), "--use-nanopipe is not available with mcore models",
             f"{_ARGS}:711-712", LEGACY),
    conflict(("eq", "--recompute-method", "uniform"), on("--recompute-activation-function"),
             "uniform recomputation is not compatible with activation function recomputation", f"{_ARGS}:697-703", LEGACY),
    conflict(("eq", "--recompute-granularity", "selective"), on("--recompute-activation-function"),
             "--recompute-activation-function is not compatible with selective recomputation", f"{_ARGS}:704-705", LEGACY),
    requires(on("--moe-dynamic-padding"), on("--moe-no-drop"), "--moe-dynamic-padding needs --moe-no-drop",
             f"{_ARGS}:632-633", LEGACY),
    conflict(("gt", "--num-experts", 0), on("--use-ascend-coc"), "coc is not compatible with moe models",
             f"{_ARGS}:438-440", LEGACY),
    conflict(("gt", "--num-experts", 0), on("--use-ascend-mc2"), "mc2 is not compatible with moe models",
             f"{_ARGS}:438,441-442", LEGACY),
    conflict(on("--moe-no-drop"), ("gt", "--pipeline-model-parallel-size", 1), "--moe-no-drop is not compatible with pp",
             f"{_ARGS}:552-553", LEGACY),
    conflict(on("--use-fused-rmsnorm"), on("--use-nd-matmul"), "ND_MatMul is not compatible with fused_rmsnorm",
             f"{_ARGS}:564-565", LEGACY),
    conflict(("ne", "--moe-zero-memory", "disable"), on("--moe-allgather-overlap-comm"),
             "--moe-zero-memory does not support --moe-allgather-overlap-comm", f"{_ARGS}:630-631", LEGACY),
    requires(on("--moe-permutation-async-comm"), ("eq", "--moe-model-type", "megatron_moe"),
             "--moe-permutation-async-comm only supports megatron core moe (--moe-model-type megatron_moe)",
             f"{_ARGS}:634-635", LEGACY),
    requires(on("--moe-bmm-mc2"), on("--moe-grouped-gemm"), "--moe-bmm-mc2 only works with --moe-grouped-gemm",
             f"{_ARGS}:639-640", LEGACY),
    *[conflict(on("--moe-bmm-mc2"), on(f), f"--moe-bmm-mc2 is not supported with {f}", f"{_ARGS}:641-643", LEGACY)
      for f in ("--moe-tp-extend-ep", "--moe-alltoall-overlap-comm")],
    conflict(("eq", "--recompute-method", "uniform"), on("--recompute-norm"),
             "uniform recomputation is not compatible with norm recomputation", f"{_ARGS}:697,701-703", LEGACY),
    conflict(("eq", "--recompute-granularity", "selective"), on("--recompute-norm"),
             "--recompute-norm is not compatible with selective recomputation", f"{_ARGS}:707-708", LEGACY),
    conflict(on("--recompute-norm"), on("--use-legacy-models"), "--recompute-norm is only supported with mcore models",
             f"{_ARGS}:709-710", LEGACY),
    conflict(on("--automated-pipeline-perf"), on("--num-layers-per-virtual-pipeline-stage"),
             "automated pipeline performance is incompatible with virtual pipeline", f"{_ARGS}:750,754-755", LEGACY),
    conflict(on("--use-nd-matmul"), on("--load"), "ND_MatMul does not support loading weights for training",
             f"{_ARGS}:759,762-763", LEGACY),
    requires(("gt", "--ampipe-degree", 1), on("--use-flash-attn"), "ampipe only supports flash attention",
             f"{_ARGS}:803-804", LEGACY),
    requires(("gt", "--ampipe-degree", 1), ("gt", "--expert-model-parallel-size", 1),
             "ampipe only supports expert_model_parallel_size > 1", f"{_ARGS}:803,806", LEGACY),
    requires(("gt", "--ampipe-degree", 1), ("eq", "--moe-model-type", "deepspeed_moe"),
             "ampipe only supports deepspeed_moe", f"{_ARGS}:803,807", LEGACY),
    *[conflict(("gt", "--ampipe-degree", 1), on(f), f"ampipe does not support {f}", f"{_ARGS}:803,{line}", LEGACY)
      for f, line in (("--use-ascend-mc2", 808), ("--add-bias-linear", 809), ("--overlap-grad-reduce", 810),
                      ("--overlap-param-gather", 811), ("--use-nanopipe", 812),
                      ("--adaptive-recompute-device-swap", 815))],
    # -- §2D MindSpeed-LLM 2.0.0 monolith (mindspeed_llm/training/arguments.py)
    requires(("eq", "--schedules-method", "dualpipev"), on("--moe-fb-overlap"),
             "dualpipev requires --moe-fb-overlap", f"{_LLM200}:255-256", LEGACY),
    requires(on("--use-fused-ring-attention-update"), ("gt", "--context-parallel-size", 1),
             "fused_ring_attention_update only works when context parallel is activated",
             f"{_LLM200}:293-294", LEGACY),
    conflict(("eq", "--position-embedding-type", "alibi"), on("--sliding-window"),
             "Sliding Window Attention is forbidden with alibi", f"{_LLM200}:1035-1036", LEGACY),
    conflict(("eq", "--tokenizer-padding-side", "left"), ("eq", "--position-embedding-type", "alibi"),
             "alibi does not support --tokenizer-padding-side left", f"{_LLM200}:1037-1038", LEGACY),
    conflict(on("--variable-seq-lengths"), ("gt", "--context-parallel-size", 1),
             "context parallelism is forbidden with variable seq lengths", f"{_LLM200}:1094-1096", LEGACY),
    conflict(("ne", "--moe-zero-memory", "disable"), on("--recompute-method"),
             "--moe-zero-memory does not support full recomputation (--recompute-method)", f"{_LLM200}:1150", LEGACY),
    conflict(on("--use-mc2"), on("--use-ascend-coc"), "mc2 and coc can not be used together", f"{_LLM200}:1202",
             LEGACY),
    conflict(on("--use-glm-rope"), on("--use-fused-rotary-pos-emb"),
             "--use-glm-rope is not compatible with --use-fused-rotary-pos-emb",
             f"{_LLM200}:1033-1034", LEGACY),
)


def catalog_for(stack: str) -> Tuple[Entry, ...]:
    return tuple(e for e in CATALOG if stack in e.stacks)
