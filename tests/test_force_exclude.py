"""--force-exclude (ruff's meaning): the excludes apply to files named on the command line,
as pre-commit names them; the hook passes it."""

from __future__ import annotations

import pathlib

from conftest import TWO_CODES

REPO = pathlib.Path(__file__).resolve().parent.parent


def _project(tmp_path, force=False):
    (tmp_path / "pyproject.toml").write_text('[tool.npulint]\nextend-exclude = ["third_party"]\n'
                                              + ("force-exclude = true\n" if force else ""))
    (tmp_path / "third_party" / "lib").mkdir(parents=True)
    (tmp_path / "third_party" / "lib" / "vendored.py").write_text(TWO_CODES)
    (tmp_path / "own.py").write_text(TWO_CODES)
    return tmp_path


def test_a_named_excluded_file_is_linted_without_force_exclude(cli_run, tmp_path):
    root = _project(tmp_path)
    r = cli_run(["--no-cache", "third_party/lib/vendored.py", "own.py"], root)
    assert "vendored.py" in r.stdout and r.returncode == 1


def test_force_exclude_leaves_out_named_files_under_an_excluded_folder(cli_run, tmp_path):
    root = _project(tmp_path)
    r = cli_run(["--no-cache", "--force-exclude", "third_party/lib/vendored.py", "own.py"], root)
    assert "vendored.py" not in r.stdout and "own.py" in r.stdout
    r = cli_run(["--no-cache", "--force-exclude", "third_party/lib/vendored.py"], root)
    assert r.returncode == 0 and r.stdout == ""


def test_force_exclude_in_the_configuration(cli_run, tmp_path):
    root = _project(tmp_path, force=True)
    r = cli_run(["--no-cache", "third_party/lib/vendored.py"], root)
    assert r.returncode == 0 and "vendored.py" not in r.stdout
    r = cli_run(["--no-cache", "."], root)
    assert "vendored.py" not in r.stdout and "own.py" in r.stdout


def test_force_exclude_with_standard_input(cli_run, tmp_path):
    root = _project(tmp_path)
    args = ["--no-cache", "--force-exclude", "--stdin-filename", "third_party/lib/vendored.py", "-"]
    r = cli_run(args, root, stdin=TWO_CODES)
    assert r.returncode == 0 and r.stdout == ""
    r = cli_run(args[:1] + ["--fix"] + args[1:], root, stdin=TWO_CODES)
    assert r.returncode == 0 and r.stdout == TWO_CODES


def test_the_pre_commit_hook_passes_force_exclude():
    assert "args: [--force-exclude]" in (REPO / ".pre-commit-hooks.yaml").read_text()
