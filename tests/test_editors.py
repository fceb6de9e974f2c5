"""Editor integration: the text format as editors parse it, and standard input.

* The VS Code problem matcher and the Vim/Neovim ``errorformat`` documented in README's
  "Editors" section are read from the README itself and applied to real ``npulint`` output,
  so the documentation cannot drift from the format.
* ``-`` with ``--stdin-filename``: a relative path in a subfolder whose own ``pyproject.toml``
  configures npulint (``select``, ``ignore``, ``per-file-ignores``), from the parent folder,
  from the subfolder, and from an unrelated current directory; the reported path is the stdin
  filename (relative to the current directory when under it, else absolute); ``-`` alone.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conftest import IMPORT, TWO_CODES, REPO, parse

BOTH = [(4, 6, "NPU101"), (6, 6, "NPU103")]


# --------------------------------------------------------------------------- documented parsers


def _editors_section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("### Editors")
    end = text.index("\n## ", start)
    return text[start:end]


def _vscode_matcher() -> dict:
    block = re.search(r"```json\n(.*?)```", _editors_section(), re.S)
    assert block, "README's Editors section has no tasks.json block"
    tasks = json.loads(block.group(1))
    (task,) = tasks["tasks"]
    return task["problemMatcher"]


def _errorformat_regex() -> re.Pattern:
    """The documented Vim ``errorformat`` as a Python regexp (``%f %l %c %m`` and ``\\ ``)."""
    m = re.search(r"errorformat=((?:\\ |\S)+)", _editors_section())
    assert m, "README's Editors section has no errorformat"
    efm = m.group(1)
    assert "," not in efm, "one pattern expected"
    out, i = "^", 0
    pieces = {"f": r"(?P<f>.+?)", "l": r"(?P<l>\d+)", "c": r"(?P<c>\d+)", "m": r"(?P<m>.+)"}
    while i < len(efm):
        ch = efm[i]
        if ch == "%":
            out += pieces[efm[i + 1]]
            i += 2
        elif ch == "\\":
            out += re.escape(efm[i + 1])
            i += 2
        else:
            out += re.escape(ch)
            i += 1
    return re.compile(out + "$")


def _makeprg() -> str:
    m = re.search(r"makeprg=((?:\\ |\S)+)", _editors_section())
    assert m, "README's Editors section has no makeprg"
    return m.group(1).replace("\\ ", " ")


@pytest.fixture
def two_files(project):
    return project({"pkg/a.py": TWO_CODES, "b.py": TWO_CODES})


def test_vscode_problem_matcher_reads_the_text_format(cli_run, two_files):
    matcher = _vscode_matcher()
    pattern = matcher["pattern"]
    assert matcher["fileLocation"][0] in ("relative", "autoDetect")
    regexp = re.compile(pattern["regexp"])  # JavaScript and Python agree on this subset
    r = cli_run(["-q", "."], cwd=two_files)
    assert r.returncode == 1 and r.stderr == ""
    got = []
    for line in r.stdout.splitlines():
        m = regexp.match(line)
        assert m, f"the documented problem matcher does not read {line!r}"
        got.append((m.group(pattern["file"]), int(m.group(pattern["line"])), int(m.group(pattern["column"])),
                    m.group(pattern["code"])))
        assert m.group(pattern["message"]).strip()
        assert os.path.isfile(two_files / m.group(pattern["file"]))  # relative to the workspace folder
    assert got == parse(r.stdout)
    assert got == [("b.py", *f) for f in BOTH] + [(os.path.join("pkg", "a.py"), *f) for f in BOTH]


def test_vim_errorformat_reads_the_text_format(cli_run, two_files):
    efm = _errorformat_regex()
    prg = _makeprg().split()
    assert prg[0] == "npulint" and prg[-1] == "%"
    # :make with % = the current file, run from the project root and from elsewhere (absolute path)
    for cwd, target, shown in [(two_files, "pkg/a.py", os.path.join("pkg", "a.py")),
                               (two_files / "pkg", str(two_files / "b.py"), str(two_files / "b.py"))]:
        r = cli_run(prg[1:-1] + [target], cwd=cwd)
        assert r.returncode == 1 and r.stderr == "", "-q keeps the summary out of the quickfix list"
        lines = r.stdout.splitlines()
        assert len(lines) == 2
        for line, (ln, col, code) in zip(lines, BOTH):
            m = efm.match(line)
            assert m, f"the documented errorformat does not read {line!r}"
            assert (m["f"], int(m["l"]), int(m["c"])) == (shown, ln, col)
            assert m["m"].startswith(code + " ")


def test_documented_stdin_command(cli_run, project):
    root = project({"src/model/keep.txt": "x"})
    m = re.search(r"^(npulint .*?) < buffer$", _editors_section(), re.M)
    assert m, "README's Editors section has no stdin command"
    r = cli_run(m.group(1).split()[1:], cwd=root, stdin=TWO_CODES)
    assert r.returncode == 1 and r.stderr == ""
    assert parse(r.stdout) == [(os.path.join("src", "model", "train.py"), *f) for f in BOTH]


# --------------------------------------------------------------------------- standard input

SUB_CONFIG = """\
[tool.npulint]
select = ["NPU1"]
ignore = ["NPU103"]

[tool.npulint.per-file-ignores]
"gen/*.py" = ["NPU101"]
"""


@pytest.fixture
def nested(project):
    """A root whose configuration would report both codes, and a subfolder ``sub`` whose own
    ``pyproject.toml`` (nearest wins) ignores NPU103 everywhere and NPU101 in ``sub/gen``."""
    return project({
        "pyproject.toml": '[tool.npulint]\nselect = ["NPU"]\n',
        "sub/pyproject.toml": SUB_CONFIG,
        "sub/gen/keep.txt": "x",
        "elsewhere/keep.txt": "x",
    })


@pytest.fixture
def _stdin(cli_run):
    def _stdin(args, cwd, src=TWO_CODES):
        r = cli_run(["-q", *args], cwd=cwd, stdin=src)
        assert r.stderr == "", r.stderr
        return r
    return _stdin


@pytest.mark.parametrize("order", [("--stdin-filename", "{f}", "-"), ("-", "--stdin-filename", "{f}"),
                                   ("--stdin-filename", "{f}")])
def test_stdin_subfolder_config_from_parent(_stdin, nested, order):
    args = [a.format(f="sub/m.py") for a in order]
    r = _stdin(args, nested)
    assert r.returncode == 1
    assert parse(r.stdout) == [(os.path.join("sub", "m.py"), 4, 6, "NPU101")]
    args = [a.format(f="sub/gen/m.py") for a in order]
    r = _stdin(args, nested)
    assert r.returncode == 0 and r.stdout == ""  # NPU103 ignored, NPU101 per-file-ignored


def test_stdin_root_config_outside_the_subfolder(_stdin, nested):
    r = _stdin(["--stdin-filename", "top.py", "-"], nested)
    assert parse(r.stdout) == [("top.py", *f) for f in BOTH]


def test_stdin_from_inside_the_subfolder(_stdin, nested):
    r = _stdin(["--stdin-filename", "m.py", "-"], nested / "sub")
    assert parse(r.stdout) == [("m.py", 4, 6, "NPU101")]
    r = _stdin(["--stdin-filename", os.path.join("gen", "m.py"), "-"], nested / "sub")
    assert r.returncode == 0 and r.stdout == ""
    # from a deeper folder, a path going up: the configuration still comes from the file's folder
    r = _stdin(["--stdin-filename", os.path.join("..", "m.py"), "-"], nested / "sub" / "gen")
    assert parse(r.stdout) == [(str(nested / "sub" / "m.py"), 4, 6, "NPU101")]


def test_stdin_from_an_unrelated_cwd(_stdin, nested):
    other = nested / "elsewhere"
    target = nested / "sub" / "m.py"
    for name in (str(target), os.path.join("..", "sub", "m.py")):
        r = _stdin(["--stdin-filename", name, "-"], other)
        assert r.returncode == 1
        assert parse(r.stdout) == [(str(target), 4, 6, "NPU101")]  # not under the cwd: absolute
    r = _stdin(["--stdin-filename", str(nested / "sub" / "gen" / "m.py"), "-"], other)
    assert r.returncode == 0 and r.stdout == ""


def test_stdin_unsaved_file_in_a_new_folder(_stdin, nested):
    """A buffer whose folder does not exist yet takes the nearest configuration above it."""
    r = _stdin(["--stdin-filename", "sub/new/deeper/m.py", "-"], nested)
    assert parse(r.stdout) == [(os.path.join("sub", "new", "deeper", "m.py"), 4, 6, "NPU101")]


def test_stdin_file_on_disk_is_not_read(_stdin, nested):
    (nested / "sub" / "m.py").write_text("with open(  # not python\n", encoding="utf-8")
    r = _stdin(["--stdin-filename", "sub/m.py", "-"], nested)
    assert parse(r.stdout) == [(os.path.join("sub", "m.py"), 4, 6, "NPU101")]


def test_stdin_without_filename_uses_cwd_config(_stdin, nested):
    r = _stdin(["-"], nested / "sub")
    assert parse(r.stdout) == [("-", 4, 6, "NPU101")]
    r = _stdin(["-"], nested)
    assert parse(r.stdout) == [("-", *f) for f in BOTH]
    r = _stdin(["-"], nested, src="import os\n")
    assert r.returncode == 0 and r.stdout == ""


def test_stdin_json_path_is_the_stdin_filename(_stdin, nested):
    r = _stdin(["--format", "json", "--stdin-filename", "sub/m.py", "-"], nested)
    data = json.loads(r.stdout)
    assert [(d["path"], d["line"], d["column"], d["code"]) for d in data] == [
        (os.path.join("sub", "m.py"), 4, 6, "NPU101")]
