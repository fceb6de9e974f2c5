"""Reading source files: bytes to text as their interpreter reads them, and the comments
that steer npulint (``# noqa``, ``# npulint: skip-file``).

Python is decoded as CPython does (BOM, PEP 263 coding cookie, UTF-8 by default), and a
file ``compile()`` accepts is never unreadable: invalid UTF-8 bytes in comments of a UTF-8
file are kept as lone surrogates (``surrogateescape``). A shell script is bytes to bash: it
is decoded as UTF-8 with ``surrogateescape``, so any byte sequence is readable and the text
encodes back to the very same bytes. In both, a column counts characters, and a byte that is
not part of valid UTF-8 counts as one character.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import stat
import sys
import tokenize
import warnings
from typing import Dict, FrozenSet, List, Optional, Tuple

PYTHON = "python"
SHELL = "shell"

SHELL_SUFFIXES = (".sh", ".bash")
PYTHON_SUFFIXES = (".py", ".pyi")


def language_of(path: str) -> Optional[str]:
    """The language a file's name says (its suffix), or None."""
    lower = path.lower()
    if lower.endswith(PYTHON_SUFFIXES):
        return PYTHON
    if lower.endswith(SHELL_SUFFIXES):
        return SHELL
    return None


# Interpreters whose scripts bash's grammar reads as they do: bash itself and the POSIX
# shells (sh, dash, ash; busybox's sh). Other shells have another grammar or other
# expansion rules (zsh does not split unquoted variables; csh/tcsh, fish and rc are other
# languages; ksh93 has compound variables and its own arrays): their scripts are not bash.
BASH_INTERPRETERS = frozenset({"bash", "sh", "dash", "ash"})
OTHER_SHELLS = frozenset({"zsh", "ksh", "mksh", "pdksh", "oksh", "yash", "csh", "tcsh", "fish", "rc",
                          "es", "nu", "elvish", "xonsh", "pwsh", "posh"})
_SHEBANG = re.compile(r"#![ \t]*([^ \t\r\n]+)([^\r\n]*)")
_VERSIONED = re.compile(r"([a-z]+?)[0-9][0-9.\-]*")


def shebang_interpreter(text: str) -> Optional[str]:
    """The program a ``#!`` first line runs, by its base name without a version
    (``#!/usr/bin/env -S bash -e`` -> ``bash``, ``#!/usr/bin/python3.11`` -> ``python``);
    None without a shebang, or when it names nothing."""
    m = _SHEBANG.match(text)
    if m is None:
        return None
    words = [m.group(1)] + m.group(2).split()
    name = _program(words[0])
    i = 1
    if name == "env":  # env [options] [NAME=VALUE]... program
        while i < len(words):
            w = words[i]
            if w in ("-u", "--unset", "-C", "--chdir", "-a", "--argv0"):
                i += 2
            elif w.startswith("-S") and len(w) > 2:  # -Sbash: the split string starts in the word
                words[i] = w[2:]
                break
            elif w.startswith("-") or "=" in w:
                i += 1
            else:
                break
        if i >= len(words):
            return None
        name = _program(words[i])
        i += 1
    if name == "busybox" and i < len(words):  # #!/bin/busybox sh
        name = _program(words[i])
    return name


def _program(word: str) -> str:
    base = word.replace("\\", "/").rsplit("/", 1)[-1].lower()
    m = _VERSIONED.fullmatch(base)
    return m.group(1) if m else base


def is_bash_script(text: str) -> bool:
    """Whether bash's grammar reads this shell script as its interpreter does: no shebang
    (``bash run.sh``, ``sh run.sh``), or a shebang naming bash or a POSIX shell."""
    if not text.startswith("#!"):
        return True
    return shebang_interpreter(text) in BASH_INTERPRETERS


def language_of_script(head: bytes) -> Optional[str]:
    """The language a file's first line says (a ``#!`` line naming a shell or Python), or None."""
    if not head.startswith(b"#!"):
        return None
    name = shebang_interpreter(head.split(b"\n", 1)[0].decode("utf-8", "surrogateescape"))
    if name in BASH_INTERPRETERS or name in OTHER_SHELLS:
        return SHELL
    if name in ("python", "pypy"):
        return PYTHON
    return None


SNIFF_BYTES = 256  # how much of a file's start is read to find its shebang


class TooBig(Exception):
    """A regular file larger than the limit: not read."""

    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def read_regular(path: str, limit: int = 0) -> bytes:
    """The bytes of the regular file *path*, by a bounded read: opened without blocking (a
    FIFO never hangs the run), checked to be a regular file (a device is never read), its size
    checked first (:class:`TooBig` above *limit*; 0: no limit), and never more than that size
    read (a file growing meanwhile is read as it was). Raises OSError with a clear strerror
    for what is not a regular file."""
    return read_regular_stat(path, limit)[0]


def read_regular_stat(path: str, limit: int = 0) -> Tuple[bytes, os.stat_result]:
    """:func:`read_regular`, and what ``fstat`` said of the file just before it was read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
            raise OSError(0, f"not a regular file ({kind}): not read")
        if limit and st.st_size > limit:
            raise TooBig(st.st_size)
        chunks = []
        left = st.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read_head(path: str, size: int = SNIFF_BYTES) -> bytes:
    """The first *size* bytes of *path* when it is a regular file, else ``b""`` (a FIFO
    or a device is never opened for reading: opened without blocking, then checked)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, size)
    except OSError:
        return b""
    finally:
        os.close(fd)


def detect_language(path: str, head: Optional[bytes] = None) -> Optional[str]:
    """The language of a file: its suffix, else its shebang (*head*, or read from disk)."""
    lang = language_of(path)
    if lang is not None:
        return lang
    return language_of_script(read_head(path) if head is None else head)


def is_shell_candidate_name(name: str) -> bool:
    """A file name without an extension (``train``, not ``.bashrc`` or ``notes.txt``): met in a
    folder walk, such a file is a shell script when its shebang names bash or a POSIX shell."""
    return "." not in name


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
    its per-file overhead (docs/benchmarks.md)."""
    second = data.find(b"\n", data.find(b"\n") + 1)
    head = data if second < 0 else data[:second]
    return head.isascii() and b"coding" not in head


def decode(data: bytes, language: str) -> str:
    """Decode *data* as the interpreter would, or raise :class:`Unreadable`."""
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + 1
        raise Unreadable("binary file (contains a NUL byte)", line=line, binary=True)
    if language != PYTHON:
        # bash reads bytes: any encoding is readable (GBK comments, Latin-1 echo text)
        if data.startswith(codecs.BOM_UTF8):
            data = data[len(codecs.BOM_UTF8):]
        return data.decode("utf-8", "surrogateescape")
    encoding = "utf-8"
    if language == PYTHON and not _plain_utf8_head(data):
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError:
            # an unknown codec in the cookie, a BOM with another cookie; or one of the first two
            # lines is not UTF-8, which CPython accepts in a comment: it has the last word
            where = _cpython_decode_error(data)
            if where is not None:
                if _cookie(data) is None and not data.startswith(codecs.BOM_UTF8):  # no declaration to blame
                    raise Unreadable(f"cannot decode as utf-8: {where[2]} (add a PEP 263 coding declaration or "
                                     "save as UTF-8)", line=where[0], column=where[1])
                raise Unreadable(f"bad encoding declaration: {where[2]}", line=where[0], column=where[1])
            encoding = _cookie(data) or ("utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8")
            text = data.decode(encoding, "surrogateescape")
            return text[1:] if text.startswith("\ufeff") else text
    elif data.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        if isinstance(exc, UnicodeDecodeError) and encoding in ("utf-8", "utf-8-sig"):
            # CPython's tokenizer checks UTF-8 token by token, not in comments: a file it
            # compiles is readable (its bad bytes kept as lone surrogates, so nothing is lost)
            where = _cpython_decode_error(data)
            if where is None:
                text = data.decode(encoding, "surrogateescape")
                return text[1:] if text.startswith("\ufeff") else text
            line, col, reason = where
        else:
            start = getattr(exc, "start", 0)
            line = data.count(b"\n", 0, start) + 1
            col = start - (data.rfind(b"\n", 0, start) + 1) + 1
            reason = exc.reason if hasattr(exc, "reason") else str(exc)
        raise Unreadable(f"cannot decode as {encoding}: {reason}"
                         " (add a PEP 263 coding declaration or save as UTF-8)", line=line, column=col)
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


_PyCF_ONLY_AST = 0x400
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def _cookie(data: bytes) -> Optional[str]:
    """The PEP 263 encoding of the first two lines, read from the bytes (as CPython does), by
    its normal name; None without one."""
    lines = data.split(b"\n", 2)[:2]
    for i, line in enumerate(lines):
        m = _COOKIE.match(line)
        if m is not None:
            name = m.group(1).decode("ascii", "replace").lower().replace("_", "-")
            if name == "utf-8" or name.startswith("utf-8-"):
                return "utf-8"
            if name in ("latin-1", "iso-8859-1", "iso-latin-1") or name.startswith(
                    ("latin-1-", "iso-8859-1-", "iso-latin-1-")):
                return "iso-8859-1"
            return m.group(1).decode("ascii", "replace")
        if i == 0 and not re.match(rb"^[ \t\f]*(?:[#\r\n]|$)", line):
            return None  # the second line counts only after a blank or comment line
    return None


def _cpython_decode_error(data: bytes) -> Optional[Tuple[int, int, str]]:
    """Where CPython's ``compile()`` of *data* (bytes, in a UTF-8 file) fails to decode it:
    ``(line, column, reason)``, or None when it decodes (it may still fail to parse: that is
    a syntax error, reported as such). Compiling runs nothing."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the linted file's SyntaxWarnings are not ours to show
            compile(data, "<npulint>", "exec", _PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        msg = exc.msg or ""
        if msg.startswith(("unknown encoding", "encoding problem")):
            return exc.lineno or 1, 1, msg
        if "'utf-8' codec can't decode" not in msg and "Non-UTF-8" not in msg:
            return None
        line = exc.lineno or 1
        # the first byte on that line that is not UTF-8 (CPython's offset points at the token)
        lines = python_lines(data.decode("utf-8", "surrogateescape"))
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        bad = next((i for i, ch in enumerate(text) if "\udc80" <= ch <= "\udcff"), None)
        col = bad + 1 if bad is not None else (exc.offset or 1)
        raw = text.encode("utf-8", "surrogateescape")
        try:
            raw.decode("utf-8")
            reason = "invalid UTF-8 outside a comment"
        except UnicodeDecodeError as err:
            reason = f"{err.reason} (byte 0x{raw[err.start]:02x} outside a comment)"
        return line, col, reason
    except (ValueError, RecursionError, MemoryError, OverflowError):
        return None
    return None


# ``# noqa`` / ``# noqa: NPU101, NPU102`` (case-insensitive, like flake8 and ruff).
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
# (a form feed before the comment is a blank to CPython's tokenizer)
_SKIP_FILE = re.compile(r"^[ \t\f]*#[ \t]*npulint:[ \t]*skip-file\b", re.MULTILINE)

# A line maps to None (blanket ``# noqa``) or to the set of codes it names.
NoqaMap = Dict[int, Optional[FrozenSet[str]]]


def is_skip_file(text: str, language: str = PYTHON) -> bool:
    """``# npulint: skip-file`` on a line of its own, as a real comment (not a line inside a
    string, a docstring or a here-document)."""
    if "skip-file" not in text or _SKIP_FILE.search(text) is None:
        return False
    comments = _comments(text, language, fallback=False)
    if comments is None:  # does not tokenize: the raw match is all there is
        return True
    return any(not before.strip(" \t\f") and _SKIP_FILE.search(c) for _, _, c, before in comments)


def _comments(text: str, language: str, fallback: bool = True):
    """``(line, column0, comment, before)`` for every comment, *before* being the text of its
    line before it: tokenize for Python; for shell, tree-sitter-bash's comments (a ``#`` in a
    string or a here-document is no comment). Python that does not tokenize: a '#' at the
    start of a line or after a blank or ';' (None without *fallback*)."""
    if language != PYTHON:
        from npulint.shell import comments

        return comments(text)
    comments = _python_comments(text)
    if comments is None and fallback:
        comments = [c for c in (_line_comment(n, line) for n, line in enumerate(python_lines(text), 1)) if c]
    return comments


def _line_comment(lineno: int, line: str):
    """The line-based reading of one line where tokenize fails: its first '#' at the start or
    after a blank or ';' begins a comment, ``(line, column0, comment, before)``; else None."""
    line = line.rstrip("\r\n")
    idx = line.find("#")
    while idx != -1:
        if idx == 0 or line[idx - 1] in " \t;":
            return lineno, idx, line[idx:], line[:idx]
        idx = line.find("#", idx + 1)
    return None


def noqa_directives(text: str, language: str) -> List[Tuple[int, int, int, Optional[Tuple[str, ...]], int, int]]:
    """Every ``# noqa`` directive: ``(line, start, end, codes, cut_start, cut_end)`` with
    1-based columns (end exclusive) of the directive itself, its codes as written (None for a
    blanket one), and the range to delete to drop it whole (:func:`_directives`)."""
    if "noqa" not in text.lower():
        return []
    if language == PYTHON:
        comments = _python_noqa_comments(text)
    else:
        comments = [c for c in _comments(text, language) if _NOQA.search(c[2])]
        if "\r" in text:
            # the carriage return a comment's line ends with is the comment's, as bash reads it
            lines = text.split("\n")
            comments = [(n, col, c + "\r" if lines[n - 1][col + len(c):] == "\r" else c, before)
                        for n, col, c, before in comments]
    return _directives(comments, language)


def _directives(comments, language: str) -> List[Tuple[int, int, int, Optional[Tuple[str, ...]], int, int]]:
    """The directives of *comments*, ``# noqa`` comments as :func:`_comments` gives them. The
    range that drops one whole: with the blanks before it where nothing follows it in its
    comment (and with the code's blanks where it is all of the comment); up to the next ``#``
    where another comment follows it (``# noqa: X  # why`` leaves ``# why``); else the directive
    less its ``#``. Bash reads a carriage return before a line break as part of the comment
    (NPU004): dropping the comment drops it too, so that the line does not end in one."""
    out = []
    for lineno, col, comment, before in comments:
        m = _NOQA.search(comment)
        codes = m.group("codes")
        names = tuple(c.upper() for c in re.split(r"[,\s]+", codes) if c) if codes else None
        start, end = col + m.start() + 1, col + m.end() + 1
        body = comment.rstrip("\n") if language == SHELL else comment.rstrip("\r\n")
        rest = body[m.end():]
        after = rest.lstrip(" \t")
        if not after.strip("\r"):
            head = comment[:m.start()].rstrip(" \t")
            cut_start = col + len(head) + 1 if head else len(before.rstrip(" \t")) + 1
            cut_end = col + len(body) + 1
        elif after.startswith("#"):
            cut_start, cut_end = start, end + len(rest) - len(after)
        else:
            cut_start, cut_end = start + 1, end  # keep the '#'
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


def _python_noqa_comments(text: str):
    """The comments of *text* that hold a ``noqa``, as :func:`_comments` gives them: from
    :func:`_scan_python_comments` where its answer cannot differ from that, else tokenize's."""
    scanned = _scan_python_comments(text, _NOQA)
    if scanned is not None:
        # tokenize would agree with the scan, or fail and leave the line-based reading, which
        # gives these same comments: either way the answer is this one
        if scanned == _fallback_noqa_comments(text):
            return scanned
    return [c for c in _comments(text, PYTHON) if _NOQA.search(c[2])]


def _fallback_noqa_comments(text: str):
    """What :func:`_comments`' line-based reading gives, restricted to comments holding a
    ``noqa`` (so to the lines that have one)."""
    out = []
    lines = None
    for lineno in sorted({text.count("\n", 0, m.start()) + 1 for m in _NOQA_WORD.finditer(text)}):
        if lines is None:
            lines = python_lines(text)
        c = _line_comment(lineno, lines[lineno - 1])
        if c is not None and _NOQA.search(c[2]):
            out.append(c)
    return out


_NOQA_WORD = re.compile(r"(?i)noqa")

# What the comment scanner passes over at once: code that is neither a comment nor a string,
# and whole strings, in tokenize's own forms (its Single3/Double3 and ContStr: a backslash
# escapes any character, a line break too; three quotes always start a triple-quoted string).
# It stops at a comment, at a quote that starts no whole string, and at the end.
_STRING_FORMS = (
    r"'{3}[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'{3}",
    r'"{3}[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"{3}',
    r"(?!'{3})'[^\n'\\]*(?:(?:\\\r\n|\\.)[^\n'\\]*)*'",
    r'(?!"{3})"[^\n"\\]*(?:(?:\\\r\n|\\.)[^\n"\\]*)*"',
)
_PY_SKIP = re.compile(r"""(?:[^#'"]+|%s)*""" % "|".join(_STRING_FORMS), re.S)
_PY_COMMENT = re.compile(r"#[^\r\n]*")
_LONE_CR = re.compile(r"\r(?!\n)")
# PEP 701 (3.12): an f-string's replacement field may hold quotes and comments
_FSTRING = re.compile(r"""(?i)f[rb]?['"]""") if sys.version_info >= (3, 12) else None


def _scan_python_comments(text: str, want=None):
    """The comments tokenize finds in *text*, ``(line, column0, comment, before)`` (only those
    *want*, a compiled pattern, finds something in, when given), read by regular expressions
    over the strings and comments alone; None where that reading could differ from
    tokenize's: a triple-quoted string that does not end (tokenize fails), a quote that
    starts no string after a backslash (tokenize's continued strings), a carriage return
    that ends no line, and on Python 3.12 and later any f-string."""
    if "\r" in text and _LONE_CR.search(text):
        return None
    if _FSTRING is not None and _FSTRING.search(text):
        return None
    out = []
    n = len(text)
    skip = _PY_SKIP.match
    line, counted = 1, 0
    pos = skip(text).end()
    while pos < n:
        if text[pos] == "#":
            end = _PY_COMMENT.match(text, pos).end()
            if want is None or want.search(text, pos, end):
                line += text.count("\n", counted, pos)
                counted = pos
                start = text.rfind("\n", 0, pos) + 1
                out.append((line, pos - start, text[pos:end], text[start:pos]))
            pos = end
        elif text.startswith(text[pos] * 3, pos):
            return None  # a triple-quoted string that does not end
        else:  # tokenize's error token: the quote alone, unless a backslash may continue it
            eol = text.find("\n", pos)
            if "\\" in (text[pos:] if eol < 0 else text[pos:eol]):
                return None
            pos += 1
        pos = skip(text, pos).end()
    return out


def _python_comments(text: str):
    out = []
    # the lines as CPython counts them: a lone carriage return ends one too, which
    # io.StringIO's readline does not split at
    lines = iter(python_lines(text))
    try:
        for tok in tokenize.generate_tokens(lambda: next(lines, "")):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.start[1], tok.string, tok.line[:tok.start[1]]))
    except (tokenize.TokenError, SyntaxError, ValueError):  # ValueError: from 3.12, text with a lone surrogate
        return None
    return out


def suppressed(noqa: NoqaMap, line: int, code: str) -> bool:
    if line not in noqa:
        return False
    codes = noqa[line]
    if codes is None:
        return True
    return any(code.startswith(c) for c in codes)
