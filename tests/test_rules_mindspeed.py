"""NPU501-NPU505: MindSpeed launch flags in shell scripts and Python launchers; AMO."""

import textwrap

import pytest

from conftest import at, codes, pos
from npulint.fixes import fix_text, parses
from npulint.source import PYTHON

# The releases a test's launches run on (a config file stays for the rest of a test): the
# catalog's checks are those of MindSpeed and MindSpeed-LLM master unless a test says otherwise.
MASTER = '[tool.npulint.releases]\nmindspeed = "master"\nmindspeed-llm = "master"\n'
CURRENT = MASTER
# MindSpeed's legacy validator (core_r0.8.0-era MindSpeed on plain Megatron-LM)
LEGACY = '[tool.npulint.releases]\nmindspeed = ["2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0"]\n'
# MindSpeed-LLM 2.0.0's own validator (its mindspeed_llm/training/arguments.py)
LLM200 = '[tool.npulint.releases]\nmindspeed-llm = "2.0.0"\n'


def sh(lint, src, select=("NPU5",), config=MASTER):
    return lint({"run.sh": src}, select=list(select), config=config)


def about(lint, src, text):
    """The findings for script *src* whose message says *text*."""
    return [f for f in sh(lint, src) if text in f.message]


# -- NPU501: every catalog kind, violation and clean twin ---------------------------------


def test_amo_against_recompute_granularity(lint):
    src = "torchrun --nproc_per_node 8 pretrain_gpt.py --adaptive-memory-optimization --recompute-granularity full\n"
    found = sh(lint, src, config=LEGACY)
    assert codes(found) == ["NPU501"]
    assert pos(found[0]) == at(src, "--recompute-granularity")
    assert found[0].end_column == found[0].column + len("--recompute-granularity")


def test_amo_clean_twin(lint):
    assert sh(lint, "torchrun pretrain_gpt.py --adaptive-memory-optimization --recompute-num-layers 2\n") == []


def test_amo_selective_also_conflicts_and_recompute_activations(lint):
    assert codes(sh(lint, "torchrun pretrain_gpt.py --recompute-granularity selective "
                          "--adaptive-memory-optimization\n", config=LEGACY)) == ["NPU501"]
    assert codes(sh(lint, "torchrun pretrain_gpt.py --adaptive-memory-optimization --recompute-activations\n", config=LEGACY)) == [
        "NPU501"]


def test_value_conditions(lint):
    assert codes(sh(lint, "torchrun pretrain_gpt.py --adaptive-memory-optimization --ampipe-degree 2\n", config=LEGACY, select=("NPU501",))) == ["NPU501"]
    assert sh(lint, "torchrun pretrain_gpt.py --adaptive-memory-optimization --ampipe-degree 1\n", config=LEGACY, select=("NPU501",)) == []
    assert codes(sh(lint, "torchrun pretrain_gpt.py --adaptive-memory-optimization "
                          "--adaptive-recompute-device-size 1024\n", config=LEGACY, select=("NPU501",))) == ["NPU501"]
    assert sh(lint, "torchrun pretrain_gpt.py --adaptive-memory-optimization --adaptive-recompute-device-size -1\n", config=LEGACY, select=("NPU501",)) == []


# AMO's launches run only where MindSpeed's legacy parser registers it (the core_r0.8.0 releases):
# the shell-mechanics tests with AMO judge them there (LEGACY)
def test_one_finding_per_pair_at_the_later_flag(lint):
    src = "torchrun pretrain_gpt.py --swap-attention --adaptive-memory-optimization\n"
    found = sh(lint, src, config=LEGACY)
    assert codes(found) == ["NPU501"]
    assert pos(found[0]) == at(src, "--adaptive-memory-optimization")


def test_legacy_only_rule(lint):
    src = "torchrun pretrain_gpt.py --enable-zero3 --use-ascend-mc2 --sequence-parallel --tensor-model-parallel-size 2\n"
    assert sh(lint, src) == []
    assert codes(sh(lint, src, config=LEGACY)) == ["NPU501"]


# -- NPU504 -----------------------------------------------------------------------------


def test_requirement_flag_and_default_value(lint):
    src = "torchrun pretrain_gpt.py --recompute-in-bubble --num-layers-per-virtual-pipeline-stage 2\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU504"]  # pipeline size defaults to 1
    assert pos(found[0]) == at(src, "--recompute-in-bubble")
    assert sh(lint, "torchrun pretrain_gpt.py --recompute-in-bubble --num-layers-per-virtual-pipeline-stage 2 "
                    "--pipeline-model-parallel-size 4\n") == []


def test_requirement_clean_twin_and_unknown(lint):
    assert codes(sh(lint, "torchrun pretrain_gpt.py --reuse-fp32-param --fp16\n")) == ["NPU504"]
    assert sh(lint, "torchrun pretrain_gpt.py --reuse-fp32-param --bf16\n") == []
    # a variable the script never sets may hold the companion: say nothing
    assert sh(lint, "torchrun pretrain_gpt.py --reuse-fp32-param $EXTRA\n") == []


def test_a_companion_on_one_path_only_is_not_known_to_be_missing(lint):
    # whether --bf16 is there depends on $BF, which the script cannot know: nothing is said
    for add in ('if [ -n "$BF" ]; then ARGS+=" --bf16"; fi', '[ -n "$BF" ] && ARGS+=" --bf16"'):
        assert sh(lint, f'ARGS="--reuse-fp32-param"\n{add}\ntorchrun pretrain_gpt.py $ARGS\n') == [], add
    alternatives = """\
    case "$1" in
      a) M=--bf16 ;;
      *) M=--fp16 ;;
    esac
    torchrun pretrain_gpt.py --reuse-fp32-param $M
    """
    assert sh(lint, alternatives) == []
    # a function called once, where the companion is set on one path
    called = 'f() { torchrun pretrain_gpt.py --reuse-fp32-param $P; }\nif [ -n "$BF" ]; then P=--bf16; fi\nf\n'
    assert sh(lint, called) == []


def test_a_companion_missing_on_every_path_that_holds_the_flag_is_reported(lint):
    # the twin: the branch adds the wrong companion, so no path has --bf16
    src = 'ARGS="--reuse-fp32-param"\nif [ -n "$BF" ]; then ARGS+=" --fp16"; fi\ntorchrun pretrain_gpt.py $ARGS\n'
    found = sh(lint, src)
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(src, "--reuse-fp32-param")
    # the flag on one path only, and no companion on it
    src = 'ARGS=""\nif [ -n "$X" ]; then ARGS+=" --reuse-fp32-param"; fi\ntorchrun pretrain_gpt.py $ARGS --fp16\n'
    found = sh(lint, src)
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(src, "--reuse-fp32-param")
    # two calls of one function are two places, each judged on its own: the second lacks --bf16
    src = 'f() { torchrun pretrain_gpt.py --reuse-fp32-param $P; }\nP=--bf16\nf\nP=--fp16\nf\n'
    found = sh(lint, src)
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(src, "--reuse-fp32-param")


def test_two_commands_of_one_eval_text_or_bash_c_string_are_two_places(lint):
    # the review's repro: the first command certainly lacks --bf16; the second has it
    for run in ("bash -c", "eval"):
        src = f'ARGS="--reuse-fp32-param"\n{run} "torchrun pretrain_gpt.py $ARGS; torchrun pretrain_gpt.py $ARGS --bf16"\n'
        assert codes(sh(lint, src)) == ["NPU504"], run
        # the twin: both have it
        assert sh(lint, src.replace("$ARGS;", "$ARGS --bf16;")) == [], run


def test_choices(lint):
    src = "torchrun pretrain_gpt.py --recompute-granularity ful\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU504"]
    assert pos(found[0]) == at(src, "ful")
    assert sh(lint, "torchrun pretrain_gpt.py --recompute-granularity full\n") == []


# -- NPU502 -----------------------------------------------------------------------------


def test_unknown_flag_near_a_known_one(lint):
    src = "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-paralel-size 2 --log-interval 1\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU502"]
    assert "--tensor-model-parallel-size" in found[0].message
    # two near misses: both reported
    found = sh(lint, src.replace("--log-interval", "--log-intervall"))
    assert sorted(f.message.split(":")[0] for f in found) == ["unknown flag --log-intervall",
                                                             "unknown flag --tensor-model-paralel-size"]


def test_a_launch_with_a_flag_close_to_no_known_one_has_a_parser_npulint_does_not_know(lint):
    # `--flexpipe-config` is registered by no stack npulint knows and is close to no known flag:
    # the launch's parser (a fork's) has flags of its own, and `--log-path` (near `--cfg-path`)
    # may be one of them
    src = "torchrun pretrain_gpt.py --num-layers 2 --flexpipe-config f.json --log-path logs\n"
    assert sh(lint, src) == []
    assert codes(sh(lint, src.replace("--flexpipe-config f.json ", ""))) == ["NPU502"]  # the twin
    # a flag the linted files register is known, not evidence of an unknown parser
    found = lint({"run.sh": src, "ext.py": "import argparse\np = argparse.ArgumentParser()\n"
                                            "p.add_argument('--flexpipe-config')\n"}, select=["NPU5"], config=MASTER)
    assert [(f.code, f.path) for f in found] == [("NPU502", "run.sh")]


def test_launcher_options_and_other_entries_are_not_flags(lint):
    assert sh(lint, "torchrun --nproc_per_nod 8 pretrain_gpt.py --bf16\n") == []
    assert sh(lint, "python preprocess_data.py --tensor-model-paralel-size 2\n") == []


# -- shell mechanics --------------------------------------------------------------------

SCRIPT = """\
#!/bin/bash
PP=1
MEM_ARGS="
    --adaptive-memory-optimization \\
    --bf16
"
RECOMPUTE=(--recompute-method block)
GPT_ARGS="--num-layers 8"
GPT_ARGS="$GPT_ARGS --pipeline-model-parallel-size ${PP}"
torchrun --nproc_per_node 8 pretrain_gpt.py $GPT_ARGS $MEM_ARGS "${RECOMPUTE[@]}"
"""


def test_flags_through_variables_arrays_and_appends(lint):
    found = sh(lint, SCRIPT, config=LEGACY)
    assert codes(found) == ["NPU501"]
    assert pos(found[0]) == at(SCRIPT, "--recompute-method")  # in the array's assignment


def test_location_inside_multiline_assignment(lint):
    src = 'GPT_ARGS="\n    --reuse-fp32-param \\\n    --fp16\n"\ntorchrun pretrain_gpt.py $GPT_ARGS\n'
    found = sh(lint, src)
    assert codes(found) == ["NPU504"]
    assert pos(found[0]) == (2, 5)


def test_scalar_value_through_variable(lint):
    src = "PP=4\nV=2\ntorchrun pretrain_gpt.py --recompute-in-bubble --pipeline-model-parallel-size $PP " \
          "--num-layers-per-virtual-pipeline-stage ${V}\n"
    assert sh(lint, src) == []
    assert codes(sh(lint, src.replace("PP=4", "PP=1"))) == ["NPU504"]


def test_exclusive_branches_are_clean(lint):
    src = """\
    if [ "$MODE" = amo ]; then
        ARGS="--adaptive-memory-optimization"
    elif [ "$MODE" = swap ]; then
        ARGS="--swap-attention"
    else
        ARGS="--recompute-granularity full"
    fi
    torchrun pretrain_gpt.py $ARGS
    """
    assert sh(lint, src, config=LEGACY) == []
    case = """\
    case "$1" in
      amo) ARGS="--adaptive-memory-optimization" ;;
      *) ARGS="--recompute-method uniform" ;;
    esac
    torchrun pretrain_gpt.py $ARGS
    """
    assert sh(lint, case, config=LEGACY) == []


def test_branch_and_later_flag_on_one_path(lint):
    src = """\
    if [ -n "$X" ]; then
        ARGS="--adaptive-memory-optimization"
    fi
    torchrun pretrain_gpt.py $ARGS --swap-attention
    """
    assert codes(sh(lint, src, config=LEGACY)) == ["NPU501"]


def test_two_commands_checked_apart(lint):
    src = """\
    torchrun pretrain_gpt.py --adaptive-memory-optimization
    torchrun pretrain_gpt.py --swap-attention
    python -m torch.distributed.launch --nproc_per_node 8 pretrain_gpt.py --swap-attention --recompute-in-bubble
    """
    found = sh(lint, src)
    assert sorted(codes(found)) == ["NPU501", "NPU504", "NPU504"]
    assert all(f.line == 3 for f in found)


def test_comments_echo_heredoc_ignored(lint):
    src = """\
    # torchrun pretrain_gpt.py --adaptive-memory-optimization --swap-attention
    echo torchrun pretrain_gpt.py --adaptive-memory-optimization --swap-attention
    cat <<EOF
    torchrun pretrain_gpt.py --adaptive-memory-optimization --swap-attention
    EOF
    """
    assert sh(lint, src, config=LEGACY) == []


def test_launchers(lint):
    for launcher in ("msrun --worker_num 8", "python3", "python -m torch.distributed.run --nproc_per_node 2"):
        src = f"{launcher} pretrain_gpt.py --adaptive-memory-optimization --swap-attention\n"
        assert codes(sh(lint, src, config=LEGACY)) == ["NPU501"], launcher
    assert sh(lint, "python -m some.tool pretrain_gpt.py --adaptive-memory-optimization --swap-attention\n",
              config=LEGACY) == []


def test_loop_assignment_is_unknown(lint):
    src = """\
    ARGS=""
    for f in a b; do ARGS="$ARGS --bf16"; done
    torchrun pretrain_gpt.py --reuse-fp32-param $ARGS
    """
    assert sh(lint, src) == []


def test_unparsable_script_is_npu001(lint):
    found = lint({"run.sh": "torchrun pretrain_gpt.py --bf16\nif then fi (\n"}, select=["NPU001", "NPU5"])
    assert codes(found) == ["NPU001"]


def test_trailing_backslash_at_eof_parses(lint):
    found = lint({"run.sh": "torchrun pretrain_gpt.py --reuse-fp32-param --fp16 \\"}, select=["NPU001", "NPU5"])
    assert codes(found) == ["NPU504"]


# -- Python launchers -------------------------------------------------------------------


def test_subprocess_list(lint):
    src = """\
    import subprocess as sp
    cmd = ["torchrun", "--nproc_per_node", "8", "pretrain_gpt.py", "--adaptive-memory-optimization",
           "--swap-attention"]
    sp.run(cmd)
    """
    found = lint(src, select=["NPU5"], config=LEGACY)
    assert codes(found) == ["NPU501"]
    assert pos(found[0]) == at(src, '"--swap-attention"')


def test_os_execv_and_sys_argv(lint):
    src = """\
    import os, sys
    os.execv("/usr/bin/python3", ["python3", "pretrain_gpt.py", "--reuse-fp32-param"])
    sys.argv = ["pretrain_gpt.py", "--tensor-model-paralel-size", "2"]
    """
    assert codes(lint(src, select=["NPU5"])) == ["NPU504", "NPU502"]


def test_sys_executable_is_the_python_launcher(lint):
    bad = '"--adaptive-memory-optimization", "--swap-attention"'
    src = f"""\
    import os, subprocess, sys
    from sys import executable as py
    subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=8", "pretrain_gpt.py", {bad}])
    subprocess.check_call([py, "pretrain_gpt.py", {bad}])
    os.execl(sys.executable, sys.executable, "finetune_x.py", {bad})
    """
    found = lint(src, select=["NPU5"], config=LEGACY)
    assert codes(found) == ["NPU501"] * 3 and [f.line for f in found] == [3, 4, 5]
    # a name that is not sys.executable, spelled so, is unknown: not a launcher
    other = "import subprocess\nclass sys:\n    executable = None\n" + textwrap.dedent(src).split("\n", 2)[2]
    assert lint(other.replace("py,", "sys.executable,"), select=["NPU5"], config=LEGACY) == []


def test_python_lookalikes_are_not_launchers(lint):
    src = """\
    def run(cmd):
        pass
    run(["torchrun", "pretrain_gpt.py", "--adaptive-memory-optimization", "--swap-attention"])
    args = ["torchrun", "pretrain_gpt.py", "--adaptive-memory-optimization", "--swap-attention"]
    """
    assert lint(src, select=["NPU5"]) == []


# -- NPU503 and its fix -----------------------------------------------------------------

MODEL = """\
import torch


class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x


class Layer(torch.nn.Module):
    def forward(self, x):
        return Fn.apply(x,
                        x * 2)


def helper(x):
    return Fn.apply(x, x)
"""


def test_npu503_cross_file_with_shell_launch(lint):
    files = {"model.py": MODEL, "run.sh": "torchrun pretrain_gpt.py --adaptive-memory-optimization\n"}
    found = lint(files, select=["NPU503"])
    assert codes(found) == ["NPU503"]
    assert found[0].path.endswith("model.py") and pos(found[0]) == at(MODEL, "Fn.apply(x,\n")
    assert found[0].related and found[0].related[0][0].endswith("run.sh")


AMO_RUN = "#!/bin/bash\ntorchrun pretrain_gpt.py --adaptive-memory-optimization --bf16\n"


def test_npu503_launch_enables_amo_for_its_own_project_only(lint):
    # (probe-user amo/) a workspace of two projects: llm's launch enables AMO for llm, not for other
    files = {"llm/pyproject.toml": "[project]\nname='llm'\n", "llm/run.sh": AMO_RUN, "llm/layer.py": MODEL,
             "other/pyproject.toml": "[project]\nname='other'\n", "other/layer.py": MODEL}
    found = lint(files, select=["NPU503"])
    assert [f.path for f in found] == ["llm/layer.py"]
    assert found[0].related[0][0] == "llm/run.sh"


def test_npu503_launch_reaches_its_project_s_subprojects_and_unmarked_trees(lint):
    # twin: other's launch enables it for other; a subfolder with its own marker is still the
    # repository's; a tree without markers is one program
    files = {"llm/pyproject.toml": "", "llm/run.sh": AMO_RUN, "llm/layer.py": MODEL,
             "other/pyproject.toml": "", "other/layer.py": MODEL, "other/run.sh": AMO_RUN,
             "llm/tools/requirements.txt": "torch\n", "llm/tools/fn.py": MODEL}
    found = lint(files, select=["NPU503"])
    assert [(f.path, f.related[0][0]) for f in found] == [
        ("llm/layer.py", "llm/run.sh"), ("llm/tools/fn.py", "llm/run.sh"), ("other/layer.py", "other/run.sh")]


def test_npu503_a_class_name_two_files_define_is_the_one_each_file_reaches(lint):
    # model.Fn of two folders run as scripts: a's is a Function, b's is not; each use.py's
    # `from model import Fn` reaches its own folder's model.py (Python never loads both as
    # module model), so only a's calls bypass AMO, whichever file's facts come last
    plain = MODEL.replace("(torch.autograd.Function)", "")
    use = "from model import Fn\nimport torch\nclass L(torch.nn.Module):\n    def forward(self, x):\n" \
          "        return Fn.apply(x, x)\n"
    for fn_in in ("a", "b"):
        files = {"a/model.py": MODEL if fn_in == "a" else plain, "a/use.py": use,
                 "b/model.py": MODEL if fn_in == "b" else plain, "b/use.py": use, "run.sh": AMO_RUN}
        assert [f.path for f in lint(files, select=["NPU503"])] == [f"{fn_in}/model.py", f"{fn_in}/use.py"]
    # a third folder naming model from elsewhere reaches neither for certain
    files["c/deep/use.py"] = use
    assert [f.path for f in lint(files, select=["NPU503"])] == ["b/model.py", "b/use.py"]


def test_npu503_fix_keeps_arguments_on_their_lines(lint):
    model = MODEL.replace("return Fn.apply(x,\n                        x * 2)", "y = Fn.apply(\n            x, x)\n        return y")
    files = {"model.py": model, "run.sh": "torchrun pretrain_gpt.py --adaptive-memory-optimization\n"}
    found = lint(files, select=["NPU503"])
    fixed, _ = fix_text(model, [found[0].fix], PYTHON)
    # the hanging indent stays: Fn goes first on the arguments' line
    assert "y = adapt_mem_func_wrapper(\n            Fn, x, x)" in fixed


def test_npu503_needs_amo(lint):
    files = {"model.py": MODEL, "run.sh": "torchrun pretrain_gpt.py --bf16\n"}
    assert lint(files, select=["NPU503"]) == []


def test_npu503_fix_applies_is_idempotent_and_parses(lint):
    files = {"model.py": MODEL, "run.sh": "torchrun pretrain_gpt.py --adaptive-memory-optimization\n"}
    found = lint(files, select=["NPU503"])
    fixed, applied = fix_text(MODEL, [found[0].fix], PYTHON)
    assert applied and parses(fixed, PYTHON)
    assert "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper" in fixed
    # the visual indent stays: the continuation line moves with the opening bracket
    assert "        return adapt_mem_func_wrapper(Fn, x,\n                                      x * 2)" in fixed
    assert "return Fn.apply(x, x)" in fixed  # not a module method
    assert not any(line != line.rstrip() for line in fixed.splitlines())
    again = lint({"model.py": fixed, "run.sh": files["run.sh"]}, select=["NPU503"])
    assert again == []


def test_npu503_fix_through_cli(cli_run, project, tmp_path):
    root = project({"model.py": MODEL, "run.sh": "torchrun pretrain_gpt.py --adaptive-memory-optimization\n"})
    diff = cli_run(["--select", "NPU503", "--diff", "--unsafe-fixes", "."], cwd=root)
    assert "+from mindspeed.core.memory" in diff.stdout
    assert (root / "model.py").read_text() == MODEL
    cli_run(["--select", "NPU503", "--fix", "--unsafe-fixes", "."], cwd=root)
    text = (root / "model.py").read_text()
    assert "adapt_mem_func_wrapper(Fn, x," in text
    compile(text, "model.py", "exec")
    assert cli_run(["--select", "NPU503", "."], cwd=root).returncode == 0


# -- NPU505 -----------------------------------------------------------------------------

WRAP = """\
import torch
from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper as w


class Fn(torch.autograd.Function):
    pass


def f(x):
    return x


a = w(Fn.apply, 1)
b = w(Fn(), 1)
c = w(f, 1)
d = w(lambda t: t, 1)
e = w(Fn, x=1)
ok = w(Fn, 1)
unknown = w(get_fn(), 1)
"""


def test_npu505(lint):
    found = lint(WRAP, select=["NPU505"])
    assert [f.line for f in found] == [13, 14, 15, 16, 17]


@pytest.mark.parametrize("call, message", [
    # ``def adapt_mem_func_wrapper(fc_class, *args)`` (Ascend/MindSpeed@c721ce33
    # mindspeed/core/memory/adaptive_memory/adaptive_memory_function.py:112): fc_class= binds
    ("w(fc_class=Fn)", None),
    ("w(*args, fc_class=Fn)", None),  # an empty spread binds too: unknown
    ("w(Fn, **kw)", None),
    ("w(fc_class=Fn.apply)", "needs a torch.autograd.Function subclass as its first argument, not Fn.apply"),
    ("w(Fn, x=1)", "got an unexpected keyword argument 'x'"),
    ("w(Fn, fc_class=Fn)", "got multiple values for argument 'fc_class'"),
    ("w(1, fc_class=Fn)", "got multiple values for argument 'fc_class'"),
])
def test_npu505_binds_as_python_does(lint, call, message):
    src = WRAP.split("\n\n\na = ")[0] + "\n\n\ny = " + call + "\n"
    found = lint(src, select=["NPU505"])
    assert [m for f in found for m in [f.message] if message is None or message in m] == \
        ([] if message is None else [found[0].message]), [f.message for f in found]
    assert len(found) == (0 if message is None else 1)


FNS = """\
import torch


class MyFn(torch.autograd.Function):
    pass


class Base(torch.autograd.Function):
    pass


class Derived(Base):
    pass


class Plain:
    pass
"""
USE = """\
from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper
from pkg.fns import MyFn, Derived, Plain
from pkg import fns
from third_party import ExternalFn


def run(x):
    adapt_mem_func_wrapper(MyFn.apply, x)
    adapt_mem_func_wrapper(MyFn(), x)
    adapt_mem_func_wrapper(Derived.apply, x)
    adapt_mem_func_wrapper(fns.MyFn.apply, x)
    adapt_mem_func_wrapper(MyFn, x)
    adapt_mem_func_wrapper(Plain.apply, x)
    adapt_mem_func_wrapper(ExternalFn.apply, x)
"""


def test_npu505_function_class_of_another_module(lint):
    # pkg/fns.py is parsed for nothing else: the follow-up phase reads its classes
    found = lint({"pkg/__init__.py": "", "pkg/fns.py": FNS, "pkg/use.py": USE}, select=["NPU505"])
    assert [(f.path, f.line) for f in found] == [("pkg/use.py", 8), ("pkg/use.py", 9), ("pkg/use.py", 10),
                                                 ("pkg/use.py", 11)]
    assert found[0].message == ("adapt_mem_func_wrapper() needs a torch.autograd.Function subclass as its first "
                                "argument, not MyFn.apply (pass the class itself): it raises TypeError")
    assert "not an instance of the Function" in found[1].message
    # a class that is no Function: nothing
    plain = FNS.replace("(torch.autograd.Function)", "")
    assert lint({"pkg/__init__.py": "", "pkg/fns.py": plain, "pkg/use.py": USE}, select=["NPU505"]) == []


def test_npu505_class_of_this_file_based_on_another_modules_function(lint):
    use = USE.replace("def run(x):\n", "class Local(MyFn):\n    pass\n\n\ndef run(x):\n")
    use = use.replace("    adapt_mem_func_wrapper(MyFn, x)\n", "    adapt_mem_func_wrapper(Local.apply, x)\n")
    found = lint({"pkg/__init__.py": "", "pkg/fns.py": FNS, "pkg/use.py": use}, select=["NPU505"])
    assert [f.line for f in found] == [12, 13, 14, 15, 16] and "not Local.apply" in found[4].message


def test_npu505_class_of_a_module_not_linted_is_unknown(lint):
    assert lint({"pkg/__init__.py": "", "pkg/use.py": USE}, select=["NPU505"]) == []


def test_npu505_function_class_of_a_module_parsed_anyway(lint):
    # the defining module holds the wrapper too: parsed in the first pass
    fns = FNS + "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper\n"
    found = lint({"pkg/__init__.py": "", "pkg/fns.py": fns, "pkg/use.py": USE}, select=["NPU505"])
    assert [(f.path, f.line) for f in found] == [("pkg/use.py", n) for n in (8, 9, 10, 11)]
    # parsed for another rule family (torchair's streams), which NPU505 joins
    fns = FNS + "import torchair as tng\nwith tng.scope.npu_stream_switch('1', 0):\n    pass\n"
    found = lint({"pkg/__init__.py": "", "pkg/fns.py": fns, "pkg/use.py": USE}, select=["NPU505", "NPU3"])
    assert [(f.path, f.line) for f in found] == [("pkg/use.py", n) for n in (8, 9, 10, 11)]


def test_npu505_judges_each_wrapper_call_at_its_own_node(lint):
    # NPU505 judges the calls PythonLaunches resolved to the wrapper (a call nested in another's
    # arguments too), in a function body that reads the module's later import and class; a call
    # of anything else with the same arguments is not judged
    src = ("import torch\n\n\ndef run(x):\n    keep(lambda t: t, 1)\n"
           "    return w(lambda t: t, keep(w(Fn.apply, x)))\n\n\n"
           "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper as w\n\n\n"
           "class Fn(torch.autograd.Function):\n    pass\n")
    found = lint(src, select=["NPU505"])
    assert [(f.line, f.column, f.end_column) for f in found] == [(6, 14, 25), (6, 34, 42)]
    assert "not a lambda" in found[0].message and "not Fn.apply" in found[1].message


def test_npu505_local_lookalike(lint):
    src = "def adapt_mem_func_wrapper(f, *a):\n    pass\nadapt_mem_func_wrapper(lambda: 1)\n"
    assert lint(src, select=["NPU505"]) == []


def test_npu010_catalogues_the_wrapper(lint):
    src = ("from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper\n"
           "y = adapt_mem_func_wrapper(Fn, x, inputs=1)\nz = adapt_mem_func_wrapper()\nok = adapt_mem_func_wrapper(Fn, x)\n")
    assert [(f.code, f.line) for f in lint(src, select=["NPU010"])] == [("NPU010", 2), ("NPU010", 3)]


def test_export_and_plus_equals(lint):
    src = 'export GPT_ARGS="--adaptive-memory-optimization"\nGPT_ARGS+=" --swap-attention"\n' \
          'torchrun pretrain_gpt.py ${GPT_ARGS}\n'
    found = sh(lint, src, config=LEGACY)
    assert codes(found) == ["NPU501"] and pos(found[0]) == at(src, "--swap-attention")


def test_flag_value_with_equals_sign(lint):
    assert codes(sh(lint, "torchrun pretrain_gpt.py --adaptive-memory-optimization --ampipe-degree=4\n", config=LEGACY, select=("NPU501",))) == ["NPU501"]


def test_value_condition_on_absent_flag_reads_the_release_default(lint):
    # --moe-alltoall-overlap-comm needs EP > 1 (default 1) and the alltoall dispatcher (default
    # allgather, the release's parser_defaults): both reported
    found = sh(lint, "torchrun pretrain_gpt.py --moe-alltoall-overlap-comm\n")
    assert sorted(f.message.split(": ")[1].split(" (")[0] for f in found) == [
        "--moe-alltoall-overlap-comm needs --expert-model-parallel-size > 1",
        "--moe-alltoall-overlap-comm only supports the alltoall or alltoall_seq dispatcher"]
    assert sh(lint, "torchrun pretrain_gpt.py --moe-alltoall-overlap-comm --expert-model-parallel-size 8 "
                    "--moe-token-dispatcher-type alltoall_seq --moe-permutation-async-comm --moe-grouped-gemm\n") == []
    # a value that is not known is never a finding
    assert sh(lint, "torchrun pretrain_gpt.py --moe-alltoall-overlap-comm --expert-model-parallel-size 8 "
                    "--moe-token-dispatcher-type $D --moe-permutation-async-comm --moe-grouped-gemm\n") == []


def test_subprocess_tuple_and_keyword(lint):
    src = """\
    import subprocess
    subprocess.Popen(args=("python", "-m", "torch.distributed.run", "pretrain_gpt.py", "--reuse-fp32-param"))
    """
    assert codes(lint(src, select=["NPU5"])) == ["NPU504"]


def test_pipeline_layout_conflict(lint):
    src = "torchrun pretrain_gpt.py --pipeline-model-parallel-layout 'E|t*4|L' --noop-layers 0,3\n"
    assert codes(sh(lint, src)) == ["NPU501"]


def test_script_bash_accepts_but_tree_sitter_does_not_is_silent(lint):
    import shutil

    if shutil.which("bash") is None:  # pragma: no cover
        return
    src = 'V="${ARG:$LEN+1}"\ntorchrun pretrain_gpt.py --reuse-fp32-param --fp16\n'
    assert lint({"run.sh": src}, select=["NPU001", "NPU5"]) == []


def test_npu001_alone_parses_shell(lint):
    assert codes(lint({"run.sh": "MASTER_ADDR=<master_ip>\ntorchrun pretrain_gpt.py\n"}, select=["NPU001"])) == [
        "NPU001"]


def test_function_body_runs_at_its_call_with_the_callers_variables(lint):
    src = """\
    launch() {
        torchrun pretrain_gpt.py $GPT_ARGS "$@"
    }
    GPT_ARGS="--adaptive-memory-optimization --swap-attention"
    GPT_ARGS="--adaptive-memory-optimization"
    launch
    """
    assert sh(lint, src, config=LEGACY) == []
    src2 = src.replace('GPT_ARGS="--adaptive-memory-optimization"\n', "") + "GPT_ARGS=x\n"
    assert codes(sh(lint, src2, config=LEGACY)) == ["NPU501"]
    never_called = "f() {\n  torchrun pretrain_gpt.py --adaptive-memory-optimization --swap-attention\n}\n"
    assert sh(lint, never_called, config=LEGACY) == []


def test_quoted_positional_parameters_stand_for_any_words(lint):
    assert sh(lint, 'torchrun pretrain_gpt.py --reuse-fp32-param "$@"\n') == []
    assert sh(lint, 'torchrun pretrain_gpt.py --reuse-fp32-param "${EXTRA[@]}"\n') == []
    assert codes(sh(lint, 'torchrun pretrain_gpt.py --reuse-fp32-param "$1"\n')) == []  # one unknown word


def test_expansion_after_a_line_continuation_inside_quotes(lint):
    # tree-sitter-bash starts the second expansion's node at the ` \` before it
    src = 'D="a b"\nH=""\nC="\n  --reuse-fp32-param ${D} \\\n  ${H} \\\n  --fp16\n"\ntorchrun pretrain_gpt.py $C\n'
    assert codes(sh(lint, src)) == ["NPU504"]


def test_legacy_value_defaults(lint):
    # ampipe needs deepspeed_moe; the legacy parser's default is megatron_moe
    src = "torchrun pretrain_gpt.py --ampipe-degree 2 --use-flash-attn --expert-model-parallel-size 2\n"
    assert codes(sh(lint, src, config=LEGACY)) == ["NPU504"]
    assert sh(lint, src.replace("\n", " --moe-model-type deepspeed_moe\n"), config=LEGACY) == []
    current = '[tool.npulint]\nmindspeed-stack = "current"\n'
    assert sh(lint, src, config=current) == []  # not a feature-manager rule


def test_dualpipev_rules(lint):
    base = "torchrun pretrain_gpt.py --schedules-method dualpipev --untie-embeddings-and-output-weights " \
           "--pipeline-model-parallel-size 4"
    assert sh(lint, base + "\n") == []
    assert codes(sh(lint, base + " --overlap-grad-reduce\n")) == ["NPU501"]
    assert codes(sh(lint, "torchrun pretrain_gpt.py --schedules-method dualpipev --pipeline-model-parallel-size 4\n")) \
        == ["NPU504"]


def test_python_list_changed_after_it_is_built(lint):
    src = """\
    import subprocess
    cmd = ["torchrun", "pretrain_gpt.py", "--reuse-fp32-param"]
    cmd.append("--bf16")
    subprocess.run(cmd)
    """
    assert lint(src, select=["NPU5"], config=LEGACY) == []
    conflict = src.replace('"--reuse-fp32-param"', '"--adaptive-memory-optimization", "--swap-attention"')
    assert codes(lint(conflict, select=["NPU5"], config=LEGACY)) == ["NPU501"]  # presence cannot be undone


def test_python_list_shortened_after_it_is_built_is_unknown(lint):
    # a change other than append/extend/+= may take a word out: the list is not known
    base = """\
    import subprocess
    cmd = ["torchrun", "--nproc_per_node", "8", "pretrain_gpt.py", "--adaptive-memory-optimization",
           "--swap-attention"]
    {change}
    subprocess.run(cmd)
    """
    for change in ('cmd.remove("--swap-attention")', "del cmd[-1]", "cmd.pop()", "cmd[-1:] = []",
                   'cmd[5] = "--bf16"', "cmd.clear()", 'cmd.insert(4, "--no-op")', "cmd *= 1",
                   "cmd[0], x = 'python', 1", "rm = cmd.remove"):
        assert lint(base.format(change=change), select=["NPU5"], config=LEGACY) == [], change
    # what only reads the list, or only adds to it, leaves its words known
    for change in ("print(cmd[1:], cmd.index('8'), cmd.count('8'))", 'cmd.extend(["--bf16"])',
                   'cmd += ["--bf16"]'):
        assert codes(lint(base.format(change=change), select=["NPU5"], config=LEGACY)) == ["NPU501"], change


def test_source_makes_earlier_variables_unknown(lint):
    src = 'ARGS="--reuse-fp32-param"\nsource ./my_env.sh\ntorchrun pretrain_gpt.py $ARGS\n'
    assert sh(lint, src) == []
    cann = 'source /usr/local/Ascend/ascend-toolkit/set_env.sh\nARGS="--reuse-fp32-param"\ntorchrun pretrain_gpt.py $ARGS\n'
    assert codes(sh(lint, cann)) == ["NPU504"]
    after = 'source ./my_env.sh\nARGS="--reuse-fp32-param"\ntorchrun pretrain_gpt.py $ARGS\n'
    assert codes(sh(lint, after)) == ["NPU504"]


def test_value_range(lint):
    src = "torchrun pretrain_gpt.py --moe-zero-memory level0 --moe-zero-memory-num-layers -1\n"
    found = about(lint, src, "must be >=")
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(src, "-1")
    assert not about(lint, src.replace("-1", "2"), "must be >=")
    assert not about(lint, src.replace("-1", "$N"), "must be >=")


def test_flag_given_a_zero_value_is_off(lint):
    src = "torchrun pretrain_gpt.py --moe-fb-overlap --moe-grouped-gemm --expert-model-parallel-size 2 " \
          "--moe-token-dispatcher-type alltoall --moe-zero-memory level0 --moe-zero-memory-num-layers 0\n"
    assert sh(lint, src) == []
    assert codes(sh(lint, src.replace(" 0\n", " 2\n"))) == ["NPU501"]


def test_yaml_config_launch_checks_spelling_only(lint):
    assert sh(lint, "torchrun pretrain_gpt.py --yaml-cfg cfg.yaml --reuse-fp32-param\n") == []
    assert codes(sh(lint, "torchrun pretrain_gpt.py --yaml-cfg cfg.yaml --tensor-model-paralel-size 2\n")) == ["NPU502"]


# -- conditions on several flags: all_of / any_of ------------------------------------------


def test_all_of_three_flags_requirement(lint):
    # --moe-alltoall-overlap-comm with the alltoall_seq dispatcher and TP > 1 needs --moe-tp-extend-ep
    base = "torchrun pretrain_gpt.py --moe-alltoall-overlap-comm --moe-token-dispatcher-type alltoall_seq " \
           "--moe-permutation-async-comm --moe-grouped-gemm --expert-model-parallel-size 2 " \
           "--tensor-model-parallel-size 2"
    found = sh(lint, base + "\n")
    assert codes(found) == ["NPU504"] and "--moe-tp-extend-ep" in found[0].message
    assert sh(lint, base + " --moe-tp-extend-ep\n") == []
    # one part of the all_of is false (TP 1): clean; one part unknown ($TP): nothing said
    assert sh(lint, base.replace("--tensor-model-parallel-size 2", "--tensor-model-parallel-size 1") + "\n") == []
    assert sh(lint, base.replace("--tensor-model-parallel-size 2", "--tensor-model-parallel-size $TP") + "\n") == []


def test_all_of_conflict_reports_at_the_later_flag(lint):
    # in legacy models overlap_param_gather does not support reuse_fp32_param (three flags)
    # (legacy models need --transformer-impl local: its default transformer_engine is rejected)
    src = "torchrun pretrain_gpt.py --reuse-fp32-param --bf16 --transformer-impl local --use-legacy-models " \
          "--overlap-param-gather\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU501"] and pos(found[0]) == at(src, "--overlap-param-gather")
    assert sh(lint, src.replace(" --use-legacy-models", "")) == []


def test_any_of_requirement(lint):
    # --moe-zero-memory needs --moe-alltoall-overlap-comm or --moe-fb-overlap
    base = "torchrun pretrain_gpt.py --moe-zero-memory level0"
    found = sh(lint, base + "\n")
    assert codes(found) == ["NPU504"] and "--moe-fb-overlap" in found[0].message
    assert sh(lint, base + " --moe-fb-overlap --moe-grouped-gemm --expert-model-parallel-size 2 "
                           "--moe-token-dispatcher-type alltoall\n") == []
    assert not about(lint, base + " --moe-alltoall-overlap-comm\n", "zero-memory")
    assert sh(lint, base + " $EXTRA\n") == []  # an unknown word may be either flag


def test_any_of_satisfied_by_an_alias(lint):
    # --enable-mhc needs MLA; MindSpeed-LLM's --multi-head-latent-attention alias counts
    base = "torchrun pretrain_gpt.py --enable-mhc --use-flash-attn"
    assert codes(sh(lint, base + "\n")) == ["NPU504"]
    assert sh(lint, base + " --multi-head-latent-attention\n") == []
    assert sh(lint, base + " --multi-latent-attention\n") == []


def test_value_condition_inside_all_of(lint):
    # the alltoall dispatcher with --moe-alltoall-overlap-comm forbids --moe-tp-extend-ep
    src = "torchrun pretrain_gpt.py --moe-alltoall-overlap-comm --moe-token-dispatcher-type alltoall " \
          "--moe-grouped-gemm --expert-model-parallel-size 2 --moe-tp-extend-ep\n"
    assert codes(sh(lint, src)) == ["NPU501"]
    assert sh(lint, src.replace("type alltoall ", "type alltoall_seq --moe-permutation-async-comm ")) == []
    # the dispatcher not written: the release's default (allgather) makes the conflict's condition
    # false, and fails the overlap's own requirement instead
    found = sh(lint, src.replace("--moe-token-dispatcher-type alltoall ", ""))
    assert codes(found) == ["NPU504"] and "only supports the alltoall or alltoall_seq dispatcher" in found[0].message


def test_catalog_entries_cite_a_source_and_hold_somewhere():
    import re

    from npulint.rules.mindspeed_catalog import CATALOG, Entry, holds

    cite = re.compile(r"\b(MS|LLM|MEG)@[0-9a-z.]+ [\w./-]+\.py(:\d+)?")
    kinds = {"conflict", "requires", "choices", "range"}
    for e in CATALOG:
        assert isinstance(e, Entry) and e.kind in kinds, e
        assert cite.search(e.source), e.source
        assert holds(e), e  # an entry that holds on no release is never reported
    assert len({e.key for e in CATALOG}) == len(CATALOG)  # no duplicates


def test_all_of_requirement_with_a_catalogued_default(lint):
    # legacy validator: MoE with --use-legacy-models needs deepspeed_moe; the default is megatron_moe
    src = "torchrun pretrain_gpt.py --num-experts 8 --use-legacy-models\n"
    found = sh(lint, src, config=LEGACY)
    assert codes(found) == ["NPU504"] and "megatron_moe" in found[0].message
    assert sh(lint, src.replace("\n", " --moe-model-type deepspeed_moe\n"), config=LEGACY) == []
    assert sh(lint, src.replace(" --use-legacy-models", ""), config=LEGACY) == []
    current = '[tool.npulint]\nmindspeed-stack = "current"\n'
    assert sh(lint, src, config=current) == []  # not a feature-manager rule


def test_quant_states_choices(lint):
    src = "torchrun pretrain_gpt.py --quant-states fp4\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU504"] and "--quant-states" in found[0].message
    assert sh(lint, src.replace("fp4", "mxfp8")) == []


def test_history_turns_range(lint):
    src = "torchrun pretrain_gpt.py --history-turns -1\n"
    assert codes(sh(lint, src)) == ["NPU504"]
    assert sh(lint, src.replace("-1", "0")) == []


def test_fused_mhc_needs_hc_mult_4(lint):
    src = "torchrun pretrain_gpt.py --enable-mhc --multi-latent-attention --use-flash-attn --use-fused-mhc --hc-mult 8\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU504"] and "--hc-mult 4" in found[0].message
    assert sh(lint, src.replace("8\n", "4\n")) == []
    assert sh(lint, src.replace(" --hc-mult 8", "")) == []  # absent: no catalogued default, unknown
    assert sh(lint, src.replace(" --enable-mhc", "")) == []


def test_pipe_experts_multi_data_must_be_positive(lint):
    src = "torchrun pretrain_gpt.py --use-pipe-experts --pipe-experts-multi-data 0\n"
    found = sh(lint, src, config=LEGACY)
    assert codes(found) == ["NPU501"] and "--pipe-experts-multi-data" in found[0].message
    assert sh(lint, src.replace("data 0", "data 2"), config=LEGACY) == []
    assert sh(lint, src.replace(" --pipe-experts-multi-data 0", ""), config=LEGACY) == []  # no catalogued default


def test_dsa_indexer_context_parallel_algorithm(lint):
    src = ("torchrun pretrain_gpt.py --enable-dsa-indexer --multi-latent-attention --use-flash-attn "
           "--context-parallel-size 2 --context-parallel-algo megatron_cp_algo\n")
    found = about(lint, src, "cp_algo")
    assert codes(found) == ["NPU504"]
    assert not about(lint, src.replace("megatron_cp_algo", "ulysses_cp_algo"), "cp_algo")
    # the algorithm not written: the release's default, megatron_cp_algo (c77308a1
    # dsa_indexer_feature.py:119-123 reads args.context_parallel_algo)
    assert codes(about(lint, src.replace(" --context-parallel-algo megatron_cp_algo", ""), "cp_algo")) == ["NPU504"]
    assert not about(lint, src.replace(" --context-parallel-size 2", ""), "cp_algo")


def test_tp_2d_context_parallel_algorithm(lint):
    src = "torchrun pretrain_gpt.py --tp-2d --context-parallel-algo hybrid_cp_algo\n"
    found = about(lint, src, "tp-2d only supports")
    assert codes(found) == ["NPU504"]
    assert not about(lint, src.replace("hybrid_cp_algo", "ulysses_cp_algo"), "tp-2d only")


def test_legacy_expert_interval_and_capacity_factor(lint):
    src = "torchrun pretrain_gpt.py --expert-interval 0 --moe-train-capacity-factor -1\n"
    found = sh(lint, src, config=LEGACY)
    assert codes(found) == ["NPU504", "NPU504"]
    assert sh(lint, src.replace("interval 0", "interval 2").replace("factor -1", "factor 1.0"), config=LEGACY) == []


# -- a written 0 is compared against ranges (while `on` still leaves it unknown) ---------------


def test_range_compares_a_zero_value(lint):
    # LLM 2.0.0: --output-layer-slice-num must be >= 1; a written 0 used to slip through
    src = "torchrun pretrain_gpt.py --output-layer-slice-num 0\n"
    found = sh(lint, src, config=LLM200)
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(src, "0\n")
    assert sh(lint, src.replace(" 0\n", " 1\n"), config=LLM200) == []
    assert codes(sh(lint, "N=0\ntorchrun pretrain_gpt.py --output-layer-slice-num $N\n", config=LLM200)) == ["NPU504"]
    assert sh(lint, "torchrun pretrain_gpt.py --output-layer-slice-num $N\n", config=LLM200) == []
    assert sh(lint, src, config=CURRENT) == []  # legacy-only entry


def test_legacy_param_and_grad_buffer_pad(lint):
    # `if pad and pad <= 0`: negative values are refused, 0 passes the truthiness test
    src = "torchrun pretrain_gpt.py --param-and-grad-buffer-pad -512\n"
    found = sh(lint, src, config=LEGACY)
    assert codes(found) == ["NPU504"] and "--param-and-grad-buffer-pad" in found[0].message
    assert sh(lint, src.replace("-512", "0"), config=LEGACY) == []
    assert sh(lint, src.replace("-512", "512"), config=LEGACY) == []
    assert codes(sh(lint, "PAD=-1\ntorchrun pretrain_gpt.py --param-and-grad-buffer-pad ${PAD}\n", config=LEGACY)) \
        == ["NPU504"]
    assert sh(lint, src, config=CURRENT) == []  # the legacy validator only


def test_padded_base_length_zero_with_mla(lint):
    src = "torchrun pretrain_gpt.py --multi-latent-attention --padded-base-length 0\n"
    found = about(lint, src, "padded-base-length")
    assert codes(found) == ["NPU501"] and pos(found[0]) == at(src, "--padded-base-length")
    assert not about(lint, src.replace(" 0\n", " 128\n"), "padded-base-length")
    assert not about(lint, src.replace("--multi-latent-attention ", ""), "padded-base-length")


# -- former group (i) entries ------------------------------------------------------------------


def test_ema_decay_upper_bound(lint):
    src = "torchrun pretrain_gpt.py --ema-decay 1.5\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(src, "1.5") and "must be <= 1" in found[0].message
    assert sh(lint, src.replace("1.5", "1")) == []
    assert sh(lint, src.replace("1.5", "0")) == []
    assert codes(sh(lint, "DECAY=2\ntorchrun pretrain_gpt.py --ema-decay $DECAY\n")) == ["NPU504"]
    assert sh(lint, "torchrun pretrain_gpt.py --ema-decay $DECAY\n") == []


def test_ema_decay_negative_only_with_fused_ema_adamw(lint):
    src = "torchrun pretrain_gpt.py --optimizer-selection fused_ema_adamw --ema-decay -0.1\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU501"] and pos(found[0]) == at(src, "--ema-decay")
    assert sh(lint, src.replace("-0.1", "0")) == []  # ("lt", flag, 0): 0 is in range
    assert sh(lint, src.replace("fused_ema_adamw", "fused_adamw")) == []
    assert sh(lint, "torchrun pretrain_gpt.py --ema-decay -0.1\n") == []
    assert codes(sh(lint, "OPT=fused_ema_adamw\ntorchrun pretrain_gpt.py --optimizer-selection $OPT "
                          "--ema-decay -1\n")) == ["NPU501"]


def test_fb_overlap_schedule(lint):
    base = "torchrun pretrain_gpt.py --moe-fb-overlap --moe-grouped-gemm --expert-model-parallel-size 2 " \
           "--pipeline-model-parallel-size 4"
    found = about(lint, base + "\n", "fb overlap needs no pipeline")
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(base, "--pipeline-model-parallel-size")

    def schedule(src):
        return about(lint, src, "fb overlap needs no pipeline")

    assert not schedule(base + " --num-layers-per-virtual-pipeline-stage 2\n")
    assert not schedule(base + " --schedules-method dualpipev\n")
    assert not schedule(base.replace("size 4", "size 1") + "\n")
    assert not schedule(base + " --pipeline-model-parallel-layout 'Et|t|t|tL'\n")  # may be a virtual pipeline
    assert schedule("PP=2\n" + base.replace("size 4", "size $PP") + "\n")
    assert not schedule(base.replace("size 4", "size $PP") + "\n")


def test_hybrid_cp_algo_needs_ulysses_degree(lint):
    src = "torchrun pretrain_gpt.py --context-parallel-size 4 --context-parallel-algo hybrid_cp_algo\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU504"] and "--ulysses-degree-in-cp" in found[0].message
    assert sh(lint, src.replace("\n", " --ulysses-degree-in-cp 2\n")) == []
    assert sh(lint, src.replace("size 4", "size 1")) == []
    adaptive = src.replace("hybrid_cp_algo", "hybrid_adaptive_cp_algo")
    assert sh(lint, adaptive, config=CURRENT) == []  # legacy validators only (the current stack's check is MindSpeed-only)
    assert codes(sh(lint, adaptive, config=LEGACY)) == ["NPU504"]


def test_legacy_cp_reset_attention_mask_needs_ring_attention(lint):
    src = "torchrun pretrain_gpt.py --context-parallel-size 2 --context-parallel-algo ulysses_cp_algo " \
          "--reset-attention-mask\n"
    found = sh(lint, src, config=LEGACY)
    assert codes(found) == ["NPU504"] and "megatron_cp_algo" in found[0].message  # causal: the default mask type
    assert sh(lint, src, config=CURRENT) == []  # legacy validator only
    assert sh(lint, src.replace("ulysses_cp_algo", "megatron_cp_algo"), config=LEGACY) == []
    assert sh(lint, src.replace("\n", " --attention-mask-type general\n"), config=LEGACY) == []
    assert sh(lint, src.replace("size 2", "size 1"), config=LEGACY) == []
    assert codes(sh(lint, "ALGO=hybrid_cp_algo\n" + src.replace("ulysses_cp_algo", "$ALGO")
                           .replace("\n", " --ulysses-degree-in-cp 2\n"), config=LEGACY)) == ["NPU504"]


def test_legacy_llm_context_parallel_rules(lint):
    general = "torchrun pretrain_gpt.py --context-parallel-size 2 --context-parallel-algo megatron_cp_algo " \
              "--cp-attention-mask-type general --micro-batch-size 2\n"
    found = sh(lint, general, config=LLM200)
    assert codes(found) == ["NPU504"] and "micro batch size" in found[0].message
    assert sh(lint, general.replace("size 2\n", "size 1\n"), config=LLM200) == []
    assert sh(lint, general.replace("megatron_cp_algo", "ulysses_cp_algo"), config=LLM200) == []
    assert sh(lint, general, config=CURRENT) == []
    window = "torchrun pretrain_gpt.py --context-parallel-size 2 --sliding-window 4096\n"
    assert codes(sh(lint, window, config=LLM200)) == ["NPU501"]
    assert sh(lint, window.replace("size 2", "size 1"), config=LLM200) == []
    assert sh(lint, window, config=CURRENT) == []


def test_legacy_o2_needs_bf16(lint):
    src = "torchrun pretrain_gpt.py --o2-optimizer --fp16\n"
    found = sh(lint, src, config=LLM200)
    assert codes(found) == ["NPU504"] and "bf16" in found[0].message
    assert sh(lint, src.replace("--fp16", "--bf16"), config=LLM200) == []
    assert codes(sh(lint, "torchrun pretrain_gpt.py --o2-gradient\n", config=LLM200)) == ["NPU504"]
    assert sh(lint, src, config=CURRENT) == []


def test_legacy_llm_fused_ops(lint):
    mlp = "torchrun pretrain_gpt.py --use-fused-mlp --swiglu --sequence-parallel\n"
    assert sh(lint, mlp, config=LLM200) == []
    assert codes(sh(lint, mlp.replace(" --swiglu", ""), config=LLM200)) == ["NPU504"]
    assert codes(sh(lint, mlp.replace(" --sequence-parallel", ""), config=LLM200)) == ["NPU504"]
    assert sh(lint, mlp.replace("--sequence-parallel", "--lora-fusion"), config=LLM200) == []
    assert sh(lint, mlp.replace(" --swiglu", ""), config=CURRENT) == []
    rope = "torchrun pretrain_gpt.py --use-fused-rotary-pos-emb --position-embedding-type learned_absolute\n"
    assert codes(sh(lint, rope, config=LLM200)) == ["NPU504"]
    assert sh(lint, rope.replace("learned_absolute", "rope"), config=LLM200) == []
    assert sh(lint, rope.replace("\n", " --use-rotary-position-embeddings\n"), config=LLM200) == []
    # not written: LLM 2.0.0's default learned_absolute (Megatron sets rope only for
    # --use-rotary-position-embeddings, above)
    assert codes(sh(lint, "torchrun pretrain_gpt.py --use-fused-rotary-pos-emb\n", config=LLM200)) == ["NPU504"]
    assert sh(lint, rope, config=CURRENT) == []


def test_flags_of_older_releases_are_known(lint):
    # known-flags section D lists them with their releases ("--use-fused-mlp\t# 2.0.0,2.3.0")
    from npulint.rules.mindspeed import known_flags

    assert "--use-fused-mlp" in known_flags() and not [f for f in known_flags() if "#" in f]
    assert sh(lint, "torchrun pretrain_gpt.py --use-fused-mlp --swiglu --sequence-parallel\n") == []
    assert codes(sh(lint, "torchrun pretrain_gpt.py --use-fused-mpl\n")) == ["NPU502"]


def test_a_launch_is_checked_against_the_entries_of_its_own_flags_only():
    """launch_found looks only at the catalog entries whose first condition names a flag the
    launch writes (mindspeed_catalog.catalog_index): what every entry would say, on launches
    that write, for each entry, each subset of the flags of its first condition with the values
    its conditions compare, and the flags of its second."""
    import itertools

    from npulint.model import Span
    from npulint.rules import mindspeed, mindspeed_catalog as mc

    def values(cond):
        """(flag, value) pairs that make a condition hold (a flag alone: None)."""
        if cond[0] in ("all", "any"):
            for c in cond[1:]:
                yield from values(c)
        elif cond[0] == "on":
            yield cond[1], None
        else:
            v = cond[2][0] if isinstance(cond[2], tuple) else cond[2]
            yield cond[1], {"gt": lambda: v + 1, "lt": lambda: v - 1, "ne": lambda: f"{v}x",
                            "notin": lambda: "zzz"}.get(cond[0], lambda: v)()

    def launch(pairs):
        span = Span(1, 1, 1, 1)
        words = [mindspeed.Word("torchrun", span), mindspeed.Word("pretrain_gpt.py", span)]
        for flag, value in pairs:
            words.append(mindspeed.Word(flag, span))
            if value is not None:
                words.append(mindspeed.Word(str(value), span))
        return mindspeed.find_launch(words)

    every = mc.catalog_index.__wrapped__

    def brute(stacks):
        entries, _ = every(stacks)
        flags = {f for e in mc.CATALOG for f in mc.entry_flags(e)}
        return entries, {flag: tuple(range(len(entries))) for flag in flags}

    stacks = frozenset({"mindspeed@master"})
    checked = found = 0
    for e in mc.CATALOG:
        if e.kind == "range":
            flag, lo, hi = e.b
            a, b = [(flag, lo - 1 if lo is not None else hi + 1)], []
        else:
            a = list(dict(values(e.a)).items())
            b = list(dict(values(e.b)).items()) if e.kind == "conflict" else [(e.b[1], "zzz")] if e.kind == "choices" else []
        for n in range(1, len(a) + 1):
            for chosen in itertools.combinations(a, n):
                one = launch(list(chosen) + [p for p in b if p[0] not in dict(chosen)])
                fast, _ = mindspeed.launch_found(one, stacks)
                original = mc.catalog_index
                mc.catalog_index = mindspeed.catalog_index = brute
                try:
                    slow, _ = mindspeed.launch_found(one, stacks)
                finally:
                    mc.catalog_index = mindspeed.catalog_index = original
                assert fast == slow, e
                checked += 1
                found += sum(len(items) for code, items in fast.items() if code != "NPU502")
    assert checked > len(mc.CATALOG) and found > 100  # the launches do break the catalog's rules


# -- a list the file changes through sys.argv, an alias or a helper -----------------------

MC2 = '"--tensor-model-parallel-size", "2", "--use-ascend-mc2"'  # NPU504 on master: no --sequence-parallel


@pytest.mark.parametrize("change", [
    'sys.argv.extend(["--sequence-parallel"])',
    'sys.argv.append("--sequence-parallel")',
    'sys.argv += ["--sequence-parallel"]',
    'sys.argv.insert(1, "--sequence-parallel")',
    'sys.argv[1:1] = ["--sequence-parallel"]',
    'add_flag(sys.argv, "--sequence-parallel")',
])
def test_sys_argv_changed_after_its_literal_is_not_known(lint, change):
    src = f"""\
    import sys
    from helpers import add_flag
    sys.argv = ["pretrain_gpt.py", {MC2}]
    {change}
    """
    assert lint(src, select=["NPU5"], config=MASTER) == []
    # the clean twin's violating twin: nothing changes sys.argv after its literal
    assert codes(lint(src.replace(change, "print(sys.argv)"), select=["NPU5"], config=MASTER)) == ["NPU504"]


@pytest.mark.parametrize("imports, name", [
    ("import sys as s", "s.argv"), ("from sys import argv", "argv"), ("from sys import argv as av", "av")])
def test_sys_argv_changed_through_an_alias_of_sys_or_argv(lint, imports, name):
    src = f"""\
    import sys
    {imports}
    sys.argv = ["pretrain_gpt.py", {MC2}]
    {name}.append("--sequence-parallel")
    """
    assert lint(src, select=["NPU5"], config=MASTER) == []


def test_sys_argv_grown_keeps_its_known_words(lint):
    # appended to: more words may follow, but two flags it holds still conflict
    src = """\
    import sys
    sys.argv = ["pretrain_gpt.py", "--adaptive-memory-optimization", "--swap-attention"]
    sys.argv.append("--bf16")
    """
    assert codes(lint(src, select=["NPU5"], config=LEGACY)) == ["NPU501"]


def test_an_argv_that_is_not_sys_argv_changes_nothing(lint):
    src = f"""\
    import sys
    class Opts:
        argv = []
    opts = Opts()
    sys.argv = ["pretrain_gpt.py", {MC2}]
    opts.argv.append("--sequence-parallel")
    """
    assert codes(lint(src, select=["NPU5"], config=MASTER)) == ["NPU504"]


LAUNCH = f'["torchrun", "--nproc_per_node", "8", "pretrain_gpt.py", {MC2}]'


@pytest.mark.parametrize("change", [
    # a helper the list is passed to may change it
    'add_flag(cmd, "--sequence-parallel")',
    'opts.update(cmd)',
    # a name bound to it shares its changes, either way round
    'extra = cmd\nextra.append("--sequence-parallel")',
    'extra: list = cmd\nextra.remove("--use-ascend-mc2")',
    # stored in a container or an attribute: may be changed from there
    'holder = [cmd]\nholder[0].append("--sequence-parallel")',
    'opts.cmd = cmd',
    'registry = {"train": cmd}',
])
def test_a_list_changed_through_a_helper_or_an_alias_is_not_known(lint, change):
    src = "import subprocess\nfrom helpers import add_flag, opts\n\n" \
          f"cmd = {LAUNCH}\n{change}\nsubprocess.run(cmd, check=True)\n"
    assert lint({"t.py": src}, select=["NPU5"], config=MASTER) == []


def test_a_list_bound_to_the_launched_name_shares_its_changes(lint):
    src = f"import subprocess\n\nbase = {LAUNCH}\ncmd = base\nbase.append(\"--sequence-parallel\")\nsubprocess.run(cmd)\n"
    assert lint({"t.py": src}, select=["NPU5"], config=MASTER) == []


@pytest.mark.parametrize("use", [
    'print(cmd)', 'print(" ".join(cmd))', 'logging.info("%s", cmd)', 'n = len(cmd)', 'shlex.join(cmd)',
    'other = ["x"]\nother.extend(cmd)', 'copy = list(cmd)\ncopy.append("--sequence-parallel")',
    'more = [*cmd, "--sequence-parallel"]', 'subprocess.run(cmd + ["--sequence-parallel"])',
])
def test_a_list_read_but_not_changed_is_still_checked(lint, use):
    src = "import logging, shlex, subprocess\n\n" \
          f"cmd = {LAUNCH}\n{use}\nsubprocess.run(cmd, check=True)\n"
    found = lint({"t.py": src}, select=["NPU5"], config=MASTER)
    assert codes(found) == ["NPU504"] and found[0].line == 3


# -- MindSpeed-MM: a YAML file as the first argument replaces the command line's flags ---------

MM = '[tool.npulint.releases]\nmindspeed-mm = "master"\n'
YAML_LAUNCH = """\
DISTRIBUTED_ARGS="--nproc_per_node 8 --nnodes 1"
config_path=examples/qwen3vl/qwen3vl_full_sft_8B.yaml
torchrun $DISTRIBUTED_ARGS {entry} {first} \\
    --distributed-backend nccl \\
    --use-ascend-mc2 \\
    --tensor-model-paralel-size 2
"""


@pytest.mark.parametrize("entry, first", [
    ("pretrain_transformers.py", "${config_path}"),
    ("pretrain_transformers.py", "$CONFIG_DIR/sft.yaml"),
    ("mindspeed_mm/mcore/models/qwen3_5/pretrain_qwen3_5.py", "cfg.yaml"),
    ("pretrain_gpt.py", "${config_path}"),  # an entry that does not read it rejects the argument
    ("pretrain_transformers.py", "$UNSET_CONFIG"),  # it reads an unknown first argument if it is one
])
def test_a_yaml_first_argument_replaces_the_flags(lint, entry, first):
    assert sh(lint, YAML_LAUNCH.format(entry=entry, first=first), config=MM) == []


@pytest.mark.parametrize("entry, first, found", [
    ("pretrain_transformers.py", "", ["NPU504", "NPU504", "NPU502"]),  # flags alone: Megatron parses them
    ("pretrain_transformers.py", "${config_path}.bak", ["NPU504", "NPU504", "NPU502"]),
    # an entry that does not read a YAML file (the unknown word may be a companion: NPU504 waits)
    ("pretrain_gpt.py", "$UNSET_CONFIG", ["NPU502"]),
])
def test_flags_without_a_yaml_first_argument_are_checked(lint, entry, first, found):
    assert codes(sh(lint, YAML_LAUNCH.format(entry=entry, first=first), config=MM)) == found


def test_a_yaml_launch_does_not_enable_amo(lint):
    files = {"run.sh": "torchrun pretrain_transformers.py cfg.yaml --adaptive-memory-optimization\n",
             "m.py": MODEL}
    assert lint(files, select=["NPU503"]) == []
    files["run.sh"] = "torchrun pretrain_transformers.py --adaptive-memory-optimization\n"
    assert codes(lint(files, select=["NPU503"])) == ["NPU503"]


# -- a requirement that differs between releases and fails on every one -------------------------

@pytest.mark.parametrize("flags, reported", [
    # RULES.md "Releases": --neat-pack needs --reset-position-ids up to MindSpeed-LLM 2.2.0 and
    # --reset-attention-mask later; only MindSpeed-LLM registers it, so every release the launch
    # may run on rejects it, each by a check of its own
    ("--neat-pack", True),
    ("--neat-pack --reset-position-ids", False),  # 2.0.0-2.2.0 take it
    ("--neat-pack --reset-attention-mask", False),  # 2.3.0 on take it
    ("--neat-pack --reset-position-ids --reset-attention-mask", False),
    ("--neat-pack $EXTRA", False),  # the companion may be there
])
def test_a_requirement_every_release_has_its_own_of(lint, flags, reported):
    found = sh(lint, f"torchrun --nproc_per_node 8 pretrain_gpt.py {flags} --bf16\n", config=None)
    assert codes(found) == (["NPU504"] if reported else [])
    if reported:
        assert "--reset-attention-mask (MindSpeed-LLM 2.3.0 to master" in found[0].message
        assert "--reset-position-ids (MindSpeed-LLM 2.0.0 to 2.2.0" in found[0].message
        assert (found[0].line, found[0].column) == (1, 45)


def test_a_requirement_every_release_has_its_own_of_but_the_project_registers_the_flag(lint):
    # the project's parser takes --neat-pack: the launch starts on MindSpeed and MindSpeed-MM too
    src = "torchrun --nproc_per_node 8 pretrain_gpt.py --neat-pack\n"
    files = {"run.sh": src, "my_args.py": "def add(group):\n    group.add_argument('--neat-pack', action='store_true')\n"}
    assert codes(lint({"run.sh": src}, select=["NPU5"], config=None)) == ["NPU504"]
    assert codes(lint(files, select=["NPU5"], config=None)) == []


def test_a_requirement_of_the_configured_releases_is_reported_alone(lint):
    src = "torchrun --nproc_per_node 8 pretrain_gpt.py --neat-pack --bf16\n"
    found = sh(lint, src, config='[tool.npulint.releases]\nmindspeed-llm = "2.3.0"\n')
    assert codes(found) == ["NPU504"] and "every release" not in found[0].message
    assert "--reset-position-ids" not in found[0].message
