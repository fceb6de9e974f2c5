"""One file's analysis: the prefilter (which rules a file's text can matter to), CPython's
check (syntax errors, nesting, the analysis bounds), one LibCST parse and one traversal with
every active rule and shared analysis, and the ``# noqa`` map of the file; for a shell script,
one read as bash reads it (CRLF line ends, syntax errors, the analysis bounds) before its checkers.
:func:`npulint.core.analyse_file` puts them together: every run takes each file through it."""

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

from npulint.config import Settings
from npulint.model import Finding, Span
from npulint.registry import engine
from npulint.source import PYTHON, NoqaMap, is_skip_file, noqa_directives, noqa_map

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst
    from npulint.checker import Checker, FileContext


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
    # the modules of the run whose bindings its resolution read, with their digests
    # (npulint.modules.RunModules.take_deps): a cached result holds while they are unchanged
    deps: Tuple[Tuple[str, Optional[str]], ...] = ()
    # the framework APIs the module binds at its top level by import, (name, qualified name):
    # the follow-up parses the files that import those names from it (npulint.modules.api_exports)
    exports: Tuple[Tuple[str, str], ...] = ()


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
    a group in the files that lack it, which is most files. Many tokens share a prefix
    (``npu_``), and the tests run on every file read, in the process that reads it
    (docs/benchmarks.md, "Figures behind the engine's comments")."""
    tokens = sorted({t for c in checker_classes if c.language == language for g in c.tokens for t in g})
    heads: Dict[str, List[str]] = {}
    for t in tokens:
        if len(t) >= 4:
            heads.setdefault(t[:4], []).append(t)
    return tuple((os.path.commonprefix(ts), tuple(ts)) for ts in heads.values() if len(ts) >= 2)


@functools.lru_cache(maxsize=16)
def _wanting(checker_classes: Tuple[type, ...], language: str) -> Tuple[Tuple[type, FrozenSet[type]], ...]:
    """*language*'s checkers in groups that ``wants`` answers alike for: those that keep the
    engine's own ``wants`` and share what it reads (their tokens, and the analyses they
    defer to), one per group, so that the prefilter asks each group once per file (the
    eight torchair config rules read one analysis); a checker with a ``wants`` of its own is
    a group alone."""
    from npulint.checker import Checker
    from npulint.lintrule import LintRule

    engine_own = (Checker.wants.__func__, LintRule.wants.__func__)  # type: ignore[attr-defined]
    groups: Dict[tuple, List[type]] = {}
    for c in checker_classes:
        if c.language != language:
            continue
        func = c.wants.__func__
        key = ((func, getattr(c, "_tokens_from_uses", False), tuple(getattr(c, "uses", ())), c.tokens)
               if func in engine_own else (c,))
        groups.setdefault(key, []).append(c)
    return tuple((members[0], frozenset(members)) for members in groups.values())


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
        return "syntax", exc.lineno or 1, exc.offset or 1, _newer_syntax_hint(text, exc.lineno, exc.msg or "invalid syntax")
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
    over = _over_bounds(tree)
    if over is not None:
        return ("limit", 1, 1, f"{over}; nothing else is reported for this file")
    # Python < 3.11 builds such trees without a recursion check; LibCST would take minutes.
    # 3.11+ checks while building the tree (about 3,000 levels at the limit set above), so
    # the walk (docs/benchmarks.md, "Measurements behind the engine's constants") is only
    # needed before 3.11.
    if sys.version_info >= (3, 11):
        return None
    deep = _deeper_than(tree, _MAX_TREE_DEPTH)
    if deep is not None:
        return ("deep", getattr(deep, "lineno", 1), (getattr(deep, "col_offset", 0) or 0) + 1,
                f"nested more than {_MAX_TREE_DEPTH} levels deep (e.g. a very long chain of operators)")
    return None


# Syntax a Python older than the version named rejects, found by the text of the error's line
# and by the start of CPython's message (what the older parser says of that syntax: "invalid
# syntax" mostly; the f-string errors PEP 701 lifted, not every f-string error), each from
# "What's New In Python 3.x" (docs.python.org/3/whatsnew/) and its PEP: a syntax error the Python
# npulint runs on reports on such a line names that Python, since a newer one may accept the file.
_INVALID = ("invalid syntax",)
_NEWER_SYNTAX = (
    ((3, 10), r"^\s*match\b[^=]*:\s*(?:#.*)?$", _INVALID, "`match` statements", "PEP 634"),
    ((3, 11), r"^\s*except\s*\*", _INVALID, "`except*`", "PEP 654"),
    ((3, 11), r"(?::\s*\*\s*[A-Za-z_]|\[\s*\*\s*[A-Za-z_])", _INVALID,
     "star expressions in subscripts and `*args: *Ts` annotations", "PEP 646"),
    ((3, 12), r"^\s*(?:type\s+[A-Za-z_]\w*\s*[=\[]|(?:async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)",
     _INVALID + ("expected '('",), "type parameter lists and `type` statements", "PEP 695"),
    ((3, 12), r"(?<!\w)(?:[fF][rR]?|[rR][fF])['\"]",
     ("f-string: unmatched", "f-string: expecting '}'", "f-string expression part cannot include",
      "unterminated string literal"),
     "f-strings that reuse their quotes, nest or span lines", "PEP 701"),
    ((3, 13), r"^\s*(?:type\s+\w+|(?:async\s+)?def\s+\w+|class\s+\w+)\s*\[[^\]]*=", _INVALID + ("expected '('",),
     "type parameter defaults", "PEP 696"),
    ((3, 14), r"(?<!\w)(?:[tT][rR]?|[rR][tT])['\"]", _INVALID, "template strings", "PEP 750"),
    ((3, 14), r"^\s*except\s+[^:(]*,", ("multiple exception types must be parenthesized",),
     "`except` without brackets", "PEP 758"),
)


def _newer_syntax_hint(text: str, line: Optional[int], msg: str, here: Tuple[int, int] = sys.version_info[:2]) -> str:
    """CPython's *msg* for a syntax error at *line*, with the Python that read the file (*here*)
    named when the line uses syntax of a newer Python (:data:`_NEWER_SYNTAX`); else *msg* as it is."""
    newer = [entry for entry in _NEWER_SYNTAX if here < entry[0] and msg.startswith(entry[2])]
    lines = text.splitlines() if newer and line else ()
    if not line or line > len(lines):
        return msg
    for version, pattern, _, what, pep in newer:
        if re.search(pattern, lines[line - 1]):
            return f"{msg} (as Python {here[0]}.{here[1]} reads it; {what} came with Python {version[0]}.{version[1]}, {pep})"
    return msg


_MAX_TREE_DEPTH = 2900  # about what CPython 3.11+ accepts at its default recursion limit


# Bounds of a Python file's analysis (past one: NPU005, the file is not analysed): LibCST's
# tree and the analysis grow with the syntax nodes, so these bound every file's time and memory;
# they lie above every file of the corpora of docs/real-world.md (the figures: docs/benchmarks.md,
# hostile inputs, and "Measurements behind the engine's constants").
MAX_SYNTAX_NODES = 60_000

MAX_LITERAL_ITEMS = 20_000


def _over_bounds(tree) -> Optional[str]:
    """Which bound CPython's *tree* is past (the walk stops there), or None. The nodes are
    those ``ast.walk`` yields, counted without its generators (which cost more than the count)."""
    import ast

    n = 0
    displays = (ast.Tuple, ast.List, ast.Set)
    node_type = ast.AST
    stack = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        if not isinstance(node, node_type):  # a list's str (Global.names) or None (a Dict's ** key)
            continue
        n += 1
        if n > MAX_SYNTAX_NODES:
            return f"more than {MAX_SYNTAX_NODES:,} syntax nodes (the analysis bound)"
        t = type(node)
        if (t in displays and len(node.elts) > MAX_LITERAL_ITEMS) or (t is ast.Dict and len(node.keys) > MAX_LITERAL_ITEMS):
            return (f"a literal of {len(node.elts if t in displays else node.keys):,} items at line "
                    f"{node.lineno}, more than {MAX_LITERAL_ITEMS:,} (the analysis bound)")
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                extend(value)
            elif isinstance(value, node_type):
                push(value)
    return None


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


def new_result(path: str, display: str, language: str, text: str) -> FileResult:
    """An empty result for the file *text* (its line count set)."""
    return FileResult(path, display, language, lines=text.count("\n") + (1 if text and not text.endswith("\n") else 0))


def _prefilter(path: str, display: str, language: str, text: str, checker_classes: Sequence[type],
               enabled: Set[str], force: Sequence[type] = ()) -> Tuple[FileResult, Optional[List[type]]]:
    """The file's result so far and the checkers to run on it, or None when nothing has to
    be parsed (cheap: substring tests on the text)."""
    result = new_result(path, display, language, text)
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
    wanted: Set[type] = set()
    for asked, group in _wanting(classes, language):
        if asked.wants(text, path, present):
            wanted |= group
    candidates = [c for c in checker_classes if c in wanted] if wanted else []
    active = [c for c in candidates if c in needed]
    active += [c for c in force if c not in active]
    rules = engine()
    if not active and not (candidates and (rules.SyntaxErrorInFile.enabled_in(enabled) or (language != PYTHON and (
            rules.ShellCrlf.enabled_in(enabled) or rules.AnalysisLimit.enabled_in(enabled))))):
        # nothing here any enabled rule looks at (NPU001 alone still parses what rules would);
        # checkers that would piggyback on a parse read their facts from the text instead
        for c in _scanners(classes, language):
            if c in needed:
                for topic, facts in (c.scan(text, path) or {}).items():
                    result.facts.setdefault(topic, []).extend(facts)
        return result, None
    # parsed anyway: checkers that only piggyback on a parse join cheaply
    active += [c for c in checker_classes if c in needed and c.piggyback and c.language == language
               and c not in active and c.joins(text, path)]
    # empty: the engine's NPU001 (and a shell script's NPU004/NPU005) alone, read for them alone
    return result, active


def _analyse(result: FileResult, text: str, settings: Settings, active: Sequence[type],
             enabled: Set[str], module: Optional[Tuple[Optional[str], bool]] = None) -> FileResult:
    """Parse the file once and run *active* over it in one traversal."""
    path, display = result.path, result.display
    if result.language != PYTHON:
        return _lint_other(result, text, settings, active, enabled)
    import libcst as cst

    from npulint.checker import FileContext

    top_lines: List[Tuple[int, Optional[List[int]]]] = []
    problem = _cpython_check(text, top_lines)
    if problem is not None:  # CPython decides what is a syntax error (NPU001), with its positions
        kind, line, col, msg = problem
        if kind == "limit":
            return _analysis_limit(result, text, enabled, msg)
        return _syntax_error(result, text, enabled, line, col, msg)
    try:
        tree = _parse(text, python_accepts=True)
    except cst.ParserSyntaxError as exc:
        msg = " ".join(str(exc.message).split())
        return _syntax_error(result, text, enabled, exc.raw_line, exc.raw_column + 1,
                             f"npulint's parser (LibCST) cannot read this file, although Python accepts it: {msg}")
    except RecursionError:
        return _nested_too_deep(result, text, enabled)
    result.parsed = True
    from npulint import modules

    run_modules = modules.active()
    if run_modules is not None:
        run_modules.take_deps()  # what this file's resolution reads, from here on
    ctx = FileContext(path, display, text, tree, settings, enabled, top_lines=top_lines, module_name=module)
    errors: List[Finding] = []

    def on_error(checker: Checker, exc: BaseException, node: Optional[cst.CSTNode]) -> None:
        span = Span.at(1, 1)
        if node is not None:
            try:
                span = ctx.span(node)
            except Exception:
                pass
        errors.append(_internal_error(display, span, type(checker), exc))

    checkers, live = file_checkers(ctx, active)
    try:
        failed = run_checkers(ctx, tree, checkers, live, on_error)
        if failed:  # nothing of the rules that read a failed analysis is reported, nor its facts used
            dropped = {r.code for c in checkers if any(a in failed for a in type(c).uses) for r in type(c).rules}
            ctx.findings[:] = [f for f in ctx.findings if f.code not in dropped]
            for a in failed:
                for topic in (a.__name__, *a.provides):
                    ctx.facts.pop(topic, None)
    except RecursionError:
        return _nested_too_deep(result, text, enabled)
    except Exception as exc:  # an engine bug: keep going with the other files
        _release(ctx, checkers)
        if engine().InternalError.enabled_in(enabled):
            errors.append(_engine_error(display, exc))
        result.findings.extend(errors)
        return _with_noqa(result, text)
    result.findings.extend(ctx.findings)
    if engine().InternalError.enabled_in(enabled):
        result.findings.extend(errors)
    result.facts = ctx.facts
    if run_modules is not None:
        result.exports = modules.api_exports(ctx.sem)
        result.deps = run_modules.take_deps()
    _release(ctx, checkers)
    return _with_noqa(result, text)


def run_checkers(ctx: "FileContext", tree: "cst.Module", checkers: Sequence["Checker"], live: Sequence[Any],
                 on_error: Callable[["Checker", BaseException, Optional["cst.CSTNode"]], None],
                 walk: Optional[Callable[[Any, "cst.Module"], None]] = None) -> Set[type]:
    """Run a file's *checkers* (:func:`file_checkers`) over *tree*: the one traversal, which calls
    the hooks of *live* (the analyses and the metadata recorder) and records the rules'; the
    analyses' ``finish()``; the rules' hooks (``Walker.replay``), then their ``finish()``. A checker
    that raises is reported through *on_error* and runs no further; the rules of an analysis that
    raised do not run. Returns the analyses that raised. *walk* drives the walker over the tree
    (default ``Walker.walk``; the benchmark also drives it with LibCST's own traversal)."""
    from npulint.lintrule import Analysis
    from npulint.semantic import Walker

    analyses = [c for c in checkers if isinstance(c, Analysis)]
    rules = [c for c in checkers if not isinstance(c, Analysis)]
    walker = Walker(ctx.sem, live, on_error, deferred=rules)
    if walk is None:
        walker.walk(tree)
    else:
        walk(walker, tree)
    ctx.site = _outside_a_hook
    failed: Set[type] = set()  # shared analyses that raised: their rules would judge from a partial state

    def finish(checker: "Checker") -> None:
        if checker in walker.disabled or any(a in failed for a in type(checker).uses):
            if isinstance(checker, Analysis):
                failed.add(type(checker))
            return
        try:
            checker.finish()
        except RecursionError:
            raise
        except Exception as exc:
            on_error(checker, exc, None)
            if isinstance(checker, Analysis):
                failed.add(type(checker))

    for checker in analyses:
        finish(checker)
    walker.disabled.update(r for r in rules if any(a in failed for a in type(r).uses))
    ctx.site = walker.replayed_site
    try:
        walker.replay()
    finally:
        ctx.site = _outside_a_hook
    for checker in rules:
        finish(checker)
    return failed


def _outside_a_hook():
    """``FileContext.site()`` once the traversal is over, outside a rule's hook: there is no
    current point of the program (use the site recorded with the node)."""
    raise RuntimeError("site() is asked outside a hook: use the site recorded with the node")


def file_checkers(ctx: "FileContext", active: Sequence[type]) -> Tuple[List["Checker"], List[Any]]:
    """The checkers of one file (*active* and the analyses they use, analyses first), and the
    owners of the hooks the traversal calls as it goes: the recorder of the LibCST metadata the
    rules declare (npulint.metadata), if any does, then the analyses. (The rules' hooks are
    called after it: ``Walker.replay``.)"""
    from npulint.lintrule import Analysis, with_analyses

    checkers = []
    for cls in with_analyses(active):
        checker = cls(ctx)
        if isinstance(checker, Analysis):
            ctx.analyses[cls] = checker
        checkers.append(checker)
    live: List[Any] = [c for c in checkers if isinstance(c, Analysis)]
    if any(getattr(cls, "METADATA_DEPENDENCIES", ()) for cls in active):
        from npulint.metadata import EngineMetadata

        ctx.metadata = EngineMetadata(ctx.sem, ctx.span)
        live.insert(0, ctx.metadata.recorder())
    return checkers, live


def _release(ctx: "FileContext", checkers: Sequence["Checker"]) -> None:
    for checker in checkers:
        try:
            checker.release()
        except Exception:  # nothing to report: the file's findings are already taken
            pass
    ctx.release()


def _lint_other(result: FileResult, text: str, settings: Settings, active: Sequence[type],
                enabled: Set[str]) -> FileResult:
    """Files that are not Python (shell scripts): the engine reads the script once, as bash
    reads it (:func:`npulint.shell.parse_script`), and the checkers take it from their context
    (``ShellContext.script``) and do their work in ``finish()``. A script bash would not run as
    it shows is the engine's finding and no checker runs: CRLF line endings (NPU004), a script
    bash cannot parse (NPU001), one past a bound of the analysis (NPU005); another shell's
    script (zsh, csh, fish...) is not read with bash's grammar, and nothing is said."""
    from npulint.checker import ShellContext
    from npulint.shell import crlf_lines, parse_script
    from npulint.source import is_bash_script

    result.parsed = True
    if not is_bash_script(text):
        result.unjudged = True
        return _with_noqa(result, text)
    try:
        crlf = crlf_lines(text)
        if crlf:
            return _shell_crlf(result, text, enabled, crlf)
        script, error = parse_script(text)
    except RecursionError:
        return _nested_too_deep(result, text, enabled)
    except Exception as exc:  # an engine bug: keep going with the other files
        result.unjudged = True
        if engine().InternalError.enabled_in(enabled):
            result.findings.append(_engine_error(result.display, exc))
        return _with_noqa(result, text)
    if error is not None:
        return _syntax_error(result, text, enabled, error.line, error.column, error.message)
    if script.limit is not None:  # past a bound of the analysis: one finding, nothing else
        return _analysis_limit(result, text, enabled, f"{script.limit}; nothing else is reported for this script")
    ctx = ShellContext(result.path, result.display, text, settings, enabled, script)
    from npulint.lintrule import Analysis, with_analyses

    checkers = []
    for cls in with_analyses(active):
        try:
            checker = cls(ctx)
            checkers.append(checker)
            if isinstance(checker, Analysis):
                ctx.analyses[cls] = checker
            checker.finish()
        except RecursionError:
            if engine().SyntaxErrorInFile.enabled_in(enabled):
                ctx.findings.append(_too_deep(result.display))
        except Exception as exc:
            if engine().InternalError.enabled_in(enabled):
                ctx.findings.append(_internal_error(result.display, Span.at(1, 1), cls, exc))
    result.findings.extend(ctx.findings)
    result.facts = ctx.facts
    _release(ctx, checkers)
    return _with_noqa(result, text)


def _shell_crlf(result: FileResult, text: str, enabled: Set[str], crlf: List[Tuple[int, int]]) -> FileResult:
    """NPU004 at the first of the script's *crlf* line ends (:func:`npulint.shell.crlf_lines`):
    bash reads the ``\\r`` as part of the line's last word, so the words, and the commands that
    continuation lines were meant to build, are not what the script shows."""
    result.unjudged = True
    rule = engine().ShellCrlf
    if rule.enabled_in(enabled):
        n = len(crlf)
        line, col = crlf[0]
        example = _crlf_example(text, crlf)
        finding = rule.finding(
            result.display, Span(line, col, line, col + 1),
            f"CRLF (Windows) line endings{f' on {n} lines' if n > 1 else ''}: bash reads the carriage return as "
            f"part of each line's last word{f' ({example})' if example else ''} and `\\` before CRLF does not "
            "continue the command; convert the file to LF line endings")
        # a finding about the whole script, whose line moves with every comment added to it: a
        # ``# noqa: NPU004`` anywhere in it suppresses it (not a blanket ``# noqa``)
        result.noqa = noqa_map(text, result.language)
        lines = tuple(ln for ln, codes in sorted(result.noqa.items())
                      if codes and any(rule.CODE.startswith(c) for c in codes) and ln != line)
        result.findings.append(dataclasses.replace(finding, noqa_lines=lines) if lines else finding)
        return result
    return _with_noqa(result, text)


def _crlf_example(text: str, crlf: List[Tuple[int, int]]) -> Optional[str]:
    """What the carriage return does to the script's own words: the first CRLF line whose last
    word is a plain one (no quotes, expansions or operators, which bash would read otherwise
    than a space split does; not too long to quote), as ```w` becomes `w\\r```."""
    lines = text.split("\n")
    for line, col in crlf:
        words = lines[line - 1][:col - 1].split()
        if words and len(words[-1]) <= 40 and _PLAIN_WORD.fullmatch(words[-1]):
            return f"`{words[-1]}` becomes `{words[-1]}\\r`"
    return None


_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./:=,+@%-]*[A-Za-z0-9_./:,+@%-]")


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
    only calls ``_validate``: a large share of a parse). The parser builds them from source its
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
    syntax = engine().SyntaxErrorInFile
    if syntax.enabled_in(enabled):
        result.findings.append(syntax.finding(result.display, Span.at(line, col), f"syntax error: {msg}"))
    return _with_noqa(result, text)


def _analysis_limit(result: FileResult, text: str, enabled: Set[str], msg: str) -> FileResult:
    """NPU005: the file is past a bound of the analysis (*msg* names it), and nothing else is said."""
    result.unjudged = True
    limit = engine().AnalysisLimit
    if limit.enabled_in(enabled):
        result.findings.append(limit.finding(result.display, Span.at(1, 1), f"not checked: {msg}"))
    return _with_noqa(result, text)


def _nested_too_deep(result: FileResult, text: str, enabled: Set[str]) -> FileResult:
    result.unjudged = True
    if engine().SyntaxErrorInFile.enabled_in(enabled):
        result.findings.append(_too_deep(result.display))
    return _with_noqa(result, text)


def _too_deep(display: str) -> Finding:
    return engine().SyntaxErrorInFile.finding(display, Span.at(1, 1),
                                              "file is nested too deeply to analyse (recursion limit)")


def _engine_error(display: str, exc: BaseException) -> Finding:
    """NPU000 for an exception of the engine itself (not of a checker)."""
    return engine().InternalError.finding(display, Span.at(1, 1), f"internal error in npulint's engine: "
                                          f"{type(exc).__name__}: {exc} (please report this)")


def _codes_using(analysis: type) -> Set[str]:
    """The codes of the rules that read the shared analysis *analysis*."""
    from npulint import registry

    return {code for c in registry.load()[1] if analysis in c.uses for code in c.codes()}


def _internal_error(display: str, span: Span, cls: type, exc: BaseException) -> Finding:
    """NPU000 for the checker *cls*, which raised *exc*."""
    codes = ", ".join(sorted(cls.codes() or _codes_using(cls)))
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    return engine().InternalError.finding(
        display, span, f"internal error in {cls.__name__} ({codes}): {type(exc).__name__}: {exc}{where} "
        "(this file's other findings are still reported; please report this)")


def _with_noqa(result: FileResult, text: str) -> FileResult:
    if result.findings or result.facts:
        result.noqa = noqa_map(text, result.language)
    return result


def _with_directives(result: FileResult, text: str, enabled: Set[str]) -> FileResult:
    if engine().UnusedNoqa.enabled_in(enabled) and not result.skipped:
        result.directives = noqa_directives(text, result.language)
        if result.directives and not result.noqa:
            result.noqa = noqa_map(text, result.language, result.directives)
    return result


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
