"""Files npulint cannot or can barely read: syntax errors (NPU001 at the error position, the run
goes on), undecodable bytes and unreadable files (NPU002), coding cookies, BOMs, CRLF, empty
files, binary files, pathological nesting (NPU001, never a crash or a hang)."""

from __future__ import annotations

import json
import os

import pytest

from conftest import parse

IMPORT = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
VIOLATION = (IMPORT + "with npu_weight_prefetch_scope():\n    pass\n"
             "with npu_weight_prefetch_scope(0, 1024):\n    pass\n")  # NPU101 at 4:6
INVALID_ID = IMPORT + "with npu_weight_prefetch_scope(-1):\n    pass\n"  # NPU103 at 2:6
# the prefilter parses a file only when it mentions an API some rule checks
TOKEN = "from npu_bridge.hccl import hccl_ops\n"



@pytest.fixture
def run(cli_run):
    def run(root, args=()):
        r = cli_run(list(args), cwd=root)
        assert r.returncode in (0, 1), (r.returncode, r.stdout, r.stderr)  # never a crash or a signal
        assert "Traceback" not in r.stderr
        return r
    return run


# --------------------------------------------------------------------------- syntax errors


@pytest.mark.parametrize("bad_line, col", [
    ("x = 1 1", 7),  # CPython: invalid syntax at 2:7
    ("x = )", 5),  # CPython: unmatched ')' at 2:5
    ("def f(:\n    pass", 7),  # CPython: invalid syntax at 2:7
])
def test_syntax_error_reported_at_error_position(run, project, bad_line, col):
    root = project({"bad.py": TOKEN + bad_line + "\n"})
    r = run(root, ["bad.py"])
    assert r.returncode == 1
    assert parse(r.stdout) == [("bad.py", 2, col, "NPU001")]


def test_syntax_error_does_not_stop_the_run(run, project):
    root = project({
        "a_bad.py": TOKEN + "x = (1,\ny = 2\n",
        "b_good.py": VIOLATION,
        "c_bad.py": IMPORT + "with npu_weight_prefetch_scope(-1)\n    pass\n",
        "d_good.py": INVALID_ID,
    })
    r = run(root)
    assert r.returncode == 1
    got = parse(r.stdout)
    assert [(p, c) for p, _, _, c in got] == [
        ("a_bad.py", "NPU001"), ("b_good.py", "NPU101"), ("c_bad.py", "NPU001"), ("d_good.py", "NPU103")]
    assert ("b_good.py", 4, 6, "NPU101") in got
    assert ("d_good.py", 2, 6, "NPU103") in got


def test_syntax_error_message_is_one_line(run, project):
    root = project({"bad.py": TOKEN + "x = 1 1\n"})
    r = run(root, ["bad.py"])
    assert len(r.stdout.splitlines()) == 1
    assert "NPU001" in r.stdout


def test_syntax_error_with_crlf(run, project):
    root = project({"bad.py": (TOKEN + "x = 1 1\n").replace("\n", "\r\n").encode()})
    r = run(root, ["bad.py"])
    assert parse(r.stdout) == [("bad.py", 2, 7, "NPU001")]


# --------------------------------------------------------------------------- encodings


def test_undecodable_bytes_give_npu002(run, project):
    root = project({
        "latin.py": b"from npu_bridge.hccl import hccl_ops\ns = \"caf\xe9\"\n",
        "good.py": INVALID_ID,
    })
    r = run(root)
    assert r.returncode == 1
    assert parse(r.stdout) == [("good.py", 2, 6, "NPU103"), ("latin.py", 2, 9, "NPU002")]


# CPython's tokenizer checks UTF-8 in tokens, not in comments: compile(bytes) (what import
# does) accepts these files on 3.9-3.13, so they are linted and keep their findings
GBK = b"\xc4\xe3\xba\xc3"  # two GBK characters: not UTF-8


@pytest.mark.parametrize("head", [b"", b"# -*- coding: utf-8 -*-\n", b"\xef\xbb\xbf", b"# coding=utf_8\n",
                                  b"# " + GBK + b"\n"])
def test_non_utf8_bytes_in_comments_are_read_as_cpython_reads_them(run, project, head):
    body = (IMPORT.encode() + b"with npu_weight_prefetch_scope():  # " + GBK + b"\n    pass\n"
            b"with npu_weight_prefetch_scope(0, 1024):  # \xe9 " + GBK + b"\n    pass\n")
    compile(head + body, "t.py", "exec", 0x400, dont_inherit=True)  # the premise: CPython reads it
    root = project({"gbk.py": head + body})
    r = run(root, ["gbk.py"])
    offset = head.count(b"\n")
    assert parse(r.stdout) == [("gbk.py", 4 + offset, 6, "NPU101")]


def test_non_utf8_comment_columns_and_noqa(run, project):
    # a bad byte is one column; a noqa after it is a real comment and works
    src = (IMPORT.encode() + b"with npu_weight_prefetch_scope():\n    pass\n"
           + b"x = 1  # " + GBK + b"\nwith npu_weight_prefetch_scope(0, 1024):  # \xe9 # noqa: NPU101\n    pass\n"
           + b"z = '\xc3\xa9'\nwith open('\xc3\xa9'), npu_weight_prefetch_scope(-1):  # \xe9\n    pass\n")
    root = project({"c.py": src})
    assert parse(run(root, ["c.py"]).stdout) == [("c.py", 8, 17, "NPU103")]


@pytest.mark.parametrize("data, line, col", [
    # not in a comment: CPython rejects the file
    (TOKEN.encode() + b"s = \"caf\xe9\"  # ok\n", 2, 9),
    (b"# -*- coding: utf-8 -*-\n" + TOKEN.encode() + b"# \xe9\nx\xe9 = 1\n", 4, 2),
    (b"# -*- coding: utf-8 -*-\n" + TOKEN.encode() + b"'''doc \xe9'''\n", 3, 8),
    # a cookie that is not CPython's spelling of UTF-8 decodes the whole file strictly
    (b"# coding: UTF8\n" + TOKEN.encode() + b"x = 1  # \xe9\n", 3, 10),
])
def test_non_utf8_bytes_outside_comments_are_npu002(run, project, data, line, col):
    with pytest.raises(SyntaxError):  # the premise: CPython rejects this file
        compile(data, "t.py", "exec", 0x400, dont_inherit=True)
    root = project({"bad.py": data})
    r = run(root, ["bad.py"])
    assert parse(r.stdout) == [("bad.py", line, col, "NPU002")]


@pytest.mark.parametrize("data, message", [
    # no declaration: the bytes are not UTF-8, nothing declares another encoding
    (b"x = '\xff\xfe'\n" + TOKEN.encode(), "cannot decode as utf-8: invalid start byte (byte 0xff outside a "
                                            "comment) (add a PEP 263 coding declaration or save as UTF-8)"),
    # a declaration CPython cannot use
    (b"# -*- coding: klingon -*-\n" + TOKEN.encode(), "bad encoding declaration: unknown encoding: klingon"),
])
def test_an_undecodable_head_is_blamed_on_a_declaration_only_when_there_is_one(cli_run, project, data, message):
    # a file that declares no encoding is not blamed on a declaration (a binary file named on the
    # command line was "bad encoding declaration")
    root = project({"bad.py": data})
    r = cli_run(["bad.py", "--format", "json"], cwd=root)
    (f,) = json.loads(r.stdout)
    assert (f["code"], f["message"]) == ("NPU002", message)


def test_non_utf8_comment_with_a_syntax_error_is_npu001(run, project):
    root = project({"s.py": TOKEN.encode() + b"# \xe9\nx = (1,\n"})
    r = run(root, ["s.py"])
    assert [c for _, _, _, c in parse(r.stdout)] == ["NPU001"]


def test_non_utf8_comment_full_format_shows_the_line(cli_run, project):
    src = IMPORT.encode() + b"with npu_weight_prefetch_scope(-1):  # \xe9\n    pass\n"
    root = project({"f.py": src})
    r = cli_run(["--format", "full", "f.py"], cwd=root, env={"PYTHONIOENCODING": "utf-8:strict"})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "NPU103" in r.stdout and "# \ufffd" in r.stdout


@pytest.mark.parametrize("cookie", [
    b"# -*- coding: latin-1 -*-\n",
    b"# coding=iso-8859-1\n",
    b"#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\n",
])
def test_coding_cookie_is_honoured(run, project, cookie):
    body = (IMPORT.encode() + b"s = \"caf\xe9\"\n"
            b"with npu_weight_prefetch_scope():\n    pass\n"
            b"with npu_weight_prefetch_scope(0, 1024):\n    pass\n")
    root = project({"cookie.py": cookie + body})
    r = run(root, ["cookie.py"])
    offset = cookie.count(b"\n")
    assert parse(r.stdout) == [("cookie.py", 5 + offset, 6, "NPU101")]


def test_non_ascii_column_with_coding_cookie(run, project):
    src = (b"# -*- coding: latin-1 -*-\n" + IMPORT.encode()
           + b"with npu_weight_prefetch_scope():\n    pass\n"
           b"with open(\"\xe9\xe9\"), npu_weight_prefetch_scope(0, 1024):\n    pass\n")
    root = project({"c.py": src})
    assert parse(run(root, ["c.py"]).stdout) == [("c.py", 5, 18, "NPU101")]


@pytest.mark.parametrize("data", [
    b"# -*- coding: no-such-codec -*-\nfrom npu_bridge.hccl import hccl_ops\n",
    # CPython rejects a BOM together with a cookie naming another encoding
    b"\xef\xbb\xbf# -*- coding: latin-1 -*-\nfrom npu_bridge.hccl import hccl_ops\n",
])
def test_bad_encoding_declaration(run, project, data):
    root = project({"enc.py": data})
    r = run(root, ["enc.py"])
    assert r.returncode == 1
    assert [(p, c) for p, _, _, c in parse(r.stdout)] == [("enc.py", "NPU002")]


def test_utf8_bom(run, project):
    root = project({"bom.py": b"\xef\xbb\xbf" + VIOLATION.encode()})
    r = run(root, ["bom.py"])
    assert parse(r.stdout) == [("bom.py", 4, 6, "NPU101")]


def test_utf8_bom_with_utf8_cookie(run, project):
    root = project({"bom.py": b"\xef\xbb\xbf# -*- coding: utf-8 -*-\n" + VIOLATION.encode()})
    assert parse(run(root, ["bom.py"]).stdout) == [("bom.py", 5, 6, "NPU101")]


def test_utf8_bom_then_skip_file(run, project):
    root = project({"bom.py": b"\xef\xbb\xbf# npulint: skip-file\n" + INVALID_ID.encode()})
    r = run(root, ["bom.py"])
    assert (r.returncode, r.stdout) == (0, "")


def test_crlf_line_endings(run, project):
    root = project({"crlf.py": VIOLATION.replace("\n", "\r\n").encode()})
    r = run(root, ["crlf.py"])
    assert parse(r.stdout) == [("crlf.py", 4, 6, "NPU101")]


def test_crlf_noqa(run, project):
    src = VIOLATION.replace("(0, 1024):", "(0, 1024):  # noqa: NPU101").replace("\n", "\r\n")
    root = project({"crlf.py": src.encode()})
    r = run(root, ["crlf.py"])
    assert (r.returncode, r.stdout) == (0, "")


def test_cr_only_line_endings(run, project):
    root = project({"cr.py": VIOLATION.replace("\n", "\r").encode()})
    assert parse(run(root, ["cr.py"]).stdout) == [("cr.py", 4, 6, "NPU101")]


def test_empty_and_blank_files(run, project):
    root = project({"empty.py": b"", "blank.py": b"\n\n   \n", "comment.py": b"# hccl_ops\n", "bom.py": b"\xef\xbb\xbf"})
    r = run(root)
    assert (r.returncode, r.stdout) == (0, "")
    r = run(root, ["empty.py", "blank.py", "comment.py", "bom.py"])
    assert (r.returncode, r.stdout) == (0, "")


# --------------------------------------------------------------------------- binary and unreadable files


BINARY = b"from npu_bridge.hccl import hccl_ops\x00\x01\x02\xff\xfe"


def test_binary_file_found_by_walk_is_skipped_silently(run, project):
    root = project({"blob.py": BINARY, "good.py": INVALID_ID})
    r = run(root)
    assert parse(r.stdout) == [("good.py", 2, 6, "NPU103")]
    assert "blob" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1  # just the summary


def test_binary_file_named_explicitly_is_npu002(run, project):
    root = project({"blob.py": BINARY, "good.py": INVALID_ID})
    r = run(root, ["blob.py", "good.py"])
    assert r.returncode == 1
    assert parse(r.stdout) == [("blob.py", 1, 1, "NPU002"), ("good.py", 2, 6, "NPU103")]


def test_unreadable_file(run, project):
    root = project({"secret.py": INVALID_ID, "good.py": INVALID_ID})
    target = root / "secret.py"
    target.chmod(0)
    try:
        if os.access(str(target), os.R_OK):
            pytest.skip("running as root (or similar): chmod 000 does not stop reading")
        r = run(root, ["secret.py", "good.py"])
        assert r.returncode == 1
        assert parse(r.stdout) == [("good.py", 2, 6, "NPU103"), ("secret.py", 1, 1, "NPU002")]
        r = run(root)
        assert parse(r.stdout) == [("good.py", 2, 6, "NPU103"), ("secret.py", 1, 1, "NPU002")]
    finally:
        target.chmod(0o644)


# --------------------------------------------------------------------------- pathological nesting


def nested(n: int, open_="(", close=")") -> str:
    return TOKEN + "x = " + open_ * n + "1" + close * n + "\n"


@pytest.mark.parametrize("depth", [201, 250, 1000, 100_000])
def test_deep_parentheses_npu001(run, project, depth):
    root = project({"deep.py": nested(depth), "good.py": INVALID_ID})
    r = run(root)
    assert r.returncode == 1
    # CPython: "too many nested parentheses" at the 201st bracket, 2:205
    assert parse(r.stdout) == [("deep.py", 2, 205, "NPU001"), ("good.py", 2, 6, "NPU103")]


def test_deep_mixed_brackets_npu001(run, project):
    src = TOKEN + "x = " + "[{(" * 400 + "1" + ")}]" * 400 + "\n"
    root = project({"deep.py": src})
    r = run(root, ["deep.py"])
    assert [(p, ln, c) for p, ln, _, c in parse(r.stdout)] == [("deep.py", 2, "NPU001")]


def test_nesting_python_accepts_is_fine(run, project):
    root = project({"ok.py": nested(150), "ok2.py": TOKEN + "x = " + "[" * 199 + "]" * 199 + "\n"})
    r = run(root)
    assert (r.returncode, r.stdout) == (0, "")


def test_brackets_in_strings_and_comments_do_not_count(run, project):
    src = VIOLATION + 's = "' + "(" * 1000 + '"\n' + "# " + "[" * 1000 + "\n" + 't = """' + "{" * 500 + '"""\n'
    root = project({"a.py": src})
    r = run(root, ["a.py"])
    assert parse(r.stdout) == [("a.py", 4, 6, "NPU101")]


def test_deep_indentation(run, project):
    lines = [TOKEN.rstrip("\n")] + [" " * i + "if x:" for i in range(99)] + [" " * 99 + "pass"]
    root = project({"ok.py": "\n".join(lines) + "\n"})
    r = run(root, ["ok.py"])
    assert (r.returncode, r.stdout) == (0, "")
    # CPython: "too many levels of indentation"
    lines = [TOKEN.rstrip("\n")] + [" " * i + "if x:" for i in range(101)] + [" " * 101 + "pass"]
    root = project({"bad.py": "\n".join(lines) + "\n"})
    r = run(root, ["bad.py"])
    assert [(p, c) for p, _, _, c in parse(r.stdout)] == [("bad.py", "NPU001")]


def test_long_operator_chain_does_not_hang(cli_run, project):
    # A 10,000-term sum is too deep for CPython ("maximum recursion depth exceeded during ast
    # construction"), which finds that in milliseconds; npulint must not spend minutes on it.
    root = project({"chain.py": TOKEN + "x = " + "+".join(["1"] * 10_000) + "\n"})
    r = cli_run(["chain.py"], cwd=root, timeout=4)  # more than 4 s fails the test
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr
    assert [(p, c) for p, _, _, c in parse(r.stdout)] in ([], [("chain.py", "NPU001")])


def test_tab_indentation_python_accepts_is_linted_not_a_syntax_error(lint):
    # LibCST's tokenizer rejects this consistent tab+spaces indentation; CPython accepts it
    # (seen in Ascend/torchair). npulint lints the file: NPU010 here, no NPU001.
    src = "from npu_bridge.hccl import hccl_ops\ndef f(w):\n    if w:\n\t    return hccl_ops.allgather(w)\n"
    compile(src, "t.py", "exec")
    found = lint({"t.py": src})
    assert [(f.code, f.line) for f in found] == [("NPU010", 4)]


# --------------------------------------------------------------------------- issue 7's bad-input list


def test_inconsistent_tabs_and_spaces_is_npu001(run, project):
    # CPython: TabError (inconsistent use of tabs and spaces in indentation)
    root = project({"tabs.py": TOKEN + "if True:\n        x = 1\n\ty = 2\n", "good.py": INVALID_ID})
    got = parse(run(root).stdout)
    assert [(p, c) for p, _, _, c in got] == [("good.py", "NPU103"), ("tabs.py", "NPU001")]


@pytest.mark.parametrize("py2", [
    "print 'hello'\n",
    "exec 'x = 1'\n",
    "x = `1`\n",
    "s = ur'abc'\n",
    # (``except E, e:`` is not here: Python 3.14 reads it as ``except (E, e):``, PEP 758)
    "x = 0777\n",
    "raise ValueError, 'no'\n",
])
def test_python2_syntax_is_npu001_and_the_run_goes_on(run, project, py2):
    root = project({"legacy.py": TOKEN + py2, "good.py": INVALID_ID})
    got = parse(run(root).stdout)
    assert ("good.py", 2, 6, "NPU103") in got
    assert [c for p, _, _, c in got if p == "legacy.py"] == ["NPU001"]


# (a line using the syntax, the Python that added it, the start of CPython's message there)
NEWER = [
    ("match command:", (3, 10), "invalid syntax"),
    ("except* ValueError:", (3, 11), "invalid syntax"),
    ("type Cfg = tng.CompilerConfig", (3, 12), "invalid syntax"),
    ("def make[T](x: T) -> T:", (3, 12), "expected '('"),
    ("class Box[T]:", (3, 12), "invalid syntax"),
    ("msg = f\"{names[\"a\"]}\"", (3, 12), "f-string: unmatched '['"),
    ("msg = f\"{", (3, 12), "unterminated string literal (detected at line 2)"),  # a field across lines
    ("def f(*args: *Ts):", (3, 11), "invalid syntax"),
    ("x = table[*idx]", (3, 11), "invalid syntax"),
    ("def make[T = int](x: T) -> T:", (3, 13), "expected '('"),
    ("greeting = t\"hello {name}\"", (3, 14), "invalid syntax"),
    ("except ValueError, TypeError:", (3, 14), "multiple exception types must be parenthesized"),
]


@pytest.mark.parametrize("line, version, msg", NEWER)
def test_a_syntax_error_on_newer_syntax_names_the_python_that_read_it(line, version, msg):
    """Under an older Python the message says which Python read the line (a newer one may
    accept it); under the Python that added the syntax, and for a line without it, CPython's
    message is left as it is."""
    from npulint.analyse import _newer_syntax_hint

    text = TOKEN + line + "\n"
    older = (version[0], version[1] - 1)
    got = _newer_syntax_hint(text, 2, msg, older)
    assert got.startswith(msg + f" (as Python {older[0]}.{older[1]} reads it; ")
    assert got.endswith(f" came with Python {version[0]}.{version[1]}, PEP " + got.rsplit("PEP ", 1)[1])
    assert _newer_syntax_hint(text, 2, msg, version) == msg
    assert _newer_syntax_hint(text, 1, msg, older) == msg  # the error is on another line


@pytest.mark.parametrize("line, msg", [
    ("x = 1 1", "invalid syntax"),
    ("print(f\"{x}\" +)", "invalid syntax"),  # an f-string on the line, an error that is not the f-string's
    ("typed = 1 1", "invalid syntax"),
    ("matches = 1 1", "invalid syntax"),
    ("except ValueError", "expected ':'"),
    ("text = at\"x\"", "invalid syntax"),
    # an f-string or t-string on the line, and an error the newer Python gives as well
    ("x = f'{a!}'", "f-string: invalid conversion character: expected 's', 'r', or 'a'"),
    ("s = t'abc' + 'x' 'y", "unterminated string literal (detected at line 2)"),
])
def test_a_syntax_error_without_newer_syntax_keeps_cpythons_message(line, msg):
    from npulint.analyse import _newer_syntax_hint

    assert _newer_syntax_hint(TOKEN + line + "\n", 2, msg, (3, 9)) == msg


def test_pep_695_and_701_under_the_host_python(run, project):
    """The repro: under a Python older than 3.12 the NPU001 message names it; from 3.12 on the
    files are clean. A plain syntax error's message is CPython's, unchanged."""
    import sys

    root = project({"pep695.py": TOKEN + "type Cfg = int\n", "pep701.py": TOKEN + "m = f\"{d[\"a\"]}\"\n",
                    "plain.py": TOKEN + "x = 1 1\n"})
    got = {f["path"]: f["message"]
           for f in json.loads(run(root, ["--no-cache", "--format", "json", "--select", "NPU001"]).stdout)}
    assert got.pop("plain.py") == "syntax error: invalid syntax"
    here = "%d.%d" % sys.version_info[:2]
    if sys.version_info >= (3, 12):
        assert got == {}
    else:
        assert got == {
            "pep695.py": f"syntax error: invalid syntax (as Python {here} reads it; type parameter lists and "
                         "`type` statements came with Python 3.12, PEP 695)",
            "pep701.py": f"syntax error: f-string: unmatched '[' (as Python {here} reads it; f-strings that "
                         "reuse their quotes, nest or span lines came with Python 3.12, PEP 701)"}


def test_ten_megabyte_generated_file_is_named_not_parsed(run, project):
    row = "    npu_weight_prefetch_scope(%d, 1024),\n"
    body = "".join(row % i for i in range(230_000))  # about 10 MB that mentions the API
    root = project({"generated.py": IMPORT + "SCOPES = [\n" + body + "]\n", "good.py": INVALID_ID})
    assert os.path.getsize(str(root / "generated.py")) > 10_000_000
    r = run(root)
    assert parse(r.stdout) == [("good.py", 2, 6, "NPU103")]
    assert "generated.py: not analysed" in r.stderr and "9.8 MB" in r.stderr


def test_symlink_loop_in_the_tree_still_lints_the_rest(run, project):
    root = project({"pkg/a.py": INVALID_ID, "b.py": INVALID_ID})
    try:
        os.symlink(str(root / "pkg"), str(root / "pkg" / "loop"))
        os.symlink(str(root / "self.py"), str(root / "self.py.tmp"))
        os.symlink(str(root / "self.py.tmp"), str(root / "self.py"))  # a file symlink loop
    except (OSError, NotImplementedError):  # pragma: no cover
        pytest.skip("symlinks not supported")
    r = run(root)
    got = parse(r.stdout)
    assert ("b.py", 2, 6, "NPU103") in got and (os.path.join("pkg", "a.py"), 2, 6, "NPU103") in got
    assert [c for p, _, _, c in got if p == "self.py"] in ([], ["NPU002"])


def test_file_deleted_during_the_run_is_npu002(tmp_path, monkeypatch):
    from npulint import pipeline, registry
    from npulint.config import Settings, enabled_codes

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(INVALID_ID)
    (tmp_path / "gone.py").write_text(INVALID_ID)
    rules, checkers = registry.load()
    files = [(str(tmp_path / "a.py"), "python", False), (str(tmp_path / "gone.py"), "python", False)]
    (tmp_path / "gone.py").unlink()  # after discovery, before reading
    result = pipeline.run(files, Settings(root=str(tmp_path)), checkers, enabled_codes(rules, None, [], []))
    got = [(f.path, f.code) for f in result.findings]
    assert got == [("a.py", "NPU103"), ("gone.py", "NPU002")]
    assert "No such file" in result.findings[1].message


@pytest.mark.parametrize("script", [
    "#!/bin/bash\necho \"unbalanced\npython train.py --npu 'x\n",
    "#!/bin/bash\ncat <<EOF\n" + "line with $HOME and 'quotes\n" * 200_000 + "EOF\npython run.py\n",
    "#!/bin/bash\ncat <<EOF\nnever closed\n" * 3,
], ids=["unbalanced-quotes", "huge-heredoc", "unclosed-heredocs"])
def test_shell_scripts_with_bad_quoting_or_huge_heredocs(run, project, script):
    root = project({"run.sh": script, "good.py": INVALID_ID})
    r = run(root)
    got = parse(r.stdout)
    assert ("good.py", 2, 6, "NPU103") in got
    assert all(c in ("NPU001",) or c.startswith("NPU5") for p, _, _, c in got if p == "run.sh")


def test_nul_bytes_in_the_middle_of_a_file(run, project):
    root = project({"nul.py": TOKEN.encode() + b"x = 1\x00\ny = 2\n", "good.py": INVALID_ID})
    r = run(root, ["nul.py", "good.py"])
    assert parse(r.stdout) == [("good.py", 2, 6, "NPU103"), ("nul.py", 2, 1, "NPU002")]
