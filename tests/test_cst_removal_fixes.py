"""The removal fixes as LibCST edits: NPU208 drops the ignored ``mode=`` argument of
torch.compile (the call without the argument, :func:`npulint.checker.without_arg`), NPU202 drops
the overwritten ``disable_mempool_reuse_in_same_fx = False`` (the line without the statement,
or ``pass``, or nothing: :func:`npulint.checker.without_statement`). Each is written by LibCST
at the node's place (``FileContext.replace_with_node``): a multi-line call keeps its layout and
the comments that are not the removed argument's. Each case goes through ``--fix`` (the fix loop
and its parse check), checks the whole file, byte for byte, and that a second ``--fix`` changes
nothing."""

from __future__ import annotations

import dataclasses

import pytest

from npulint.config import Settings
from npulint.core import lint_source
from npulint.fixes import fix_text

HEAD = """\
import torch
import torchair
from torchair.configs.compiler_config import CompilerConfig

config = CompilerConfig()
config.mode = "reduce-overhead"
"""
BACKEND = "backend = torchair.get_npu_backend(compiler_config=config)\n"
POOL = "config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()\n"
REUSE = "config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False"
MODE = 'mode="reduce-overhead"'


def _fix_twice(cli_run, tmp_path, code: str, text: str) -> str:
    path = tmp_path / "t.py"
    path.write_bytes(text.encode("utf-8"))  # as written: its line breaks kept
    cli_run(["--select", code, "--fix", "--no-cache", "t.py"], tmp_path)
    fixed = path.read_bytes().decode("utf-8")
    compile(fixed, "t.py", "exec")
    cli_run(["--select", code, "--fix", "--no-cache", "t.py"], tmp_path)
    assert path.read_bytes().decode("utf-8") == fixed  # a second run changes nothing
    return fixed


def _findings(code: str, text: str):
    settings = Settings(root="/nowhere")
    settings.select = [code]
    return [f for f in lint_source("t.py", text, settings) if f.code == code]


# -- NPU208: the call without mode= -----------------------------------------------------------

CALLS = {
    # the first argument, one per line: the next one takes its line
    "first": (f"opt = torch.compile(\n    {MODE},\n    backend=backend,\n)(model)\n",
              "opt = torch.compile(\n    backend=backend,\n)(model)\n"),
    # in the middle: the comment that ends its line goes with it, the comment line below stays
    "middle-comments": (f"opt = torch.compile(\n    model,\n    {MODE},  # ignored by torchair\n"
                        "    # the NPU backend\n    backend=backend,\n)\n",
                        "opt = torch.compile(\n    model,\n    # the NPU backend\n    backend=backend,\n)\n"),
    # the last one, with the trailing comma: the comment that ends the line before stays
    "last-trailing-comma": (f"opt = torch.compile(\n    model,\n    backend=backend,  # torchair\n    {MODE},\n)\n",
                            "opt = torch.compile(\n    model,\n    backend=backend,  # torchair\n)\n"),
    # the last one without a trailing comma, the bracket on its own line: its line and comment go
    "last-no-comma": (f"opt = torch.compile(\n    model,\n    backend=backend,\n    {MODE}  # ignored\n)\n",
                      "opt = torch.compile(\n    model,\n    backend=backend,\n)\n"),
    # a comment line above the last argument stays
    "last-comment-line-above": (f"opt = torch.compile(\n    model,\n    backend=backend,\n    # aclgraph\n"
                                f"    {MODE},\n)\n",
                                "opt = torch.compile(\n    model,\n    backend=backend,\n    # aclgraph\n)\n"),
    "last-one-line": (f"opt = torch.compile(model, backend=backend, {MODE})  # compile\n",
                      "opt = torch.compile(model, backend=backend)  # compile\n"),
    "last-one-line-trailing-comma": (f"opt = torch.compile(model, backend=backend, {MODE},)\n",
                                     "opt = torch.compile(model, backend=backend,)\n"),
    # visual indent: the lines below keep their alignment
    "middle-visual": (f"opt = torch.compile(model, {MODE},\n                    backend=backend)\n",
                      "opt = torch.compile(model,\n                    backend=backend)\n"),
    # ... and the comment that ends a line that stays, stays
    "middle-visual-comment": (f"opt = torch.compile(model, {MODE},  # compile it\n                    backend=backend)\n",
                              "opt = torch.compile(model,  # compile it\n                    backend=backend)\n"),
    # the first argument on the bracket's line: the next one moves up
    "first-visual": (f"opt = torch.compile({MODE},\n                    backend=backend)(model)\n",
                     "opt = torch.compile(backend=backend)(model)\n"),
    # a multi-line value goes whole, with the comment inside it
    "multi-line-value": ('opt = torch.compile(model, mode=(\n    "reduce-overhead"  # aclgraph?\n), backend=backend)\n',
                         "opt = torch.compile(model, backend=backend)\n"),
    "parenthesized": (f"opt = (torch.compile(model, {MODE}, backend=backend))\n",
                      "opt = (torch.compile(model, backend=backend))\n"),
    # a decorator
    "decorator": (f"@torch.compile({MODE}, backend=backend)\ndef step(x):\n    return x\n",
                  "@torch.compile(backend=backend)\ndef step(x):\n    return x\n"),
    # inside a block: the continuation lines keep the block's indentation
    "in-a-block": (f"def build(model):\n    if model:\n        return torch.compile(\n            model,\n"
                   f"            {MODE},\n            backend=backend,\n        )\n",
                   "def build(model):\n    if model:\n        return torch.compile(\n            model,\n"
                   "            backend=backend,\n        )\n"),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_npu208_fix(cli_run, tmp_path, name):
    before, after = CALLS[name]
    assert _fix_twice(cli_run, tmp_path, "NPU208", HEAD + BACKEND + before) == HEAD + BACKEND + after


def test_npu208_fix_in_a_crlf_file(cli_run, tmp_path):
    text = (HEAD + BACKEND + "if True:\n    opt = torch.compile(\n        model,\n"
            f"        {MODE},  # ignored by torchair\n        # the NPU backend\n        backend=backend,\n    )\n"
            ).replace("\n", "\r\n")
    expected = (HEAD + BACKEND + "if True:\n    opt = torch.compile(\n        model,\n"
                "        # the NPU backend\n        backend=backend,\n    )\n").replace("\n", "\r\n")
    assert _fix_twice(cli_run, tmp_path, "NPU208", text) == expected


def test_npu208_fix_in_a_tab_indented_file(cli_run, tmp_path):
    body = ("def build(model):\n"
            "\tconfig = CompilerConfig()\n"
            "\tconfig.mode = \"reduce-overhead\"\n"
            "\tbackend = torchair.get_npu_backend(compiler_config=config)\n"
            "\treturn torch.compile(\n"
            "\t\tmodel,\n"
            "\t\tmode=\"reduce-overhead\",  # ignored\n"
            "\t\t# backend\n"
            "\t\tbackend=backend)\n")
    expected = body.replace("\t\tmode=\"reduce-overhead\",  # ignored\n", "")
    assert _fix_twice(cli_run, tmp_path, "NPU208", HEAD + body) == HEAD + expected


def test_npu208_edit_is_the_change_inside_the_call():
    """The call is written again by LibCST; the edit leaves out what that leaves as it was."""
    text = HEAD + BACKEND + f"opt = (torch.compile(model,\n                     {MODE},\n                     backend=backend))\n"
    (f,) = _findings("NPU208", text)
    (edit,) = f.fix.edits
    assert dataclasses.astuple(edit) == (9, 22, 10, 22, "")
    assert fix_text(text, [f.fix], "python")[0] == \
        HEAD + BACKEND + "opt = (torch.compile(model,\n                     backend=backend))\n"


def test_npu208_comment_after_the_comma_before_the_last_argument_gets_no_fix(cli_run, tmp_path):
    """``backend=backend,  # torchair`` then ``mode=...)``: the comment would have to move."""
    text = HEAD + BACKEND + f"opt = torch.compile(model, backend=backend,  # torchair\n                    {MODE})\n"
    (f,) = _findings("NPU208", text)
    assert f.fix is None
    assert _fix_twice(cli_run, tmp_path, "NPU208", text) == text


# -- NPU202: the line without the statement ----------------------------------------------------

STATEMENTS = {
    # a line of several statements loses its part only; the line's comment stays
    "semicolon-last": (f"a = 1; {REUSE}\n", "a = 1\n"),
    "semicolon-first": (f"{REUSE}; a = 1  # keep\n", "a = 1  # keep\n"),
    "semicolon-middle": (f"a = 1; {REUSE}; b = 2\n", "a = 1; b = 2\n"),
    "semicolon-trailing": (f"a = 1; {REUSE};\n", "a = 1;\n"),
    # a line of its own goes with the comment that ends it; the comment line above stays
    "whole-line": (f"# no reuse\n{REUSE}  # overwritten anyway\n", "# no reuse\n"),
    "multi-line-statement": ("config.debug.aclgraph.disable_mempool_reuse_in_same_fx = (\n    False  # off\n)  # c\n", ""),
    # alone in its block: pass, the comment line above it stays
    "if-block-emptied": (f"if c:\n    # why\n    {REUSE}  # overwritten\n", "if c:\n    # why\n    pass\n"),
    "if-block-not-emptied": (f"if c:\n    x = 1\n    {REUSE}\nelse:\n    x = 2\n", "if c:\n    x = 1\nelse:\n    x = 2\n"),
    "if-block-semicolon": (f"if c:\n    x = 1; {REUSE}  # t\n", "if c:\n    x = 1  # t\n"),
    # after the colon: pass, and the line keeps its comment
    "if-same-line": (f"if c: {REUSE}  # c\n", "if c: pass  # c\n"),
    "if-same-line-semicolon": (f"if c: x = 1; {REUSE}\n", "if c: x = 1\n"),
}


@pytest.mark.parametrize("name", sorted(STATEMENTS))
def test_npu202_fix(cli_run, tmp_path, name):
    before, after = STATEMENTS[name]
    text = HEAD + POOL + before + BACKEND
    assert _fix_twice(cli_run, tmp_path, "NPU202", text) == HEAD + POOL + after + BACKEND


def test_npu202_fix_on_the_last_line_without_a_line_break(cli_run, tmp_path):
    text = HEAD + POOL + BACKEND + "a = 1; " + REUSE
    assert _fix_twice(cli_run, tmp_path, "NPU202", text) == HEAD + POOL + BACKEND + "a = 1"
    text = HEAD + POOL + BACKEND + REUSE
    assert _fix_twice(cli_run, tmp_path, "NPU202", text) == HEAD + POOL + BACKEND


def test_npu202_fix_in_a_crlf_file(cli_run, tmp_path):
    text = (HEAD + POOL + f"if c:\n    # why\n    {REUSE}  # overwritten\nx = 1; {REUSE}\n" + BACKEND).replace("\n", "\r\n")
    expected = (HEAD + POOL + "if c:\n    # why\n    pass\nx = 1\n" + BACKEND).replace("\n", "\r\n")
    assert _fix_twice(cli_run, tmp_path, "NPU202", text) == expected


def test_npu202_fix_in_a_tab_indented_file(cli_run, tmp_path):
    body = ("def build(model):\n"
            "\tconfig = CompilerConfig()\n"
            "\tconfig.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()\n"
            "\tif model:\n"
            f"\t\t{REUSE}\n"
            "\telse:\n"
            f"\t\tx = (1,\n\t\t     2); {REUSE}\n"
            "\treturn torchair.get_npu_backend(compiler_config=config)\n")
    expected = body.replace(f"\t\t{REUSE}\n", "\t\tpass\n").replace(f"; {REUSE}\n", "\n")
    assert _fix_twice(cli_run, tmp_path, "NPU202", HEAD + body) == HEAD + expected


def test_npu202_edits_are_the_changes_inside_the_lines():
    text = HEAD + POOL + f"# why\nif c:\n    {REUSE}  # c\nx = 1; {REUSE}\n{REUSE}\n" + BACKEND
    edits = sorted(dataclasses.astuple(e) for f in _findings("NPU202", text) for e in f.fix.edits)
    assert edits == [
        (10, 5, 10, 72, "pass"),  # the comment ending the line goes with the statement
        (11, 6, 11, 70, ""),
        (12, 1, 13, 1, ""),  # a whole line
    ]
