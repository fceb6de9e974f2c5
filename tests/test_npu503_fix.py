"""NPU503's automatic fix: ``X.apply(args)`` becomes ``adapt_mem_func_wrapper(X, args)``, a LibCST
node rendered by LibCST (the old arguments' nodes, their whitespace and comments kept), and the
import is added. Each case goes through ``--fix`` (the fixed-point loop, the parse check), checks
the whole file, that it compiles, and that a second ``--fix`` changes nothing."""

from __future__ import annotations

import pytest

from npulint.model import Edit

AMO = "torchrun pretrain_gpt.py --adaptive-memory-optimization\n"
IMPORT = "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper\n"
HEAD = """\
import torch


class Fn(torch.autograd.Function):
    pass


class ALongerNamedFunction(torch.autograd.Function):
    pass


class Layer(torch.nn.Module):
    def forward(self, x, xs, kw):
"""
FIXED_HEAD = HEAD.replace("import torch\n", "import torch\n" + IMPORT, 1)


def _fix_twice(cli_run, project, text: str) -> str:
    root = project({"model.py": text, "run.sh": AMO})
    cli_run(["--select", "NPU503", "--fix", "--unsafe-fixes", "--no-cache", "."], cwd=root)
    fixed = (root / "model.py").read_text()
    compile(fixed, "model.py", "exec")
    cli_run(["--select", "NPU503", "--fix", "--unsafe-fixes", "--no-cache", "."], cwd=root)
    assert (root / "model.py").read_text() == fixed  # a second run changes nothing
    return fixed


CASES = {
    # hanging indent: Fn goes first on the arguments' line, which keeps its indentation
    "hanging": ("""\
        y = Fn.apply(
            x, x)
        return y
""", """\
        y = adapt_mem_func_wrapper(
            Fn, x, x)
        return y
"""),
    # one argument per line: Fn gets a line of its own
    "one-per-line": ("""\
        return Fn.apply(
            x,
            xs,
        )
""", """\
        return adapt_mem_func_wrapper(
            Fn,
            x,
            xs,
        )
"""),
    # visual indent: the lines aligned with the arguments move with the bracket (14 columns),
    # nested alignment, a comment after an argument and a comment line included
    "visual": ("""\
        return Fn.apply(x,  # first
                        max(x,
                            xs),
                        # a comment line
                        kw)
""", """\
        return adapt_mem_func_wrapper(Fn, x,  # first
                                      max(x,
                                          xs),
                                      # a comment line
                                      kw)
"""),
    # a longer name than the wrapper's: the bracket, and the aligned lines, move left
    "visual-left": ("""\
        return ALongerNamedFunction.apply(x,
                                          xs)
""", """\
        return adapt_mem_func_wrapper(ALongerNamedFunction, x,
                                      xs)
"""),
    # a line indented less than the arguments is not aligned with them: it stays
    "visual-closing-bracket": ("""\
        return Fn.apply(x,
                        xs,
        )
""", """\
        return adapt_mem_func_wrapper(Fn, x,
                                      xs,
        )
"""),
    # the arguments' line would be longer than 79 characters with `Fn, ` in front: Fn gets its own
    "hanging-long-line": ("""\
        return Fn.apply(
            x, xs, kw, x, xs, kw, x, xs, kw, x, xs, kw, x, xs, kw, x, xs, kw,
        )
""", """\
        return adapt_mem_func_wrapper(
            Fn,
            x, xs, kw, x, xs, kw, x, xs, kw, x, xs, kw, x, xs, kw, x, xs, kw,
        )
"""),
    # a comment after the opening bracket stays there (not `Fn, # why`)
    "comment-after-bracket": ("""\
        return Fn.apply(  # why
            x)
""", """\
        return adapt_mem_func_wrapper(  # why
            Fn, x)
"""),
    # a bare generator argument needs its own parentheses once it is not the only argument
    "generator": ("        return Fn.apply(t for t in xs)\n",
                  "        return adapt_mem_func_wrapper(Fn, (t for t in xs))\n"),
    "star-args": ("        return Fn.apply(x, *xs)\n", "        return adapt_mem_func_wrapper(Fn, x, *xs)\n"),
    "no-args": ("        return Fn.apply()\n", "        return adapt_mem_func_wrapper(Fn)\n"),
    "trailing-comma": ("        return Fn.apply(x,)\n", "        return adapt_mem_func_wrapper(Fn, x,)\n"),
    "parenthesized": ("        return (Fn.apply(x))\n", "        return (adapt_mem_func_wrapper(Fn, x))\n"),
    # nested calls: the inner one is fixed in the loop's next round
    "nested": ("        return Fn.apply(Fn.apply(x), xs)\n",
               "        return adapt_mem_func_wrapper(Fn, adapt_mem_func_wrapper(Fn, x), xs)\n"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fix_output(cli_run, project, name):
    body, expected = CASES[name]
    assert _fix_twice(cli_run, project, HEAD + body) == FIXED_HEAD + expected


@pytest.mark.parametrize("call", ["Fn.apply(x, y=xs)", "Fn.apply(**kw)", "Fn.apply(x, *xs, **kw)"])
def test_keyword_arguments_get_no_fix(lint, cli_run, project, call):
    """The wrapper takes no keyword arguments (NPU505): the finding stays, without a fix."""
    text = HEAD + f"        return {call}\n"
    found = lint({"model.py": text, "run.sh": AMO}, select=["NPU503"])
    assert [f.code for f in found] == ["NPU503"] and found[0].fix is None
    root = project({"model.py": text, "run.sh": AMO})
    cli_run(["--select", "NPU503", "--fix", "--unsafe-fixes", "--no-cache", "."], cwd=root)
    assert (root / "model.py").read_text() == text


def test_tab_indented_file_keeps_its_tabs(cli_run, project):
    src = ("import torch\n\n\nclass Fn(torch.autograd.Function):\n\tpass\n\n\n"
           "class Layer(torch.nn.Module):\n\tdef forward(self, x):\n\t\treturn Fn.apply(\n\t\t\tx)\n")
    assert _fix_twice(cli_run, project, src) == src.replace("import torch\n", "import torch\n" + IMPORT, 1).replace(
        "\t\treturn Fn.apply(\n\t\t\tx)", "\t\treturn adapt_mem_func_wrapper(\n\t\t\tFn, x)")


def test_the_edit_replaces_exactly_the_call(lint):
    text = HEAD + "        return (Fn.apply(x,\n                         xs)) + 1\n"
    found = lint({"model.py": text, "run.sh": AMO}, select=["NPU503"])
    f = found[0]
    call_edit = f.fix.edits[-1]
    assert (call_edit.line, call_edit.column, call_edit.end_line, call_edit.end_column) == \
        (f.line, f.column, f.end_line, f.end_column) == (14, 17, 15, 29)
    assert call_edit == Edit(14, 17, 15, 29, "adapt_mem_func_wrapper(Fn, x,\n                                       xs)")


MODULE = "mindspeed.core.memory.adaptive_memory.adaptive_memory_function"
BODY, FIXED_BODY = "        return Fn.apply(x)\n", "        return adapt_mem_func_wrapper(Fn, x)\n"


def test_the_import_joins_a_from_import_of_the_wrappers_module(cli_run, project):
    head = HEAD.replace("import torch\n", f"import torch\nfrom {MODULE} import FunctionCtxMgr  # the context\n", 1)
    assert _fix_twice(cli_run, project, head + BODY) == head.replace(
        "import FunctionCtxMgr", "import adapt_mem_func_wrapper, FunctionCtxMgr") + FIXED_BODY


def test_the_import_joins_a_parenthesized_from_import(cli_run, project):
    head = HEAD.replace("import torch\n", f"import torch\nfrom {MODULE} import (\n    FunctionCtxMgr,\n)\n", 1)
    assert _fix_twice(cli_run, project, head + BODY) == head.replace(
        "    FunctionCtxMgr,", "    adapt_mem_func_wrapper, FunctionCtxMgr,") + FIXED_BODY


def test_a_relative_import_of_the_wrappers_module_is_not_joined(cli_run, project):
    head = HEAD.replace("import torch\n", "import torch\nfrom .adaptive_memory_function import FunctionCtxMgr\n", 1)
    assert _fix_twice(cli_run, project, head + BODY) == head.replace(
        "FunctionCtxMgr\n", "FunctionCtxMgr\n" + IMPORT, 1) + FIXED_BODY


def test_the_import_follows_the_docstring_future_imports_and_comments(cli_run, project):
    top = ('#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"""The model."""\n# the imports\n'
           "from __future__ import annotations\n\nimport torch  # the framework\n# the Functions\n")
    head = HEAD.replace("import torch\n", top, 1)
    # after the last import, before the comment above the first class (an empty line between)
    assert _fix_twice(cli_run, project, head + BODY) == head.replace(
        "import torch  # the framework\n", "import torch  # the framework\n" + IMPORT + "\n", 1) + FIXED_BODY


def test_an_import_already_there_is_not_added_again(cli_run, project):
    head = HEAD.replace("import torch\n", "import torch\n" + IMPORT, 1)
    assert _fix_twice(cli_run, project, head + BODY) == head + FIXED_BODY


@pytest.mark.parametrize("other", [
    "adapt_mem_func_wrapper = None\n",  # the name bound to something else: no fix
    f"from {MODULE} import adapt_mem_func_wrapper as w\nadapt_mem_func_wrapper = w\n",
])
def test_no_fix_where_the_name_is_taken(lint, other):
    text = HEAD.replace("class Fn", other + "\n\nclass Fn", 1) + BODY
    found = lint({"model.py": text, "run.sh": AMO}, select=["NPU503"])
    assert [f.code for f in found] == ["NPU503"] and found[0].fix is None


def test_no_fix_where_libcst_would_write_the_import_line_otherwise(lint):
    """The from-import to join ends with ``\\r\\n`` in a ``\\n`` file: the edit cannot be
    made as LibCST writes it, so there is no fix (never one without its import)."""
    text = HEAD.replace("import torch\n", f"import torch\nfrom {MODULE} import FunctionCtxMgr\r\n", 1) + BODY
    found = lint({"model.py": text, "run.sh": AMO}, select=["NPU503"])
    assert [f.code for f in found] == ["NPU503"] and found[0].fix is None
