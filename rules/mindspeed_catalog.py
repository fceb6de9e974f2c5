"""The MindSpeed flag catalog (NPU501, NPU504): pure data, one entry per rule MindSpeed enforces
at start-up. Adding a rule is adding one entry.

A *condition* is a tuple:

* ``("on", "--flag")``: the flag is given (a switch, or a flag with any value);
* ``("gt", "--flag", n)`` / ``("le", "--flag", n)``: its numeric value (or its default) is > n / <= n;
  ``("lt", "--flag", n)``: < n;
* ``("eq", "--flag", "v")`` / ``("ne", "--flag", "v")``: its value (or default) is / is not v;
* ``("in", "--flag", (...))`` / ``("notin", "--flag", (...))``: its value is / is not one of them;
* ``("all", cond, cond, ...)`` / ``("any", cond, cond, ...)``: every / at least one condition holds
  (unknown unless the known parts decide it: an ``all`` with a false part is false, an ``any`` with
  a true part is true).

Kinds: ``conflict`` (``a`` and ``b`` both hold: NPU501), ``requires`` (``a`` holds, ``b`` does
not: NPU504), ``choices`` / ``range`` (``--flag``'s given value is not allowed: NPU504; a range
compares any written number, 0 included, although ``("on", "--flag")`` leaves a 0 value unknown).
The releases each entry holds for (with the upstream line at each release's commit) are data:
``mindspeed_releases.json``, made by tools/gen_releases.py, keyed by :attr:`Entry.key`.

Sources are ``repo@ref path:line`` (read by tools/gen_releases.py; findings and rule pages cite the
full ``Owner/Repo@<commit> path:line`` instead). The refs:
``MS@master`` = Ascend/MindSpeed master 028de58c, ``MS@200r08`` = Ascend/MindSpeed 2.0.0_core_r0.8.0
c721ce33, ``MS@core010`` = Ascend/MindSpeed core_r0.10.0 341447fa, ``LLM@master`` = Ascend/MindSpeed-LLM
master c77308a1, ``LLM@2.0.0`` = Ascend/MindSpeed-LLM 2.0.0 b626d239, ``MEG@0.12.1`` = NVIDIA/Megatron-LM
core_v0.12.1 a845aa7e.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from typing import Dict, FrozenSet, List, Optional, Tuple


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
    # the same in every parser: MS@master mindspeed/arguments.py:181, .../context_parallel/context_parallel_feature.py:27,
    # MS@200r08 mindspeed/arguments.py:210, LLM@master .../context_parallel/context_parallel_feature.py:31-34, LLM@2.0.0 :208
    "--attention-mask-type": "causal",
}
# Each release's own parser defaults (``parser_defaults`` of mindspeed_releases.json, where
# tools/gen_releases.py finds them certain: :class:`View`) override these. A value condition on an
# absent flag with no default is unknown: nothing is reported.

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
    # a ``choices`` entry: "parser" when it is the ``choices=`` of the flag's registration (a
    # parser in the linted files then judges the value instead: AscendSpeed's own), "validator"
    # when a validator checks the value whatever the registration says
    checked_by: str = "parser"

    @functools.cached_property
    def key(self) -> str:
        """A stable name for the entry (its kind, conditions and message), by which the release
        data (``mindspeed_releases.json``) refers to it."""
        text = repr((self.kind, self.a, self.b, self.message))
        return hashlib.blake2b(text.encode("utf-8"), digest_size=6).hexdigest()


def conflict(a, b, message, source):
    return Entry("conflict", a, b, message, source)


def requires(a, b, message, source):
    return Entry("requires", a, b, message, source)


def choices(flag, values, source, checked_by="parser"):
    return Entry("choices", ("on", flag), ("in", flag, tuple(values)),
                 f"{flag} must be one of {', '.join(map(str, values))}", source, checked_by)


def value_range(flag, lo, hi, source):
    """A written numeric value outside [lo, hi] (None: unbounded on that side); 0 is compared too."""
    if lo is not None and hi is not None:
        message = f"{flag} must be in [{lo}, {hi}]"
    else:
        message = f"{flag} must be >= {lo}" if lo is not None else f"{flag} must be <= {hi}"
    return Entry("range", ("on", flag), (flag, lo, hi), message, source)


def on(flag):
    return ("on", flag)


def all_of(*conds):
    return ("all",) + conds


def any_of(*conds):
    return ("any",) + conds


AMO = on("--adaptive-memory-optimization")
DUALPIPEV = ("eq", "--schedules-method", "dualpipev")
_ARGS = "MS@master mindspeed/arguments.py"
_ARGS200 = "MS@200r08 mindspeed/arguments.py"
_FM = "MS@master mindspeed/features_manager/"
_LFM = "LLM@master mindspeed_llm/features_manager/"
_LLM200 = "LLM@2.0.0 mindspeed_llm/training/arguments.py"
_AMO_MSG = "adaptive memory optimization is not compatible with "
MLA_ON = any_of(on("--multi-latent-attention"), on("--multi-head-latent-attention"))
ADAPTIVE_RECOMPUTE = (("gt", "--adaptive-recompute-device-size", 0), on("--adaptive-recompute-device-swap"))

# Not catalogued although in research §2A: feature checks that MindSpeed-LLM's feature list
# (LLM@master mindspeed_llm/features_manager/__init__.py) does not run, so a launch of an LLM
# entry script would be wrongly reported: --fix-router needs EP > 1 (MoEFixRouterFeature),
# --reset-bucket-group-order needs --overlap-param-gather (ResetBucketGroupOrderFeature),
# --compress-dense vs --recompute-activation-function (AnsCompressTensorFeature),
# --use-fused-rotary-pos-emb needs rope (FusedRoPEFeature; Megatron also turns the legacy
# --use-rotary-position-embeddings into rope), --param-and-grad-buffer-pad > 0 (BufferPadFeature),
# --op-cal-tflops vs MLA (TflopsCalculateFeature, functional/tflops_calculate.py:17-18),
# --use-multiparameter-pipeline-model-parallel vs dualpipev (multi_parameter.py:38-41), --sparse-mode
# 0/2 with flash attention (MindSpeed's fusion_attention_v1_feature.py:55-56; LLM's own
# FusionAttentionFeature registers --sparse-mode without the check), --auto-settings vs --save/--load
# (AutoSettingsFeature, auto_settings/auto_settings_feature.py:26-28), the --qad-enable group
# (QADQuantEngineFeature, qad/qad_quant_engine.py:99-140), --balanced-moe-experts' requirements (BalancedMoEFeature,
# moe/balanced_moe.py:23-78), --ulysses-degree-in-cp for hybrid_adaptive_cp_algo on the current stack
# (adaptive_context_parallel.py:41-43; LLM's --context-parallel-algo choices leave the algorithm out; the
# legacy validators' twin is an entry), CP > 1 with --reset-attention-mask and the causal mask needs
# --variable-seq-lengths (MindSpeed's reset_attention_mask_feature.py:20-23; LLM registers its own
# ResetAttentionMaskFeature without the check, LLM@master .../flash_attention/reset_attention_mask_feature.py).
#
# Coverage: every rule of research §1, §1.2, §2A-§2D is an entry below or listed here with the
# reason it is left out. Left out because it would need a guess:
#
# (a) Arithmetic across flag values or list contents (the condition language compares one flag
#     with a constant): context-parallel algorithm rules (seq-length % (2*CP), heads % (CP*TP),
#     ulysses degree, --cp-window-size in [1, CP) dividing CP; §2A context_parallel_feature.py:41-92,
#     ulysses_context_parallel.py:29-33, adaptive_context_parallel.py:39-52; LLM mamba_cp_algo;
#     §2B :645-690; §2D ulysses+GQA :274-282), tp = tp_x * tp_y (tp_2d.py:39-40), VPP layers vs
#     layers per stage (megatron_basic.py:28; §2B :537-549; LLM training_basic.py:93-104),
#     dualpipev num-layers >= 2*PP and micro-batches (dualpipev_feature.py:43-48), layout stage
#     counts (also layout with VPP vs --optimize-send-recv-comm: the VPP size is the layout's stage
#     count / PP, pipeline_model_parallel_layout_feature.py:147-160), --pipeline-num-transformer-layers shapes and sums, --noop-layers in [0, num-layers),
#     --num-layer-list length == PP and sum == num-layers, moe-zero-memory-num-layers <= layers per
#     stage, num_experts % (TP*EP) (tp_extend_ep), --first-k-dense-replace < num-layers (and per
#     stage), --recompute-*-num-layers <= num-layers, fb-overlap GBS/(MBS*PP*DP) and noop-layer
#     placement, shared-expert size == n * ffn size, balanced-moe hot-expert counts, --expert-interval
#     <= num-layers (its >= 1 is an entry), nd-matmul TP divisibility, ampipe seq divisibility, output-layer-slice-num
#     dividing the vocabulary, group-topk < EP, --recompute-in-bubble recompute-num-layers value, LLM 2.0.0's
#     context-parallel sizes (seq-length, --cp-window-size, ulysses degree, heads; LLM@2.0.0
#     training/arguments.py:303-345), fb-overlap with a layout: no empty decoder chunk (fb_overlap.py:54-68;
#     its --noop-layers rule, :44-47, is the layout's own --noop-layers entry).
# (b) A Megatron default this repository cannot verify (no Megatron source here; an absent flag
#     stays unknown): MLA head-dim requirements on the current stack (Megatron core_v0.12.1 gives
#     --kv-lora-rank/--qk-head-dim/--qk-pos-emb-head-dim/--v-head-dim defaults, LLM mla_feature.py:67-77;
#     the LLM 2.0.0 ones, default None, are entries), --shared-expert-gate vs gradient-accumulation
#     fusion (on unless --no-gradient-accumulation-fusion; --fp16 also turns it off: §2D :1156,
#     §2B :866-868), --quant-grads vs gradient-accumulation fusion (low_precision_optimizer_feature.py:69-74),
#     LLM 2.0.0's --o2-gradient vs gradient-accumulation fusion (LLM@2.0.0 training/arguments.py:1486-1488),
#     --recompute-in-advance needs --recompute-num-layers (unless AMO), --defer-embedding-wgrad-compute
#     (MindSpeed's MegatronBasicFeature only; LLM has its own), attention-mask defaults.
# (c) Runtime state, files or packages: mindio_ttp / torch_npu ops / mindstudio-probe installed
#     (--moe-permute-fusion's checks, the allgather dispatcher and the capacity factor without
#     --moe-pad-expert-input-to-capacity, run only where torch_npu has the fused permute ops: with an
#     older torch_npu the feature warns and turns the fusion off, fused_moe_permute.py:27-36),
#     --tokenizer-name-or-path existing, hf2mg safetensors in the load dir, Ascend 950 for
#     --coc-fused-kernel, mmlu/ceval directories, world size divisibility, dsa.py's model spec,
#     DeepSeek4 spec needs kvallgather, --aiqos-mode manual (patch time), --dist-train (MM only).
# (d) Dead checks (research §2F): hyphenated getattr names (swap_attention.py:21-22, smart_swap.py:20),
#     unregistered attributes (fused_ema_adamw in virtual_optimizer.py:37 / compress.py:55,
#     moe_hierarchical_alltoallv), LLM moe_router.py:62-63, AMO feature echoes on current stacks, LLM 2.0.0's
#     rl-training check (`_validate_rl_training` only returns, LLM@2.0.0 training/arguments.py:1225-1226).
# (e) Forced off before MindSpeed-LLM validates (LLM@master mindspeed_llm/training/arguments.py:170-176,
#     _add_dummy_args_v2 runs before validate_features_args, :215-216), so an LLM launch passes:
#     --unaligned-linear vs --use-ascend-mc2 / --use-ascend-coc / --tp-2d / MoE
#     (mc2.py:19, locl_coc.py:20, unaligned_linear_feature.py:21-24), --enable-share-memory vs
#     --reset-attention-mask / alibi (LLM common/data.py:15-18), --use-fused-mlp rules.
#     LLM 2.0.0 sets use_mc2 = False before its checks (LLM@2.0.0 training/arguments.py:1520), so
#     --use-mc2 vs --use-ascend-coc (:1202) and --use-mc2 + MoE + grouped gemm (:1191) never fire.
# (f) MindSpeed-LLM-only checks on flags a plain MindSpeed launch also takes (the launch line cannot
#     tell the two apart; MindSpeed accepts them): CP > 1 vs alibi (LLM context_parallel_feature.py:49-50;
#     MindSpeed tests_extend ring_attention.sh runs it), --moe-expert-capacity-factor vs the allgather
#     dispatcher and its load-balancing type (LLM moe_router.py:53-61; MindSpeed's resume_training
#     tests run allgather with a capacity factor; the LLM 2.0.0 versions are entries),
#     MoE + --use-ascend-mc2 + --moe-grouped-gemm (LLM transformer_block.py:20-21),
#     --enable-recompute-layers-per-pp-rank needs VPP and recompute (LLM 2.0.0 :1052-1053; MindSpeed
#     accepts it without VPP and its tests_extend llama2/dualpipev scripts do so), the multi-parameter
#     pipeline vs --moe-fb-overlap (multi_parameter.py:36; not in LLM's feature list),
#     --moe-router-group-topk 0 (LLM arguments/deprecated_args.py:86-87; a Megatron flag MindSpeed
#     does not check), --profile-step-start >= 1 (LLM functional/profiling.py:35-36; a Megatron
#     flag MindSpeed does not check), CP > 1 needs --use-mcore-models (LLM@2.0.0 training/arguments.py:300-301;
#     MindSpeed's tests_extend CP scripts launch without it).
# (g) The two legacy validators disagree on the dispatcher for --moe-alltoall-overlap-comm
#     (MindSpeed arguments.py:601-617 alltoall_seq, LLM 2.0.0 :1137-1140 alltoall) and on
#     --moe-allgather-overlap-comm's TP/EP need; only the rules they share and the current-stack ones
#     are entries.
# (h) Warnings and silent rewrites, not start-up errors: --use-fusion-attn-v2, --automated-pipeline,
#     --shape-order, --fp16 and gradient-accumulation fusion, --use-gmm-fp8 recipe, dsa-indexer's
#     lightning-indexer pair (turned on together), ulysses_cp_algo with CP = 1, --recompute-in-advance
#     switched off unless VPP layers == 1.
# (j) Only in MindSpeed master's unregistered legacy validator, not in the legacy releases
#     (MS@200r08 mindspeed/arguments.py has no such check): --save/--load need --ckpt-format torch
#     (MS@master mindspeed/arguments.py:909-911). The releases disagree: --moe-adaptive-recompute-activation
#     is refused with the alltoall_seq dispatcher on master (:604-605) but with alltoall on MS@200r08 (:678-679).

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
               f"{_ARGS}:715-724 (`if adaptive_recompute_enable:`)")
      for ar in ADAPTIVE_RECOMPUTE
      for f in ("--recompute-granularity", "--recompute-method", "--recompute-activation-function",
                "--swap-attention", "--recompute-in-advance", "--recompute-in-bubble")],
    conflict(on("--smart-swap"), ADAPTIVE_RECOMPUTE[0], "smart swap is not compatible with adaptive selective recompute",
             f"{_ARGS}:725-726; {_FM}memory/smart_swap.py:20-22"),
    requires(on("--adaptive-recompute-device-swap"), on("--use-legacy-models"),
             "--adaptive-recompute-device-swap is not available with mcore models (needs --use-legacy-models)",
             f"{_ARGS}:713-714"),
    conflict(on("--memory-fragmentation"), on("--use-fused-rotary-pos-emb"),
             "memory fragmentation is not compatible with --use-fused-rotary-pos-emb", f"{_ARGS200}:825-827"),
    conflict(on("--memory-fragmentation"), ADAPTIVE_RECOMPUTE[0],
             "memory fragmentation is not compatible with adaptive selective recompute", f"{_ARGS200}:823-824"),
    conflict(on("--memory-fragmentation"), on("--smart-swap"),
             "memory fragmentation is not compatible with smart swap", f"{_ARGS200}:828-830"),

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
    requires(on("--tp-2d"), ("in", "--context-parallel-algo", ("megatron_cp_algo", "ulysses_cp_algo")),
             "tp-2d only supports megatron_cp_algo or ulysses_cp_algo",
             f"{_FM}tensor_parallel/tp_2d.py:33-36 (LLM@master mindspeed_llm/features_manager/tensor_parallel/tp_2d.py:7 inherits it)"),
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
             "--moe-allgather-overlap-comm needs --moe-permutation-async-comm",
             f"{_FM}moe/moe_allgather_overlap.py:27-28; {_ARGS}:610-612"),
    requires(on("--moe-allgather-overlap-comm"), on("--moe-grouped-gemm"),
             "--moe-allgather-overlap-comm needs --moe-grouped-gemm", f"{_FM}moe/moe_allgather_overlap.py:29-30; {_ARGS}:610,613-614"),
    # the legacy validator asks the same of --moe-alltoall-overlap-comm, whatever the dispatcher
    requires(on("--moe-alltoall-overlap-comm"), on("--moe-permutation-async-comm"),
             "--moe-alltoall-overlap-comm needs --moe-permutation-async-comm", f"{_ARGS}:610-612"),
    requires(on("--moe-alltoall-overlap-comm"), on("--moe-grouped-gemm"),
             "--moe-alltoall-overlap-comm needs --moe-grouped-gemm", f"{_ARGS}:610,613-614"),
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
    # (not --use-dist-ckpt: the check reads args.use_dist_ckpt, which Megatron core_r0.12.1 derives
    # from --ckpt-format, the flag being deprecated and without effect (MEG@a845aa7e
    # megatron/training/arguments.py:294-298, :918-919), and which LLM 2.2.0-26.0.0 force to False
    # before the feature checks (337813b0 mindspeed_llm/training/arguments.py:1322, :1539-1540))
    *[conflict(on("--enable-high-availability"), on(f), f"high availability is not supported with {f}",
               f"{_LFM}high_availability/high_availability.py:{line}")
      for f, line in (("--swap-attention", "45-46"), ("--disable-gloo-group", "49-50"),
                      ("--swap-optimizer", "53-54"))],
    *[conflict(on("--enable-elastic-training"), on(f), f"elastic training is not supported with {f}",
               f"{_LFM}high_availability/high_availability.py:{line}")
      for f, line in (("--use-custom-fsdp", "63-64"), ("--reuse-fp32-param", "67-68"))],
    requires(on("--neat-pack"), on("--reset-attention-mask"), "--neat-pack needs --reset-attention-mask",
             f"{_LFM}megatron_basic/training_basic.py:55"),
    # -- §2A/§2C conditions on several flags or on values (all_of / any_of)
    conflict(all_of(on("--reuse-fp32-param"), on("--use-legacy-models")), on("--overlap-param-gather"),
             "in legacy models overlap_param_gather does not support reuse_fp32_param",
             f"{_FM}memory/reuse_fp32_param.py:21-22; {_ARGS}:862-864"),
    requires(("ne", "--moe-zero-memory", "disable"), any_of(on("--moe-alltoall-overlap-comm"), on("--moe-fb-overlap")),
             "--moe-zero-memory only supports --moe-alltoall-overlap-comm or --moe-fb-overlap",
             f"{_FM}moe/moe_zero_memory.py:33-34; {_LLM200}:1148-1149"),
    conflict(on("--moe-fb-overlap"), ("in", "--moe-token-dispatcher-type", ("allgather", "alltoall_seq")),
             "the fb overlap feature does not support the allgather and alltoall_seq dispatchers",
             f"{_FM}moe/fb_overlap.py:88-89"),
    requires(on("--moe-fb-overlap"), ("gt", "--expert-model-parallel-size", 1),
             "the fb overlap feature needs expert parallel size > 1", f"{_FM}moe/fb_overlap.py:91-92"),
    conflict(on("--moe-fb-overlap"), ("gt", "--expert-tensor-parallel-size", 1),
             "the fb overlap feature needs --expert-tensor-parallel-size 1", f"{_FM}moe/fb_overlap.py:91-92"),
    requires(on("--moe-alltoall-overlap-comm"), ("in", "--moe-token-dispatcher-type", ("alltoall", "alltoall_seq")),
             "--moe-alltoall-overlap-comm only supports the alltoall or alltoall_seq dispatcher",
             f"{_FM}moe/moe_alltoall_overlap.py:24-25"),
    requires(all_of(on("--moe-alltoall-overlap-comm"), ("eq", "--moe-token-dispatcher-type", "alltoall")),
             on("--moe-grouped-gemm"), "--moe-alltoall-overlap-comm with the alltoall dispatcher needs --moe-grouped-gemm",
             f"{_FM}moe/moe_alltoall_overlap.py:30-32"),
    conflict(all_of(on("--moe-alltoall-overlap-comm"), ("eq", "--moe-token-dispatcher-type", "alltoall")),
             on("--moe-tp-extend-ep"), "the alltoall dispatcher does not support --moe-tp-extend-ep (use alltoall_seq)",
             f"{_FM}moe/moe_alltoall_overlap.py:30,33-34"),
    *[requires(all_of(on("--moe-alltoall-overlap-comm"), ("eq", "--moe-token-dispatcher-type", "alltoall_seq")),
               on(f), f"--moe-alltoall-overlap-comm with the alltoall_seq dispatcher needs {f}",
               f"{_FM}moe/moe_alltoall_overlap.py:39,{line}")
      for f, line in (("--moe-permutation-async-comm", "40-41"), ("--moe-grouped-gemm", "42-43"))],
    requires(all_of(on("--moe-alltoall-overlap-comm"), ("eq", "--moe-token-dispatcher-type", "alltoall_seq"),
                    ("gt", "--tensor-model-parallel-size", 1)), on("--moe-tp-extend-ep"),
             "with tensor parallel size > 1, --moe-alltoall-overlap-comm with alltoall_seq needs --moe-tp-extend-ep",
             f"{_FM}moe/moe_alltoall_overlap.py:39,44-45"),
    # the legacy validator's form (any dispatcher; the alltoall one is the only one it allows with
    # --moe-alltoall-overlap-comm, where the feature manager later rejects --moe-tp-extend-ep)
    requires(all_of(on("--moe-alltoall-overlap-comm"), ("gt", "--tensor-model-parallel-size", 1)),
             any_of(on("--moe-tp-extend-ep"), on("--moe-experts-pipeline-degree")),
             "with tensor parallel size > 1, --moe-alltoall-overlap-comm needs --moe-tp-extend-ep (or "
             "--moe-experts-pipeline-degree)", f"{_ARGS200}:689-690"),
    requires(on("--moe-allgather-overlap-comm"), ("eq", "--moe-token-dispatcher-type", "allgather"),
             "--moe-allgather-overlap-comm only supports the allgather dispatcher",
             f"{_FM}moe/moe_allgather_overlap.py:24-25; {_LLM200}:1152-1153"),
    requires(on("--moe-alltoall-mc2"), ("in", "--moe-token-dispatcher-type", ("alltoall", "alltoall_seq")),
             "--moe-alltoall-mc2 only supports the alltoall or alltoall_seq dispatcher",
             f"{_FM}moe/moe_alltoall_mc2.py:28-29"),
    conflict(all_of(on("--moe-alltoall-mc2"), ("eq", "--moe-token-dispatcher-type", "alltoall_seq")),
             ("gt", "--tensor-model-parallel-size", 1), "--moe-alltoall-mc2 with alltoall_seq needs TP=1",
             f"{_FM}moe/moe_alltoall_mc2.py:33-35"),
    conflict(all_of(on("--moe-alltoall-mc2"), ("eq", "--moe-token-dispatcher-type", "alltoall")),
             ("gt", "--expert-tensor-parallel-size", 1), "--moe-alltoall-mc2 with alltoall needs ETP=1",
             f"{_FM}moe/moe_alltoall_mc2.py:36-38"),
    conflict(all_of(on("--moe-alltoall-mc2"), ("eq", "--moe-token-dispatcher-type", "alltoall")),
             on("--moe-expert-capacity-factor"), "--moe-alltoall-mc2 only supports dropless (no capacity factor)",
             f"{_FM}moe/moe_alltoall_mc2.py:36,39-40"),
    *[requires(("eq", "--moe-router-load-balancing-type", "group_limited_greedy"), any_of(on(f), on(alias)),
               f"group_limited_greedy needs {f} (or its alias {alias})", f"{_LFM}moe/moe_router.py:{line}; "
               f"{_LFM}arguments/deprecated_args.py:32-35,81")
      for f, alias, line in (("--moe-router-group-topk", "--topk-group", "68-70"),
                             ("--moe-router-topk-scaling-factor", "--routed-scaling-factor", "68,71-72"))],
    # transformer engine / fp8 (MindSpeed and MindSpeed-LLM TransformerEngineBasicFeature)
    conflict(on("--fp8-format"), ("eq", "--transformer-impl", "local"), "FP8 only supports the transformer engine implementation",
             f"{_LFM}megatron_basic/transformer_engine_basic.py:53-54; {_FM}megatron_basic/transformer_engine_basic.py:86-87"),
    conflict(on("--use-ascend-coc"), ("eq", "--transformer-impl", "transformer_engine"),
             "transformer engine does not support ascend coc",
             f"{_LFM}megatron_basic/transformer_engine_basic.py:55-56; {_FM}megatron_basic/transformer_engine_basic.py:88-89"),
    requires(all_of(on("--use-ascend-mc2"), on("--fp8-format")), ("eq", "--fp8-recipe", "mxfp8"),
             "MC2 with fp8 is supported only by the mxfp8 recipe",
             f"{_LFM}megatron_basic/transformer_engine_basic.py:57-58; {_FM}megatron_basic/transformer_engine_basic.py:90-91"),
    conflict(("eq", "--transformer-impl", "transformer_engine"), on("--use-legacy-models"),
             "transformer engine only supports mcore models",
             f"{_LFM}megatron_basic/transformer_engine_basic.py:59-62; {_FM}megatron_basic/transformer_engine_basic.py:92-95"),
    requires(("eq", "--fp8-format", "hif8"), ("eq", "--fp8-recipe", "tensorwise"), "hif8 only supports tensorwise scaling",
             f"{_LFM}megatron_basic/transformer_engine_basic.py:63-65; {_FM}megatron_basic/transformer_engine_basic.py:96-98"),
    requires(on("--fp8-reuse-quantized-weight"), on("--fp8-format"),
             "fp8_reuse_quantized_weight is only valid when FP8 training is enabled (--fp8-format)",
             f"{_LFM}megatron_basic/transformer_engine_basic.py:72-73; {_FM}megatron_basic/transformer_engine_basic.py:105-106"),
    # muon (MindSpeed-LLM MuonOptimizerFeature; post_validate turns --use-distributed-optimizer into the layer-wise one)
    conflict(("eq", "--optimizer", "muon"), on("--fp16"), "the Muon optimizer does not support fp16",
             f"{_LFM}optimizer/muon_optimizer_feature.py:131-134"),
    *[conflict(("eq", "--optimizer", "muon"), on(f), "the Muon optimizer does not support FSDP",
               f"{_LFM}optimizer/muon_optimizer_feature.py:131,135-136")
      for f in ("--use-custom-fsdp", "--use-torch-fsdp2")],
    requires(all_of(("eq", "--optimizer", "muon"), on("--overlap-param-gather")),
             any_of(on("--use-layer-wise-distributed-optimizer"), on("--use-distributed-optimizer")),
             "Muon with --overlap-param-gather needs the layer-wise distributed optimizer",
             f"{_LFM}optimizer/muon_optimizer_feature.py:115-117,137-139"),
    requires(all_of(("eq", "--optimizer", "muon"), on("--overlap-param-gather")), on("--overlap-grad-reduce"),
             "Muon: --overlap-param-gather needs --overlap-grad-reduce",
             f"{_LFM}optimizer/muon_optimizer_feature.py:137,144-145"),
    # -- §2C MindSpeed-LLM: data, LoRA, high availability, inference, checkpoint conversion
    conflict(on("--lora-target-modules"), on("--moe-tp-extend-ep"), "LoRA is not supported with --moe-tp-extend-ep",
             f"{_LFM}finetune/lora.py:65-66"),
    requires(all_of(on("--lora-target-modules"), on("--num-experts")), ("eq", "--moe-token-dispatcher-type", "alltoall_seq"),
             "LoRA in a MoE model only supports the alltoall_seq dispatcher", f"{_LFM}finetune/lora.py:62-63"),
    conflict(on("--lora-target-modules"), on("--use-ascend-coc"), "CoC is not compatible with LoRA training",
             f"{_LFM}tensor_parallel/coc.py:12-13"),
    conflict(on("--enable-high-availability"), on("--lora-target-modules"), "high availability is not supported with LoRA",
             f"{_LFM}high_availability/high_availability.py:76-77"),
    *[conflict(on("--enable-elastic-training"), ("gt", f, 1), f"elastic training is not supported with {f} > 1",
               f"{_LFM}high_availability/high_availability.py:71-72")
      for f in ("--expert-model-parallel-size", "--context-parallel-size")],
    conflict(on("--prompt-type"), on("--hf-chat-template"), "--prompt-type is forbidden with the huggingface chat template",
             f"{_LFM}inference/inference.py:14-15; {_LLM200}:1101-1102"),
    conflict(on("--enable-hf2mg-convert"), ("eq", "--ckpt-format", "torch_dist"),
             "--ckpt-format torch_dist cannot be used with --enable-hf2mg-convert",
             f"{_LFM}convert_checkpoint/convert_checkpoint.py:115-116"),
    requires(on("--enable-hf2mg-convert"), on("--load"), "--enable-hf2mg-convert needs --load",
             f"{_LFM}convert_checkpoint/convert_checkpoint.py:144-145"),
    requires(on("--enable-mg2hf-convert"), on("--save"), "--enable-mg2hf-convert needs --save",
             f"{_LFM}convert_checkpoint/convert_checkpoint.py:147-148"),
    conflict(on("--lora-target-modules"), on("--enable-mg2hf-convert"), "LoRA is not supported with --enable-mg2hf-convert",
             f"{_LFM}convert_checkpoint/convert_checkpoint.py:150-151"),
    # pipeline: --num-layer-list (NumLayerListFeature; 2.0.0 monolith :1194-1200)
    requires(on("--num-layer-list"), ("gt", "--pipeline-model-parallel-size", 1),
             "a dynamic pipeline (--num-layer-list) needs pipeline parallel size > 1",
             f"{_LFM}pipeline_parallel/num_layer_list.py:25,29-30; {_LLM200}:1197-1198"),
    conflict(on("--num-layer-list"), on("--num-layers-per-virtual-pipeline-stage"),
             "a dynamic pipeline (--num-layer-list) and a virtual pipeline cannot be enabled together",
             f"{_LFM}pipeline_parallel/num_layer_list.py:31-32; {_LFM}megatron_basic/training_basic.py:92-93; "
             f"{_LLM200}:1199-1200"),
    conflict(on("--num-layer-list"), DUALPIPEV, "a dynamic pipeline (--num-layer-list) and dualpipev cannot be enabled together",
             f"{_LFM}pipeline_parallel/num_layer_list.py:33-34"),
    # rope / context parallel / transformer block
    *[requires(("eq", "--rope-scaling-type", "longrope"), on(f), f"longrope needs {f}",
               f"{_LFM}common/rotary.py:{line}; {_LLM200}:{old}")
      for f, line, old in (("--rope-scaling-original-max-position-embeddings", "69-71", "1463-1466"),
                           ("--long-factor", "73-74", "1463,1467-1468"), ("--short-factor", "76-77", "1463,1472-1473"))],
    # (only under longrope: rotary.py:68; 2.0.0/2.1.0's _validate_long_rope likewise)
    *[requires(all_of(on(a), ("eq", "--rope-scaling-type", "longrope")), on(b),
               "with longrope, --short-mscale and --long-mscale must be set together",
               f"{_LFM}common/rotary.py:68,79-80; {_LLM200}:1463,1477-1478")
      for a, b in (("--short-mscale", "--long-mscale"), ("--long-mscale", "--short-mscale"))],
    conflict(("gt", "--context-parallel-size", 1), on("--use-kv-cache"), "context parallel does not support use_kv_cache",
             f"{_LFM}context_parallel/context_parallel_feature.py:48,51-52"),
    conflict(all_of(("gt", "--context-parallel-size", 1), ("eq", "--context-parallel-algo", "kvallgather_cp_algo")),
             ("eq", "--attention-mask-type", "general"), "kvallgather_cp_algo only supports the causal attention mask",
             f"{_LFM}context_parallel/context_parallel_feature.py:59-61; {_FM}context_parallel/context_parallel_feature.py:83-85"),
    # MLA / mHC / DSA indexer (--multi-head-latent-attention is MindSpeed-LLM's alias of --multi-latent-attention)
    *[requires(all_of(on("--multi-latent-attention"), on("--mla-up-proj-tp-overlap")), on(f),
               f"--mla-up-proj-tp-overlap needs {f}", f"{_LFM}transformer/multi_latent_attention/mla_feature.py:67,{line}")
      for f, line in (("--mla-mm-split", "81-83"), ("--sequence-parallel", "81,84-85"))],
    requires(all_of(on("--multi-latent-attention"), on("--recompute-mla-up-proj"), ("gt", "--tensor-model-parallel-size", 1)),
             on("--mla-up-proj-tp-overlap"), "--recompute-mla-up-proj with tensor parallel needs --mla-up-proj-tp-overlap",
             f"{_LFM}transformer/multi_latent_attention/mla_feature.py:67,87-89"),
    conflict(all_of(on("--multi-latent-attention"), on("--recompute-mla-up-proj")), on("--mla-zero-memory"),
             "--recompute-mla-up-proj is incompatible with --mla-zero-memory",
             f"{_LFM}transformer/multi_latent_attention/mla_feature.py:67,93-94"),
    requires(all_of(on("--multi-latent-attention"), on("--mla-swap-core-attn-out")), DUALPIPEV,
             "--mla-swap-core-attn-out can only be used with dualpipev",
             f"{_LFM}transformer/multi_latent_attention/mla_feature.py:67,95-97"),
    requires(all_of(on("--multi-latent-attention"), on("--mla-swap-core-attn-out")), on("--moe-fb-overlap"),
             "--mla-swap-core-attn-out can only be used with --moe-fb-overlap",
             f"{_LFM}transformer/multi_latent_attention/mla_feature.py:67,95,98-99"),
    conflict(on("--multi-latent-attention"), ("lt", "--padded-base-length", 1),
             "--padded-base-length cannot be less than 1", f"{_LFM}transformer/multi_latent_attention/mla_feature.py:67,79-80"),
    *[requires(on(feat), MLA_ON, f"{feat} is only supported with MLA (--multi-latent-attention)", src)
      for feat, src in (("--enable-mhc", f"{_LFM}transformer/mhc_feature.py:52-55"),
                        ("--enable-dsa-indexer", f"{_LFM}transformer/multi_latent_attention/dsa_indexer_feature.py:112-115"))],
    *[requires(on(feat), on("--use-flash-attn"), f"{feat} is only supported with flash attention (--use-flash-attn)", src)
      for feat, src in (("--enable-mhc", f"{_LFM}transformer/mhc_feature.py:52,57-58"),
                        ("--enable-dsa-indexer", f"{_LFM}transformer/multi_latent_attention/dsa_indexer_feature.py:112,117-118"))],
    *[requires(all_of(on("--enable-dsa-indexer"), on("--reset-attention-mask")), b,
               f"DSA with the TND format (--reset-attention-mask) requires {m}",
               f"{_LFM}transformer/multi_latent_attention/dsa_indexer_feature.py:{line}")
      for b, m, line in ((any_of(on("--use-fused-lightning-indexer"), on("--use-fused-lightning-indexer-loss")),
                          "--use-fused-lightning-indexer", "101-104,124-126"),
                         (on("--use-sparse-flash-attn"), "--use-sparse-flash-attn", "124,129-130"))],
    *[requires(on("--indexer-qk-quant-scheme"), on(f), f"--indexer-qk-quant-scheme needs {f}",
               f"{_LFM}transformer/multi_latent_attention/dsa_indexer_feature.py:{line}")
      for f, line in (("--enable-dsa-indexer", "131-133"), ("--kv-compress", "131,137-138"))],
    # -- value choices and ranges (argparse choices / validate checks)
    choices("--context-parallel-kv-cache-policy", ("full", "half"), f"{_FM}context_parallel/context_parallel_kv_cache.py"),
    choices("--moe-zero-memory", ("disable", "level0", "level1"), f"{_FM}moe/moe_zero_memory.py"),
    choices("--recompute-granularity", ("full", "selective"), "MEG@0.12.1 megatron/training/arguments.py:1533-1534"),
    choices("--recompute-method", ("uniform", "block"), "MEG@0.12.1 megatron/training/arguments.py:1554-1555"),
    choices("--alibi-fusion-attn-type", ("0", "2"), f"{_FM}transformer/flash_attention/alibi_feature.py:73",
            checked_by="validator"),  # validate_args; the registration has no choices
    value_range("--context-parallel-cache-interval", 0, None,
                f"{_FM}context_parallel/context_parallel_kv_cache.py:40,49-50"),
    value_range("--moe-zero-memory-num-layers", 0, None, f"{_FM}moe/moe_zero_memory.py:27-30"),
# -- §2B legacy validator only (mindspeed/arguments.py validate_args_wrapper)
    conflict(on("--enable-zero3"), on("--use-ascend-mc2"), "enable_zero3 is not compatible with use_ascend_mc2",
             f"{_ARGS}:524-530"),
    conflict(on("--enable-zero3"), on("--recompute-granularity"), "enable_zero3 is not compatible with recompute",
             f"{_ARGS}:524-530"),
    conflict(on("--enable-zero3"), on("--use-pipe-experts"), "enable_zero3 is not compatible with use_pipe_experts",
             f"{_ARGS}:524-530"),
    requires(on("--optimize-vpp-send-recv-comm"), on("--num-layers-per-virtual-pipeline-stage"),
             "--optimize-vpp-send-recv-comm needs a virtual pipeline", f"{_ARGS}:519-520"),
    requires(on("--use-fused-swiglu"), on("--swiglu"), "--use-fused-swiglu needs --swiglu",
             f"{_ARGS}:566-570; {_LLM200}:1498-1502"),
    requires(on("--use-fused-rmsnorm"), ("eq", "--normalization", "RMSNorm"),
             "--use-fused-rmsnorm needs --normalization RMSNorm", f"{_ARGS}:558-565; {_LLM200}:1492-1497"),
    requires(on("--use-nanopipe"), on("--use-legacy-models"), "--use-nanopipe is not available with mcore models",
             f"{_ARGS}:711-712"),
    conflict(("eq", "--recompute-method", "uniform"), on("--recompute-activation-function"),
             "uniform recomputation is not compatible with activation function recomputation", f"{_ARGS}:697-703"),
    conflict(("eq", "--recompute-granularity", "selective"), on("--recompute-activation-function"),
             "--recompute-activation-function is not compatible with selective recomputation", f"{_ARGS}:704-705"),
    requires(on("--moe-dynamic-padding"), on("--moe-no-drop"), "--moe-dynamic-padding needs --moe-no-drop",
             f"{_ARGS}:632-633"),
    conflict(("gt", "--num-experts", 0), on("--use-ascend-coc"), "coc is not compatible with moe models",
             f"{_ARGS}:438-440"),
    conflict(("gt", "--num-experts", 0), on("--use-ascend-mc2"), "mc2 is not compatible with moe models",
             f"{_ARGS}:438,441-442"),
    conflict(on("--moe-no-drop"), ("gt", "--pipeline-model-parallel-size", 1), "--moe-no-drop is not compatible with pp",
             f"{_ARGS}:552-553"),
    conflict(on("--use-fused-rmsnorm"), on("--use-nd-matmul"), "ND_MatMul is not compatible with fused_rmsnorm",
             f"{_ARGS}:564-565"),
    conflict(("ne", "--moe-zero-memory", "disable"), on("--moe-allgather-overlap-comm"),
             "--moe-zero-memory does not support --moe-allgather-overlap-comm", f"{_ARGS}:630-631"),
    requires(on("--moe-permutation-async-comm"), ("eq", "--moe-model-type", "megatron_moe"),
             "--moe-permutation-async-comm only supports megatron core moe (--moe-model-type megatron_moe)",
             f"{_ARGS}:634-635"),
    requires(on("--moe-bmm-mc2"), on("--moe-grouped-gemm"), "--moe-bmm-mc2 only works with --moe-grouped-gemm",
             f"{_ARGS}:639-640"),
    *[conflict(on("--moe-bmm-mc2"), on(f), f"--moe-bmm-mc2 is not supported with {f}", f"{_ARGS}:641-643")
      for f in ("--moe-tp-extend-ep", "--moe-alltoall-overlap-comm")],
    conflict(("eq", "--recompute-method", "uniform"), on("--recompute-norm"),
             "uniform recomputation is not compatible with norm recomputation", f"{_ARGS}:697,701-703"),
    conflict(("eq", "--recompute-granularity", "selective"), on("--recompute-norm"),
             "--recompute-norm is not compatible with selective recomputation", f"{_ARGS}:707-708"),
    conflict(on("--recompute-norm"), on("--use-legacy-models"), "--recompute-norm is only supported with mcore models",
             f"{_ARGS}:709-710"),
    conflict(on("--automated-pipeline-perf"), on("--num-layers-per-virtual-pipeline-stage"),
             "automated pipeline performance is incompatible with virtual pipeline", f"{_ARGS}:750,754-755"),
    conflict(on("--use-nd-matmul"), on("--load"), "ND_MatMul does not support loading weights for training",
             f"{_ARGS}:759,762-763"),
    requires(("gt", "--ampipe-degree", 1), on("--use-flash-attn"), "ampipe only supports flash attention",
             f"{_ARGS}:803-804"),
    requires(("gt", "--ampipe-degree", 1), ("gt", "--expert-model-parallel-size", 1),
             "ampipe only supports expert_model_parallel_size > 1", f"{_ARGS}:803,806"),
    requires(("gt", "--ampipe-degree", 1), ("eq", "--moe-model-type", "deepspeed_moe"),
             "ampipe only supports deepspeed_moe", f"{_ARGS}:803,807"),
    *[conflict(("gt", "--ampipe-degree", 1), on(f), f"ampipe does not support {f}", f"{_ARGS}:803,{line}")
      for f, line in (("--use-ascend-mc2", 808), ("--add-bias-linear", 809), ("--overlap-grad-reduce", 810),
                      ("--overlap-param-gather", 811), ("--use-nanopipe", 812),
                      ("--adaptive-recompute-device-swap", 815))],
    requires(all_of(("gt", "--num-experts", 0), on("--use-legacy-models")), ("eq", "--moe-model-type", "deepspeed_moe"),
             "megatron_moe (the default --moe-model-type) is not compatible with --use-legacy-models",
             f"{_ARGS}:438,443-445 ({_ARGS200}:517-521)"),
    requires(all_of(("gt", "--num-experts", 0), ("eq", "--moe-model-type", "deepspeed_moe")), on("--use-legacy-models"),
             "deepspeed_moe only supports --use-legacy-models", f"{_ARGS}:438,447-449 ({_ARGS200}:523-525)"),
    requires(all_of(on("--use-pipe-experts"), on("--pipe-experts-multi-stream")), on("--sequence-parallel"),
             "--pipe-experts-multi-stream can only be used with --sequence-parallel",
             f"{_ARGS}:580,583-584 ({_ARGS200}:667-668)"),
    conflict(on("--use-pipe-experts"), ("le", "--pipe-experts-multi-data", 0),
             "--pipe-experts-multi-data must be greater than 0 with --use-pipe-experts",
             f"{_ARGS}:580-582 ({_ARGS200}:664-666)"),
    requires(("le", "--expert-interval", 0), ("gt", "--expert-interval", 0),
             "--expert-interval must be between 1 and num layers", f"{_ARGS}:853-854 ({_ARGS200}:960-961)"),
    requires(("le", "--moe-train-capacity-factor", 0), ("gt", "--moe-train-capacity-factor", 0),
             "--moe-train-capacity-factor must be greater than 0.0", f"{_ARGS}:855-856 ({_ARGS200}:962-963)"),
    requires(on("--moe-bmm-mc2"), ("eq", "--moe-token-dispatcher-type", "alltoall"),
             "--moe-bmm-mc2 only supports the alltoall dispatcher", f"{_ARGS}:636-638 ({_ARGS200}:731-733)"),
    requires(on("--moe-bmm-mc2"), ("eq", "--moe-model-type", "megatron_moe"),
             "--moe-bmm-mc2 only supports megatron core moe (--moe-model-type megatron_moe)",
             f"{_ARGS}:636-638 ({_ARGS200}:731-733)"),
    conflict(on("--use-nd-matmul"), ("eq", "--normalization", "LayerNorm"), "ND_MatMul is incompatible with LayerNorm",
             f"{_ARGS}:759-761 ({_ARGS200}:865-867)"),
    # -- §2D MindSpeed-LLM 2.0.0 monolith (mindspeed_llm/training/arguments.py)
    requires(("eq", "--schedules-method", "dualpipev"), on("--moe-fb-overlap"),
             "dualpipev requires --moe-fb-overlap", f"{_LLM200}:255-256"),
    requires(on("--use-fused-ring-attention-update"), ("gt", "--context-parallel-size", 1),
             "fused_ring_attention_update only works when context parallel is activated",
             f"{_LLM200}:293-294"),
    conflict(("eq", "--position-embedding-type", "alibi"), on("--sliding-window"),
             "Sliding Window Attention is forbidden with alibi", f"{_LLM200}:1034-1035"),
    conflict(("eq", "--tokenizer-padding-side", "left"), ("eq", "--position-embedding-type", "alibi"),
             "alibi does not support --tokenizer-padding-side left", f"{_LLM200}:1036-1037"),
    conflict(on("--variable-seq-lengths"), ("gt", "--context-parallel-size", 1),
             "context parallelism is forbidden with variable seq lengths", f"{_LLM200}:1093-1095"),
    conflict(("ne", "--moe-zero-memory", "disable"), on("--recompute-method"),
             "--moe-zero-memory does not support full recomputation (--recompute-method)", f"{_LLM200}:1150"),
    requires(all_of(on("--swap-attention"), on("--lora-target-modules")), on("--use-fused-rmsnorm"),
             "without --use-fused-rmsnorm, swap attention cannot be used in LoRA fine-tuning", f"{_LLM200}:1038-1040"),
    requires(on("--enable-optimizer-state-local-copy"), on("--enable-high-availability"),
             "--enable-optimizer-state-local-copy needs --enable-high-availability", f"{_LLM200}:1083-1084"),
    conflict(all_of(on("--variable-seq-lengths"), on("--num-experts")), ("eq", "--moe-token-dispatcher-type", "allgather"),
             "the allgather dispatcher is forbidden with variable seq lengths", f"{_LLM200}:1093,1096-1097"),
    requires(on("--moe-expert-capacity-factor"), ("in", "--moe-router-load-balancing-type", ("aux_loss", "none")),
             "moe_expert_capacity_factor only works with aux_loss or none load balancing", f"{_LLM200}:1119,1125-1126"),
    requires(on("--moe-expert-capacity-factor"), ("eq", "--moe-token-dispatcher-type", "alltoall"),
             "moe_expert_capacity_factor only works with the alltoall dispatcher", f"{_LLM200}:1119-1121"),
    conflict(on("--moe-expert-capacity-factor"), on("--use-fused-moe-token-permute-and-unpermute"),
             "moe_expert_capacity_factor does not support use_fused_moe_token_permute_and_unpermute",
             f"{_LLM200}:1119,1131-1132"),
    requires(on("--moe-allgather-overlap-comm"),
             any_of(("gt", "--tensor-model-parallel-size", 1), ("gt", "--expert-model-parallel-size", 1)),
             "--moe-allgather-overlap-comm requires tensor or expert parallelism", f"{_LLM200}:1154-1155"),
    *[requires(on("--multi-head-latent-attention"), on(f), f"{f} must be set with --multi-head-latent-attention",
               f"{_LLM200}:1161,{line} (defaults None: :97-100); {_ARGS}:457-467 ({_ARGS200}:539-549)")
      for f, line in (("--kv-lora-rank", "1164-1165"), ("--v-head-dim", "1166-1167"), ("--qk-rope-head-dim", "1168-1169"),
                      ("--qk-nope-head-dim", "1170-1171"))],
    requires(("eq", "--rope-scaling-type", "yarn"), on("--rope-scaling-original-max-position-embeddings"),
             "yarn needs --rope-scaling-original-max-position-embeddings", f"{_LLM200}:1175-1177; {_ARGS}:470-473"),
    *[requires(on(f), on("--num-experts"), f"{f} must not be set without MoE (--num-experts)", f"{_LLM200}:1182-1184")
      for f in ("--first-k-dense-replace", "--moe-layer-freq")],
    *[requires(all_of(on(a), on("--num-experts")), on(b), "--first-k-dense-replace and --moe-layer-freq must be set together",
               f"{_LLM200}:1186-1187")
      for a, b in (("--first-k-dense-replace", "--moe-layer-freq"), ("--moe-layer-freq", "--first-k-dense-replace"))],
    *[requires(("eq", "--moe-router-load-balancing-type", "group_limited_greedy"), on(f), f"group_limited_greedy needs {f}",
               f"{_LLM200}:1207,{line}")
      for f, line in (("--topk-group", "1208-1209"), ("--routed-scaling-factor", "1210-1211"))],
    requires(on("--moe-router-enable-expert-bias"), ("eq", "--moe-router-score-function", "sigmoid"),
             "expert bias needs --moe-router-score-function sigmoid", f"{_LLM200}:1218-1219"),
    conflict(("gt", "--output-layer-slice-num", 1), ("gt", "--tensor-model-parallel-size", 1),
             "--output-layer-slice-num > 1 only supports TP size 1", f"{_LLM200}:1246-1248"),
    value_range("--output-layer-slice-num", 1, None, f"{_LLM200}:1244-1245"),
    requires(on("--neat-pack"), on("--reset-position-ids"), "--neat-pack needs --reset-position-ids",
             f"{_LLM200}:1024-1025"),
    conflict(on("--use-glm-rope"), on("--use-fused-rotary-pos-emb"),
             "--use-glm-rope is not compatible with --use-fused-rotary-pos-emb",
             f"{_LLM200}:1032-1033"),

    # -- (i) follow-up: single-value checks
    choices("--quant-states", ("fp8", "hif8", "mxfp8"),
            f"{_FM}optimizer/low_precision_optimizer_feature.py:5,17-20,56 ({_LFM}low_precision/low_precision_optimizer_feature.py:5,17-20,56)"),
    value_range("--history-turns", 0, None, f"{_LFM}inference/inference.py:17-18"),
    *[requires(all_of(on("--enable-mhc"), on("--use-fused-mhc")), ("eq", f, v),
               f"fused NPU MHC (--use-fused-mhc) only supports {f} {v}", f"{_LFM}transformer/mhc_feature.py:52,{line}")
      for f, v, line in (("--hc-mult", 4, "62-63"), ("--hc-sinkhorn-iters", 20, "64-65"))],
    *[requires(all_of(on(feat), ("gt", "--context-parallel-size", 1)),
               ("in", "--context-parallel-algo", ("ulysses_cp_algo", "kvallgather_cp_algo")),
               f"{feat} with context parallelism only supports ulysses_cp_algo or kvallgather_cp_algo", src)
      for feat, src in (("--enable-mhc", f"{_LFM}transformer/mhc_feature.py:52,59-61"),
                        ("--enable-dsa-indexer", f"{_LFM}transformer/multi_latent_attention/dsa_indexer_feature.py:112,119-123"))],

    # -- former group (i): checks expressible in the condition language
    # FusedEmaAdamwFeature (in LLM's feature list too): `sel == 'fused_ema_adamw' and decay < 0 or decay > 1`
    value_range("--ema-decay", None, 1, f"{_FM}optimizer/fused_ema_adamw_feature.py:14,18-19"),
    conflict(("eq", "--optimizer-selection", "fused_ema_adamw"), ("lt", "--ema-decay", 0),
             "ema_decay must be in the range [0, 1] with the fused_ema_adamw optimizer",
             f"{_FM}optimizer/fused_ema_adamw_feature.py:18-19"),
    # fb-overlap needs no PP, a virtual pipeline or dualpipev (--schedules-method only accepts dualpipev,
    # dualpipev_feature.py:15-16); a layout or --num-virtual-stages-per-pipeline-rank may make a virtual
    # pipeline (the layout's stage count / PP, fb_overlap.py:28-36): taken as satisfying
    requires(all_of(on("--moe-fb-overlap"), ("gt", "--pipeline-model-parallel-size", 1)),
             any_of(on("--schedules-method"), on("--num-layers-per-virtual-pipeline-stage"),
                    on("--num-virtual-stages-per-pipeline-rank"), on("--pipeline-model-parallel-layout")),
             "the fb overlap needs no pipeline, a virtual pipeline or the dualpipev schedule",
             f"{_FM}moe/fb_overlap.py:27-37,101-107; {_FM}pipeline_parallel/dualpipev_feature.py:15-16"),
    # context parallel algorithms
    requires(all_of(("gt", "--context-parallel-size", 1), ("eq", "--context-parallel-algo", "hybrid_cp_algo")),
             on("--ulysses-degree-in-cp"), "--ulysses-degree-in-cp must be specified in hybrid_cp_algo",
             f"{_FM}context_parallel/context_parallel_feature.py:58-60 (LLM@master's ContextParallelFeature calls it, "
             f"mindspeed_llm/features_manager/context_parallel/context_parallel_feature.py:47); {_ARGS200}:756-757; "
             f"{_LLM200}:319-320"),
    requires(all_of(("gt", "--context-parallel-size", 1), ("eq", "--context-parallel-algo", "hybrid_adaptive_cp_algo")),
             on("--ulysses-degree-in-cp"), "--ulysses-degree-in-cp must be specified in hybrid_adaptive_cp_algo",
             f"{_ARGS200}:775-776; {_LLM200}:337-338"),
    requires(all_of(("gt", "--context-parallel-size", 1), on("--reset-attention-mask"),
                    ("eq", "--attention-mask-type", "causal")), ("eq", "--context-parallel-algo", "megatron_cp_algo"),
             "accelerated eod reset mode (--reset-attention-mask, causal mask) with context parallel only supports "
             "ring attention (megatron_cp_algo)", f"{_ARGS}:870-871 ({_ARGS200}:977-978, there even without CP)"),
    requires(all_of(("gt", "--context-parallel-size", 1),
                    ("in", "--context-parallel-algo",
                     ("megatron_cp_algo", "hybrid_cp_algo", "adaptive_cp_algo", "hybrid_adaptive_cp_algo")),
                    ("eq", "--cp-attention-mask-type", "general")), ("eq", "--micro-batch-size", 1),
             "with --cp-attention-mask-type general, the micro batch size can only be 1",
             f"{_LLM200}:289,316-317,329-330,334-335,344-345"),
    conflict(("gt", "--context-parallel-size", 1), on("--sliding-window"),
             "sliding window is not supported in context parallel", f"{_LLM200}:289,347-348"),
    # LLM 2.0.0: o2 and fused ops (validate_args_decorator, :1524,1546-1547; fused rope also in MindSpeed's legacy validator)
    *[requires(on(f), on("--bf16"), "the o2 feature is only for bf16 mixed-precision training (--bf16)",
               f"{_LLM200}:1482-1485")
      for f in ("--o2-gradient", "--o2-optimizer")],
    requires(on("--use-fused-mlp"), on("--swiglu"), "use_fused_mlp only supports the swiglu activation (--swiglu)",
             f"{_LLM200}:1452-1456"),
    requires(on("--use-fused-mlp"), any_of(on("--sequence-parallel"), on("--lora-fusion")),
             "use_fused_mlp needs --sequence-parallel (or --lora-fusion)", f"{_LLM200}:1452-1453,1457-1459"),
    requires(on("--use-fused-rotary-pos-emb"),
             any_of(("eq", "--position-embedding-type", "rope"), on("--use-rotary-position-embeddings")),
             "--use-fused-rotary-pos-emb needs --position-embedding-type rope",
             f"{_ARGS}:571-575 ({_ARGS200}:655-659); {_LLM200}:1503-1507"),
    # MindSpeed's legacy validator: `if pad and pad <= 0` (0 passes the truthiness test)
    value_range("--param-and-grad-buffer-pad", 0, None, f"{_ARGS}:555-556 ({_ARGS200}:639-640)"),
)


@dataclasses.dataclass(frozen=True)
class Alias:
    """A validator line that sets one flag's attribute (*to*) from another's (*source*) before
    the entry's check runs: when *when* holds on the launch (a condition; ``("unknown",)`` parts
    decide nothing), with *defaults* the parser defaults of the flags it reads and of *source*
    (what *to* gets when *source* is not written); *certain* is False where upstream's order
    does not say whether it runs before the check (both are then judged). From
    ``mindspeed_releases.json`` (``aliases``, ``entry_aliases``; tools/gen_releases.py)."""
    source: Optional[str]  # None: the validator sets *to* to *value*, a literal
    to: str
    when: tuple
    defaults: Tuple[Tuple[str, object], ...]
    certain: bool
    at: str
    value: object = None
    unknown: bool = False  # the validator sets *to* to a value that is not known


@dataclasses.dataclass(frozen=True)
class View:
    """How one stack release reads a launch for an entry's check: the aliases onto its flags the
    release runs (or may run) before the check, and its parser defaults of the flags the entry
    compares by value (``parser_defaults`` of ``mindspeed_releases.json``: an absent flag has
    them there, over :data:`DEFAULTS`)."""
    aliases: Tuple[Alias, ...] = ()
    defaults: Tuple[Tuple[str, object], ...] = ()


@dataclasses.dataclass(frozen=True)
class Applicable:
    """An entry that holds on every stack release of a run, with what its message names: the
    releases it holds for (text) and the upstream line at the newest of the run's releases; and
    how each of those releases reads a launch for its check (one :class:`View` per distinct
    reading: the entry is reported only where every one of them reports it)."""
    entry: Entry
    releases: str
    citation: str
    views: Tuple[View, ...] = (View(),)

    @functools.cached_property
    def settable(self) -> Tuple[FrozenSet[str], FrozenSet[str]]:
        """The flags a default or a validator's setting may give a value in some reading of the
        entry, and the flags its aliases copy from (computed once: the launch rules' filters)."""
        views = self.views
        return (frozenset(DEFAULTS) | {f for v in views for f, _ in v.defaults} | {a.to for v in views for a in v.aliases},
                frozenset(a.source for v in views for a in v.aliases if a.source is not None))


def _tuple(x):
    return tuple(_tuple(v) for v in x) if isinstance(x, list) else x


def aliases_before(entry: Entry, stack: str) -> Tuple[Alias, ...]:
    """The aliases onto *entry*'s flags that run (or may run) before its check on *stack*."""
    from npulint.releases import mindspeed_data

    data = mindspeed_data()
    found = data.get("entry_aliases", {}).get(entry.key, {}).get(stack, ())
    out = []
    for index, order in found:
        a = data["aliases"][stack][index]
        # a literal set by a validator may run, or not (an early ``return`` before it is not read
        # by the generator): the check is judged both with and without it
        out.append(Alias(a["from"], a["to"], _tuple(a["when"]), tuple(sorted(a["defaults"].items())),
                         order == "after" and a["from"] is not None, a["at"], a.get("value"), a.get("unknown", False)))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def compared_flags(cond) -> FrozenSet[str]:
    """The flags a condition compares by value (not only by being written)."""
    if cond[0] in ("all", "any", "not"):
        return frozenset().union(*(compared_flags(c) for c in cond[1:]))
    return frozenset((cond[1],)) if cond[0] not in ("on", "unknown") and len(cond) > 1 else frozenset()


def value_flags(entry: Entry) -> FrozenSet[str]:
    """The flags *entry*'s conditions compare by value."""
    return compared_flags(entry.a) | (compared_flags(entry.b) if entry.kind in ("requires", "conflict") else frozenset())


def view_for(entry: Entry, stack: str) -> View:
    """How *stack* reads a launch for *entry*'s check (:class:`View`)."""
    from npulint.releases import mindspeed_data

    flags = value_flags(entry)
    found = mindspeed_data().get("parser_defaults", {}).get(stack, {})
    return View(aliases_before(entry, stack), tuple((f, found[f][0]) for f in sorted(flags) if f in found))


def holds(entry: Entry) -> Dict[str, str]:
    """Stack release (``framework@release``) -> the upstream line of the check there, for the
    releases the entry holds for (``mindspeed_releases.json``, made by tools/gen_releases.py)."""
    from npulint.releases import mindspeed_data

    return mindspeed_data()["entries"].get(entry.key, {})


@functools.lru_cache(maxsize=None)
def condition_flags(cond) -> FrozenSet[str]:
    """The flags a condition names."""
    if cond[0] in ("all", "any"):
        return frozenset().union(*(condition_flags(c) for c in cond[1:]))
    return frozenset((cond[1],))


def entry_flags(entry: Entry) -> FrozenSet[str]:
    """The flags one of which a launch must write before *entry* can apply to it: a finding
    needs a written occurrence of a flag of its first condition (of its flag, for a range), or
    for a conflict of either side (the other may hold through defaults: NPU504)."""
    if entry.kind == "range":
        return frozenset((entry.b[0],))
    return condition_flags(entry.a) | (condition_flags(entry.b) if entry.kind == "conflict" else frozenset())


@functools.lru_cache(maxsize=256)
def catalog_index(stacks: FrozenSet[str]) -> Tuple[Tuple[Applicable, ...], Dict[str, Tuple[int, ...]]]:
    """:func:`catalog_for` *stacks*, and for each flag the positions of the entries that
    :func:`entry_flags` names it in: a launch is checked against the entries of its own flags."""
    entries = catalog_for(stacks)
    index: Dict[str, List[int]] = {}
    for i, applicable in enumerate(entries):
        # a flag an alias copies onto one of the entry's flags may make it apply
        sources = {a.source for view in applicable.views for a in view.aliases if a.source is not None}
        for flag in entry_flags(applicable.entry) | sources:
            index.setdefault(flag, []).append(i)
    return entries, {flag: tuple(at) for flag, at in index.items()}


@functools.lru_cache(maxsize=256)
def partial_requirements(stacks: FrozenSet[str]) -> Dict[str, Tuple[Tuple[FrozenSet[str], Applicable], ...]]:
    """The ``requires`` entries that hold on some of *stacks* but not all, by the flag their
    first condition turns on, each with those of *stacks* it holds on: a launch is rejected on
    every one of them when each has such an entry it fails (RULES.md "Releases": `--neat-pack`
    needs `--reset-position-ids` up to MindSpeed-LLM 2.2.0 and `--reset-attention-mask` later)."""
    from npulint.releases import describe, newest

    out: Dict[str, List[Tuple[FrozenSet[str], Applicable]]] = {}
    for e in CATALOG:
        if e.kind != "requires" or e.a[0] != "on":
            continue
        where = holds(e)
        mine = frozenset(s for s in stacks if s in where)
        if not mine or mine == stacks:
            continue
        views = tuple(dict.fromkeys(view_for(e, s) for s in sorted(mine)))
        out.setdefault(e.a[1], []).append((mine, Applicable(e, describe(where), where[newest(mine)], views)))
    return {flag: tuple(found) for flag, found in out.items()}


@functools.lru_cache(maxsize=256)
def catalog_for(stacks: FrozenSet[str]) -> Tuple[Applicable, ...]:
    """The entries that hold on every one of *stacks* (a launch may run on any of them)."""
    from npulint.releases import describe, newest

    out = []
    cite = newest(stacks)
    for e in CATALOG:
        where = holds(e)
        if stacks and all(s in where for s in stacks):
            views = tuple(dict.fromkeys(view_for(e, s) for s in sorted(stacks)))
            out.append(Applicable(e, describe(where), where[cite], views))
    return tuple(out)
