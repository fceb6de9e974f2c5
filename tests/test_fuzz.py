"""Property-based tests (hypothesis, hypothesmith): on any program, including ones built from
the NPU APIs the rules check, npulint never raises and never reports an internal error
(NPU000), and the output of ``--fix`` parses and is a fixed point (fixing it again changes
nothing).

A plain run is bounded: 10 examples per property (``conftest.FUZZ_EXAMPLES``); ``pytest --slow``
runs 40; ``NPULINT_FUZZ_EXAMPLES`` sets the number (a long run:
``NPULINT_FUZZ_EXAMPLES=2000 pytest tests/test_fuzz.py``). The examples are derandomized up
to 100: a run of N examples checks the same programs every time.
"""

from __future__ import annotations

import os
import re

import pytest

hypothesis = pytest.importorskip("hypothesis")
hypothesmith = pytest.importorskip("hypothesmith")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from npulint import fixes as fx  # noqa: E402
from npulint import registry  # noqa: E402
from npulint.analyse import _in_big_stack  # noqa: E402
from npulint.core import analyse_file  # noqa: E402
from npulint.config import Settings  # noqa: E402
from npulint.source import PYTHON  # noqa: E402

from conftest import FUZZ_EXAMPLES  # noqa: E402

EXAMPLES = int(os.environ.get("NPULINT_FUZZ_EXAMPLES", str(FUZZ_EXAMPLES)))  # --slow sets it to 40
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 100,
                suppress_health_check=list(HealthCheck), database=None)

RULES, CHECKERS = registry.load()
ENABLED = {r.code for r in RULES}  # every rule, info-level ones included
EXAMPLES_SRC = sorted({src for r in RULES for src in (*r.invalid, *r.valid)})
# each checker's prefilter tokens, so generated programs reach the parser and the rules
HEADERS = sorted({" ".join(group) for c in CHECKERS for group in c.tokens})
LITERAL = re.compile(r"-?\b\d+\b|'[^'\n]*'|\"[^\"\n]*\"|\bTrue\b|\bFalse\b|\bNone\b")
VALUES = st.sampled_from(["0", "1", "-1", "2", "1024", "None", "True", "False", "'x'", "\"reduce-overhead\"",
                          "\"max-autotune\"", "\"default\"", "x", "f()", "[]", "{}", "1.5", "2**31", "\"\""])


def lint(text: str):
    result = _in_big_stack(lambda: analyse_file("/fuzz/t.py", "t.py", PYTHON, text,
                                                                Settings(root="/fuzz"), CHECKERS, ENABLED))
    return result.findings


def check(text: str) -> None:
    findings = lint(text)
    internal = [f for f in findings if f.code == "NPU000"]
    assert not internal, internal[0].message
    fixed = fix_all(text)
    if fixed != text:
        assert fx.parses(fixed, PYTHON)
        assert not [f for f in lint(fixed) if f.code == "NPU000"]
        assert fix_all(fixed) == fixed  # idempotent


def fix_all(text: str) -> str:
    """What ``--fix`` writes: lint, fix, lint again, until nothing changes."""
    for _ in range(fx.MAX_ROUNDS):
        found = fx.fixes_by_path(lint(text)).get("t.py", [])
        new, done = fx.fix_text(text, found, PYTHON)
        if not done or new == text:
            return text
        text = new
    return text


@st.composite
def npu_programs(draw):
    """Rule examples glued together (indented into a function, sometimes), literals swapped."""
    parts = draw(st.lists(st.sampled_from(EXAMPLES_SRC), min_size=1, max_size=3))
    out = []
    for src in parts:
        literals = list(LITERAL.finditer(src))
        if literals:
            swaps = draw(st.lists(st.tuples(st.integers(0, len(literals) - 1), VALUES), max_size=4))
            chars = list(src)
            for index, value in sorted(dict(swaps).items(), reverse=True):
                m = literals[index]
                chars[m.start():m.end()] = value
            src = "".join(chars)
        out.append(src if src.endswith("\n") else src + "\n")
    if draw(st.booleans()):
        i = draw(st.integers(0, len(out) - 1))
        out[i] = "def wrapper():\n" + "".join("    " + line for line in out[i].splitlines(keepends=True))
    return "".join(out)


@FUZZ
# deferred: building the grammar's parser takes about 2 s, which every test process would pay
# at collection, whether or not it runs this test
@given(header=st.sampled_from(HEADERS), body=st.deferred(hypothesmith.from_grammar))
def test_generated_programs_never_break_npulint(header, body):
    check(f"# {header}\n" + body)


@FUZZ
@given(body=st.deferred(hypothesmith.from_node))
def test_generated_syntax_trees_never_break_npulint(body):
    check("import torch_npu, torchair  # npu_init hccl_ops CompilerConfig get_npu_backend\n" + body)


@FUZZ
@given(program=npu_programs())
def test_npu_api_programs_never_break_npulint_and_fixes_are_idempotent(program):
    check(program)


@FUZZ
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_never_break_the_reader(data):
    from npulint.source import Unreadable, decode

    try:
        text = decode(b"# hccl_ops npu_init\n" + data, PYTHON)
    except Unreadable:
        return
    check(text)


# -- generated shell scripts (bounded work on hostile input) --------------------------------

SHELL_WORDS = st.sampled_from(["--bf16", "--reuse-fp32-param", "$V", "${A[@]}", '"$V $V"', "$(date)", "x*",
                               "--num-layers 8", "--adaptive-memory-optimization", "--swap-attention"])


@st.composite
def shell_scripts(draw, depth=0):
    """Scripts built from the constructs the reader follows: assignments (doubling ones too),
    arrays, loops, ifs, case ladders, subshells, functions, here-documents, `bash -c`, nested
    around launch commands."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["assign", "double", "array", "launch", "heredoc"]
                                    + (["loop", "if", "case", "sub", "func", "bashc"] if depth < 6 else [])))
        if kind == "assign":
            parts.append(f"V={draw(SHELL_WORDS)}\n")
        elif kind == "double":
            parts.append("".join('V="$V $V"\n' for _ in range(draw(st.integers(1, 24)))))
        elif kind == "array":
            parts.append('A=(' + " ".join(draw(st.lists(SHELL_WORDS, max_size=4))) + ')\n'
                         + 'A=("${A[@]}" "${A[@]}")\n' * draw(st.integers(0, 16)))
        elif kind == "launch":
            parts.append("torchrun pretrain_gpt.py " + " ".join(draw(st.lists(SHELL_WORDS, max_size=6))) + "\n")
        elif kind == "heredoc":
            parts.append("cat <<EOF\n# noqa: NPU504 $V\nEOF\n")
        else:
            inner = draw(shell_scripts(depth=depth + 1))
            n = draw(st.integers(1, 40 if depth == 0 else 3))
            open_, close = {"loop": ("while true; do\n", "done\n"), "if": ("if [ -n \"$V\" ]; then\n", "fi\n"),
                            "case": ("case $V in a) P=1 ;; *)\n", ";; esac\n"), "sub": ("(\n", ")\n"),
                            "func": ("f() {\n", "}\nf\nf\n"),
                            "bashc": ("bash -c '\n", "'\n")}[kind]
            if kind == "bashc":
                inner = inner.replace("'", "")
            parts.append(open_ * n + inner + close * n)
    return "".join(parts)


@FUZZ
@given(script=shell_scripts())
def test_generated_shell_scripts_never_break_npulint(script):
    from npulint.source import SHELL

    result = _in_big_stack(lambda: analyse_file("/fuzz/run.sh", "run.sh", SHELL, script,
                                                                Settings(root="/fuzz"), CHECKERS, ENABLED))
    internal = [f for f in result.findings if f.code == "NPU000"]
    assert not internal, internal[0].message
