"""Which files to lint: the paths given, folders walked with default excludes, config
``exclude``/``extend-exclude`` and ``.gitignore`` files (gitignore semantics via pathspec)."""

from __future__ import annotations

import functools
import os
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from npulint.config import ConfigError, Settings
from npulint.paths import normal_abs
from npulint.source import (BASH_INTERPRETERS, PYTHON, SHELL, detect_language, is_shell_candidate_name,
                            language_of, read_head, read_regular, shebang_interpreter)
from npulint.stat_index import StatIndex, signature, unchanged

# pathspec is imported where a pattern is first compiled: a run whose walk comes from the
# cache (see _WalkRecord) needs none.


class _Ignores:
    """The ``.gitignore`` files that apply to one folder, innermost last."""

    def __init__(self, specs: Tuple[Tuple[str, "pathspec.PathSpec"], ...] = ()):
        self.specs = specs

    def with_dir(self, folder: str, record: "Optional[_WalkRecord]" = None) -> "_Ignores":
        spec = _read_gitignore(os.path.join(folder, ".gitignore"), record)
        return _Ignores(self.specs + ((folder, spec),)) if spec is not None else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        # The innermost .gitignore with a matching pattern decides (negations included).
        for base, spec in reversed(self.specs):
            rel = _relative(path, base)
            if rel is None:
                continue
            if is_dir:
                rel += "/"
            include = spec.check_file(rel)
            if include is not None:
                return bool(include)
        return False


def _relative(path: str, base: str) -> Optional[str]:
    """*path* relative to *base* with '/' separators, or None when it is not under it (a
    string prefix test: both come from the same walk, absolute and normalized)."""
    prefix = base if base.endswith(os.sep) else base + os.sep
    if path.startswith(prefix):
        rel = path[len(prefix):]
    elif path == base:
        rel = "."
    elif normal_abs(path) and normal_abs(base):
        return None  # lexically outside: what relpath would say, without its cost
    else:
        rel = os.path.relpath(path, base)
        if rel == ".." or rel.startswith(".." + os.sep):
            return None
    return rel.replace(os.sep, "/") if os.sep != "/" else rel



_GLOB = set("*?[]{}!\\/#")


def _read_gitignore(path: str, record: "Optional[_WalkRecord]" = None):
    if record is not None:
        record.note(path)  # (or that there is none)
    try:  # a regular file only, opened without blocking: a FIFO of that name never hangs the walk
        data = read_regular(path)
    except OSError:
        return None
    return _Spec(data.decode("utf-8", "replace").splitlines())


@functools.lru_cache(maxsize=1)
def _pattern_class():
    """The pattern class pathspec's ``GitIgnoreSpec`` builds its patterns with."""
    import pathspec

    return type(pathspec.GitIgnoreSpec.from_lines(["x"]).patterns[0])


class _Spec:
    """The patterns of a ``.gitignore`` (or of the excludes) as pathspec's ``GitIgnoreSpec``,
    behind one regex that matches when any of its patterns does: most paths match none, and
    one search says so instead of one per pattern (a 160-line .gitignore made discovery the
    largest part of a cached run). pathspec's own spec is built only for a path that one of
    the patterns matches (compiling every pattern was most of reading a .gitignore).

    A line pathspec cannot read (``[z-a]``, a lone ``\\``) matches nothing, as in git, which
    skips what it cannot match; with *strict* (patterns from a configuration) it is a
    :class:`ConfigError`."""

    def __init__(self, lines: Sequence[str], strict: bool = False):
        import re

        translated = []  # (line, its regex or None)
        for line in lines:
            try:
                translated.append((line, _pattern_class().pattern_to_regex(line)[0]))
            except Exception as exc:  # pathspec's pattern errors
                self._unreadable(line, exc, strict)
        try:
            self.any = _any_pattern([r for _, r in translated])
            checked = self.any is not None or all(r is None for _, r in translated)
        except re.error:
            checked = False
        if not checked:  # a line whose regex does not compile (or none combined): found one by one, and left out
            kept = []
            for line, regex in translated:
                try:
                    if regex is not None:
                        re.compile(regex)
                    kept.append((line, regex))
                except re.error as exc:
                    self._unreadable(line, exc, strict)
            translated = kept
            self.any = _any_pattern([r for _, r in translated])
        self.lines = [line for line, _ in translated]
        self._spec = None

    @staticmethod
    def _unreadable(line: str, exc: Exception, strict: bool) -> None:
        if strict:
            raise ConfigError(f"bad exclude pattern {line!r}: {exc}")

    @property
    def spec(self):
        if self._spec is None:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(self.lines)
        return self._spec

    def check_file(self, rel: str) -> Optional[bool]:
        """True (ignored), False (re-included by a negation), None (no pattern matches)."""
        if self.any is not None and self.any.search(rel) is None:
            return None
        return self.spec.check_file(rel).include

    def match_file(self, rel: str) -> bool:
        if self.any is not None and self.any.search(rel) is None:
            return False
        return bool(self.spec.match_file(rel))


def _any_pattern(regexes: Sequence[Optional[str]]) -> "Optional[re.Pattern]":
    """One regex matching where any of *regexes* (pathspec's, None for a blank or comment
    line) does; None when one is not a plain regex (then pathspec is always asked). Raises
    ``re.error`` when one of them does not compile."""
    import re

    parts = []
    for regex in regexes:
        if regex is None:
            continue
        if not isinstance(regex, str) or "(?P=" in regex:
            return None  # not a plain regex pattern: always ask pathspec
        parts.append("(?:" + re.sub(r"\(\?P<\w+>", "(?:", regex) + ")")
    if not parts:
        return None
    try:
        return re.compile("|".join(parts))
    except (RecursionError, OverflowError):
        return None


def _one_regex(regexes: Sequence[str]) -> "Optional[re.Pattern]":
    """One regex matching where any of the whole-match *regexes* does, or None for none."""
    import re

    return re.compile("|".join(f"(?:{r})" for r in regexes)) if regexes else None


def _git_root(folder: str, record: "Optional[_WalkRecord]" = None) -> Optional[str]:
    here = folder
    while True:
        if record is not None:  # that there is a .git here, or none (git changes the folder itself)
            record.note(os.path.join(here, ".git"), exists_only=True)
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _initial_ignores(folder: str, record: "Optional[_WalkRecord]" = None) -> _Ignores:
    """``.gitignore`` files from the repository root down to *folder* (exclusive of deeper ones)."""
    root = _git_root(folder, record)
    ignores = _Ignores()
    if root is None:
        return ignores.with_dir(folder, record)
    chain = []
    here = folder
    while True:
        chain.append(here)
        if here == root:
            break
        here = os.path.dirname(here)
    for d in reversed(chain):
        ignores = ignores.with_dir(d, record)
    return ignores


class Excluder:
    """``exclude`` and ``extend-exclude``: a pattern excludes a path where it matches it as a
    gitignore line relative to the settings' root (its ``{a,b}`` expanded; ``!`` re-includes, in
    order), and, where no gitignore line decides, where it matches as ruff's glob does (globset:
    the path's name, for a pattern without ``/``, or its absolute path; ``*`` crosses ``/``;
    :mod:`npulint.globs`)."""

    def __init__(self, settings: Settings):
        from npulint import globs

        patterns = list(settings.exclude) + list(settings.extend_exclude)
        self.root = settings.root
        # Plain names (the defaults: ``.git``, ``build``...) match a path with such a
        # component, whatever the depth: a set lookup instead of a pattern match. Any other
        # pattern (globs, slashes, negations) goes through pathspec, and with a negation
        # every pattern does, since order then matters.
        plain = [p for p in patterns if p and p == p.strip() and not (set(p) & _GLOB)]
        if any(p.startswith("!") for p in patterns):
            plain = []
        self.names = frozenset(plain)
        rest = [p for p in patterns if p not in self.names]
        self.rest = None
        self.by_name = self.by_path = None
        if any(p.strip() for p in rest):
            lines = []
            for p in rest:
                negated = p.startswith("!")
                try:
                    lines.extend(("!" if negated else "") + alt for alt in globs.expand(p[1:] if negated else p))
                except globs.GlobError as exc:
                    raise ConfigError(f"bad exclude pattern {p!r}: {exc}")
            self.rest = _Spec(lines, strict=True)
            ruff = [p for p in rest if p.strip() and not p.startswith("!")]  # (ruff has no negation here)
            by_name = [globs.compile_glob(p).pattern for p in ruff if "/" not in p]
            by_path = [globs.absolute(p, os.path.abspath(self.root)).pattern for p in ruff]
            self.by_name = _one_regex(by_name)
            self.by_path = _one_regex(by_path)

    def excluded_with_parents(self, path: str, is_dir: bool) -> bool:
        """*path* or one of its folders below the settings' root is excluded."""
        if self.excluded(path, is_dir):
            return True
        folder = os.path.dirname(path)
        root = os.path.abspath(self.root)
        while folder.startswith(root + os.sep):
            if self.excluded(folder, True):
                return True
            folder = os.path.dirname(folder)
        return False

    def excluded(self, path: str, is_dir: bool) -> bool:
        name = os.path.basename(path)
        rel = _relative(path, self.root)
        if rel is None:
            rel = name
        if self.names and (name in self.names or any(part in self.names for part in rel.split("/"))):
            return True
        if self.rest is None:
            return False
        # the path relative to the root (an anchored pattern, "/tests", matches only there), or
        # its name where it is outside the root
        verdict = self.rest.check_file(rel + "/" if is_dir else rel)
        if verdict is not None:  # (False: re-included by a negation)
            return verdict
        return bool((self.by_name is not None and self.by_name.match(name)) or
                    (self.by_path is not None and self.by_path.match(path)))


def discover(paths: Sequence[str], settings: Settings, respect_gitignore: bool = True,
             force_exclude: bool = False, cache=None) -> Tuple[List[Tuple[str, str, bool]], List[str]]:
    """Return ``([(path, language, explicit)], missing_paths)``; each path once, sorted. With
    *force_exclude* (or the setting), a path named explicitly that the excludes match, or that
    lies in a folder they match, is left out as it would be in a walk (ruff's ``--force-exclude``).
    With a *cache* (:class:`npulint.cache.Cache`), a folder's walk comes from it while nothing
    it depends on changed (:class:`_WalkRecord`)."""
    excluder = Excluder(settings)
    force_exclude = force_exclude or settings.force_exclude
    seen = set()
    out: List[Tuple[str, str, bool]] = []
    missing: List[str] = []
    for raw in paths:
        path = os.path.abspath(raw)
        if force_exclude and os.path.exists(path) and excluder.excluded_with_parents(path, os.path.isdir(path)):
            continue
        if os.path.isfile(path) or (os.path.exists(path) and not os.path.isdir(path)):
            if path not in seen:
                seen.add(path)
                out.append((path, detect_language(path) or PYTHON, True))
        elif os.path.isdir(path):
            for found in _walk_cached(path, settings, excluder, respect_gitignore, cache):
                if found[0] not in seen:
                    seen.add(found[0])
                    out.append(found)
        else:
            missing.append(raw)
    out.sort(key=lambda item: item[0])
    return out, missing


class _WalkRecord:
    """What a walk's result depends on, as ``stat`` saw it just before the walk read it: each
    folder it listed (the names and kinds of its entries: a folder's times move when one is
    added, removed or renamed), each ``.gitignore`` it read or looked for, each file whose first
    line it read, and whether each folder it searched for the repository root holds a ``.git``.
    The result stands for a later walk while every one of them is unchanged by the stat
    index's rule (:func:`npulint.stat_index.unchanged`). A walk that meets a symbolic link is
    not recorded (what a link points to can change with no folder of the walk changing)."""

    def __init__(self):
        self.when = StatIndex.now()  # before anything is read
        self.seen: Dict[str, Optional[Tuple[int, ...]]] = {}
        self.cacheable = True

    def note(self, path: str, exists_only: bool = False) -> None:
        """Record *path*'s signature (None: there is no such file; ``()``, with *exists_only*:
        there is one, whatever it holds)."""
        if path in self.seen:
            return
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            self.seen[path] = None
            return
        self.seen[path] = () if exists_only else signature(st)

    @staticmethod
    def holds(when: int, seen: Dict[str, Optional[Tuple[int, ...]]]) -> bool:
        for path, sig in seen.items():
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                if sig is None:
                    continue
                return False
            if sig is None:
                return False
            if sig == ():
                continue
            if not unchanged(st, sig, when):
                return False
        return True


def _walk_valid(value) -> bool:
    if type(value) is not tuple or len(value) != 3:
        return False
    when, seen, files = value
    return (type(when) is int and type(seen) is dict and bool(seen) and type(files) is tuple and
            all(type(k) is str and (v is None or (type(v) is tuple and all(type(x) is int for x in v)))
                for k, v in seen.items()) and
            all(type(f) is tuple and len(f) == 3 and type(f[0]) is str and type(f[1]) is str and f[2] is False
                for f in files))


def _walk_cached(top: str, settings: Settings, excluder: Excluder, respect_gitignore: bool,
                 cache) -> List[Tuple[str, str, bool]]:
    """The files of the folder *top*: from the cache while its record holds, else walked (and
    recorded)."""
    if cache is None:
        ignores = _initial_ignores(top) if respect_gitignore else _Ignores()
        return list(_walk(top, ignores, excluder, respect_gitignore))
    key = cache.key(("walk", top, respect_gitignore, os.path.abspath(settings.root),
                     tuple(settings.exclude), tuple(settings.extend_exclude)))
    hit = cache.get("walk", key, check=_walk_valid)
    if hit is not None and _WalkRecord.holds(hit[0], hit[1]):
        return list(hit[2])
    record = _WalkRecord()
    if os.path.realpath(top) != top:
        record.cacheable = False
    ignores = _initial_ignores(top, record) if respect_gitignore else _Ignores()
    found = list(_walk(top, ignores, excluder, respect_gitignore, record))
    if record.cacheable:
        cache.put("walk", key, (record.when, record.seen, tuple(found)))
    return found


def _walk(top: str, ignores: _Ignores, excluder: Excluder, respect_gitignore: bool,
          record: Optional[_WalkRecord] = None) -> Iterator[Tuple[str, str, bool]]:
    """The files to lint under the folder *top*, each once: a file reached both where it is
    and through a symbolic link (a linked folder, or a link to the file) is linted where it
    is, so the cross-file rules never count it twice. Links are followed after every real
    folder of the walk, and a linked folder or file whose target was already reached is
    skipped."""
    visited = set()  # real paths of the folders walked
    found = set()  # real paths of the files yielded
    stack = [(top, ignores, None)]
    linked_dirs: List[Tuple[str, _Ignores]] = []  # followed once the real folders are done
    linked_files: List[Tuple[str, str]] = []  # (path, language), the same
    while stack or linked_dirs:
        if not stack:
            folder, ign = linked_dirs.pop(0)
            stack.append((folder, ign, None))
        folder, ign, real = stack.pop()
        if real is None:
            try:
                real = os.path.realpath(folder)
            except OSError:
                continue
        if real in visited:  # a symlink loop, or a folder reached before
            continue
        visited.add(real)
        if record is not None:
            record.note(folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        if folder != top and any(e.name == "pyvenv.cfg" for e in entries):
            continue  # a virtual environment
        sub = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
                if not is_dir and not entry.is_file():
                    continue  # a FIFO, a device, a socket, a dangling link: never read in a walk
            except OSError:
                continue
            lang = None if is_dir else language_of(entry.name)
            if not is_dir and lang is None and not is_shell_candidate_name(entry.name):
                continue  # never linted: no need to ask the excludes
            try:
                link = entry.is_symlink()
            except OSError:
                link = True
            if record is not None and link:
                record.cacheable = False
            if excluder.excluded(entry.path, is_dir):
                continue
            if respect_gitignore and ign.ignored(entry.path, is_dir):
                continue
            if not is_dir and lang is None:
                # a file without an extension is a shell script when its first line says
                # bash or a POSIX shell (scripts in bin/ folders, pre-commit's shell type)
                if record is not None:
                    record.note(entry.path)
                if not _bash_shebang(entry.path):
                    continue
                lang = SHELL
            if is_dir:
                # a folder that is not a link is where its parent really is, under its own
                # name: only links need realpath
                if link:
                    linked_dirs.append((entry.path, ign.with_dir(entry.path, record) if respect_gitignore else ign))
                else:
                    sub.append((entry.path, os.path.join(real, entry.name)))
                continue
            if link:
                linked_files.append((entry.path, lang))
                continue
            found.add(os.path.join(real, entry.name))
            yield (entry.path, lang, False)
        for d, d_real in reversed(sub):
            stack.append((d, ign.with_dir(d, record) if respect_gitignore else ign, d_real))
    for path, lang in linked_files:
        try:
            real = os.path.realpath(path)
        except OSError:
            continue
        if real not in found:
            found.add(real)
            yield (path, lang, False)


def _bash_shebang(path: str) -> bool:
    """Whether the file's first line is a ``#!`` naming bash or a POSIX shell (only its first
    bytes are read, and only from a regular file)."""
    head = read_head(path)
    if not head.startswith(b"#!"):
        return False
    first = head.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
    return shebang_interpreter(first) in BASH_INTERPRETERS
