"""A folder's walk from the cache (discovery._WalkRecord): used while nothing it depends on
changed, walked again whenever something may have."""

from __future__ import annotations

import os
import time

import pytest

from npulint import cache as cache_mod
from npulint import discovery, stat_index
from npulint.config import Settings


@pytest.fixture
def settled(monkeypatch):
    """Record as if the walk ran well after the tree was last changed (a tree the test has just
    written is otherwise racy: it is walked again every time)."""
    monkeypatch.setattr(stat_index.StatIndex, "now", staticmethod(lambda: time.time_ns() + 10 * stat_index.RACY_NS))


@pytest.fixture
def scans(monkeypatch):
    """The folders listed by walks."""
    seen = []
    real = os.scandir

    def spy(path="."):
        seen.append(os.path.basename(str(path)))
        return real(path)

    monkeypatch.setattr(discovery.os, "scandir", spy)
    return seen


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "pkg" / "b.py").write_text("x = 1\n")
    (root / "pkg" / "sub" / "c.py").write_text("x = 1\n")
    (root / "bin").mkdir()
    (root / "bin" / "run").write_text("#!/bin/bash\ntorchrun x.py\n")
    return root


def walk(root, cache_dir):
    found, _ = discovery.discover([str(root)], Settings(root=str(root)), cache=cache_mod.Cache(str(cache_dir)))
    return sorted(os.path.relpath(p, root) for p, _, _ in found)


EXPECTED = ["a.py", os.path.join("bin", "run"), os.path.join("pkg", "b.py"), os.path.join("pkg", "sub", "c.py")]


def test_an_unchanged_tree_is_not_walked_again(tree, tmp_path, settled, scans):
    assert walk(tree, tmp_path / "c") == EXPECTED and scans
    scans.clear()
    assert walk(tree, tmp_path / "c") == EXPECTED
    assert scans == []


@pytest.mark.parametrize("change, expected", [
    ("add", EXPECTED + [os.path.join("pkg", "sub", "d.py")]),
    ("remove", [e for e in EXPECTED if e != os.path.join("pkg", "b.py")]),
    ("rename", sorted(e if e != "a.py" else "z.py" for e in EXPECTED)),
    ("gitignore", [e for e in EXPECTED if not e.startswith("pkg")]),
    ("nested gitignore", [e for e in EXPECTED if e != os.path.join("pkg", "sub", "c.py")]),
    ("edited gitignore", [e for e in EXPECTED if e != "a.py"]),
    ("shebang", [e for e in EXPECTED if not e.startswith("bin")]),
])
def test_a_change_is_walked_again(tree, tmp_path, settled, scans, change, expected):
    (tree / ".gitignore").write_text("*.log\n")
    walk(tree, tmp_path / "c")
    if change == "add":
        (tree / "pkg" / "sub" / "d.py").write_text("x = 1\n")
    elif change == "remove":
        (tree / "pkg" / "b.py").unlink()
    elif change == "rename":
        os.rename(tree / "a.py", tree / "z.py")
    elif change == "gitignore":
        (tree / "pkg" / ".gitignore").write_text("*\n")
    elif change == "nested gitignore":
        (tree / "pkg" / "sub" / ".gitignore").write_text("c.py\n")
    elif change == "edited gitignore":  # same size, so only the times tell
        (tree / ".gitignore").write_text("a.py\n")
    elif change == "shebang":
        (tree / "bin" / "run").write_text("#!/usr/bin/env python\nprint()\n")
    scans.clear()
    assert walk(tree, tmp_path / "c") == expected
    assert scans


def test_a_gitignore_above_the_folder_walked(tree, tmp_path, settled):
    """The .gitignore files from the repository root down apply: one added above is seen."""
    assert walk(tree / "pkg", tmp_path / "c") == ["b.py", os.path.join("sub", "c.py")]
    (tree / ".gitignore").write_text("sub/\n")
    assert walk(tree / "pkg", tmp_path / "c") == ["b.py"]


def test_a_new_repository_root_is_seen(tmp_path, settled):
    """A .git made between the folder and the old root (in a folder the walk does not list)
    moves the root, and with it the .gitignore files that apply."""
    outer = tmp_path / "outer"
    (outer / ".git").mkdir(parents=True)
    (outer / ".gitignore").write_text("mid/inner/x.py\n")
    (outer / "mid" / "inner").mkdir(parents=True)
    (outer / "mid" / "inner" / "x.py").write_text("x = 1\n")
    assert walk(outer / "mid" / "inner", tmp_path / "c") == []
    (outer / "mid" / ".git").mkdir()  # mid is its own repository now: outer's file stops applying
    assert walk(outer / "mid" / "inner", tmp_path / "c") == ["x.py"]


def test_a_tree_just_written_is_walked_every_time(tree, tmp_path, scans):
    """Without `settled`: the folders' times are within the time step of the walk, where a
    change could leave every value stat gives as it was."""
    walk(tree, tmp_path / "c")
    scans.clear()
    assert walk(tree, tmp_path / "c") == EXPECTED
    assert scans


def test_a_tree_with_a_link_is_walked_every_time(tree, tmp_path, settled, scans):
    (tmp_path / "outside.py").write_text("x = 1\n")  # (a link to a file of the tree is not linted twice)
    os.symlink(tmp_path / "outside.py", tree / "link.py")
    assert walk(tree, tmp_path / "c") == sorted(EXPECTED + ["link.py"])
    scans.clear()
    assert walk(tree, tmp_path / "c") == sorted(EXPECTED + ["link.py"])
    assert scans


def test_settings_are_part_of_the_key(tree, tmp_path, settled):
    cache = cache_mod.Cache(str(tmp_path / "c"))
    found, _ = discovery.discover([str(tree)], Settings(root=str(tree)), cache=cache)
    assert len(found) == 4
    found, _ = discovery.discover([str(tree)], Settings(root=str(tree), extend_exclude=["pkg"]), cache=cache)
    assert sorted(os.path.relpath(p, tree) for p, _, _ in found) == ["a.py", os.path.join("bin", "run")]


@pytest.mark.parametrize("bad", [(1, {}, ()), (1, {"a": "x"}, ()), (1, {}, (("a", "python", True),)), [1, {}, ()]])
def test_a_record_of_another_shape_is_walked_again(tree, tmp_path, settled, scans, bad):
    cache = cache_mod.Cache(str(tmp_path / "c"))
    walk(tree, tmp_path / "c")
    for folder, _, names in os.walk(tmp_path / "c"):
        if os.path.basename(os.path.dirname(folder)) == "walk":
            key = names[0][:-len(".pickle")]
            cache.put("walk", key, bad)
    scans.clear()
    assert walk(tree, tmp_path / "c") == EXPECTED and scans


def test_a_warm_cli_run_imports_no_pathspec(tree):
    """The walk from the cache needs no pattern compiled: pathspec is not imported."""
    import subprocess
    import sys

    (tree / ".gitignore").write_text("*.log\nbuild/\n")
    code = ("import sys, time; sys.argv = ['npulint', '.', '--exit-zero', '-q']\n"
            "from npulint import cli, stat_index\n"  # settled, as above: the tree was just written
            "stat_index.StatIndex.now = staticmethod(lambda: time.time_ns() + 10 * stat_index.RACY_NS)\n"
            "try:\n    cli.main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('pathspec' in sys.modules)")
    # (the first run makes .npulint_cache/ in the folder, which changes it: the second walks again)
    runs = [subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True) for _ in range(3)]
    assert [r.stdout.strip().splitlines()[-1] for r in runs] == ["True", "True", "False"], [r.stderr for r in runs]
