"""Each file's digest by what ``stat`` says of it, so that a run over unchanged files need not
read them to know they are unchanged (git's index does the same; ruff keys its cache on a
file's modification time).

An entry holds the file's device, inode, size, modification and change times, the time just
before it was read, and the digest of what was read. It stands for the file's bytes only when
``stat`` still gives the same five values *and* both times are older than the recording by more
than :data:`RACY_NS`: a file written again within the time step of its file system (up to two
seconds) could keep all five, so a file that was that recent when it was read is read again on
the next run (and recorded afresh), never taken for what it was. Any other change (new bytes,
``touch``, ``chmod``, a file replaced by a rename) changes the change time or the inode.

The index is one cache entry (kind ``stats``), verified like every other (``docs/cache.md``);
one that fails is empty, which costs reads, never a result.
"""

from __future__ import annotations

import os
import stat
import time
from typing import Dict, Iterable, Optional, Tuple

RACY_NS = 2_000_000_000  # FAT's time step; ext4, XFS, APFS and NTFS record far finer
MAX_ENTRIES = 200_000  # past this the index keeps only the files of the run that writes it

_Signature = Tuple[int, int, int, int, int]
_Entry = Tuple[_Signature, int, str]


def signature(st: os.stat_result) -> _Signature:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def unchanged(st: os.stat_result, sig: _Signature, when: int) -> bool:
    """Whether what ``stat`` says now (*st*) stands for what was read at *when* with signature
    *sig*: the same signature, and not written within RACY_NS of that read."""
    return signature(st) == sig and max(st.st_mtime_ns, st.st_ctime_ns) < when - RACY_NS


def _valid(value) -> bool:
    if type(value) is not dict:
        return False
    for path, entry in value.items():
        if type(path) is not str or type(entry) is not tuple or len(entry) != 3:
            return False
        sig, when, digest = entry
        if type(sig) is not tuple or len(sig) != 5 or any(type(v) is not int for v in sig) or \
                type(when) is not int or type(digest) is not str:
            return False
    return True


class StatIndex:
    """The index of one cache, loaded on first use; :meth:`save` writes what this run recorded."""

    def __init__(self, cache):
        self.cache = cache
        self.key = cache.key(("stats",))
        self._old: Optional[Dict[str, _Entry]] = None
        self._new: Dict[str, _Entry] = {}

    def _entries(self) -> Dict[str, _Entry]:
        if self._old is None:
            self._old = self.cache.get("stats", self.key, check=_valid) or {}
        return self._old

    def digest(self, path: str) -> Optional[str]:
        """The recorded digest of *path*, when ``stat`` says it is the file that was read and
        it was not racy then; else None (the caller reads it)."""
        entry = self._entries().get(path)
        if entry is None:
            return None
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        sig, when, digest = entry
        if not stat.S_ISREG(st.st_mode) or not unchanged(st, sig, when):
            return None
        return digest

    @staticmethod
    def now() -> int:
        """The time to record for a file about to be read (taken before its ``fstat``)."""
        return time.time_ns()

    def record(self, path: str, st: os.stat_result, when: int, digest: str) -> None:
        self._new[path] = (signature(st), when, digest)

    def recorded(self, path: str) -> Optional[str]:
        """The digest this run recorded for *path* (None: not read)."""
        entry = self._new.get(path)
        return entry[2] if entry is not None else None

    def taken(self, paths: Iterable[str]) -> Dict[str, _Entry]:
        """What this run recorded for *paths* (a worker process's share, for :meth:`add`)."""
        return {p: self._new[p] for p in paths if p in self._new}

    def add(self, entries: Dict[str, _Entry]) -> None:
        """Record *entries* (:meth:`taken` in another process) as this run's."""
        self._new.update(entries)

    def save(self) -> None:
        """Write the index when this run recorded a file (a run that read nothing writes nothing)."""
        if not self._new:
            return
        merged = dict(self._entries())
        if len(merged) + len(self._new) > MAX_ENTRIES:
            merged = {}
        merged.update(self._new)
        self.cache.put("stats", self.key, merged)
        self._old, self._new = merged, {}
