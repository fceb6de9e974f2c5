"""The ``--flags`` a Python module registers with ``argparse`` (``add_argument`` calls), and
whether a module parses its own command line; read from the source, never run.

Standard library only, and nothing else of npulint: ``tools/gen_known_flags.py`` imports it
to build the shipped known-flag list from upstream sources, and NPU502 uses it on the linted
files. Option strings are read where they are statically certain: string literals, names
bound to them (module or function constants, ``for`` loops over literal sequences),
f-strings, ``+``/``%``/``.format``/``.replace`` of those, ``*names`` of a literal sequence.
Every ``--x`` of a call is kept (aliases: ``add_argument("--a", "--b")``), and the ``--no-x``
that ``argparse.BooleanOptionalAction`` adds. Erring towards more flags is safe: a flag too
many only hides a typo of it.
"""

from __future__ import annotations

import ast
import itertools
import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

METHOD = "add_argument"
_MAX_VALUES = 256  # possible strings of one expression, beyond which it counts as unknown
_MAX_DEPTH = 12

# Modules through which a script reaches Megatron's argument parser (or MindSpeed's, which
# wraps it): Megatron except megatron.core (the model library has no command-line parser),
# and MindSpeed and the frameworks built on it (their entry points call initialize_megatron).
_MEGATRON_TOPS = {"megatron", "mindspeed", "mindspeed_llm", "mindspeed_mm", "mindspeed_rl", "modellink",
                  "ascendspeed"}


_FLAG = re.compile(r"--[^-\s]\S*")


def is_flag(s: str) -> bool:
    """A long option as a command line writes it (``--x``; not ``---x``, no whitespace)."""
    return _FLAG.fullmatch(s) is not None


# ---------------------------------------------------------------------------------- values


class _Scopes:
    """Where each name of a module is bound, per function (or the module): enough to resolve
    a name to the string constants it may hold."""

    def __init__(self, tree: ast.AST):
        self.parent: Dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        self.tree = tree
        self._bindings: Dict[ast.AST, Dict[str, List[tuple]]] = {}
        self._class_attrs: Optional[Dict[str, List[ast.expr]]] = None

    def scope_of(self, node: ast.AST) -> ast.AST:
        p = self.parent.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
            p = self.parent.get(p)
        return p if p is not None else self.tree

    def enclosing(self, scope: ast.AST) -> Optional[ast.AST]:
        if isinstance(scope, ast.Module):
            return None
        return self.scope_of(scope)

    def bindings(self, scope: ast.AST) -> Dict[str, List[tuple]]:
        """name -> [("value", expr) | ("each", iterable expr) | ("unknown",)] in *scope*
        (not in the functions and classes nested in it)."""
        found = self._bindings.get(scope)
        if found is not None:
            return found
        out: Dict[str, List[tuple]] = {}

        def bind(target, how):
            if isinstance(target, ast.Name):
                out.setdefault(target.id, []).append(how)
            elif isinstance(target, (ast.Tuple, ast.List)):
                for el in target.elts:  # unpacking: not followed
                    bind(el.value if isinstance(el, ast.Starred) else el, ("unknown",))

        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = scope.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
                if arg is not None:
                    out.setdefault(arg.arg, []).append(("unknown",))
        body = scope.body if isinstance(scope.body, list) else [scope.body]
        stack = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.setdefault(node.name, []).append(("unknown",))
                continue
            if isinstance(node, ast.Lambda):
                continue
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    bind(t, ("value", node.value))
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                bind(node.target, ("value", node.value))
            elif isinstance(node, ast.AugAssign):
                bind(node.target, ("unknown",))
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                bind(node.target, ("each", node.iter))
            elif isinstance(node, ast.NamedExpr):
                bind(node.target, ("value", node.value))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    out.setdefault((alias.asname or alias.name).split(".")[0], []).append(("unknown",))
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        bind(item.optional_vars, ("unknown",))
            elif isinstance(node, ast.ExceptHandler) and node.name:
                out.setdefault(node.name, []).append(("unknown",))
            stack.extend(ast.iter_child_nodes(node))
        self._bindings[scope] = out
        return out

    def class_attrs(self) -> Dict[str, List[ast.expr]]:
        """Attribute name -> values assigned to it in any class body of the module (for
        ``self.X``/``Cls.X``: every class's, which may include too many, never too few)."""
        if self._class_attrs is None:
            out: Dict[str, List[ast.expr]] = {}
            for node in ast.walk(self.tree):
                if isinstance(node, ast.ClassDef):
                    for stmt in node.body:
                        if isinstance(stmt, ast.Assign):
                            for t in stmt.targets:
                                if isinstance(t, ast.Name):
                                    out.setdefault(t.id, []).append(stmt.value)
                        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(
                                stmt.target, ast.Name):
                            out.setdefault(stmt.target.id, []).append(stmt.value)
            self._class_attrs = out
        return self._class_attrs


class _Resolver:
    """Strings an expression may evaluate to: a set, or None when that is not certain."""

    def __init__(self, scopes: Optional[_Scopes]):
        self.scopes = scopes  # None: literals only

    def strings(self, expr: ast.expr, depth: int = 0) -> Optional[Set[str]]:
        if depth > _MAX_DEPTH:
            return None
        t = type(expr)
        if t is ast.Constant:
            return {expr.value} if isinstance(expr.value, str) else None
        if t is ast.JoinedStr:
            parts = []
            for v in expr.values:
                if type(v) is ast.Constant and isinstance(v.value, str):
                    parts.append({v.value})
                elif type(v) is ast.FormattedValue and v.conversion in (-1, 115) and v.format_spec is None:
                    s = self.strings(v.value, depth + 1)
                    if s is None:
                        return None
                    parts.append(s)
                else:
                    return None
            return self._product(parts)
        if t is ast.BinOp and type(expr.op) is ast.Add:
            a, b = self.strings(expr.left, depth + 1), self.strings(expr.right, depth + 1)
            return None if a is None or b is None else self._product([a, b])
        if t is ast.BinOp and type(expr.op) is ast.Mod:
            fmts = self.strings(expr.left, depth + 1)
            if fmts is None:
                return None
            if type(expr.right) is ast.Tuple:
                items = [self.strings(e, depth + 1) for e in expr.right.elts]
            else:
                items = [self.strings(expr.right, depth + 1)]
            if any(i is None for i in items):
                return None
            out = set()
            for fmt in fmts:
                for combo in itertools.product(*items):
                    try:
                        out.add(fmt % combo)
                    except (TypeError, ValueError):
                        return None
            return out if len(out) <= _MAX_VALUES else None
        if t is ast.Call and type(expr.func) is ast.Attribute:
            return self._method(expr, depth)
        if t is ast.Name:
            return self._name(expr, depth)
        if t is ast.Attribute and self.scopes is not None:
            values = self.scopes.class_attrs().get(expr.attr)
            if not values:
                return None
            return self._union([self.strings(v, depth + 1) for v in values])
        if t is ast.IfExp:
            return self._union([self.strings(expr.body, depth + 1), self.strings(expr.orelse, depth + 1)])
        return None

    def _method(self, expr: ast.Call, depth: int) -> Optional[Set[str]]:
        name = expr.func.attr
        if name not in ("replace", "lower", "upper", "strip", "format") or any(
                type(a) is ast.Starred for a in expr.args):
            return None
        recv = self.strings(expr.func.value, depth + 1)
        if recv is None:
            return None
        args = [self.strings(a, depth + 1) for a in expr.args]
        kwargs = {k.arg: self.strings(k.value, depth + 1) for k in expr.keywords}
        if any(a is None for a in args) or None in kwargs or any(v is None for v in kwargs.values()):
            return None
        out = set()
        keys = list(kwargs)
        for r in recv:
            for combo in itertools.product(*args, *(kwargs[k] for k in keys)):
                pos, kw = combo[:len(args)], dict(zip(keys, combo[len(args):]))
                try:
                    out.add(getattr(r, name)(*pos, **kw))
                except (TypeError, ValueError, IndexError, KeyError, AttributeError):
                    return None
                if len(out) > _MAX_VALUES:
                    return None
        return out

    def _name(self, expr: ast.Name, depth: int) -> Optional[Set[str]]:
        if self.scopes is None:
            return None
        scope = self.scopes.scope_of(expr)
        while scope is not None:
            hows = self.scopes.bindings(scope).get(expr.id)
            if hows:
                out: List[Optional[Set[str]]] = []
                for how in hows:
                    if how[0] == "value":
                        out.append(self.strings(how[1], depth + 1))
                    elif how[0] == "each":
                        seq = self.sequence(how[1], depth + 1)
                        out.append(None if seq is None else self._union(seq))
                    else:
                        out.append(None)
                return self._union(out)
            scope = self.scopes.enclosing(scope)
        return None

    def sequence(self, expr: ast.expr, depth: int = 0) -> Optional[List[Set[str]]]:
        """The elements of a literal sequence of strings (or of a dict's keys)."""
        if depth > _MAX_DEPTH:
            return None
        t = type(expr)
        if t in (ast.List, ast.Tuple, ast.Set):
            out = []
            for el in expr.elts:
                if type(el) is ast.Starred:
                    inner = self.sequence(el.value, depth + 1)
                    if inner is None:
                        return None
                    out.extend(inner)
                    continue
                s = self.strings(el, depth + 1)
                if s is None:
                    return None
                out.append(s)
            return out
        if t is ast.Dict:
            keys = [self.strings(k, depth + 1) if k is not None else None for k in expr.keys]
            return None if any(k is None for k in keys) else keys
        if t is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "keys" and not expr.args:
            return self.sequence(expr.func.value, depth + 1)
        if t is ast.Name and self.scopes is not None:
            scope = self.scopes.scope_of(expr)
            while scope is not None:
                hows = self.scopes.bindings(scope).get(expr.id)
                if hows:
                    out = []
                    for how in hows:
                        seq = self.sequence(how[1], depth + 1) if how[0] == "value" else None
                        if seq is None:
                            return None
                        out.extend(seq)
                    return out
                scope = self.scopes.enclosing(scope)
        return None

    @staticmethod
    def _product(parts: List[Set[str]]) -> Optional[Set[str]]:
        out = {""}
        for p in parts:
            out = {a + b for a in out for b in p}
            if len(out) > _MAX_VALUES:
                return None
        return out

    @staticmethod
    def _union(sets: Iterable[Optional[Set[str]]]) -> Optional[Set[str]]:
        out: Set[str] = set()
        for s in sets:
            if s is None:
                return None
            out |= s
        return out if len(out) <= _MAX_VALUES else None


# ----------------------------------------------------------------------------- add_argument


def _is_add_argument(node: ast.AST) -> bool:
    if type(node) is not ast.Call:
        return False
    f = node.func
    return (type(f) is ast.Attribute and f.attr == METHOD) or (type(f) is ast.Name and f.id == METHOD)


def call_flags(call: ast.Call, resolver: _Resolver) -> Tuple[Set[str], bool]:
    """The ``--flags`` one ``add_argument`` call registers, and whether every option string
    of it was certain."""
    out: Set[str] = set()
    complete = True
    for arg in call.args:
        if type(arg) is ast.Starred:
            seq = resolver.sequence(arg.value)
            if seq is None:
                complete = False
                continue
            for s in seq:
                out |= s
            continue
        s = resolver.strings(arg)
        if s is None:
            complete = False
            continue
        out |= s
    if not call.args:
        complete = False  # add_argument(*x) or (**kwargs): options out of sight
    flags = {s for s in out if is_flag(s)}
    for kw in call.keywords:
        if kw.arg == "action":
            v = kw.value
            name = v.attr if type(v) is ast.Attribute else (v.id if type(v) is ast.Name else "")
            if name == "BooleanOptionalAction":
                flags |= {"--no-" + f[2:] for f in flags}
    return flags, complete


def flags_in_tree(tree: ast.AST) -> Tuple[Dict[str, int], List[int]]:
    """``({flag: first line}, [lines of add_argument calls whose options are not all certain])``."""
    resolver = _Resolver(_Scopes(tree))
    found: Dict[str, int] = {}
    uncertain: List[int] = []
    for node in ast.walk(tree):
        if _is_add_argument(node):
            flags, complete = call_flags(node, resolver)
            for f in flags:
                if f not in found or node.lineno < found[f]:
                    found[f] = node.lineno
            if not complete:
                uncertain.append(node.lineno)
    return found, sorted(uncertain)


_CALL = re.compile(r"add_argument\s*\(")


def _calls(text: str):
    """The ``add_argument(`` of *text* (as a whole word), as matches of _CALL, and their lines."""
    line, pos = 1, 0
    i = text.find(METHOD)
    while i >= 0:
        m = _CALL.match(text, i)
        if m is not None and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            line += text.count("\n", pos, i)
            pos = i
            yield line, m
        i = text.find(METHOD, i + len(METHOD))


def _call_end(text: str, i: int) -> int:
    """The index just after the ``)`` that closes the ``(`` at *i*, skipping strings and
    comments; -1 when there is none."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "#":
            j = text.find("\n", i)
            if j < 0:
                return -1
            i = j
        elif c in "'\"":
            q = text[i:i + 3] if text[i:i + 3] in ("'''", '"""') else c
            j = i + len(q)
            while True:
                k = text.find(q, j)
                if k < 0:
                    return -1
                back = 0
                while text[k - 1 - back] == "\\":
                    back += 1
                if back % 2 == 0:
                    break
                j = k + 1
            if len(q) == 1 and "\n" in text[i:k].replace("\\\r\n", "").replace("\\\n", ""):
                return -1  # not a string after all (a quote in something unusual): give up
            i = k + len(q)
            continue
        i += 1
    return -1


def calls_in_text(text: str):
    """``(line, call)`` for each ``add_argument(...)`` in *text*, each parsed alone (``call``
    is None where that fails, e.g. for syntax newer than the running Python's); used by
    ``tools/gen_known_flags.py``."""
    for line, m in _calls(text):
        yield line, _parse_call(text, m)


def _parse_call(text: str, m) -> Optional[ast.Call]:
    end = _call_end(text, m.end() - 1)
    if end < 0:
        return None
    try:
        call = ast.parse(text[m.start():end], mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return call if type(call) is ast.Call else None


# A call whose options are only literal strings, followed by ``)`` or by a keyword argument
# (most calls): read with this alone; any other is parsed.
_LITERAL_CALL = re.compile(r"""add_argument\s*\(\s*((?:[rRuU]?(['"])-[-\w.]*\2\s*,\s*)*[rRuU]?(['"])-[-\w.]*\3)"""
                           r"""\s*(?:\)|,\s*\w+\s*=[^=])""")
_LITERAL = re.compile(r"""(['"])(-[-\w.]*)\1""")


def flags_in_text(text: str, tree=None) -> Optional[Dict[str, int]]:
    """The flags a module's ``add_argument`` calls register, read cheaply: a call with only
    literal option strings is read with a regular expression, another is parsed alone; only
    when some call's options are not literals is the whole module read (*tree*, CPython's tree
    or a function that makes it, or parsed to
    resolve names, unless it is larger than WHOLE_MAX: then the literal ones are all). None
    when it does not compile."""
    found: Dict[str, int] = {}
    literal = _Resolver(None)
    boolean = "BooleanOptionalAction" in text  # its --no-x: every call parsed
    whole = False
    for line, m in _calls(text):
        fast = None if boolean else _LITERAL_CALL.match(text, m.start())
        if fast is not None:
            for _, flag in _LITERAL.findall(fast.group(1)):
                if is_flag(flag):
                    found.setdefault(flag, line)
            continue
        call = _parse_call(text, m)
        if call is None:
            whole = True
            continue
        flags, complete = call_flags(call, literal)
        whole = whole or not complete
        for f in flags:
            found.setdefault(f, line)
    if whole and (tree is not None or len(text) <= WHOLE_MAX):
        tree = (tree() if callable(tree) else tree) if tree is not None else parse(text)
        return None if tree is None else flags_in_tree(tree)[0]
    return found


# Larger files (mostly generated) are not parsed whole to resolve a name: as the engine's
# --max-file-size default.
WHOLE_MAX = 256 * 1024


def parse(text: str) -> Optional[ast.Module]:
    try:
        return compile(text, "<argflags>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


# ------------------------------------------------------------------------------ own parser


MEGATRON = "megatron"
OWN = "own"
UNKNOWN = "unknown"


def entry_parser(tree: ast.AST) -> Tuple[str, Optional[int]]:
    """Whose parser reads an entry script's command line, as far as the script itself shows:

    * ``("megatron", line)``: it imports Megatron (anything but ``megatron.core``, which has
      no command-line parser) or MindSpeed or a framework built on it, whose entry points run
      Megatron's parser (``initialize_megatron``, ``pretrain``); *line* is the first such
      import;
    * ``("own", line)``: otherwise, it parses its command line itself where that can be read:
      it calls ``X.parse_args(...)``/``X.parse_known_args(...)`` (any method whose name starts
      so, e.g. transformers' ``parse_args_into_dataclasses``) or is decorated with
      ``hydra.main``; *line* is the first;
    * ``("unknown", None)``: neither (another command-line library such as python-fire, click
      or tyro, a parser built by a helper it imports, or nothing visible at all).

    Helper modules it imports are not followed."""
    megatron_line = None
    parse_line = None
    for node in ast.walk(tree):
        t = type(node)
        if t is ast.Import:
            if any(_megatron_side(a.name) for a in node.names):
                megatron_line = node.lineno if megatron_line is None else min(megatron_line, node.lineno)
        elif t is ast.ImportFrom:
            if node.level == 0 and node.module and (
                    _megatron_side(node.module)
                    or (node.module == "megatron" and any(a.name != "core" for a in node.names))):
                megatron_line = node.lineno if megatron_line is None else min(megatron_line, node.lineno)
        elif t is ast.Call:
            f = node.func
            if type(f) is ast.Attribute and (f.attr.startswith("parse_args") or f.attr.startswith("parse_known_args")):
                parse_line = node.lineno if parse_line is None else min(parse_line, node.lineno)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef):
            for d in node.decorator_list:
                fn = d.func if type(d) is ast.Call else d
                if type(fn) is ast.Attribute and fn.attr == "main" and type(fn.value) is ast.Name \
                        and fn.value.id == "hydra":
                    parse_line = d.lineno if parse_line is None else min(parse_line, d.lineno)
    if megatron_line is not None:
        return MEGATRON, megatron_line
    if parse_line is not None:
        return OWN, parse_line
    return UNKNOWN, None


def own_parser(tree: ast.AST) -> Optional[int]:
    """The line where a module parses its own command line without Megatron, or None (see
    :func:`entry_parser`)."""
    kind, line = entry_parser(tree)
    return line if kind == OWN else None


def _megatron_side(module: str) -> bool:
    parts = module.split(".")
    if parts[0] not in _MEGATRON_TOPS:
        return False
    if parts[0] == "megatron":
        return len(parts) == 1 or parts[1] != "core"
    return True
