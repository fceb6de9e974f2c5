"""The ``npulint`` command line, run in-process through ``cli.main(argv)`` (the ``cli_run``
fixture); the installed console script, ``python -m npulint`` and a real stdin pipe are
run in a subprocess once each (``run_cli``).

Covers: paths and the default ``.``, ``python -m npulint``, the text and JSON formats, sorting,
display paths, ``--select``/``--ignore``/``--extend-select``, ``--exit-zero``, ``--statistics``,
``--list-rules``, ``--explain``, standard input, ``# noqa`` / ``# npulint: skip-file`` and the
exit codes (0 clean, 1 findings, 2 usage or configuration error with a one-line message).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import parse, run_cli
from npulint import registry

IMPORT = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"

# NPU101 at 4:6 (pool 0 is 536870912 bytes at line 2, 1024 bytes at line 4).
VIOLATION = (
    IMPORT
    + "with npu_weight_prefetch_scope():\n"
    "    pass\n"
    "with npu_weight_prefetch_scope(0, 1024):\n"
    "    pass\n"
)

# NPU101 at 4:6 and NPU103 at 6:6.
TWO_CODES = VIOLATION + "with npu_weight_prefetch_scope(-1):\n    pass\n"

# Only NPU103 at 2:6 (a per-file rule: no cross-file interaction).
INVALID_ID = IMPORT + "with npu_weight_prefetch_scope(-1):\n    pass\n"

CLEAN = IMPORT + "with npu_weight_prefetch_scope(1, 1024):\n    pass\n"



def one_line(stderr: str) -> str:
    text = stderr.strip()
    assert text, "expected a message on stderr"
    assert "\n" not in text, f"expected ONE line on stderr, got: {stderr!r}"
    return text


def assert_usage_error(result, *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    msg = one_line(result.stderr)
    for needle in needles:
        assert needle in msg, f"{needle!r} not in {msg!r}"


# --------------------------------------------------------------------------- paths, formats


def test_default_path_is_current_directory(project):
    # the installed console script, in a subprocess
    root = project({"a.py": VIOLATION, "pkg/b.py": INVALID_ID})
    r = run_cli([], cwd=root)
    assert r.returncode == 1
    assert parse(r.stdout) == [("a.py", 4, 6, "NPU101"), ("pkg/b.py", 2, 6, "NPU103")]
    assert "Traceback" not in r.stderr
    one_line(r.stderr)  # the summary


def test_explicit_dot_same_as_default(cli_run, project):
    root = project({"a.py": VIOLATION})
    assert parse(cli_run(["."], cwd=root).stdout) == [("a.py", 4, 6, "NPU101")]


def test_python_dash_m(project):
    root = project({"a.py": VIOLATION})
    r = subprocess.run([sys.executable, "-m", "npulint", "a.py"], cwd=str(root), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert parse(r.stdout) == [("a.py", 4, 6, "NPU101")]
    r = subprocess.run([sys.executable, "-m", "npulint", "--format", "xml", "a.py"], cwd=str(root),
                       capture_output=True, text=True, timeout=60)
    assert_usage_error(r, "xml")


def test_text_line_format_matches_json(cli_run, project):
    root = project({"a.py": TWO_CODES})
    text = cli_run(["a.py"], cwd=root)
    js = cli_run(["a.py", "--format", "json"], cwd=root)
    assert text.returncode == 1 and js.returncode == 1
    items = json.loads(js.stdout)
    expected = [f"{i['path']}:{i['line']}:{i['column']}: {i['code']} [{i['severity']}] "
                f"{'[*] ' if i['fix'] and i['fix']['applicability'] == 'safe' else ''}{i['message']}" for i in items]
    assert text.stdout.splitlines() == expected
    assert [(i["line"], i["column"], i["code"]) for i in items] == [(4, 6, "NPU101"), (6, 6, "NPU103")]
    # ruff's name for the one-line format
    assert cli_run(["a.py", "--output-format", "concise"], cwd=root).stdout == text.stdout


def test_json_fields(cli_run, project):
    root = project({"a.py": VIOLATION})
    r = cli_run(["--format", "json"], cwd=root)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    items = json.loads(r.stdout)
    assert isinstance(items, list) and len(items) == 1
    item = items[0]
    for key in ("path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message"):
        assert key in item, key
    assert item["path"] == "a.py"
    assert (item["line"], item["column"]) == (4, 6)
    assert item["code"] == "NPU101"
    assert item["name"] == "prefetch-pool-size-mismatch"
    assert item["severity"] == "error"
    assert isinstance(item["message"], str) and item["message"]
    assert isinstance(item["end_line"], int) and isinstance(item["end_column"], int)
    # the span is the call `npu_weight_prefetch_scope(0, 1024)` on line 4
    assert (item["end_line"], item["end_column"]) >= (item["line"], item["column"])
    assert item["end_line"] == 4
    assert item["end_column"] == 6 + len("npu_weight_prefetch_scope(0, 1024)")


def test_json_no_findings_is_empty_list(cli_run, project):
    root = project({"a.py": CLEAN})
    r = cli_run(["--format", "json"], cwd=root)
    assert r.returncode == 0
    assert json.loads(r.stdout) == []


def test_no_findings_exit_zero_and_summary(cli_run, project):
    root = project({"a.py": CLEAN, "b.py": "x = 1\n"})
    r = cli_run([], cwd=root)
    assert r.returncode == 0
    assert r.stdout == ""
    one_line(r.stderr)


def test_output_sorted_by_path_line_column(cli_run, project):
    # d.py: NPU103 at 9:6 and 9:37, NPU101 (reported by the project-wide phase) at 4:6 and 10:6.
    # Numeric order matters: line 9 before 10, column 6 before 37.
    d = (
        IMPORT
        + "with npu_weight_prefetch_scope(): pass\n"
        "x = 1\n"
        "with npu_weight_prefetch_scope(0, 1024): pass\n"
        "x = 2\nx = 3\nx = 4\nx = 5\n"
        "with npu_weight_prefetch_scope(-1), npu_weight_prefetch_scope(-2): pass\n"
        "with npu_weight_prefetch_scope(0, 2048): pass\n"
    )
    root = project({"d.py": d, "b/c.py": INVALID_ID, "a.py": INVALID_ID})
    r = cli_run([], cwd=root)
    assert r.returncode == 1
    assert parse(r.stdout) == [
        ("a.py", 2, 6, "NPU103"),
        ("b/c.py", 2, 6, "NPU103"),
        ("d.py", 4, 6, "NPU101"),
        ("d.py", 9, 6, "NPU103"),
        ("d.py", 9, 37, "NPU103"),
        ("d.py", 10, 6, "NPU101"),
    ]


def test_column_counts_characters_not_bytes(cli_run, project):
    src = VIOLATION.replace("with npu_weight_prefetch_scope(0, 1024):",
                            'with open("éé"), npu_weight_prefetch_scope(0, 1024):')
    root = project({"a.py": src})
    r = cli_run(["a.py"], cwd=root)
    assert parse(r.stdout) == [("a.py", 4, 18, "NPU101")]


def test_paths_relative_to_cwd(cli_run, project):
    root = project({"sub/m.py": INVALID_ID})
    for arg in ("./sub", str(root / "sub" / "m.py")):
        r = cli_run([arg], cwd=root)
        assert parse(r.stdout) == [("sub/m.py", 2, 6, "NPU103")], arg


def test_path_outside_cwd_is_absolute(cli_run, project):
    root = project({"lib/m.py": INVALID_ID, "work/keep.txt": "x"})
    r = cli_run(["../lib/m.py"], cwd=root / "work")
    want = os.path.join(os.path.realpath(root), "lib", "m.py")
    got = parse(r.stdout)
    assert len(got) == 1
    assert os.path.realpath(got[0][0]) == want
    assert os.path.isabs(got[0][0])
    assert got[0][1:] == (2, 6, "NPU103")


def test_each_file_once_when_named_twice(cli_run, project):
    root = project({"a.py": INVALID_ID})
    r = cli_run([".", "a.py", "./a.py"], cwd=root)
    assert parse(r.stdout) == [("a.py", 2, 6, "NPU103")]


def test_shell_files_do_not_crash(cli_run, project):
    root = project({"run.sh": "#!/bin/bash\nset -e\necho \"start\"\npython train.py\n", "a.py": CLEAN})
    r = cli_run([], cwd=root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == ""
    r = cli_run(["run.sh"], cwd=root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr


# --------------------------------------------------------------------------- rule selection


@pytest.mark.parametrize("args, expected", [
    ([], ["NPU101", "NPU103"]),
    (["--select", "NPU101"], ["NPU101"]),
    (["--select", "NPU103"], ["NPU103"]),
    (["--select", "NPU1"], ["NPU101", "NPU103"]),
    (["--select", "NPU101,NPU103"], ["NPU101", "NPU103"]),
    (["--select", "NPU1", "--ignore", "NPU101"], ["NPU103"]),
    # the more specific selector wins, whichever option it comes from
    (["--select", "NPU101", "--ignore", "NPU1"], ["NPU101"]),
    (["--ignore", "NPU1"], []),
    (["--ignore", "NPU103"], ["NPU101"]),
    (["--ignore", "NPU1", "--extend-select", "NPU103"], ["NPU103"]),
    # same specificity: ignore wins
    (["--select", "NPU101", "--ignore", "NPU101"], []),
    (["--select", "NPU0"], []),
    (["--select", "NPU010", "--extend-select", "NPU103"], ["NPU103"]),
])
def test_select_ignore(cli_run, project, args, expected):
    root = project({"a.py": TWO_CODES})
    r = cli_run(["a.py", *args], cwd=root)
    assert [c for *_, c in parse(r.stdout)] == expected
    assert r.returncode == (1 if expected else 0)


def test_cli_select_replaces_configured_select(cli_run, project):
    root = project({"a.py": TWO_CODES, "pyproject.toml": '[tool.npulint]\nselect = ["NPU103"]\n'})
    assert [c for *_, c in parse(cli_run([], cwd=root).stdout)] == ["NPU103"]
    assert [c for *_, c in parse(cli_run(["--select", "NPU101"], cwd=root).stdout)] == ["NPU101"]
    assert [c for *_, c in parse(cli_run(["--extend-select", "NPU101"], cwd=root).stdout)] == ["NPU101", "NPU103"]


def test_exit_zero(cli_run, project):
    root = project({"a.py": VIOLATION})
    r = cli_run(["--exit-zero"], cwd=root)
    assert r.returncode == 0
    assert parse(r.stdout) == [("a.py", 4, 6, "NPU101")]


def test_statistics(cli_run, project):
    root = project({"a.py": TWO_CODES, "b.py": VIOLATION})
    r = cli_run(["--statistics"], cwd=root)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 2, r.stdout
    assert re.match(r"^\s*2\s+NPU101\b", lines[0]), lines
    assert re.match(r"^\s*1\s+NPU103\b", lines[1]), lines
    assert "a.py" not in r.stdout  # counts, not the findings


def test_list_rules(cli_run, project):
    root = project({})
    r = cli_run(["--list-rules"], cwd=root)
    assert r.returncode == 0
    for rule in registry.load()[0]:
        assert rule.code in r.stdout, rule.code
        assert rule.name in r.stdout, rule.name


def test_explain(cli_run, project):
    root = project({})
    r = cli_run(["--explain", "NPU101"], cwd=root)
    assert r.returncode == 0
    assert "NPU101" in r.stdout and "prefetch-pool-size-mismatch" in r.stdout
    assert_usage_error(cli_run(["--explain", "NPU999"], cwd=root), "NPU999")


# --------------------------------------------------------------------------- usage errors


@pytest.mark.parametrize("args, needle", [
    (["--format", "xml"], "xml"),
    (["--select", "NPU999"], "NPU999"),
    (["--select", "XYZ1"], "XYZ1"),
    (["--ignore", "NPU999"], "NPU999"),
    (["--extend-select", "NPU9"], "NPU9"),
    (["--select", "NPU101,BOGUS"], "BOGUS"),
    (["--select", ""], "--select"),
    (["--select", " , "], "--select"),
    (["--ignore", ""], "--ignore"),
    (["--extend-select", ","], "--extend-select"),
    (["--config", "nope.toml"], "nope.toml"),
    (["--no-such-option"], "--no-such-option"),
])
def test_usage_errors(cli_run, project, args, needle):
    root = project({"a.py": VIOLATION})
    assert_usage_error(cli_run(args, cwd=root), needle)


def test_a_code_option_with_a_stray_comma_keeps_its_codes(cli_run, project):
    """A value that names codes among empty items selects those codes (the empty value alone is
    the error above)."""
    root = project({"a.py": VIOLATION})
    r = cli_run(["--no-cache", "--select", "NPU101,", "a.py"], cwd=root)
    assert r.returncode == 1 and parse(r.stdout) == [("a.py", 4, 6, "NPU101")]


# --------------------------------------------------------------------------- missing paths


MISSING = "cannot read file: No such file or directory"


@pytest.mark.parametrize("cache", [["--no-cache"], []])
def test_a_missing_path_is_npu002_and_the_other_paths_are_linted(cli_run, project, cache):
    """ruff's E902: a path that is not there is a finding at 1:1 of that path, and the run goes
    on with the others (exit 1 for the finding, as ruff's); with the cache, twice the same."""
    root = project({"a.py": VIOLATION, "pkg/b.py": CLEAN})
    for _ in range(2):
        r = cli_run(cache + ["a.py", "gone.py", "pkg", "nowhere/run.sh"], cwd=root)
        assert r.returncode == 1, r.stderr
        assert parse(r.stdout) == [("a.py", 4, 6, "NPU101"), ("gone.py", 1, 1, "NPU002"),
                                   ("nowhere/run.sh", 1, 1, "NPU002")]
        assert f"gone.py:1:1: NPU002 [error] {MISSING}" in r.stdout
        assert "Found 3 findings in 3 files (4 files checked)." in r.stderr
    assert not (root / "gone.py").exists() and not (root / "nowhere").exists()


def test_a_missing_path_where_npu002_is_not_selected_is_named_on_stderr(cli_run, project):
    """ruff's "Failed to lint" warning where E902 is not enabled: named, not checked, and the
    exit status is that of the other files' findings."""
    root = project({"a.py": VIOLATION})
    r = cli_run(["--no-cache", "--select", "NPU101", "a.py", "gone.py"], cwd=root)
    assert r.returncode == 1 and parse(r.stdout) == [("a.py", 4, 6, "NPU101")]
    assert f"npulint: warning: gone.py: not analysed: {MISSING}" in r.stderr
    assert "(1 file checked, 1 file skipped)" in r.stderr
    r = cli_run(["--no-cache", "--ignore", "NPU002", "gone.py"], cwd=root)
    assert r.returncode == 0 and r.stdout == ""
    assert "gone.py: not analysed" in r.stderr and "All checks passed (0 files checked, 1 file skipped)." in r.stderr


def test_a_run_where_every_path_is_missing_says_so(cli_run, project):
    root = project({})
    r = cli_run(["--no-cache", "gone.py", "missing_dir"], cwd=root)
    assert r.returncode == 1
    assert parse(r.stdout) == [("gone.py", 1, 1, "NPU002"), ("missing_dir", 1, 1, "NPU002")]
    r = cli_run(["--no-cache", "--format", "json", "gone.py"], cwd=root)
    assert r.returncode == 1 and [f["code"] for f in json.loads(r.stdout)] == ["NPU002"]


def test_a_missing_path_is_not_shown_as_a_file_nor_fixed(cli_run, project):
    root = project({"a.py": VIOLATION})
    r = cli_run(["--show-files", "a.py", "gone.py"], cwd=root)
    assert r.returncode == 0 and r.stdout == f"{root / 'a.py'}\n"
    for args in (["--fix"], ["--diff"], ["--add-noqa"]):
        r = cli_run(["--no-cache"] + args + ["gone.py", "a.py"], cwd=root)
        assert "Traceback" not in r.stderr and r.returncode in (0, 1), (args, r.stderr)
    assert not (root / "gone.py").exists()


# --------------------------------------------------------------------------- standard input


def test_stdin_uses_given_filename(project):
    # a real pipe on the console script's standard input
    root = project({"keep.txt": "x"})
    r = run_cli(["-", "--stdin-filename", "pkg/mod.py"], cwd=root, stdin=VIOLATION)
    assert r.returncode == 1
    assert parse(r.stdout) == [("pkg/mod.py", 4, 6, "NPU101")]


def test_stdin_content_wins_over_file_on_disk(cli_run, project):
    root = project({"mod.py": CLEAN})
    r = cli_run(["-", "--stdin-filename", "mod.py"], cwd=root, stdin=VIOLATION)
    assert parse(r.stdout) == [("mod.py", 4, 6, "NPU101")]
    r = cli_run(["-", "--stdin-filename", "mod.py"], cwd=root, stdin=CLEAN)
    assert r.returncode == 0 and r.stdout == ""


def test_stdin_without_filename(cli_run, project):
    root = project({"keep.txt": "x"})
    r = cli_run(["-"], cwd=root, stdin=VIOLATION)
    assert r.returncode == 1
    got = parse(r.stdout)
    assert [g[1:] for g in got] == [(4, 6, "NPU101")]


def test_stdin_config_found_from_given_path(cli_run, project):
    root = project({
        "sub/pyproject.toml": '[tool.npulint]\nignore = ["NPU101"]\n',
        "keep.txt": "x",
    })
    r = cli_run(["-", "--stdin-filename", "sub/x.py"], cwd=root, stdin=TWO_CODES)
    assert parse(r.stdout) == [("sub/x.py", 6, 6, "NPU103")]
    r = cli_run(["-", "--stdin-filename", "other/x.py"], cwd=root, stdin=TWO_CODES)
    assert parse(r.stdout) == [("other/x.py", 4, 6, "NPU101"), ("other/x.py", 6, 6, "NPU103")]


def test_stdin_per_file_ignores_match_given_path(cli_run, project):
    root = project({"pyproject.toml": '[tool.npulint]\nper-file-ignores = { "gen/*.py" = ["NPU103"] }\n'})
    r = cli_run(["-", "--stdin-filename", "gen/z.py"], cwd=root, stdin=TWO_CODES)
    assert parse(r.stdout) == [("gen/z.py", 4, 6, "NPU101")]
    r = cli_run(["-", "--stdin-filename", "src/z.py"], cwd=root, stdin=TWO_CODES)
    assert parse(r.stdout) == [("src/z.py", 4, 6, "NPU101"), ("src/z.py", 6, 6, "NPU103")]


def test_stdin_noqa(cli_run, project):
    root = project({"keep.txt": "x"})
    src = VIOLATION.replace("(0, 1024):", "(0, 1024):  # noqa: NPU101")
    r = cli_run(["-", "--stdin-filename", "x.py"], cwd=root, stdin=src)
    assert r.returncode == 0 and r.stdout == ""


# --------------------------------------------------------------------------- suppression


def _line4(suffix: str) -> str:
    return VIOLATION.replace("with npu_weight_prefetch_scope(0, 1024):\n    pass\n",
                             "with npu_weight_prefetch_scope(0, 1024):" + suffix + "\n")


@pytest.mark.parametrize("suffix, suppressed", [
    (" pass  # noqa", True),
    (" pass  # NOQA", True),
    (" pass  # noqa: NPU101", True),
    (" pass  # noqa:NPU101", True),
    (" pass  # noqa: NPU102,NPU101", True),
    (" pass  # noqa: NPU102, NPU101", True),
    (" pass  # comment  # noqa: NPU101", True),
    (" pass  # noqa: NPU103", False),
    (" pass  # noqa: NPU102", False),
    # a `# noqa` inside a string literal is not a comment
    (' s = "# noqa"', False),
    (' s = "x  # noqa: NPU101"', False),
    (" s = '''# noqa'''", False),
])
def test_noqa(cli_run, project, suffix, suppressed):
    root = project({"a.py": _line4(suffix)})
    r = cli_run(["a.py"], cwd=root)
    if suppressed:
        assert (r.returncode, r.stdout) == (0, "")
    else:
        assert r.returncode == 1
        assert parse(r.stdout) == [("a.py", 4, 6, "NPU101")]


def test_noqa_on_other_line_does_not_suppress(cli_run, project):
    src = VIOLATION.replace("with npu_weight_prefetch_scope():", "with npu_weight_prefetch_scope():  # noqa")
    src = src.replace("(0, 1024):\n    pass", "(0, 1024):\n    pass  # noqa")
    root = project({"a.py": src})
    assert parse(cli_run(["a.py"], cwd=root).stdout) == [("a.py", 4, 6, "NPU101")]


def test_noqa_only_suppresses_its_line(cli_run, project):
    root = project({"a.py": TWO_CODES.replace("(0, 1024):", "(0, 1024):  # noqa")})
    assert parse(cli_run(["a.py"], cwd=root).stdout) == [("a.py", 6, 6, "NPU103")]


def test_skip_file(cli_run, project):
    root = project({
        "a.py": "# npulint: skip-file\n" + TWO_CODES,
        "b.py": TWO_CODES + "# npulint: skip-file\n",
        "c.py": INVALID_ID,
    })
    r = cli_run([], cwd=root)
    assert parse(r.stdout) == [("c.py", 2, 6, "NPU103")]


def test_skip_file_inside_a_docstring_does_not_skip(cli_run, project):
    root = project({"d.py": '"""Module doc.\n# npulint: skip-file\n"""\n' + TWO_CODES})
    r = cli_run(["d.py"], cwd=root)
    assert r.returncode == 1 and parse(r.stdout)
