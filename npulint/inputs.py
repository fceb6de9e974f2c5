"""A file of a run before its analysis: how it is read (bounded, regular files only), what
stands for it in cache keys, the run's options, and the checker classes (loaded on first use)."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional, Set, Tuple

from npulint.config import Settings


# Files larger than this (bytes) are not parsed: most are generated (torchair's op table) and
# LibCST's tree and the positions need hundreds of bytes of memory per byte of source, so one
# such file would blow the memory budget of a whole run; almost all hand-written modules are
# smaller (docs/benchmarks.md, "Measurements behind the engine's constants").
DEFAULT_MAX_FILE_SIZE = 256 * 1024


def _human(n: int) -> str:
    return f"{n / 1024 ** 2:.1f} MB" if n >= 1024 ** 2 else f"{n / 1024:.0f} KB"


def _too_big_note(display: str, size: int, limit: int) -> str:
    return (f"{display}: not analysed: {_human(size)} is more than --max-file-size ({_human(limit)}); "
            "no finding is reported for it")


@dataclasses.dataclass
class RunOptions:
    """How to run, not what to find: none of these changes a finding (except that a file
    above *max_file_size* is not analysed)."""

    cache: Optional[Any] = None  # an npulint.cache.Cache, or None for no cache
    jobs: Optional[int] = 1  # worker processes; None or 0: automatic
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes; 0: no limit
    # the folders the run's files were found in by walking them whole: a program root inside
    # one has no file the run does not lint (npulint.program.outside_files need not walk it)
    walked: Tuple[str, ...] = ()


class _Checkers:
    """The checker classes, loaded on first use."""

    def __init__(self, source):
        self._source = source
        self._value: Optional[Tuple[type, ...]] = None

    def get(self) -> Tuple[type, ...]:
        if self._value is None:
            src = self._source
            self._value = tuple(src() if callable(src) and not isinstance(src, (list, tuple)) else src)
        return self._value


@dataclasses.dataclass
class _Input:
    path: str
    display: str
    language: str
    explicit: bool
    settings: Settings
    enabled: Set[str]
    data: Optional[bytes] = None
    error: Optional[str] = None  # why the file could not be read
    cacheable: bool = True
    digest: Optional[str] = None  # of data, for cache keys
    on_disk: bool = True  # data is the file's bytes on disk (not an override, not stdin)


# A file over --max-file-size is still read (up to this) so that the prefilter can say whether
# any rule would look at it: only those are named. Past this it is named without being read.
READ_CAP = 64 << 20


def _read(path: str, limit: int = 0, index=None) -> Tuple[Optional[bytes], Optional[str]]:
    """``(bytes, None)``, or ``(None, why)``: only a regular file is read, by a bounded read
    (:func:`npulint.source.read_regular`); one larger than ``max(limit, READ_CAP)`` (*limit*
    0: no limit) gives ``(None, TOO_BIG + size)``. A file read is recorded in *index* (a
    :class:`npulint.stat_index.StatIndex`) with what ``fstat`` said of it just before."""
    from npulint.source import TooBig, read_regular_stat

    try:
        when = index.now() if index is not None else 0
        data, st = read_regular_stat(path, max(limit, READ_CAP) if limit else 0)
        if index is not None:
            index.record(path, st, when, _digest(data))
        return data, None
    except TooBig as exc:
        return None, f"{TOO_BIG}{exc.size}"
    except OSError as exc:
        return None, exc.strerror or str(exc)


TOO_BIG = "\0too big:"  # an _Input.error that is not an error: the file is over max(--max-file-size, READ_CAP), unread


def _too_big(inp) -> Optional[int]:
    error = inp.error
    return int(error[len(TOO_BIG):]) if error is not None and error.startswith(TOO_BIG) else None


def _digest(data: bytes) -> str:
    from npulint.cache import blake2b

    return blake2b(data, digest_size=20).hexdigest()


def _file_key_parts(inp: _Input, modname: Tuple[Optional[str], bool]) -> Tuple:
    if inp.digest is None:
        inp.digest = _digest(inp.data or b"")
    s = inp.settings
    fp = _FINGERPRINTS.get((id(s), id(inp.enabled)))
    if fp is None or fp[0] is not s or fp[1] is not inp.enabled:
        fp = _FINGERPRINTS[(id(s), id(inp.enabled))] = (s, inp.enabled,
                                                        repr((s.root, s.fingerprint(), tuple(sorted(inp.enabled)))))
    return (inp.path, inp.display, inp.language, inp.explicit, modname, fp[2], inp.error, inp.digest)


_FINGERPRINTS: Dict[Tuple[int, int], Tuple[Settings, Set[str], str]] = {}
