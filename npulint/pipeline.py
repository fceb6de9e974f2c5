"""The lint pipeline: read, prefilter, parse once, traverse once with every active rule,
then the project-wide phase, then suppression (``per-file-ignores``, ``# noqa``)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import sys
import warnings
import threading
import traceback
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import pathspec

from npulint.config import Settings
from npulint.model import Finding, Span
from npulint.paths import module_name, normal_abs
from npulint.source import PYTHON, NoqaMap, Unreadable, decode, is_skip_file, noqa_directives, noqa_map, suppressed

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst

    from npulint.checker import Checker, FileContext

# LibCST, the checker context and the resolver are imported only when a file has to be
# parsed: a run whose files all come from the cache, or that the prefilter skips, never
# pays for them. ``pipeline.cst`` still names LibCST (PEP 562).


def __getattr__(name: str):
    if name == "cst":
        import libcst

        return libcst
    raise AttributeError(name)


# Files larger than this (bytes) are not parsed: most are generated (torchair's 2.9 MB op
# table) and LibCST's tree and the positions need 400-750 bytes of memory per byte of source
# (that file: 1.1 GB and 27 s, measured before the engine's time on ``ast``, which needed
# about 120), so one such file would blow the memory budget of a whole run. Almost all
# hand-written modules are smaller (Ascend/pytorch: 8 of 1,456 files are larger).
DEFAULT_MAX_FILE_SIZE = 256 * 1024


def _human(n: int) -> str:
    return f"{n / 1024 ** 2:.1f} MB" if n >= 1024 ** 2 else f"{n / 1024:.0f} KB"


def _too_big_note(display: str, size: int, limit: int) -> str:
    return (f"{display}: not analysed: {_human(size)} is more than --max-file-size ({_human(limit)}); "
            "no finding is reported for it")


@dataclasses.dataclass
class FileResult:
    path: str
    display: str
    language: str
    findings: List[Finding] = dataclasses.field(default_factory=list)
    facts: Dict[str, List[Any]] = dataclasses.field(default_factory=dict)
    noqa: NoqaMap = dataclasses.field(default_factory=dict)
    parsed: bool = False
    skipped: bool = False  # binary found by walk, or ``# npulint: skip-file``
    lines: int = 0
    # the file's ``# noqa`` directives (line, start, end, codes), kept only when NPU003 is on
    directives: List[Tuple[int, int, int, Optional[Tuple[str, ...]], int, int]] = \
        dataclasses.field(default_factory=list)
    # the rules that read the file could not (a syntax error, CRLF or another shell's script):
    # whether its ``# noqa`` codes are used is unknown, and NPU003 says nothing about them
    unjudged: bool = False


@dataclasses.dataclass
class RunResult:
    findings: List[Finding]
    files: int
    parsed: int
    lines: int
    notes: List[str] = dataclasses.field(default_factory=list)  # for stderr: files not analysed, and why
    cached: bool = False  # answered whole from the cache


def display_path(path: str, cwd: Optional[str] = None) -> str:
    cwd = cwd or os.getcwd()
    prefix = cwd if cwd.endswith(os.sep) else cwd + os.sep
    if path.startswith(prefix) and os.path.isabs(path):
        return path[len(prefix):]
    if normal_abs(path) and normal_abs(cwd) and path != cwd:
        return path  # lexically outside the working folder: relpath would start with ".."
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows
        return path
    if rel.startswith(".." + os.sep) or rel == "..":
        return path
    return rel


UNUSED_NOQA = "NPU003"

_PyCF_ONLY_AST = 0x400
_CPYTHON_RECURSION_LIMIT = 1000  # CPython's default: what ``python file.py`` accepts


@functools.lru_cache(maxsize=64)
def _needed_checkers(checker_classes: Tuple[type, ...], enabled: FrozenSet[str]) -> FrozenSet[type]:
    """Checkers with an enabled code, and the providers of the fact topics those consume."""
    own = {c for c in checker_classes if c.codes() & enabled}
    topics = {t for c in own for t in c.consumes}
    needed = own | {c for c in checker_classes if set(c.provides) & topics}
    from npulint.lintrule import with_analyses

    return frozenset(with_analyses(sorted(needed, key=checker_classes.index)))


@functools.lru_cache(maxsize=16)
def _token_prefixes(checker_classes: Tuple[type, ...], language: str) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """The prefilter tokens of *language*'s checkers that share a first four characters, in
    groups with their common prefix: one substring test of the prefix settles every token of
    a group in the files that lack it, which is most files (``npu_``: 8 of the 17 Python
    tokens; on 2M synthetic lines the token tests were a quarter of a two-process run, all
    of it in the main process)."""
    tokens = sorted({t for c in checker_classes if c.language == language for g in c.tokens for t in g})
    heads: Dict[str, List[str]] = {}
    for t in tokens:
        if len(t) >= 4:
            heads.setdefault(t[:4], []).append(t)
    return tuple((os.path.commonprefix(ts), tuple(ts)) for ts in heads.values() if len(ts) >= 2)


@functools.lru_cache(maxsize=16)
def _scanners(checker_classes: Tuple[type, ...], language: str) -> Tuple[type, ...]:
    """The checkers of *language* that read facts from the text of files nobody parses."""
    from npulint.checker import Checker

    return tuple(c for c in checker_classes if c.language == language and c.scan.__func__ is not Checker.scan.__func__)


def _cpython_check(text: str, top_lines: Optional[List[int]] = None) -> Optional[Tuple[str, int, int, str]]:
    """Compile *text* with CPython's own parser (fast, C) before LibCST sees it.

    LibCST's native parser crashes the process on a few thousand nested brackets and takes
    minutes on very long operator chains; CPython rejects both at once (``too many nested
    parentheses``; ``maximum recursion depth exceeded during ast construction``), and its
    syntax errors carry exact positions. Returns ``("deep"|"syntax", line, col, message)``
    or None when CPython accepts the file. *top_lines* receives the line of each top-level
    statement (the first line of its first token) and, for a class, of each statement of its
    body, for FileContext's positions.
    """
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(_CPYTHON_RECURSION_LIMIT)
    caught = warnings.catch_warnings()
    caught.__enter__()
    warnings.simplefilter("ignore")  # the linted file's SyntaxWarnings are not the user's terminal's
    try:
        try:
            tree = compile(text, "<npulint>", "exec", flags=_PyCF_ONLY_AST, dont_inherit=True)
        except UnicodeEncodeError:
            # bytes that are not UTF-8, in comments (source.decode kept them as lone
            # surrogates): compile the bytes themselves, as CPython reads the file
            tree = compile(text.encode("utf-8", "surrogateescape"), "<npulint>", "exec", flags=_PyCF_ONLY_AST,
                           dont_inherit=True)
    except SyntaxError as exc:
        return "syntax", exc.lineno or 1, exc.offset or 1, exc.msg or "invalid syntax"
    except (RecursionError, MemoryError):
        return "deep", 1, 1, "nested too deeply for Python's parser (maximum recursion depth exceeded)"
    except ValueError as exc:  # e.g. source code string cannot contain null bytes
        return "syntax", 1, 1, str(exc)
    finally:
        caught.__exit__(None, None, None)
        sys.setrecursionlimit(old)
    if top_lines is not None:  # (line, the lines of a class's own statements)
        top_lines.extend((stmt.lineno, [s.lineno for s in stmt.body] if type(stmt).__name__ == "ClassDef" else None)
                         for stmt in tree.body)
    # Python < 3.11 builds such trees without a recursion check; LibCST would take minutes.
    # 3.11+ checks while building the tree (about 3,000 levels at the limit set above), so
    # the walk, 6% of a run that parses, is only needed before 3.11.
    if sys.version_info >= (3, 11):
        return None
    deep = _deeper_than(tree, _MAX_TREE_DEPTH)
    if deep is not None:
        return ("deep", getattr(deep, "lineno", 1), (getattr(deep, "col_offset", 0) or 0) + 1,
                f"nested more than {_MAX_TREE_DEPTH} levels deep (e.g. a very long chain of operators)")
    return None


_MAX_TREE_DEPTH = 2900  # about what CPython 3.11+ accepts at its default recursion limit


def _deeper_than(tree, limit: int):
    """A node of *tree* deeper than *limit*, found without recursion; None if there is none."""
    import ast

    stack = [(tree, 1)]
    children = ast.iter_child_nodes
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return node
        for child in children(node):
            stack.append((child, depth + 1))
    return None


def lint_text(path: str, display: str, language: str, text: str, settings: Settings,
              checker_classes: Sequence[type], enabled: Set[str], force: Sequence[type] = ()) -> FileResult:
    result = _lint_text(path, display, language, text, settings, checker_classes, enabled, force)
    return _with_directives(result, text, enabled)


def _lint_text(path: str, display: str, language: str, text: str, settings: Settings,
               checker_classes: Sequence[type], enabled: Set[str], force: Sequence[type] = ()) -> FileResult:
    result, active = _prefilter(path, display, language, text, checker_classes, enabled, force)
    if active is None:
        return result
    return _analyse(result, text, settings, active, enabled)


def _prefilter(path: str, display: str, language: str, text: str, checker_classes: Sequence[type],
               enabled: Set[str], force: Sequence[type] = ()) -> Tuple[FileResult, Optional[List[type]]]:
    """The file's result so far and the checkers to run on it, or None when nothing has to
    be parsed (cheap: substring tests on the text)."""
    result = FileResult(path, display, language, lines=text.count("\n") + (1 if text and not text.endswith("\n") else 0))
    if is_skip_file(text, language):
        result.skipped = True
        return result, None
    classes = tuple(checker_classes)
    needed = _needed_checkers(classes, frozenset(enabled))
    present: Dict[str, bool] = {}  # token -> in the text, for all checkers
    for prefix, members in _token_prefixes(classes, language):
        if prefix not in text:  # none of the tokens that start with it can be there
            for token in members:
                present[token] = False
    candidates = [c for c in checker_classes if c.language == language and c.wants(text, path, present)]
    active = [c for c in candidates if c in needed]
    active += [c for c in force if c not in active]
    if not active and not (candidates and ("NPU001" in enabled or (language != PYTHON and (
            "NPU004" in enabled or "NPU005" in enabled)))):
        # nothing here any enabled rule looks at (NPU001 alone still parses what rules would);
        # checkers that would piggyback on a parse read their facts from the text instead
        for c in _scanners(classes, language):
            if c in needed:
                for topic, facts in (c.scan(text, path) or {}).items():
                    result.facts.setdefault(topic, []).extend(facts)
        return result, None
    # parsed anyway: checkers that only piggyback on a parse join cheaply
    active += [c for c in checker_classes if c in needed and c.piggyback and c.language == language
               and c not in active and any(t in text for t in c.piggyback)]
    if language != PYTHON and not active:
        active = candidates  # NPU001/NPU004/NPU005 alone: shell checkers read the script themselves (they report only what is on)
    return result, active


def _analyse(result: FileResult, text: str, settings: Settings, active: Sequence[type],
             enabled: Set[str]) -> FileResult:
    """Parse the file once and run *active* over it in one traversal."""
    path, display = result.path, result.display
    if result.language != PYTHON:
        return _lint_other(result, text, settings, active, enabled)
    import libcst as cst

    from npulint.checker import FileContext
    from npulint.semantic import Walker

    top_lines: List[Tuple[int, Optional[List[int]]]] = []
    problem = _cpython_check(text, top_lines)
    if problem is not None:  # CPython decides what is a syntax error (NPU001), with its positions
        kind, line, col, msg = problem
        return _syntax_error(result, text, enabled, line, col, msg)
    try:
        module = _parse(text, python_accepts=True)
    except cst.ParserSyntaxError as exc:
        msg = " ".join(str(exc.message).split())
        return _syntax_error(result, text, enabled, exc.raw_line, exc.raw_column + 1,
                             f"npulint's parser (LibCST) cannot read this file, although Python accepts it: {msg}")
    except RecursionError:
        return _nested_too_deep(result, text, enabled)
    result.parsed = True
    ctx = FileContext(path, display, text, module, settings, enabled, top_lines=top_lines)
    errors: List[Finding] = []

    def on_error(checker: Checker, exc: BaseException, node: Optional[cst.CSTNode]) -> None:
        errors.append(_internal_error(ctx, checker, exc, node))

    from npulint.lintrule import Analysis, with_analyses

    checkers = []
    for cls in with_analyses(active):  # shared analyses first: their hooks run before their rules'
        checker = cls(ctx)
        if isinstance(checker, Analysis):
            ctx.analyses[cls] = checker
        checkers.append(checker)
    walker = Walker(ctx.sem, checkers, on_error)
    try:
        walker.walk(module)
        for checker in checkers:
            if checker in walker.disabled:
                continue
            try:
                checker.finish()
            except RecursionError:
                raise
            except Exception as exc:
                on_error(checker, exc, None)
    except RecursionError:
        return _nested_too_deep(result, text, enabled)
    except Exception as exc:  # an engine bug: keep going with the other files
        _release(ctx, checkers)
        if "NPU000" in enabled:
            errors.append(Finding(display, 1, 1, "NPU000", f"internal error in npulint's engine: "
                                  f"{type(exc).__name__}: {exc} (please report this)", 1, 1))
        result.findings.extend(errors)
        return _with_noqa(result, text)
    result.findings.extend(ctx.findings)
    if "NPU000" in enabled:
        result.findings.extend(errors)
    result.facts = ctx.facts
    _release(ctx, checkers)
    return _with_noqa(result, text)


def _release(ctx: "FileContext", checkers: Sequence["Checker"]) -> None:
    for checker in checkers:
        try:
            checker.release()
        except Exception:  # nothing to report: the file's findings are already taken
            pass
    ctx.release()


def _lint_other(result: FileResult, text: str, settings: Settings, active: Sequence[type],
                enabled: Set[str]) -> FileResult:
    """Files that are not Python (shell scripts): each checker parses the text itself, in
    ``finish()``, and reports NPU001 for what it cannot parse."""
    from npulint.checker import ShellContext

    ctx = ShellContext(result.path, result.display, text, settings, enabled)
    result.parsed = True
    from npulint.lintrule import Analysis, with_analyses

    for cls in with_analyses(active):
        try:
            checker = cls(ctx)
            if isinstance(checker, Analysis):
                ctx.analyses[cls] = checker
            checker.finish()
        except RecursionError:
            if "NPU001" in enabled:
                ctx.findings.append(Finding(result.display, 1, 1, "NPU001",
                                            "file is nested too deeply to analyse (recursion limit)", 1, 1))
        except Exception as exc:
            if "NPU000" in enabled:
                tb = traceback.extract_tb(exc.__traceback__)
                where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
                codes = ", ".join(sorted(cls.codes()))
                ctx.findings.append(Finding(result.display, 1, 1, "NPU000",
                                            f"internal error in {cls.__name__} ({codes}): {type(exc).__name__}: "
                                            f"{exc}{where} (this file's other findings are still reported; "
                                            "please report this)", 1, 1))
    result.findings.extend(ctx.findings)
    result.facts = ctx.facts
    result.unjudged = ctx.unjudged
    return _with_noqa(result, text)


def _expand_indentation_tabs(text: str) -> str:
    """Leading tabs expanded to the next multiple of 8, as CPython's tokenizer counts them."""
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip(" \t\f")
        indent = line[:len(line) - len(stripped)]
        out.append((indent.expandtabs(8) if "\t" in indent else indent) + stripped)
    return "".join(out)


_SURROGATE = re.compile("[\udc80-\udcff]")


def _parse(text: str, python_accepts: bool) -> "cst.Module":
    """LibCST's parse; LibCST's tokenizer rejects some tab/space indentation that CPython
    accepts, so a file Python accepts is retried with its leading tabs expanded (line
    numbers are unchanged; columns on those lines count the expanded indentation)."""
    import libcst as cst

    if not text.isascii() and _SURROGATE.search(text):
        # bytes that are not UTF-8, in comments (source.decode kept them as lone surrogates,
        # which LibCST cannot take): one replacement character each, so columns stay
        text = _SURROGATE.sub("\ufffd", text)
    with _parser_nodes_unvalidated():
        try:
            return cst.parse_module(text)
        except cst.ParserSyntaxError:
            if not python_accepts or "\t" not in text:
                raise
            return cst.parse_module(_expand_indentation_tabs(text))


def _no_validation(self) -> None:
    pass


@contextlib.contextmanager
def _parser_nodes_unvalidated():
    """While LibCST's parser builds a tree, its nodes skip ``CSTNode.__post_init__`` (which
    only calls ``_validate``: a quarter of a parse). The parser builds them from source its
    grammar accepted, so the check cannot fail there; every node built otherwise (the fixes'
    ``with_changes``, LibCST's own transforms) is validated as before, since the hook is put
    back when the parse returns or raises. One parse runs at a time in a process."""
    from libcst._nodes.base import CSTNode

    original = CSTNode.__dict__.get("__post_init__")
    if original is None:  # pragma: no cover - another LibCST
        yield
        return
    CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
    try:
        yield
    finally:
        CSTNode.__post_init__ = original  # type: ignore[method-assign]


def _syntax_error(result: FileResult, text: str, enabled: Set[str], line: int, col: int, msg: str) -> FileResult:
    result.unjudged = True
    if "NPU001" in enabled:
        result.findings.append(Finding(result.display, line, col, "NPU001", f"syntax error: {msg}", line, col))
    return _with_noqa(result, text)


def _nested_too_deep(result: FileResult, text: str, enabled: Set[str]) -> FileResult:
    result.unjudged = True
    if "NPU001" in enabled:
        result.findings.append(Finding(result.display, 1, 1, "NPU001",
                                       "file is nested too deeply to analyse (recursion limit)", 1, 1))
    return _with_noqa(result, text)


def _internal_error(ctx: FileContext, checker: Checker, exc: BaseException, node) -> Finding:
    span = Span(1, 1, 1, 1)
    if node is not None:
        try:
            span = ctx.span(node)
        except Exception:
            pass
    codes = ", ".join(sorted(type(checker).codes()))
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    return Finding(ctx.display, span.line, span.column, "NPU000",
                   f"internal error in {type(checker).__name__} ({codes}): {type(exc).__name__}: {exc}{where} "
                   "(this file's other findings are still reported; please report this)",
                   span.end_line, span.end_column)


def _with_noqa(result: FileResult, text: str) -> FileResult:
    if result.findings or result.facts:
        result.noqa = noqa_map(text, result.language)
    return result


class PerFileIgnores:
    def __init__(self, settings: Settings):
        self.root = settings.root
        self.entries = [(pathspec.GitIgnoreSpec.from_lines([pattern]), set(codes))
                        for pattern, codes in settings.per_file_ignores.items()]

    def codes_for(self, path: str) -> Set[str]:
        if not self.entries:
            return set()
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        out: Set[str] = set()
        for spec, codes in self.entries:
            if spec.match_file(rel) or spec.match_file(os.path.basename(path)):
                out |= codes
        return out


@dataclasses.dataclass
class RunOptions:
    """How to run, not what to find: none of these changes a finding (except that a file
    above *max_file_size* is not analysed)."""

    cache: Optional[Any] = None  # an npulint.cache.Cache, or None for no cache
    jobs: Optional[int] = 1  # worker processes; None or 0: automatic
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes; 0: no limit


def run(files: Sequence[Tuple[str, str, bool]], settings: Settings, checker_classes,
        enabled: Set[str], stdin: Optional[Tuple[str, bytes]] = None,
        settings_for: Optional[Callable[[str], Tuple[Settings, Set[str]]]] = None,
        overrides: Optional[Dict[str, bytes]] = None, options: Optional[RunOptions] = None) -> RunResult:
    """Lint *files* (``(abs_path, language, explicit)``) and optionally one stdin buffer
    (``(abs_path_it_stands_for, bytes)``). *settings_for* gives each file its own settings
    and enabled codes (hierarchical configuration); without it, *settings* and *enabled*
    apply to every file, and in any case *enabled* must cover every file's codes.
    *overrides* maps absolute paths to contents to lint instead of what is on disk (the
    fix loop and ``--diff`` lint fixed text before, or without, writing it).
    *checker_classes* is a sequence, or a callable returning one (called only when some
    file has to be analysed: a run answered from the cache never imports the rules)."""
    return _in_big_stack(lambda: _run(files, settings, checker_classes, enabled, stdin, settings_for,
                                      overrides or {}, options or RunOptions()))


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


def _read(path: str, limit: int = 0) -> Tuple[Optional[bytes], Optional[str]]:
    """``(bytes, None)``, or ``(None, why)``: only a regular file is read, by a bounded read
    (:func:`npulint.source.read_regular`); one larger than ``max(limit, READ_CAP)`` (*limit*
    0: no limit) gives ``(None, TOO_BIG + size)``."""
    from npulint.source import TooBig, read_regular

    try:
        return read_regular(path, max(limit, READ_CAP) if limit else 0), None
    except TooBig as exc:
        return None, f"{TOO_BIG}{exc.size}"
    except OSError as exc:
        return None, exc.strerror or str(exc)


TOO_BIG = "\0too big:"  # an _Input.error that is not an error: the file is over max(--max-file-size, READ_CAP), unread


def _too_big(inp) -> Optional[int]:
    error = inp.error
    return int(error[len(TOO_BIG):]) if error is not None and error.startswith(TOO_BIG) else None


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.blake2b(data, digest_size=20).hexdigest()


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


def _run(files, settings, checker_classes, enabled, stdin, settings_for, overrides, options: RunOptions) -> RunResult:
    from npulint.source import detect_language

    def config_of(path):
        return settings_for(path) if settings_for is not None else (settings, enabled)

    from npulint.paths import _package_of

    _package_of.cache_clear()
    _FINGERPRINTS.clear()
    cwd = os.getcwd()
    checkers = _Checkers(checker_classes)
    cache = options.cache
    configs: Dict[str, Tuple[Settings, Set[str]]] = {}
    inputs: List[_Input] = []
    for path, language, explicit in files:
        fs, fe = configs[path] = config_of(path)
        inp = _Input(path, display_path(path, cwd), language, explicit, fs, fe)
        if path in overrides:
            inp.data = overrides[path]
            inp.on_disk = False
        elif cache is not None:  # the run's cache key needs every file's digest first
            inp.data, inp.error = _read(path, options.max_file_size)  # (else the first pass reads it)
            if _too_big(inp) is not None:  # not read: its size and time stand for its bytes in the key
                try:
                    st = os.stat(path)
                    inp.digest = _digest(b"too big %d %d" % (st.st_size, st.st_mtime_ns))
                except OSError:
                    inp.cacheable = False
        inputs.append(inp)
    if stdin is not None:
        spath, data = stdin
        fs, fe = configs[spath] = config_of(spath)
        language = detect_language(spath, data[:256]) or PYTHON  # a suffix, else a shebang
        inputs.append(_Input(spath, display_path(spath, cwd), language, True, fs, fe,
                             data=data, cacheable=False, on_disk=False))

    # The framework releases the project runs (configured, else inferred from its tree): one
    # value for the run, part of every file's settings fingerprint (so of the cache keys).
    from npulint.releases import resolve

    effective = resolve(settings, [p for p, _, _ in files] or ([stdin[0]] if stdin is not None else []))
    settings.effective_releases = effective
    for fs, _ in configs.values():
        fs.effective_releases = effective

    # A run over unchanged files, settings and engine: every file's result at once.
    run_key = None
    modnames: Dict[str, Tuple[Optional[str], bool]] = {}
    if cache is not None:
        for inp in inputs:
            if inp.cacheable:
                modnames[inp.path] = _module_name(inp.path, inp.language)
        if all(inp.cacheable for inp in inputs) and not overrides:
            run_key = cache.key(("run", cwd, options.max_file_size,
                                 tuple(_file_key_parts(i, modnames[i.path]) for i in inputs)))
            cached = cache.get("run", run_key)
            if isinstance(cached, tuple) and len(cached) == 2:
                results, notes = cached
                out = sorted(set(_suppress(results, configs, enabled)), key=Finding.sort_key)
                return RunResult(out, len(results), sum(1 for r in results if r.parsed),
                                 sum(r.lines for r in results), list(notes), cached=True)
        for inp in inputs:  # a miss: the first pass reads each file again when it gets to it
            if inp.on_disk and inp.digest is not None:
                inp.data = None

    notes: List[str] = []
    changed: List[str] = []
    results = _first_pass(inputs, checkers, cache, modnames, options, notes, changed)
    if changed:
        run_key = None  # a file changed since the run's key was made: its results are not the key's
    results.sort(key=lambda r: r.path)
    by_path = {i.path: i for i in inputs}
    if _follow_up(results, configs, checkers, enabled, overrides, by_path=by_path, cache=cache, modnames=modnames,
                  options=options, notes=notes):
        run_key = None  # a file changed during the run: its results are not the run's

    # the project-wide phase: facts in sorted path order
    project_classes = [cls for cls in checkers.get() if cls.codes() & enabled] \
        if any(r.facts for r in results) else []
    if project_classes:
        from npulint.checker import ProjectReporter

        reporter = ProjectReporter(enabled)
        # each topic's facts gathered once: the rules that read a topic get the same list (a
        # family's rules may then share one computation over it, keyed on the list)
        gathered: Dict[str, List[Tuple[str, Any]]] = {}

        def topic_facts(topic: str) -> List[Tuple[str, Any]]:
            got = gathered.get(topic)
            if got is None:
                got = gathered[topic] = [(r.display, f) for r in results for f in r.facts.get(topic, ())]
            return got

        for cls in project_classes:
            facts = topic_facts(cls.__name__)
            topics = tuple(cls.consumes) + tuple(u.__name__ for u in cls.uses)  # an analysis's facts reach its rules
            shared = {t: topic_facts(t) for t in topics}
            if facts or any(shared.values()):
                try:
                    cls.project(facts, reporter, settings, shared)
                except Exception as exc:
                    if "NPU000" in enabled:
                        where = facts[0][0] if facts else next(p for v in shared.values() for p, _ in v)
                        reporter.findings.append(Finding(where, 1, 1, "NPU000",
                                                         f"internal error in {cls.__name__}.project: "
                                                         f"{type(exc).__name__}: {exc} (please report this)", 1, 1))

        by_display = {r.display: r for r in results}
        for f in reporter.findings:
            r = by_display.get(f.path)
            if r is not None:
                r.findings.append(f)

    if run_key is not None:
        # Without the facts: the phases that read them are done, and a fact may be an object of
        # a rule module, whose unpickling would import the rules (and LibCST) on every warm run.
        cache.put("run", run_key, ([dataclasses.replace(r, facts={}) for r in results], tuple(notes)))
    out = _suppress(results, configs, enabled)
    out = sorted(set(out), key=Finding.sort_key)
    return RunResult(out, len(results), sum(1 for r in results if r.parsed), sum(r.lines for r in results), notes)


def _module_name(path: str, language: str) -> Tuple[Optional[str], bool]:
    if language != PYTHON:
        return None, False
    return module_name(path)


def _first_pass(inputs: List[_Input], checkers: _Checkers, cache, modnames, options: RunOptions,
                notes: List[str], changed: Optional[List[str]] = None, split: bool = True,
                isolate: bool = False) -> List[FileResult]:
    """Every file's own result: read and prefilter here; parse (from the cache, here, or in
    worker processes) only what some enabled checker looks at. Files are read one at a
    time, as they come (with a cache, read already once for their digests: *changed*
    receives those that are no longer what the digest says). Over many files, worker
    processes do all of it, each for a share of the files (see :func:`_first_pass_in_pool`),
    unless *split* is False. With *isolate*, the analysis runs in worker processes even
    for one file (a share whose worker died is done again so)."""
    jobs = _first_pass_jobs(len(inputs), options) if split else 1
    if jobs > 1:
        return _first_pass_in_pool(inputs, checkers, cache, modnames, options, notes, changed, jobs)
    results: List[FileResult] = []
    tasks: List[Tuple[_Input, str, List[type], Optional[str]]] = []  # (input, text, active, cache key)
    for inp in inputs:
        result = FileResult(inp.path, inp.display, inp.language)
        if inp.data is None and inp.error is None and inp.on_disk:
            inp.data, inp.error = _read(inp.path, options.max_file_size)
            if inp.digest is not None and (inp.data is None or _digest(inp.data) != inp.digest):
                inp.cacheable = False
                if changed is not None:
                    changed.append(inp.path)
        size = _too_big(inp)
        if size is not None:  # over the limit: named, not read
            notes.append(_too_big_note(inp.display, size, options.max_file_size))
            result.skipped = True
            results.append(result)
            continue
        if inp.error is not None:
            if "NPU002" in inp.enabled:
                result.findings.append(Finding(inp.display, 1, 1, "NPU002", f"cannot read file: {inp.error}", 1, 1))
            results.append(result)
            continue
        try:
            text = decode(inp.data, inp.language)
        except Unreadable as exc:
            if exc.binary and not inp.explicit:
                result.skipped = True
            elif "NPU002" in inp.enabled:
                result.findings.append(Finding(inp.display, exc.line, exc.column, "NPU002", str(exc),
                                               exc.line, exc.column))
            results.append(result)
            continue
        result, active = _prefilter(inp.path, inp.display, inp.language, text, checkers.get(), inp.enabled)
        if active is None:
            results.append(_with_directives(result, text, inp.enabled))
            _let_go(inp)
            continue
        size = len(inp.data)
        if options.max_file_size and size > options.max_file_size:
            notes.append(_too_big_note(inp.display, size, options.max_file_size))
            result.skipped = True
            results.append(result)
            _let_go(inp)
            continue
        key = None
        if cache is not None and inp.cacheable:
            key = cache.key(("file", _file_key_parts(inp, modnames.get(inp.path) or module_name(inp.path)),
                             tuple(c.__module__ + "." + c.__qualname__ for c in active)))
            hit = cache.get("file", key)
            if isinstance(hit, FileResult):
                results.append(hit)
                continue
        tasks.append((inp, text, active, key))
    for (inp, _, _, key), result in zip(tasks, _execute(tasks, options, isolate)):
        if key is not None:
            cache.put("file", key, result)
        results.append(result)
    return results


# From this many files on, the first pass itself (reading, decoding, the prefilter: about 60
# microseconds a file) runs in the worker processes, each on a share of the files, and
# each analysing the files of its share that the prefilter selects. Over the 11,500 files of
# 2M synthetic lines that serial part had become 0.7 s of a 1.5 s two-process run once the
# analysis moved to CPython's ast, so two processes gave only 1.3x.
FIRST_PASS_PARALLEL_FILES = 2000
# Shares per worker: files are not all alike (a share may hold the big ones), so each
# worker takes several, one after the other.
FIRST_PASS_SHARES_PER_JOB = 8


def _first_pass_jobs(n_inputs: int, options: RunOptions) -> int:
    if options.jobs == 1 or n_inputs < FIRST_PASS_PARALLEL_FILES or not _can_fork():
        return 1
    return max(1, min(options.jobs or _cpu_count(), n_inputs // (FIRST_PASS_PARALLEL_FILES // 2)))


# The first pass of the run in progress, for the forked workers (inherited, never sent).
_FORKED_FIRST_PASS: Optional[tuple] = None


def _first_pass_share(lo: int, hi: int):
    """In a worker: the first pass over ``inputs[lo:hi]``, analysing in this process."""
    inputs, checkers, cache, modnames, options = _FORKED_FIRST_PASS  # type: ignore[misc]
    share = inputs[lo:hi]
    notes: List[str] = []
    changed: List[str] = []
    one = dataclasses.replace(options, jobs=1)
    results = _in_big_stack(lambda: _first_pass(share, checkers, cache, modnames, one, notes, changed))
    return results, notes, changed, [inp.cacheable for inp in share]


def _first_pass_in_pool(inputs: List[_Input], checkers: _Checkers, cache, modnames, options: RunOptions,
                        notes: List[str], changed: Optional[List[str]], jobs: int) -> List[FileResult]:
    """The first pass in *jobs* worker processes, over contiguous shares of *inputs* (so a
    folder's files stay together), merged in input order. A share whose worker failed (a
    crash in native code) is done again here, file by file where it parses."""
    global _FORKED_FIRST_PASS
    checkers.get()  # loaded once, before the fork
    n = len(inputs)
    k = min(n, jobs * FIRST_PASS_SHARES_PER_JOB)
    bounds = [(i * n // k, (i + 1) * n // k) for i in range(k)]
    results: List[FileResult] = []
    failed: List[Tuple[int, int]] = []
    _FORKED_FIRST_PASS = (inputs, checkers, cache, modnames, options)
    try:
        with _gc_tuned():
            with _forked_pool(jobs) as pool:
                futures = [(lo, hi, pool.submit(_first_pass_share, lo, hi)) for lo, hi in bounds]
                for lo, hi, fut in futures:
                    try:
                        share_results, share_notes, share_changed, cacheable = fut.result()
                    except Exception:  # the worker died, or its results would not pickle
                        failed.append((lo, hi))
                        continue
                    results.extend(share_results)
                    notes.extend(share_notes)
                    if changed is not None:
                        changed.extend(share_changed)
                    for inp, ok in zip(inputs[lo:hi], cacheable):
                        inp.cacheable = inp.cacheable and ok
    finally:
        _FORKED_FIRST_PASS = None
    # again with the prefilter here and the analysis in pools that retry a crashing file alone
    for lo, hi in failed:
        results.extend(_first_pass(inputs[lo:hi], checkers, cache, modnames, options, notes, changed, split=False,
                                   isolate=True))
    return results


def _let_go(inp: _Input) -> None:
    """Drop the bytes of a file the first pass does not parse: most of a repository. Held
    until the end of the run, they were a third of its memory (60 MB of 1.6M lines over six
    repositories), and every worker inherited them. The follow-up phase reads such a file
    again if it has to look at it."""
    if inp.on_disk:
        inp.data = None


def _with_directives(result: FileResult, text: str, enabled: Set[str]) -> FileResult:
    if UNUSED_NOQA in enabled and not result.skipped:
        result.directives = noqa_directives(text, result.language)
        if result.directives and not result.noqa:
            result.noqa = noqa_map(text, result.language, result.directives)
    return result


def _task(inp: _Input, text: str, active: Sequence[type]) -> FileResult:
    import gc

    result = FileResult(inp.path, inp.display, inp.language,
                        lines=text.count("\n") + (1 if text and not text.endswith("\n") else 0))
    # No cyclic collection while one file is analysed (its tree and tables are freed by
    # reference counting when it is done; collections would only walk them), then one of
    # the youngest generation, which holds what the file left: its result and any cycle.
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        return _with_directives(_analyse(result, text, inp.settings, active, inp.enabled), text, inp.enabled)
    finally:
        if enabled:
            gc.enable()
            gc.collect(0)


# ----------------------------------------------------------------------------- parallelism

# Automatic --jobs: one worker per this many bytes of source to parse (about 0.2 s of work
# on one core: torchair's 2.0 MB of selected files take 1.5 s; a forked worker starts in a
# few tens of milliseconds), up to the number of CPUs; below it the run stays in this
# process and pays no process start-up.
AUTO_JOBS_BYTES = 256 * 1024


def auto_jobs(parse_bytes: int, n_tasks: int, cpus: Optional[int] = None) -> int:
    cpus = cpus or _cpu_count()
    # rounded, not floored: 494 KB of work (vllm-ascend) is two workers' worth, not one
    return max(1, min(cpus, n_tasks, (parse_bytes + AUTO_JOBS_BYTES // 2) // AUTO_JOBS_BYTES))


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _can_fork() -> bool:
    import multiprocessing

    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _execute(tasks, options: RunOptions, isolate: bool = False) -> List[FileResult]:
    """The results of *tasks*, in order: here, or in worker processes (largest files first;
    always there with *isolate*, where a native crash cannot take this process down)."""
    if not tasks:
        return []
    total = sum(len(t[1]) for t in tasks)
    jobs = options.jobs if options.jobs else auto_jobs(total, len(tasks))
    jobs = min(jobs, len(tasks))
    with _gc_tuned():
        if isolate and _can_fork():
            return _execute_in_pool(tasks, max(1, jobs))
        if jobs <= 1 or not _can_fork():
            return [_task(inp, text, active) for inp, text, active, _ in tasks]
        return _execute_in_pool(tasks, jobs)


# The cyclic collector's first threshold during the analysis phase (between files; within
# one file it does not run at all, see _task). At CPython's default (700 allocations) a run
# over torchair spent 1.7-2.2 s of about 8 in about 3,900 collections, each older-generation
# one walking the whole live tree of the file at hand; the trees are freed by reference
# counting (no cycle holds them: see Checker.release and shell._Source), so fewer
# collections cost nothing in memory. Measured: threshold 50,000 -> 0.2-0.5 s; no collection
# within a file -> 0.02-0.03 s; peak memory unchanged (110 MB on 2M synthetic lines).
GC_THRESHOLD = 50_000


@contextlib.contextmanager
def _gc_tuned():
    """Rarer collections in the analysis phase (between files: within one, _task turns the
    collector off), and what was allocated before (LibCST's and the rules' modules) frozen out
    of them, which also spares the forked workers copying those pages; undone afterwards."""
    import gc

    old = gc.get_threshold()
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    gc.set_threshold(max(old[0], GC_THRESHOLD), old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)
        if freeze:
            gc.unfreeze()


# Work sent to a worker process at once: files are grouped up to this many bytes of source
# (a larger file goes alone), so 400 small launch scripts are some 30 round trips, not 400.
BATCH_BYTES = 64 * 1024

# The tasks of the run in progress, for the forked workers: they inherit this list and are
# sent only indices, never the texts and settings.
_FORKED_TASKS: Optional[list] = None


def _worker(indices: Sequence[int]) -> List[FileResult]:
    tasks = _FORKED_TASKS
    assert tasks is not None
    # the big-stack thread and recursion limit hold in the worker too
    return _in_big_stack(lambda: [_task(tasks[i][0], tasks[i][1], tasks[i][2]) for i in indices])


def _batches(tasks, order: Sequence[int]) -> List[List[int]]:
    out: List[List[int]] = []
    size = 0
    for i in order:
        n = len(tasks[i][1])
        if not out or size + n > BATCH_BYTES:
            out.append([])
            size = 0
        out[-1].append(i)
        size += n
    return out


def _execute_in_pool(tasks, jobs: int) -> List[FileResult]:
    """Largest files first, in batches; a batch whose worker failed is done again one file
    per worker, so a crash (in native code) costs only the file that caused it."""
    global _FORKED_TASKS

    order = sorted(range(len(tasks)), key=lambda i: -len(tasks[i][1]))
    out: List[Optional[FileResult]] = [None] * len(tasks)
    _FORKED_TASKS = tasks
    try:
        pending = _run_batches(_batches(tasks, order), jobs, out)
        while pending:
            # a crash breaks the whole pool and every batch still queued fails with it:
            # again file by file, and if no file gets through, each in a pool of its own
            again = _run_batches([[i] for i in pending], jobs, out)
            if len(again) < len(pending):
                pending = again
                continue
            for i in pending:
                errors: Dict[int, BaseException] = {}
                if _run_batches([[i]], 1, out, errors):
                    out[i] = _worker_failed(tasks[i][0], errors[i])
            break
    finally:
        _FORKED_TASKS = None
    return out  # type: ignore[return-value]


def _run_batches(batches: List[List[int]], jobs: int, out: List[Optional[FileResult]],
                 errors: Optional[Dict[int, BaseException]] = None) -> List[int]:
    """Run *batches* on *jobs* workers into *out*; return the indices of batches that failed
    (recording the error of each in *errors*)."""
    failed: List[int] = []
    with _forked_pool(jobs) as pool:
        futures = [(batch, pool.submit(_worker, batch)) for batch in batches]
        for batch, fut in futures:
            try:
                for i, r in zip(batch, fut.result()):
                    out[i] = r
            except Exception as exc:  # the worker died (a crash in native code) or its result would not pickle
                failed.extend(batch)
                if errors is not None:
                    for i in batch:
                        errors[i] = exc
    return failed


@contextlib.contextmanager
def _forked_pool(jobs: int):
    """A pool of *jobs* forked worker processes (they inherit the run's state: see
    _FORKED_TASKS and _FORKED_FIRST_PASS)."""
    import multiprocessing
    import warnings
    from concurrent.futures import ProcessPoolExecutor

    with warnings.catch_warnings():
        # forking while this thread's parent waits is safe here: the workers only lint
        warnings.simplefilter("ignore", DeprecationWarning)
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            yield pool


def _worker_failed(inp: _Input, exc: BaseException) -> FileResult:
    r = FileResult(inp.path, inp.display, inp.language)
    if "NPU000" in inp.enabled:
        r.findings.append(Finding(inp.display, 1, 1, "NPU000",
                                  f"internal error: the worker process analysing this file failed: "
                                  f"{type(exc).__name__}: {exc} (please report this)", 1, 1))
    return r


def _suppress(results: List[FileResult], configs, enabled: Set[str]) -> List[Finding]:
    """The findings that survive each file's codes, ``per-file-ignores`` and ``# noqa``; and
    NPU003 for ``# noqa`` codes that suppressed nothing."""
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
            out.append(f)
        if r.directives and UNUSED_NOQA in fe and not r.unjudged and not any(UNUSED_NOQA.startswith(c)
                                                                            for c in ignored):
            out.extend(_unused_noqa(r, fe, used))
    return out


def _unused_noqa(r: FileResult, enabled: Set[str], used: Set[Tuple[int, str]]) -> List[Finding]:
    """``# noqa: NPU…`` codes that suppressed nothing in this run. Only npulint's own codes
    that are enabled for the file count: other tools' codes and blanket ``# noqa`` are
    not ours to judge, and a disabled rule could not have fired."""
    from npulint.model import Edit, Fix

    out = []
    for line, start, end, codes, cut_start, cut_end in r.directives:
        if not codes:
            continue
        unused = [c for c in codes if c.startswith("NPU") and c != UNUSED_NOQA and (line, c) not in used
                  and any(e.startswith(c) for e in enabled if e != UNUSED_NOQA)]
        if not unused:
            continue
        keep = [c for c in codes if c not in unused]
        if keep:
            edit = Edit(line, start, line, end, "# noqa: " + ", ".join(keep))
        else:
            edit = Edit(line, cut_start, line, cut_end, "")
        what = ", ".join(unused)
        out.append(Finding(r.display, line, start, UNUSED_NOQA,
                           f"unused `noqa` directive: {what} suppressed nothing on this line", line, end, (),
                           Fix(f"Remove unused noqa code{'s' if len(unused) > 1 else ''} {what}", (edit,))))
    return out


def _follow_up(results: List[FileResult], configs, checker_classes, enabled: Set[str],
               overrides: Optional[Dict[str, bytes]] = None, by_path: Optional[Dict[str, _Input]] = None,
               cache=None, modnames=None, options: Optional[RunOptions] = None,
               notes: Optional[List[str]] = None) -> bool:
    """Files the prefilter skipped that contain a token some checker asks for after the
    first pass: parse them once, for those checkers, and merge what they find. True when a
    file read again (see :func:`_let_go`) had changed since the first pass."""
    changed = False
    if not any(r.facts for r in results):
        return changed
    checkers = checker_classes if isinstance(checker_classes, _Checkers) else _Checkers(checker_classes)
    options = options or RunOptions()
    wanted = []
    for cls in checkers.get():
        if cls.codes() & enabled:
            facts = [(r.display, f) for r in results for f in r.facts.get(cls.__name__, ())]
            shared = {t: [(r.display, f) for r in results for f in r.facts.get(t, ())] for t in cls.consumes}
            tokens = cls.followup(facts, shared) if facts or any(shared.values()) else ()
            if tokens:
                wanted.append((cls, _followup_matcher(tokens)))
    if not wanted:
        return changed
    tasks = []
    for r in results:
        if r.parsed or r.skipped or r.language != PYTHON or r.findings or r.path not in configs:
            continue
        inp = (by_path or {}).get(r.path)
        data = inp.data if inp is not None else (overrides or {}).get(r.path)
        reread = data is None
        if reread:
            data, _ = _read(r.path, options.max_file_size)  # one over the limit was named already
        if data is None:
            continue
        try:
            text = decode(data, r.language)
        except Unreadable:
            continue
        force = [cls for cls, matches in wanted if matches(text)]
        if not force:
            continue
        fs, fe = configs[r.path]
        if inp is None:
            inp = _Input(r.path, r.display, r.language, True, fs, fe, data=data, cacheable=False)
        elif reread:
            if inp.digest is not None and inp.digest != _digest(data):
                inp.cacheable = False
                changed = True
            inp.data = data
        if options.max_file_size and len(data) > options.max_file_size:
            if notes is not None:
                notes.append(_too_big_note(r.display, len(data), options.max_file_size))
            continue
        _, active = _prefilter(r.path, r.display, r.language, text, checkers.get(), fe, force=force)
        if active is None:
            continue
        key = None
        if cache is not None and inp.cacheable:
            key = cache.key(("followup", _file_key_parts(inp, (modnames or {}).get(r.path) or module_name(r.path)),
                             tuple(c.__module__ + "." + c.__qualname__ for c in active)))
            hit = cache.get("file", key)
            if isinstance(hit, FileResult):
                _merge(r, hit)
                continue
        tasks.append((inp, text, active, key, r))
    done = _execute([t[:4] for t in tasks], options)
    for (inp, text, active, key, r), extra in zip(tasks, done):
        if key is not None:
            cache.put("file", key, extra)
        _merge(r, extra)
    return changed


def _token_pattern(tokens: Sequence[str]) -> "re.Pattern":
    """A search for any of *tokens*; one that is an identifier matches only as a whole word
    (a class named ``Model`` is wanted in the files that name it, not in every file that
    mentions ``ModelDef``: in torchair's repository that was a 160 KB generated protobuf
    module). A file can name a class or module only with the whole word, in code or in a
    string."""
    import re

    parts = [rf"\b{re.escape(t)}\b" if t.isidentifier() else re.escape(t) for t in tokens]
    return re.compile("|".join(parts))


_FOLLOWUP_SUBSTRING_TESTS = 16


def _followup_matcher(tokens: Sequence[Any]) -> Callable[[str], bool]:
    """Whether a text holds one of *tokens* (see :meth:`Checker.followup`): a string, or a
    group of strings that must all occur. Plain substring tests (C speed) and then one
    search find the candidates (a text holding some group's first token as a whole word);
    the groups are then tested whole on those texts only."""
    groups = [(t,) if isinstance(t, str) else tuple(t) for t in tokens]
    groups = [g for g in groups if g]
    if not groups:
        return lambda text: False
    firsts = sorted({g[0] for g in groups})
    anywhere = _token_pattern(firsts)
    # a regular expression of alternatives scans a text an order of magnitude slower than a
    # substring test: most texts hold none of a few tokens (torchair's follow-up: 3 tokens,
    # 1,129 files, 0.09 s of regex search), but for many tokens one scan beats many
    substrings = firsts if len(firsts) <= _FOLLOWUP_SUBSTRING_TESTS else None

    def candidate(text: str) -> bool:
        if substrings is not None and not any(t in text for t in substrings):
            return False
        return anywhere.search(text) is not None

    if all(len(g) == 1 for g in groups):
        return candidate
    single = {t: _token_pattern([t]) for g in groups for t in g}

    def matches(text: str) -> bool:
        if not candidate(text):
            return False
        found: Dict[str, bool] = {}
        for g in groups:
            for t in g:
                hit = found.get(t)
                if hit is None:
                    hit = found[t] = single[t].search(text) is not None
                if not hit:
                    break
            else:
                return True
        return False

    return matches


def _merge(r: FileResult, extra: FileResult) -> None:
    r.parsed = extra.parsed
    r.findings.extend(extra.findings)
    for topic, facts in extra.facts.items():
        r.facts.setdefault(topic, []).extend(facts)
    r.noqa = extra.noqa or r.noqa
    r.directives = extra.directives or r.directives
    r.unjudged = r.unjudged or getattr(extra, "unjudged", False)


def _in_big_stack(fn):
    """Run *fn* in a thread with a large stack and a raised recursion limit: LibCST's
    parser and visitors recurse once per nesting level."""
    box: Dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    old_size = threading.stack_size()
    old_limit = sys.getrecursionlimit()
    try:
        threading.stack_size(512 * 1024 * 1024)
        sys.setrecursionlimit(max(old_limit, 12000))
        t = threading.Thread(target=target, name="npulint")
        t.start()
        t.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]
