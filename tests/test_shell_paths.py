"""The paths through a shell script, as bash runs it: which branch a condition takes, what a
function's ``local`` variables hide, which commands assign variables, ``unset`` of array
elements, and the commands of ``if``/``while``/``until`` conditions."""

from __future__ import annotations

from conftest import codes

MASTER = '[tool.npulint.releases]\nmindspeed = "master"\nmindspeed-llm = "master"\n'
AMO = "--adaptive-memory-optimization"
LAUNCH = "torchrun pretrain_gpt.py"
# the requirement of --recompute-in-bubble: pipeline size > 1 (and a virtual pipeline)
BUBBLE = f"{LAUNCH} --pipeline-model-parallel-size $PP --num-layers-per-virtual-pipeline-stage 2 " \
         "--recompute-in-bubble --num-layers 32\n"


def sh(lint, src):
    return codes(lint({"run.sh": src}, select=["NPU0", "NPU5"], config=MASTER))


# -------------------------------------------------------------------- paths


def test_paths_whose_arrays_differ_are_not_merged(lint):
    # the two branches give A different arrays: two paths, and the second one conflicts
    src = f'if [ -n "$X" ]; then A=(--bf16); else A=(--swap-attention); fi\n{LAUNCH} "${{A[@]}}" {AMO}\n'
    assert sh(lint, src) == ["NPU501"]
    assert sh(lint, src.replace("A=(--swap-attention)", "A=(--fp16)")) == []
