"""Applying automatic fixes: edits to text, the parse check, atomic writes.

A :class:`~npulint.model.Fix` is applied whole or not at all. Fixes whose edits overlap an
edit already taken wait for the next round (the CLI lints again after each round, so a
later fix always sees the text the earlier ones produced). Two fixes that make the very
same edit (two rewrites in one file that each add the same import) share it.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import stat
import tempfile
import tokenize
from typing import Dict, List, Optional, Sequence, Tuple

from npulint.model import Edit, Finding, Fix

_NEWLINE = re.compile(r"\r\n|\r|\n")

MAX_ROUNDS = 10  # lint, fix, lint again: stop when nothing is left to fix or after this many


def newline_of(text: str) -> str:
    """The file's newline style: that of its first line break (``\\n`` when it has none)."""
    m = _NEWLINE.search(text)
    return m.group(0) if m else "\n"


def _line_starts(text: str) -> List[int]:
    starts = [0]
    starts.extend(m.end() for m in _NEWLINE.finditer(text))
    return starts


def _offset(starts: List[int], size: int, line: int, column: int) -> Optional[int]:
    if line < 1:
        return None
    if line > len(starts):
        # one past the last line: the end of the text (an edit "to the start of the next line")
        return size if line == len(starts) + 1 and column == 1 else None
    off = starts[line - 1] + column - 1
    end = starts[line] if line < len(starts) else size
    return off if column >= 1 and off <= end else None


def apply_fixes(text: str, fixes: Sequence[Fix]) -> Tuple[str, List[Fix]]:
    """Apply the fixes that do not overlap one another; return the new text and the fixes
    applied. Edits are positioned on *text* (1-based lines and character columns)."""
    starts = _line_starts(text)
    newline = newline_of(text)
    taken: List[Tuple[int, int, str]] = []  # (start, end, replacement)
    applied: List[Fix] = []
    ordered = sorted(fixes, key=lambda f: min(((e.line, e.column) for e in f.edits), default=(0, 0)))
    for fix in ordered:
        spans = []
        ok = bool(fix.edits)
        for e in fix.edits:
            a = _offset(starts, len(text), e.line, e.column)
            b = _offset(starts, len(text), e.end_line, e.end_column)
            if a is None or b is None or b < a:
                ok = False
                break
            spans.append((a, b, e.text.replace("\n", newline) if newline != "\n" else e.text))
        if not ok:
            continue
        fresh = []
        for span in spans:
            if span in taken or span in fresh:
                continue  # the same edit, already made by another fix
            a, b, _ = span
            if any(_overlaps(a, b, x, y) for x, y, _ in taken + fresh):
                ok = False
                break
            fresh.append(span)
        if not ok:
            continue
        taken.extend(fresh)
        applied.append(fix)
    out = text
    for a, b, replacement in sorted(taken, key=lambda t: (t[0], t[1]), reverse=True):
        out = out[:a] + replacement + out[b:]
    return out, applied


def _overlaps(a: int, b: int, x: int, y: int) -> bool:
    if a == b and x == y:
        return a == x  # two different insertions at one point: their order would be a guess
    if a == b:
        return x < a < y
    if x == y:
        return a < x < b
    return a < y and x < b


def parses(text: str, language: str) -> bool:
    """True when the fixed text is still a file npulint and Python read."""
    from npulint.source import PYTHON

    if language != PYTHON:
        return True
    try:
        compile(text, "<fixed>", "exec", 0x400, dont_inherit=True)  # PyCF_ONLY_AST
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def fix_text(text: str, fixes: Sequence[Fix], language: str) -> Tuple[str, List[Fix]]:
    """Apply *fixes* if the result parses; otherwise apply them one by one, keeping those
    that leave a parsable file. Returns the text and the fixes applied."""
    new, applied = apply_fixes(text, fixes)
    if not applied or parses(new, language):
        return new, applied
    for fix in applied:  # one alone; the next round of the fix loop takes the others
        candidate, one = apply_fixes(text, [fix])
        if one and parses(candidate, language):
            return candidate, one
    return text, []


def fixes_by_path(findings: Sequence[Finding]) -> Dict[str, List[Fix]]:
    out: Dict[str, List[Fix]] = {}
    for f in findings:
        if f.fix is not None and f.fix.edits:
            out.setdefault(f.path, []).append(f.fix)
    return out


def encode_like(original: bytes, text: str, language: str) -> bytes:
    """Encode *text* as *original* was: its BOM and its coding declaration."""
    from npulint.source import PYTHON

    encoding = "utf-8"
    if language == PYTHON:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(original).readline)
        except SyntaxError:
            encoding = "utf-8"
    elif original.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    if encoding == "utf-8" and original.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    return text.encode(encoding)


def write_atomic(path: str, data: bytes, keep_mode: bool = True, sync: bool = True) -> None:
    """Replace *path* by *data*: a temporary file in the same folder, then ``os.replace``,
    keeping the file's permission bits (*keep_mode*; the file must exist then)."""
    folder = os.path.dirname(os.path.abspath(path))
    mode = stat.S_IMODE(os.stat(path).st_mode) if keep_mode else None
    fd, tmp = tempfile.mkstemp(prefix=".npulint-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def unified_diff(path: str, before: str, after: str) -> str:
    import difflib

    a = before.splitlines(keepends=True)
    b = after.splitlines(keepends=True)
    old, new = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
    lines = list(difflib.unified_diff(a, b, fromfile=old, tofile=new))
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


__all__ = ["Edit", "Fix", "MAX_ROUNDS", "apply_fixes", "fix_text", "parses", "encode_like", "write_atomic",
           "unified_diff", "fixes_by_path", "newline_of"]
