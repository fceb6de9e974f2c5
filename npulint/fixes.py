"""Applying automatic fixes: edits to text, the parse check, atomic writes.

A :class:`~npulint.model.Fix` is applied whole or not at all. Fixes whose edits overlap an
edit already taken wait for the next round (the CLI lints again after each round, so a
later fix always sees the text the earlier ones produced). Two fixes that make the very
same edit (two rewrites in one file that each add the same import) share it.
"""

from __future__ import annotations

import codecs
import dataclasses
import io
import os
import re
import stat
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
            # an edit's line breaks become the file's, whatever the rule wrote (a fix text built
            # from the file's own source already holds its ``\r\n``)
            spans.append((a, b, _NEWLINE.sub(newline, e.text) if newline != "\n" or "\r" in e.text else e.text))
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
    """True when the fixed text is still a file its interpreter reads: Python compiles it, or
    bash (as npulint's shell reader judges it) parses it."""
    import warnings

    from npulint.source import PYTHON, SHELL

    if language == SHELL:
        from npulint.shell import parse_script

        try:
            return parse_script(text)[1] is None
        except Exception:  # the reader failed on it: not a text to write
            return False
    if language != PYTHON:
        return True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's code's SyntaxWarnings are not ours to print
            # a text holding bytes that were not UTF-8 (lone surrogates) is compiled as the bytes
            # it will be written as, as CPython reads the file
            source = text.encode("utf-8", "surrogateescape") if _has_surrogates(text) else text
            compile(source, "<fixed>", "exec", 0x400, dont_inherit=True)  # PyCF_ONLY_AST
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    try:  # and LibCST, whose tree the rules read, must read it too
        from npulint.analyse import _parse

        _parse(text, python_accepts=True)
    except Exception:
        return False
    return True


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


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


def fixes_by_path(findings: Sequence[Finding], unsafe: bool = False) -> Dict[str, List[Fix]]:
    """The fixes to apply, by the file the run read (``Finding.file``; the displayed path for a
    finding without one): the safe ones, and the unsafe ones too with *unsafe*."""
    out: Dict[str, List[Fix]] = {}
    for f in findings:
        if applicable(f.fix, unsafe):
            out.setdefault(f.file or f.path, []).append(f.fix)
    return out


# -- fix safety (ruff's applicability) -------------------------------------------------------

def applicable(fix: Optional[Fix], unsafe: bool = False) -> bool:
    """*fix* has edits and ``--fix`` applies it (an unsafe one only with *unsafe*)."""
    return fix is not None and bool(fix.edits) and (unsafe or fix.applicability == "safe")


@dataclasses.dataclass(frozen=True)
class FixPolicy:
    """What a configuration says about fixes (ruff's keys): which rules' fixes may be applied
    (``fixable``, default every rule, plus ``extend-fixable``, less ``unfixable``: the most
    specific selector wins, on a tie ``unfixable``), and which rules' fixes count as safe or
    unsafe against their default (``extend-safe-fixes``, ``extend-unsafe-fixes``: the more
    specific wins, on a tie unsafe)."""

    fixable: Optional[Tuple[str, ...]] = None
    unfixable: Tuple[str, ...] = ()
    extend_fixable: Tuple[str, ...] = ()
    extend_safe_fixes: Tuple[str, ...] = ()
    extend_unsafe_fixes: Tuple[str, ...] = ()

    @classmethod
    def of(cls, settings) -> "FixPolicy":
        return cls(fixable=tuple(settings.fixable) if settings.fixable is not None else None,
                   unfixable=tuple(settings.unfixable), extend_fixable=tuple(settings.extend_fixable),
                   extend_safe_fixes=tuple(settings.extend_safe_fixes),
                   extend_unsafe_fixes=tuple(settings.extend_unsafe_fixes))

    def is_fixable(self, code: str) -> bool:
        from npulint.config import _match_len

        sel = max(_match_len(code, self.fixable if self.fixable is not None else ("ALL",)),
                  _match_len(code, self.extend_fixable))
        return sel >= 0 and sel > _match_len(code, self.unfixable)

    def applicability(self, code: str, fix: Fix) -> str:
        from npulint.config import _match_len

        level = fix.applicability  # (unsafe when the rule's fixes are: RuleBase._as_reported)
        safe, unsafe = _match_len(code, self.extend_safe_fixes), _match_len(code, self.extend_unsafe_fixes)
        if unsafe >= 0 and unsafe >= safe:
            return "unsafe"
        if safe >= 0:
            return "safe"
        return level


DEFAULT_POLICY = FixPolicy()


def resolve_fixes(findings: Sequence[Finding], policy_for=None) -> List[Finding]:
    """*findings* with their fixes as the engine and the configuration make them: the rule's
    default applicability (which the fix carries), ``extend-safe-fixes`` and
    ``extend-unsafe-fixes``, and no fix at all for an ``unfixable`` rule. *policy_for(path)*
    gives the :class:`FixPolicy` of a finding's (displayed) path; default: the rules' defaults
    alone. Resolving resolved findings again changes nothing."""
    out = []
    for f in findings:
        fix = f.fix
        if fix is not None:
            policy = policy_for(f.path) if policy_for is not None else DEFAULT_POLICY
            if not policy.is_fixable(f.code):
                fix = None
            else:
                level = policy.applicability(f.code, fix)
                if level != fix.applicability:
                    fix = dataclasses.replace(fix, applicability=level)
            if fix is not f.fix:
                f = dataclasses.replace(f, fix=fix)
        out.append(f)
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
    if encoding in ("utf-8", "utf-8-sig"):
        # bytes that were not UTF-8 (kept as lone surrogates when read) go back as they were
        return text.encode(encoding, "surrogateescape")
    return text.encode(encoding)


TEMP_PREFIX = ".npulint-"
# ``.npulint-<pid>-<random>.tmp``: the pid says whether the run that made it is still alive
_TEMP_NAME = re.compile(r"\.npulint-(\d+)-[A-Za-z0-9_]+\.tmp\Z")
_live_temps: set = set()  # temporary files this process has open (removed on a signal)


class Changed(Exception):
    """The file on disk no longer holds the bytes that were linted."""


def _read_bounded(path: str, limit: int) -> Optional[bytes]:
    """The bytes of the regular file *path*, or None when it is not a regular file or holds
    more than *limit* bytes (see :func:`npulint.source.read_regular`)."""
    from npulint.source import TooBig, read_regular

    try:
        return read_regular(path, limit)
    except TooBig:
        return None
    except OSError as exc:
        if exc.errno == 0:  # not a regular file
            return None
        raise


def read_for_fix(path: str, limit: int) -> Optional[bytes]:
    """The bytes of *path* to lint and fix, or None when it is not a regular file (a FIFO, a
    device) or is larger than *limit* (the run skips those)."""
    return _read_bounded(path, limit)


def _check_unchanged(path: str, expected: bytes) -> None:
    if _read_bounded(path, len(expected)) != expected:
        raise Changed(path)


class _OwnerLost(Exception):
    """A new file in the folder cannot be given the owner and group of the file it replaces."""


def write_atomic(path: str, data: bytes, keep_mode: bool = True, sync: bool = True,
                 expected: Optional[bytes] = None, owner: Optional[Tuple[int, int]] = None) -> None:
    """Replace *path* by *data*: a temporary file in the same folder, then ``os.replace``,
    keeping the file's permission bits (*keep_mode*; the file must exist then). With
    *expected*, the file must still hold exactly those bytes just before it is replaced, else
    :class:`Changed` is raised and the file is left alone. With *owner* (``(uid, gid)``), the
    temporary file gets them, or :class:`_OwnerLost` is raised and the file is left alone."""
    folder = os.path.dirname(os.path.abspath(path))
    mode = stat.S_IMODE(os.stat(path).st_mode) if keep_mode else None
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=".tmp", dir=folder)
    _live_temps.add(tmp)
    try:
        if owner is not None:
            made = os.fstat(fd)
            if (made.st_uid, made.st_gid) != owner:
                try:
                    os.fchown(fd, *owner)
                except OSError:
                    raise _OwnerLost(path) from None
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        if expected is not None:
            _check_unchanged(path, expected)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        _live_temps.discard(tmp)


def write_fixed(path: str, data: bytes, expected: bytes) -> None:
    """Write a fixed file: through a symbolic link to its target (the link stays a link),
    atomically (a temporary file, then ``os.replace``) unless that would lose what the file
    has: other hard links, extended attributes (ACLs among them), or its owner and group where
    a new file cannot be given them; then in place (not atomic: see docs/fixes.md). Either way
    the file must still hold *expected*, the bytes that were linted, or :class:`Changed` is
    raised and nothing is written. Raises OSError when the file cannot be written, also when
    it is read-only to this process (a rename over it would succeed, and overrule that)."""
    target = os.path.realpath(path)
    st = os.stat(target)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"not a regular file: {target}")
    if not os.access(target, os.W_OK):
        import errno

        raise PermissionError(errno.EACCES, "the file is read-only to this user", path)
    if st.st_nlink <= 1 and not _extended_attributes(target):
        try:
            write_atomic(target, data, expected=expected, owner=(st.st_uid, st.st_gid))
            return
        except _OwnerLost:
            pass
    fd = os.open(target, os.O_RDWR | getattr(os, "O_BINARY", 0))
    try:
        with os.fdopen(fd, "r+b") as fh:
            fd = -1
            if fh.read(len(expected) + 1) != expected:
                raise Changed(path)
            fh.seek(0)
            fh.write(data)
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
    finally:
        if fd != -1:
            os.close(fd)


def _extended_attributes(path: str) -> bool:
    """Whether the file has extended attributes, which a new file would not have."""
    try:
        return bool(os.listxattr(path))
    except (AttributeError, OSError):  # no xattrs on this platform or file system
        return False


def remove_stale_temps(folder: str) -> List[str]:
    """Remove the temporary files that a killed npulint left in *folder* (``.npulint-<pid>-…
    .tmp`` whose process no longer runs); returns their paths."""
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = _TEMP_NAME.match(name)
        if m is None or int(m.group(1)) == os.getpid() or _alive(int(m.group(1))):
            continue
        path = os.path.join(folder, name)
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)
                removed.append(path)
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not ours to judge
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # another user's process, or cannot tell: keep the file
    return True


class removing_temps_on_signals:
    """While active, SIGTERM, SIGHUP and SIGINT first remove the temporary files this process
    is writing, then act as they would have (``kill -9`` cannot be caught: the next ``--fix``
    run removes what it leaves, see :func:`remove_stale_temps`)."""

    SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")

    def __enter__(self):
        import signal
        import threading

        self._old = {}
        if threading.current_thread() is not threading.main_thread():
            return self
        for name in self.SIGNALS:
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                self._old[sig] = signal.signal(sig, self._handle)
            except (OSError, ValueError):
                pass
        return self

    def _handle(self, signum, frame):
        import signal

        for tmp in list(_live_temps):
            try:
                os.unlink(tmp)
            except OSError:
                pass
            _live_temps.discard(tmp)
        old = self._old.get(signum, signal.SIG_DFL)
        if callable(old):
            old(signum, frame)
            return
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    def __exit__(self, *exc):
        import signal

        for sig, old in self._old.items():
            try:
                signal.signal(sig, old)
            except (OSError, ValueError):
                pass
        return False


@dataclasses.dataclass
class FixLoop:
    """What :func:`fix_loop` did: per absolute path, the bytes and text linted first
    (*originals*), the fixed text (*current*) and the number of fixes applied; the last lint
    (*result*) and the first one's findings (*first*)."""

    where: Dict[str, Tuple[str, str]]  # displayed path -> (absolute path, language)
    originals: Dict[str, Tuple[bytes, str]]
    current: Dict[str, str]
    applied: Dict[str, int]
    result: object
    first: List[Finding]
    # a path whose file :func:`write_all` wrote through another of its names (a link) -> that name
    same_as: Dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def changed(self) -> Dict[str, str]:
        return {p: t for p, t in self.current.items() if t != self.originals[p][1]}

    def language(self, path: str) -> str:
        return next(lang for p, lang in self.where.values() if p == path)


def fix_loop(lint, files, stdin, max_file_size: int = 0, unsafe: bool = False, policy_for=None) -> FixLoop:
    """Lint, apply the fixes, lint the fixed text again, until nothing is left to fix (at most
    ``MAX_ROUNDS`` rounds); writes nothing. *lint(overrides=..., stdin_data=...)* runs the
    pipeline over *files* (``(path, language, explicit)``); *stdin* is ``(path, bytes)`` or None.
    Only safe fixes are applied, unsafe ones too with *unsafe*, as :func:`resolve_fixes` makes
    them with *policy_for*; the results' findings are resolved so.

    Every file is read once, before the first round, and every round lints those bytes: the
    edits are positioned on the very text they are applied to (see :func:`write_all` for the
    other half of that promise)."""
    from npulint import pipeline
    from npulint.source import Unreadable, decode

    cwd = os.getcwd()
    where = {pipeline.display_path(p, cwd): (p, lang) for p, lang, _ in files}
    if stdin is not None:
        where[pipeline.display_path(stdin[0], cwd)] = (stdin[0], pipeline.stdin_language(stdin))
    # a finding's file: the path the run read (``Finding.file``), else its displayed path
    target = dict(where)
    target.update({p: (p, lang) for p, lang in where.values()})
    lang_of = {path: lang for path, lang in where.values()}
    limit = max_file_size or (1 << 62)
    linted: Dict[str, bytes] = {}  # abs path -> the bytes every round lints (read once)
    for path, _, _ in files:
        try:
            data = read_for_fix(path, limit)
        except OSError:
            data = None
        if data is not None:
            linted[path] = data
    originals: Dict[str, Tuple[bytes, str]] = {}
    current: Dict[str, str] = {}
    applied: Dict[str, int] = {}
    def resolved(result):
        result.findings = resolve_fixes(result.findings, policy_for)
        return result

    result = resolved(lint(overrides=dict(linted)))
    first = list(result.findings)
    for _ in range(MAX_ROUNDS):
        progress = False
        for key, fixes in sorted(fixes_by_path(result.findings, unsafe).items()):
            if key not in target:
                continue
            path, language = target[key]
            if path not in originals:
                data = stdin[1] if stdin is not None and path == stdin[0] else linted.get(path)
                if data is None:
                    continue
                try:
                    originals[path] = (data, decode(data, language))
                except Unreadable:
                    continue
            text = current.get(path, originals[path][1])
            new, done = fix_text(text, fixes, language)
            if done and new != text:
                current[path] = new
                applied[path] = applied.get(path, 0) + len(done)
                progress = True
        if not progress:
            break
        enc = dict(linted)
        enc.update({p: encode_like(originals[p][0], t, lang_of[p]) for p, t in current.items()})
        stdin_now = stdin
        if stdin is not None and stdin[0] in enc:
            stdin_now = (stdin[0], enc.pop(stdin[0]), *stdin[2:])  # (its language, when given, stays)
        result = resolved(lint(overrides=enc, stdin_data=stdin_now))
    return FixLoop(where, originals, current, applied, result, first)


def write_all(loop: FixLoop, files, skip: Optional[str] = None) -> List[Tuple[str, object]]:
    """Write every changed file of *loop* (but *skip*, standard input's path) with
    :func:`write_fixed`; returns ``(path, error)`` for each file left as it was: the OSError,
    or a sentence when the file changed since it was read. First removes the temporary files
    a killed run left in the folders of *files* (:func:`remove_stale_temps`)."""
    failures: List[Tuple[str, object]] = []
    changed = loop.changed
    with removing_temps_on_signals():
        for folder in sorted({os.path.dirname(os.path.realpath(p)) for p in changed}
                             | {os.path.dirname(p) for p, _, _ in files}):
            remove_stale_temps(folder)
        written: Dict[object, Tuple[str, str]] = {}  # the file each name leads to: (name, text)
        identity = {path: _identity(path) for path in changed}  # before any write makes a new inode
        for path, text in sorted(changed.items()):
            if path == skip:
                continue
            real = identity[path]
            if real in written:
                # one file named twice (a symbolic or hard link beside it): written once; two
                # names whose fixes differ would each undo the other's
                if written[real][1] != text:
                    failures.append((path, f"the same file as {written[real][0]}, which was fixed under that name; "
                                           "its fixes under this one differ (run again)"))
                else:
                    loop.same_as[path] = written[real][0]
                continue
            written[real] = (path, text)
            try:
                write_fixed(path, encode_like(loop.originals[path][0], text, loop.language(path)),
                            expected=loop.originals[path][0])
            except Changed:
                failures.append((path, "changed while npulint was fixing it; left as it is (run again to fix it)"))
            except OSError as exc:
                failures.append((path, exc))
    return failures


def _identity(path: str) -> object:
    """The file *path* names, whatever the name (a symbolic or hard link): its device and inode."""
    try:
        st = os.stat(path)
        return st.st_dev, st.st_ino
    except OSError:
        return os.path.realpath(path)


def unified_diff(path: str, before: str, after: str) -> str:
    import difflib

    from npulint.source import python_lines

    a = python_lines(before)  # lines as the tokenizer (and patch) count them, not str.splitlines
    b = python_lines(after)
    old, new = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
    lines = list(difflib.unified_diff(a, b, fromfile=old, tofile=new))
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


__all__ = ["Changed", "Edit", "Fix", "FixLoop", "FixPolicy", "applicable", "resolve_fixes", "MAX_ROUNDS", "fix_loop", "write_all", "apply_fixes", "fix_text", "parses", "encode_like",
           "write_atomic", "write_fixed", "remove_stale_temps", "removing_temps_on_signals", "unified_diff",
           "fixes_by_path", "newline_of"]
