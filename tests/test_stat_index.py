"""The cache's stat index (npulint.stat_index): a run over unchanged files reads none of them,
and a file that may have changed is always read again."""

from __future__ import annotations

import os
import time

import pytest

from npulint import cache as cache_mod
from npulint import pipeline, registry, source, stat_index
from npulint.config import Settings, enabled_codes

IMPORT = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
INVALID_ID = IMPORT + "with npu_weight_prefetch_scope(-1):\n    pass\n"  # NPU103
VALID_ID = IMPORT + "with npu_weight_prefetch_scope(+1):\n    pass\n"  # same size


@pytest.fixture
def reads(monkeypatch):
    """The files read through the run's digest pass (and the first pass), by base name."""
    seen = []
    real = source.read_regular_stat

    def spy(path, limit=0):
        if path.endswith(".py"):  # (cache entries are read so too)
            seen.append(os.path.basename(path))
        return real(path, limit)

    monkeypatch.setattr(source, "read_regular_stat", spy)
    return seen


@pytest.fixture
def settled(monkeypatch):
    """Record files as if read well after their last change (a file written by the test is
    otherwise racy for RACY_NS: its times are those of the test's writes)."""
    monkeypatch.setattr(stat_index.StatIndex, "now", staticmethod(lambda: time.time_ns() + 10 * stat_index.RACY_NS))


def lint(root, names, cache):
    rules, checkers = registry.load()
    enabled = enabled_codes(rules, None, [], [])
    paths = [(str(root / n), "python", True) for n in names]
    result = pipeline.run(paths, Settings(root=str(root)), checkers, enabled,
                          options=pipeline.RunOptions(jobs=1, cache=cache))
    return [(os.path.basename(f.path), f.code) for f in result.findings], result.cached


def test_a_run_over_unchanged_files_reads_none_of_them(tmp_path, reads, settled):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(INVALID_ID)
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    first = lint(tmp_path, ["a.py", "b.py"], cache)
    assert first == ([("a.py", "NPU103"), ("b.py", "NPU103")], False) and "a.py" in reads
    reads.clear()
    assert lint(tmp_path, ["a.py", "b.py"], cache_mod.Cache(str(tmp_path / ".cache"))) == (first[0], True)
    assert reads == []


def test_a_file_rewritten_to_the_same_size_and_times_is_read_again(tmp_path, reads, settled):
    """Its change time moves (a process cannot set it back): the signature differs."""
    path = tmp_path / "a.py"
    path.write_text(INVALID_ID)
    old = os.stat(path)
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    assert lint(tmp_path, ["a.py"], cache)[0] == [("a.py", "NPU103")]
    time.sleep(0.01)
    path.write_text(VALID_ID)
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert os.stat(path).st_size == old.st_size and os.stat(path).st_mtime_ns == old.st_mtime_ns
    reads.clear()
    assert lint(tmp_path, ["a.py"], cache_mod.Cache(str(tmp_path / ".cache"))) == ([], False)
    assert "a.py" in reads


def test_a_file_replaced_by_a_rename_is_read_again(tmp_path, reads, settled):
    path = tmp_path / "a.py"
    path.write_text(INVALID_ID)
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    assert lint(tmp_path, ["a.py"], cache)[0] == [("a.py", "NPU103")]
    (tmp_path / "new.tmp").write_text(VALID_ID)
    os.replace(tmp_path / "new.tmp", path)
    reads.clear()
    assert lint(tmp_path, ["a.py"], cache_mod.Cache(str(tmp_path / ".cache"))) == ([], False)
    assert "a.py" in reads


def test_a_file_read_within_its_time_step_is_read_again(tmp_path, reads):
    """Recorded right after it was written (no `settled`): a write in the same time step of a
    coarse file system would keep every value stat gives, so the entry is not trusted."""
    (tmp_path / "a.py").write_text(INVALID_ID)
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    first = lint(tmp_path, ["a.py"], cache)
    reads.clear()
    assert lint(tmp_path, ["a.py"], cache_mod.Cache(str(tmp_path / ".cache"))) == (first[0], True)
    assert reads == ["a.py"]  # read for its digest; the run itself came from the cache


def test_an_entry_is_trusted_only_when_the_signature_matches_and_is_not_racy(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    st = os.stat(path)
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    late = max(st.st_mtime_ns, st.st_ctime_ns) + stat_index.RACY_NS + 1
    for when, sig, expected in ((late, stat_index.signature(st), "d"),
                                (late - 2, stat_index.signature(st), None),  # within the time step
                                (late, stat_index.signature(st)[:2] + (st.st_size + 1,) + stat_index.signature(st)[3:],
                                 None)):
        index = stat_index.StatIndex(cache)
        index._old = {str(path): (sig, when, "d")}
        assert index.digest(str(path)) == expected
    index._old = {str(tmp_path / "gone.py"): (stat_index.signature(st), late, "d")}
    assert index.digest(str(tmp_path / "gone.py")) is None


@pytest.mark.parametrize("bad", [[], {"a": ("x", 1, "d")}, {"a": ((1, 2, 3, 4, 5), 1)},
                                 {"a": ((1, 2, 3, 4, "5"), 1, "d")}, {1: ((1, 2, 3, 4, 5), 1, "d")}])
def test_an_index_of_another_shape_is_empty(tmp_path, bad):
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    index = stat_index.StatIndex(cache)
    cache.put("stats", index.key, bad)
    assert stat_index.StatIndex(cache)._entries() == {}
    good = {"a": ((1, 2, 3, 4, 5), 1, "d")}
    cache.put("stats", index.key, good)
    assert stat_index.StatIndex(cache)._entries() == good


def test_a_run_that_reads_nothing_writes_no_index(tmp_path, settled, monkeypatch):
    (tmp_path / "a.py").write_text(INVALID_ID)
    lint(tmp_path, ["a.py"], cache_mod.Cache(str(tmp_path / ".cache")))
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    puts = []
    real = cache.put
    monkeypatch.setattr(cache, "put", lambda kind, key, value: (puts.append(kind), real(kind, key, value)))
    lint(tmp_path, ["a.py"], cache)
    assert puts == []
