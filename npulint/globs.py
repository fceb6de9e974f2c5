"""File patterns as ruff reads them: globset's ``Glob::new`` (the crate ruff builds its
``exclude``, ``extend-exclude`` and ``per-file-ignores`` matchers with; astral-sh/ruff@fca5c7c
crates/ruff_linter/src/settings/types.rs:205-222 and 795-882). ``*`` and ``?`` match ``/`` too
(globset's ``literal_separator`` is off), ``**/`` at the start, ``/**/`` inside and ``/**`` at
the end match any number of folders, ``[...]`` and ``[!...]`` are character classes, ``{a,b}``
are alternatives (nested ones too), and ``\\`` escapes the next character.

npulint reads its patterns as gitignore lines as well (what they meant before, kept): a pattern
matches a path where either reading does (:mod:`npulint.discovery`, :mod:`npulint.suppress`);
:func:`expand` gives the gitignore reading the alternatives of ``{a,b}``, which gitignore lacks."""

from __future__ import annotations

import functools
import itertools
import os
import re
from typing import List, Optional, Tuple


class GlobError(ValueError):
    """A pattern globset rejects (an unclosed ``[`` or ``{``, an unopened ``}``, a dangling ``\\``)."""


# an item of a parsed pattern: ("re", regex, raw text), or ("alt", [branch, ...]) with each
# branch a list of items
_Item = Tuple


def _parse(pattern: str, i: int = 0, depth: int = 0) -> Tuple[List[List[_Item]], int]:
    """The branches of *pattern* from *i* up to the ``}`` that closes a group (*depth* > 0) or
    the end, and the index after it."""
    branches: List[List[_Item]] = [[]]
    items = branches[0]
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                raise GlobError("dangling '\\'")
            items.append(("re", re.escape(pattern[i + 1]), pattern[i:i + 2]))
            i += 2
        elif c == "?":
            items.append(("re", ".", c))
            i += 1
        elif c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            stars = j - i
            at_start = not items
            after_sep = bool(items) and items[-1][0] == "re" and items[-1][2] == "/"
            ends = j == n or (depth > 0 and pattern[j] in ",}")
            if stars >= 2 and (at_start or after_sep) and (ends or pattern[j] == "/"):
                if at_start and not after_sep:
                    if j == n and depth == 0 and len(branches) == 1:
                        items.append(("re", ".*", pattern[i:j]))  # "**" alone: everything
                    else:
                        items.append(("re", "(?:/?|.*/)", pattern[i:j + (0 if ends else 1)]))
                        j += 0 if ends else 1
                else:
                    items.pop()  # the "/" before
                    if ends:
                        items.append(("re", "/.*", "/" + pattern[i:j]))
                    else:
                        items.append(("re", "(?:/|/.*/)", "/" + pattern[i:j + 1]))
                        j += 1
            else:
                items.append(("re", ".*", pattern[i:j]))
            i = j
        elif c == "[":
            regex, j = _char_class(pattern, i)
            items.append(("re", regex, pattern[i:j]))
            i = j
        elif c == "{":
            group, i = _parse(pattern, i + 1, depth + 1)
            items.append(("alt", group))
        elif c == "}":
            if depth == 0:
                raise GlobError("unopened alternate group; missing '{' (maybe escape '}' with '[}]'?)")
            return branches, i + 1
        elif c == "," and depth > 0:
            items = []
            branches.append(items)
            i += 1
        else:
            items.append(("re", re.escape(c), c))
            i += 1
    if depth > 0:
        raise GlobError("unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)")
    return branches, i


def _char_class(pattern: str, i: int) -> Tuple[str, int]:
    """The regex of the class that starts at ``pattern[i] == "["``, and the index after it."""
    j = i + 1
    negated = j < len(pattern) and pattern[j] in "!^"
    if negated:
        j += 1
    start = j
    while j < len(pattern) and (pattern[j] != "]" or j == start):
        j += 1
    if j >= len(pattern):
        raise GlobError("unclosed character class; missing ']'")
    body = pattern[start:j]
    parts = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            if body[k] > body[k + 2]:
                raise GlobError(f"invalid range; '{body[k]}' > '{body[k + 2]}'")
            parts.append(re.escape(body[k]) + "-" + re.escape(body[k + 2]))
            k += 3
        else:
            parts.append(re.escape(body[k]))
            k += 1
    return ("[^" if negated else "[") + "".join(parts) + "]", j + 1


def _regex(branches: List[List[_Item]]) -> str:
    alternatives = []
    for branch in branches:
        alternatives.append("".join(item[1] if item[0] == "re" else "(?:" + _regex(item[1]) + ")" for item in branch))
    return "|".join(alternatives)


# The alternatives a pattern's ``{a,b}`` groups may expand to, at most (globset compiles the
# groups into one regular expression; npulint's gitignore reading needs each alternative, and
# ``{a,b}`` twenty times over is a million of them).
MAX_ALTERNATIVES = 1024


def _count(branch: List[_Item]) -> int:
    """How many texts :func:`_texts` gives for *branch* (capped just past the bound)."""
    n = 1
    for item in branch:
        if item[0] != "re":
            n *= sum(_count(sub) for sub in item[1])
            if n > MAX_ALTERNATIVES:
                return MAX_ALTERNATIVES + 1
    return n


def _texts(branch: List[_Item]) -> List[str]:
    parts = []
    for item in branch:
        if item[0] == "re":
            parts.append([item[2]])
        else:
            parts.append([text for sub in item[1] for text in _texts(sub)])
    return ["".join(p) for p in itertools.product(*parts)]


@functools.lru_cache(maxsize=None)
def compile_glob(pattern: str) -> "re.Pattern":
    """*pattern* as globset reads it, matched whole (``fullmatch``); raises :class:`GlobError`."""
    branches, _ = _parse(pattern)
    return re.compile("(?s:" + _regex(branches) + r")\Z")


def expand(pattern: str) -> List[str]:
    """*pattern* with its ``{a,b}`` groups expanded (``a{b,c}`` -> ``ab``, ``ac``), each
    alternative as written; raises :class:`GlobError` (also past :data:`MAX_ALTERNATIVES`)."""
    branches, _ = _parse(pattern)
    if sum(_count(branch) for branch in branches) > MAX_ALTERNATIVES:
        raise GlobError(f"its {{a,b}} groups expand to more than {MAX_ALTERNATIVES} alternatives")
    return [text for branch in branches for text in _texts(branch)]


def absolute(pattern: str, root: str) -> "re.Pattern":
    """*pattern* made absolute as ruff makes a user's pattern (joined to *root* and normalized,
    ``GlobPath::normalize``), *root*'s own characters matched literally."""
    joined = os.path.normpath(os.path.join(root, pattern))
    base: Optional[str] = os.path.normpath(root)
    while base is not None:
        if joined == base:
            return re.compile(re.escape(base) + r"\Z")
        prefix = base if base.endswith(os.sep) else base + os.sep
        if joined.startswith(prefix):
            rest = joined[len(prefix) - 1:]  # from the separator on
            return re.compile(re.escape(base.rstrip(os.sep)) + compile_glob(rest).pattern)
        parent = os.path.dirname(base)
        base = parent if parent != base else None
    return compile_glob(joined)
