"""Bounded work on hostile input: each bound of the shell reader with an input just under and
just over it. Past a bound a script gets one NPU005 naming it and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from npulint import shell

from conftest import codes

REUSE = "--reuse-fp32-param"  # NPU504 without --bf16: a finding to lose past a bound


def _nested(levels: int) -> str:
    return "while true; do\n" * levels + f"torchrun pretrain_gpt.py {REUSE}\n" + "done\n" * levels


def _words(n: int) -> str:
    return f"torchrun pretrain_gpt.py {REUSE}" + " --bf16x" * (n - 3) + "\n"


def _value(chars: int) -> str:
    return f'V="{"x" * chars}"\ntorchrun pretrain_gpt.py {REUSE} --data-path "$V"\n'


def _sh(lint, src):
    return lint({"run.sh": src}, select=["NPU0", "NPU5"])


@pytest.mark.parametrize("make, under, over, what", [
    (_nested, shell.MAX_NESTING - 1, shell.MAX_NESTING, "nested"),  # the command inside is a level too
    (_words, shell.MAX_WORDS, shell.MAX_WORDS + 1, "words"),
    (_value, shell.MAX_VALUE, shell.MAX_VALUE + 1, "characters"),
])
def test_each_bound_just_under_and_just_over(lint, make, under, over, what):
    found = _sh(lint, make(under))
    assert "NPU005" not in codes(found) and "NPU504" in codes(found)
    found = _sh(lint, make(over))
    assert codes(found) == ["NPU005"], found
    assert what in found[0].message and (found[0].line, found[0].column) == (1, 1)


def test_expansion_doubling_stops_at_the_value_bound(lint):
    src = "V0=--bf16\n" + "".join(f'V{i}="$V{i - 1} $V{i - 1}"\n' for i in range(1, 31))
    found = _sh(lint, src + "torchrun pretrain_gpt.py $V30\n")
    assert codes(found) == ["NPU005"] and "MAX_VALUE" in found[0].message


def test_a_bound_inside_a_bash_c_string_stops_the_whole_script(lint):
    inner = "V0=--bf16; " + "; ".join(f'V{i}="$V{i - 1} $V{i - 1}"' for i in range(1, 18))
    found = _sh(lint, f"bash -c '{inner}; torchrun pretrain_gpt.py $V17'\n")
    assert codes(found) == ["NPU005"]


def test_deep_nesting_stops_before_any_recursion_runs_away():
    # 20,000 levels: a walk that recursed per level would hit Python's recursion limit
    script, error = shell.parse_script(_nested(20_000))
    assert error is None and script.limit is not None and "MAX_NESTING" in script.limit


HOSTILE = {
    "doubling": "V0=--bf16\n" + "".join(f'V{i}="$V{i - 1} $V{i - 1}"\n' for i in range(1, 31))
                + "torchrun pretrain_gpt.py $V30\n",
    "nesting": _nested(12_000),
    "arrays": "A=(--bf16)\n" + "".join(f'A=("${{A[@]}}" "${{A[@]}}")\n' for _ in range(30))
              + 'torchrun pretrain_gpt.py "${A[@]}"\n',
    "case ladder": "".join(f"case $X in a{i}) P{i}=1 ;; b{i}) P{i}=2 ;; esac\n" for i in range(40))
                   + "torchrun pretrain_gpt.py --bf16\n",
    "heredocs": "".join(f"cat <<EOF{i}\n$(echo x)\nEOF{i}\n" for i in range(2000)) + "torchrun pretrain_gpt.py\n",
    "subshells": "(" * 5000 + "torchrun pretrain_gpt.py --bf16" + ")" * 5000 + "\n",
    "and-chains": " && ".join(["true"] * 20000) + " && torchrun pretrain_gpt.py --bf16\n",
}


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory):
    """Every HOSTILE script linted by ``cli.main`` in ONE child process, one after the other
    (one interpreter start instead of six): per script, its stdout, its stderr (with the
    traceback of anything ``main`` raised) and the peak RSS grown since the child started.
    ru_maxrss only rises, so a script's figure also counts what the ones before it kept: it
    is never less than the script's own growth in a child of its own."""
    folder = tmp_path_factory.mktemp("hostile")
    paths = []
    for i, name in enumerate(sorted(HOSTILE)):
        path = folder / str(i) / "run.sh"
        path.parent.mkdir()
        path.write_text(HOSTILE[name])
        paths.append((name, str(path)))
    code = textwrap.dedent(f"""\
        import io, json, resource, sys, traceback
        from npulint import cli
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        real_out = sys.stdout
        report = {{}}
        for name, path in {paths!r}:
            sys.stdout, sys.stderr = out, err = io.StringIO(), io.StringIO()
            try:
                cli.main(["--no-cache", "--max-file-size", "0", "--select", "ALL", "--format", "json", path])
            except BaseException:
                traceback.print_exc(file=err)
            sys.stdout, sys.stderr = real_out, sys.__stderr__
            after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            report[name] = {{"stdout": out.getvalue(), "stderr": err.getvalue(), "grown_kb": after - before}}
        json.dump(report, real_out)
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60 * len(paths))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    return json.loads(r.stdout)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_scripts_stay_within_time_and_memory(hostile_runs, name):
    """In a child process: no internal error, and a memory ceiling (200 MB over the start)."""
    run = hostile_runs[name]
    assert "Traceback" not in run["stderr"] and "NPU000" not in run["stdout"], run["stderr"][-2000:]
    assert json.loads(run["stdout"]) is not None  # main wrote its report
    grown_kb = run["grown_kb"]
    assert grown_kb < 200 * 1024, grown_kb


# -- Python: syntax nodes and literal lengths (the real bounds are large: the tests lower them) --

PY_HEAD = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
PY_TAIL = "with npu_weight_prefetch_scope(buffer_pool_id=-1):\n    pass\n"


def test_python_literal_just_under_and_just_over_the_bound(lint, monkeypatch):
    from npulint import analyse

    monkeypatch.setattr(analyse, "MAX_LITERAL_ITEMS", 50)
    under = PY_HEAD + "T = (" + ", ".join("1" for _ in range(50)) + ")\n" + PY_TAIL
    assert [f.code for f in lint({"t.py": under}, select=["NPU"])] == ["NPU103"]
    over = PY_HEAD + "T = (" + ", ".join("1" for _ in range(51)) + ")\n" + PY_TAIL
    (f,) = lint({"t.py": over}, select=["NPU"])
    assert f.code == "NPU005" and (f.line, f.column) == (1, 1)
    assert "a literal of 51 items at line 2, more than 50 (the analysis bound)" in f.message


def test_python_syntax_nodes_just_under_and_just_over_the_bound(lint, monkeypatch):
    import ast

    from npulint import analyse

    src = PY_HEAD + "".join(f"v{i} = {i}\n" for i in range(20)) + PY_TAIL
    nodes = sum(1 for _ in ast.walk(ast.parse(src)))
    monkeypatch.setattr(analyse, "MAX_SYNTAX_NODES", nodes)
    assert [f.code for f in lint({"t.py": src}, select=["NPU"])] == ["NPU103"]
    monkeypatch.setattr(analyse, "MAX_SYNTAX_NODES", nodes - 1)
    (f,) = lint({"t.py": src}, select=["NPU"])
    assert f.code == "NPU005" and f"more than {nodes - 1:,} syntax nodes" in f.message
    # NPU005 off: nothing at all, never a guess from part of the file
    assert lint({"t.py": src}, select=["NPU1"]) == []


def test_npu005_of_a_script_alone_and_suppressed_on_line_1(lint):
    src = "V0=--bf16\n" + "".join(f'V{i}="$V{i - 1} $V{i - 1}"\n' for i in range(1, 18)) + "torchrun pretrain_gpt.py $V17\n"
    assert [(f.code, f.line, f.column) for f in lint({"run.sh": src}, select=["NPU005"])] == [("NPU005", 1, 1)]
    assert lint({"run.sh": src}, select=["NPU001", "NPU004"]) == []
    assert lint({"run.sh": "# noqa: NPU005\n" + src}, select=["NPU0", "NPU5"]) == []
