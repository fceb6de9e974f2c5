"""Reading source files: bytes to text, honouring BOMs and PEP 263 coding cookies,
and the comments that steer npulint (``# noqa``, ``# npulint: skip-file``)."""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from typing import Dict, FrozenSet, List, Optional, Tuple

PYTHON = "python"
SHELL = "shell"

SHELL_SUFFIXES = (".sh", ".bash")
PYTHON_SUFFIXES = (".py", ".pyi")


def language_of(path: str) -> Optional[str]:
    lower = path.lower()
    if lower.endswith(PYTHON_SUFFIXES):
        return PYTHON
    if lower.endswith(SHELL_SUFFIXES):
        return SHELL
    return None


class Unreadable(Exception):
    """The file cannot be read or decoded; the message says why."""

    def __init__(self, message: str, line: int = 1, column: int = 1, binary: bool = False):
        super().__init__(message)
        self.line = line
        self.column = column
        self.binary = binary


# A line and its line break, as CPython's tokenizer counts them (str.splitlines also breaks
# at form feeds and other characters that do not end a line of Python).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def python_lines(text: str) -> List[str]:
    """*text*'s lines with their line breaks, numbered as CPython numbers them."""
    return _LINES.findall(text)


def _plain_utf8_head(data: bytes) -> bool:
    """True when the first two lines (where PEP 263 looks) are ASCII without a ``coding``
    declaration or BOM: the file is UTF-8, as ``tokenize.detect_encoding`` would say, without
    its per-file overhead (a tenth of the main process's share of a 2M-line run)."""
    second = data.find(b"\n", data.find(b"\n") + 1)
    head = data if second < 0 else data[:second]
    return head.isascii() and b"coding" not in head


def decode(data: bytes, language: str) -> str:
    """Decode *data* as the interpreter would, or raise :class:`Unreadable`."""
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + 1
        raise Unreadable("binary file (contains a NUL byte)", line=line, binary=True)
    encoding = "utf-8"
    if language == PYTHON and not _plain_utf8_head(data):
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:  # unknown codec in the cookie, or BOM + other cookie
            raise Unreadable(f"bad encoding declaration: {exc.msg if hasattr(exc, 'msg') else exc}",
                             line=getattr(exc, "lineno", None) or 1)
    elif data.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        start = getattr(exc, "start", 0)
        line = data.count(b"\n", 0, start) + 1
        col = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise Unreadable(f"cannot decode as {encoding}: {exc.reason if hasattr(exc, 'reason') else exc}"
                         " (add a PEP 263 coding declaration or save as UTF-8)", line=line, column=col)
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


# ``# noqa`` / ``# noqa: NPU101, NPU102`` (case-insensitive, like flake8 and ruff).
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_SKIP_FILE = re.compile(r"^[ \t]*#[ \t]*npulint:[ \t]*skip-file\b", re.MULTILINE)

# A line maps to None (blanket ``# noqa``) or to the set of codes it names.
NoqaMap = Dict[int, Optional[FrozenSet[str]]]


def is_skip_file(text: str, language: str = PYTHON) -> bool:
    """``# npulint: skip-file`` on a line of its own, as a real comment (in Python, not a
    line inside a string or docstring)."""
    if "skip-file" not in text or _SKIP_FILE.search(text) is None:
        return False
    if language != PYTHON:
        return True
    comments = _python_comments(text)
    if comments is None:  # does not tokenize: the raw match is all there is
        return True
    return any(_SKIP_FILE.search(c) for _, _, c in comments)


def _comments(text: str, language: str):
    """``(line, column0, comment)`` for every comment: tokenize for Python; for shell (or
    Python that does not tokenize), a '#' at the start of a line or after a blank or ';'."""
    comments = _python_comments(text) if language == PYTHON else None
    if comments is None:
        comments = []
        for lineno, line in enumerate((ln.rstrip("\r\n") for ln in python_lines(text)), 1):
            idx = line.find("#")
            while idx != -1:
                if idx == 0 or line[idx - 1] in " \t;":
                    comments.append((lineno, idx, line[idx:]))
                    break
                idx = line.find("#", idx + 1)
    return comments


def noqa_directives(text: str, language: str) -> List[Tuple[int, int, int, Optional[Tuple[str, ...]], int, int]]:
    """Every ``# noqa`` directive: ``(line, start, end, codes, cut_start, cut_end)`` with
    1-based columns (end exclusive) of the directive itself, its codes as written (None for a
    blanket one), and the range to delete to drop it whole: the directive with the blanks
    before it when it is all of its comment, else just the directive (leaving ``#``)."""
    out = []
    if "noqa" not in text.lower():
        return out
    lines = None
    for lineno, col, comment in _comments(text, language):
        m = _NOQA.search(comment)
        if not m:
            continue
        codes = m.group("codes")
        names = tuple(c.upper() for c in re.split(r"[,\s]+", codes) if c) if codes else None
        start, end = col + m.start() + 1, col + m.end() + 1
        cut_start, cut_end = start + 1, end  # keep the '#'
        if m.start() == 0 and not comment[m.end():].strip():
            if lines is None:  # numbered as the tokenizer numbers them (not str.splitlines)
                lines = [ln.rstrip("\r\n") for ln in python_lines(text)]
            before = lines[lineno - 1][:col] if lineno - 1 < len(lines) else ""
            cut_start, cut_end = len(before.rstrip(" \t")) + 1, col + len(comment.rstrip("\r\n")) + 1
        out.append((lineno, start, end, names, cut_start, cut_end))
    return out


def noqa_map(text: str, language: str, directives=None) -> NoqaMap:
    """Map line numbers to their ``# noqa`` directive; comments only, never string contents.
    *directives* (from :func:`noqa_directives`) saves reading the comments again."""
    result: NoqaMap = {}
    if directives is None:
        directives = noqa_directives(text, language)
    for lineno, _, _, codes, _, _ in directives:
        previous = result.get(lineno, frozenset())
        if codes is None or previous is None:
            result[lineno] = None
        else:
            result[lineno] = previous | frozenset(codes)
    return result


def _python_comments(text: str):
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.start[1], tok.string))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return out


def suppressed(noqa: NoqaMap, line: int, code: str) -> bool:
    if line not in noqa:
        return False
    codes = noqa[line]
    if codes is None:
        return True
    return any(code.startswith(c) for c in codes)
