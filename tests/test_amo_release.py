"""--adaptive-memory-optimization and the releases a launch runs on: a release's flags are those of
the parsers its launches run (rules/mindspeed_release_flags.json, tools/gen_known_flags.py).
MindSpeed's legacy parser (mindspeed/arguments.py's process_args, the only registration of AMO) is
wired into Megatron's parse_args on the core_r0.8.0 MindSpeed releases and the MindSpeed-MM
releases on them, not on the *_core_r0.12.1 releases and master (the feature manager's parser)
nor on MindSpeed-LLM 2.0.0/2.1.0 (a dummy process_args). So with nothing configured a launch
with AMO runs only where AMO's conflicts are checked: RULES.md "the AMO rules apply always"."""

import pytest

from conftest import at, codes, pos
from npulint import releases

# docs/003's example
DOC003 = "torchrun --nproc_per_node 8 pretrain_gpt.py --adaptive-memory-optimization --recompute-granularity full\n"
HOLDS = "(MindSpeed 2.0.0_core_r0.8.0, 2.1.0_core_r0.8.0; MindSpeed-MM 2.0.0, 2.1.0: "
LEGACY_STACKS = frozenset({"mindspeed@2.0.0_core_r0.8.0", "mindspeed@2.1.0_core_r0.8.0",
                           "mindspeed-mm@2.0.0", "mindspeed-mm@2.1.0"})


def npu5(lint, files, config=None):
    return lint(files, select=["NPU5"], config=config)


def every_stack():
    return releases.resolve(None, (), infer_from_project=False).mindspeed_stacks()


def test_amo_runs_only_where_the_legacy_parser_is_wired():
    every = every_stack()
    assert releases.runs_on(["--adaptive-memory-optimization"], every) == LEGACY_STACKS
    # a flag of the feature manager's parser stays on every release that has it
    assert releases.runs_on(["--swap-attention"], every) >= LEGACY_STACKS | {"mindspeed@master"}


def test_doc003_launch_is_reported_with_nothing_configured(lint):
    found = npu5(lint, {"run.sh": DOC003})
    assert codes(found) == ["NPU501"]
    assert pos(found[0]) == at(DOC003, "--recompute-granularity")
    assert HOLDS in found[0].message and "recompute_granularity" in found[0].message


@pytest.mark.parametrize("launch, flag", [
    # through variables, and the flags Megatron turns into a granularity
    ('AMO="--adaptive-memory-optimization"\nG=full\n'
     "torchrun --nproc_per_node 8 pretrain_gpt.py $AMO --recompute-granularity ${G}\n", "--recompute-granularity"),
    ("torchrun pretrain_gpt.py --adaptive-memory-optimization --recompute-activations\n", "--recompute-activations"),
    ("torchrun pretrain_gpt.py --recompute-method uniform --adaptive-memory-optimization\n",
     "--adaptive-memory-optimization"),
])
def test_amo_conflicts_through_variables_and_aliases(lint, launch, flag):
    found = npu5(lint, {"run.sh": launch})
    assert codes(found) == ["NPU501"] and HOLDS in found[0].message
    assert pos(found[0]) == at(launch, flag)


def test_python_launch_list(lint):
    src = ("import subprocess\nFLAG = '--adaptive-memory-optimization'\n"
           "subprocess.run(['torchrun', 'pretrain_gpt.py', FLAG, '--recompute-granularity', 'selective'])\n")
    found = npu5(lint, {"launch.py": src})
    assert codes(found) == ["NPU501"] and HOLDS in found[0].message


def test_clean_twins(lint):
    # AMO alone, or with --recompute-num-layers (not checked), is no conflict
    assert npu5(lint, {"run.sh": "torchrun pretrain_gpt.py --adaptive-memory-optimization --recompute-num-layers 2\n"}) == []
    # the recompute flags without AMO
    assert npu5(lint, {"run.sh": "torchrun pretrain_gpt.py --recompute-granularity full --recompute-method uniform "
                                 "--recompute-num-layers 2\n"}) == []


def test_amo_with_a_flag_only_current_releases_take_runs_nowhere(lint):
    # --attention-backend is Megatron-LM 0.12's (no core_r0.8.0 stack takes it): no release
    # runs this launch, nothing is judged
    every = every_stack()
    assert not releases.runs_on(["--adaptive-memory-optimization", "--attention-backend"], every)
    assert npu5(lint, {"run.sh": DOC003.replace("\n", " --attention-backend flash\n")}) == []


@pytest.mark.parametrize("config, reported", [
    ('[tool.npulint]\nmindspeed-stack = "legacy"\n', True),
    ('[tool.npulint.releases]\nmindspeed = "2.1.0_core_r0.8.0"\n', True),
    ('[tool.npulint.releases]\nmindspeed-mm = "2.0.0"\n', True),
    # configured releases that rule the launch out stand: it is not judged (README "Releases")
    ('[tool.npulint]\nmindspeed-stack = "current"\n', False),
    ('[tool.npulint.releases]\nmindspeed = "master"\n', False),
    ('[tool.npulint.releases]\nmindspeed-llm = "2.0.0"\n', False),
])
def test_configured_releases(lint, config, reported):
    found = npu5(lint, {"run.sh": DOC003}, config=config)
    assert codes(found) == (["NPU501"] if reported else [])


def test_a_launch_without_amo_on_current_releases_is_judged_as_before(lint):
    # --reuse-fp32-param needs --bf16 on every release (NPU504), with and without a configuration
    launch = "torchrun pretrain_gpt.py --reuse-fp32-param --fp16\n"
    says = ("--reuse-fp32-param: reuse_fp32_param requires bf16 (MindSpeed 2.0.0_core_r0.8.0 to master; MindSpeed-LLM "
            "2.0.0 to master; MindSpeed-MM 2.0.0 to master: Ascend/MindSpeed@028de58c "
            "mindspeed/features_manager/memory/reuse_fp32_param.py:19)")
    for config in (None, '[tool.npulint]\nmindspeed-stack = "current"\n'):
        assert [f.message for f in npu5(lint, {"run.sh": launch}, config=config)] == [says]


AUTOGRAD = ("import torch\n\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
            "        return x\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return F.apply(x)\n")


@pytest.mark.parametrize("config", [None, '[tool.npulint]\nmindspeed-stack = "current"\n'])
def test_npu503_does_not_depend_on_the_releases(lint, config):
    # a launch that enables AMO makes NPU503 report X.apply(...), whatever releases it runs on
    found = lint({"model.py": AUTOGRAD, "run.sh": "torchrun pretrain_gpt.py --adaptive-memory-optimization\n"},
                 select=["NPU503"], config=config)
    assert codes(found) == ["NPU503"] and found[0].path == "model.py"
