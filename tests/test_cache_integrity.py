"""A corrupt cache can cost time, never change a result; an unusable one is ignored; a bad
configuration creates nothing (issue: never trust a corrupt cache)."""

from __future__ import annotations

import hashlib
import os
import pickle
import random

import pytest

from npulint import cache as cache_mod

from conftest import TWO_CODES

ARGS = ["--format", "json", "--select", "ALL", "."]


def _project(tmp_path):
    (tmp_path / "a.py").write_text(TWO_CODES)
    (tmp_path / "b.py").write_text(TWO_CODES.replace("1024", "2048"))
    (tmp_path / "run.sh").write_text("torchrun pretrain_gpt.py --adaptive-memory-optimization --swap-attention\n")
    return tmp_path


def _entries(root):
    out = []
    for folder, _, names in os.walk(root / ".npulint_cache"):
        out.extend(os.path.join(folder, n) for n in names if n.endswith(".pickle"))
    assert out, "the first run wrote no cache entry"
    return sorted(out)


@pytest.fixture
def _uncached(cli_run):
    def _uncached(root):
        r = cli_run(["--no-cache"] + ARGS, root)
        assert r.returncode == 1 and "Traceback" not in r.stderr
        return r.stdout
    return _uncached


@pytest.fixture
def _check_same(cli_run):
    def _check_same(root, expected):
        for _ in range(2):  # the corrupt entry is a miss, then rewritten and a hit
            r = cli_run(ARGS, root)
            assert "Traceback" not in r.stderr, r.stderr
            assert r.returncode == 1
            assert r.stdout == expected
    return _check_same


def test_a_renamed_attribute_in_an_entry_is_a_miss(_check_same, _uncached, cli_run, tmp_path):
    root = _project(tmp_path)
    expected = _uncached(root)
    assert cli_run(ARGS, root).stdout == expected
    changed = 0
    for path in _entries(root):
        data = open(path, "rb").read()
        if b"message" in data:
            open(path, "wb").write(data.replace(b"message", b"messagf"))
            changed += 1
    assert changed
    _check_same(root, expected)


def test_an_entry_with_a_valid_digest_but_a_foreign_shape_is_a_miss(_check_same, _uncached, cli_run, tmp_path):
    # an entry whose digest was made for its tampered payload: the shape check catches it
    root = _project(tmp_path)
    expected = _uncached(root)
    cli_run(ARGS, root)
    head = len(cache_mod._MAGIC) + cache_mod._DIGEST
    for path in _entries(root):
        payload = open(path, "rb").read()[head:]
        payload = payload.replace(b"findings", b"findingz")
        digest = hashlib.blake2b(payload, digest_size=cache_mod._DIGEST).digest()
        open(path, "wb").write(cache_mod._MAGIC + digest + payload)
    _check_same(root, expected)


def test_an_entry_that_builds_other_classes_is_never_unpickled(tmp_path):
    class Boom:
        def __reduce__(self):
            return (os.system, ("echo pwned > " + str(tmp_path / "pwned"),))

    payload = pickle.dumps(("k", Boom()))
    path = tmp_path / "entry.pickle"
    digest = hashlib.blake2b(payload, digest_size=cache_mod._DIGEST).digest()
    path.write_bytes(cache_mod._MAGIC + digest + payload)
    c = cache_mod.Cache(str(tmp_path / "c"))
    c._path = lambda kind, key: str(path)
    assert c.get("file", "k") is None
    assert not (tmp_path / "pwned").exists()


def test_random_bit_flips_never_change_a_result(_uncached, cli_run, tmp_path):
    root = _project(tmp_path)
    expected = _uncached(root)
    rng = random.Random(20)
    for _ in range(6):
        cli_run(ARGS, root)
        for path in _entries(root):
            data = bytearray(open(path, "rb").read())
            for _ in range(3):
                i = rng.randrange(len(data))
                data[i] ^= 1 << rng.randrange(8)
            open(path, "wb").write(bytes(data))
        r = cli_run(ARGS, root)
        assert "Traceback" not in r.stderr and r.stdout == expected


def test_a_fifo_in_place_of_an_entry_does_not_hang(_uncached, cli_run, tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    root = _project(tmp_path)
    expected = _uncached(root)
    cli_run(ARGS, root)
    for path in _entries(root):
        os.unlink(path)
        os.mkfifo(path)
    r = cli_run(ARGS, root)  # cli_run times out after 120 s
    assert r.stdout == expected and "Traceback" not in r.stderr


def test_cache_dir_that_is_a_regular_file_is_ignored(_uncached, cli_run, tmp_path):
    root = _project(tmp_path)
    expected = _uncached(root)
    (root / "not-a-folder").write_text("x")
    r = cli_run(["--cache-dir", "not-a-folder"] + ARGS, root)
    assert r.returncode == 1, r.stderr
    assert r.stdout == expected
    assert "the cache is not used: not-a-folder is not a folder" in r.stderr
    assert (root / "not-a-folder").read_text() == "x"


def test_a_failing_config_creates_nothing(cli_run, tmp_path):
    root = _project(tmp_path)
    bad = root / "conf"
    bad.mkdir()
    (bad / "pyproject.toml").write_text("[tool.npulint]\nno-such-key = 1\n")
    r = cli_run(["--config", "conf/pyproject.toml", "."], root)
    assert r.returncode == 2 and r.stderr.startswith("npulint: error:")
    assert not (bad / ".npulint_cache").exists()
    r = cli_run(["--config", "missing/deeper/pyproject.toml", "."], root)
    assert r.returncode == 2
    assert not (root / "missing").exists()
    assert not (root / ".npulint_cache").exists()


def test_the_shape_check_reaches_every_dataclass_however_deep():
    from npulint.model import Edit, Finding, Fix

    good = Finding("a.py", 1, 1, "NPU103", "m", fix=Fix("f", (Edit(1, 1, 1, 2, "x"),)))
    assert cache_mod._well_formed(({"k": [[], {}, (good,)]}, set(), frozenset()))
    broken = Finding("a.py", 1, 1, "NPU103", "m", fix=Fix("f", (Edit(1, 1, 1, 2, "x"),)))
    del broken.fix.edits[0].__dict__["text"]  # an Edit from a class that had other fields
    for shape in (broken, [broken], ({"k": [[], (broken,)]},), {"k": broken.fix.edits[0]}):
        assert not cache_mod._well_formed(shape)
    extra = Finding("a.py", 1, 1, "NPU103", "m")
    extra.__dict__["other"] = 1
    assert not cache_mod._well_formed([extra])
    deep = good
    for _ in range(70):
        deep = [deep]
    assert not cache_mod._well_formed(deep)  # deeper than any entry npulint writes
