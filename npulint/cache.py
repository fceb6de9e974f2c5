"""The result cache (``.npulint_cache/``): what npulint found in a file, keyed by everything
that can change it, so a second run over unchanged files parses nothing.

Two kinds of entries, both pickles written atomically (a temporary file, then
``os.replace``), so concurrent runs never see half an entry; an entry that cannot be read
(truncated, corrupt, from another Python) is a miss, never an error.

* ``file``: the first-pass result of one analysed file. Key: the engine key, the file's
  bytes, its path, displayed path and dotted module name (the resolver and the facts use
  it), the language, the settings fingerprint, the enabled codes, and the checkers that
  run on it (the prefilter's choice, or those the follow-up phase forces).
* ``run``: every file's result after the follow-up and project phases (findings before
  ``# noqa`` and ``per-file-ignores``, facts, noqa maps). Key: the engine key and, for every
  linted file, the ``file`` key parts. A hit needs neither the rules nor the resolver imported.

The engine key covers npulint's version, the Python version (whose parser reads the files), and a
hash of the sources of ``npulint/`` and the rules, so a development checkout invalidates
its cache on every edit. Standard input is never cached (the pipeline never asks).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from typing import Any, Iterable, List, Optional

CACHE_DIR_NAME = ".npulint_cache"
_FORMAT = 1
_GITIGNORE = "# Automatically created by npulint.\n*\n"
_CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                 "# This file is a cache directory tag created by npulint.\n")


def _sources() -> List[str]:
    """The engine's and the rules' source files (no import of the rules)."""
    import npulint

    folders = [os.path.dirname(os.path.abspath(npulint.__file__))]
    checkout_rules = os.path.join(os.path.dirname(folders[0]), "rules")
    if os.path.isfile(os.path.join(checkout_rules, "__init__.py")):
        folders.append(checkout_rules)
    else:
        installed = os.path.join(folders[0], "rules")
        if os.path.isdir(installed):
            folders.append(installed)
    out = []
    for folder in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        out.extend(os.path.join(folder, n) for n in names if n.endswith(".py"))
    return out


def engine_key() -> str:
    from npulint import __version__

    h = hashlib.blake2b(digest_size=16)
    h.update(f"{_FORMAT}|{__version__}|{sys.version}|{sys.platform}".encode())
    for path in _sources():
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        h.update(os.path.basename(path).encode() + b"\0" + hashlib.blake2b(data, digest_size=16).digest())
    return h.hexdigest()


def digest(parts: Iterable[Any]) -> str:
    """A key from plain parts (str, bytes, numbers, None, tuples of those)."""
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        if isinstance(part, bytes):
            h.update(b"b%d:" % len(part))
            h.update(part)
        else:
            text = repr(part).encode("utf-8", "surrogatepass")
            h.update(b"r%d:" % len(text))
            h.update(text)
    return h.hexdigest()


class Cache:
    """Entries under ``<folder>/<engine key>/``; entries of other engine keys are removed
    the first time this engine writes."""

    def __init__(self, folder: str):
        self.folder = os.path.abspath(folder)
        self.engine = engine_key()
        self.base = os.path.join(self.folder, self.engine[:20])
        self._ready = False
        self.disabled = False  # set when the folder cannot be written
        self.hits = 0
        self.misses = 0

    def key(self, parts: Iterable[Any]) -> str:
        return digest((self.engine, *parts))

    def _path(self, kind: str, key: str) -> str:
        return os.path.join(self.base, kind, key[:2], key + ".pickle")

    def get(self, kind: str, key: str) -> Optional[Any]:
        try:
            with open(self._path(kind, key), "rb") as fh:
                value = pickle.load(fh)
        except FileNotFoundError:
            self.misses += 1
            return None
        except Exception:  # corrupt, truncated, unreadable, or from an incompatible engine
            self.misses += 1
            return None
        if not (isinstance(value, tuple) and len(value) == 2 and value[0] == key):
            self.misses += 1
            return None
        self.hits += 1
        return value[1]

    def put(self, kind: str, key: str, value: Any) -> None:
        if self.disabled:
            return
        try:
            self._prepare()
            folder = os.path.dirname(self._path(kind, key))
            os.makedirs(folder, exist_ok=True)
            data = pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)
            from npulint.fixes import write_atomic

            write_atomic(self._path(kind, key), data, keep_mode=False, sync=False)
        except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
            self.disabled = True  # read-only checkout, full disk, or an unpicklable value: run uncached

    def _prepare(self) -> None:
        if self._ready:
            return
        os.makedirs(self.folder, exist_ok=True)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            marker = os.path.join(self.folder, name)
            if not os.path.exists(marker):
                with open(marker, "w", encoding="utf-8") as fh:
                    fh.write(text)
        if not os.path.isdir(self.base):
            import shutil

            for entry in os.listdir(self.folder):  # another engine's entries can never hit again
                other = os.path.join(self.folder, entry)
                if entry != os.path.basename(self.base) and os.path.isdir(other):
                    shutil.rmtree(other, ignore_errors=True)
        self._ready = True


def default_folder(project_root: str) -> str:
    return os.path.join(project_root, CACHE_DIR_NAME)
