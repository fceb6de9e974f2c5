"""Scopes, bindings and import resolution, built during the one traversal of a file.

This is npulint's single name resolver: a light import/alias table on the tree of
CPython's own parser (``ast``; ``docs/benchmarks.md`` says why not LibCST's). Every name
binding gets a sequence number in traversal order, so a use can be resolved against the
bindings that precede it in straight-line code.

Rules do not walk the tree themselves: the :class:`Walker` calls their hooks, and they
resolve names and values through :class:`Semantic` (usually at the end of the file, when
every binding is known).
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

import ast

# A binding that is not an import (a def, a class, an assignment of something else, a
# parameter...): a name bound this way is never an external API.
LOCAL = "<local>"

# Modules whose ``import *`` we know: name -> qualified name. ``npu_bridge.npu_init``
# has no ``__all__``, so every public name it imports is re-exported
# (hicann/tensorflow tf_adapter/python/npu_bridge/npu_init.py).
STAR_EXPORTS: Dict[str, Dict[str, str]] = {
    "npu_bridge.npu_init": {
        "npu_scope": "npu_bridge.estimator.npu.npu_scope",
        "hccl_ops": "npu_bridge.hccl.hccl_ops",
        "npu_ops": "npu_bridge.estimator.npu_ops",
        "npu_rnn": "npu_bridge.estimator.npu.npu_rnn",
        "npu_plugin": "npu_bridge.estimator.npu.npu_plugin",
        "util": "npu_bridge.estimator.npu.util",
        "npu_strategy": "npu_bridge.estimator.npu.npu_strategy",
        "keras_to_npu": "npu_bridge.estimator.npu.keras_to_npu",
        "tf": "tensorflow",
        "os": "os",
        "create_group": "hccl.manage.api.create_group",
        "destroy_group": "hccl.manage.api.destroy_group",
        "get_rank_size": "hccl.manage.api.get_rank_size",
        "get_local_rank_size": "hccl.manage.api.get_local_rank_size",
        "get_rank_id": "hccl.manage.api.get_rank_id",
        "get_local_rank_id": "hccl.manage.api.get_local_rank_id",
        "NPURunConfig": "npu_bridge.estimator.npu.npu_config.NPURunConfig",
        "NPUEstimator": "npu_bridge.estimator.npu.npu_estimator.NPUEstimator",
        "NPUDistributedOptimizer": "npu_bridge.estimator.npu.npu_optimizer.NPUDistributedOptimizer",
    },
}

# Re-exports: a qualified name under the key is the same object as under the value.
ALIASES: Dict[str, str] = {
    "npu_bridge.npu_init.npu_scope": "npu_bridge.estimator.npu.npu_scope",
    "npu_bridge.npu_init.hccl_ops": "npu_bridge.hccl.hccl_ops",
    "npu_bridge.npu_init.tf": "tensorflow",
    "tensorflow.compat.v1": "tensorflow",
    "tensorflow.compat.v2": "tensorflow",
    # torch_npu registers its custom ops as torch.ops.npu.<op>; the Python names are the same ops
    "torch.ops.npu": "torch_npu",
}


def canonical(qualname: str) -> str:
    """Rewrite a qualified name through :data:`ALIASES` (longest prefix first)."""
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        target = ALIASES.get(prefix)
        if target is not None:
            rest = parts[cut:]
            return ".".join([target] + rest) if rest else target
    return qualname


class Scope:
    __slots__ = ("kind", "node", "parent", "bindings", "globals", "nonlocals", "blocks", "with_depth", "stars")

    def __init__(self, kind: str, node: ast.AST, parent: Optional["Scope"]):
        self.kind = kind  # module | class | function | lambda | comprehension
        self.node = node
        self.parent = parent
        self.bindings: Dict[str, List[Binding]] = {}
        self.globals: set = set()
        self.nonlocals: set = set()
        # the conditional blocks (bodies of if/else/for/while/try/except/finally/case) open
        # at the current point of the traversal, outermost first: ((body_node, is_loop), ...)
        self.blocks: Tuple[Tuple[object, bool], ...] = ()
        self.with_depth = 0
        # ``from <module> import *`` here, of modules we cannot enumerate: (seq, module)
        self.stars: List[Tuple[int, str]] = []

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<Scope {self.kind} {getattr(getattr(self.node, 'name', None), 'value', '')}>"

    def enclosing_function(self) -> Optional["Scope"]:
        s: Optional[Scope] = self
        while s is not None and s.kind not in ("function", "lambda"):
            s = s.parent
        return s

    def chain(self) -> Iterable["Scope"]:
        s: Optional[Scope] = self
        while s is not None:
            yield s
            s = s.parent


class Site:
    """Where a node is: its scope, its place in traversal order, the conditional blocks
    around it inside that scope, and how many ``with`` statements enclose it there."""

    __slots__ = ("scope", "seq", "blocks", "with_depth")

    def __init__(self, scope: Scope, seq: int, blocks: Tuple[Tuple[object, bool], ...], with_depth: int):
        self.scope = scope
        self.seq = seq
        self.blocks = blocks
        self.with_depth = with_depth

    @property
    def conditional(self) -> bool:
        """Under an if/for/while/try/match inside its scope."""
        return bool(self.blocks)

    @property
    def in_loop(self) -> bool:
        return any(is_loop for _, is_loop in self.blocks)

    def shared_loop(self, other: "Site") -> Optional[object]:
        """The innermost loop around both sites (in one scope), or None."""
        if self.scope is not other.scope:
            return None
        for blk, is_loop in reversed(self.blocks):
            if is_loop and (blk, True) in other.blocks:
                return blk
        return None

    def encloses(self, other: "Site") -> bool:
        """True if every conditional block around *self* is also around *other*."""
        n = len(self.blocks)
        return n <= len(other.blocks) and other.blocks[:n] == self.blocks


class AttrStore:
    """An assignment to ``root.a.b.c``: *root* is the name, *path* ``("a", "b", "c")``;
    *value* is None for a ``del`` and the right-hand side otherwise (for ``+=`` too,
    with ``kind == "aug"``)."""

    __slots__ = ("root", "path", "value", "kind", "node", "target", "site")

    def __init__(self, root: str, path: Tuple[str, ...], value, kind: str, node, target, site: "Site"):
        self.root = root
        self.path = path
        self.value = value
        self.kind = kind
        self.node = node
        self.target = target
        self.site = site


class Binding:
    __slots__ = ("name", "kind", "node", "value", "index", "qualname", "site", "conditional")

    def __init__(self, name: str, kind: str, node: Optional[ast.AST], site: Site, *,
                 value: Optional[ast.expr] = None, index: Tuple[int, ...] = (),
                 qualname: Optional[str] = None, conditional: bool = False):
        self.name = name
        # import | assign | aug | def | class | param | loop | with | except | del | other
        self.kind = kind
        self.node = node
        self.value = value
        self.index = index
        self.qualname = qualname
        self.site = site
        self.conditional = conditional

    def __repr__(self) -> str:  # pragma: no cover
        return f"<Binding {self.name} {self.kind} seq={self.site.seq} cond={self.conditional}>"


# Compound statements whose ``body`` runs conditionally (or repeatedly, for loops).
_COMPREHENSIONS = frozenset({"ListComp", "SetComp", "DictComp", "GeneratorExp"})


def dotted(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is ast.Name:
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Arg:
    """One argument of a call, in source order: *value* (the expression passed), *keyword*
    (the name before ``=``, or None), *star* (``""``, ``"*"`` or ``"**"``) and *node*, the
    ``ast`` node that spans it (the expression, its ``Starred`` or its ``keyword``)."""

    __slots__ = ("value", "keyword", "star", "node")

    def __init__(self, value: ast.expr, keyword: Optional[str], star: str, node: ast.AST):
        self.value = value
        self.keyword = keyword
        self.star = star
        self.node = node

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<Arg {self.star}{self.keyword + '=' if self.keyword else ''}{type(self.value).__name__}>"


def call_args(call: ast.Call) -> List[Arg]:
    """The arguments of *call* in source order (``ast`` keeps positional and keyword ones
    apart), made once per call: the same :class:`Arg` objects for every caller."""
    cached = call.__dict__.get("_npulint_args")
    if cached is not None:
        return cached
    out = [Arg(a.value, None, "*", a) if type(a) is ast.Starred else Arg(a, None, "", a) for a in call.args]
    if call.keywords:
        out.extend(Arg(k.value, k.arg, "" if k.arg is not None else "**", k) for k in call.keywords)
        if any(a.star == "*" for a in out):  # ``f(a=1, *rest)``: a spread may follow a keyword
            out.sort(key=lambda a: (a.node.lineno, a.node.col_offset))
    call._npulint_args = out
    return out


class Semantic:
    """The binding table of one file, and name resolution over it."""

    def __init__(self, module: ast.Module, module_name: Optional[str] = None, is_package: bool = False):
        # the file's dotted module name (``pkg.sub.mod``), when it can be told from the path
        self.module_name = module_name
        self.is_package = is_package  # an __init__.py: relative imports start at itself
        self.module_scope = Scope("module", module, None)
        self.scope = self.module_scope
        self.seq = 0
        self.scope_of: Dict[ast.AST, Scope] = {module: self.module_scope}
        # ``self.<attr> = value`` in the methods of a class: class scope -> attr -> bindings
        self.attrs: Dict[Scope, Dict[str, List[Binding]]] = {}
        # every store to an attribute chain rooted at a name (``cfg.mode.value = "x"``,
        # ``cfg.debug.aclgraph.x += 1``), in source order
        self.attr_stores: List[AttrStore] = []
        self.def_site: Dict[ast.AST, Site] = {}  # FunctionDef/ClassDef/Lambda -> where it stands
        self._qn_memo: Dict[int, FrozenSet[str]] = {}  # id(Binding) -> qualified names it gives
        # (id(expr), id(site)) -> (expr, site, qualified names): the checkers resolve the same
        # calls at the same sites; expr and site are kept so their ids stay theirs
        self._use_memo: Dict[Tuple[int, int], Tuple[ast.AST, Site, FrozenSet[str]]] = {}
        self._last_site: Optional[Site] = None
        self.complete = False  # the traversal is over: every binding is known (Walker.walk)

    # -- building ---------------------------------------------------------------------
    def site(self) -> Site:
        """The current point of the traversal. Every checker that asks at one point gets the
        same object, so what is resolved at a site is resolved once (see :meth:`qualnames`)."""
        s = self.scope
        last = self._last_site
        if last is not None and last.scope is s and last.seq == self.seq and last.blocks is s.blocks and \
                last.with_depth == s.with_depth:
            return last
        last = self._last_site = Site(s, self.seq, s.blocks, s.with_depth)
        return last

    def push(self, kind: str, node: ast.AST) -> None:
        scope = Scope(kind, node, self.scope)
        self.scope_of[node] = scope
        self.scope = scope

    def pop(self) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    def bind(self, name: str, kind: str, node: Optional[ast.AST], *, value=None, index=(),
             qualname=None, scope: Optional[Scope] = None) -> None:
        scope = scope or self.scope
        conditional = bool(scope.blocks) or kind in ("loop", "del", "except")
        if scope.kind == "comprehension" and kind == "assign":  # walrus binds outside
            while scope.kind == "comprehension" and scope.parent is not None:
                scope = scope.parent
        target = scope
        if name in scope.globals:
            target, conditional = self.module_scope, True
        elif name in scope.nonlocals:
            target, conditional = self._nonlocal_target(scope, name), True
        site = Site(scope, self.seq, scope.blocks, scope.with_depth)
        b = Binding(name, kind, node, site, value=value, index=index, qualname=qualname,
                    conditional=conditional)
        target.bindings.setdefault(name, []).append(b)

    def _nonlocal_target(self, scope: Scope, name: str) -> Scope:
        s = scope.parent
        while s is not None:
            if s.kind in ("function", "lambda") and name in s.bindings:
                return s
            s = s.parent
        return self.module_scope

    def bind_target(self, target: ast.expr, kind: str, node, value=None, index=()) -> None:
        t = type(target)
        if t is ast.Name:
            self.bind(target.id, kind, node, value=value, index=index)
        elif t is ast.Tuple or t is ast.List:
            starred = any(type(el) is ast.Starred for el in target.elts)
            for i, el in enumerate(target.elts):
                self.bind_target(el, "other" if starred else kind, node, value=value, index=index + (i,))
        elif t is ast.Starred:
            self.bind_target(target.value, "other", node)
        # attributes and subscripts bind no name

    def self_class(self, scope: Scope, name: str) -> Optional[Scope]:
        """The class whose instance *name* is, if *name* is the first parameter of a method
        that *scope* belongs to (``self`` inside ``def f(self)`` of ``class C``)."""
        fn = scope.enclosing_function()
        if fn is None or fn.kind != "function" or fn.parent is None or fn.parent.kind != "class":
            return None
        params = fn.node.args
        first = (params.posonlyargs or params.args or (None,))[0]
        if first is None or first.arg != name:
            return None
        if any(type(d) is ast.Name and d.id == "staticmethod" for d in fn.node.decorator_list):
            return None
        return fn.parent

    def bind_attribute(self, target: ast.Attribute, kind: str, node, value=None) -> None:
        chain = dotted(target)
        if chain is not None:
            root, *path = chain.split(".")
            self.attr_stores.append(AttrStore(root, tuple(path), value, kind, node, target, self.site()))
        if type(target.value) is not ast.Name:
            return
        cls = self.self_class(self.scope, target.value.id)
        if cls is None:
            return
        site = self.site()
        b = Binding(target.attr, kind, node, site, value=value, conditional=bool(site.blocks))
        self.attrs.setdefault(cls, {}).setdefault(target.attr, []).append(b)

    def attribute_bindings(self, expr: ast.Attribute, site: Site) -> Tuple[List[Binding], bool]:
        """Assignments to ``self.<attr>`` (in any method of the class, and the class body),
        and whether exactly one exists."""
        if type(expr.value) is not ast.Name:
            return [], False
        cls = self.self_class(site.scope, expr.value.id)
        if cls is None:
            return [], False
        bl = list(self.attrs.get(cls, {}).get(expr.attr, ())) + list(cls.bindings.get(expr.attr, ()))
        return bl, len(bl) == 1

    # -- resolution -------------------------------------------------------------------
    def lookup(self, name: str, site: Site) -> Tuple[Optional[Scope], List[Binding], bool]:
        """The scope that binds *name* for a use at *site*, its bindings, and whether that
        scope is the use's own scope. ``(None, [], False)`` if unbound (builtin, star)."""
        origin = site.scope
        s: Optional[Scope] = origin
        while s is not None:
            if s is not origin and s.kind == "class":
                s = s.parent
                continue
            if name in s.globals:
                s = self.module_scope
                bl = s.bindings.get(name)
                return (s, bl, False) if bl else (None, [], False)
            bl = s.bindings.get(name)
            if bl:
                return s, bl, s is origin
            if s.stars:
                return None, [], False
            s = s.parent
        return None, [], False

    def reaching(self, name: str, site: Site) -> Tuple[List[Binding], bool]:
        """Bindings that may give *name* its value at *site*, and whether exactly one does
        for certain.

        In the use's own scope, a binding is certain when its block encloses the use (it
        runs on every path to the use), no other binding stands between them, and no
        binding inside a loop around the use (but not around the binding) can reach the use
        through the loop's back edge. From an enclosing scope (a function using a module
        constant), the name must be bound exactly once, unconditionally.
        """
        scope, bl, same = self.lookup(name, site)
        if scope is None:
            return [], False
        # a rebinding from another scope (``global``/``nonlocal``) may run at any time
        foreign = [b for b in bl if b.site.scope is not scope]
        if not same or scope.kind == "comprehension":
            first = min(b.site.seq for b in bl)
            if any(seq > first for seq, _ in scope.stars):
                return [], False  # a later ``import *`` may rebind it
            return list(bl), len(bl) == 1 and not bl[0].conditional
        before = [b for b in bl if b.site.seq < site.seq]
        if not before:
            return [], False
        cands: List[Binding] = []
        dominator: Optional[Binding] = None
        for b in reversed(before):
            cands.append(b)
            if b.site.scope is scope and b.site.encloses(site):
                dominator = b
                break
        start = dominator.site.seq if dominator is not None else cands[-1].site.seq
        if any(start < seq < site.seq for seq, _ in scope.stars):
            return [], False  # an ``import *`` between the binding and the use may rebind it
        exact = dominator is not None and len(cands) == 1 and not foreign
        for b in foreign:
            if b not in cands:
                cands.append(b)
        # loops around the use that do not also enclose the dominating binding (or all of them)
        shared = len(dominator.site.blocks) if dominator is not None else 0
        loops = [blk for blk, is_loop in site.blocks[shared:] if is_loop]
        if loops:
            for b in bl:
                if b.site.seq > site.seq and any((blk, True) in b.site.blocks for blk in loops):
                    cands.append(b)
                    exact = False
        return cands, exact

    def qualnames(self, expr: ast.AST, site: Site, _depth: int = 0) -> FrozenSet[str]:
        """Candidate qualified names of a Name/Attribute chain (canonical). Contains
        :data:`LOCAL` when some binding is not an import. Empty when unknown. Asked after the
        traversal (when every binding is known), the answer for one expression at one site
        is computed once."""
        if _depth == 0 and self.complete:
            key = (id(expr), id(site))
            hit = self._use_memo.get(key)
            if hit is not None and hit[0] is expr and hit[1] is site:
                return hit[2]
            result = self._qualnames(expr, site, 0)
            self._use_memo[key] = (expr, site, result)
            return result
        return self._qualnames(expr, site, _depth)

    def _qualnames(self, expr: ast.AST, site: Site, _depth: int) -> FrozenSet[str]:
        if _depth > 20:
            return frozenset()
        t = type(expr)
        if t is ast.Attribute:
            base = self.qualnames(expr.value, site, _depth + 1)
            out = set()
            for q in base:
                out.add(LOCAL if q == LOCAL else canonical(f"{q}.{expr.attr}"))
            return frozenset(out)
        if t is not ast.Name:
            return frozenset()
        name = expr.id
        cands, _ = self.reaching(name, site)
        if not cands:
            scope, bl, _ = self.lookup(name, site)
            if scope is None and not bl and not self._star_shadowed(site):
                return frozenset({f"builtins.{name}"})
            return frozenset()
        out = set()
        for b in cands:
            out.update(self._binding_qualnames(b, _depth))
        return frozenset(out)

    _IN_PROGRESS = frozenset({LOCAL})

    def _binding_qualnames(self, b: "Binding", depth: int) -> FrozenSet[str]:
        """What a binding makes its name refer to. Memoized per binding (it does not depend
        on the use); an alias cycle (``a = b`` ... ``b = a`` around a loop) resolves to
        :data:`LOCAL`, so such names never match an API, in linear time."""
        if b.kind == "import":
            return frozenset({b.qualname or LOCAL})
        if b.kind != "assign" or b.index:
            return frozenset({LOCAL})
        value = b.value
        if type(value) is ast.Constant and value.value is None:
            return frozenset()  # ``x = None`` as an import fallback: calling it would fail anyway
        if type(value) is not ast.Name and type(value) is not ast.Attribute:
            return frozenset({LOCAL})
        memo = self._qn_memo
        key = id(b)
        if key in memo:
            return memo[key]
        memo[key] = self._IN_PROGRESS
        inner = self.qualnames(value, b.site, depth + 1)
        result = inner if inner else frozenset({LOCAL})
        memo[key] = result
        return result

    def qualname_of_def(self, node: ast.AST) -> Optional[str]:
        """``module.Class``, ``module.Class.method``, or, like Python's ``__qualname__``,
        ``module.func.<locals>.Class`` for a def or class in this file (the module name is
        ``<file>`` when it cannot be told from the path: such names never match an import)."""
        parts = [node.name]
        site = self.def_site.get(node)
        scope = site.scope if site is not None else None
        while scope is not None and scope.kind != "module":
            if scope.kind == "class":
                parts.append(scope.node.name)
            elif scope.kind == "function":
                parts.extend(["<locals>", scope.node.name])
            else:
                return None  # a lambda or comprehension
            scope = scope.parent
        return ".".join([self.module_name or "<file>"] + list(reversed(parts)))

    def certain_binding(self, expr: ast.AST, site: Site) -> Optional["Binding"]:
        """The one binding a Name or ``self.<attr>`` certainly refers to at *site*."""
        if type(expr) is ast.Name:
            cands, exact = self.reaching(expr.id, site)
            return cands[0] if exact else None
        if type(expr) is ast.Attribute:
            bl, exact = self.attribute_bindings(expr, site)
            return bl[0] if exact else None
        return None

    def bound_expr(self, expr: ast.AST, site: Site, _depth: int = 0) -> Tuple[ast.AST, Site]:
        """The expression a name (or ``self.<attr>``) is certainly bound to, followed through
        plain assignments, with the site it is evaluated at; *expr* itself otherwise."""
        if _depth > 5:
            return expr, site
        b = self.certain_binding(expr, site)
        if b is not None and b.kind == "assign" and not b.index and b.value is not None:
            return self.bound_expr(b.value, b.site, _depth + 1)
        return expr, site

    def all_bindings(self, with_attrs: bool = False) -> List["Binding"]:
        """Every name binding of the file (and ``self.<attr>`` ones with *with_attrs*)."""
        out: List[Binding] = []
        seen: set = set()
        for scope in self.scope_of.values():
            if id(scope) in seen:
                continue
            seen.add(id(scope))
            for bl in scope.bindings.values():
                out.extend(bl)
        if with_attrs:
            for attrs in self.attrs.values():
                for bl in attrs.values():
                    out.extend(bl)
        return out

    def opaque_attribute_stores(self, target: ast.AST, node) -> None:
        """Attribute chains changed without a plain value: inside tuple/list/starred targets,
        ``for``/``with ... as`` targets, ``del a.b``. Recorded with kind "opaque"."""
        t = type(target)
        if t is ast.Attribute:
            chain = dotted(target)
            if chain is not None:
                root, *path = chain.split(".")
                self.attr_stores.append(AttrStore(root, tuple(path), None, "opaque", node, target, self.site()))
        elif t is ast.Tuple or t is ast.List:
            for el in target.elts:
                self.opaque_attribute_stores(el, node)
        elif t is ast.Starred:
            self.opaque_attribute_stores(target.value, node)

    def callee_qualname(self, func: ast.AST, site: Site) -> Optional[str]:
        """The qualified name of what a call's *func* certainly names: a class or function
        defined in this file (``module.Name``) or one imported (``pkg.mod.Name``)."""
        if type(func) is ast.Name:
            cands, exact = self.reaching(func.id, site)
            if exact and cands[0].kind in ("class", "def"):
                return self.qualname_of_def(cands[0].node)
        qs = self.qualnames(func, site)
        if len(qs) == 1 and LOCAL not in qs:
            q = next(iter(qs))
            return None if q.startswith("builtins.") else q
        return None

    def enclosing_class(self, site: Site) -> Optional[Scope]:
        """The class whose method (or class body) *site* is in, if any."""
        fn = site.scope.enclosing_function()
        if fn is None:
            return site.scope if site.scope.kind == "class" else None
        return fn.parent if fn.parent is not None and fn.parent.kind == "class" else None

    def _star_shadowed(self, site: Site) -> bool:
        return any(s.stars for s in site.scope.chain())

    def resolve(self, expr: ast.AST, site: Site, names) -> Optional[str]:
        """The one entry of *names* (a container of canonical qualified names) that *expr*
        refers to, if every candidate is that same entry; else None."""
        qs = self.qualnames(expr, site)
        if not qs:
            return None
        first = None
        for q in qs:
            if q not in names:
                return None
            if first is None:
                first = q
            elif q != first:
                return None
        return first

    def function_def(self, expr: ast.AST, site: Site) -> Optional[ast.AST]:
        """The FunctionDef/Lambda that *expr* certainly names in this file, if any:
        a lambda, a name bound once to a def, or ``self.method`` inside a class."""
        if type(expr) is ast.Lambda:
            return expr
        if type(expr) is ast.Name:
            cands, exact = self.reaching(expr.id, site)
            if exact and cands[0].kind == "def":
                return cands[0].node
            if exact and cands[0].kind == "assign" and not cands[0].index and cands[0].value is not None:
                return self.function_def(cands[0].value, cands[0].site) if isinstance(
                    cands[0].value, (ast.Name, ast.Lambda)) else None
            return None
        if type(expr) is ast.Attribute and type(expr.value) is ast.Name and expr.value.id in ("self", "cls"):
            fn = site.scope.enclosing_function()
            cls = fn.parent if fn is not None else None
            if cls is not None and cls.kind == "class":
                bl = cls.bindings.get(expr.attr)
                if bl and len(bl) == 1 and bl[0].kind == "def":
                    return bl[0].node
        return None


class Walker:
    """The one traversal of a file: maintains :class:`Semantic` and calls every active
    checker's ``visit_<Node>``/``leave_<Node>`` hooks (``<Node>``: an ``ast`` class name)."""

    def __init__(self, semantic: Semantic, checkers: Sequence, on_error, text: str = ""):
        self.sem = semantic
        self.on_error = on_error
        self.text = text  # the source, to tell ``elif`` from ``else: if``
        self.visit_hooks: Dict[str, List] = {}
        self.leave_hooks: Dict[str, List] = {}
        self.checkers = list(checkers)
        for checker in self.checkers:
            for attr in dir(type(checker)):
                if attr.startswith("visit_"):
                    self.visit_hooks.setdefault(attr[6:], []).append((checker, getattr(checker, attr)))
                elif attr.startswith("leave_"):
                    self.leave_hooks.setdefault(attr[6:], []).append((checker, getattr(checker, attr)))
        self.disabled: set = set()
        self._plans: Dict[type, tuple] = {}  # node class -> _plan()
        self._lines: Optional[List[str]] = None

    def _call(self, hooks, node) -> None:
        for checker, hook in hooks:
            if checker in self.disabled:
                continue
            try:
                hook(node)
            except RecursionError:
                raise
            except Exception as exc:  # a rule bug must not lose other rules or files
                self.disabled.add(checker)
                self.on_error(checker, exc, node)

    def walk(self, module: ast.AST) -> None:
        """Visit every node of *module* once, parents before children and fields in source
        order (see :data:`_FIELD_ORDER`), calling the hooks; expression contexts and operator
        nodes, which no hook looks at, are not visited."""
        self._walk(module)
        self.sem.complete = True

    def _plan(self, cls: type):
        t = cls.__name__
        order = _FIELD_ORDER.get(t) or tuple(f for f in cls._fields if f not in _SKIPPED_FIELDS)
        h = _HOOK_NAME.get(t, t)
        plan = self._plans[cls] = (order, _ENGINE_VISIT.get(t), self.visit_hooks.get(h), self.leave_hooks.get(h),
                                   _ENGINE_LEAVE.get(t), _BLOCKS.get(t))
        return plan

    def _walk(self, node: ast.AST) -> None:
        sem = self.sem
        cls = type(node)
        plan = self._plans.get(cls)
        if plan is None:
            plan = self._plan(cls)
        order, engine_visit, visit_hooks, leave_hooks, engine_leave, blocks = plan
        sem.seq += 1
        if engine_visit is not None:
            engine_visit(sem, node)
        if visit_hooks:
            self._call(visit_hooks, node)
        if cls is ast.Dict:  # key, value, key, value: the order Python evaluates them in
            order = ()
            for key, value in zip(node.keys, node.values):
                if key is not None:  # None: ``**mapping``
                    self._walk(key)
                self._walk(value)
        for name in order:
            value = getattr(node, name)
            actions = blocks.get(name) if blocks is not None else None
            if actions is not None and actions[0] is not None:
                self._enter(node, name, actions[0], value)
            if type(value) is list:
                if name == "orelse" and cls is ast.If and value and self._is_elif(node, value):
                    self._walk(value[0])  # ``elif``: its own block, not inside an ``else``
                else:
                    for child in value:
                        if type(child) not in _INERT:
                            self._walk(child)
            elif type(value) not in _INERT:
                self._walk(value)
            if actions is not None and actions[1] is not None:
                self._exit(node, name, actions[1], value)
        if leave_hooks:
            self._call(leave_hooks, node)
        if engine_leave is not None:
            sem.seq += 1
            engine_leave(sem, node)

    def _enter(self, node, name: str, what: str, value) -> None:
        sem = self.sem
        if what == "block" or what == "loop":
            if name == "orelse" and (not value or (type(node) is ast.If and self._is_elif(node, value))):
                return
            scope = sem.scope
            # a body (and a while's test, run on every iteration) is keyed by its statement
            key = node if name in ("body", "test") else (node, name)
            scope.blocks = scope.blocks + ((key, what == "loop"),)
        else:  # a scope: "function", "lambda", "class"
            sem.def_site[node] = sem.site()
            sem.push(what, node)

    def _exit(self, node, name: str, what: str, value) -> None:
        sem = self.sem
        if what == "pop":
            sem.pop()
        else:  # "unblock"
            if name == "orelse" and (not value or (type(node) is ast.If and self._is_elif(node, value))):
                return
            scope = sem.scope
            scope.blocks = scope.blocks[:-1]

    def _is_elif(self, node: ast.If, orelse: list) -> bool:
        """Whether ``orelse`` is an ``elif`` clause (and not ``else:`` holding an ``if``)."""
        if len(orelse) != 1 or type(orelse[0]) is not ast.If:
            return False
        inner = orelse[0]
        if self._lines is None:
            from npulint.source import python_lines

            self._lines = python_lines(self.text)
        lines = self._lines
        if not 0 < inner.lineno <= len(lines):
            return False
        # the column counts UTF-8 bytes
        return lines[inner.lineno - 1].encode("utf-8", "surrogateescape")[inner.col_offset:inner.col_offset + 4] == b"elif"


# Fields never walked: names and literals are strings and numbers; these hold no node a rule
# looks at (type comments are strings; expression contexts are skipped through _INERT).
_SKIPPED_FIELDS = frozenset({"ctx", "op", "type_comment", "type_ignores", "kind", "is_async", "conversion",
                             "level"})

# Field value types never visited: expression contexts and operators, and what is not a node
# (names are strings; a missing node is None).
_INERT = frozenset([c for c in vars(ast).values() if isinstance(c, type) and issubclass(
    c, (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop, ast.type_ignore))]
    + [str, int, float, complex, bytes, bool, type(None), type(...)])

# Field order where ``_fields`` is not source order (decorators first; a dict's keys and
# values, two lists in ast, are walked pair by pair in _walk).
_FIELD_ORDER: Dict[str, Tuple[str, ...]] = {
    "FunctionDef": ("decorator_list", "args", "returns", "body"),
    "AsyncFunctionDef": ("decorator_list", "args", "returns", "body"),
    "ClassDef": ("decorator_list", "bases", "keywords", "body"),
    "IfExp": ("body", "test", "orelse"),
    "Compare": ("left", "comparators"),
    "arguments": ("posonlyargs", "args", "vararg", "kwonlyargs", "kwarg", "defaults", "kw_defaults"),
}

# Per node type and field: what entering and leaving the field means (None: nothing). A
# scope ("function"/"lambda" from the parameters, "class" from the body) is left ("pop")
# after the body; a conditional block ("block", or "loop" for a loop's body and a while's
# test, which runs on every iteration) is left ("unblock") after its field, a while's after
# its body.
_BLOCK, _LOOP, _UNBLOCK = ("block", "unblock"), ("loop", "unblock"), "unblock"
_BLOCKS: Dict[str, Dict[str, Tuple[Optional[str], Optional[str]]]] = {
    "FunctionDef": {"args": ("function", None), "body": (None, "pop")},
    "AsyncFunctionDef": {"args": ("function", None), "body": (None, "pop")},
    "Lambda": {"args": ("lambda", None), "body": (None, "pop")},
    "ClassDef": {"body": ("class", "pop")},
    "If": {"body": _BLOCK, "orelse": _BLOCK},
    "For": {"body": _LOOP, "orelse": _BLOCK},
    "AsyncFor": {"body": _LOOP, "orelse": _BLOCK},
    "While": {"test": ("loop", None), "body": (None, _UNBLOCK), "orelse": _BLOCK},
    "Try": {"body": _BLOCK, "orelse": _BLOCK, "finalbody": _BLOCK},
    "TryStar": {"body": _BLOCK, "orelse": _BLOCK, "finalbody": _BLOCK},
    "ExceptHandler": {"body": _BLOCK},
    "match_case": {"body": _BLOCK},
}

# ``async`` statements call the hooks of their plain twins (one LibCST class each).
_HOOK_NAME = {"AsyncFunctionDef": "FunctionDef", "AsyncFor": "For", "AsyncWith": "With"}


# -- the engine's own bookkeeping, by node type --------------------------------------

def _v_import(sem: Semantic, node: ast.Import) -> None:
    for alias in node.names:
        full = alias.name
        if alias.asname is not None:
            sem.bind(alias.asname, "import", node, qualname=canonical(full))
        else:
            top = full.split(".")[0]
            sem.bind(top, "import", node, qualname=top)


def _absolute(sem: Semantic, node: ast.ImportFrom) -> Optional[str]:
    """The absolute module of a ``from`` import, resolving relative imports against the
    file's module name; None when that is unknown."""
    module = node.module or ""
    level = node.level or 0
    if not level:
        return module
    if not sem.module_name:
        return None
    parts = sem.module_name.split(".")
    if not sem.is_package:
        parts = parts[:-1]
    if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
        return None
    base = parts[:len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _v_import_from(sem: Semantic, node: ast.ImportFrom) -> None:
    module = _absolute(sem, node)
    if sem.is_package and sem.module_name and module and module.startswith(sem.module_name + ".") \
            and sem.scope is sem.module_scope:
        # In a package's __init__, importing from one of its submodules also binds the
        # submodule's name there (the import system sets it on the package: its globals)
        sub = module[len(sem.module_name) + 1:].split(".")[0]
        sem.bind(sub, "import", node, qualname=canonical(f"{sem.module_name}.{sub}"))
    if len(node.names) == 1 and node.names[0].name == "*":
        exports = STAR_EXPORTS.get(module) if module is not None else None
        if exports is None:
            sem.scope.stars.append((sem.seq, module or "."))
        else:
            for name, q in exports.items():
                sem.bind(name, "import", node, qualname=canonical(q))
        return
    for alias in node.names:
        name = alias.name
        bound = alias.asname if alias.asname is not None else name
        qualname = None if module is None else canonical(f"{module}.{name}" if module else name)
        sem.bind(bound, "import", node, qualname=qualname)


def _v_def(sem: Semantic, node) -> None:
    sem.bind(node.name, "class" if type(node) is ast.ClassDef else "def", node)


def _v_params(sem: Semantic, node: ast.arguments) -> None:
    for group in (node.posonlyargs, node.args, node.kwonlyargs):
        for p in group:
            sem.bind(p.arg, "param", p)
    for star in (node.vararg, node.kwarg):
        if star is not None:
            sem.bind(star.arg, "param", star)


def _v_for(sem: Semantic, node) -> None:
    sem.opaque_attribute_stores(node.target, node)
    sem.bind_target(node.target, "loop", node)


def _v_with(sem: Semantic, node) -> None:
    sem.scope.with_depth += 1


def _l_with(sem: Semantic, node) -> None:
    sem.scope.with_depth -= 1


def _l_with_item(sem: Semantic, node: ast.withitem) -> None:
    if node.optional_vars is not None:
        sem.opaque_attribute_stores(node.optional_vars, node)
        sem.bind_target(node.optional_vars, "with", node)


def _l_assign(sem: Semantic, node: ast.Assign) -> None:
    for t in node.targets:
        if type(t) is ast.Attribute:
            sem.bind_attribute(t, "assign", node, value=node.value)
        else:
            if type(t) in (ast.Tuple, ast.List, ast.Starred):
                sem.opaque_attribute_stores(t, node)
            sem.bind_target(t, "assign", node, value=node.value)


def _l_ann_assign(sem: Semantic, node: ast.AnnAssign) -> None:
    if node.value is not None:
        if type(node.target) is ast.Attribute:
            sem.bind_attribute(node.target, "assign", node, value=node.value)
        else:
            sem.bind_target(node.target, "assign", node, value=node.value)


def _l_aug_assign(sem: Semantic, node: ast.AugAssign) -> None:
    if type(node.target) is ast.Attribute:
        sem.bind_attribute(node.target, "aug", node, value=node.value)
    else:
        sem.bind_target(node.target, "aug", node, value=node.value)


def _l_named_expr(sem: Semantic, node: ast.NamedExpr) -> None:
    sem.bind_target(node.target, "assign", node, value=node.value)


def _v_global(sem: Semantic, node: ast.Global) -> None:
    sem.scope.globals.update(node.names)


def _v_nonlocal(sem: Semantic, node: ast.Nonlocal) -> None:
    sem.scope.nonlocals.update(node.names)


def _v_del(sem: Semantic, node: ast.Delete) -> None:
    for target in node.targets:
        sem.opaque_attribute_stores(target, node)
        sem.bind_target(target, "del", node)


def _v_except(sem: Semantic, node: ast.ExceptHandler) -> None:
    if node.name is not None:
        sem.bind(node.name, "except", node)


def _v_comp(sem: Semantic, node) -> None:
    sem.push("comprehension", node)


def _l_comp(sem: Semantic, node) -> None:
    sem.pop()


def _v_comp_for(sem: Semantic, node: ast.comprehension) -> None:
    sem.bind_target(node.target, "loop", node)


def _v_match_name(sem: Semantic, node) -> None:
    name = getattr(node, "name", None) or getattr(node, "rest", None)
    if isinstance(name, str):
        sem.bind(name, "other", node)


_ENGINE_VISIT = {
    "Import": _v_import,
    "ImportFrom": _v_import_from,
    "FunctionDef": _v_def, "AsyncFunctionDef": _v_def,
    "ClassDef": _v_def,
    "arguments": _v_params,
    "For": _v_for, "AsyncFor": _v_for,
    "With": _v_with, "AsyncWith": _v_with,
    "Global": _v_global,
    "Nonlocal": _v_nonlocal,
    "Delete": _v_del,
    "ExceptHandler": _v_except,
    "ListComp": _v_comp, "SetComp": _v_comp, "DictComp": _v_comp, "GeneratorExp": _v_comp,
    "comprehension": _v_comp_for,
    "MatchAs": _v_match_name, "MatchStar": _v_match_name, "MatchMapping": _v_match_name,
}

_ENGINE_LEAVE = {
    "With": _l_with, "AsyncWith": _l_with,
    "withitem": _l_with_item,
    "Assign": _l_assign,
    "AnnAssign": _l_ann_assign,
    "AugAssign": _l_aug_assign,
    "NamedExpr": _l_named_expr,
    "ListComp": _l_comp, "SetComp": _l_comp, "DictComp": _l_comp, "GeneratorExp": _l_comp,
}
