"""What a rule family implements, and the per-file context the engine gives it."""

from __future__ import annotations

import ast
import re
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Set, Tuple

from npulint.model import Edit, Finding, Fix, Rule, Span
from npulint.paths import module_name  # noqa: F401 - re-exported
from npulint.semantic import Arg, Semantic, Site
from npulint.signatures import Bound, Signature, bind
from npulint.source import PYTHON, python_lines
from npulint.values import TORCH_FLOAT32, UNKNOWN, Evaluator


class Checker:
    """A rule family: one instance per linted file.

    * ``rules``: the :class:`Rule` objects it may report (its codes).
    * ``tokens``: prefilter. The file is parsed for this checker only if, for some group
      in ``tokens``, every string of the group occurs in the file's text. An empty
      ``tokens`` means "always".
    * ``visit_<Node>``/``leave_<Node>`` hooks are called during the file's one traversal;
      ``finish()`` at its end, when every binding is known; ``project()`` once per run
      with the facts every file recorded through :meth:`FileContext.fact`.
    """

    rules: ClassVar[Tuple[Rule, ...]] = ()
    tokens: ClassVar[Tuple[Tuple[str, ...], ...]] = ()
    language: ClassVar[str] = PYTHON
    # Shared facts: topics this checker publishes (with ``ctx.fact(topic, data)``) and topics
    # whose facts its ``project()`` reads. A provider runs, for its facts, whenever a checker
    # that consumes them is enabled, even if none of its own codes is.
    provides: ClassVar[Tuple[str, ...]] = ()
    consumes: ClassVar[Tuple[str, ...]] = ()

    def __init__(self, ctx: "FileContext"):
        self.ctx = ctx

    def finish(self) -> None:
        pass

    def release(self) -> None:
        """Called once the file is done: drop the checker's state. A cycle in it (two records
        that point at each other) would otherwise keep the file's whole tree alive, through
        the sites and scopes it holds, until the next full collection; the default clears
        every attribute, which breaks any cycle that runs through the checker itself."""
        self.__dict__.clear()

    @classmethod
    def project(cls, facts: List[Tuple[str, Any]], report: "ProjectReporter", settings,
                shared: Optional[Dict[str, List[Tuple[str, Any]]]] = None) -> None:
        """Fold the facts of every file (in sorted path order: ``(path, fact)``): its own in
        *facts*, and those of the topics it ``consumes`` in *shared* (topic -> list)."""

    # Tokens that let the checker join a file that is parsed anyway (for another checker)
    # without making the prefilter parse it: cheap facts from files already paid for. Files
    # that only these tokens would select can still be reached through ``followup()``.
    piggyback: ClassVar[Tuple[str, ...]] = ()

    @classmethod
    def scan(cls, text: str, path: str) -> Optional[Dict[str, List[Any]]]:
        """For a file holding one of ``piggyback``'s tokens that is not parsed: the facts the
        checker would record had it joined a parse, read cheaply from the text (topic ->
        facts), or None. Files that are parsed get the checker itself instead."""
        return None

    @classmethod
    def followup(cls, facts: List[Tuple[str, Any]],
                 shared: Optional[Dict[str, List[Tuple[str, Any]]]] = None) -> Tuple[Any, ...]:
        """After the first pass, given this checker's facts (and those of the topics it
        ``consumes``, in *shared*): text tokens such that a file the prefilter skipped but that
        contains one of them must be analysed too (for instance the file that instantiates a
        class, or imports a module, the facts name). A token may also be a group (a tuple of
        strings) that selects a file only when it contains all of them (a class name and the
        name of the module that defines it: no other file can import the class). Identifiers
        match as whole words. Each such file is then parsed once, for this checker."""
        return ()

    @classmethod
    def codes(cls) -> Set[str]:
        return {r.code for r in cls.rules}

    @classmethod
    def wants(cls, text: str, path: str = "", present: Optional[Dict[str, bool]] = None) -> bool:
        """Whether the file (its text, and its path) must be parsed for this checker: by
        default, the ``tokens`` test. A checker may refine it, as long as it never declines a
        file it would report on or record a fact for. *present* (token -> found in *text*) is
        shared by the checkers asked about one file, so each token is looked for once."""
        if not cls.tokens:
            return True
        if present is None:
            present = {}
        for group in cls.tokens:
            for token in group:
                found = present.get(token)
                if found is None:
                    found = present[token] = token in text
                if not found:
                    break
            else:
                return True
        return False


class FileContext:
    """Everything a checker may ask about the file it is in (its tree: CPython's ``ast``)."""

    def __init__(self, path: str, display: str, text: str, module: ast.Module, settings, enabled: Set[str]):
        self.path = path
        self.display = display
        self.text = text
        self.module = module
        self.settings = settings
        self.enabled = enabled
        name, is_package = module_name(path)
        self.sem = Semantic(module, name, is_package)
        # A program that changes torch's default dtype makes it unknown (the call may run
        # before any of this file's tensors are made).
        changed = "set_default_dtype" in text or "set_default_tensor_type" in text
        self.ev = Evaluator(self.sem, None if changed else TORCH_FLOAT32)
        self.findings: List[Finding] = []
        self.facts: Dict[str, List[Any]] = {}
        self._lines: Optional[List[str]] = None  # the text's lines, as CPython counts them
        self._tokens: Optional[tuple] = None  # see tokens()
        # site(): the current point of the traversal (call it from a hook); Semantic's own
        # method, one call less for the hooks that ask at every name
        self.site: Callable[[], Site] = self.sem.site

    def release(self) -> None:
        """Break the reference cycles of the file's binding table (binding -> site -> scope ->
        bindings) so the tree and its tables are freed at once, not at the next full GC."""
        sem = self.sem
        for scope in sem.scope_of.values():
            scope.bindings.clear()
        sem.scope_of.clear()
        sem.attrs.clear()
        sem._use_memo.clear()
        sem.attr_stores.clear()
        sem.def_site.clear()

    # -- where ------------------------------------------------------------------------
    def lines(self) -> List[str]:
        """The text's lines (with their line breaks), split where CPython counts lines."""
        if self._lines is None:
            self._lines = python_lines(self.text)
        return self._lines

    def _column(self, line: int, offset: int) -> int:
        """The 1-based character column of the UTF-8 byte *offset* on *line* (CPython's
        columns count bytes; findings count characters)."""
        lines = self.lines()
        if 0 < line <= len(lines):
            text = lines[line - 1]
            if not text.isascii():
                return len(text.encode("utf-8", "surrogateescape")[:offset].decode("utf-8", "surrogateescape")) + 1
        return offset + 1

    def span(self, node) -> Span:
        """Where *node* (an ``ast`` node, or an :class:`Arg`) is: from its first character to
        just after its last, without the parentheses written around it (CPython counts a
        tuple's own parentheses in its position; they are left out here too)."""
        s = self._span(node)
        return self._inside_parentheses(s) if type(node) is ast.Tuple else s

    def _span(self, node) -> Span:
        """CPython's span of *node* (a tuple's own parentheses included), in characters."""
        if type(node) is Arg:
            node = node.node
        if type(node) is Span:
            return node
        line = getattr(node, "lineno", None)
        if line is None:
            return Span(1, 1, 1, 1)
        end_line = node.end_lineno or line
        end = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return Span(line, self._column(line, node.col_offset), end_line, self._column(end_line, end))

    def tokens(self) -> tuple:
        """The file's tokens, comments and blank-line breaks left out, made once and only when
        asked for (messages and fixes that need the text around a node): ``(list, by start,
        by end)``, each token ``(type, string, start, end)`` with 1-based character columns,
        the indexes mapping a position to the token that starts or ends there."""
        if self._tokens is None:
            import tokenize

            toks: List[tuple] = []
            try:
                for t in tokenize.generate_tokens(iter(self.lines()).__next__):
                    if t.type != tokenize.NL and t.type != tokenize.COMMENT:
                        toks.append((t.type, t.string, (t.start[0], t.start[1] + 1), (t.end[0], t.end[1] + 1)))
            except (tokenize.TokenError, SyntaxError, StopIteration):
                pass  # the tokens before the trouble
            self._tokens = (toks, {t[2]: i for i, t in enumerate(toks)}, {t[3]: i for i, t in enumerate(toks)})
        return self._tokens

    def _inside_parentheses(self, s: Span) -> Span:
        """*s* without the parentheses that open at its start and close at its end (``(a, b)``
        -> ``a, b``; not ``(a), (b)``, whose parentheses are its parts'). An empty ``()`` is
        placed after the whitespace that follows its ``(`` on that line."""
        lines = self.lines()
        if not (0 < s.line <= len(lines) and lines[s.line - 1][s.column - 1:s.column] == "("):
            return s  # (most tuples: no tokens needed)
        toks, starts, ends = self.tokens()
        i, j = starts.get((s.line, s.column)), ends.get((s.end_line, s.end_column))
        if i is None or j is None or j <= i or toks[i][1] != "(" or toks[j][1] != ")":
            return s
        depth = 0
        for k in range(i, j + 1):
            text = toks[k][1]
            if text in ("(", "[", "{"):
                depth += 1
            elif text in (")", "]", "}"):
                depth -= 1
                if depth == 0 and k != j:
                    return s
        if j == i + 1:  # ``()``
            line, col = toks[i][3]
            lines = self.lines()
            rest = lines[line - 1][col - 1:] if 0 < line <= len(lines) else ""
            at = (line, col + len(rest) - len(rest.lstrip(" \t\f")))
            if toks[j][2][0] != line or at > toks[j][2]:
                at = toks[j][2]
            return Span(at[0], at[1], at[0], at[1])
        return Span(toks[i + 1][2][0], toks[i + 1][2][1], toks[j - 1][3][0], toks[j - 1][3][1])

    def line(self, node) -> int:
        """The line *node* starts on."""
        if type(node) is Arg:
            node = node.node
        return getattr(node, "lineno", 1)

    def source(self, node) -> str:
        """The source text of *node*, as written."""
        s = self.span(node)
        return _slice(self.lines(), s)

    def code(self, node) -> str:
        """*node* as a message quotes it: its source with the parentheses written around it
        (``(outs)``, which :meth:`source` leaves out; not a call's), and its continuation lines
        without the indentation of the block its statement stands in."""
        import keyword
        import tokenize

        s = self._span(node)  # a tuple with its own parentheses
        lines = self.lines()
        if s.line == s.end_line and 0 < s.line <= len(lines):
            line = lines[s.line - 1]
            before, after = line[:s.column - 1].rstrip(), line[s.end_column - 1:].strip()
            if (before and not before.endswith("(")) or (after and not after.startswith((")", "#"))) or (
                    before.endswith("(") and _opens_a_call(before)):
                return line[s.column - 1:s.end_column - 1]  # no parentheses of its own: no tokens needed
        toks, starts, ends = self.tokens()
        i, j = starts.get((s.line, s.column)), ends.get((s.end_line, s.end_column))
        if i is None or j is None or j < i:
            return self.source(node)
        while i > 0 and j + 1 < len(toks) and toks[i - 1][1] == "(" and toks[j + 1][1] == ")":
            before = toks[i - 2] if i > 1 else None
            if before is not None and (before[0] in (tokenize.STRING, tokenize.NUMBER) or before[1] in (")", "]", "}")
                                       or (before[0] == tokenize.NAME and not keyword.iskeyword(before[1]))):
                break  # the parentheses of a call
            i, j = i - 1, j + 1
        (a_line, a_col), (b_line, b_col) = toks[i][2], toks[j][3]
        if a_line == b_line:
            return lines[a_line - 1][a_col - 1:b_col - 1]
        k = i  # the statement's first token: its line's indentation is the block's
        while k > 0 and toks[k - 1][0] not in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            k -= 1
        first = lines[toks[k][2][0] - 1]
        indent = first[:len(first) - len(first.lstrip(" \t\f"))]
        in_string = set()  # lines that begin inside a string token
        for t in toks[i:j + 1]:
            if t[0] == tokenize.STRING and t[3][0] > t[2][0]:
                in_string.update(range(t[2][0] + 1, t[3][0] + 1))
        parts = [lines[a_line - 1][a_col - 1:]]
        for n in range(a_line + 1, b_line + 1):
            text = lines[n - 1] if n < b_line else lines[n - 1][:b_col - 1]
            if indent and n not in in_string and text.startswith(indent):
                text = text[len(indent):]
            parts.append(text)
        return "".join(parts).replace("\r\n", "\n").replace("\r", "\n")

    # -- what -------------------------------------------------------------------------
    def value(self, expr: Optional[ast.AST], site: Site):
        return self.ev.value(expr, site) if expr is not None else UNKNOWN

    def resolve(self, expr: ast.AST, site: Site, names) -> Optional[str]:
        return self.sem.resolve(expr, site, names)

    def bind(self, sig: Signature, call: ast.Call) -> Bound:
        return bind(sig, call)

    def arg_value(self, bound: Bound, name: str, site: Site):
        """The value of parameter *name* in a bound call: its argument's value, its
        default when certainly omitted, else UNKNOWN."""
        if name in bound.args:
            return self.value(bound.args[name], site)
        if bound.is_default(name):
            p = bound.sig.param(name)
            if p is not None:
                return p.default
        return UNKNOWN

    # -- reporting ----------------------------------------------------------------------
    def wants(self, code: str) -> bool:
        return code in self.enabled

    def report(self, code: str, node, message: str,
               related: Sequence[Tuple[str, int, int]] = (), fix: Optional[Fix] = None) -> None:
        if code not in self.enabled:
            return
        s = self.span(node)
        self.findings.append(Finding(self.display, s.line, s.column, code, message, s.end_line,
                                     s.end_column, tuple(related), fix))

    # -- fixes ------------------------------------------------------------------------
    def replace(self, node, text: str) -> Edit:
        """An edit that replaces *node*'s source with *text*."""
        s = self.span(node)
        return Edit(s.line, s.column, s.end_line, s.end_column, text)

    def remove_arg(self, call: ast.Call, arg: Arg) -> Optional[Edit]:
        """An edit that drops *arg* (an :func:`~npulint.semantic.call_args` entry of *call*)
        and the comma that separates it."""
        from npulint.semantic import call_args

        args = call_args(call)
        index = next((i for i, a in enumerate(args) if a is arg), None)
        if index is None:
            return None
        here = self.span(arg)
        if index + 1 < len(args):  # up to the next argument
            nxt = self.span(args[index + 1])
            return Edit(here.line, here.column, nxt.line, nxt.column, "")
        if index > 0:  # the last one: from the end of the previous argument
            prev = self.span(args[index - 1])
            between = _slice(self.lines(), Span(prev.end_line, prev.end_column, here.line, here.column))
            if "#" in between:
                return None  # a comment stands between them: left alone
            return Edit(prev.end_line, prev.end_column, here.end_line, here.end_column, "")
        if _after(self.lines(), here).startswith(","):
            return None  # ``f(x=1,)``: left alone
        return Edit(here.line, here.column, here.end_line, here.end_column, "")

    def remove_statement(self, small: ast.stmt) -> Optional[Edit]:
        """An edit that drops the line holding the simple statement *small* (which must be
        alone on its line), or replaces it with ``pass`` when it is alone in its block."""
        siblings = _block_of(self.module, small)
        if siblings is None:
            return None
        s = self.span(small)
        lines = self.lines()
        before = lines[s.line - 1][:s.column - 1] if 0 < s.line <= len(lines) else ""
        rest = _after(lines, s)
        if before.strip() or (rest and not rest.startswith("#")):
            return None  # ``if x: a = 1``, ``a = 1; b = 2``: not alone on its line
        if len(siblings) == 1:
            return Edit(s.line, s.column, s.end_line, s.end_column, "pass")
        return Edit(s.line, 1, s.end_line + 1, 1, "")

    def import_edit(self, module: str, name: str) -> Optional[Edit]:
        """An edit that adds ``from <module> import <name>`` at module level (after the
        docstring, ``__future__`` imports and the leading imports), or None when the module
        already has that import."""
        body = self.module.body
        insert_before = None
        prev_end = 0
        for index, stmt in enumerate(body):
            if index == 0 and type(stmt) is ast.Expr and type(stmt.value) is ast.Constant \
                    and isinstance(stmt.value.value, str):
                prev_end = stmt.end_lineno or stmt.lineno
                continue  # the docstring
            if type(stmt) is ast.Import or type(stmt) is ast.ImportFrom:
                if type(stmt) is ast.ImportFrom and not stmt.level and stmt.module == module \
                        and any(a.asname is None and a.name == name for a in stmt.names):
                    return None
                prev_end = stmt.end_lineno or stmt.lineno
                continue
            insert_before = stmt
            break
        line = f"from {module} import {name}\n"
        lines = self.lines()
        if insert_before is not None:
            first = min([insert_before.lineno] + [d.lineno for d in getattr(insert_before, "decorator_list", ())])
            if prev_end:  # above the blank lines and comments that lead the statement
                while first - 1 > prev_end and (not lines[first - 2].strip() or lines[first - 2].lstrip().startswith("#")):
                    first -= 1
            return Edit(first, 1, first, 1, line)
        # only imports (or nothing): append at the end
        if not lines:
            return Edit(1, 1, 1, 1, line)
        last = lines[-1]
        if last.endswith(("\n", "\r")):
            return Edit(len(lines) + 1, 1, len(lines) + 1, 1, line)
        return Edit(len(lines), len(last) + 1, len(lines), len(last) + 1, "\n" + line)

    def fact(self, topic, fact: Any) -> None:
        """Record a fact for the project-wide phase: *topic* is the checker class (its own
        facts) or a shared topic name it ``provides``. Facts must be plain data."""
        key = topic if isinstance(topic, str) else topic.__name__
        self.facts.setdefault(key, []).append(fact)


def _opens_a_call(before: str) -> bool:
    """Whether the ``(`` that *before* (a line's text up to a node) ends with is a call's (or
    a subscript result's): it follows a name that is not a keyword, a closing bracket or a
    string."""
    import keyword

    rest = before[:-1].rstrip()
    if not rest:
        return False
    last = rest[-1]
    if last in ")]'\"":
        return True
    if last.isalnum() or last == "_":
        word = re.search(r"\w+$", rest)
        return word is not None and not word.group().isdigit() and not keyword.iskeyword(word.group())
    return False


def _slice(lines: List[str], s: Span) -> str:
    """The text of *lines* from *s*'s start to its end (columns 1-based, end exclusive)."""
    if s.line == s.end_line:
        return lines[s.line - 1][s.column - 1:s.end_column - 1] if 0 < s.line <= len(lines) else ""
    parts = [lines[s.line - 1][s.column - 1:]] + lines[s.line:s.end_line - 1] + [lines[s.end_line - 1][:s.end_column - 1]]
    return "".join(parts)


def _after(lines: List[str], s: Span) -> str:
    """What follows *s* on its last line, stripped."""
    i = s.end_line - 1
    rest = lines[i][s.end_column - 1:] if 0 <= i < len(lines) else ""
    return rest.strip()


def _block_of(module: ast.Module, stmt: ast.stmt) -> Optional[list]:
    """The statement list (a block) that holds *stmt*."""
    for node in ast.walk(module):
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, field, None)
            if type(block) is list and any(s is stmt for s in block):
                return block
    return None


class ShellContext:
    """The context of a checker whose ``language`` is shell: the file's text, no tree. A shell
    checker does its work in ``finish()`` (parsing the text itself) and reports at spans."""

    def __init__(self, path: str, display: str, text: str, settings, enabled: Set[str]):
        self.path = path
        self.display = display
        self.text = text
        self.settings = settings
        self.enabled = enabled
        self.findings: List[Finding] = []
        self.facts: Dict[str, List[Any]] = {}
        self.unjudged = False  # a checker could not read the script (NPU001, NPU004, another shell)

    def wants(self, code: str) -> bool:
        return code in self.enabled

    def report(self, code: str, span: Span, message: str, related: Sequence[Tuple[str, int, int]] = (),
               fix: Optional[Fix] = None, noqa_lines: Tuple[int, ...] = ()) -> None:
        """*noqa_lines*: lines of ``# noqa`` comments that apply to this finding besides its
        own line (a comment line above the command it belongs to)."""
        if code in self.enabled:
            self.findings.append(Finding(self.display, span.line, span.column, code, message, span.end_line,
                                         span.end_column, tuple(related), fix, tuple(noqa_lines)))

    def fact(self, topic, fact: Any) -> None:
        key = topic if isinstance(topic, str) else topic.__name__
        self.facts.setdefault(key, []).append(fact)

    def release(self) -> None:
        pass


class ProjectReporter:
    """Collects findings from the project-wide phase; they are filtered like the others."""

    def __init__(self, enabled: Set[str]):
        self.enabled = enabled
        self.findings: List[Finding] = []

    def report(self, display: str, span: Span, code: str, message: str,
               related: Sequence[Tuple[str, int, int]] = (), fix: Optional[Fix] = None,
               noqa_lines: Tuple[int, ...] = ()) -> None:
        if code in self.enabled:
            self.findings.append(Finding(display, span.line, span.column, code, message, span.end_line,
                                         span.end_column, tuple(related), fix, tuple(noqa_lines)))
