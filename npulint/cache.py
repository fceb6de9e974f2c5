"""The result cache (``.npulint_cache/``): what npulint found in a file, keyed by everything
that can change it, so a second run over unchanged files parses nothing.

Four kinds of entries, all pickles written atomically (a temporary file, then
``os.replace``), so concurrent runs never see half an entry. Every entry is verified before
use (see ``docs/cache.md``): it starts with a magic string and a digest of its payload, the
digest is checked before anything is unpickled, the unpickler builds only npulint's own
classes and plain containers, and the result must have the shape the caller expects (every
dataclass with exactly its fields). An entry that fails any of that (truncated, corrupt,
tampered with, from another Python, not a regular file) is a miss, never an error, and is
rewritten; a corrupt cache can cost time, never change a result.

* ``file``: the first-pass result of one analysed file. Key: the engine key, the file's
  bytes, its path, displayed path and dotted module name (the resolver and the facts use
  it), the language, the settings fingerprint, the enabled codes, and the checkers that
  run on it (the prefilter's choice, or those the follow-up phase forces).
* ``run``: every file's result after the follow-up and project phases (findings before
  ``# noqa`` and ``per-file-ignores``, facts, noqa maps). Key: the engine key and, for every
  linted file, the ``file`` key parts. A hit needs neither LibCST nor the rules imported.
* ``stats``: one entry, each file's digest by what ``stat`` says of it
  (:mod:`npulint.stat_index`), so a run over unchanged files reads none of them.
* ``walk``: the files a folder's walk found, with what they depend on as ``stat`` saw it
  (``discovery._WalkRecord``), so a run over an unchanged tree lists no folder. Key: the
  folder, ``.gitignore`` on or off, the settings' root and excludes.

The engine key covers npulint's version, the Python version, LibCST's install, and a
hash of the sources of ``npulint/`` and the rules, so a development checkout invalidates
its cache on every edit. Standard input is never cached (the pipeline never asks).
"""

from __future__ import annotations

import dataclasses
import functools
import io
import os
import pickle
import sys
from typing import Any, Iterable, List, Optional

try:  # the module itself: hashlib would first load OpenSSL, which a warm run does not need
    from _blake2 import blake2b
except ImportError:  # a Python built without it
    from hashlib import blake2b

CACHE_DIR_NAME = ".npulint_cache"
_FORMAT = 2
_MAGIC = b"NPULINTC"
_DIGEST = 32  # bytes of blake2b over the payload
_MAX_ENTRY = 256 << 20  # an entry larger than this is not read (a real one is far smaller)
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

    h = blake2b(digest_size=16)
    h.update(f"{_FORMAT}|{__version__}|{sys.version}|{sys.platform}".encode())
    try:
        import importlib.util

        spec = importlib.util.find_spec("libcst")  # finds, does not import
        if spec is not None and spec.origin:
            st = os.stat(spec.origin)
            h.update(f"|libcst:{spec.origin}:{st.st_size}:{st.st_mtime_ns}".encode())
    except (ImportError, OSError, ValueError):
        pass
    h.update(_sources_digest())
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def _sources_digest() -> bytes:
    """The engine's and the rules' sources, hashed once per process: the code that runs is
    what this process imported, whatever the files on disk become afterwards (a language
    server, or a test suite's hundreds of in-process runs, would otherwise read them again
    for every run)."""
    h = blake2b(digest_size=16)
    for path in _sources():
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        h.update(os.path.basename(path).encode() + b"\0" + blake2b(data, digest_size=16).digest())
    return h.digest()


def digest(parts: Iterable[Any]) -> str:
    """A key from plain parts (str, bytes, numbers, None, tuples of those)."""
    h = blake2b(digest_size=20)
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

    def key(self, parts: Iterable[Any]) -> str:
        return digest((self.engine, *parts))

    def _path(self, kind: str, key: str) -> str:
        return os.path.join(self.base, kind, key[:2], key + ".pickle")

    def get(self, kind: str, key: str, check=None) -> Optional[Any]:
        """The value stored under *key*, or None; *check* (default: every dataclass in it has
        exactly its fields) must hold of it."""
        data = _read_entry(self._path(kind, key))
        value = _load(data) if data is not None else None
        if not (isinstance(value, tuple) and len(value) == 2 and value[0] == key and
                (check or _well_formed)(value[1])):
            return None
        return value[1]

    def has(self, kind: str) -> bool:
        """Whether this cache may hold an entry of *kind* (its folder exists)."""
        return os.path.isdir(os.path.join(self.base, kind))

    def put(self, kind: str, key: str, value: Any) -> None:
        if self.disabled:
            return
        try:
            self._prepare()
            folder = os.path.dirname(self._path(kind, key))
            os.makedirs(folder, exist_ok=True)
            payload = pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)
            data = _MAGIC + blake2b(payload, digest_size=_DIGEST).digest() + payload
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


def _read_entry(path: str) -> Optional[bytes]:
    """The verified payload of the entry at *path*, or None: opened without blocking (a FIFO
    in its place never hangs the run), a regular file only, of bounded size, with the magic
    string and a digest that matches its payload."""
    from npulint.source import TooBig, read_regular

    try:
        data = read_regular(path, _MAX_ENTRY)
    except (OSError, TooBig):
        return None
    head = len(_MAGIC) + _DIGEST
    if len(data) <= head or not data.startswith(_MAGIC):
        return None
    payload = data[head:]
    if blake2b(payload, digest_size=_DIGEST).digest() != data[len(_MAGIC):head]:
        return None
    return payload


# What an entry may build: npulint's own classes and these plain ones, nothing else.
_PLAIN = {("builtins", n) for n in ("frozenset", "set", "list", "dict", "tuple", "bytearray", "complex",
                                    "slice", "range")}
_PLAIN |= {("copyreg", "_reconstructor"), ("builtins", "object"), ("collections", "OrderedDict")}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _PLAIN or module == "npulint" or module.startswith("npulint."):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a cache class")


def _load(payload: bytes) -> Optional[Any]:
    try:
        return _Unpickler(io.BytesIO(payload)).load()
    except Exception:  # a renamed class, a missing module, a payload from another engine
        return None


_ATOMS = frozenset((str, int, float, bool, bytes, type(None)))
_CONTAINERS = frozenset((list, tuple, set, frozenset, dict))
_FIELDS: dict = {}  # class -> its dataclass field names (False: not a dataclass)


def _well_formed(value: Any, depth: int = 0) -> bool:
    """Every dataclass instance in *value* has exactly its declared fields (a pickle from a
    changed or tampered class would set others, or miss some, and fail later)."""
    t = type(value)
    if t in _ATOMS:
        return True
    if depth > 64:
        return False
    if t is dict:
        return _all_well_formed(value.keys(), depth) and _all_well_formed(value.values(), depth)
    if t in _CONTAINERS:
        return _all_well_formed(value, depth)
    names = _FIELDS.get(t)
    if names is None:
        names = _FIELDS[t] = (frozenset(f.name for f in dataclasses.fields(t))
                              if dataclasses.is_dataclass(t) else False)
    if not names:
        return True
    state = getattr(value, "__dict__", None)
    if state is None:
        return _all_well_formed([getattr(value, n, None) for n in names], depth)
    return state.keys() == names and _all_well_formed(state.values(), depth)


def _all_well_formed(values: Iterable[Any], depth: int) -> bool:
    for v in values:
        t = type(v)
        if t in _ATOMS or (t in _CONTAINERS and not v):
            continue
        if not _well_formed(v, depth + 1):
            return False
    return True


def default_folder(project_root: str) -> str:
    return os.path.join(project_root, CACHE_DIR_NAME)
