"""The pre-commit hook (``.pre-commit-hooks.yaml``), run by the real ``pre-commit`` against a
temporary git repository whose ``.pre-commit-config.yaml`` points at this checkout.

pre-commit installs the hook from the checkout's committed ``HEAD`` (``rev``), not from the
working tree: the hook definition must be committed for this test to see it. The hook's
environment is built once per session (``PRE_COMMIT_HOME`` in a temporary folder). Building
it (``pre-commit install-hooks``: a virtualenv and a pip install of the checkout) is most of
this module's time, and mostly waiting on pip, so it starts in the background as soon as
the session knows these tests are selected (``start_hook_env_build``, called by conftest's
``pytest_collection_finish``) and the tests wait for it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
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


_BUILD = {}  # the hook environment's build: folder, repo, env, log, proc (or skip: the reason)


def start_hook_env_build() -> None:
    """A git repository using the npulint hook, and ``pre-commit install-hooks`` for it started
    in the background (once)."""
    if _BUILD:
        return
    try:
        rev = _checkout_rev()
    except pytest.skip.Exception as exc:
        _BUILD["skip"] = str(exc)
        return
    folder = Path(tempfile.mkdtemp(prefix="npulint-pre-commit-"))
    home, repo = folder / "home", folder / "hooked"
    home.mkdir()
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {REPO.as_posix()}\n"
        f"    rev: {rev}\n"
        "    hooks:\n"
        "      - id: npulint\n", encoding="utf-8")
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("VIRTUAL_ENV", None)
    log = open(folder / "install-hooks.log", "w+b")
    proc = subprocess.Popen([sys.executable, "-m", "pre_commit", "install-hooks"], cwd=str(repo),
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
    _BUILD.update(folder=folder, repo=repo, env=env, log=log, proc=proc)


def stop_hook_env_build() -> None:
    """End of the session: stop the build if it still runs (its tests were not reached) and
    remove its folder."""
    proc = _BUILD.get("proc")
    if proc is None:
        return
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    _BUILD["log"].close()
    shutil.rmtree(_BUILD["folder"], ignore_errors=True)
    _BUILD.clear()


@pytest.fixture(scope="module")
def hook_repo():
    """A git repository using the npulint hook, once its pre-commit environment is built."""
    start_hook_env_build()  # already started, unless conftest's hook did not run
    if "skip" in _BUILD:
        pytest.skip(_BUILD["skip"])
    repo, env, proc, log = _BUILD["repo"], _BUILD["env"], _BUILD["proc"], _BUILD["log"]
    rc = proc.wait(timeout=600)
    log.seek(0)
    assert rc == 0, log.read().decode(errors="replace")

    def run(*files: str) -> subprocess.CompletedProcess:
        _git("add", "-A", cwd=repo)
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--color", "never", "--files", *files],
                              cwd=str(repo), capture_output=True, text=True, env=env, timeout=600)

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
