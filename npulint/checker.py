"""What a rule family implements, and the per-file context the engine gives it."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst
import libcst.helpers
from libcst.metadata import MetadataWrapper, PositionProvider

from npulint.model import Edit, Finding, Fix, Rule, Span
from npulint.paths import module_name  # noqa: F401 - re-exported
from npulint.paths import module_name as _module_name
from npulint.semantic import _INERT, Semantic, Site, _field_order
from npulint.signatures import Bound, Signature, bind
from npulint.source import PYTHON, python_lines
from npulint.values import UNKNOWN, Evaluator, program_default_dtype

if TYPE_CHECKING:  # pragma: no cover
    from npulint.shell import Script


class Checker:
    """A rule family: one instance per linted file.

    * ``rules``: the :class:`Rule` objects it may report (its codes).
    * ``tokens``: prefilter. The file is parsed for this checker only if, for some group
      in ``tokens``, every string of the group occurs in the file's text. An empty
      ``tokens`` means "always".
    * ``visit_<Node>``/``leave_<Node>`` hooks: an analysis's are called during the file's one
      traversal; a rule's after it, once the analyses are complete, in the traversal's order
      (:mod:`npulint.lintrule`); ``finish()`` at the end, when every binding is known;
      ``project()`` once per run with the facts every file recorded through
      :meth:`FileContext.fact`.
    """

    rules: ClassVar[Tuple[Rule, ...]] = ()
    tokens: ClassVar[Tuple[Tuple[str, ...], ...]] = ()
    language: ClassVar[str] = PYTHON
    # Shared facts: topics this checker publishes (with ``ctx.fact(topic, data)``) and topics
    # whose facts its ``project()`` reads. A provider runs, for its facts, whenever a checker
    # that consumes them is enabled, even if none of its own codes is.
    provides: ClassVar[Tuple[str, ...]] = ()
    consumes: ClassVar[Tuple[str, ...]] = ()
    # shared analyses (npulint.lintrule.Analysis) this checker reads through ctx.analysis()
    uses: ClassVar[Tuple[type, ...]] = ()

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
    def joins(cls, text: str, path: str = "") -> bool:
        """Whether the checker joins a file that is parsed anyway: by default, when the text
        holds one of ``piggyback``'s tokens. A checker may also join by the file's path."""
        return any(t in text for t in cls.piggyback)

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
        groups = cls.tokens
        if not groups:
            return True
        if present is None:
            present = {}
        # checkers that share their tokens (the launch rules' 29 groups) share the answer
        answer = present.get(id(groups))
        if answer is None:
            answer = present[id(groups)] = cls._any_group(text, groups, present)  # type: ignore[index]
        return answer

    @staticmethod
    def _any_group(text: str, groups, present: Dict[str, bool]) -> bool:
        for group in groups:
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
    """Everything a checker may ask about the file it is in."""

    def __init__(self, path: str, display: str, text: str, module: cst.Module, settings, enabled: Set[str],
                 top_lines: Optional[List[Tuple[int, Optional[List[int]]]]] = None,
                 module_name: Optional[Tuple[Optional[str], bool]] = None):
        self.path = path
        self.display = display
        self.text = text
        self.module = module
        self.settings = settings
        self.enabled = enabled
        # the module's name (for relative imports): given, or from the path and its package folders
        name, is_package = module_name if module_name is not None else _module_name(path)
        self.sem = Semantic(module, name, is_package)
        # (the questions below walk the file's uses once asked: only where the text may hold
        # what they look for, ``sys.modules`` and calls of the namespace builtins)
        self.sem.may_stub_modules = "modules" in text and _SYS_MODULES.search(text) is not None
        self.sem.may_rebind_namespace = _NAMESPACE_WORDS.search(text) is not None
        self.sem.may_reach_namespace = self.sem.may_stub_modules or self.sem.may_rebind_namespace
        # torch's default dtype, worked out when a tensor needs it (a scan of the run's texts)
        self.ev = Evaluator(self.sem, functools.partial(program_default_dtype, text, self.sem))
        self.findings: List[Finding] = []
        self.facts: Dict[str, List[Any]] = {}
        self.analyses: Dict[type, Any] = {}  # the file's shared analyses (see analysis())
        self._lines: Optional[List[str]] = None  # the text's lines, as CPython counts them
        self._tokens: Optional[tuple] = None  # see tokens()
        # site(): the point of the program of the node a hook is called for. During the
        # traversal (an analysis's hooks) it is Semantic's own method, one call less for the
        # hooks that ask at every name; during the rules' hooks, the point recorded with the
        # node (Walker.replayed_site); elsewhere it raises (analyse.run_checkers)
        self.site: Callable[[], Site] = self.sem.site
        self._positions = None  # every node's position, when a statement's alone cannot be had
        # CPython's line of each top-level statement and of each statement of a top-level class
        # (None: unknown); per such statement, its nodes' positions and the line shift that
        # makes them the file's
        self._top_lines = top_lines
        self._paired: Any = _UNSET  # _statement_lines(), once computed
        self._units: Dict[Any, Optional[Tuple[Any, int]]] = {}
        self._line_units: Dict[Any, Optional[Dict[cst.CSTNode, int]]] = {}  # line() per statement
        # the LibCST metadata the rules declare (npulint.metadata.EngineMetadata), set by the
        # engine before the traversal when a rule declares any
        self.metadata: Any = None

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
        sem.top_of.clear()
        self._positions = None
        self._units.clear()
        self.metadata = None

    # -- where ------------------------------------------------------------------------
    def lines(self) -> List[str]:
        """The text's lines (with their line breaks), split where CPython counts lines."""
        if self._lines is None:
            self._lines = python_lines(self.text)
        return self._lines

    def python_tree(self):
        """CPython's ``ast`` of the file, compiled again when asked for (the pipeline's check
        compiled it and let it go): for the readers of facts written in ``ast``
        (:mod:`npulint.argflags`), not for rules, which read the LibCST tree."""
        import ast
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return compile(self.text, "<npulint>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
            except UnicodeEncodeError:  # lone surrogates: the file's bytes, as CPython reads them
                return compile(self.text.encode("utf-8", "surrogateescape"), "<npulint>", "exec",
                               flags=ast.PyCF_ONLY_AST, dont_inherit=True)

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

    def source(self, node) -> str:
        """The source text of *node*, as written."""
        s = self.span(node)
        return _slice(self.lines(), s)
    def span(self, node: cst.CSTNode) -> Span:
        """Where *node* is. Positions come from LibCST's code generation, which for a whole
        file costs more than its parse (docs/benchmarks.md, "Figures behind the engine's
        comments"): so only the statement holding *node* (a top-level one, or
        one of a top-level class: a test method) is generated, and CPython's line of that
        statement places it in the file."""
        if type(node) is Span:
            return node
        if self._positions is None:
            top = self.sem.top_of.get(id(node))
            unit = self._unit(top) if top is not None else None
            if unit is not None:
                computed, shift = unit
                r = computed.get(node)
                if r is None:
                    return Span(1, 1, 1, 1)
                return Span(r.start.line + shift, r.start.column + 1, r.end.line + shift, r.end.column + 1)
            self._positions = _positions(self.module)
        r = self._positions.get(node)
        if r is None:
            return Span(1, 1, 1, 1)
        return Span(r.start.line, r.start.column + 1, r.end.line, r.end.column + 1)

    def line(self, node: cst.CSTNode) -> int:
        """The line *node* starts on: ``span(node).line``, without code generation. The
        statement holding *node* starts on CPython's line for it; *node* is as many lines
        further as the line breaks the tree holds between the two (in newline tokens,
        backslash continuations and multi-line strings)."""
        if self._positions is None:
            top = self.sem.top_of.get(id(node))
            if top is not None and top not in self._units:
                lines = self._unit_lines(top)
                if lines is not None:
                    found = lines.get(node)
                    if found is not None:
                        return found
        return self.span(node).line

    def _unit_lines(self, top) -> Optional[Dict[cst.CSTNode, int]]:
        if top in self._line_units:
            return self._line_units[top]
        found = None
        unit = self._unit_statement(top)
        if unit is not None:
            stmt, line = unit
            found = _node_lines(stmt)
            if found is not None:
                shift = line - found[stmt]
                found = {n: ln + shift for n, ln in found.items()}
        self._line_units[top] = found
        return found

    def _unit_statement(self, top) -> Optional[Tuple[cst.CSTNode, int]]:
        """The statement *top* names (``i`` or ``(i, j)``, as in ``sem.top_of``) and
        CPython's line for it."""
        lines = self._statement_lines()
        if lines is None:
            return None
        if isinstance(top, tuple):
            i, j = top
            body_lines = lines[i][1]
            if body_lines is None:
                return None
            return self.module.body[i].body.body[j], body_lines[j]
        return self.module.body[top], lines[top][0]

    def _unit(self, top) -> Optional[Tuple[Any, int]]:
        if top in self._units:
            return self._units[top]
        unit = None
        found = self._unit_statement(top)
        if found is not None:
            stmt, line = found
            indent = None
            if isinstance(top, tuple):  # a statement of a class's IndentedBlock (the walk only makes such keys)
                block = self.module.body[top[0]].body
                indent = block.indent if block.indent is not None else self.module.default_indent
            unit = _statement_positions(self.module, stmt, line, indent)
        self._units[top] = unit
        return unit

    def _statement_lines(self):
        """Per statement of ``module.body``: CPython's line and, for a class with an indented
        body, CPython's line of each of its statements (else None). A line of simple
        statements (``a; b``) is one LibCST statement and several CPython ones. None when the
        two parsers do not pair up (then positions come from the whole file)."""
        if self._paired is not _UNSET:
            return self._paired
        paired = _pair(self.module.body, self._top_lines) if self._top_lines is not None else None
        if paired is not None:
            out = []
            for stmt, (line, body) in zip(self.module.body, paired):
                inner = None
                if body is not None and isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                    inner = _pair(stmt.body.body, [(b, None) for b in body])
                out.append((line, [b for b, _ in inner] if inner is not None else None))
            paired = out
        self._paired = paired
        return paired

    def code(self, node) -> str:
        """*node* as a message quotes it: its source with the parentheses written around it
        (``(outs)``, which :meth:`source` leaves out; not a call's), and its continuation lines
        without the indentation of the block its statement stands in."""
        import keyword
        import tokenize

        s = self.span(node)  # (the parentheses around it are found among the tokens)
        lines = self.lines()
        if s.line == s.end_line and 0 < s.line <= len(lines):
            line = lines[s.line - 1]
            before, after = line[:s.column - 1].rstrip(), line[s.end_column - 1:].strip()
            if (before and not before.endswith("(")) or (after and not after.startswith((")", "#"))) or (
                    before.endswith("(") and _opens_a_call(before)):
                return line[s.column - 1:s.end_column - 1]  # no parentheses of its own: no tokens needed
        toks, starts, ends = self.tokens()
        i, j = starts.get((s.line, s.column)), ends.get((s.end_line, s.end_column))
        if (s.line, s.column) == (s.end_line, s.end_column) and i is not None and i > 0 and \
                toks[i][1] == ")" and toks[i - 1][1] == "(":
            i, j = i - 1, i  # ``()``: its place is inside its own parentheses
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
    def value(self, expr: Optional[cst.CSTNode], site: Site):
        return self.ev.value(expr, site) if expr is not None else UNKNOWN

    def resolve(self, expr: cst.CSTNode, site: Site, names) -> Optional[str]:
        return self.sem.resolve(expr, site, names)

    def bind(self, sig: Signature, call: cst.Call) -> Bound:
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

    def report(self, code: str, node: cst.CSTNode, message: str,
               related: Sequence[Tuple[str, int, int]] = (), fix: Optional[Fix] = None) -> None:
        if code not in self.enabled:
            return
        s = self.span(node)
        self.findings.append(Finding(self.display, s.line, s.column, code, message, s.end_line,
                                     s.end_column, tuple(related), fix))

    # -- fixes ------------------------------------------------------------------------
    def replace(self, node: cst.CSTNode, text: str) -> Edit:
        """An edit that replaces *node*'s source with *text*."""
        s = self.span(node)
        return Edit(s.line, s.column, s.end_line, s.end_column, text)

    def replace_with_node(self, node: cst.CSTNode, new: Optional[cst.CSTNode]) -> Optional[Edit]:
        """An edit that replaces *node* with the node *new*, written by LibCST where *node*
        stands (inside the indentation of its blocks). *node* is an expression (its span: the
        parentheses of its own stay), a ``SimpleStatementLine`` (its whole lines: the comment
        lines above it stay; *new* None removes the line) or a ``SimpleStatementSuite`` (from
        its first statement to its line's end), less the start and the end that *new* leaves
        as they were. None when LibCST does not write *node* itself as the text at its place,
        or *new* would take a line break the file does not use."""
        path = _path_to(self.module, node)
        if path is None:
            return None
        indent = "".join(b.indent if b.indent is not None else self.module.default_indent
                         for b in path if isinstance(b, cst.IndentedBlock))
        s = self.span(node)
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):  # to its line's end
            start, end = (s.line, 1 if isinstance(node, cst.SimpleStatementLine) else s.column), (s.end_line + 1, 1)
        elif isinstance(node, cst.BaseExpression):
            start, end = (s.line, s.column), (s.end_line, s.end_column)
        else:
            return None
        lines = self.lines()
        old = "".join(lines[start[0] - 1:end[0] - 1])[start[1] - 1:] if end[1] == 1 else _slice(lines, s)
        written = render_in_block(self.module, _bare(node), indent)
        code = "" if new is None else render_in_block(self.module, _bare(new), indent)
        if written is None or code is None:
            return None
        if end[1] == 1 and not old.endswith(("\n", "\r")):  # the file's last line, without a line break
            written, code = _no_line_break(written), _no_line_break(code)
        first = _LINE_BREAK.search(self.text)
        newline = first.group() if first else "\n"
        if written != old or any(b != newline for b in _LINE_BREAK.findall(code)):
            return None
        return _minimal_edit(start, old, code)

    def remove_arg(self, call: cst.Call, arg: cst.Arg) -> Optional[Edit]:
        """An edit that drops *arg* from *call*: the call without it (:func:`without_arg`),
        written by LibCST. None when a comment that belongs to another argument would go."""
        index = next((i for i, a in enumerate(call.args) if a is arg), None)
        new = without_arg(call, index) if index is not None else None
        return self.replace_with_node(call, new) if new is not None else None

    def remove_statement(self, small: cst.BaseSmallStatement) -> Optional[Edit]:
        """An edit that drops the simple statement *small*: from a line of several (``a; b``),
        its part only; a line of its own goes whole, with the comment that ends it (the comment
        lines above it stay); ``pass`` takes its place when it is alone in its block (after
        ``if c:`` on the same line, too, where the line and its comment stay)."""
        path = _path_to(self.module, small)
        if path is None or len(path) < 3:
            return None
        line, parent = path[-2], path[-3]
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return None
        index = next((i for i, s in enumerate(line.body) if s is small), None)
        if index is None:
            return None
        new: Optional[cst.CSTNode]
        if len(line.body) > 1:
            new = line.with_changes(body=without_statement(line.body, index))
        elif isinstance(line, cst.SimpleStatementSuite):
            new = line.with_changes(body=(cst.Pass(),))
        elif isinstance(parent, cst.IndentedBlock) and len(parent.body) == 1:
            new = cst.SimpleStatementLine((cst.Pass(),))
        else:
            new = None
        return self.replace_with_node(line, new)

    def import_edits(self, module: str, name: str) -> Optional[Tuple[Edit, ...]]:
        """The edits that add ``from <module> import <name>`` where LibCST's ``AddImportsVisitor``
        puts it (libcst 1.9.0, ``codemod/visitors/_add_imports.py``; a test compares the two):
        the imports that open the module (after its docstring or ``__strict__``, each on a line
        of its own) are its import block; the name joins the block's first ``from <module>
        import ...``, or a new statement follows the block, with an empty line before the
        next statement unless one is there. () when the block imports the name (or ``*``) from
        *module* already; None when LibCST does not write the text it changes as the file
        has it. The nodes are LibCST's, written by LibCST; the visitor itself is not run
        (importing it loads ``libcst.matchers``: docs/benchmarks.md, "Figures behind the
        engine's comments")."""
        body = self.module.body
        k = 1 if body and _docstring_or_strict(body[0]) else 0
        merge_into = None
        while k < len(body) and _import_line(body[k]):
            imp = body[k].body[0]
            if isinstance(imp, cst.ImportFrom) and not imp.relative and imp.module is not None \
                    and cst.helpers.get_full_name_for_node(imp.module) == module:
                if isinstance(imp.names, cst.ImportStar) or any(
                        a.asname is None and cst.helpers.get_full_name_for_node(a.name) == name for a in imp.names):
                    return ()
                if merge_into is None:
                    merge_into = body[k]
            k += 1
        alias = cst.ImportAlias(cst.Name(name))
        if merge_into is not None:
            imp = merge_into.body[0]
            edit = self.replace_with_node(merge_into, merge_into.with_changes(
                body=(imp.with_changes(names=(alias, *imp.names)),)))
            return None if edit is None else (edit,)
        line = cst.SimpleStatementLine((cst.ImportFrom(module=_dotted(module), names=(alias,)),))
        if k == len(body):  # the module is its import block: the statement goes last
            old, new = self.module.code, self.module.with_changes(body=(*body, line)).code
            if old != self.text:
                return None
        else:  # before the next statement's comment lines, which LibCST keeps with it
            render = self.module.code_for_node
            old = "".join(render(n) for n in (*self.module.header, *body[:k]))
            lead = body[k].leading_lines
            blank = (cst.EmptyLine(),) if not lead or lead[0].comment is not None else ()
            new = old + "".join(render(n) for n in (line, *blank))
            if not self.text.startswith(old):
                return None
        return (_minimal_edit((1, 1), old, new),)

    def analysis(self, cls: type):
        """The file's instance of the shared analysis *cls* (a rule names it in ``uses``)."""
        return self.analyses[cls]

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


def _path_to(module: cst.Module, target: cst.CSTNode) -> Optional[List[cst.CSTNode]]:
    """The nodes from *module* down to *target* (found by identity), both included, or None."""
    finder = _PathFinder(target)
    module.visit(finder)
    return finder.found or None


class _PathFinder(cst.CSTVisitor):
    """The path to one node (:func:`_path_to`). A module-level class with its state on the
    instance: a class made per call, with closures over the path, is a cycle that kept the
    file's tree until a full collection."""

    def __init__(self, target: cst.CSTNode):
        super().__init__()
        self.target = target
        self.stack: List[cst.CSTNode] = []
        self.found: List[cst.CSTNode] = []

    def on_visit(self, node) -> bool:
        self.stack.append(node)
        if node is self.target:
            self.found.extend(self.stack)
        return not self.found

    def on_leave(self, original_node) -> None:
        self.stack.pop()


def render_in_block(module: cst.Module, node: cst.CSTNode, indent: str) -> Optional[str]:
    """*node*'s code as LibCST writes it in a block indented by *indent* (which starts the
    continuation lines LibCST indents with the block, and a statement's line): a statement
    with its indentation and line break, a suite as it follows its colon."""
    if not indent:
        return module.code_for_node(node)
    nl = module.default_newline
    if isinstance(node, cst.BaseStatement):
        wrapped, head, tail = node, nl, ""
    elif isinstance(node, cst.BaseSuite):
        wrapped, head, tail = cst.If(test=cst.Name("_"), body=node), nl + indent + "if _:", ""
    else:
        wrapped, head, tail = cst.SimpleStatementLine((cst.Expr(node),)), nl + indent, nl
    code = module.code_for_node(cst.IndentedBlock(body=(wrapped,), indent=indent))
    if not (code.startswith(head) and code.endswith(tail)):  # pragma: no cover - another LibCST
        return None
    return code[len(head):len(code) - len(tail)]


def _bare(node: cst.CSTNode) -> cst.CSTNode:
    """*node* without what its span leaves out (its place keeps it): a statement line's comment
    lines above it, a suite's whitespace after its colon, an expression's parentheses."""
    if isinstance(node, cst.SimpleStatementLine):
        return node.with_changes(leading_lines=())
    if isinstance(node, cst.SimpleStatementSuite):
        return node.with_changes(leading_whitespace=cst.SimpleWhitespace(""))
    return node.with_changes(lpar=(), rpar=())


def _minimal_edit(start: Tuple[int, int], old: str, code: str) -> Edit:
    """The edit that turns *old*, written from the position *start*, into *code*: it leaves out
    the start and the end the two share (never splitting a ``\\r\\n``)."""
    p, n = 0, min(len(old), len(code))
    while p < n and old[p] == code[p]:
        p += 1
    q = 0
    while q < n - p and old[-1 - q] == code[-1 - q]:
        q += 1
    if 0 < p < len(old) and old[p - 1:p + 1] == "\r\n":
        p -= 1  # not between the two characters of a line break
    if 0 < q < len(old) and old[-1 - q:len(old) - q + 1] == "\r\n":
        q -= 1
    (a, b), (c, d) = _advance(start, old[:p]), _advance(start, old[:len(old) - q])
    return Edit(a, b, c, d, code[p:len(code) - q])


def _docstring_or_strict(stmt: cst.BaseStatement) -> bool:
    """*stmt* is a module's first statement that its imports follow (``AddImportsVisitor``'s
    ``_skip_first``): a docstring (one plain string) or a ``__strict__`` assignment."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return False
    small = stmt.body[0]
    if isinstance(small, cst.Expr):
        return isinstance(small.value, cst.SimpleString)
    return isinstance(small, cst.Assign) and len(small.targets) == 1 \
        and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == "__strict__"


def _import_line(stmt: cst.BaseStatement) -> bool:
    """*stmt* is a line of one import statement (of a module's import block)."""
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
        and isinstance(stmt.body[0], (cst.Import, cst.ImportFrom))


def _dotted(name: str) -> cst.BaseExpression:
    """The node of the dotted name *name* (``a.b.c``)."""
    parts = name.split(".")
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(node, cst.Name(part))
    return node


def _advance(at: Tuple[int, int], text: str) -> Tuple[int, int]:
    """The position (line, column) after *text* written from the position *at*."""
    breaks = _LINE_BREAK.findall(text)
    if not breaks:
        return at[0], at[1] + len(text)
    return at[0] + len(breaks), len(_LINE_BREAK.split(text)[-1]) + 1


def _no_line_break(code: str) -> str:
    return code[:-2] if code.endswith("\r\n") else code[:-1] if code.endswith(("\n", "\r")) else code


def _has_comment(space: cst.BaseParenthesizableWhitespace) -> bool:
    return isinstance(space, cst.ParenthesizedWhitespace) and (
        space.first_line.comment is not None or any(e.comment is not None for e in space.empty_lines))


def _join(before: cst.BaseParenthesizableWhitespace, after: cst.BaseParenthesizableWhitespace,
          at_bracket: bool = False) -> cst.BaseParenthesizableWhitespace:
    """The whitespace that takes the place of *before*, an element of a list that goes, and
    *after* (the whitespace after the element's comma, or before the closing bracket). An element on lines of its own goes
    with them and with the comment that ends its last line; the comment lines above and below
    it stay, and the next element keeps its indentation. An element that shares its line with
    the one before it leaves that line, and the line break after it stays (the next element
    keeps its line); but right after the opening bracket (*at_bracket*) the next element moves
    up, unless that line break carries a comment."""
    if isinstance(after, cst.ParenthesizedWhitespace):
        if isinstance(before, cst.ParenthesizedWhitespace):
            return after.with_changes(first_line=before.first_line, empty_lines=[*before.empty_lines, *after.empty_lines])
        if not at_bracket or _has_comment(after):
            return after
    return before


def without_arg(call: cst.Call, index: int) -> Optional[cst.Call]:
    """*call* without its argument at *index*; the other arguments' nodes, whitespace and
    comments kept (:func:`_join`). The last argument goes with the comma before it (the
    call's trailing comma, if any, stays), or, on lines of its own up to the closing bracket,
    with its lines. None when that comma is followed by a comment (``f(a,  # on a`` then
    ``b)``): it would have to move."""
    args = list(call.args)
    arg = args.pop(index)
    comma = arg.comma
    if index < len(args):  # arguments follow: it goes with its comma
        after = comma.whitespace_after if isinstance(comma, cst.Comma) else cst.SimpleWhitespace("")
        if index == 0:
            return call.with_changes(args=args, whitespace_before_args=_join(call.whitespace_before_args, after, True))
        prev = args[index - 1]
        args[index - 1] = prev.with_changes(comma=prev.comma.with_changes(
            whitespace_after=_join(prev.comma.whitespace_after, after)))
        return call.with_changes(args=args)
    closing = comma.whitespace_after if isinstance(comma, cst.Comma) else arg.whitespace_after_arg
    if not args:  # the only one: ``f()``, unless a comment stays inside the brackets
        space = _join(call.whitespace_before_args, closing, True)
        return call.with_changes(args=(), whitespace_before_args=space if _has_comment(space)
                                 else cst.SimpleWhitespace(""))
    prev = args[-1]
    before = prev.comma.whitespace_after
    if isinstance(before, cst.ParenthesizedWhitespace) and isinstance(closing, cst.ParenthesizedWhitespace):
        args[-1] = prev.with_changes(comma=prev.comma.with_changes(whitespace_after=_join(before, closing)))
    elif _has_comment(before):
        return None
    else:
        args[-1] = prev.with_changes(whitespace_after_arg=arg.whitespace_after_arg, comma=comma)
    return call.with_changes(args=args)


def without_statement(body: Sequence[cst.BaseSmallStatement], index: int) -> List[cst.BaseSmallStatement]:
    """The small statements of a line (``a; b``) without the one at *index*: it goes with its
    semicolon; the last one with the semicolon before it (the line's trailing one stays)."""
    out = list(body)
    small = out.pop(index)
    if index == len(out) and out:
        out[-1] = out[-1].with_changes(semicolon=small.semicolon)
    return out


_UNSET = object()


def _pair(stmts, ast_entries):
    """*ast_entries* (CPython statements) regrouped one per LibCST statement of *stmts*, or None."""
    out = []
    i = 0
    for stmt in stmts:
        if i >= len(ast_entries):
            return None
        out.append(ast_entries[i])
        i += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
    return out if i == len(ast_entries) else None


def _statement_positions(module: cst.Module, stmt: cst.CSTNode, line: int,
                         indent: Optional[str]) -> Optional[Tuple[Any, int]]:
    """The positions of *stmt*'s nodes, generated for the statement alone (so its first line
    is line 1), and what to add to their lines: CPython's *line* of the statement's first
    token, less the line LibCST gives that token here. Columns come out right: a top-level
    statement starts at column 0, and a class's statement after its block's *indent*."""
    try:
        from libcst.metadata.position_provider import PositionProvidingCodegenState
    except ImportError:  # pragma: no cover - another LibCST
        return None
    provider = PositionProvider()
    provider._computed = {}
    state = PositionProvidingCodegenState(default_indent=module.default_indent,
                                          default_newline=module.default_newline, provider=provider)
    if indent is not None:
        state.increase_indent(indent)
    stmt._codegen(state)
    anchor = provider._computed.get(stmt)
    if anchor is None:  # pragma: no cover
        return None
    return provider._computed, line - anchor.start.line


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# ``sys.modules`` (also across a line break or a backslash continuation); Semantic.stubbed and
# namespace_changed read only that spelling of it
_SYS_MODULES = re.compile(r"\bsys[\s\\]*\.[\s\\]*modules\b")
# calls of the builtins that reach a module's namespace as a dict (not ``executor``, ``env_vars``,
# a string's "ge.exec.dumpPath")
_NAMESPACE_WORDS = re.compile(r"\b(?:globals|vars|locals|exec)\s*\(")


def _node_lines(stmt: cst.CSTNode) -> Optional[Dict[cst.CSTNode, int]]:
    """Per node of *stmt* (a statement), the line it starts on counting from 0 at the
    statement's first line of code generation, as LibCST's ``PositionProvider`` places it:
    a statement after its leading empty lines (and a def or class after its decorators), an
    expression inside its parentheses, any other node at its first token. The line breaks
    of a tree are its ``Newline`` tokens and those inside whitespace (backslash
    continuations), strings and f-string text. None where a node's fields cannot be read."""
    out: Dict[cst.CSTNode, int] = {}
    breaks = 0
    stack: List[Any] = [stmt]
    pop = stack.pop
    newline, whitespace = cst.Newline, cst.SimpleWhitespace
    while stack:
        item = pop()
        cls = type(item)
        if cls is tuple:  # (node,): its position starts here
            out[item[0]] = breaks
            continue
        if cls is newline:
            breaks += 1
            continue
        if cls is str or cls is whitespace:  # a token's text (a string's), or whitespace
            text = item if cls is str else item.value
            if "\n" in text or "\r" in text:
                breaks += len(_LINE_BREAK.findall(text))
            continue
        order = _CODEGEN_ORDER.get(cls)
        if order is None:
            order = _codegen_order(cls)
            if order is None:
                return None
        names, start = order
        if start is None and cls not in _UNPLACED and cls not in _INERT:
            out[item] = breaks
        children: List[Any] = []
        for name in names:
            if name == start:
                children.append((item,))
            if name == "<text>":
                children.append(item.value)
                continue
            value = getattr(item, name)
            vt = type(value)
            if vt is tuple or vt is list:
                children.extend(value)
            else:
                node = _IS_NODE.get(vt)
                if node is None:  # CSTNode is an ABC: isinstance is slow, so once per type
                    node = _IS_NODE[vt] = isinstance(value, cst.CSTNode)
                if node:
                    children.append(value)
        children.reverse()
        stack.extend(children)
    return out


_IS_NODE: Dict[type, bool] = {}
# Fields before a node's first token that its position leaves out: a statement's (or
# clause's) leading empty lines, a def's or class's decorators, an expression's parentheses.
_BEFORE_START = ("leading_lines", "decorators", "lines_after_decorators", "lpar")
# Per node class: its fields in code generation order ("<text>": the token text of a string)
# and the field its position starts at (None: where the node starts)
_CODEGEN_ORDER: Dict[type, Optional[Tuple[Tuple[str, ...], Optional[str]]]] = {}
# Where LibCST's visiting order is not its code generation order, or its position starts
# later than the rules above say
_ORDER_OVERRIDES: Dict[type, Tuple[str, ...]] = {
    cst.AsName: ("whitespace_before_as", "whitespace_after_as", "name"),
    cst.SimpleString: ("lpar", "<text>", "rpar"),
    cst.FormattedStringText: ("<text>",),
}
_START_OVERRIDES: Dict[type, str] = {cst.Annotation: "annotation"}
# Nodes whose position starts elsewhere still and that no rule asks the line of: a block
# (after the line that opens it); operators and punctuation (after the whitespace before
# them) are the walk's inert nodes and are left out too
_UNPLACED = frozenset({cst.IndentedBlock})


def _codegen_order(cls: type):
    names = _ORDER_OVERRIDES.get(cls)
    if names is None:
        order = _field_order(cls)
        if order is False:
            _CODEGEN_ORDER[cls] = None
            return None
        names = tuple(name for name, _ in order)
    start = _START_OVERRIDES.get(cls)
    if start is None:
        k = 0
        while k < len(names) and names[k] in _BEFORE_START:
            k += 1
        start = names[k] if 0 < k < len(names) else None
    if cls in _INERT:
        start = None  # never placed (see _UNPLACED)
    result = _CODEGEN_ORDER[cls] = (names, start)
    return result


def _positions(module: cst.Module):
    """Every node's position. ``MetadataWrapper.resolve`` runs the provider's code generation
    and then, for the batchable providers of which there are none here, a full (node
    rebuilding) visit of the tree, which nothing here needs (docs/benchmarks.md, "Figures
    behind the engine's comments"). The provider alone does the first."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    gen = getattr(PositionProvider, "_gen", None)
    if gen is None or PositionProvider.METADATA_DEPENDENCIES:  # pragma: no cover - another LibCST
        return wrapper.resolve(PositionProvider)
    return PositionProvider()._gen(wrapper)


class ShellContext:
    """The context of a checker whose ``language`` is shell: the file's text and ``script``, the
    script as the engine read it once (:class:`npulint.shell.Script`: its launch commands), no
    tree. A shell checker does its work in ``finish()`` and reports at spans. The engine runs
    shell checkers only on a script it could read: one it cannot is the engine's finding
    (NPU001, NPU004, NPU005: ``npulint.analyse._lint_other``)."""

    def __init__(self, path: str, display: str, text: str, settings, enabled: Set[str], script: "Script"):
        self.path = path
        self.display = display
        self.text = text
        self.settings = settings
        self.enabled = enabled
        self.script: Optional["Script"] = script
        self.findings: List[Finding] = []
        self.facts: Dict[str, List[Any]] = {}
        self.analyses: Dict[type, Any] = {}  # the file's shared analyses (see analysis())

    def wants(self, code: str) -> bool:
        return code in self.enabled

    def report(self, code: str, span: Span, message: str, related: Sequence[Tuple[str, int, int]] = (),
               fix: Optional[Fix] = None, noqa_lines: Tuple[int, ...] = ()) -> None:
        """*noqa_lines*: lines of ``# noqa`` comments that apply to this finding besides its
        own line (a comment line above the command it belongs to)."""
        if code in self.enabled:
            self.findings.append(Finding(self.display, span.line, span.column, code, message, span.end_line,
                                         span.end_column, tuple(related), fix, tuple(noqa_lines)))

    def analysis(self, cls: type):
        return self.analyses[cls]

    def fact(self, topic, fact: Any) -> None:
        key = topic if isinstance(topic, str) else topic.__name__
        self.facts.setdefault(key, []).append(fact)

    def release(self) -> None:
        self.analyses = {}
        self.script = None


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
