"""Suppression: each file's codes, ``per-file-ignores`` and ``# noqa`` (a shell command's
comment line above it too), and NPU003 for ``# noqa`` codes that suppressed nothing."""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Dict, List, Set, Tuple

from npulint.config import Settings
from npulint.model import Finding
from npulint.source import suppressed
from npulint.analyse import FileResult
from npulint.registry import engine


class PerFileIgnores:
    """``per-file-ignores``: each pattern matches a file as ruff's does (globset, against the
    file's name and its absolute path, :mod:`npulint.globs`) or as a gitignore line relative to
    the configuration's folder (``tests`` covers the files under ``tests/``), its ``{a,b}``
    expanded; an initial ``!`` negates it, as in ruff: the codes are ignored in every file the
    rest does not match."""

    def __init__(self, settings: Settings):
        self.root = settings.root
        self.entries = []
        if settings.per_file_ignores:
            import pathspec

            from npulint import globs

            for pattern, codes in settings.per_file_ignores.items():
                negated = pattern.startswith("!")
                body = pattern[1:] if negated else pattern
                self.entries.append((negated, pathspec.GitIgnoreSpec.from_lines(globs.expand(body)),
                                     globs.compile_glob(body), globs.absolute(body, self.root), set(codes)))

    def codes_for(self, path: str) -> Set[str]:
        if not self.entries:
            return set()
        name = os.path.basename(path)
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        if rel == ".." or rel.startswith("../"):  # outside the root: its name (an anchored pattern, "/a.py", never)
            rel = name
        out: Set[str] = set()
        for negated, spec, by_name, by_path, codes in self.entries:
            matched = bool(by_name.fullmatch(name) or by_path.fullmatch(path) or spec.match_file(rel))
            if matched != negated:
                out |= codes
        return out


def _suppress(results: List[FileResult], configs, enabled: Set[str],
              whole: Callable[[], bool] = lambda: True) -> List[Finding]:
    """The findings that survive each file's codes, ``per-file-ignores`` and ``# noqa``; and
    NPU003 for ``# noqa`` codes that suppressed nothing. *whole()*: whether the run holds all
    of its files' programs (asked only when a directive names a code :func:`_unused_noqa` can
    judge only then)."""
    pfis: Dict[int, PerFileIgnores] = {}
    out: List[Finding] = []
    for r in results:
        if not r.findings and not r.directives:
            continue
        fs, fe = configs[r.path]
        pfi = pfis.get(id(fs))
        if pfi is None:
            pfi = pfis[id(fs)] = PerFileIgnores(fs)
        ignored = pfi.codes_for(r.path)
        used: Set[Tuple[int, str]] = set()  # (line, code as written in the directive)
        for f in r.findings:
            if f.code not in fe or any(f.code.startswith(c) for c in ignored):
                continue
            hit = False
            for line in (f.line,) + f.noqa_lines:
                if suppressed(r.noqa, line, f.code):
                    hit = True
                    for c in r.noqa.get(line) or ():
                        if f.code.startswith(c):
                            used.add((line, c))
            if hit:
                continue
            out.append(dataclasses.replace(f, file=r.path) if f.path == r.display and not f.file else f)
        if r.directives and engine().UnusedNoqa.enabled_in(fe) and not r.unjudged \
                and not any(engine().UnusedNoqa.CODE.startswith(c) for c in ignored):
            out.extend(dataclasses.replace(f, file=r.path) for f in _unused_noqa(r, fe, used, whole))
    return out


# The codes whose findings in a file depend on that file alone: the engine's (a syntax error,
# bytes that do not decode, CRLF in a shell script, a bound). Every rule's may depend on other
# files: a value another module binds, a launch that enables AMO, the scopes of another file.
FILE_ALONE = ("NPU000", "NPU001", "NPU002", "NPU004", "NPU005")


def _unused_noqa(r: FileResult, enabled: Set[str], used: Set[Tuple[int, str]],
                 whole: Callable[[], bool] = lambda: True) -> List[Finding]:
    """``# noqa: NPU…`` codes that suppressed nothing in this run. Only npulint's own codes
    that are enabled for the file count: other tools' codes and blanket ``# noqa`` are
    not ours to judge, and a disabled rule could not have fired. A code that may cover a rule's
    (not only :data:`FILE_ALONE`) counts only in a run that holds its files' whole programs
    (*whole()*): a run over some of the files (pre-commit, an editor's buffer) does not see
    what the others would make a rule report, and the fix would drop a directive a run over
    the whole program needs."""
    from npulint.model import Edit, Fix, Span

    unused_noqa = engine().UnusedNoqa
    out = []
    for line, start, end, codes, cut_start, cut_end in r.directives:
        if not codes:
            continue
        unused = [c for c in codes if c.startswith("NPU") and c != unused_noqa.CODE and (line, c) not in used
                  and any(e.startswith(c) for e in enabled if e != unused_noqa.CODE)
                  and (all(e in FILE_ALONE for e in enabled if e.startswith(c) and e != unused_noqa.CODE)
                       or whole())]
        if not unused:
            continue
        keep = [c for c in codes if c not in unused]
        if keep:
            edit = Edit(line, start, line, end, "# noqa: " + ", ".join(keep))
        else:
            edit = Edit(line, cut_start, line, cut_end, "")
        what = ", ".join(unused)
        out.append(unused_noqa.finding(r.display, Span(line, start, line, end),
                                       f"unused `noqa` directive: {what} suppressed nothing on this line",
                                       fix=Fix(f"Remove unused noqa code{'s' if len(unused) > 1 else ''} {what}",
                                               (edit,))))
    return out
