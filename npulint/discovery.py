"""Which files to lint: the paths given, folders walked with default excludes, config
``exclude``/``extend-exclude`` and ``.gitignore`` files (gitignore semantics via pathspec)."""

from __future__ import annotations

import functools
import os
from typing import Iterator, List, Optional, Sequence, Tuple

import pathspec

from npulint.config import ConfigError, Settings
from npulint.paths import normal_abs
from npulint.source import (BASH_INTERPRETERS, PYTHON, SHELL, detect_language, is_shell_candidate_name,
                            language_of, read_head, shebang_interpreter)

try:  # pathspec >= 0.12
    _GitIgnore = pathspec.GitIgnoreSpec
except AttributeError:  # pragma: no cover
    _GitIgnore = None


class _Ignores:
    """The ``.gitignore`` files that apply to one folder, innermost last."""

    def __init__(self, specs: Tuple[Tuple[str, "pathspec.PathSpec"], ...] = ()):
        self.specs = specs

    def with_dir(self, folder: str) -> "_Ignores":
        spec = _read_gitignore(os.path.join(folder, ".gitignore"))
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



_GLOB = set("*?[]!\\/#")


def _read_gitignore(path: str):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    return _Spec(lines)


@functools.lru_cache(maxsize=1)
def _pattern_class():
    """The pattern class pathspec's ``GitIgnoreSpec`` builds its patterns with."""
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
        self.strict = strict
        self.lines = [line for line in lines if self._readable(line)]
        self._spec = None
        self.any = _any_pattern(self.lines)

    def _readable(self, line: str) -> bool:
        import re

        try:
            regex, _ = _pattern_class().pattern_to_regex(line)
            if regex is not None:
                re.compile(regex)
            return True
        except Exception as exc:  # re.error, pathspec's pattern errors
            if self.strict:
                raise ConfigError(f"bad exclude pattern {line!r}: {exc}")
            return False

    @property
    def spec(self):
        if self._spec is None:
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


def _any_pattern(lines: Sequence[str]) -> "Optional[re.Pattern]":
    import re

    parts = []
    for line in lines:
        regex, include = _pattern_class().pattern_to_regex(line)
        if include is None or regex is None:
            continue
        if not isinstance(regex, str) or "(?P=" in regex:
            return None  # not a plain regex pattern: always ask pathspec
        parts.append("(?:" + re.sub(r"\(\?P<\w+>", "(?:", regex) + ")")
    if not parts:
        return None
    try:
        return re.compile("|".join(parts))
    except (re.error, RecursionError, OverflowError):
        return None


def _git_root(folder: str) -> Optional[str]:
    here = folder
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _initial_ignores(folder: str) -> _Ignores:
    """``.gitignore`` files from the repository root down to *folder* (exclusive of deeper ones)."""
    root = _git_root(folder)
    ignores = _Ignores()
    if root is None:
        return ignores.with_dir(folder)
    chain = []
    here = folder
    while True:
        chain.append(here)
        if here == root:
            break
        here = os.path.dirname(here)
    for d in reversed(chain):
        ignores = ignores.with_dir(d)
    return ignores


class Excluder:
    def __init__(self, settings: Settings):
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
        self.rest = _Spec(rest, strict=True) if any(p.strip() for p in rest) else None

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
        if is_dir:
            rel += "/"
            name += "/"
        return self.rest.match_file(rel) or self.rest.match_file(name)


def discover(paths: Sequence[str], settings: Settings, respect_gitignore: bool = True,
             force_exclude: bool = False) -> Tuple[List[Tuple[str, str, bool]], List[str]]:
    """Return ``([(path, language, explicit)], missing_paths)``; each path once, sorted. With
    *force_exclude* (or the setting), a path named explicitly that the excludes match, or that
    lies in a folder they match, is left out as it would be in a walk (ruff's ``--force-exclude``)."""
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
            ignores = _initial_ignores(path) if respect_gitignore else _Ignores()
            for found in _walk(path, ignores, excluder, respect_gitignore):
                if found[0] not in seen:
                    seen.add(found[0])
                    out.append(found)
        else:
            missing.append(raw)
    out.sort(key=lambda item: item[0])
    return out, missing


def _walk(top: str, ignores: _Ignores, excluder: Excluder, respect_gitignore: bool
          ) -> Iterator[Tuple[str, str, bool]]:
    visited = set()
    stack = [(top, ignores, None)]
    while stack:
        folder, ign, real = stack.pop()
        if real is None:
            try:
                real = os.path.realpath(folder)
            except OSError:
                continue
        if real in visited:  # a symlink loop, or two links to one folder
            continue
        visited.add(real)
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
            if excluder.excluded(entry.path, is_dir):
                continue
            if respect_gitignore and ign.ignored(entry.path, is_dir):
                continue
            if not is_dir and lang is None:
                # a file without an extension is a shell script when its first line says
                # bash or a POSIX shell (scripts in bin/ folders, pre-commit's shell type)
                if not _bash_shebang(entry.path):
                    continue
                lang = SHELL
            if is_dir:
                # a folder that is not a link is where its parent really is, under its own
                # name: only links need realpath
                try:
                    link = entry.is_symlink()
                except OSError:
                    link = True
                sub.append((entry.path, None if link else os.path.join(real, entry.name)))
                continue
            yield (entry.path, lang, False)
        for d, d_real in reversed(sub):
            stack.append((d, ign.with_dir(d) if respect_gitignore else ign, d_real))


def _bash_shebang(path: str) -> bool:
    """Whether the file's first line is a ``#!`` naming bash or a POSIX shell (only its first
    bytes are read, and only from a regular file)."""
    head = read_head(path)
    if not head.startswith(b"#!"):
        return False
    first = head.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
    return shebang_interpreter(first) in BASH_INTERPRETERS
