"""The pre-commit hook (``.pre-commit-hooks.yaml``), run by the real ``pre-commit`` against a
temporary git repository whose ``.pre-commit-config.yaml`` points at this checkout.

pre-commit installs the hook from the checkout's committed ``HEAD`` (``rev``), not from the
working tree: the hook definition must be committed for this test to see it. The hook's
environment is built once for the module (``PRE_COMMIT_HOME`` in a module temp folder).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install -e '.[test]')")

# NPU304 (a warning): any finding makes npulint, and so the hook, fail.
VIOLATING = "import torchair as tng\nwith tng.scope.npu_stream_switch('1', 2):\n    pass\n"
CLEAN = "import torchair as tng\nwith tng.scope.npu_stream_switch('1'):\n    pass\n"


def _git(*args, cwd, check=True) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, text=True, env=env, check=check)


def _checkout_rev() -> str:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    r = _git("rev-parse", "HEAD", cwd=REPO, check=False)
    if r.returncode != 0:
        pytest.skip(f"{REPO} is not a git checkout: pre-commit installs hooks from a git repository")
    r2 = _git("cat-file", "-e", "HEAD:.pre-commit-hooks.yaml", cwd=REPO, check=False)
    if r2.returncode != 0:
        pytest.skip(".pre-commit-hooks.yaml is not committed yet: pre-commit installs the hook from HEAD")
    return r.stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A git repository using the npulint hook; its pre-commit environment is built once."""
    rev = _checkout_rev()
    home = tmp_path_factory.mktemp("pre-commit-home")
    repo = tmp_path_factory.mktemp("hooked")
    _git("init", "-q", cwd=repo)
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {REPO.as_posix()}\n"
        f"    rev: {rev}\n"
        "    hooks:\n"
        "      - id: npulint\n", encoding="utf-8")
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("VIRTUAL_ENV", None)

    def run(*files: str) -> subprocess.CompletedProcess:
        _git("add", "-A", cwd=repo)
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--color", "never", "--files", *files],
                              cwd=str(repo), capture_output=True, text=True, env=env, timeout=600)

    r = subprocess.run([sys.executable, "-m", "pre_commit", "install-hooks"], cwd=str(repo),
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return repo, run


def test_hook_fails_on_violating_file(hook_repo):
    repo, run = hook_repo
    (repo / "bad.py").write_text(VIOLATING, encoding="utf-8")
    r = run("bad.py")
    assert r.returncode != 0, r.stdout + r.stderr
    assert "npulint" in r.stdout and "Failed" in r.stdout, r.stdout
    assert "bad.py:2:" in r.stdout and "NPU304" in r.stdout, r.stdout


def test_hook_passes_on_clean_file(hook_repo):
    repo, run = hook_repo
    (repo / "good.py").write_text(CLEAN, encoding="utf-8")
    r = run("good.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Passed" in r.stdout, r.stdout


def test_hook_sees_shell_files_and_skips_others(hook_repo):
    repo, run = hook_repo
    (repo / "launch.sh").write_text("#!/bin/bash\necho hi\n", encoding="utf-8")
    (repo / "notes.txt").write_text(VIOLATING, encoding="utf-8")
    r = run("launch.sh")
    assert r.returncode == 0 and "Passed" in r.stdout, r.stdout + r.stderr
    r = run("notes.txt")
    assert r.returncode == 0 and "no files to check" in r.stdout.lower(), r.stdout + r.stderr
