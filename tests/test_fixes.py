"""The fix mechanism: applying edits, the parse check, atomic writes that keep encoding,
newlines and mode; ``--fix``, ``--fix-only``, ``--diff``; the fixes of NPU202, NPU208 and
NPU003; the engine's edit helpers."""

from __future__ import annotations

import os
import stat
import textwrap

import libcst as cst
import pytest

from npulint import fixes as fx
from npulint.checker import FileContext
from npulint.config import Settings
from npulint.model import Edit, Fix


HEAD = textwrap.dedent("""\
    import torch
    import torchair
    from torchair.configs.compiler_config import CompilerConfig

    config = CompilerConfig()
    config.mode = "reduce-overhead"
    """)
POOL = "config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()\n"
REUSE = "config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False\n"
BACKEND = "backend = torchair.get_npu_backend(compiler_config=config)\n"
COMPILE_RO = 'opt = torch.compile(model, backend=backend, mode="reduce-overhead")\n'

BOTH = HEAD + POOL + REUSE + BACKEND + COMPILE_RO
FIXED = HEAD + POOL + BACKEND + "opt = torch.compile(model, backend=backend)\n"


def _fix(text, *edits, description="d"):
    return Fix(description, tuple(Edit(*e) for e in edits))


# -- applying edits ---------------------------------------------------------------------

def test_apply_replaces_and_inserts():
    text = "a = 1\nb = 2\n"
    new, applied = fx.apply_fixes(text, [_fix(text, (1, 5, 1, 6, "10")), _fix(text, (3, 1, 3, 1, "c = 3\n"))])
    assert new == "a = 10\nb = 2\nc = 3\n"
    assert len(applied) == 2


def test_overlapping_fix_waits_for_the_next_round():
    text = "abcdef\n"
    first = _fix(text, (1, 1, 1, 4, "X"))
    second = _fix(text, (1, 3, 1, 5, "Y"))
    new, applied = fx.apply_fixes(text, [second, first])
    assert applied == [first]
    assert new == "Xdef\n"


def test_a_fix_is_applied_whole_or_not_at_all():
    text = "abcdef\n"
    first = _fix(text, (1, 1, 1, 2, "X"))
    second = _fix(text, (1, 5, 1, 6, "Y"), (1, 1, 1, 2, "Z"))  # second edit clashes with the first fix
    new, applied = fx.apply_fixes(text, [first, second])
    assert applied == [first] and new == "Xbcdef\n"


def test_identical_edits_are_shared():
    """Two rewrites in one file that each add the same import add it once."""
    text = "x = f(a)\ny = f(b)\n"
    imp = (1, 1, 1, 1, "from m import g\n")
    new, applied = fx.apply_fixes(text, [_fix(text, (1, 5, 1, 6, "g"), imp), _fix(text, (2, 5, 2, 6, "g"), imp)])
    assert len(applied) == 2
    assert new == "from m import g\nx = g(a)\ny = g(b)\n"


def test_two_different_insertions_at_one_point_are_not_both_taken():
    text = "x = 1\n"
    new, applied = fx.apply_fixes(text, [_fix(text, (1, 1, 1, 1, "a\n")), _fix(text, (1, 1, 1, 1, "b\n"))])
    assert len(applied) == 1


def test_edit_newlines_follow_the_file():
    text = "a = 1\r\nb = 2\r\n"
    new, _ = fx.apply_fixes(text, [_fix(text, (2, 1, 2, 1, "import os\n"))])
    assert new == "a = 1\r\nimport os\r\nb = 2\r\n"


def test_edit_to_the_end_of_a_file_without_final_newline():
    text = "a = 1\nb = 2"
    new, applied = fx.apply_fixes(text, [_fix(text, (2, 1, 3, 1, ""))])
    assert applied and new == "a = 1\n"


def test_edit_outside_the_text_is_dropped():
    text = "a = 1\n"
    new, applied = fx.apply_fixes(text, [_fix(text, (9, 1, 9, 2, "x")), _fix(text, (1, 40, 1, 41, "x"))])
    assert new == text and applied == []


def test_fix_that_breaks_the_file_is_not_applied():
    text = "if x:\n    y = 1\n"
    bad = _fix(text, (2, 1, 3, 1, ""))  # empties the block
    good = _fix(text, (1, 4, 1, 5, "z"))
    new, applied = fx.fix_text(text, [bad], "python")
    assert new == text and applied == []
    new, applied = fx.fix_text(text, [bad, good], "python")
    assert applied == [good] and fx.parses(new, "python")


def test_encode_like_keeps_bom_and_cookie():
    assert fx.encode_like(b"\xef\xbb\xbfx = 1\n", "x = 2\n", "python") == b"\xef\xbb\xbfx = 2\n"
    latin = b"# -*- coding: latin-1 -*-\ns = '\xe9'\n"
    assert fx.encode_like(latin, "# -*- coding: latin-1 -*-\ns = '\xe9t\xe9'\n", "python") == \
        b"# -*- coding: latin-1 -*-\ns = '\xe9t\xe9'\n"
    assert fx.encode_like(b"\xef\xbb\xbfecho\n", "echo hi\n", "shell") == b"\xef\xbb\xbfecho hi\n"


def test_write_atomic_keeps_mode_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "t.py"
    p.write_bytes(b"x = 1\n")
    os.chmod(p, 0o640)
    fx.write_atomic(str(p), b"x = 2\n")
    assert p.read_bytes() == b"x = 2\n"
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert [f.name for f in tmp_path.iterdir()] == ["t.py"]


# -- the engine's edit helpers ----------------------------------------------------------

def _ctx(text):
    module = cst.parse_module(text)
    return FileContext("/nowhere/t.py", "t.py", text, module, Settings(root="/nowhere"), set()), module


# (text, the text with ``from m import g`` added): where LibCST's AddImportsVisitor puts it
IMPORTS = [
    ("import os\n\nx = 1\n", "import os\nfrom m import g\n\nx = 1\n"),
    # an empty line before the next statement unless one is there
    ('"""Doc."""\nx = 1\n', '"""Doc."""\nfrom m import g\n\nx = 1\n'),
    ("from __future__ import annotations\n# about x\nx = 1\n",
     "from __future__ import annotations\nfrom m import g\n\n# about x\nx = 1\n"),
    ("import os\n", "import os\nfrom m import g\n"),
    ("import os", "import os\nfrom m import g"),  # the file keeps its missing last line break
    ("", "from m import g"),
    ('"""Doc."""\n', '"""Doc."""\nfrom m import g\n'),
    ("__strict__ = True\nx = 1\n", "__strict__ = True\nfrom m import g\n\nx = 1\n"),
    # the shebang and coding lines (the module's header) stay first
    ("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nx = 1\n",
     "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nfrom m import g\n\nx = 1\n"),
    # before the comment lines and the decorators of the next statement, not between them
    ("import os\n\n# c\n@dec\nclass A:\n    pass\n",
     "import os\nfrom m import g\n\n# c\n@dec\nclass A:\n    pass\n"),
    ("import os\n@dec\ndef f():\n    pass\n", "import os\nfrom m import g\n\n@dec\ndef f():\n    pass\n"),
    # comments between and after the imports stay where they are
    ("# head\n\nimport os  # os\n# between\nimport sys\n# after\nx = 1\n",
     "# head\n\nimport os  # os\n# between\nimport sys\nfrom m import g\n\n# after\nx = 1\n"),
    ("import os\n# end\n", "import os\nfrom m import g\n# end\n"),
    # the name joins the block's first from-import of the module
    ("from m import a\nx = 1\n", "from m import g, a\nx = 1\n"),
    ("import os\nfrom m import a  # why\nfrom m import b\n", "import os\nfrom m import g, a  # why\nfrom m import b\n"),
    ("from m import (\n    a,\n    b,\n)\nx = 1\n", "from m import (\n    g, a,\n    b,\n)\nx = 1\n"),
    ("from m import a as g\n", "from m import g, a as g\n"),
    # not into a relative import, nor into one after the block
    ("from .m import a\nx = 1\nfrom m import b\n", "from .m import a\nfrom m import g\n\nx = 1\nfrom m import b\n"),
    # a line of several statements ends the block (here, before it starts)
    ("import os; import sys\nx = 1\n", "from m import g\n\nimport os; import sys\nx = 1\n"),
    ("x = 1\r\ny = 2\r\n", "from m import g\r\n\r\nx = 1\r\ny = 2\r\n"),
    # a concatenated string is not a docstring to LibCST
    ('"a" "b"\nx = 1\n', 'from m import g\n\n"a" "b"\nx = 1\n'),
    # imported already: nothing to add
    ("from m import g\nx = g\n", "from m import g\nx = g\n"),
    ("import os\nfrom m import a, g\n", "import os\nfrom m import a, g\n"),
    ("from m import *\n", "from m import *\n"),
]


@pytest.mark.parametrize("text, expected", IMPORTS)
def test_import_edits(text, expected):
    ctx, _ = _ctx(text)
    edits = ctx.import_edits("m", "g")
    new, _ = fx.apply_fixes(text, [Fix("i", edits)]) if edits else (text, [])
    assert new == expected


@pytest.mark.parametrize("text, expected", IMPORTS)
def test_the_expected_placements_are_what_libcst_s_add_imports_visitor_writes(text, expected):
    """The spec of the placement: the module AddImportsVisitor writes is the expected text."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, ImportItem

    assert cst.parse_module(text).visit(AddImportsVisitor(CodemodContext(), [ImportItem("m", "g")])).code == expected


def test_import_edits_are_minimal():
    assert _ctx("import os\n\nx = 1\n")[0].import_edits("m", "g") == (Edit(2, 1, 2, 1, "from m import g\n"),)
    assert _ctx('"""Doc."""\nx = 1\n')[0].import_edits("m", "g") == (Edit(2, 1, 2, 1, "from m import g\n\n"),)
    assert _ctx("import os\nfrom m import (\n    a,\n)\n")[0].import_edits("m", "g") == (Edit(3, 5, 3, 5, "g, "),)
    assert _ctx("import os")[0].import_edits("m", "g") == (Edit(1, 10, 1, 10, "\nfrom m import g"),)


def test_import_edits_when_imported_already():
    assert _ctx("from m import g\nx = g\n")[0].import_edits("m", "g") == ()
    assert _ctx("from m import g as h\n")[0].import_edits("m", "g")
    assert _ctx("x = 1\nfrom m import g\n")[0].import_edits("m", "g")  # after the block: LibCST adds it again
    assert _ctx("from .m import g\n")[0].import_edits("m", "g")


def test_import_edits_none_where_libcst_writes_another_line_break():
    """The from-import to join ends with a line break other than the file's: no edit (the
    rule then gives no fix), never the () of an import already there."""
    assert _ctx("import os\nfrom m import a\r\nx = 1\n")[0].import_edits("m", "g") is None


@pytest.mark.parametrize("text, index, expected", [
    ("f(a, b=1, c=2)\n", 1, "f(a, c=2)\n"),
    ("f(a, b=1, c=2)\n", 2, "f(a, b=1)\n"),
    ("f(a,\n  b=1,\n)\n", 1, "f(a,\n)\n"),
    ("f(b=1)\n", 0, "f()\n"),
])
def test_remove_arg(text, index, expected):
    ctx, module = _ctx(text)
    call = module.body[0].body[0].value
    edit = ctx.remove_arg(call, call.args[index])
    new, _ = fx.apply_fixes(text, [Fix("r", (edit,))])
    assert new == expected
    assert fx.parses(new, "python")


def test_remove_arg_keeps_a_comment_before_the_last_argument():
    ctx, module = _ctx("f(a,  # why a\n  b=1)\n")
    call = module.body[0].body[0].value
    assert ctx.remove_arg(call, call.args[1]) is None
    ctx, module = _ctx("f(a,\n  b=1)  # why b\n")
    call = module.body[0].body[0].value
    new, _ = fx.apply_fixes(ctx.text, [Fix("r", (ctx.remove_arg(call, call.args[1]),))])
    assert new == "f(a)  # why b\n"


def test_remove_statement_keeps_comments_and_blocks():
    text = "# head\nx = 1  # why\ny = 2\nif c:\n    z = 3\n"
    ctx, module = _ctx(text)
    x = module.body[0].body[0]
    z = module.body[2].body.body[0].body[0]
    new, _ = fx.apply_fixes(text, [Fix("a", (ctx.remove_statement(x),)), Fix("b", (ctx.remove_statement(z),))])
    assert new == "# head\ny = 2\nif c:\n    pass\n"


# -- the CLI ----------------------------------------------------------------------------

def test_fix_applies_and_a_second_run_finds_nothing(tmp_path, cli_run):
    p = tmp_path / "t.py"
    p.write_text(BOTH, encoding="utf-8")
    r = cli_run(["--fix", "t.py"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert p.read_text(encoding="utf-8") == FIXED
    assert "Fixed 2 findings in 1 file." in r.stderr
    r = cli_run(["--fix", "t.py"], tmp_path)
    assert r.returncode == 0 and "Fixed" not in r.stderr
    assert p.read_text(encoding="utf-8") == FIXED


def test_fix_reports_what_it_cannot_fix(tmp_path, cli_run):
    # the config's mode is max-autotune: dropping mode="reduce-overhead" would hide the user's intent
    text = HEAD.replace('config.mode = "reduce-overhead"\n', "") + BACKEND + COMPILE_RO
    p = tmp_path / "t.py"
    p.write_text(text, encoding="utf-8")
    r = cli_run(["--fix", "t.py"], tmp_path)
    assert r.returncode == 1
    assert "NPU208" in r.stdout
    assert p.read_text(encoding="utf-8") == text


def test_fix_keeps_crlf_bom_cookie_and_mode(tmp_path, cli_run):
    p = tmp_path / "t.py"
    body = ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + BOTH).replace("\n", "\r\n")
    p.write_bytes(body.encode("latin-1"))
    os.chmod(p, 0o600)
    r = cli_run(["--fix", "t.py"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert p.read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXED).replace("\n", "\r\n").encode("latin-1")
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    q = tmp_path / "u.py"
    q.write_bytes(b"\xef\xbb\xbf" + BOTH.encode())
    assert cli_run(["--fix", "u.py"], tmp_path).returncode == 0
    assert q.read_bytes() == b"\xef\xbb\xbf" + FIXED.encode()


def test_diff_writes_nothing(tmp_path, cli_run):
    p = tmp_path / "t.py"
    p.write_text(BOTH, encoding="utf-8")
    r = cli_run(["--diff", "t.py"], tmp_path)
    assert r.returncode == 1
    assert r.stdout.startswith("--- a/t.py\n+++ b/t.py\n")
    assert "-config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False\n" in r.stdout
    assert '+opt = torch.compile(model, backend=backend)\n' in r.stdout
    assert p.read_text(encoding="utf-8") == BOTH
    p.write_text(FIXED, encoding="utf-8")
    r = cli_run(["--diff", "t.py"], tmp_path)
    assert r.returncode == 0 and r.stdout == ""


def test_fix_only_reports_nothing_else(tmp_path, cli_run):
    text = BOTH + "import torchair as tng\nwith tng.scope.npu_stream_switch('1', 2):\n    pass\n"
    p = tmp_path / "t.py"
    p.write_text(text, encoding="utf-8")
    r = cli_run(["--fix-only", "t.py"], tmp_path)
    assert r.returncode == 0
    assert r.stdout == ""
    assert "NPU304" not in p.read_text(encoding="utf-8") and "npu_stream_switch('1', 2)" in p.read_text()
    r = cli_run(["t.py"], tmp_path)
    assert r.returncode == 1 and "NPU304" in r.stdout and "NPU208" not in r.stdout


def test_fix_from_stdin_prints_the_fixed_source(tmp_path, cli_run):
    r = cli_run(["--fix", "--stdin-filename", "t.py", "-"], tmp_path, stdin=BOTH)
    assert r.returncode == 0, r.stderr
    assert r.stdout == FIXED
    assert not (tmp_path / "t.py").exists()
    r = cli_run(["--fix", "-"], tmp_path, stdin="x = 1\n")
    assert r.stdout == "x = 1\n"


def test_fix_leaves_files_it_cannot_fix_alone(tmp_path, cli_run):
    (tmp_path / "clean.py").write_text("x = 1\n", encoding="utf-8")
    before = os.stat(tmp_path / "clean.py").st_mtime_ns
    (tmp_path / "t.py").write_text(BOTH, encoding="utf-8")
    assert cli_run(["--fix", "."], tmp_path).returncode == 0
    assert os.stat(tmp_path / "clean.py").st_mtime_ns == before


# -- NPU003 -----------------------------------------------------------------------------

NOQA = textwrap.dedent("""\
    import torchair as tng
    x = 1  # noqa: NPU304
    y = 2  # noqa: NPU304, E501 reason
    with tng.scope.npu_stream_switch("1", 2):  # noqa: NPU304,NPU101
        pass
    with tng.scope.npu_stream_switch("2", 2):  # noqa: NPU3
        pass
    z = 3  # noqa
    w = 4  # noqa: E501
    """)


def test_unused_noqa_is_off_by_default(lint):
    assert lint(NOQA) == []


def test_unused_noqa(lint):
    found = lint(NOQA, select=["NPU"])
    assert [(f.code, f.line, f.column) for f in found] == [("NPU003", 2, 8), ("NPU003", 3, 8), ("NPU003", 4, 44)]
    assert "NPU101 suppressed nothing" in found[2].message


def test_unused_noqa_only_for_enabled_codes(lint):
    assert [f.line for f in lint(NOQA, select=["NPU003", "NPU304"])] == [2, 3]


def test_unused_noqa_in_a_file_the_prefilter_skips(lint):
    assert [f.line for f in lint("x = 1  # noqa: NPU101\n", select=["NPU"])] == [1]


def test_unused_noqa_respects_per_file_ignores(lint):
    cfg = '[tool.npulint]\nextend-select = ["NPU003"]\n[tool.npulint.per-file-ignores]\n"t.py" = ["NPU003"]\n'
    assert lint(NOQA, config=cfg) == []


def test_unused_noqa_fix(tmp_path, cli_run):
    p = tmp_path / "t.py"
    p.write_text(NOQA, encoding="utf-8")
    r = cli_run(["--fix", "--extend-select", "NPU003", "t.py"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert p.read_text(encoding="utf-8") == NOQA.replace("x = 1  # noqa: NPU304", "x = 1").replace(
        "# noqa: NPU304, E501 reason", "# noqa: E501 reason").replace("# noqa: NPU304,NPU101", "# noqa: NPU304")
    assert cli_run(["--extend-select", "NPU003", "t.py"], tmp_path).returncode == 0


def test_unused_noqa_fix_keeps_the_rest_of_the_comment(tmp_path, cli_run):
    p = tmp_path / "t.sh"
    p.write_text("echo hi  # noqa: NPU101 -- kept\n", encoding="utf-8")
    r = cli_run(["--fix", "--extend-select", "NPU003", "t.sh"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert p.read_text(encoding="utf-8") == "echo hi  # -- kept\n"


def test_unused_noqa_fix_drops_the_directive_and_its_separator_where_another_comment_is_there(tmp_path, cli_run):
    # what ruff's RUF100 leaves: the other comment, without a stray '#'
    src = ("a = 1  # noqa: NPU304  # why: legacy\n"
           "b = 2  # type: ignore  # noqa: NPU304\n"
           "c = 3  # pylint: disable=x # noqa:NPU304\n"
           "d = 4  # noqa: NPU304 -- reason\n")
    p = tmp_path / "t.py"
    p.write_text(src, encoding="utf-8")
    r = cli_run(["--fix", "--extend-select", "NPU003", "t.py"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert p.read_text(encoding="utf-8") == ("a = 1  # why: legacy\n"
                                             "b = 2  # type: ignore\n"
                                             "c = 3  # pylint: disable=x\n"
                                             "d = 4  # -- reason\n")


@pytest.mark.parametrize("src, fixed", [
    # bash reads the CR of a CRLF line as part of its comment: it goes with the comment, or the
    # line would end in a word bash runs (`$'\r': command not found`), or a flag would carry it
    ("set -e\n# noqa: NPU502\r\ntorchrun pretrain_gpt.py --bf16\n", "set -e\n\ntorchrun pretrain_gpt.py --bf16\n"),
    ("torchrun pretrain_gpt.py --bf16 # noqa: NPU504\r\necho done\n", "torchrun pretrain_gpt.py --bf16\necho done\n"),
    ("torchrun pretrain_gpt.py --bf16 # note # noqa: NPU504\r\necho done\n",
     "torchrun pretrain_gpt.py --bf16 # note\necho done\n"),
    # a CR the comment keeps stays inside it
    ("torchrun pretrain_gpt.py --bf16 # noqa: NPU504 because\r\necho done\n",
     "torchrun pretrain_gpt.py --bf16 # because\r\necho done\n"),
])
def test_unused_noqa_fix_in_a_shell_line_ending_in_a_carriage_return(tmp_path, cli_run, src, fixed):
    p = tmp_path / "t.sh"
    p.write_bytes(src.encode())
    r = cli_run(["--fix", "--select", "NPU0,NPU5", "t.sh"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert p.read_bytes() == fixed.encode()
