"""Shell launch scripts: parse a bash script (tree-sitter-bash) into the launch commands it
runs, each argument with its expanded text and the source span of the token it came from.

What is followed: ``NAME=value``, ``NAME="…"`` (multi-line), ``NAME+=…``, ``NAME=( … )``,
``export``/``declare``/``local``/``readonly`` assignments, ``NAME="$NAME …"`` appends, and the
expansions ``$NAME``, ``${NAME}``, ``${NAME[@]}``/``${NAME[*]}``; unquoted expansions are
split into words as bash does (by the default ``IFS``: under another, an unquoted expansion
is unknown); a word bash expands into words npulint cannot know, an unquoted glob pattern
(``*``, ``?``, ``[…]``), a brace expansion or a tilde prefix, is unknown
(:meth:`_Walker.word_fields`); a quoted empty word is a word. ``$(( … ))`` is computed as bash computes it
(:func:`arith_value`), and ``${X:-w}``, ``${X-w}``, ``${X:=w}``, ``${X=w}``, ``${X:+w}``,
``${X+w}``, ``${X,,}``, ``${X^^}``, ``${X,}``, ``${X^}`` where their outcome is certain
(:meth:`_Walker._operator_expansion`). Everything else (command substitution, other
parameter operators, positional parameters, variables the script never assigns) is
*unknown*: an argument holding unknown text is marked so, and an unquoted unknown expansion
may stand for any number of words. ``if``/``elif``/``else``, ``case`` and ``a && b``/``a ||
b`` are alternatives: the analysis follows each path (up to :data:`MAX_PATHS`; beyond that
it says nothing about later commands). A condition bash decides from values the script
certainly holds takes its one branch (a ``case`` word compared with patterns that are plain
strings or ``*``, too; a body ending with ``;&`` runs on into the next one, one ending with
``;;&`` goes on testing patterns): ``[ … ]``, ``test …`` and ``[[ … ]]`` with ``=``, ``==``,
``!=``, the integer comparisons (in ``[[ ]]`` their operands are arithmetic expressions),
``<`` and ``>`` of strings of digits (other strings: the locale's order), ``-z``, ``-n``,
``!`` (and ``&&``/``||`` inside ``[[ ]]``), ``(( … ))`` and ``let …`` (true where the value is
not 0), and the commands ``true``, ``false`` and ``:`` (also as a variable's value: ``if
$USE_X``); anything else (file tests, other commands, unknown values, a pattern, an
arithmetic error such as a division by zero) leaves both branches. A path
keeps what its condition told (:meth:`_Walker._narrow`): after ``[ "$X" = a ]`` succeeded, X
is ``a``; where it failed, X is not ``a``, until X changes (paths that differ only in what
they were told are one path again, which keeps what they were all told). The commands of an ``if``,
``elif``, ``while`` or ``until`` condition run (and are launch commands); a loop's body runs
where its condition lets it. A path ends at ``exit`` (and at ``exec`` of a command), leaves
its function at ``return`` and its loop body at ``break``/``continue``: what follows does not
run on it. Variables assigned in loops (a ``for``/``select`` loop's own variable too) are unknown (also in their
conditions) and after them; a function's body is analysed where it is called (its ``local`` variables, and
``declare``/``typeset`` ones without ``-g``, and the assignments before its name (``TP=3 f``)
are seen by the functions it calls and give the caller's values back when it returns;
``local`` outside a function assigns nothing); after ``source f`` every
variable set so far is unknown (except for CANN's ``set_env.sh``). The builtins that assign
make their variables unknown: ``read``, ``mapfile``/``readarray``, ``printf -v``,
``getopts``, ``wait -p``, ``cd`` (PWD), ``let``, arithmetic (``((X++))``, ``$((X=4))``),
``${X:=v}``/``${X=v}`` where X is not known to be non-empty, and assignments through a ``declare -n`` reference
or to a variable with an attribute (``declare -i``/``-l``/``-u``, ``readonly``). A declaration
expands all its words before it assigns (``export X=b Y=$X``).
``eval`` of known text runs that text here, as script; ``eval`` of unknown text, and
``export``/``declare`` of an unknown expansion (``export $(… | xargs)``), may set any
variable: every variable is unknown after them, as after ``source``. ``unset`` reads its
words as bash does (quotes removed, expansions made): ``unset 'A[1]'`` removes that element
(the others keep their indices), a subscript that is not a known integer makes the array
unknown. Comments, ``echo``/``printf`` text and here-documents are never commands.
``bash -c "…"`` (also behind wrappers: :func:`command_start`) runs its string, read as a
script of its own whose words point back into the outer script. Each command knows the
``# noqa`` comment lines directly above the statements that hold it (:attr:`Command.noqa_lines`).

The script is bytes: it is decoded with ``surrogateescape`` (a byte that is not UTF-8 is one
character), and lines end at ``\\r\\n``, ``\\r`` or ``\\n``, as the fixes count them.
Comments (:func:`comments`) and CRLF line ends (:func:`crlf_lines`) come from the parser too.

The parser is imported lazily: only when a shell file is actually analysed.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import itertools
import os
import re
import shutil
import subprocess
from typing import Dict, List, Optional, Sequence, Tuple

from npulint.model import LazySpan, Span

MAX_PATHS = 64
# Bounds on the work one script can cause (issue: bounded work on hostile input), far above any
# real launch script (docs/benchmarks.md has the measured maxima). Past one, the script gets one
# NPU005 finding naming the bound and nothing else: what was read before it could be a part
# of a command whose rest was never seen.
MAX_NESTING = 64  # statements inside one another (loops, ifs, cases, groups, subshells, pipelines, lists)
MAX_VALUE = 1 << 16  # characters of one variable's value, or of one word after expansion
MAX_WORDS = 4096  # words of one command after expansion (also the items of one array)
UNKNOWN = "\x00"  # marks text of unknown origin inside a value
MANY = "\x01"  # after UNKNOWN: the unknown text may be any number of words, even quoted ("$@")

_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


class Arg(LazySpan):
    """One word of a command after expansion. ``text`` may contain :data:`UNKNOWN`; ``span``
    is where its first character was written (None when it has no single source). *span*
    may be given as a function that computes it: it is called on first use (most words are
    never reported, so most spans would be computed for nothing; docs/benchmarks.md,
    "Figures behind the engine's comments")."""

    __slots__ = ("text", "_span", "splat")

    def __init__(self, text: str, span, splat: bool = False):
        self.text = text
        self._span = span
        self.splat = splat  # an unquoted unknown expansion: stands for any number of words

    @property
    def known(self) -> bool:
        return UNKNOWN not in self.text and not self.splat

    def __repr__(self) -> str:
        return f"Arg({self.text!r}, {self.span!r}, {self.splat!r})"


@dataclasses.dataclass
class Command:
    """A simple command on one path through the script: its words after expansion."""

    words: List[Arg]
    span: Span  # the command as written
    # where the functions running it were called (start bytes, outermost first), and where it
    # stands in the eval text or ``bash -c`` string that holds it (which share *span*): one
    # command as written runs once per path through the script and once per call of its function
    calls: Tuple[object, ...] = ()
    # the lines of the ``# noqa`` comments that apply to the whole command: a comment line
    # directly above it (or above a statement it is part of, or above the function call that
    # runs it), or above an assignment that one of its words comes from
    noqa_lines: Tuple[int, ...] = ()


@dataclasses.dataclass
class ParseError:
    line: int
    column: int
    message: str


class Value:
    """Text plus, per character, its byte offset in the source (None = no source); or an
    array of values. Never changed once made (a plain class, not a frozen dataclass: a
    script's analysis makes very many of them, and a frozen dataclass's constructor is slower)."""

    __slots__ = ("text", "offs", "is_array", "items", "idx")

    def __init__(self, text: str, offs: Tuple[Optional[int], ...], is_array: bool = False,
                 items: Tuple["Value", ...] = (), idx: Optional[Tuple[int, ...]] = None):
        self.text = text
        self.offs = offs
        self.is_array = is_array
        self.items = items
        self.idx = idx  # an array's indices, after ``unset 'A[i]'`` (None: 0, 1, 2…)

    def __repr__(self) -> str:
        return f"Value({self.text!r}, {self.offs!r}, {self.is_array!r}, {self.items!r})"

    @staticmethod
    def unknown() -> "Value":
        return Value(UNKNOWN, (None,))

    def __add__(self, other: "Value") -> "Value":
        return Value(self.text + other.text, self.offs + other.offs)


EMPTY = Value("", ())


class _Capped(Exception):
    pass


class _Limit(_Capped):
    """A bound of the analysis was reached: *what* says which, for the user."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def _check_value(v: "Value") -> "Value":
    if len(v.text) > MAX_VALUE:
        raise _Limit(f"a value longer than {MAX_VALUE} characters (MAX_VALUE)")
    if len(v.items) > MAX_WORDS:
        raise _Limit(f"an array of more than {MAX_WORDS} items (MAX_WORDS)")
    return v


# Line numbers count the line breaks every part of npulint counts (the fixes' edits, the
# editor protocol, Python's tokenizer): ``\r\n``, ``\r`` and ``\n``. Columns count
# characters, a byte that is not part of valid UTF-8 being one.
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


class _Source:
    """A script's bytes and where its lines start: byte offsets to spans. The words'
    lazy spans hold this, not the script (whose commands hold the words): no reference cycle,
    so a script's analysis is freed as soon as it is dropped, not when the cyclic collector
    next runs (docs/benchmarks.md, "Figures behind the engine's comments")."""

    def __init__(self, data: bytes):
        self.data = data
        self.ascii = data.isascii()  # then a character is a byte: the offset arithmetic is plain
        self._line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(data)]

    def span_of(self, start: int, end: Optional[int] = None) -> Span:
        """1-based (line, column in characters) of byte offsets; end exclusive."""
        return Span(*self._point(start), *self._point(start if end is None else end))

    def _point(self, off: int) -> Tuple[int, int]:
        import bisect

        line = bisect.bisect_right(self._line_starts, off) - 1
        start = self._line_starts[line]
        if self.ascii:
            return line + 1, off - start + 1
        col = len(self.data[start:off].decode("utf-8", "surrogateescape")) + 1
        return line + 1, col

    def token_span(self, value: Value) -> Optional[Span]:
        """Where a word was written: from its first character with a source, over the run of
        characters that follow it contiguously in the source."""
        offs = value.offs
        k = next((i for i, o in enumerate(offs) if o is not None), None)
        if k is None:
            return None
        start = end = offs[k]
        data = self.data
        if self.ascii:
            end += 1
            for o in offs[k + 1:]:
                if o != end:
                    break
                end += 1
            return self.span_of(start, end)
        end += _clen(data, end)
        for o in offs[k + 1:]:
            if o != end:
                break
            end += _clen(data, o)
        return self.span_of(start, end)


class Script:
    """The launch-relevant view of one script."""

    def __init__(self, text: str):
        self.text = text
        self.source = _Source(text.encode("utf-8", "surrogateescape"))
        self.data = self.source.data
        self.ascii = self.source.ascii
        self.commands: List[Command] = []
        self.limit: Optional[str] = None  # the bound the analysis reached (then nothing is said)
        # (start byte, end byte, line) of each statement with a ``# noqa`` comment line above it
        self.noqa_above: List[Tuple[int, int, int]] = []

    def span_of(self, start: int, end: Optional[int] = None) -> Span:
        return self.source.span_of(start, end)

    def _point(self, off: int) -> Tuple[int, int]:
        return self.source._point(off)


def parse_script(text: str) -> Tuple[Optional[Script], Optional[ParseError]]:
    """The launch commands of *text*, or the position of a syntax error bash itself rejects."""
    source = text
    # tree-sitter-bash rejects a line continuation at the very end of the file, which bash accepts
    if source.rstrip(" \t").endswith("\\"):
        source = source.rstrip(" \t") + "\n\n"
    elif source.endswith("\\\n") or source.endswith("\\\r\n"):
        source = source + "\n"
    data, root = _parse_bytes(source)
    script = Script(source)
    if root.has_error:
        err = _first_error(root)
        if not _bash_accepts(data):
            line, col = script._point(err.start_byte) if err is not None else (1, 1)
            return None, ParseError(line, col, "bash cannot parse this script")
        # bash accepts it (a construct tree-sitter-bash does not know, e.g. ${X:$N+1}): what
        # tree-sitter could not read may assign a variable or hold a command, so nothing is
        # known about the script's commands and nothing is said
        return script, None
    if _MAYBE_NOQA.search(data):
        script.noqa_above = _noqa_above(root, script.source)
    _Walker(script).run(root)
    return script, None


_MAYBE_NOQA = re.compile(rb"(?i)noqa")


def _comment_nodes(root) -> list:
    """The ``comment`` nodes under *root*, in source order (what bash reads as comments: not
    a ``#`` inside a word, a string or a here-document)."""
    import tree_sitter

    global _COMMENT_QUERY
    if _COMMENT_QUERY is None:
        _COMMENT_QUERY = tree_sitter.Query(_parser().language, "(comment) @c")
    cursor_class = getattr(tree_sitter, "QueryCursor", None)
    found = (cursor_class(_COMMENT_QUERY).captures(root) if cursor_class is not None
             else _COMMENT_QUERY.captures(root))
    nodes = found.get("c", []) if isinstance(found, dict) else [n for n, _ in found]
    return sorted(nodes, key=lambda n: n.start_byte)


_COMMENT_QUERY = None


_LAST_PARSE: list = [None, None, None, None]  # (text, bytes, root, tree) of the last script parsed


def _parse_bytes(text: str):
    """*text*'s bytes and tree. The last script's is kept: reading its launches, its comments
    (``# noqa``, ``skip-file``) and its CRLF lines then parse it once, not three times."""
    if _LAST_PARSE[0] is not None and _LAST_PARSE[0] == text:
        return _LAST_PARSE[1], _LAST_PARSE[2]
    data = text.encode("utf-8", "surrogateescape")
    tree = _parser().parse(data)
    _LAST_PARSE[:] = [text, data, tree.root_node, tree]
    return data, tree.root_node


def comments(text: str) -> List[Tuple[int, int, str, str]]:
    """``(line, column0, comment, before)`` for every comment of the script, as bash reads it
    (from tree-sitter-bash's tree): *column0* counts characters from 0, *before* is the text
    of the line before the comment. The comment keeps no line break (nor the ``\\r`` of a
    CRLF line)."""
    data, root = _parse_bytes(text)
    source = _Source(data)
    out = []
    for node in _comment_nodes(root):
        line, col = source._point(node.start_byte)
        line_start = source._line_starts[line - 1]
        before = data[line_start:node.start_byte].decode("utf-8", "surrogateescape")
        comment = data[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape").rstrip("\r\n")
        out.append((line, col - 1, comment, before))
    return out


def crlf_lines(text: str) -> List[Tuple[int, int]]:
    """(line, column) of each carriage return that ends a line (CRLF) where bash reads it as
    part of the script (not inside a comment): bash's line break is ``\\n`` alone."""
    if "\r\n" not in text:
        return []
    import bisect

    data, root = _parse_bytes(text)
    ranges = [(n.start_byte, n.end_byte) for n in _comment_nodes(root)]
    starts = [a for a, _ in ranges]
    source = _Source(data)
    lines = []
    for m in re.finditer(rb"\r\n", data):
        at = m.start()
        k = bisect.bisect_right(starts, at) - 1
        if k >= 0 and ranges[k][0] <= at < ranges[k][1]:
            continue  # a comment's own \r: bash ignores it with the comment
        lines.append(source._point(at))
    return lines


_STATEMENT_LISTS = {"program", "compound_statement", "do_group", "if_statement", "elif_clause", "else_clause",
                    "case_item", "subshell"}


def _noqa_above(root, source: "_Source") -> List[Tuple[int, int, int]]:
    """``(start byte, end byte, line)`` of each statement with a ``# noqa`` comment line
    directly above it (alone on its line; other comment lines may come between)."""
    from npulint.source import _NOQA

    data = source.data
    out = []
    for c in _comment_nodes(root):
        parent = c.parent
        if parent is None or parent.type not in _STATEMENT_LISTS:
            continue
        line, col = source._point(c.start_byte)
        if data[source._line_starts[line - 1]:c.start_byte].strip(b" \t"):
            continue  # after a command on its line: a line directive, not one above
        if not _NOQA.search(data[c.start_byte:c.end_byte].decode("utf-8", "surrogateescape")):
            continue
        last = line
        below = c.next_named_sibling
        while below is not None and below.type == "comment" and source._point(below.start_byte)[0] == last + 1:
            last += 1
            below = below.next_named_sibling
        if below is None or below.type in ("comment", "heredoc_body") or source._point(below.start_byte)[0] != last + 1:
            continue
        out.append((below.start_byte, below.end_byte, line))
    return out


def statement_start(text: str, line: int, column: int) -> Optional[Tuple[int, int]]:
    """Where a ``# noqa`` comment line directly above would cover the position (*line*,
    *column*: 1-based, characters): ``(line, column)`` of the innermost statement holding it
    (a command, an assignment, a pipeline, an ``if``/``for`` block: a child of a statement
    list, as :func:`_noqa_above` reads them) that begins its line, only blanks before it. For
    a ``\\``-continued command that is its first line. None when no such statement holds
    the position (a comment, a blank line, past the end)."""
    data, root = _parse_bytes(text)
    source = _Source(data)
    starts = source._line_starts
    if line < 1 or line > len(starts) or column < 1:
        return None
    end = starts[line] if line < len(starts) else len(data)
    chars = data[starts[line - 1]:end].decode("utf-8", "surrogateescape")
    off = starts[line - 1] + len(chars[:column - 1].encode("utf-8", "surrogateescape"))
    best = None
    node = root
    while True:
        child = next((c for c in node.named_children if c.start_byte <= off < c.end_byte), None)
        if child is None:
            return best
        if node.type in _STATEMENT_LISTS and child.type not in ("comment", "heredoc_body"):
            at_line, at_col = source._point(child.start_byte)
            if not data[starts[at_line - 1]:child.start_byte].strip(b" \t"):
                best = (at_line, at_col)
        node = child


def _first_error(node):
    if node.type == "ERROR" or node.is_missing:
        return node
    for c in node.children:
        if c.has_error or c.is_missing:
            r = _first_error(c)
            if r is not None:
                return r
    return node if node.has_error else None


def _bash_accepts(data: bytes) -> bool:
    """``bash -n`` (parse only, nothing runs) as a second opinion where tree-sitter-bash
    finds an error; without bash, the tree-sitter verdict stands."""
    import threading

    bash = shutil.which("bash")
    if bash is None:
        return False
    try:
        # only the status is read; without close_fds (npulint's own descriptors are not
        # inheritable anyway) the child is spawned, not forked from this large process
        proc = subprocess.Popen([bash, "-n"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, close_fds=False)
    except OSError:
        return False
    # A blocking wait, and a timer that ends bash if it takes too long: Popen's own time-out
    # polls, sleeping 0.5, 1, 2... ms between looks, longer than ``bash -n`` itself takes.
    timer = threading.Timer(BASH_TIMEOUT, proc.kill)
    timer.start()
    try:
        proc.communicate(data)
    except OSError:
        proc.kill()
        proc.wait()
        return False
    finally:
        timer.cancel()
    return proc.returncode == 0


BASH_TIMEOUT = 10.0  # seconds


_EXPANSION_TYPES = {"simple_expansion", "expansion"}
_UNKNOWN_TYPES = {"command_substitution", "arithmetic_expansion", "process_substitution", "brace_expression"}
_DECL = {"export", "declare", "local", "readonly", "typeset"}
_NOT_COMMANDS = {"echo", "printf", ":", "true", "false", "test", "[", "[[", "cat", "read"}


class _Walker:
    """Walks the tree keeping a list of variable environments, one per path."""

    def __init__(self, script: Script, depth: int = 0, noqa: Tuple[int, ...] = ()):
        self.s = script
        self.data = script.data
        self.functions: Dict[str, Tuple[object, "_Walker"]] = {}  # name: (body, the walker of its text)
        self.calling: List[str] = []
        self.call_sites: List[int] = []  # where each function of ``calling`` was called
        self.depth = depth  # ``bash -c`` strings (and ``eval`` texts) inside one another
        self.call_noqa: Tuple[int, ...] = noqa  # noqa lines of the call sites that run this code
        # ``declare -n`` names, on any path so far: the variables they may refer to (None: not
        # known); assigning one assigns those
        self.namerefs: Dict[str, set] = {}
        # variables given an attribute (``declare -i``/``-l``/``-u``, ``readonly``) on any path
        # so far: assigning one stores what bash computes, or nothing: unknown
        self.attributes: set = set()
        self.span: Optional[Span] = None  # the span of the commands an ``eval`` text runs

    # -- driver ----------------------------------------------------------------------
    def run(self, root) -> None:
        self._assigned: Dict[int, Tuple[str, ...]] = {}
        self._depth = 0
        self._returns: List[list] = []  # per function running: the paths that returned from it
        self._loops = 0  # loop bodies running
        try:
            self.block(root.children, [dict()])
        except _Limit as exc:
            self.s.limit = exc.what
        except _Capped:  # past MAX_PATHS branch paths: the commands after it are not recorded
            pass

    def block(self, nodes, envs: List[Dict[str, Value]]) -> List[Dict[str, Value]]:
        for n in nodes:
            envs = self.stmt(n, envs)
        return envs

    def _cap(self, envs):
        """Merge identical environments, then cap. Paths that differ only in what conditions
        told (:meth:`_narrow`) are one path that keeps only what they all were told (an
        ``if [ -z "$X" ]`` whose branches assign nothing does not make two paths)."""
        groups: Dict[tuple, list] = {}
        for e in envs:
            full = _env_key(e)
            told = e.get(_FACTS) or e.get(_NARROWED)
            plain = _env_key(_untold(e, (), ())) if told else full
            group = groups.setdefault(plain, [])
            if all(full != k for k, _ in group):
                group.append((full, e))
        uniq = []
        for group in groups.values():
            if len(group) == 1:
                uniq.append(group[0][1])
                continue
            common_told = set.intersection(*(set(_told_keys(e)) for _, e in group))
            common_facts = set.intersection(*(set(_fact_keys(e)) for _, e in group))
            uniq.append(_untold(group[0][1], common_told, common_facts))
        if len(uniq) > MAX_PATHS:
            raise _Capped()
        return uniq

    def stmt(self, n, envs):
        """One statement; statements inside one another (loops, ifs, groups, pipelines, ``&&``
        lists) more than :data:`MAX_NESTING` deep stop the analysis (no recursion runs away).
        A statement ended by ``&`` (a command, a function call, a group, an ``if``, a list...)
        runs in a subshell in the background: its assignments stay there, and an ``exit`` in
        it ends that subshell, not the script."""
        return self._nested(n, envs, self._stmt, lambda: envs)

    def _nested(self, n, envs, run, backgrounded):
        """``run(n, envs)`` one level deeper (past :data:`MAX_NESTING`, the analysis stops);
        a statement ended by ``&`` runs in a subshell instead, and ``backgrounded()`` is what
        the caller gets."""
        self._depth += 1
        try:
            if self._depth > MAX_NESTING:
                raise _Limit(f"statements nested more than {MAX_NESTING} deep (MAX_NESTING)")
            if _backgrounded(n):
                self.in_subshell(lambda: self._stmt(n, envs))
                return backgrounded()
            return run(n, envs)
        finally:
            self._depth -= 1

    def _stmt(self, n, envs):
        t = n.type
        if t in ("comment", "heredoc_body", "heredoc_start", "heredoc_end", ";", ";;", "&", "\n"):
            return envs
        if t == "ERROR" or n.is_missing:
            return envs
        arith = self._arith_command(n)
        if t in _SIMPLE or arith:
            envs = self._expansion_effects(n, envs)
            if arith:  # (( … )): nothing else happens
                return envs
        if t == "variable_assignment":
            return [self.assign(n, e, copy=True) for e in envs]
        if t == "declaration_command":
            return [self.declare(n, e) for e in envs]
        if t == "variable_assignments":
            out = []
            for e in envs:
                e = dict(e)
                for c in n.named_children:
                    if c.type == "variable_assignment":
                        e = self.assign(c, e, copy=False)
                out.append(e)
            return out
        if t == "unset_command":
            return [self.unset(n, e) for e in envs]
        if t == "command":
            name = n.child_by_field_name("name")
            if name is not None and self.text(name) in self.functions:
                return self.call(self.text(name), envs, n)
            if name is not None and self.text(name) in ("source", "."):
                args = n.children_by_field_name("argument")
                target = self.text(args[0]).strip("'\"") if args else ""
                if not (target.endswith("/set_env.sh") or target == "/etc/os-release"):
                    # the sourced file may set any variable: what the script set so far is unknown
                    # (CANN's set_env.sh only sets the toolkit's environment)
                    return [_all_unknown(e) for e in envs]
                return envs
            out, changed = [], False
            for e in envs:
                fields = self.command(n, e)
                if fields and self._ends(fields, e):
                    changed = True
                    continue
                after = self._effects(n, fields, e) if fields else None
                if after is None:
                    out.append(e)
                else:
                    out.extend(after)
                    changed = True
            return self._cap(out) if changed else envs
        if t == "redirected_statement":
            body = n.child_by_field_name("body")
            return self.stmt(body, envs) if body is not None else envs
        if t in ("pipeline",):
            for c in n.named_children:
                # each part of a pipeline runs in a subshell: its assignments do not survive
                self.in_subshell(lambda: self.stmt(c, envs))
            return envs
        if t == "list":
            return self.andor(n, envs)
        if t in ("subshell",):
            self.in_subshell(lambda: self.block(n.named_children, envs))
            return envs
        if t in ("compound_statement",):
            return self.block(n.named_children, envs)
        if t == "if_statement":
            return self.if_stmt(n, envs)
        if t == "case_statement":
            return self.case_stmt(n, envs)
        if t in ("for_statement", "c_style_for_statement", "while_statement"):
            return self.loop(n, envs)
        if t == "function_definition":
            return self.function(n, envs)
        if t == "negated_command":
            ok, failed = self._status(n, envs)
            return self._cap(ok + failed)
        if t == "test_command":
            return envs
        # anything else: look inside for commands, keep the environments
        for c in n.named_children:
            self.stmt(c, envs)
        return envs

    # -- control flow --------------------------------------------------------------------
    def andor(self, n, envs):
        """``a && b || c``: the right side of ``&&`` runs on the paths where the left succeeds,
        that of ``||`` where it fails (:meth:`status`)."""
        ok, failed = self._status(n, envs)
        return self._cap(ok + failed)

    def if_stmt(self, n, envs):
        """Each clause's body runs on the paths where its condition succeeds, the next clause
        is tried on those where it fails; a condition bash decides from known values takes
        one branch only."""
        out = []
        rest = [dict(e) for e in envs]
        for conds, body in self._clauses(n):
            if not rest:
                break
            if conds is None:  # else
                out += self.block(body, rest)
                rest = []
                break
            ok, rest = self.status_block(conds, rest)
            out += self.block(body, ok)
        return self._cap(out + rest)

    def _clauses(self, n):
        """``(condition statements, body statements)`` of an ``if`` and its ``elif``s, then
        ``(None, body)`` for an ``else``."""
        clauses = []
        for clause in [n] + [c for c in n.children if c.type == "elif_clause"]:
            conds, body, in_body = [], [], False
            for c in clause.children:
                if c.type == "then":
                    in_body = True
                    continue
                if c.type in ("elif_clause", "else_clause", "fi"):
                    break
                if not c.is_named or c.type in ("comment", "heredoc_body"):
                    continue
                (body if in_body else conds).append(c)
            clauses.append((conds, body))
        for c in n.children:
            if c.type == "else_clause":
                clauses.append((None, [x for x in c.named_children if x.type != "comment"]))
        return clauses

    # -- conditions: which paths a command succeeds on -------------------------------------
    def status(self, n, envs):
        """Run statement *n* on each path (as :meth:`stmt` does); returns ``(paths on which it
        succeeds, paths on which it fails)``. A path whose outcome is not known is in both,
        each copy with what the outcome tells of its variables (:meth:`_narrow`). Started in
        the background (``if cmd & then``), it succeeds."""
        return self._nested(n, envs, self._status, lambda: (envs, []))

    def status_block(self, nodes, envs):
        """The status of a list of statements: that of the last one."""
        nodes = [c for c in nodes if c.type not in ("comment", "heredoc_body")]
        if not nodes:
            return envs, []
        envs = self.block(nodes[:-1], envs)
        return self.status(nodes[-1], envs)

    def _status(self, n, envs):
        # (statement *n* itself is one level of nesting, counted by the caller)
        t = n.type
        if t == "negated_command":
            inner = [c for c in n.named_children if c.type not in ("comment", "heredoc_body")]
            if len(inner) != 1:
                after = self.block(inner, envs)
                return after, after
            ok, failed = self.status(inner[0], envs)
            return failed, ok
        if t == "list":
            children = n.children
            ok, failed = self.status(children[0], envs)
            i = 1
            while i + 1 < len(children):
                op, right = children[i], children[i + 1]
                if op.type == "&&":  # the right side runs where the left succeeded
                    ok2, failed2 = self.status(right, ok)
                    ok, failed = ok2, failed + failed2
                elif op.type == "||":  # ... where it failed
                    ok2, failed2 = self.status(right, failed)
                    ok, failed = ok + ok2, failed2
                else:
                    ok, failed = self.status(right, self._cap(ok + failed))
                ok, failed = self._cap(ok), self._cap(failed)
                i += 2
            return ok, failed
        if self._arith_command(n):  # (( … )): succeeds where its value is not 0
            after = self._stmt(n, envs)
            if len(after) != len(envs) or any(a is not b for a, b in zip(after, envs)):
                return after, after  # it assigned variables: not read
            return self._decide(envs, lambda e: _arith_status(self.arith(n, e)))
        if t == "test_command":
            envs = self._expansion_effects(n, envs)
            return self._decide(envs, lambda e: self._test(n, e))
        if t == "command":
            after = self._stmt(n, envs)
            name = n.child_by_field_name("name")
            if name is None or len(after) != len(envs) or any(a is not b for a, b in zip(after, envs)):
                return after, after  # a function, or a command that assigned variables: not read
            return self._decide(envs, lambda e: self._command_status(n, e))
        if t == "compound_statement":
            return self.status_block(n.named_children, envs)
        if t == "subshell":  # its status, but none of its assignments
            ok, failed = [], []
            for e in envs:
                o, f = self.in_subshell(lambda: self.status_block(n.named_children, [dict(e)]))
                if o or not f:  # (a subshell that exits: its status is not read)
                    ok.append(e)
                if f or not o:
                    failed.append(e)
            return ok, failed
        if t == "redirected_statement":
            body = n.child_by_field_name("body")
            if body is None:
                return envs, envs
            ok, failed = self.status(body, envs)
            return ok, self._cap(failed + ok)  # a redirection that fails fails the command
        if t in ("variable_assignment", "variable_assignments"):
            after = self._stmt(n, envs)
            if self._has_substitution(n):  # its status is that of the last command substitution
                return after, after
            return after, []
        after = self._stmt(n, envs)
        return after, after

    def _has_substitution(self, n) -> bool:
        stack = [n]
        while stack:
            x = stack.pop()
            if x.type in ("command_substitution", "process_substitution"):
                return True
            stack.extend(x.named_children)
        return False

    def _decide(self, envs, outcome):
        """Split the paths by *outcome* (``(True/False/None, narrowing if true, narrowing if
        false)`` of a path's environment)."""
        ok, failed = [], []
        for e in envs:
            known, if_true, if_false = outcome(e)
            if known is None:
                ok.append(self._narrow(e, if_true))
                failed.append(self._narrow(e, if_false))
            elif known:
                ok.append(e)
            else:
                failed.append(e)
        return ok, failed

    def _narrow(self, env, what):
        """*env* with what a test's outcome tells: a variable's value (``[ "$X" = a ]``
        succeeded: X is ``a``), or a fact about a value that stays unknown (it failed: X is
        not ``a``), valid while the variable holds that same value."""
        if not what:
            return env
        env = dict(env)
        for name, told in what:
            if isinstance(told, Value):
                # what it was before, to merge this path with one where the test told otherwise
                records = tuple(r for r in env.get(_NARROWED, ()) if env.get(r[0]) is r[2] and r[0] != name)
                env[_NARROWED] = records + ((name, env.get(name), told),)
                env[name] = told
            else:
                facts = tuple(f for f in env.get(_FACTS, ()) if env.get(f[0]) is f[1])
                env[_FACTS] = facts + ((name, env.get(name)) + told,)
        return env

    def _fact(self, env, name, op, rhs) -> Optional[bool]:
        for f in env.get(_FACTS, ()):
            if f[0] == name and f[2] == op and f[3] == rhs and env.get(name) is f[1]:
                return f[4]
        return None

    def _command_status(self, n, env):
        """``true``, ``false``, ``:`` (also as the value of a variable: ``if $USE_X``),
        ``test …`` and ``let …`` (it succeeds where the value of its last expression is not
        0); any other command's status is unknown."""
        name = n.child_by_field_name("name")
        if self.text(name) in ("test", "let") and not any(c.type in ("file_redirect", "herestring_redirect",
                                                                     "heredoc_redirect") for c in n.children):
            args = []
            for a in n.children_by_field_name("argument"):
                f = self._test_fields(a, env)
                if f is None:
                    return _UNDECIDED
                args.extend(f)
            if self.text(name) == "test":
                return self._posix_test(args, env)
            values = [arith_value(v.text, env) if v is not None else None for v, _ in args]
            return _arith_status(values[-1]) if values and None not in values else _UNDECIDED
        fields = self.word_fields(name.named_children[0] if name.named_children else name, env)
        if not fields or fields[0][1] or UNKNOWN in fields[0][0].text:
            return _UNDECIDED
        first = fields[0][0].text
        if first in self.functions:
            return _UNDECIDED
        if first in ("true", ":"):
            return _TRUE
        if first == "false":
            return _FALSE
        return _UNDECIDED

    # ``[ … ]`` and ``test …``: the arguments after expansion, evaluated by POSIX's rules on
    # their number (bash's ``test`` for up to four arguments); anything bash would reject, a
    # file test, a word whose expansion is unknown or may be split or globbed: unknown.
    def _test(self, n, env):
        kids = n.children
        if not kids:
            return _UNDECIDED
        if kids[0].type == "[[":
            return self._cond_test(n, env) if kids[-1].type == "]]" else _UNDECIDED
        if kids[0].type != "[" or kids[-1].type != "]":
            return _UNDECIDED
        leaves: list = []
        stack = list(reversed(kids[1:-1]))
        while stack:
            x = stack.pop()
            if x.type in ("binary_expression", "unary_expression", "parenthesized_expression"):
                stack.extend(reversed(x.children))
            else:
                leaves.append(x)
        args = []
        for leaf in leaves:
            f = self._test_fields(leaf, env)
            if f is None:
                return _UNDECIDED
            args.extend(f)
        return self._posix_test(args, env)

    def _test_fields(self, n, env):
        """The arguments one word of ``[ … ]``/``test`` gives: ``(value, variable)`` pairs
        (value None when unknown; *variable* names X for a word that is exactly ``"$X"``);
        None when their number or text cannot be known."""
        t = n.type
        if not n.is_named or t == "test_operator":
            return [(self.literal(n, unquoted=True), None)]
        if t in ("word", "number", "extglob_pattern"):
            if any(ch in _GLOB for ch in self.text(n)):
                return None  # pathname expansion, or escapes
            return [(self.literal(n, unquoted=True), None)]
        if t in ("string", "raw_string"):
            pieces = self.parts(n, env, quoted=True)
            if any(v.is_array or MANY in v.text for v, _ in pieces):
                return None  # "${A[@]}", "$@": any number of words
            value = _join(v for v, _ in pieces)
            return [(None if UNKNOWN in value.text else value, self._lone_variable(n))]
        if t in _EXPANSION_TYPES or t == "arithmetic_expansion":
            value = self.expand(n, env) if t in _EXPANSION_TYPES else self.arith_expansion(n, env)
            if value.is_array or UNKNOWN in value.text or any(ch in _GLOB for ch in value.text):
                return None
            return [(w, None) for w, _ in _split([(value, True)], _default_ifs(env))]
        if t == "concatenation":
            parts = []
            for c in n.children:
                if c.type in ("word", "number", "extglob_pattern", "string", "raw_string"):
                    f = self._test_fields(c, env)
                    if f is None or len(f) != 1 or f[0][0] is None:
                        return None
                    parts.append(f[0][0])
                else:
                    return None
            return [(_join(parts), None)]
        return None

    def _lone_variable(self, n) -> Optional[str]:
        """X when word *n* is exactly ``$X``, ``${X}``, ``"$X"`` or ``"${X}"``."""
        m = _LONE_VARIABLE.fullmatch(self.text(n))
        return (m.group(1) or m.group(2)) if m else None

    def _posix_test(self, args, env):
        def text(i):
            return args[i][0].text if args[i][0] is not None else None

        n = len(args)
        if n == 0:
            return _FALSE
        if n == 1:
            return self._nonempty(args[0], env)
        if n == 2:
            if text(0) == "!":
                return _negate(self._nonempty(args[1], env))
            if text(0) in ("-n", "-z"):
                r = self._nonempty(args[1], env)
                return r if text(0) == "-n" else _negate(r)
            return _UNDECIDED  # a file test, an error, or an unknown first word
        if n == 3:
            if text(1) in _BINARY_TESTS:
                return self._binary(text(1), args[0], args[2], env, "[")
            if text(0) == "!":
                return _negate(self._posix_test(args[1:], env))
            if text(0) == "(" and text(2) == ")":
                return self._posix_test(args[1:2], env)
            return _UNDECIDED
        if n == 4:
            if text(0) == "!":
                return _negate(self._posix_test(args[1:], env))
            if text(0) == "(" and text(3) == ")":
                return self._posix_test(args[1:3], env)
        return _UNDECIDED

    def _nonempty(self, arg, env):
        value, name = arg
        if value is not None:
            return _TRUE if value.text else _FALSE
        if name is None or self._is_array(env, name):
            return _UNDECIDED
        known = self._fact(env, name, "-n", "")
        if known is not None:
            return _TRUE if known else _FALSE
        return None, ((name, ("-n", "", True)),), ((name, EMPTY),)

    def _is_array(self, env, name) -> bool:
        v = env.get(name)
        return v is not None and v.is_array

    def _binary(self, op, a, b, env, kind):
        """``a op b`` in ``[ ]`` (*kind* ``"["``) or ``[[ ]]`` (``"[["``; the right side of
        ``==`` has been read as a pattern)."""
        if op in ("=", "==", "!="):
            r = self._equal(a, b, env)
            return _negate(r) if op == "!=" else r
        if op in _INT_TESTS:
            return self._compare(op, a, b, env, kind)
        if op in ("-a", "-o") and kind == "[":
            ra, rb = self._nonempty(a, env), self._nonempty(b, env)
            if op == "-a":
                return _FALSE if False in (ra[0], rb[0]) else _TRUE if ra[0] and rb[0] else _UNDECIDED
            return _TRUE if True in (ra[0], rb[0]) else _FALSE if ra[0] is False and rb[0] is False else _UNDECIDED
        if op in ("<", ">") and a[0] is not None and b[0] is not None \
                and _DIGITS.fullmatch(a[0].text) and _DIGITS.fullmatch(b[0].text):
            # strings of digits: every locale orders them as their bytes (other strings: by
            # the locale's collation in ``[[ ]]``, and in ``test`` in some bash versions)
            return _TRUE if (a[0].text < b[0].text) == (op == "<") and a[0].text != b[0].text else _FALSE
        return _UNDECIDED  # <, > of other strings, -nt, -ot, -ef, =~

    def _equal(self, a, b, env):
        if a[0] is not None and b[0] is not None:
            return _TRUE if a[0].text == b[0].text else _FALSE
        if a[0] is not None:
            a, b = b, a
        (_, name), (value, _) = a, b
        if value is None or name is None or self._is_array(env, name):
            return _UNDECIDED
        known = self._fact(env, name, "=", value.text)
        if known is not None:
            return _TRUE if known else _FALSE
        return None, ((name, value),), ((name, ("=", value.text, False)),)

    def _compare(self, op, a, b, env, kind):
        """``a op b`` for the integer comparisons: ``[``'s operands are integers, ``[[``'s
        arithmetic expressions."""
        def integer(text):
            return _integer(text) if kind == "[" else arith_value(text, env)

        x = integer(a[0].text) if a[0] is not None else None
        y = integer(b[0].text) if b[0] is not None else None
        if (a[0] is not None and x is None) or (b[0] is not None and y is None):
            return _UNDECIDED  # not an integer: bash reports an error
        if x is not None and y is not None:
            return _TRUE if _INT_TESTS[op](x, y) else _FALSE
        if x is not None:  # the variable on the right: 1 -lt $X is $X -gt 1
            a, b, x, y = b, a, y, x
            op = _SWAPPED.get(op, op)
        name = a[1]
        if y is None or name is None or self._is_array(env, name):
            return _UNDECIDED
        # a fact is kept as one of -eq, -lt, -gt and its outcome
        negated = op in _NEGATED_INT
        base = _NEGATED_INT.get(op, op)
        key = kind + base
        known = self._fact(env, name, key, y)
        if known is not None:
            return _TRUE if known != negated else _FALSE
        return None, ((name, (key, y, not negated)),), ((name, (key, y, negated)),)

    # ``[[ … ]]``: bash's grammar (``!``, ``( )``, ``&&`` before ``||``), read from the
    # expression's tokens (tree-sitter-bash does not always group them as bash does); words
    # are not split, and the right side of ``==``/``!=`` is a pattern: unknown unless quoted
    # or free of pattern characters.
    def _cond_test(self, n, env):
        tokens: list = []
        stack = [c for c in reversed(n.children[1:-1]) if c.type != "comment"]
        while stack:
            x = stack.pop()
            if x.type in ("binary_expression", "unary_expression", "parenthesized_expression"):
                stack.extend(reversed(x.children))
            elif x.type == "regex":
                return _UNDECIDED  # =~ (and what tree-sitter-bash may have read into its regex)
            else:
                tokens.append(x)
        pos, nesting = [0], [0]

        def op(i):
            if i < len(tokens) and (not tokens[i].is_named or tokens[i].type == "test_operator"):
                return self.text(tokens[i])
            return None

        def chain(operator, operand):  # operand (operator operand)*, left to right
            r = operand()
            while op(pos[0]) == operator:
                pos[0] += 1
                r = self._cond_logic(operator, r, operand)
            return r

        def expr():
            return chain("||", conj)

        def conj():
            return chain("&&", term)

        def term(depth=0):
            i = pos[0]
            if i >= len(tokens) or depth > MAX_NESTING:
                raise ValueError
            o = op(i)
            if o == "!":
                pos[0] += 1
                return _negate(term(depth + 1))
            if o == "(":
                pos[0] += 1
                nesting[0] += 1
                if nesting[0] > MAX_NESTING:
                    raise ValueError
                r = expr()
                nesting[0] -= 1
                if op(pos[0]) != ")":
                    raise ValueError
                pos[0] += 1
                return r
            if o in ("&&", "||", ")"):
                raise ValueError
            if o is not None and o.startswith("-") and len(o) == 2 and i + 1 < len(tokens) \
                    and op(i + 1) not in ("&&", "||", ")"):
                pos[0] += 2
                if o not in ("-n", "-z"):
                    return _UNDECIDED  # a file test, -v, -o...
                r = self._nonempty(self._cond_word(tokens[i + 1], env), env)
                return r if o == "-n" else _negate(r)
            b = op(i + 1)
            if b is not None and b not in ("&&", "||", ")") and i + 2 < len(tokens):
                pos[0] += 3
                left, right = tokens[i], tokens[i + 2]
                if b in ("=", "==", "!="):
                    return self._binary(b, self._cond_word(left, env), self._cond_pattern(right, env), env, "[[")
                if b in _INT_TESTS or b in ("<", ">"):
                    return self._binary(b, self._cond_word(left, env), self._cond_word(right, env), env, "[[")
                return _UNDECIDED
            pos[0] += 1
            return self._nonempty(self._cond_word(tokens[i], env), env)  # a lone word: non-empty

        try:
            r = expr()
        except ValueError:
            return _UNDECIDED
        return r if pos[0] == len(tokens) else _UNDECIDED

    def _cond_logic(self, op, a, right):
        """``a && right()`` / ``a || right()``: the right side is read only where the left
        does not decide (bash does not evaluate it there)."""
        stop = op == "||"  # the outcome of the left side that decides
        if a[0] is stop:
            return a
        b = right()
        if a[0] is not None:
            return b
        if b[0] is stop:
            return b
        if b[0] is not None:
            return a
        if op == "&&":
            return None, a[1] + b[1], ()
        return None, (), a[2] + b[2]

    def _cond_word(self, n, env):
        """A word of ``[[ ]]``: ``(value or None, variable)``, not split."""
        if n.type in ("word", "number", "extglob_pattern"):
            return self.literal(n, unquoted=True), None
        pieces = self.parts(n, env, quoted=True)
        if any(v.is_array or MANY in v.text for v, _ in pieces):
            return None, None
        value = _join(v for v, _ in pieces)
        return (None if UNKNOWN in value.text else value), self._lone_variable(n)

    def _cond_pattern(self, n, env):
        """The right side of ``==`` in ``[[ ]]`` as the string it matches exactly, or None."""
        t = n.type
        if t in ("string", "raw_string"):
            return self._cond_word(n, env)
        if t in ("word", "number", "extglob_pattern"):
            if any(ch in _GLOB for ch in self.text(n)):
                return None, None
            return self.literal(n, unquoted=True), None
        if t in _EXPANSION_TYPES or t == "arithmetic_expansion":
            value = self.expand(n, env) if t in _EXPANSION_TYPES else self.arith_expansion(n, env)
            if value.is_array or UNKNOWN in value.text or any(ch in _GLOB for ch in value.text):
                return None, None
            return value, None
        if t == "concatenation":
            parts = []
            for c in n.children:
                value, _ = self._cond_pattern(c, env)
                if value is None:
                    return None, None
                parts.append(value)
            return _join(parts), None
        return None, None

    def case_stmt(self, n, envs):
        """Each item's body runs on the paths where its patterns match and no item before
        matched (as an ``if``/``elif`` chain); a word and patterns bash compares from known
        values take one item. After a body ending with ``;&`` the next body runs too (its
        patterns are not tested); after one ending with ``;;&`` the next items' patterns are
        tested, as if none had matched."""
        subject = n.child_by_field_name("value")
        out, falling = [], []
        rest = [dict(e) for e in envs]  # the paths still testing patterns
        for item in (c for c in n.named_children if c.type == "case_item"):
            if not rest and not falling:
                break
            values = item.children_by_field_name("value")
            inner = [x for x in item.named_children if x not in values and x.type != "comment"]
            if subject is None:
                ok = list(rest)
            else:
                ok, rest = self._decide(rest, lambda e: self._case_match(subject, values, e))
            ran = self.block(inner, self._cap(ok + falling)) if ok or falling else []
            end = next((c.type for c in item.children if c.type in (";;", ";&", ";;&")), ";;")
            falling = ran if end == ";&" else []
            if end == ";;&":
                rest = self._cap(rest + ran)
            elif end == ";;":
                out += ran
        return self._cap(out + falling + rest)

    def _case_match(self, subject, patterns, env):
        """Whether the case word matches one of *patterns*: ``*``, or an exact string (a
        pattern with pattern characters, unquoted, is not read)."""
        word = self._cond_word(subject, env)
        r = _FALSE
        for p in patterns:
            if self.text(p) == "*":
                return _TRUE if r[0] is None or r[0] is False else r
            r = self._cond_logic("||", r, lambda p=p: self._equal(word, self._cond_pattern(p, env), env))
            if r[0] is True:
                return r
        return r

    def loop(self, n, envs):
        # the body may run zero or more times: analyse its commands once, and every variable
        # it assigns is unknown afterwards (and inside it)
        assigned = self._assigned_names(n)
        inner = [self._set_unknown(e, assigned) for e in envs]
        body = n.child_by_field_name("body")
        runs = [dict(e) for e in inner]
        if n.type == "while_statement":
            # the condition runs (its commands are commands); the body runs where it lets it:
            # on success for `while`, on failure for `until`
            conds = [c for c in n.named_children if c != body]
            ok, failed = self.status_block(conds, runs)
            runs = failed if n.children and n.children[0].type == "until" else ok
        if body is not None and runs:
            self._loops += 1
            try:
                self.block(body.named_children, runs)
            finally:
                self._loops -= 1
        return self._cap(inner)

    def function(self, n, envs):
        """A definition runs nothing: the body is analysed where the function is called, with
        the caller's variables (its assignments then hold for the caller, as in bash)."""
        name = n.child_by_field_name("name")
        body = n.child_by_field_name("body")
        if name is not None and body is not None:
            self.functions[self.text(name)] = (body, self)
        return envs

    def call(self, name: str, envs, node=None):
        body, owner = self.functions[name]
        if name in self.calling or len(self.calling) > 8:
            # recursion: whatever the body assigns is unknown from here on
            assigned = owner._assigned_names(body)
            return [self._set_unknown(e, assigned) for e in envs]
        self.calling.append(name)
        self.call_sites.append(node.start_byte if node is not None else -1)
        outer = self.call_noqa
        if node is not None:
            self.call_noqa = self._noqa_lines(node, ())
        try:
            envs = [self._prefix(node, dict(e, **{_FRAMES: e.get(_FRAMES, ()) + ((),)})) for e in envs]
            # the body as a statement: a ``f() ( … )`` body is a subshell, its assignments stay in it
            owner_noqa, owner.call_noqa = owner.call_noqa, self.call_noqa
            loops, owner._loops = owner._loops, 0  # (break in a function: not read as leaving a loop)
            self._returns.append([])
            try:
                out = owner.stmt(body, envs)
            finally:
                out_returned = self._returns.pop()
                owner.call_noqa = owner_noqa
                owner._loops = loops
            return self._cap([self._leave(e) for e in out + out_returned])
        finally:
            self.calling.pop()
            self.call_sites.pop()
            self.call_noqa = outer

    def _prefix(self, node, env):
        """*env* in a function called with assignments before its name (``TP=3 f``): they
        hold while it runs and are gone when it returns (also what the function assigned to
        those variables), as its ``local`` variables are. An element or a name reference
        assigned so is unknown, then and after."""
        for c in node.children if node is not None else ():
            if c.type != "variable_assignment":
                continue
            target = c.child_by_field_name("name")
            name = self.text(target) if target is not None else ""
            if not _NAME.fullmatch(name) or name in self.namerefs:
                env = self._set_unknown(env, [name.split("[")[0]]) if name else env
                continue
            top = env[_FRAMES][-1]
            if all(nm != name for nm, _ in top):
                env[_FRAMES] = env[_FRAMES][:-1] + (top + ((name, env.get(name)),),)
            env = self.assign(c, env, copy=False)
        return env

    def in_subshell(self, run):
        """*run()* for a subshell: an ``exit`` or ``return`` there ends the subshell only."""
        self._returns.append([])
        try:
            return run()
        finally:
            self._returns.pop()

    def _ends(self, fields, env) -> bool:
        """Whether the command with words *fields* ends this path here: ``exit``, ``exec`` of
        a command, ``return`` in a function (the path goes on after the call), ``break`` and
        ``continue`` in a loop body (the loop's paths after it hold what the body assigns)."""
        first = fields[0][0].text if not fields[0][1] and UNKNOWN not in fields[0][0].text else None
        if first is None or first in self.functions:
            return False
        if first == "exit":
            return True
        if first == "exec":  # (without a command, exec only redirects)
            return any(not splat and UNKNOWN not in v.text and not v.text.startswith("-") for v, splat in fields[1:])
        if first == "return":
            if not env.get(_FRAMES) or not self._returns:
                return False  # outside a function: an error, and the script goes on
            self._returns[-1].append(env)
            return True
        if first in ("break", "continue"):
            return self._loops > 0
        return False

    @staticmethod
    def _leave(env):
        """*env* after a function returns: its local variables give back the values they hid."""
        frames = env.get(_FRAMES)
        if not frames:
            return env
        env = dict(env)
        names = []
        for name, saved in reversed(frames[-1]):
            names.append(name)
            if saved is None:
                env.pop(name, None)
            else:
                env[name] = saved
        _forget(env, names)
        if len(frames) > 1:
            env[_FRAMES] = frames[:-1]
        else:
            del env[_FRAMES]
        return env

    def _assigned_names(self, n) -> List[str]:
        """The names *n*'s subtree may assign; each subtree's are computed once per script
        (nested loops ask for nested subtrees: linear, not quadratic, in the nesting)."""
        memo = self._assigned
        if n.id not in memo:
            stack = [(n, False)]  # post-order without recursion, whatever the depth
            while stack:
                x, done = stack.pop()
                if x.id in memo:
                    continue
                children = x.named_children
                if done:
                    names = self._own_assigned(x)
                    for c in children:
                        names.extend(memo[c.id])
                    memo[x.id] = tuple(names)
                    continue
                stack.append((x, True))
                stack.extend((c, False) for c in children if c.id not in memo)
        return list(memo[n.id])

    def _own_assigned(self, x) -> List[str]:
        """The names node *x* itself may assign, read from its text alone (:data:`_ALL`: any)."""
        names: List[str] = []
        t = x.type
        if t == "variable_assignment":
            nm = x.child_by_field_name("name")
            if nm is not None:
                names.append(self.text(nm).split("[")[0])
        elif t == "command":
            fields = []
            for c in x.children:
                if c.type == "command_name":
                    fields.extend(_split(self.parts(c.named_children[0] if c.named_children else c, {}, False)))
                elif c.is_named and c.type not in ("comment", "variable_assignment", "file_redirect",
                                                   "herestring_redirect", "heredoc_redirect"):
                    fields.extend(_split(self.parts(c, {}, False)))
            first = fields[0][0].text if fields and not fields[0][1] else None
            if first == "eval":
                names.append(_ALL)
            elif fields:
                names.extend(self._command_targets(x, fields, {}))
        elif t == "declaration_command":
            keyword = x.children[0].type if x.children else ""
            for c in x.named_children:
                if c.type == "variable_name":
                    names.append(self.text(c))
                elif c.type == "word" and self.text(c)[:1] in "-+":
                    if "n" in self.text(c) and keyword in ("declare", "typeset", "local"):
                        names.append(_ALL)  # a name reference: what it assigns is not known here
                elif c.type != "variable_assignment":
                    names.append(_ALL)  # export $(…), declare "$X"
        elif t == "unset_command":
            for c in x.named_children:
                nm = self.text(c).strip("'\"").split("[")[0]
                if _NAME.fullmatch(nm):
                    names.append(nm)
        elif t == "arithmetic_expansion" or self._arith_command(x):
            names.extend(self._arith_targets(self._arith_text(x), {}))
        elif t == "expansion":
            m = _DEFAULT_ASSIGN.match(self.text(x))
            if m:
                names.append(m.group(1))
        elif t == "for_statement":  # for X in …; for X; select X in …: X before each run of the body
            variable = x.child_by_field_name("variable")
            if variable is not None:
                names.append(self.text(variable))
        elif t == "c_style_for_statement":  # for (( … ; … ; i++ ))
            for i, c in enumerate(x.children):
                if x.field_name_for_child(i) in ("initializer", "condition", "update"):
                    names.extend(self._arith_targets(self.text(c), {}))
        return names

    # -- commands that assign ------------------------------------------------------------
    def _set_unknown(self, env, names):
        """*env* with *names* unknown (through the ``declare -n`` references among them;
        :data:`_ALL`: every variable)."""
        names = set(names)
        for _ in range(8):
            more = set()
            for nm in names:
                more |= self.namerefs.get(nm, set())
            if None in more:
                names.add(_ALL)
            more.discard(None)
            if more <= names:
                break
            names |= more
        if not names:
            return env
        if _ALL in names:
            return _all_unknown(env)
        env = dict(env)
        for nm in names:
            env[nm] = Value.unknown()
        _forget(env, names)
        return env

    def _effects(self, n, fields, env):
        """The paths after command *n* (words *fields*) for the commands that assign
        variables; None when it assigns none."""
        words = [None if splat or UNKNOWN in v.text else v.text for v, splat in fields]
        if words[0] == "eval":
            if not any(c.type == "variable_assignment" for c in n.children):
                return self._eval(n, fields[1:], env)
            # X=2 eval '…': the text runs with X=2, X's value comes back after it (as for a
            # function: :meth:`_prefix`)
            inner = self._prefix(n, dict(env, **{_FRAMES: env.get(_FRAMES, ()) + ((),)}))
            return [self._leave(e) for e in self._eval(n, fields[1:], inner)]
        names = self._command_targets(n, fields, env)
        return [self._set_unknown(env, names)] if names else None

    def _command_targets(self, n, fields, env) -> List[str]:
        """The variables a builtin assigns: ``read``, ``mapfile``/``readarray``, ``printf -v``,
        ``getopts``, ``let``, ``wait -p``, ``cd``; :data:`_ALL` where they cannot be told
        (an unknown name, ``mapfile -C``, a declaration or ``source`` behind ``command``)."""
        words = [None if splat or UNKNOWN in v.text else v.text for v, splat in fields]
        i = 0
        while i < len(words) and words[i] in ("command", "builtin"):
            i += 1
            while i < len(words) and words[i] is not None and words[i].startswith("-"):
                if "v" in words[i] or "V" in words[i]:
                    return []  # command -v: tells what a name is, runs nothing
                i += 1
        if i >= len(words) or words[i] is None:
            return []
        name, args = os.path.basename(words[i]), words[i + 1:]
        if name == "read":
            return _option_targets(args, "adinNptu", "a", "REPLY", True)
        if name in ("mapfile", "readarray"):
            return _option_targets(args, "dnOsuCc", "", "MAPFILE", False, runs="C")
        if name == "printf":
            return _option_targets(args, "v", "v", None, False, operands=False)
        if name == "getopts":  # getopts OPTSTRING NAME [ARG…]
            if len(args) < 2:
                return []
            if args[1] is None:
                return [_ALL]
            return [args[1], "OPTARG", "OPTIND"] if _NAME.fullmatch(args[1]) else ["OPTARG", "OPTIND"]
        if name == "wait":
            return _option_targets(args, "p", "p", None, False, operands=False)
        if name == "let":
            if i != 0:
                return [_ALL]
            out: List[str] = []
            for a in n.children_by_field_name("argument"):
                out.extend(self._arith_targets(self.text(a), env))
            return out
        if name in ("cd", "pushd", "popd"):
            return ["PWD", "OLDPWD"]
        if name in _DECL or name in ("source", ".", "eval", "unset"):
            return [_ALL]  # behind `command`/`builtin` or from an expansion: not read
        return []

    def _eval(self, n, args, env):
        """``eval``: its arguments, joined by blanks, are a script the shell runs here (its
        commands are the script's, at the ``eval``); unknown text may set any variable."""
        if any(splat or UNKNOWN in v.text or MANY in v.text for v, splat in args) or self.depth >= 4:
            return [_all_unknown(env, ifs=True)]
        value = _join_with_spaces([v for v, _ in args])
        if not value.text.strip():
            return [env]
        sub = self._sub_script(value)
        if sub is None:
            return [_all_unknown(env, ifs=True)]
        root, inner = sub
        inner.commands = self.s.commands
        w = _Walker(inner, self.depth + 1, self._noqa_lines(n, ()))
        w.functions, w.calling, w.call_sites, w.namerefs = self.functions, self.calling, self.call_sites, self.namerefs
        w.attributes = self.attributes  # (``declare -i X`` in the text holds outside it, and the other way)
        w._assigned, w._depth, w._returns, w._loops = {}, self._depth, self._returns, self._loops
        w.span = self.span or self.s.span_of(n.start_byte, n.end_byte)
        return w.block(root.children, [env])

    def _sub_script(self, value: Value):
        """A script made of *value*'s text, its characters pointing where they were written;
        None when it does not parse."""
        data = value.text.encode("utf-8", "surrogateescape")
        root = _parser().parse(data).root_node
        if root.has_error:
            return None
        offmap: Dict[int, Optional[int]] = {}
        b = 0
        for ch, o in zip(value.text, value.offs):
            offmap[b] = o
            b += len(ch.encode("utf-8", "surrogateescape"))
        inner = Script(value.text)
        outer = self.s.source
        inner.source = _MappedSource(outer.root if isinstance(outer, _MappedSource) else outer, offmap)
        return root, inner

    def _offsets(self, start: int, end: int) -> Tuple[Optional[int], ...]:
        """The offsets, in the script the file holds, of the characters of this walker's text
        from byte *start* to *end*: a ``bash -c`` string's or an ``eval`` text's characters
        point where they were written there, so that a value keeps where it came from in
        whichever text expands it (``eval 'torchrun … $ARGS'`` with ``ARGS`` set outside)."""
        offs = _char_offsets(self.data, start, end)
        source = self.s.source
        if isinstance(source, _MappedSource):
            return tuple(source.offmap.get(o) for o in offs)
        return offs

    def _expansion_effects(self, n, envs):
        """Expansions that assign, before statement *n* runs: arithmetic (``$((X=4))``,
        ``((X++))``, ``let``'s arguments) and ``${X:=v}``/``${X=v}`` where X is not known to hold
        a non-empty value: those variables are unknown. Command substitutions run in
        a subshell and assign nothing here."""
        raw = self.data[n.start_byte:n.end_byte]
        if b"((" not in raw and not _DEFAULT_ASSIGN_BYTES.search(raw):
            return envs
        arith, defaults = [], []
        stack = [n]
        while stack:
            x = stack.pop()
            t = x.type
            if t in ("command_substitution", "process_substitution", "subshell"):
                continue
            if t == "arithmetic_expansion" or self._arith_command(x):
                arith.append(self._arith_text(x))
                continue
            if t == "expansion":
                m = _DEFAULT_ASSIGN.match(self.text(x))
                if m:
                    defaults.append(m.group(1))
            stack.extend(x.named_children)
        if not arith and not defaults:
            return envs
        out = []
        for e in envs:
            names: List[str] = []
            for text in arith:
                names.extend(self._arith_targets(text, e))
            for name in defaults:
                v = e.get(name)
                # unless it is known not to be empty (without the colon, an empty value may be
                # a variable declared but unset, ``local X``, which bash assigns)
                if v is None or v.is_array or not v.text.replace(UNKNOWN, "").replace(MANY, ""):
                    names.append(name)
            out.append(self._set_unknown(e, names))
        return out

    def _arith_command(self, n) -> bool:
        """Whether *n* is an arithmetic command ``(( … ))``: tree-sitter-bash 0.25 reads it as a
        compound statement that opens with ``((``; 0.23 (the newest Python 3.9 installs) as a
        command named by an arithmetic expansion, or, for ``((X++))``, a test command of one
        word. Both are read as bash reads them, by their text."""
        t = n.type
        if t == "compound_statement":
            return bool(n.children) and n.children[0].type == "(("
        if t == "command" or t == "test_command":
            data = self.data
            start, end = n.start_byte, n.end_byte
            return data.startswith(b"((", start) and data[end - 2:end] == b"))"
        return False

    def _arith_text(self, x) -> str:
        text = self.text(x)
        if text.startswith("$(("):
            text = text[3:]
        elif text.startswith("(("):
            text = text[2:]
        return text[:-2] if text.endswith("))") else text

    def _arith_targets(self, text: str, env) -> List[str]:
        """The variables an arithmetic expression assigns (``X=4``, ``X+=1``, ``X++``,
        ``--X``, in subscripts too), read from its text as written: an expansion stands for an
        operand. An expression that is one unknown expansion (``let "$E"``), or an expansion
        assigned to (``$N=1``), may assign any variable."""
        m = _LONE_EXPANSION.fullmatch(text)
        if m:
            v = env.get(m.group(1) or m.group(2))
            if v is None or v.is_array or UNKNOWN in v.text:
                return [_ALL]
            text = v.text
        if _ARITH_INDIRECT.search(text):
            return [_ALL]
        return [m.group(1) for m in _ARITH_LVALUE.finditer(text)] + [m.group(1) for m in _ARITH_PREINC.finditer(text)]

    # -- assignments -----------------------------------------------------------------
    def declare(self, n, env):
        """``export``, ``readonly``, ``declare``, ``typeset``, ``local``. In a function,
        ``local`` and ``declare``/``typeset`` without ``-g`` make their variables local (bash's
        dynamic scope: the functions it calls see them; the caller's values come back when it
        returns); ``declare -g`` assigns the global variable a local hides. ``local`` outside a
        function is an error: nothing is assigned."""
        keyword = n.children[0].type if n.children else ""
        frames = env.get(_FRAMES, ())
        if keyword == "local" and not frames:
            return env
        env = dict(env)
        options = ""
        names = []  # (name, its assignment: a node, a Value from an expanded word, or None)
        for c in n.named_children:
            if c.type == "word" and not names and self.text(c)[:1] in ("-", "+"):
                options += self.text(c)[1:] if self.text(c)[:1] == "-" else ""
                continue
            if c.type == "variable_assignment":
                nm = c.child_by_field_name("name")
                names.append((self.text(nm).split("[")[0] if nm is not None else None, c))
            elif c.type == "variable_name":
                names.append((self.text(c), None))
            elif c.type != "comment":
                # a word whose expansion names the variables (export $(grep … .env | xargs),
                # declare "$NAME=$VALUE"): unknown text may declare any variable
                for value, splat in _split(self.parts(c, env, quoted=False), _default_ifs(env)):
                    if splat or UNKNOWN in value.text or MANY in value.text:
                        return self._set_unknown(env, [_ALL])
                    m = _DECLARED_WORD.fullmatch(value.text)
                    if m is None:
                        continue  # bash: not a valid identifier
                    if m.group(2) or m.group(3) == "+=":
                        names.append((m.group(1), _ALL))  # an element, or an append: unknown
                    elif m.group(3):
                        k = m.start(4)
                        names.append((m.group(1), Value(value.text[k:], value.offs[k:])))
                    else:
                        names.append((m.group(1), None))
        if keyword == "readonly" or any(ch in options for ch in "ilucr"):
            # an attribute that changes what an assignment stores (-i: arithmetic, -l/-u/-c:
            # case) or makes it fail (readonly, -r): the variable is unknown after this
            # statement's assignment (-r, readonly: after the next one), on every path
            transforms = any(ch in options for ch in "iluc")
            for name, _ in names:
                if name is not None:
                    self.attributes.add(name)
            if transforms:
                env = self._declare(n, env, keyword, options, names, frames)
                return self._set_unknown(env, [name for name, _ in names if name is not None])
        return self._declare(n, env, keyword, options, names, frames)

    def _declare(self, n, env, keyword, options, names, frames):
        """:meth:`declare`'s assignments, once its words are read. Bash expands all its words
        before it assigns: ``export X=b Y=$X`` gives Y the X of before."""
        before = dict(env)
        if "n" in options and keyword in ("declare", "typeset", "local"):
            # name references: assigning one assigns the variable it names
            for name, c in names:
                if name is None:
                    continue
                target = None
                if isinstance(c, Value):
                    target = c.text if _NAME.fullmatch(c.text) else None
                elif c is not None and not isinstance(c, str):
                    v = self.word_value(c.child_by_field_name("value"), env) if c.child_by_field_name("value") else None
                    target = v.text if v is not None and _NAME.fullmatch(v.text) else None
                self.namerefs.setdefault(name, set()).add(target)
                if frames and keyword != "export":
                    top = frames[-1]
                    if all(nm != name for nm, _ in top):
                        frames = frames[:-1] + (top + ((name, env.get(name)),),)
                        env[_FRAMES] = frames
                env[name] = Value.unknown()  # the reference itself: its value is the named variable's
                _forget(env, (name,))
            return env
        local = frames and (keyword == "local" or (keyword in ("declare", "typeset") and "g" not in options))
        for name, c in names:
            if name is None:
                continue
            if isinstance(c, Value) or c is _ALL:
                env = self._declare_value(env, name, c, frames if local else (), "g" in options)
                frames = env.get(_FRAMES, ())
                continue
            if local:
                top = frames[-1]
                fresh = all(saved_name != name for saved_name, _ in top)
                if fresh:
                    frames = frames[:-1] + (top + ((name, env.get(name)),),)
                    env[_FRAMES] = frames
                if c is not None:
                    env = self.assign(c, env, copy=False, read=before)
                elif fresh:
                    env[name] = EMPTY  # a new local is empty (it hides the caller's value)
                    _forget(env, (name,))
                continue
            if c is None:
                continue
            outer = next((i for i, frame in enumerate(frames) if any(nm == name for nm, _ in frame)), None)
            if "g" in options and outer is not None:
                # declare -g under a local of that name: the global value is the one the
                # outermost local hides
                new = self.assign(c, dict(env), copy=False, read=before).get(name)
                frame = tuple((nm, new if nm == name else saved) for nm, saved in frames[outer])
                frames = frames[:outer] + (frame,) + frames[outer + 1:]
                env[_FRAMES] = frames
                continue
            env = self.assign(c, env, copy=False, read=before)
        return env

    def _declare_value(self, env, name, value, frames, global_):
        """A variable declared from an expanded word: *value* (or :data:`_ALL`: unknown),
        local in the innermost of *frames* when there are any."""
        if frames:
            top = frames[-1]
            if all(nm != name for nm, _ in top):
                env[_FRAMES] = frames[:-1] + (top + ((name, env.get(name)),),)
        elif global_:
            outer = next((i for i, frame in enumerate(env.get(_FRAMES, ())) if any(nm == name for nm, _ in frame)),
                         None)
            if outer is not None:
                old = env[_FRAMES]
                frame = tuple((nm, Value.unknown() if nm == name else saved) for nm, saved in old[outer])
                env[_FRAMES] = old[:outer] + (frame,) + old[outer + 1:]
                return env
        if value is _ALL or name in self.namerefs:
            return self._set_unknown(env, [name])
        env[name] = _check_value(value)
        _forget(env, (name,))
        return env

    def unset(self, n, env):
        """``unset [-fvn] NAME…``: its words after expansion and quote removal. ``NAME[i]``
        removes element *i* of an array (its indices stay: the array becomes sparse), ``NAME[@]``
        the whole array; a subscript that is not a known integer makes the array unknown. An
        unquoted word with pattern characters may be replaced by file names: what it names is
        unknown. An unknown name may unset any variable."""
        words, group = [], []
        for c in n.named_children:
            if c.type == "comment":
                continue
            if group and c.start_byte != group[-1].end_byte:  # tree-sitter-bash splits `A[1]`
                words.append(group)
                group = []
            group.append(c)
        if group:
            words.append(group)
        env = dict(env)
        mode, options = "", True
        for group in words:
            pieces: List[Tuple[Value, bool]] = []
            glob = False
            stack = list(reversed(group))
            while stack:
                c = stack.pop()
                if c.type == "concatenation":
                    stack.extend(reversed(c.children))
                elif c.type in ("variable_name", "word", "number"):
                    value = self.literal(c, unquoted=True)
                    glob = glob or any(ch in "*?[" for ch in self.text(c))
                    pieces.append((value, False))
                else:
                    got = self.parts(c, env, quoted=False)
                    glob = glob or any(splittable and any(ch in "*?[" for ch in v.text) for v, splittable in got)
                    pieces.extend(got)
            for value, splat in _split(pieces, _default_ifs(env)):
                if splat or UNKNOWN in value.text or MANY in value.text:
                    return self._set_unknown(env, [_ALL])
                text = value.text
                if options and text.startswith("-") and len(text) > 1:
                    if text == "--":
                        options = False
                    else:
                        mode += text[1:]
                    continue
                options = False
                if "f" in mode:
                    continue  # functions
                if glob and any(ch in text for ch in "*?["):
                    names = [k for k in env if k not in (_FACTS, _FRAMES, _NARROWED) and fnmatch.fnmatchcase(k, text)]
                    m = _ELEMENT.fullmatch(text)
                    env = self._set_unknown(env, names + ([m.group(1)] if m else []))
                    continue
                env = self._unset_one(env, text, "n" in mode)
        return env

    def _unset_one(self, env, text, reference):
        m = _ELEMENT.fullmatch(text)
        name = m.group(1) if m else text
        if not _NAME.fullmatch(name):
            return env  # bash: not a valid identifier
        if name in self.namerefs and not reference:  # unsets the variable it refers to
            return self._set_unknown(env, [name])
        v = env.get(name)
        if m and m.group(2) not in ("@", "*"):
            if v is None:
                return env  # unknown before, unknown after
            i = arith_value(m.group(2), env)  # a subscript is an arithmetic expression
            if i is None or (UNKNOWN in v.text and not v.is_array):
                env[name] = Value.unknown()
                return env
            if not v.is_array:  # a scalar is its own element 0
                if i in (0, -1):
                    env.pop(name, None)
                    _forget(env, (name,))
                return env
            idx = v.idx if v.idx is not None else tuple(range(len(v.items)))
            if i < 0:  # counts back from the highest index
                i += idx[-1] + 1 if idx else 0
            if i in idx:
                k = idx.index(i)
                rest = idx[:k] + idx[k + 1:]
                env[name] = Value("", (), True, v.items[:k] + v.items[k + 1:],
                                  None if rest == tuple(range(len(rest))) else rest)
            return env
        env.pop(name, None)
        _forget(env, (name,))
        return env

    def assign(self, n, env, copy: bool, read=None):
        """*env* after assignment *n*, its value expanded in *read* (default: *env*)."""
        if copy:
            env = dict(env)
        read = env if read is None else read
        name_node = n.child_by_field_name("name")
        if name_node is None:
            return env
        name = self.text(name_node)
        if name.split("[")[0] in self.namerefs or name.split("[")[0] in self.attributes:
            # a name reference (the variable it names changes), or an attribute's variable
            return self._set_unknown(env, [name.split("[")[0]])
        if name_node.type == "subscript" or "[" in name:  # A[i]=x: the array becomes unknown
            env[name.split("[")[0]] = Value.unknown()
            return env
        value_node = n.child_by_field_name("value")
        append = any(c.type == "+=" for c in n.children)
        if value_node is None:
            new = EMPTY
        elif value_node.type == "array":
            items = []
            for c in value_node.named_children:
                if c.type == "comment":
                    continue
                items.extend(self.fields(c, read))
            new = Value("", (), is_array=True, items=tuple(items))
        elif _tilde(self._unquoted_shape(value_node)):
            new = Value.unknown()  # ~ and :~ of an assignment: a home folder
        else:
            new = self.word_value(value_node, read)
        if append:
            old = env.get(name)
            if old is None:
                old = EMPTY if name in env else Value.unknown()
            if (old.is_array or new.is_array) and not old.is_array and UNKNOWN in old.text:
                old = Value(UNKNOWN + MANY, (None, None))  # unset, a scalar or an array: any number of items
            if old.is_array and not new.is_array:
                # A+=x appends to element 0
                items, idx = list(old.items), old.idx
                k = idx.index(0) if idx is not None and 0 in idx else (0 if idx is None and items else None)
                if k is None:  # no element 0 (an empty array, or one unset): it is made
                    new = Value("", (), True, (new,) + tuple(items), None if idx is None else (0,) + idx)
                else:
                    items[k] = items[k] + new
                    new = Value("", (), True, tuple(items), idx)
            elif old.is_array or new.is_array:
                idx = None
                if old.idx is not None:  # appended after the highest index
                    top = old.idx[-1] + 1 if old.idx else 0
                    idx = old.idx + tuple(range(top, top + len(_items(new))))
                new = Value("", (), True, _items(old) + _items(new), idx)
            else:
                new = old + new
        env[name] = _check_value(new)
        return env

    # -- words -----------------------------------------------------------------------
    def text(self, n) -> str:
        return self.data[n.start_byte:n.end_byte].decode("utf-8", "surrogateescape")

    def word_value(self, n, env) -> Value:
        """The value of a word in a non-splitting context (the right side of an assignment)."""
        parts = self.parts(n, env, quoted=False)
        return _join(p for p, _ in parts)

    def parts(self, n, env, quoted: bool) -> List[Tuple[Value, bool]]:
        """(value, splittable) pieces of a word."""
        t = n.type
        if t in ("word", "number"):
            return [(self.literal(n, unquoted=True), False)]
        if t == "raw_string":
            s, e = n.start_byte + 1, n.end_byte - 1
            return [(Value(self.data[s:e].decode("utf-8", "surrogateescape"), self._offsets(s, e)), False)]
        if t == "ansi_c_string":
            return [(Value.unknown(), False)]
        if t in ("string", "translated_string"):
            if t == "translated_string":
                n = n.named_children[0] if n.named_children else n
            return [(v, False) for v in self.dq_string(n, env)]
        if t in _EXPANSION_TYPES:
            v = self.expand(n, env)
            return [(v, not quoted)]
        if t == "concatenation":
            out = []
            for c in n.children:
                out.extend(self.parts(c, env, quoted))
            return out
        if t == "arithmetic_expansion":
            return [(self.arith_expansion(n, env), not quoted)]
        return [(Value.unknown(), not quoted)]  # command substitution, brace expansion...

    def literal(self, n, unquoted: bool) -> Value:
        raw = self.data[n.start_byte:n.end_byte]
        text, offs = [], []
        i = 0
        chars = raw.decode("utf-8", "surrogateescape")
        coffs = self._offsets(n.start_byte, n.end_byte)
        if "\\" not in chars:  # most words: the text as written
            return Value(chars, coffs)
        while i < len(chars):
            ch = chars[i]
            if ch == "\\" and unquoted and i + 1 < len(chars):
                if chars[i + 1] == "\n":
                    i += 2
                    continue
                text.append(chars[i + 1])
                offs.append(coffs[i + 1])
                i += 2
                continue
            text.append(ch)
            offs.append(coffs[i])
            i += 1
        return Value("".join(text), tuple(offs))

    def dq_string(self, n, env) -> List[Value]:
        """The pieces of a double-quoted string (an array splice stays its own piece)."""
        out: List[Value] = []
        pos = n.start_byte + 1
        end = n.end_byte - 1
        for c in n.children:
            if c.type in _EXPANSION_TYPES or c.type in _UNKNOWN_TYPES:
                # tree-sitter-bash may start an expansion node at the line continuation before
                # its `$`: that part is string text
                start = c.start_byte
                dollar = self.data.find(b"$", start, c.end_byte)
                if dollar > start and not self.data[start:dollar].strip(b" \t\\\n"):
                    start = dollar
                out.append(self.dq_raw(pos, start))
                out.append(self.expand(c, env, start, in_dq=True) if c.type in _EXPANSION_TYPES
                           else self.arith_expansion(c, env) if c.type == "arithmetic_expansion"
                           else Value.unknown())
                pos = c.end_byte
        out.append(self.dq_raw(pos, end))
        kept = [v for v in out if v.is_array or v.text]
        return kept or [EMPTY]  # "" and "$EMPTY" are an empty word

    def dq_raw(self, start: int, end: int) -> Value:
        if end <= start:
            return EMPTY
        chars = self.data[start:end].decode("utf-8", "surrogateescape")
        coffs = self._offsets(start, end)
        if "\\" not in chars:
            return Value(chars, coffs)
        # `\$ \` \" \\` stand for the character; a backslash-newline is a line continuation
        text, offs = [], []
        pos = 0
        for m in _DQ_ESCAPE.finditer(chars):
            i = m.start()
            text.append(chars[pos:i])
            offs.append(coffs[pos:i])
            if chars[i + 1] != "\n":
                text.append(chars[i + 1])
                offs.append(coffs[i + 1:i + 2])
            pos = i + 2
        text.append(chars[pos:])
        offs.append(coffs[pos:])
        return Value("".join(text), tuple(itertools.chain.from_iterable(offs)))

    def expand(self, n, env, start: Optional[int] = None, in_dq: bool = False) -> Value:
        """``$X``, ``${X}``, ``${X[@]}``: the variable's value; the operators of
        :meth:`_operator_expansion`; anything else is unknown. *in_dq*: inside double quotes."""
        if start is None:
            start = n.start_byte
            dollar = self.data.find(b"$", start, n.end_byte)
            if dollar > start and not self.data[start:dollar].strip(b" \t\\\n"):
                start = dollar
        raw = self.data[start:n.end_byte].decode("utf-8", "surrogateescape")
        if re.fullmatch(r"\$[@*]|\$\{[@*]\}", raw):
            return Value(UNKNOWN + MANY, (None, None))
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)|\$\{([A-Za-z_][A-Za-z0-9_]*)(\[[@*]\])?\}", raw)
        if not m:
            return self._operator_expansion(n, env, in_dq) if n.type == "expansion" else Value.unknown()
        name = m.group(1) or m.group(2)
        v = env.get(name)
        if v is None:
            return Value(UNKNOWN + MANY, (None, None)) if m.group(3) else Value.unknown()
        if v.is_array:
            if m.group(3) is None:  # $A is element 0
                if v.idx is not None:
                    return v.items[v.idx.index(0)] if 0 in v.idx else EMPTY
                return v.items[0] if v.items else EMPTY
            if m.group(3) == "[*]" and in_dq:
                # "${A[*]}": one word, the items joined by the first character of IFS
                ifs = env.get("IFS")
                if ifs is None or (not ifs.is_array and UNKNOWN not in ifs.text):
                    sep = " " if ifs is None else ifs.text[:1]
                    return _join_with(v.items, sep)
                return Value.unknown()
            return Value("", (), True, v.items)
        if m.group(3) and UNKNOWN in v.text:
            return Value(UNKNOWN + MANY, (None, None))  # an unknown variable may be an array
        return v

    def _operator_expansion(self, n, env, in_dq: bool) -> Value:
        """``${X:-word}``, ``${X-word}``, ``${X:=word}``, ``${X=word}``, ``${X:+word}``,
        ``${X+word}`` and the case operators ``${X,,}``, ``${X^^}``, ``${X,}``, ``${X^}``
        where the outcome is certain: X known non-empty is set and not null; X known empty
        is null, but it may be set or not (``local X`` declares it unset), so only the
        operators with ``:`` decide it. Bash maps case by the locale, which maps ``i`` to
        ``İ`` in Turkish: a value with non-ASCII text, or with the ``i``/``I`` the operator
        would change, is unknown. Anything else (patterns, substrings, a word with a tilde,
        a backslash or a quoted part that could be split or empty) is unknown."""
        kids = n.children
        if len(kids) < 4 or kids[1].type != "variable_name" or kids[-1].type != "}":
            return Value.unknown()
        op, rest = kids[2].type, kids[3:-1]
        v = env.get(self.text(kids[1]))
        if v is None or v.is_array:
            return Value.unknown()
        nonempty = bool(v.text.replace(UNKNOWN, "").replace(MANY, ""))
        if op in _CASE_OPS:
            changed = v.text if op in (",,", "^^") else v.text[:1]
            if rest or UNKNOWN in v.text or not v.text.isascii() or _CASE_OPS[op][0] in changed:
                return Value.unknown()
            text = _CASE_OPS[op][1](changed) + v.text[len(changed):]
            return Value(text, v.offs)
        if op not in (":-", "-", ":=", "=", ":+", "+"):
            return Value.unknown()
        if nonempty:
            return self._operator_word(kids[2], rest, kids[-1], env, in_dq) if "+" in op else v
        if not v.text and op == ":-":
            return self._operator_word(kids[2], rest, kids[-1], env, in_dq)
        if not v.text and op == ":+":
            return EMPTY
        return Value.unknown()

    def _operator_word(self, op, nodes, close, env, in_dq: bool) -> Value:
        """The word of ``${X:-word}`` (the nodes between the operator and ``}``), expanded."""
        out = EMPTY
        pos = op.end_byte
        stack = list(reversed(nodes))
        while stack:
            c = stack.pop()
            if c.type == "concatenation":
                stack.extend(reversed(c.children))
                continue
            if c.start_byte != pos:
                return Value.unknown()  # text tree-sitter-bash left out of the nodes
            pos = c.end_byte
            t = c.type
            if t in ("word", "number") and not any(ch in self.text(c) for ch in "\\~"):
                piece = self.literal(c, unquoted=True)
            elif t in _EXPANSION_TYPES:
                piece = self.expand(c, env, in_dq=in_dq)
            elif t == "arithmetic_expansion":
                piece = self.arith_expansion(c, env)
            elif t in ("string", "raw_string") and not in_dq:
                # quoted: neither split nor dropped when empty; read only where that changes nothing
                piece = _join(v for v, _ in self.parts(c, env, quoted=True))
                if not piece.text or UNKNOWN in piece.text or any(ch in piece.text for ch in " \t\n"):
                    return Value.unknown()
            else:
                return Value.unknown()
            if piece.is_array:
                return Value.unknown()
            out = out + piece
        return out if pos == close.start_byte else Value.unknown()

    def arith_expansion(self, n, env) -> Value:
        """``$(( … ))``: its value's digits (the first points at the ``$``), or unknown."""
        value = self.arith(n, env)
        if value is None:
            return Value.unknown()
        text = str(value)
        return Value(text, self._offsets(n.start_byte, n.start_byte + 1)[:1] + (None,) * (len(text) - 1))

    def arith(self, n, env) -> Optional[int]:
        """The value of ``$(( … ))`` or ``(( … ))`` node *n* on a path: its text with the
        expansions in it made, double quotes removed (as bash reads it), evaluated by
        :func:`arith_value`; None when it is not known."""
        data = self.data
        start = n.start_byte + (3 if data.startswith(b"$((", n.start_byte) else 2)
        end = n.end_byte - 2
        if data[end:n.end_byte] != b"))" or end < start:
            return None
        text, pos = [], start
        stack = list(reversed(n.children))
        while stack:
            c = stack.pop()
            if c.end_byte <= start or c.start_byte >= end:
                continue  # the (( and )) tokens
            if c.type in _EXPANSION_TYPES:
                v = self.expand(c, env, in_dq=True)
                piece = None if v.is_array or UNKNOWN in v.text else v.text
            elif c.type == "arithmetic_expansion":
                inner = self.arith(c, env)
                piece = None if inner is None else str(inner)
            elif c.type in _UNKNOWN_TYPES:
                return None
            else:
                stack.extend(reversed(c.children))
                continue
            raw = data[pos:c.start_byte]
            if piece is None or any(ch in raw for ch in b"'\\`$"):
                return None
            text += [raw.replace(b'"', b"").decode("utf-8", "surrogateescape"), piece]
            pos = c.end_byte
        raw = data[pos:end]
        if any(ch in raw for ch in b"'\\`$"):
            return None
        text.append(raw.replace(b'"', b"").decode("utf-8", "surrogateescape"))
        return arith_value("".join(text), env)

    def fields(self, n, env) -> List[Value]:
        """The fields of one word (the items of an array assignment); a splat is an item
        that stands for any number of items (:data:`MANY`)."""
        return [Value(UNKNOWN + MANY, (next((o for o in a.offs if o is not None), None), None)) if splat else a
                for a, splat in self.word_fields(n, env)]

    def word_fields(self, n, env) -> List[Tuple[Value, bool]]:
        """Word *n* of a command (or of an array's items) expanded into fields as bash expands
        it: ``(value, splat)``. A brace expansion (``{a,b}``, ``{1..3}``), a tilde prefix or an
        unquoted pattern character (``*``, ``?``, ``[…]``) makes the whole word unknown, and
        a splat: bash makes it several words, or file names npulint cannot know (a word
        whose pattern matches no file stays as written, unless ``nullglob``; ``set -f``
        turns globbing off). Field splitting is :func:`_split`'s, by the default ``IFS``;
        under any other ``IFS`` an unquoted expansion is unknown."""
        if _expands_unquoted(self._unquoted_shape(n)):
            return [(Value(UNKNOWN, self._offsets(n.start_byte, n.start_byte + 1)[:1]), True)]
        return _split(self.parts(n, env, quoted=False), _default_ifs(env))

    def _unquoted_shape(self, n) -> str:
        """The word as brace, tilde and pathname expansion see it: its unquoted literal text,
        with each escaped character, quoted part and expansion one ``x`` (none of them
        counts as a brace, comma, tilde or pattern character)."""
        t = n.type
        if t in ("word", "number"):
            return _ESCAPED.sub("x", self.text(n))
        if t == "concatenation":
            return "".join(self._unquoted_shape(c) for c in n.children)
        if t == "brace_expression":
            return "{0..1}"
        return "x"

    # -- commands --------------------------------------------------------------------
    def command(self, n, env):
        """Record command *n* (unless it is no command: ``echo``, ``read``…); returns its
        words after expansion, ``(value, splat)``, or None."""
        name = n.child_by_field_name("name")
        if name is None:
            return None
        fields: List[Tuple[Value, bool]] = []
        for c in n.children:
            if c.type in ("variable_assignment", "file_redirect", "herestring_redirect", "heredoc_redirect"):
                continue
            if c.type == "command_name":
                inner = c.named_children[0] if c.named_children else c
                fields.extend(self.word_fields(inner, env))
            elif c.is_named and c.type not in ("comment",):
                fields.extend(self.word_fields(c, env))
        if not fields:
            return None
        if len(fields) > MAX_WORDS:
            raise _Limit(f"a command of more than {MAX_WORDS} words after expansion (MAX_WORDS)")
        for value, _ in fields:
            _check_value(value)
        words = [Arg(value.text, functools.partial(self.s.source.token_span, value), splat)
                 for value, splat in fields]
        first = words[0].text
        if os.path.basename(first) in _NOT_COMMANDS:
            return fields
        noqa = self._noqa_lines(n, fields)
        # (in an eval text, the commands share the eval's span: their place in the text tells them apart)
        place = tuple(self.call_sites) + ((n.start_byte,) if self.span is not None else ())
        command = Command(words, self.span or self.s.span_of(n.start_byte, n.end_byte), place, noqa)
        self.s.commands.append(command)
        self.shell_string(command, fields)
        return fields

    def _noqa_lines(self, n, fields) -> Tuple[int, ...]:
        """The noqa comment lines above the statements holding command *n*, above the
        assignments its words come from, and above the function calls that run it."""
        out = list(self.call_noqa)
        start, end = n.start_byte, n.end_byte
        for a, b, line in self.s.noqa_above:
            if line in out:
                continue
            if (a <= start and end <= b) or any(o is not None and a <= o < b for v, _ in fields for o in v.offs):
                out.append(line)
        return tuple(out)

    def shell_string(self, command: Command, fields) -> None:
        """``bash -c "…"`` (also after wrappers such as ``nohup`` or ``timeout``): the string is
        a script of its own, run by a new shell; its commands are the outer command's, and
        their words point at the outer source. A string with unknown parts says nothing."""
        words = command.words
        i = command_start(words)
        if i is None or i >= len(words) or not words[i].known:
            return
        if _program_name(words[i].text) not in _BASH_PROGRAMS:
            return
        k = _shell_c_string(words, i + 1)
        if k is None or self.depth >= 4:
            return
        value = fields[k][0]
        if not value.text or UNKNOWN in value.text or fields[k][1]:
            return
        sub = self._sub_script(value)
        if sub is None:
            return
        root, inner = sub
        _Walker(inner, self.depth + 1, command.noqa_lines).run(root)
        if inner.limit is not None:
            raise _Limit(inner.limit)
        for c in inner.commands:
            self.s.commands.append(Command(c.words, command.span, command.calls + (c.span,) + c.calls,
                                           tuple(dict.fromkeys(command.noqa_lines + c.noqa_lines))))



_UNDECIDED = (None, (), ())
_TRUE = (True, (), ())
_FALSE = (False, (), ())
_FACTS = "\x00facts"  # an environment's facts about unknown values (never a variable's name)
_NARROWED = "\x00narrowed"  # (name, value before, value after) of the variables a test narrowed
# the functions running on a path, innermost last: per function, the variables it made local
# and the values they hide (None: unset), restored when it returns
_FRAMES = "\x00frames"
# the case operators: (the letter a Turkish locale maps otherwise, the mapping of ASCII text)
_CASE_OPS = {",,": ("I", str.lower), ",": ("I", str.lower), "^^": ("i", str.upper), "^": ("i", str.upper)}
_GLOB = frozenset("*?[\\(")  # pattern characters (and escapes, and extglob's parentheses)
_LONE_VARIABLE = re.compile(r'"?\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})"?')
_BINARY_TESTS = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef",
                 "-a", "-o"}
_INT_TESTS = {"-eq": lambda x, y: x == y, "-ne": lambda x, y: x != y, "-lt": lambda x, y: x < y,
              "-le": lambda x, y: x <= y, "-gt": lambda x, y: x > y, "-ge": lambda x, y: x >= y}
_SWAPPED = {"-lt": "-gt", "-gt": "-lt", "-le": "-ge", "-ge": "-le"}
_NEGATED_INT = {"-ne": "-eq", "-ge": "-lt", "-le": "-gt"}
_DIGITS = re.compile(r"[0-9]*")
# an integer operand of ``test``: decimal digits with blanks around them (``[[ ]]`` evaluates
# an arithmetic expression: :func:`arith_value`)
_TEST_INT = re.compile(r"[ \t\n]*([+-]?[0-9]{1,18})[ \t\n]*")


_ALL = "\x00all"  # among the names a statement may assign: any variable
_SIMPLE = {"command", "variable_assignment", "variable_assignments", "declaration_command", "unset_command"}
_DEFAULT_ASSIGN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=")
_DEFAULT_ASSIGN_BYTES = re.compile(rb"\$\{[A-Za-z_][A-Za-z0-9_]*:?=")
_ASSIGN_OP = r"(?:(?:[-+*/%&^|]|<<|>>)?=(?!=)|\+\+|--)"
_ARITH_LVALUE = re.compile(r"(?<![\w$}])([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\]\s*)?" + _ASSIGN_OP)
_ARITH_PREINC = re.compile(r"(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)")
_ARITH_INDIRECT = re.compile(r"\$(?:\{[^}]*\}|[A-Za-z_0-9][A-Za-z0-9_]*)\s*(?:\[[^\]]*\]\s*)?" + _ASSIGN_OP
                             + r"|(?:\+\+|--)\s*\$")
_LONE_EXPANSION = re.compile(r'\s*"?\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})"?\s*')
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ELEMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[(.*)\]", re.S)
_DECLARED_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(?:(\+?=)(.*))?", re.S)


def _option_targets(args, with_arg: str, name_opts: str, default: Optional[str], all_operands: bool,
                    operands: bool = True, runs: str = "") -> List[str]:
    """The names a builtin assigns, from its words (None: unknown) read as getopt reads
    them: options in *with_arg* take an argument, those in *name_opts* name a variable; then
    the operands name variables (all of them, or the first), else *default*. ``[_ALL]``
    where a name cannot be known, or for an option in *runs* (``mapfile -C`` runs a
    callback: it may assign any variable)."""
    names: List[Optional[str]] = []
    j = 0
    while j < len(args):
        a = args[j]
        if a is None:
            return [_ALL]
        if a == "--":
            j += 1
            break
        if not a.startswith("-") or a == "-":
            break
        for k in range(1, len(a)):
            ch = a[k]
            if ch in with_arg:
                if k + 1 < len(a):
                    val = a[k + 1:]
                else:
                    j += 1
                    val = args[j] if j < len(args) else ""
                if ch in name_opts:
                    names.append(val)
                if ch in runs:
                    return [_ALL]
                break
        j += 1
    if operands:
        rest = args[j:] if all_operands else args[j:j + 1]
        names.extend(rest)
        if not rest and default and not names:
            names.append(default)
    out = []
    for nm in names:
        if nm is None:
            return [_ALL]
        nm = nm.split("[")[0]
        if _NAME.fullmatch(nm):
            out.append(nm)
    return out


def _integer(text: str) -> Optional[int]:
    """An integer operand of ``test``: decimal digits, blanks around them."""
    m = _TEST_INT.fullmatch(text)
    return int(m.group(1)) if m else None


# -- arithmetic ---------------------------------------------------------------------------
# bash's arithmetic (``(( ))``, ``$(( ))``, ``let``, the operands of ``[[ -gt ]]``): C's
# integer operators on 64-bit integers that wrap around, with bash's precedence (unary
# operators bind tighter than ``**``, which groups to the right), ``&&``, ``||`` and ``?:``
# evaluating only the side they need. Constants are decimal, octal (``010``), hexadecimal
# (``0x1F``) or ``BASE#DIGITS`` (2 to 64); a variable's value is itself evaluated as an
# expression (empty: 0). What bash rejects (division by zero, a negative exponent, a digit
# too great for its base), what depends on the bash version or the machine (a constant past
# 64 bits, a shift by less than 0 or more than 63, the minimum integer divided by -1) and
# everything that assigns (``=``, ``+=``, ``++``, ``--``), names an array element or holds
# a value the script does not know is unknown: None.

_ARITH_TOKEN = re.compile(r"[ \t\n]*(?:([0-9][0-9A-Za-z@_#]*)|([A-Za-z_][A-Za-z0-9_]*)|"
                          r"(\*\*=|<<=|>>=|\+\+|--|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&^|]=|[-+*/%<>&^|!~?:,()=\[]))")
_ARITH_SPACE = re.compile(r"[ \t\n]*")
_ARITH_ASSIGNS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "<<=", ">>=", "**=", "++", "--", "["}
_ARITH_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7, ">=": 7,
                 "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10, "**": 11}
_ARITH_DEPTH = 32  # parentheses, unary operators and variables' values inside one another
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 63) - 1


class _NotKnown(Exception):
    pass


def _wrap(x: int) -> int:
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >> 63 else x


def _arith_constant(s: str) -> int:
    """A constant as bash's ``strlong`` reads it; :class:`_NotKnown` where bash rejects it
    or where it does not fit 64 bits."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@_"
    if "#" in s:
        base_text, _, body = s.partition("#")
        if not re.fullmatch(r"[1-9][0-9]?", base_text) or not 2 <= int(base_text) <= 64 or not body:
            raise _NotKnown
        base = int(base_text)
        if base <= 36:
            body = body.lower()
    elif s[:2] in ("0x", "0X"):
        base, body = 16, s[2:].lower()
        if not body:
            raise _NotKnown  # ``0x``: 0 in bash 5.2, not in every version
    elif s.startswith("0"):
        base, body = 8, s
    else:
        base, body = 10, s
    value = 0
    for ch in body:
        d = digits.find(ch)
        if d < 0 or d >= base:
            raise _NotKnown  # bash: value too great for base, invalid number
        value = value * base + d
    if value > _INT_MAX:
        raise _NotKnown
    return value


class _Arith:
    """One expression's evaluation (:func:`arith_value`)."""

    def __init__(self, env, depth: int):
        self.env = env
        self.depth = depth

    def run(self, text: str) -> int:
        tokens = []
        pos = 0
        while True:
            pos = _ARITH_SPACE.match(text, pos).end()
            if pos == len(text):
                break
            m = _ARITH_TOKEN.match(text, pos)
            if m is None or m.group(3) in _ARITH_ASSIGNS:
                raise _NotKnown  # a character bash rejects (``$``, a quote...), or an assignment
            tokens.append(("n", m.group(1)) if m.group(1) else ("v", m.group(2)) if m.group(2)
                          else ("o", m.group(3)))
            pos = m.end()
        if not tokens:
            return 0  # an empty expression is 0
        self.tokens, self.i = tokens, 0
        value = self.comma(False)
        if self.i != len(tokens):
            raise _NotKnown
        return value

    def peek(self) -> Optional[str]:
        if self.i < len(self.tokens) and self.tokens[self.i][0] == "o":
            return self.tokens[self.i][1]
        return None

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > _ARITH_DEPTH:
            raise _NotKnown

    def comma(self, noeval: bool) -> int:
        value = self.cond(noeval)
        while self.peek() == ",":
            self.i += 1
            value = self.cond(noeval)
        return value

    def cond(self, noeval: bool) -> int:
        c = self.binary(1, noeval)
        if self.peek() != "?":
            return c
        self.i += 1
        a = self.comma(noeval or c == 0)
        if self.peek() != ":":
            raise _NotKnown
        self.i += 1
        b = self.cond(noeval or c != 0)
        return a if c else b

    def binary(self, lowest: int, noeval: bool) -> int:
        left = self.unary(noeval)
        while True:
            op = self.peek()
            prec = _ARITH_BINARY.get(op)
            if prec is None or prec < lowest:
                return left
            self.i += 1
            if op == "**":
                right = self.binary(prec, noeval)  # to the right
            elif op == "&&":
                right = self.binary(prec + 1, noeval or left == 0)
            elif op == "||":
                right = self.binary(prec + 1, noeval or left != 0)
            else:
                right = self.binary(prec + 1, noeval)
            left = _arith_apply(op, left, right, noeval)

    def unary(self, noeval: bool) -> int:
        self.deeper()
        op = self.peek()
        if op in ("-", "+", "!", "~"):
            self.i += 1
            v = self.unary(noeval)
            out = _wrap(-v) if op == "-" else v if op == "+" else int(v == 0) if op == "!" else ~v
        else:
            out = self.primary(noeval)
        self.depth -= 1
        return out

    def primary(self, noeval: bool) -> int:
        if self.i >= len(self.tokens):
            raise _NotKnown
        kind, text = self.tokens[self.i]
        self.i += 1
        if kind == "n":
            return _arith_constant(text)
        if kind == "v":
            return 0 if noeval else self.variable(text)
        if text != "(":
            raise _NotKnown
        value = self.comma(noeval)
        if self.peek() != ")":
            raise _NotKnown
        self.i += 1
        return value

    def variable(self, name: str) -> int:
        v = self.env.get(name)
        if v is None or v.is_array or UNKNOWN in v.text:
            raise _NotKnown
        if not v.text:
            return 0
        self.deeper()
        inner = _Arith(self.env, self.depth)
        value = inner.run(v.text)
        self.depth -= 1
        return value


def _arith_apply(op: str, a: int, b: int, noeval: bool) -> int:
    if op == "**":
        if b < 0:
            raise _NotKnown  # bash: exponent less than 0 (even where it is not evaluated)
        return _wrap(pow(a, b, 1 << 64))
    if op in ("/", "%"):
        if b == 0 and noeval:
            return 0  # not evaluated: no error
        if b == 0 or (a == _INT_MIN and b == -1):
            raise _NotKnown
        q = abs(a) // abs(b)
        q = q if (a < 0) == (b < 0) else -q
        return q if op == "/" else a - b * q
    if op in ("<<", ">>"):
        if not 0 <= b <= 63:
            raise _NotKnown
        return _wrap(a << b) if op == "<<" else a >> b
    if op == "&&":
        return int(a != 0 and b != 0)
    if op == "||":
        return int(a != 0 or b != 0)
    return {"+": lambda: _wrap(a + b), "-": lambda: _wrap(a - b), "*": lambda: _wrap(a * b),
            "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
            "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
            ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b)}[op]()


def arith_value(text: str, env) -> Optional[int]:
    """The value bash gives the arithmetic expression *text* (already expanded), with the
    variables of *env*; None where it is not known or bash rejects it."""
    try:
        return _Arith(env, 0).run(text)
    except _NotKnown:
        return None


def _arith_status(value: Optional[int]):
    """The status of ``(( … ))`` or ``let`` whose (last) value is *value*."""
    return _UNDECIDED if value is None else _TRUE if value != 0 else _FALSE


def _negate(r):
    return (None if r[0] is None else not r[0]), r[2], r[1]


class _MappedSource:
    """The source of a ``bash -c`` string or an ``eval`` text: a byte of the text is mapped to
    where that character was written in the file's script (*root*, the same for texts inside
    one another). Values hold offsets in *root* already (:meth:`_Walker._offsets`)."""

    def __init__(self, root: _Source, offmap: Dict[int, Optional[int]]):
        self.root = root
        self.offmap = offmap

    def token_span(self, value: Value) -> Optional[Span]:
        return self.root.token_span(value)

    def span_of(self, start: int, end: Optional[int] = None) -> Span:
        a = self.offmap.get(start)
        return self.root.span_of(a if a is not None else 0)


def _backgrounded(n) -> bool:
    """Whether statement *n* is ended by ``&``: tree-sitter-bash puts the ``&`` after the
    statement's node, as its next sibling (``{ …; } &``, ``f &``, ``a && b &``)."""
    after = n.next_sibling
    return after is not None and after.type == "&"


def _env_key(env) -> tuple:
    """What tells two paths' environments apart."""
    out = []
    for k, v in env.items():
        if k == _FACTS:  # about values, by identity
            out.append((k, tuple((f[0], id(f[1])) + f[2:] for f in v)))
        elif k == _NARROWED:
            out.append((k, tuple((name, id(before), id(after)) for name, before, after in v)))
        elif k == _FRAMES:
            out.append((k, tuple(tuple((name, None if saved is None else _value_key(saved)) for name, saved in frame)
                                 for frame in v)))
        else:
            out.append((k, _value_key(v)))
    return tuple(sorted(out))


def _told_keys(env):
    return [(name, _value_key(before) if before is not None else None, _value_key(after))
            for name, before, after in env.get(_NARROWED, ()) if env.get(name) is after]


def _fact_keys(env):
    return [(f[0], _value_key(f[1]) if f[1] is not None else None) + f[2:]
            for f in env.get(_FACTS, ()) if env.get(f[0]) is f[1]]


def _untold(env, keep_told, keep_facts) -> dict:
    """*env* without what conditions told it (a narrowed variable gets its value back), but
    for what is in *keep_told*/*keep_facts* (:func:`_told_keys`, :func:`_fact_keys`)."""
    env = dict(env)
    kept = []
    for record in env.pop(_NARROWED, ()):
        name, before, after = record
        if env.get(name) is not after:
            continue  # assigned since
        if (name, _value_key(before) if before is not None else None, _value_key(after)) in keep_told:
            kept.append(record)
        elif before is None:
            env.pop(name, None)
        else:
            env[name] = before
    facts = [f for f in env.pop(_FACTS, ()) if env.get(f[0]) is f[1]
             and (f[0], _value_key(f[1]) if f[1] is not None else None) + f[2:] in keep_facts]
    if kept:
        env[_NARROWED] = tuple(kept)
    if facts:
        env[_FACTS] = tuple(facts)
    return env


def _all_unknown(env, ifs: bool = False) -> dict:
    """*env* after something that may have set any variable (``source``, ``eval`` of unknown
    text): every variable is unknown, also the outer values a function's locals hide, and
    nothing is known about values any more. ``IFS`` too with *ifs* (``eval`` of unknown text,
    which a caller may give ``IFS=,``); a sourced file is taken to leave it alone: a launch
    script's sourced configuration sets variables, and an unknown ``IFS`` would make every
    later unquoted expansion unknown (docs/internals.md)."""
    out = {k: Value.unknown() for k in env if k not in (_FACTS, _FRAMES, _NARROWED)}
    if ifs:
        out["IFS"] = Value.unknown()
    frames = env.get(_FRAMES)
    if frames:
        out[_FRAMES] = tuple(tuple((name, Value.unknown()) for name, _ in frame) for frame in frames)
    return out


def _forget(env, names) -> None:
    """Drop (in place, on a copy) the facts about *names*, whose values change."""
    facts = env.get(_FACTS)
    if facts:
        env[_FACTS] = tuple(f for f in facts if f[0] not in names)


def _value_key(v):
    """What tells two values apart (an array by its items: two paths whose arrays differ are
    two paths)."""
    if v.is_array:
        return (True, tuple(_value_key(i) for i in v.items), v.idx)
    return (v.text, v.offs)


def _items(v: Value) -> Tuple[Value, ...]:
    if v.is_array:
        return v.items
    return (v,) if v.text else ()


def _join(values) -> Value:
    out = EMPTY
    for v in values:
        if v.is_array:
            v = _join_with_spaces(v.items)
        out = out + v
    return out


def _join_with_spaces(items) -> Value:
    return _join_with(items, " ")


def _join_with(items, sep: str) -> Value:
    out = EMPTY
    for i, v in enumerate(items):
        if i and sep:
            out = out + Value(sep, (None,))
        out = out + v
    return out


def _split(pieces: Sequence[Tuple[Value, bool]], default_ifs: bool = True) -> List[Tuple[Value, bool]]:
    """Field splitting: whitespace in splittable pieces separates words. Returns (word,
    splat) where splat marks a word holding unknown text of a splittable piece (it may be
    blanks: any number of words, even none). A word with a
    quoted part stays, even empty (``''``, ``"$EMPTY"``); a word made of unquoted expansions
    that are empty is no word. A pattern character (``*?[``) in a splittable piece makes its
    word unknown, a splat (pathname expansion: :meth:`_Walker.word_fields`); so does any
    splittable text when *default_ifs* is false (``IFS`` is not blank, tab, newline)."""
    if len(pieces) == 1:  # one quoted or literal piece (most words): itself, whole
        value, splittable = pieces[0]
        if not splittable and not value.is_array and MANY not in value.text:
            return [(value, False)]
    words: List[Tuple[Value, bool]] = []
    cur: Optional[Value] = None
    cur_splat = cur_glob = cur_quoted = False

    def flush():
        nonlocal cur, cur_splat, cur_glob, cur_quoted
        if cur is not None and cur_glob:
            first = next((o for o in cur.offs if o is not None), None)
            words.append((Value(UNKNOWN, (first,)), True))
        elif cur is not None and (cur.text or cur.offs or cur_quoted):
            words.append((cur, cur_splat))
        cur, cur_splat, cur_glob, cur_quoted = None, False, False, False

    for value, splittable in pieces:
        if value.is_array:  # "${A[@]}" / ${A[@]}: one word per element (split if unquoted)
            for j, item in enumerate(value.items):
                if j:
                    flush()
                sub = _split([(item, splittable)], default_ifs)
                for k, (w, s) in enumerate(sub):
                    if k == 0 and cur is not None:
                        cur = cur + w
                        cur_splat = cur_splat or s
                    else:
                        flush()
                        cur, cur_splat = w, s
                    cur_quoted = cur_quoted or not splittable
                    if k < len(sub) - 1:
                        flush()
            continue
        if not splittable:
            if MANY in value.text:
                value = Value(value.text.replace(MANY, ""), tuple(o for o, ch in zip(value.offs, value.text)
                                                                   if ch != MANY))
                cur_splat = True
            else:
                cur_quoted = True
            cur = value if cur is None else cur + value
            continue
        if value.text in (UNKNOWN, UNKNOWN + MANY) or (value.text and not default_ifs):
            # an unknown unquoted expansion (or one split by an IFS not known): any number of words
            value = Value.unknown()
            cur = value if cur is None else cur + value
            cur_splat = True
            continue
        text, offs = value.text, value.offs
        pos = 0
        for m in _BLANKS.finditer(text):  # each run of blanks ends a word
            if m.start() > pos:
                piece = Value(text[pos:m.start()], tuple(offs[pos:m.start()]))
                cur = piece if cur is None else cur + piece
                cur_glob = cur_glob or _has_pattern(piece.text)
                cur_splat = cur_splat or UNKNOWN in piece.text
            flush()
            pos = m.end()
        if pos < len(text):
            piece = Value(text[pos:], tuple(offs[pos:]))
            cur = piece if cur is None else cur + piece
            cur_glob = cur_glob or _has_pattern(piece.text)
            cur_splat = cur_splat or UNKNOWN in piece.text
    flush()
    return words


def _has_pattern(text: str) -> bool:
    """Whether unquoted *text* holds a pattern character of pathname expansion: ``*``, ``?``,
    or a ``[`` with a ``]`` after it (a lone ``[`` is itself)."""
    if "*" in text or "?" in text:
        return True
    k = text.find("[")
    return k >= 0 and "]" in text[k + 1:]


def _expands_unquoted(shape: str) -> bool:
    """Whether a word whose unquoted shape is *shape* (:meth:`_Walker._unquoted_shape`) has
    a brace expansion, a tilde prefix or a pattern character. An argument shaped like an
    assignment (``save=~/x``, ``p=a:~/b``) has bash's tilde expansion after ``=`` and ``:``
    too (outside POSIX mode)."""
    return shape.startswith("~") or _has_pattern(shape) or _BRACE.search(shape) is not None or \
        _ASSIGNMENT_TILDE.match(shape) is not None


_ASSIGNMENT_TILDE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=(?:~|[^\n]*:~)")


def _tilde(shape: str) -> bool:
    """Whether the value of an assignment whose unquoted shape is *shape* has a tilde prefix
    (at its start or after a ``:``)."""
    return shape.startswith("~") or ":~" in shape


def _default_ifs(env) -> bool:
    """Whether ``IFS`` splits as bash's default does (unset, or blank, tab and newline)."""
    v = env.get("IFS")
    return v is None or (not v.is_array and v.text == " \t\n")


# a brace expansion: a comma list or a sequence between unquoted braces
_BRACE = re.compile(r"\{[^{}]*,[^{}]*\}|\{(?:[+-]?[0-9]+\.\.[+-]?[0-9]+|[A-Za-z]\.\.[A-Za-z])(?:\.\.[+-]?[0-9]+)?\}")
_ESCAPED = re.compile(r"\\(?:.|\n)", re.S)


_BLANKS = re.compile(r"[ \t\n]+")
_DQ_ESCAPE = re.compile(r'\\[$`"\\\n]')


def _char_offsets(data: bytes, start: int, end: int) -> Tuple[int, ...]:
    """Byte offset of each character of data[start:end], characters as
    ``decode("utf-8", "surrogateescape")`` makes them (a byte that is not part of valid
    UTF-8 is one character)."""
    if data[start:end].isascii():
        return tuple(range(start, end))
    out = []
    i = start
    while i < end:
        out.append(i)
        i += _clen(data, i)
    return tuple(out)


def _clen(data: bytes, off: int) -> int:
    """The length in bytes of the character at *off*: a valid UTF-8 sequence, else one byte."""
    b = data[off]
    if b < 0x80:
        return 1
    n = 2 if 0xC2 <= b < 0xE0 else 3 if 0xE0 <= b < 0xF0 else 4 if 0xF0 <= b < 0xF5 else 0
    if n == 0:
        return 1
    try:
        data[off:off + n].decode("utf-8")
    except UnicodeDecodeError:
        return 1
    return n


# -- launch wrappers --------------------------------------------------------------------
# Commands that run the command after their own options: ``nohup torchrun …``,
# ``timeout -s KILL 2h torchrun …``, ``env -u X A=B torchrun …``, ``numactl --cpunodebind=0
# torchrun …``, ``taskset -c 0-15 torchrun …``. Their options are read as GNU getopt_long
# reads them (bundled short options, ``-sKILL``/``-s KILL``, ``--signal=KILL``/``--signal
# KILL``, unambiguous long-option prefixes, ``--``); an option a wrapper does not have, or a
# word that cannot be known where an option may be, and nothing is said about the command.


def _program_name(word: str) -> str:
    return os.path.basename(word)


_BASH_PROGRAMS = {"bash", "sh", "dash", "ash"}


def _getopt(words: Sequence, j: int, short_noarg: str, short_arg: str, long_noarg: Sequence[str] = (),
            long_arg: Sequence[str] = (), long_optarg: Sequence[str] = ()) -> Optional[int]:
    """The index of the first operand after the options at ``words[j:]`` (options stop at
    the first operand, as with getopt's ``+``); None when an option is unknown or a word
    where an option may be is not known."""
    longs = tuple(long_noarg) + tuple(long_arg) + tuple(long_optarg)
    while j < len(words):
        w = words[j]
        if not w.known:
            return None
        t = w.text
        if t == "--":
            return j + 1
        if t.startswith("--"):
            name, eq, _ = t[2:].partition("=")
            full = name if name in longs else None
            if full is None:
                matches = [x for x in longs if x.startswith(name)] if name else []
                if len(matches) != 1:
                    return None
                full = matches[0]
            if full in long_noarg and eq:
                return None
            j += 2 if (full in long_arg and not eq) else 1
            continue
        if t.startswith("-") and len(t) > 1:
            for k in range(1, len(t)):
                ch = t[k]
                if ch in short_arg:
                    if k + 1 == len(t):
                        j += 1  # the argument is the next word
                    break
                if ch not in short_noarg:
                    return None
            j += 1
            continue
        return j
    return j


def _one_operand(words: Sequence, j: Optional[int]) -> Optional[int]:
    """Past one operand (``timeout``'s duration, ``taskset``'s mask)."""
    if j is None or j >= len(words) or words[j].splat:
        return None
    return j + 1


def _timeout(words, j):
    return _one_operand(words, _getopt(words, j, "vfp", "ks", ("foreground", "preserve-status", "verbose"),
                                       ("kill-after", "signal")))


def _nohup(words, j):
    if j < len(words) and words[j].known and words[j].text == "--":
        return j + 1
    if j < len(words) and (not words[j].known or words[j].text.startswith("-")):
        return None
    return j


def _env(words, j):
    j = _getopt(words, j, "i0v", "uCa", ("ignore-environment", "null", "debug"), ("unset", "chdir", "argv0"),
                ("block-signal", "default-signal", "ignore-signal"))  # -S (split a string): not read
    if j is None:
        return None
    if j < len(words) and words[j].known and words[j].text == "-":
        j += 1
    while j < len(words):  # NAME=VALUE words, then the command
        if not words[j].known:
            return None
        if "=" not in words[j].text:
            break
        j += 1
    return j


def _numactl(words, j):
    return _getopt(words, j, "alb", "iwpPmNCc", ("all", "localalloc", "balancing"),
                   ("interleave", "weighted-interleave", "preferred", "preferred-many", "membind",
                    "cpunodebind", "physcpubind", "cpubind"))


def _taskset(words, j):
    # -p (an existing process) runs nothing
    return _one_operand(words, _getopt(words, j, "ac", "", ("all-tasks", "cpu-list")))


def _stdbuf(words, j):
    return _getopt(words, j, "", "ioe", (), ("input", "output", "error"))


def _time(words, j):
    return _getopt(words, j, "pvaq", "fo", ("portability", "verbose", "append", "quiet"), ("format", "output"))


def _exec(words, j):
    return _getopt(words, j, "cl", "a")


_WRAPPERS = {"nohup": _nohup, "timeout": _timeout, "env": _env, "numactl": _numactl, "taskset": _taskset,
             "stdbuf": _stdbuf, "time": _time, "exec": _exec}


def command_start(words: Sequence) -> Optional[int]:
    """The index of the command that *words* run once the wrappers before it are looked
    through (0 when there is none); None when a wrapper's options cannot be read. Words
    have ``text`` and ``known`` (and ``splat``)."""
    i = 0
    for _ in range(16):
        if i >= len(words) or not words[i].known:
            return i
        wrapper = _WRAPPERS.get(_program_name(words[i].text))
        if wrapper is None:
            return i
        j = wrapper(words, i + 1)
        if j is None:
            return None
        i = j
    return None


_BASH_SHORT = set("abefhkmnptuvxBCEHPTcilrsD")
_BASH_LONG = {"--login", "--norc", "--noprofile", "--posix", "--verbose", "--noediting", "--restricted",
              "--debugger"}


def _shell_c_string(words: Sequence, j: int) -> Optional[int]:
    """After ``bash``/``sh``: the index of the command string of ``-c``; None without ``-c``
    or when an option cannot be read."""
    c_flag = False
    while j < len(words):
        w = words[j]
        if not w.known:
            return None
        t = w.text
        if t in ("--", "-"):
            j += 1
            break
        if t.startswith("--"):
            if t in _BASH_LONG:
                j += 1
                continue
            if t in ("--rcfile", "--init-file"):
                j += 2
                continue
            return None
        if t[:1] in "-+" and len(t) > 1:
            extra = 0
            for ch in t[1:]:
                if ch in "oO":
                    extra += 1  # -o NAME / -O NAME
                elif ch not in _BASH_SHORT:
                    return None
                elif ch == "c" and t[0] == "-":
                    c_flag = True
            j += 1 + extra
            continue
        break
    if not c_flag or j >= len(words):
        return None
    return j
