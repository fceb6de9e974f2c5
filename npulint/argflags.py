"""The ``--flags`` a Python module registers with ``argparse`` (``add_argument`` calls), and
whether a module parses its own command line; read from the source, never run.

Standard library only, and nothing else of npulint: ``tools/gen_known_flags.py`` imports it
to build the shipped known-flag list from upstream sources, and NPU502 uses it on the linted
files. Option strings are read where they are statically certain: string literals, names
bound to them (module or function constants, ``for`` loops over literal sequences, also
unpacking each item: ``for name, default in (("--a", 1), ...)``, ``for f, t in D.items()``,
``enumerate``/``zip`` of those; not over a sequence changed in place), the parameter of a
helper that only this module can call, from its calls here (``_add(group, "--x")``),
f-strings, ``+``/``%``/``.format``/``.replace`` of those, ``*names`` of a literal sequence.
Every ``--x`` of a call is kept (aliases: ``add_argument("--a", "--b")``), and the ``--no-x``
that ``argparse.BooleanOptionalAction`` adds. Erring towards more flags is safe: a flag too
many only hides a typo of it. An option string that is not certain is kept as a pattern of
what it may be (:func:`call_patterns`): a flag it may be is not known to be unknown.
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
MEGATRON_TOPS = {"megatron", "mindspeed", "mindspeed_llm", "mindspeed_mm", "mindspeed_rl", "modellink",
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
        self._index: Optional[Tuple[Dict[str, int], Dict[str, List[ast.Name]], Set[str], Set[str]]] = None

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
        """name -> [("value", expr) | ("each", iterable expr) | ("part", iterable expr, path)
        | ("param", function, name) | ("unknown",)] in *scope* (not in the functions and
        classes nested in it). ``part``: a name of a ``for`` target that unpacks each item
        (``for name, default in ...``), at *path*: ``((index, length), ...)`` into the item."""
        found = self._bindings.get(scope)
        if found is not None:
            return found
        out: Dict[str, List[tuple]] = {}

        def bind(target, how):
            if isinstance(target, ast.Name):
                out.setdefault(target.id, []).append(how)
            elif isinstance(target, (ast.Tuple, ast.List)):
                for el in target.elts:  # unpacking: followed by bind_parts where it can be
                    bind(el.value if isinstance(el, ast.Starred) else el, ("unknown",))

        def bind_parts(target, iterable, path=()):
            """The names of a ``for`` target: each element of each item of *iterable*."""
            if isinstance(target, ast.Name):
                out.setdefault(target.id, []).append(("each", iterable) if not path else ("part", iterable, path))
            elif isinstance(target, (ast.Tuple, ast.List)) and not any(
                    isinstance(el, ast.Starred) for el in target.elts):
                for i, el in enumerate(target.elts):
                    bind_parts(el, iterable, path + ((i, len(target.elts)),))
            else:
                bind(target, ("unknown",))

        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = scope.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                out.setdefault(arg.arg, []).append(("param", scope, arg.arg))
            for arg in (a.vararg, a.kwarg):
                if arg is not None:
                    out.setdefault(arg.arg, []).append(("unknown",))
        elif isinstance(scope, ast.Lambda):
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
                bind_parts(node.target, node.iter)
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

    # what a module does with its names, wherever they are: for the helpers whose parameters
    # are read from their call sites, and the sequences that may change after they are built
    _MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "__setitem__", "__iadd__",
                           "__ior__"})

    def index(self) -> Tuple[Dict[str, int], Dict[str, List[ast.Name]], Set[str], Set[str]]:
        """``(bindings, loads, mutated, strings)``: how many times each name is bound anywhere
        in the module (a def, a class, a parameter, an import, a target, ``global``/``nonlocal``
        counted too); the places each name is read; the names whose value may be changed in
        place (``x.append(...)``, ``x[k] = v``, ``del x[k]``...); every string constant."""
        if self._index is None:
            bound: Dict[str, int] = {}
            loads: Dict[str, List[ast.Name]] = {}
            mutated: Set[str] = set()
            strings: Set[str] = set()

            def count(name):
                bound[name] = bound.get(name, 0) + 1

            for node in ast.walk(self.tree):
                t = type(node)
                if t is ast.Name:
                    if type(node.ctx) is ast.Load:
                        loads.setdefault(node.id, []).append(node)
                    else:
                        count(node.id)
                elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                    count(node.name)
                elif t is ast.arg:
                    count(node.arg)
                elif t in (ast.Import, ast.ImportFrom):
                    for alias in node.names:
                        count((alias.asname or alias.name).split(".")[0])
                elif t in (ast.Global, ast.Nonlocal):
                    for name in node.names:
                        count(name)
                elif t is ast.ExceptHandler and node.name:
                    count(node.name)
                elif t is ast.Constant and isinstance(node.value, str):
                    strings.add(node.value)
                elif t is ast.Attribute and type(node.value) is ast.Name and node.attr in self._MUTATORS:
                    mutated.add(node.value.id)
                elif t is ast.Subscript and type(node.ctx) is not ast.Load and type(node.value) is ast.Name:
                    mutated.add(node.value.id)
                elif t is ast.AugAssign and type(node.target) is ast.Subscript and type(node.target.value) is ast.Name:
                    mutated.add(node.target.value.id)
            self._index = (bound, loads, mutated, strings)
        return self._index

    def call_sites(self, func: ast.AST) -> Optional[List[ast.Call]]:
        """The calls of *func* in the module, when they are all it can be called by: a plain
        function (not a method, not decorated) whose name the module binds once and reads only
        to call it, and which no other module can call: one nested in a function, or a
        module-level one whose name starts with ``_`` and is not named in a string (``__all__``,
        ``getattr``). None otherwise."""
        if type(func) is not ast.FunctionDef or func.decorator_list:
            return None
        p = self.parent.get(func)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
            if isinstance(p, ast.ClassDef):
                return None
            p = self.parent.get(p)
        bound, loads, _, strings = self.index()
        name = func.name
        if bound.get(name) != 1:
            return None
        if (p is None or isinstance(p, ast.Module)) and (not name.startswith("_") or name in strings):
            return None
        calls = []
        for use in loads.get(name, ()):
            call = self.parent.get(use)
            if type(call) is not ast.Call or call.func is not use:
                return None  # passed on, stored, ...: called where we cannot see
            calls.append(call)
        return calls


_NO = object()  # an item or part of one that is not read (see _Resolver._items)


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

    def _hows(self, expr: ast.Name) -> Optional[List[tuple]]:
        """The bindings of the name *expr* reads (its scope's, or an enclosing one's)."""
        if self.scopes is None:
            return None
        scope = self.scopes.scope_of(expr)
        while scope is not None:
            hows = self.scopes.bindings(scope).get(expr.id)
            if hows:
                return hows
            scope = self.scopes.enclosing(scope)
        return None

    def _name(self, expr: ast.Name, depth: int) -> Optional[Set[str]]:
        hows = self._hows(expr)
        if not hows:
            return None
        out: List[Optional[Set[str]]] = []
        for how in hows:
            kind = how[0]
            if kind == "value":
                out.append(self.strings(how[1], depth + 1))
            elif kind == "each":
                seq = self.sequence(how[1], depth + 1)
                out.append(None if seq is None else self._union(seq))
            elif kind == "part":
                items = self._items(how[1], depth + 1)
                parts = None if items is None else [self._part(i, how[2], depth + 1) for i in items]
                out.append(None if parts is None or any(p is _NO for p in parts) else self._union(
                    self.strings(p, depth + 1) for p in parts))
            elif kind == "param":
                values = self._param(how[1], how[2])
                out.append(None if values is None else self._union(self.strings(v, depth + 1) for v in values))
            else:
                out.append(None)
        return self._union(out)

    def _param(self, func: ast.FunctionDef, name: str) -> Optional[List[ast.expr]]:
        """What the parameter *name* of *func* is bound to at each of its calls (its default
        where a call leaves it out), when the calls in this module are all there are; None
        otherwise. A call that cannot bind (a TypeError) binds nothing."""
        calls = self.scopes.call_sites(func)
        if calls is None:
            return None
        a = func.args
        positional = [*a.posonlyargs, *a.args]
        names = [x.arg for x in positional]
        defaults = dict(zip(names[len(names) - len(a.defaults):], a.defaults))
        for arg, default in zip(a.kwonlyargs, a.kw_defaults):
            if default is not None:
                defaults[arg.arg] = default
        keywords_ok = {x.arg for x in (*a.args, *a.kwonlyargs)}
        out: List[ast.expr] = []
        for call in calls:
            if any(type(x) is ast.Starred for x in call.args) or any(k.arg is None for k in call.keywords):
                return None  # spread: not followed
            if len(call.args) > len(positional) and a.vararg is None:
                continue
            if any(k.arg not in keywords_ok for k in call.keywords) and a.kwarg is None:
                continue
            given = dict(zip(names, call.args))
            for k in call.keywords:
                if k.arg in keywords_ok:
                    given.setdefault(k.arg, k.value)
            value = given.get(name, defaults.get(name))
            if value is None:
                continue
            out.append(value)
        return out

    def _items(self, expr: ast.expr, depth: int) -> Optional[list]:
        """The items a ``for`` over *expr* yields, when *expr* is a literal collection (through
        the names bound to it, unless changed in place), a dict's ``keys()``/``values()``/
        ``items()``, or ``enumerate``/``zip``/``sorted``/``reversed``/``list``/``tuple``/``set``
        of such: each an expression, a tuple of items, or ``_NO`` (an item not read: an index)."""
        if depth > _MAX_DEPTH:
            return None
        t = type(expr)
        if t in (ast.List, ast.Tuple, ast.Set):
            out: list = []
            for el in expr.elts:
                if type(el) is ast.Starred:
                    inner = self._items(el.value, depth + 1)
                    if inner is None:
                        return None
                    out.extend(inner)
                elif type(el) in (ast.Tuple, ast.List) and not any(type(x) is ast.Starred for x in el.elts):
                    out.append(tuple(el.elts))
                else:
                    out.append(el)
            return out
        if t is ast.Dict:
            return None if any(k is None for k in expr.keys) else list(expr.keys)
        if t is ast.Call:
            f = expr.func
            if type(f) is ast.Attribute and f.attr in ("keys", "values", "items") and not expr.args \
                    and not expr.keywords:
                d = self._dict(f.value, depth + 1)
                if d is None:
                    return None
                if f.attr == "keys":
                    return list(d.keys)
                if f.attr == "values":
                    return list(d.values)
                return [tuple(kv) for kv in zip(d.keys, d.values)]
            if type(f) is ast.Name and self._builtin(f) and not any(
                    type(x) is ast.Starred for x in expr.args) and not any(k.arg is None for k in expr.keywords):
                if f.id in ("sorted", "reversed", "list", "tuple", "set") and len(expr.args) == 1 and (
                        f.id == "sorted" or not expr.keywords):
                    return self._items(expr.args[0], depth + 1)
                if f.id == "enumerate" and len(expr.args) == 1 and all(k.arg == "start" for k in expr.keywords):
                    inner = self._items(expr.args[0], depth + 1)
                    return None if inner is None else [(_NO, i) for i in inner]
                if f.id == "zip" and expr.args and not expr.keywords:
                    columns = [self._items(x, depth + 1) for x in expr.args]
                    if any(c is None for c in columns):
                        return None
                    return [tuple(row) for row in zip(*columns)]
            return None
        if t is ast.Name:
            if self.scopes is None or expr.id in self.scopes.index()[2]:
                return None
            hows = self._hows(expr)
            if not hows:
                return None
            out = []
            for how in hows:
                inner = self._items(how[1], depth + 1) if how[0] == "value" else None
                if inner is None:
                    return None
                out.extend(inner)
            return out
        return None

    def _dict(self, expr: ast.expr, depth: int) -> Optional[ast.Dict]:
        """The dict display *expr* is, or its name is bound to once (and not changed in place)."""
        if type(expr) is ast.Dict:
            return None if any(k is None for k in expr.keys) else expr
        if type(expr) is ast.Name and self.scopes is not None and expr.id not in self.scopes.index()[2] \
                and depth <= _MAX_DEPTH:
            hows = self._hows(expr)
            if hows and len(hows) == 1 and hows[0][0] == "value":
                return self._dict(hows[0][1], depth + 1)
        return None

    def _builtin(self, name: ast.Name) -> bool:
        """*name* is the builtin of that name: the module binds it nowhere."""
        return self.scopes is not None and name.id not in self.scopes.index()[0]

    def _part(self, item, path, depth: int):
        """The part of a ``for`` item at *path* (``((index, length), ...)``): an expression, or
        ``_NO`` when it is not certain (an item of another length would raise, a string would
        be unpacked into characters)."""
        for index, length in path:
            if type(item) is ast.Name and depth <= _MAX_DEPTH:
                hows = self._hows(item)
                if hows and len(hows) == 1 and hows[0][0] == "value" and type(hows[0][1]) in (ast.Tuple, ast.List):
                    item = hows[0][1]
            if type(item) in (ast.Tuple, ast.List) and not any(type(x) is ast.Starred for x in item.elts):
                item = tuple(item.elts)
            if not isinstance(item, tuple) or len(item) != length:
                return _NO
            item = item[index]
        return item

    def sequence(self, expr: ast.expr, depth: int = 0) -> Optional[List[Set[str]]]:
        """The strings of each item of a literal sequence (or of a dict's keys), as
        :meth:`_items` reads it."""
        items = self._items(expr, depth)
        if items is None:
            return None
        out = []
        for item in items:
            s = None if isinstance(item, tuple) or item is _NO else self.strings(item, depth + 1)
            if s is None:
                return None
            out.append(s)
        return out

    def pattern(self, expr: ast.expr, depth: int = 0) -> List[tuple]:
        """What an expression whose strings are not certain may be: patterns, each a tuple of
        literal parts and ``ANY`` (any text), from the parts that are certain (``"--" + name``:
        ``("--", ANY)``; ``f"--{base}.{attr}"``: ``("--", ANY, ".", ANY)``); ``[(ANY,)]`` when
        nothing is known."""
        anything = [(ANY,)]
        if depth > _MAX_DEPTH:
            return anything
        known = self.strings(expr, depth)
        if known is not None:
            return [(x,) for x in known]
        t = type(expr)
        if t is ast.JoinedStr:
            parts = []
            for v in expr.values:
                if type(v) is ast.Constant and isinstance(v.value, str):
                    parts.append([(v.value,)])
                elif type(v) is ast.FormattedValue and v.conversion in (-1, 115) and v.format_spec is None:
                    parts.append(self.pattern(v.value, depth + 1))
                else:
                    parts.append(anything)
            return _patterns_product(parts)
        if t is ast.BinOp and type(expr.op) is ast.Add:
            return _patterns_product([self.pattern(expr.left, depth + 1), self.pattern(expr.right, depth + 1)])
        if t is ast.IfExp:
            return _patterns_union([self.pattern(expr.body, depth + 1), self.pattern(expr.orelse, depth + 1)])
        if t is ast.Name:
            hows = self._hows(expr)
            if hows and all(h[0] == "value" for h in hows):
                return _patterns_union([self.pattern(h[1], depth + 1) for h in hows])
        return anything

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


ANY = None  # in a pattern: any text
_MAX_PATTERNS = 64


def _patterns_product(parts: List[List[tuple]]) -> List[tuple]:
    out: List[tuple] = [()]
    for alternatives in parts:
        out = [_joined(a + b) for a in out for b in alternatives]
        if len(out) > _MAX_PATTERNS:
            return [(ANY,)]
    return out


def _patterns_union(groups: List[List[tuple]]) -> List[tuple]:
    out: List[tuple] = []
    for g in groups:
        for p in g:
            if p not in out:
                out.append(p)
    return out if len(out) <= _MAX_PATTERNS else [(ANY,)]


def _joined(p: tuple) -> tuple:
    """Adjacent literal parts joined, adjacent ANYs made one."""
    out: list = []
    for part in p:
        if out and part is ANY and out[-1] is ANY:
            continue
        if out and part is not ANY and out[-1] is not ANY:
            out[-1] += part
            continue
        out.append(part)
    return tuple(out)


def pattern_regex(p: tuple) -> str:
    """A pattern as a regular expression (to match a whole string; ``.`` matching newlines)."""
    return "".join("(?s:.*)" if part is ANY else re.escape(part) for part in p)


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


def call_patterns(call: ast.Call, resolver: _Resolver) -> List[str]:
    """For an ``add_argument`` call whose option strings are not all certain: what the others
    may be, as regular expressions (:func:`pattern_regex`), the ``--no-x`` of
    ``BooleanOptionalAction`` too."""
    found: List[tuple] = []
    for arg in call.args:
        if type(arg) is ast.Starred:
            if resolver.sequence(arg.value) is None:
                found = _patterns_union([found, [(ANY,)]])
            continue
        if resolver.strings(arg) is None:
            found = _patterns_union([found, resolver.pattern(arg)])
    if not call.args:
        found = [(ANY,)]
    if any(kw.arg == "action" and (getattr(kw.value, "attr", None) or getattr(kw.value, "id", None))
           == "BooleanOptionalAction" for kw in call.keywords):
        found = _patterns_union([found, [("--no-" + p[0][2:],) + p[1:] for p in found
                                         if p and p[0] is not ANY and p[0].startswith("--")]])
    return sorted({pattern_regex(p) for p in found})


def call_choices(call: ast.Call, resolver: _Resolver) -> Optional[Tuple[str, ...]]:
    """The values an ``add_argument`` call certainly accepts, where that is certain, as text:
    the strings of its ``choices`` (a literal sequence, or a name bound to one), each item one
    certain string, with no ``type`` other than ``str``; or with ``type=int``, its integer
    literals (``"2"`` for ``2``: a value compares as the integer it spells). None when it has no
    ``choices`` (any value) or they are not certain (another conversion, such as ``float`` or
    ``str.lower``, changes what is compared)."""
    found = None
    kind = "str"
    for kw in call.keywords:
        if kw.arg is None:
            return None  # **kwargs: choices or a type may be in it
        if kw.arg == "type":
            kind = kw.value.id if type(kw.value) is ast.Name and kw.value.id in ("str", "int") else None
        if kw.arg == "choices":
            found = kw.value
    if found is None or kind is None:
        return None
    if kind == "int":
        items = resolver._items(found, 0)
        if items is None or not all(type(i) is ast.Constant and type(i.value) is int for i in items):
            return None
        return tuple(dict.fromkeys(str(i.value) for i in items))
    items = resolver.sequence(found)
    if items is None or any(len(s) != 1 for s in items):
        return None
    return tuple(dict.fromkeys(next(iter(s)) for s in items))


def choices_in_text(text: str, flags: Iterable[str], tree=None) -> List[Tuple[str, int, Optional[Tuple[str, ...]]]]:
    """``[(flag, line, choices)]``: each ``add_argument`` call of a module that registers one of
    *flags* (its option strings read as :func:`registrations` reads them), with
    :func:`call_choices`. Only a module whose text names one of *flags* is parsed (*tree*: as
    for :func:`read_text`); a flag assembled from parts there is not seen."""
    wanted = [f for f in flags if f in text]
    if not wanted:
        return []
    by_call = _choices_by_call(text, wanted)
    if by_call is not None:
        return by_call
    tree = (tree() if callable(tree) else tree) if tree is not None else parse(text)
    if tree is None:
        return []
    resolver = _Resolver(_Scopes(tree))
    out = []
    for node in ast.walk(tree):
        if _is_add_argument(node):
            registered, _ = call_flags(node, resolver)
            hits = [f for f in wanted if f in registered]
            if hits:
                values = call_choices(node, resolver)
                out.extend((f, node.lineno, values) for f in hits)
    return sorted(out, key=lambda x: (x[1], x[0]))


_RECEIVER = re.compile(r"[ \t]*[A-Za-z_][\w.]*\.\Z")


def _choices_by_call(text: str, wanted: List[str]) -> Optional[List[Tuple[str, int, Optional[Tuple[str, ...]]]]]:
    """What :func:`choices_in_text` finds, read call by call (each call that registers a wanted
    flag parsed alone), where that gives what the module's tree would: every ``add_argument``
    call's options are literal strings (:data:`_LITERAL_CALL`), its receiver starts on the call's
    line, and a registration's choices are literal or absent; else None."""
    literal = _Resolver(None)
    out = []
    for line, m in _calls(text):
        fast = _LITERAL_CALL.match(text, m.start())
        if fast is None:
            return None  # options the module's names decide
        hits = [f for f in wanted if f in {flag for _, flag in _LITERAL.findall(fast.group(1)) if is_flag(flag)}]
        if not hits:
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        call = _parse_call(text, m)
        if call is None or not _RECEIVER.match(text, start, m.start()):
            return None
        values = call_choices(call, literal)
        if values is None and any(kw.arg == "choices" for kw in call.keywords):
            return None  # choices through a name: the module decides
        out.extend((f, line, values) for f in hits)
    return sorted(out, key=lambda x: (x[1], x[0]))


def flags_in_tree(tree: ast.AST) -> Tuple[Dict[str, int], List[int]]:
    """``({flag: first line}, [lines of add_argument calls whose options are not all certain])``."""
    found, uncertain = registrations(tree)
    return found, sorted({line for line, _ in uncertain})


def registrations(tree: ast.AST) -> Tuple[Dict[str, int], List[Tuple[int, str]]]:
    """``({flag: first line}, [(line, pattern)])``: the flags the module's ``add_argument``
    calls certainly register, and for a call whose option strings are not all certain, what
    they may be (:func:`call_patterns`)."""
    resolver = _Resolver(_Scopes(tree))
    found: Dict[str, int] = {}
    uncertain: List[Tuple[int, str]] = []
    for node in ast.walk(tree):
        if _is_add_argument(node):
            flags, complete = call_flags(node, resolver)
            for f in flags:
                if f not in found or node.lineno < found[f]:
                    found[f] = node.lineno
            if not complete:
                uncertain.extend((node.lineno, p) for p in call_patterns(node, resolver))
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


def read_text(text: str, tree=None) -> Optional[Tuple[Dict[str, int], List[str]]]:
    """``({flag: first line}, [pattern])``: the flags a module's ``add_argument`` calls
    certainly register, and what the option strings that are not certain may be (regular
    expressions, :func:`call_patterns`), read cheaply: a call with only literal option strings
    is read with a regular expression, another is parsed alone; only when some call's options
    are not literals is the whole module read (*tree*, CPython's tree or a function that makes
    it, or parsed to resolve names), unless it is larger than WHOLE_MAX: then the names are
    not resolved (a call that cannot be parsed alone may register anything). None when it does
    not compile."""
    found: Dict[str, int] = {}
    uncertain: Set[str] = set()
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
            uncertain.add(pattern_regex((ANY,)))
            continue
        flags, complete = call_flags(call, literal)
        if not complete:
            whole = True
            uncertain.update(call_patterns(call, literal))
        for f in flags:
            found.setdefault(f, line)
    if whole and (tree is not None or len(text) <= WHOLE_MAX):
        tree = (tree() if callable(tree) else tree) if tree is not None else parse(text)
        if tree is None:
            return None
        flags, patterns = registrations(tree)
        return flags, sorted({p for _, p in patterns})
    return found, sorted(uncertain)


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

    Helper modules it imports are not followed here (:func:`reaches_megatron` follows those of
    the linted tree)."""
    megatron_line, parse_line = _parser_lines(tree)
    if megatron_line is not None:
        return MEGATRON, megatron_line
    if parse_line is not None:
        return OWN, parse_line
    return UNKNOWN, None


def _parser_lines(tree: ast.AST) -> Tuple[Optional[int], Optional[int]]:
    """The first line of a module's imports of Megatron's parser (:func:`entry_parser`) and the
    first line where it parses a command line itself, each None when there is none."""
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
    return megatron_line, parse_line


def imported_modules(tree: ast.AST, module: Optional[str] = None,
                     is_package: bool = False) -> Tuple[Tuple[str, int], ...]:
    """``((name, line), ...)``: the absolute names of the modules an import of *tree* (anywhere
    in it, as :func:`entry_parser` reads them) may run, each with its first line: ``import a.b``
    runs ``a`` and ``a.b``; ``from a.b import c`` runs ``a``, ``a.b`` and ``a.b.c`` when that is
    a module. A relative import is resolved from *module* (a package's ``__init__`` when
    *is_package*); a script run as ``__main__`` (*module* None) has none."""
    found: Dict[str, int] = {}

    def add(name: str, line: int, *tails: str) -> None:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix not in found or line < found[prefix]:
                found[prefix] = line
        for tail in tails:
            full = f"{name}.{tail}"
            if full not in found or line < found[full]:
                found[full] = line

    for node in ast.walk(tree):
        t = type(node)
        if t is ast.Import:
            for a in node.names:
                add(a.name, node.lineno)
        elif t is ast.ImportFrom:
            if node.level:
                if module is None:
                    continue
                base = _absolute(node.module, node.level, module, is_package)
                if base is None:
                    continue
            elif node.module:
                base = node.module
            else:
                continue
            add(base, node.lineno, *(a.name for a in node.names if a.name != "*"))
    return tuple(sorted(found.items()))


def _absolute(name: Optional[str], level: int, this: str, is_package: bool) -> Optional[str]:
    """The absolute module of a relative import (as ``npulint.paths.absolute_module``)."""
    parts = this.split(".")
    if not is_package:
        parts = parts[:-1]
    if level - 1 > len(parts) or (level - 1 == len(parts) and not name):
        return None
    base = parts[:len(parts) - (level - 1)]
    return ".".join(base + ([name] if name else [])) or None


# modules of the linted tree read while following an entry's imports, beyond which the entry
# stays unknown
_MAX_FOLLOWED = 256


def reaches_megatron(imports: Iterable[Tuple[str, int]], importer: Optional[str], load) -> Optional[int]:
    """For an entry script that neither imports Megatron's parser nor parses its command line
    itself (:func:`entry_parser` says ``"unknown"``): the line of its import (*imports*, from
    :func:`imported_modules`) through which the modules of the linted tree it imports reach
    Megatron's parser, transitively, or None. A module reached counts as the entry itself
    would (:func:`entry_parser`): one that imports Megatron or MindSpeed decides, whether or not
    another parses a command line too; a parser of a helper alone leaves the entry unknown.

    *importer*: the entry's module name; *load(name, importer, importer_is_package)*: the
    module *name* as an import of it by *importer* finds it, ``(tree, is_package)``, when it is
    a module of the linted tree that compiles, else None. Each module is read once (cycles are
    safe), at most :data:`_MAX_FOLLOWED` of them (beyond, None)."""
    queue = [(name, line, importer, False) for name, line in sorted(imports, key=lambda x: (x[1], x[0]))]
    seen: Set[str] = set()
    i = 0
    while i < len(queue):
        name, line, by, by_package = queue[i]
        i += 1
        if name in seen:
            continue
        found = load(name, by, by_package)
        if found is None:
            continue
        seen.add(name)
        if len(seen) > _MAX_FOLLOWED:
            return None
        tree, is_package = found
        if _parser_lines(tree)[0] is not None:
            return line
        queue.extend((sub, line, name, is_package) for sub, _ in imported_modules(tree, name, is_package)
                     if sub not in seen)
    return None


def _megatron_side(module: str) -> bool:
    parts = module.split(".")
    if parts[0] not in MEGATRON_TOPS:
        return False
    if parts[0] == "megatron":
        return len(parts) == 1 or parts[1] != "core"
    return True
