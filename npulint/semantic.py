"""Scopes, bindings and import resolution, built during the one traversal of a file.

This is npulint's single name resolver: a light import/alias table on the LibCST tree
(measured against LibCST's ``ScopeProvider``/``QualifiedNameProvider`` in
``docs/benchmarks.md``). Every name binding gets a sequence number in traversal order,
so a use can be resolved against the bindings that precede it in straight-line code.

Rules do not walk the tree themselves: the :class:`Walker` calls their hooks, and they
resolve names and values through :class:`Semantic` (usually at the end of the file, when
every binding is known).
"""

from __future__ import annotations

import warnings
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from npulint import modules as _modules
from npulint import flow as _flow
from npulint.flow import FlowRecorder
from npulint.paths import absolute_module

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
    """Rewrite a qualified name through :data:`ALIASES` (longest prefix first) and through
    what the modules of the run import (``pkg.env.hccl_ops`` -> ``npu_bridge.hccl.hccl_ops``
    where ``pkg/env.py`` imports it: :mod:`npulint.modules`)."""
    q = _aliased(qualname)
    run = _modules.active()
    if run is not None and run.paths:
        q = run.rewrite(q, _aliased)
    return q


def _aliased(qualname: str) -> str:
    """Rewrite a qualified name through :data:`ALIASES` (longest prefix first)."""
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        target = ALIASES.get(prefix)
        if target is not None:
            rest = parts[cut:]
            return ".".join([target] + rest) if rest else target
    return qualname


def _literal_keys(expr: cst.BaseExpression) -> Optional[Set[Optional[str]]]:
    """The keys of a literal dict whose keys are all literal strings, or None."""
    if type(expr) is not cst.Dict:
        return None
    keys: Set[Optional[str]] = set()
    for el in expr.elements:
        name = None if isinstance(el, cst.StarredDictElement) else _literal_str(el.key)
        if name is None:
            return None
        keys.add(name)
    return keys


# Bases whose construction sets no attribute of a subclass but these (so a class attribute
# of the subclass is what its instances read): ``object``, and torch's ``Module``, whose
# ``__init__`` raises for any argument and sets ``training`` and private state only (torch
# 2.13.0 torch/nn/modules/module.py:482-521).
PLAIN_BASES: Dict[str, FrozenSet[str]] = {
    "builtins.object": frozenset(),
    "torch.nn.Module": frozenset({"training"}),
    "torch.nn.modules.module.Module": frozenset({"training"}),
}


class Scope:
    __slots__ = ("kind", "node", "parent", "bindings", "globals", "nonlocals", "blocks", "with_depth", "stars")

    def __init__(self, kind: str, node: cst.CSTNode, parent: Optional["Scope"]):
        self.kind = kind  # module | class | function | lambda | comprehension
        self.node = node
        self.parent = parent
        self.bindings: Dict[str, List[Binding]] = {}
        self.globals: set = set()
        self.nonlocals: set = set()
        # the conditional blocks (bodies of if/else/for/while/try/except/finally/case) open
        # at the current point of the traversal, outermost first: ((body_node, is_loop), ...)
        self.blocks: Tuple[Tuple[cst.CSTNode, bool], ...] = ()
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

    def __init__(self, scope: Scope, seq: int, blocks: Tuple[Tuple[cst.CSTNode, bool], ...], with_depth: int):
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

    def shared_loop(self, other: "Site") -> Optional[cst.CSTNode]:
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

    def __init__(self, name: str, kind: str, node: Optional[cst.CSTNode], site: Site, *,
                 value: Optional[cst.BaseExpression] = None, index: Tuple[int, ...] = (),
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
_BLOCK_OWNER_TYPES = frozenset({cst.If, cst.Else, cst.For, cst.While, cst.Try, cst.TryStar, cst.ExceptHandler,
                                cst.ExceptStarHandler, cst.Finally, cst.MatchCase})
_LOOP_TYPES = frozenset({cst.For, cst.While})
_COMPREHENSIONS = frozenset({"ListComp", "SetComp", "DictComp", "GeneratorExp"})


def is_main_guard(node: cst.If, sem: "Semantic") -> bool:
    """``if __name__ == "__main__":`` (either way round), with ``__name__`` not rebound so far:
    when the file runs as a script its body runs once, unconditionally (RULES.md: it is
    straight-line code). Only at the top level of the module."""
    test = node.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or \
            not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    left, right = test.left, test.comparisons[0].comparator
    if isinstance(right, cst.Name):
        left, right = right, left
    if not (isinstance(left, cst.Name) and left.value == "__name__" and isinstance(right, cst.SimpleString)):
        return False
    try:
        if literal_value(right) != "__main__":
            return False
    except Exception:
        return False
    return "__name__" not in sem.module_scope.bindings and not sem.module_scope.stars


def _nested_mutable(literal: cst.CSTNode, depth: int) -> bool:
    """Whether a literal container holds, at *depth* or deeper (1: its own elements), an
    object that may be changed in place: a dict, list or set literal, a comprehension, a
    name or any other expression that is not a literal (it may be a list bound elsewhere)."""
    stack = [(literal, 0)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (cst.Dict, cst.List, cst.Tuple, cst.Set)):
            if d >= depth and not isinstance(node, cst.Tuple):
                return True
            for el in node.elements:
                if not isinstance(el, (cst.DictElement, cst.Element)):
                    return True  # ``**x`` / ``*x``
                stack.append((el.value, d + 1))
        elif d >= depth and isinstance(node, cst.Name):
            if node.value not in ("True", "False", "None"):
                return True
        elif d >= depth and not isinstance(node, (cst.BaseNumber, cst.BaseString, cst.BinaryOperation,
                                                   cst.UnaryOperation, cst.Comparison, cst.Ellipsis)):
            return True  # a call, an attribute, a subscript...: maybe a mutable object
    return False


_SETS_THROUGH = ("__dict__", "__setattr__", "__delattr__")


def _dunder_set_name(call: cst.Call) -> Optional[str]:
    """The attribute a ``__setattr__``/``__delattr__`` call sets, where a literal names it:
    ``object.__setattr__(obj, "WS", v)``, ``super().__setattr__("WS", v)``; None otherwise."""
    args = call.args
    if len(args) < 2 or any(a.star or a.keyword is not None for a in args):
        return None
    names = [n for n in (_literal_str(a.value) for a in args[:2]) if n is not None]
    return names[0] if len(names) == 1 else None


def _literal_attr_name(call: cst.Call) -> Optional[str]:
    """The attribute name ``setattr(obj, "name", v)``/``delattr(obj, "name")`` certainly names
    (a string literal, passed plainly by position), else None."""
    args = call.args
    if len(args) < 2 or any(a.star or a.keyword is not None for a in args):
        return None
    return _literal_str(args[1].value)


def literal_value(node: cst.CSTNode):
    """A string literal's ``evaluated_value``, without the ``SyntaxWarning`` Python 3.12 and
    later give for an invalid escape (``"Add_1\\Add_2"`` read as ``\\A``): a warning of the
    linted file's, not for the user's terminal, and one ``-W error`` would make an exception.
    Only a literal with a backslash can warn."""
    if "\\" in _literal_text(node):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return node.evaluated_value
    return node.evaluated_value


def _literal_text(node: cst.CSTNode) -> str:
    if isinstance(node, cst.ConcatenatedString):
        return _literal_text(node.left) + _literal_text(node.right)
    return getattr(node, "value", "") if isinstance(getattr(node, "value", None), str) else "\\"


def _literal_str(node: cst.CSTNode) -> Optional[str]:
    """The text of a string literal (``"a"``, ``"a" "b"``; not an f-string or bytes), else None."""
    if not isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return None
    try:
        value = literal_value(node)
    except Exception:
        return None
    return value if isinstance(value, str) else None


def _stores_object(target: cst.CSTNode) -> bool:
    """Whether assigning to *target* keeps the assigned object itself reachable there: an
    item or an attribute, but not a tensor's ``.data`` (``a.data = b`` gives ``a`` b's
    storage and shape, not b)."""
    return type(target) is cst.Subscript or (type(target) is cst.Attribute and target.attr.value != "data")


def dotted(node: cst.CSTNode) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


class Semantic:
    """The binding table of one file, and name resolution over it."""

    def __init__(self, module: cst.Module, module_name: Optional[str] = None, is_package: bool = False):
        # the file's dotted module name (``pkg.sub.mod``), when it can be told from the path
        self.module_name = module_name
        self.is_package = is_package  # an __init__.py: relative imports start at itself
        self.module_scope = Scope("module", module, None)
        self.scope = self.module_scope
        self.seq = 0
        self.scope_of: Dict[cst.CSTNode, Scope] = {module: self.module_scope}
        # ``self.<attr> = value`` in the methods of a class: class scope -> attr -> bindings
        self.attrs: Dict[Scope, Dict[str, List[Binding]]] = {}
        # every store to an attribute chain rooted at a name (``cfg.mode.value = "x"``,
        # ``cfg.debug.aclgraph.x += 1``), in source order
        self.attr_stores: List[AttrStore] = []
        self.def_site: Dict[cst.CSTNode, Site] = {}  # FunctionDef/ClassDef/Lambda -> where it stands
        self._qn_memo: Dict[int, FrozenSet[str]] = {}  # id(Binding) -> qualified names it gives
        # (id(expr), id(site)) -> (expr, site, qualified names): the checkers resolve the same
        # calls at the same sites; expr and site are kept so their ids stay theirs
        self._use_memo: Dict[Tuple[int, int], Tuple[cst.CSTNode, Site, FrozenSet[str]]] = {}
        self._last_site: Optional[Site] = None
        self.complete = False  # the traversal is over: every binding is known (Walker.walk)
        # which calls never run, or run under which branches: recorded by the traversal
        self.flows = FlowRecorder()
        # every walked node -> the statement holding it whose positions are computed alone (see
        # FileContext.span): i for ``module.body[i]``, (i, j) for the j-th statement of a
        # top-level class ``module.body[i]``
        # (keyed by id: LibCST's __hash__ is a Python call, and every node is a key; the nodes
        # live as long as the table)
        self.top_of: Dict[int, object] = {}
        # the module-level ``if __name__ == "__main__":`` statements whose body is straight-line code
        self.main_guards: set = set()
        # the bodies that may run in part or not at all although straight-line inside (the
        # main guards', skipped on import; a ``with contextlib.suppress(...):``'s, left at a
        # swallowed exception), as spans of the traversal's counter: [seq before, seq after].
        # A binding in one decides nothing read after the body (see _partly_run)
        self.partial_spans: List[List[int]] = []
        self.expecting_spans: List[List[int]] = []  # the bodies of withs that expect an exception
        self._open_spans: Dict[int, List[int]] = {}  # id(node) -> its span, while walked
        # the file imports its own module (``import pkg.a as me`` in pkg/a.py): its own
        # attribute stores (``me.X = 1``, ``setattr(me, "X", 1)``) may rebind its names
        self.imports_self = False
        # the attribute names assigned, augmented or deleted anywhere in the file (``x.ID = 1``)
        self.stored_attrs: Dict[str, int] = {}  # attribute name -> how many stores of it (any object, any form)
        self.withs: List[Tuple[cst.With, Site]] = []  # every ``with`` statement, and where it is
        self._uses = None  # see _use_table(): made on demand
        self._uses_parent: Dict[cst.CSTNode, cst.CSTNode] = {}
        self._unchanged: Dict[Tuple[str, bool, int, int, int], bool] = {}
        self._attr_uses: Dict[str, List[cst.Attribute]] = {}  # see _use_table()
        self._namespace_calls: List[cst.Call] = []  # see _use_table()
        self._set_names: FrozenSet[str] = frozenset()  # see _use_table(): setattr/delattr's literal names
        self.choices: List[cst.CSTNode] = []  # the and/or operations, conditional expressions and asserts open
        self.skippable = False  # a binding being made may not happen (see _l_named_expr)
        self._namespace_direct: FrozenSet[Optional[str]] = frozenset()  # see namespace_rebinds()
        self._makes_classes = False  # see _use_table(): ``type(name, bases, namespace)``, a class made by a call
        self._namespace: Optional[Tuple[FrozenSet[Optional[str]], FrozenSet[Optional[str]]]] = None
        # whether the file may put another object in place of a module (``sys.modules["x"] = m``):
        # False when its text has no ``sys.modules`` (FileContext); see stubbed()
        self.may_stub_modules = True
        # whether the file may reach its own namespace (``globals()``, ``vars()``, ``locals()``,
        # ``exec``, ``sys.modules``): False when its text calls none of the builtins and has no
        # ``sys.modules`` (FileContext); see namespace_changed()
        self.may_reach_namespace = True
        # whether its text calls ``globals``, ``vars``, ``locals`` or ``exec`` (FileContext); see
        # namespace_rebinds()
        self.may_rebind_namespace = True
        self._stubs: Optional[FrozenSet[Optional[str]]] = None
        self._in_place: Dict[Tuple[str, bool, int], bool] = {}  # see changed_in_place()
        self._defs: Optional[Dict[str, List[cst.FunctionDef]]] = None  # see _defs_by_name()
        self._any_change: Optional[bool] = None  # see _changes_anything()

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

    def push(self, kind: str, node: cst.CSTNode) -> None:
        scope = Scope(kind, node, self.scope)
        self.scope_of[node] = scope
        self.scope = scope

    def pop(self) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    def bind(self, name: str, kind: str, node: Optional[cst.CSTNode], *, value=None, index=(),
             qualname=None, scope: Optional[Scope] = None) -> None:
        scope = scope or self.scope
        conditional = bool(scope.blocks) or kind in ("loop", "del", "except") or self.skippable
        if scope.kind == "comprehension" and kind == "assign":  # walrus binds outside
            comp = scope
            while scope.kind == "comprehension" and scope.parent is not None:
                comp, scope = scope, scope.parent
            # it runs once per item, maybe never: the comprehension is a loop around it
            conditional = True
            blocks = scope.blocks + ((comp.node, True),)
        else:
            blocks = scope.blocks
        if self.skippable:  # a block of its own around it: it encloses no use
            blocks = blocks + ((node, False),)
        target = scope
        if name in scope.globals:
            target, conditional = self.module_scope, True
        elif name in scope.nonlocals:
            target, conditional = self._nonlocal_target(scope, name), True
        site = Site(scope, self.seq, blocks, scope.with_depth)
        b = Binding(name, kind, node, site, value=value, index=index, qualname=qualname,
                    conditional=conditional)
        target.bindings.setdefault(name, []).append(b)

    def _nonlocal_target(self, scope: Scope, name: str) -> Scope:
        """The function scope a ``nonlocal`` *name* of *scope* rebinds: as Python chooses over
        the whole body, the nearest enclosing function that binds the name anywhere in it
        (also after the nested function: ``def set_ws(): nonlocal ws`` before ``ws = 3``);
        never the module (``nonlocal`` cannot name a global)."""
        s = scope.parent
        nearest = None
        while s is not None:
            if s.kind in ("function", "lambda"):
                if name in s.bindings or _binds_anywhere(s.node, name):
                    return s
                nearest = nearest or s
            s = s.parent
        return nearest or self.module_scope

    def bind_target(self, target: cst.BaseExpression, kind: str, node, value=None, index=()) -> None:
        if isinstance(target, cst.Name):
            self.bind(target.value, kind, node, value=value, index=index)
        elif isinstance(target, (cst.Tuple, cst.List)):
            starred = any(isinstance(el.value, cst.StarredElement) or isinstance(el, cst.StarredElement)
                          for el in target.elements)
            for i, el in enumerate(target.elements):
                inner = el.value if not isinstance(el, cst.StarredElement) else el.value
                self.bind_target(inner, "other" if starred else kind, node, value=value,
                                 index=index + (i,))
        elif isinstance(target, cst.StarredElement):
            self.bind_target(target.value, "other", node)
        # attributes and subscripts bind no name

    def self_class(self, scope: Scope, name: str) -> Optional[Scope]:
        """The class whose instance *name* is, if *name* is the first parameter of a method
        that *scope* belongs to (``self`` inside ``def f(self)`` of ``class C``)."""
        fn = scope.enclosing_function()
        if fn is None or fn.kind != "function" or fn.parent is None or fn.parent.kind != "class":
            return None
        params = fn.node.params
        first = (params.posonly_params or params.params or (None,))[0]
        if first is None or first.name.value != name:
            return None
        if any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in fn.node.decorators):
            return None
        return fn.parent

    def bind_attribute(self, target: cst.Attribute, kind: str, node, value=None) -> None:
        self.stored_attrs[target.attr.value] = self.stored_attrs.get(target.attr.value, 0) + 1
        chain = dotted(target)
        if chain is not None:
            root, *path = chain.split(".")
            self.attr_stores.append(AttrStore(root, tuple(path), value, kind, node, target, self.site()))
        if not isinstance(target.value, cst.Name):
            return
        cls = self.self_class(self.scope, target.value.value)
        if cls is None:
            return
        site = self.site()
        b = Binding(target.attr.value, kind, node, site, value=value, conditional=bool(site.blocks))
        self.attrs.setdefault(cls, {}).setdefault(target.attr.value, []).append(b)

    def attribute_bindings(self, expr: cst.Attribute, site: Site) -> Tuple[List[Binding], bool]:
        """Assignments to ``self.<attr>`` (in any method of the class, and the class body),
        and whether exactly one exists."""
        if not isinstance(expr.value, cst.Name):
            return [], False
        cls = self.self_class(site.scope, expr.value.value)
        if cls is None:
            return [], False
        bl = list(self.attrs.get(cls, {}).get(expr.attr.value, ())) + list(cls.bindings.get(expr.attr.value, ()))
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
        partly: Optional[Binding] = None
        for b in reversed(before):
            cands.append(b)
            if b.site.scope is scope and b.site.encloses(site):
                if not self._partly_run(b.site.seq, site.seq):
                    dominator = b
                    break
                partly = partly or b
        if dominator is None and partly is not None and cands == [partly]:
            # the only binding before the use, in a body that may stop early: where it does, the
            # name is unbound at the use (NameError), so where the use runs, the binding ran
            dominator = partly
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

    @property
    def own_stores_elsewhere(self) -> Optional[str]:
        """The module whose file :meth:`npulint.modules.RunModules.touched` may leave out
        when asked about this module's names: this one, whose stores it reads itself, unless
        the file imports its own module (``import pkg.a as me; me.X = 1`` in pkg/a.py), and
        then a store through any name may be to its globals."""
        return None if self.imports_self else self.module_name

    def open_partial(self, node: cst.CSTNode) -> List[int]:
        """The body of *node* starts here and may run in part or not at all (see
        :attr:`partial_spans`); its span, closed by :meth:`close_partial`."""
        span = self._open_spans[id(node)] = [self.seq, 1 << 62]
        self.partial_spans.append(span)
        return span

    def expects_raise(self, seq: int) -> bool:
        """Whether the point *seq* is in the body of a ``with`` that expects an exception there
        (``pytest.raises``, ``self.assertRaises``...: a test of the raise a rule would report)."""
        return any(start < seq <= end for start, end in self.expecting_spans)

    def close_partial(self, node: cst.CSTNode) -> None:
        span = self._open_spans.pop(id(node), None)
        if span is not None:
            span[1] = self.seq

    def _partly_run(self, seq: int, use: int) -> bool:
        """Whether the point *seq* is in a body that may run in part or not at all (an
        ``if __name__ == "__main__":``'s, skipped when the file is imported; a ``with
        contextlib.suppress(...):``'s, left at a swallowed exception) that the point *use* is
        not in: straight-line code inside, but one possibility after it."""
        for start, end in self.partial_spans:
            if start < seq <= end and not start < use <= end:
                return True
        return False

    def qualnames(self, expr: cst.CSTNode, site: Site, _depth: int = 0) -> FrozenSet[str]:
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

    def _qualnames(self, expr: cst.CSTNode, site: Site, _depth: int) -> FrozenSet[str]:
        if _depth > 20:
            return frozenset()
        if isinstance(expr, cst.Attribute):
            base = self.qualnames(expr.value, site, _depth + 1)
            out = set()
            for q in base:
                q = LOCAL if q == LOCAL else f"{q}.{expr.attr.value}"
                out.add(q if q == LOCAL else LOCAL if self.may_stub_modules and self.stubbed(q) else canonical(q))
            return frozenset(out)
        if not isinstance(expr, cst.Name):
            return frozenset()
        name = expr.value
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
            if not b.qualname:
                return self._IN_PROGRESS
            if self.may_stub_modules and self.stubbed(b.qualname):
                return frozenset({LOCAL})  # the import may bind the file's stand-in
            if self.may_rebind_namespace and b.site.scope is self.module_scope and self.namespace_rebinds(b.name):
                # rebound by name where no binding shows it (``globals()["hccl_ops"] = myops``)
                return frozenset({LOCAL, canonical(b.qualname) if _modules.active() is not None else b.qualname})
            return frozenset({canonical(b.qualname) if _modules.active() is not None else b.qualname})
        if b.kind != "assign" or b.index:
            return frozenset({LOCAL})
        value = b.value
        if isinstance(value, cst.Name) and value.value == "None" and not self.reaching("None", b.site)[0]:
            return frozenset()  # ``x = None`` as an import fallback: calling it would fail anyway
        if not isinstance(value, (cst.Name, cst.Attribute)):
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

    def qualname_of_def(self, node: cst.CSTNode) -> Optional[str]:
        """``module.Class``, ``module.Class.method``, or, like Python's ``__qualname__``,
        ``module.func.<locals>.Class`` for a def or class in this file (the module name is
        ``<file>`` when it cannot be told from the path: such names never match an import)."""
        parts = [node.name.value]
        site = self.def_site.get(node)
        scope = site.scope if site is not None else None
        while scope is not None and scope.kind != "module":
            if scope.kind == "class":
                parts.append(scope.node.name.value)
            elif scope.kind == "function":
                parts.extend(["<locals>", scope.node.name.value])
            else:
                return None  # a lambda or comprehension
            scope = scope.parent
        return ".".join([self.module_name or "<file>"] + list(reversed(parts)))

    def certain_binding(self, expr: cst.CSTNode, site: Site) -> Optional["Binding"]:
        """The one binding a Name or ``self.<attr>`` certainly refers to at *site*."""
        if isinstance(expr, cst.Name):
            cands, exact = self.reaching(expr.value, site)
            return cands[0] if exact else None
        if isinstance(expr, cst.Attribute):
            bl, exact = self.attribute_bindings(expr, site)
            return bl[0] if exact else None
        return None

    def bound_expr(self, expr: cst.CSTNode, site: Site, _depth: int = 0) -> Tuple[cst.CSTNode, Site]:
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

    def opaque_attribute_stores(self, target: cst.CSTNode, node) -> None:
        """Attribute chains changed without a plain value: inside tuple/list/starred targets,
        ``for``/``with ... as`` targets, ``del a.b``. Recorded with kind "opaque"."""
        if isinstance(target, cst.Attribute):
            self.stored_attrs[target.attr.value] = self.stored_attrs.get(target.attr.value, 0) + 1
            chain = dotted(target)
            if chain is not None:
                root, *path = chain.split(".")
                self.attr_stores.append(AttrStore(root, tuple(path), None, "opaque", node, target, self.site()))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self.opaque_attribute_stores(el.value, node)
        elif isinstance(target, (cst.StarredElement, cst.Element)):
            self.opaque_attribute_stores(target.value, node)

    # -- class attributes and literal containers (values.Evaluator) -------------------
    def class_attribute(self, expr: cst.Attribute, site: Site) -> Optional["Binding"]:
        """The one binding of ``C.attr`` (``C`` certainly a class of this file) or of
        ``self.attr``/``cls.attr`` in a method, when ``attr`` is bound once, unconditionally,
        in the class body and assigned nowhere else in the file: no ``x.attr = ...``
        (``+=``, ``del``) on any object, no ``setattr``, and, for ``self``/``cls``, no other
        class of the file binding it (a subclass may override it)."""
        attr = expr.attr.value
        if attr in self.stored_attrs or not isinstance(expr.value, cst.Name):
            return None
        base = expr.value
        cls = None
        via_self = False
        b = self.certain_binding(base, site)
        if b is not None and b.kind == "class":
            cls = self.scope_of.get(b.node)
        elif b is None or b.kind == "param":
            cls = self.self_class(site.scope, base.value)
            via_self = True
        if cls is None or cls.kind != "class" or cls.stars:
            return None
        bl = cls.bindings.get(attr)
        if not bl or len(bl) != 1 or bl[0].conditional or bl[0].kind != "assign" or bl[0].site.scope is not cls:
            return None
        table = self._use_table()
        if table[1]:  # setattr/delattr of a computed name, vars(), globals(): attributes may change unseen
            return None
        if attr in self._set_names:  # ``setattr(Pool, "ID", 4)``, on any object
            return None
        if not via_self and b.site.scope is self.module_scope and self.namespace_changed(base.value)[0]:
            return None  # the class's name rebound unseen (``setattr(sys.modules[__name__], "Pool", P)``)
        if via_self and sum(1 for s in set(self.scope_of.values()) if s.kind == "class" and attr in s.bindings) != 1:
            return None
        if (via_self and self._makes_classes) or self._class_body_unsure(cls, attr):
            # ``Par(world_size=8).world_size`` of a dataclass is 8, its class body says 1; a
            # NamedTuple's ``Par.world_size`` is a field's getter, an Enum's ``E.A`` a member
            return None
        # another module of the run: ``C.attr = v`` (``setattr``...), or, for ``self``/``cls``,
        # a class body binding it (a subclass in another module may override it)
        run = _modules.active()
        if run is not None and run.files and run.touched(attr, "class" if via_self else "store", self.module_name):
            return None
        return bl[0]

    def _class_body_unsure(self, cls: Scope, attr: str, depth: int = 0) -> bool:
        """Whether the class *cls* or its instances may hold, for *attr* (which its class body
        binds), another value than that binding's, set where npulint does not see it: a
        decorator (``@dataclass``, ``@attrs.define``: the generated ``__init__`` stores each
        field's argument on the instance), a ``metaclass=`` or other class keyword, or a base
        that is neither a plain class of this file nor one of :data:`PLAIN_BASES` (``object``)
        (``NamedTuple`` and ``Enum`` replace the class attributes; pydantic's ``BaseModel``, a
        library's base whose ``__init__`` sets attributes), also through the file's own bases."""
        node = cls.node
        if not isinstance(node, cst.ClassDef) or node.decorators or node.keywords or depth > 20:
            return True
        where = self._class_site(cls) if node.bases else None
        for arg in node.bases:
            if arg.star or where is None:
                return True
            plain = self.resolve(arg.value, where, PLAIN_BASES)
            if plain is not None:
                if attr in PLAIN_BASES[plain]:
                    return True
                continue
            b = self.certain_binding(arg.value, where) if isinstance(arg.value, cst.Name) else None
            parent = self.scope_of.get(b.node) if b is not None and b.kind == "class" else None
            if parent is None or parent.kind != "class" or self._class_body_unsure(parent, attr, depth + 1):
                return True
        return False

    def _class_site(self, cls: Scope) -> Optional[Site]:
        """Where the ``class`` statement of *cls* binds its name (its bases are evaluated there)."""
        if cls.parent is None:
            return None
        for b in cls.parent.bindings.get(cls.node.name.value, ()):
            if b.node is cls.node:
                return b.site
        return None

    def attribute_stored_once(self, attr: str) -> bool:
        """Whether the attribute name *attr* is assigned exactly once in this file (on any
        object: ``x.attr = v``, ``+=``, ``del``, a tuple or ``for`` target) and nowhere else:
        no ``setattr``/``delattr`` of it or of a computed name, ``vars()``, and no store of it in
        another module of the run. Then the one store is what the attribute holds, wherever the
        object is."""
        return self.attribute_stored_only(attr, 1)

    def attribute_stored_only(self, attr: str, count: int) -> bool:
        """Whether the attribute name *attr* is assigned exactly *count* times in this file (as
        :meth:`attribute_stored_once` counts) and nowhere else: when the caller has seen
        *count* stores of it, those are all that the attribute may hold."""
        if self.stored_attrs.get(attr) != count:
            return False
        table = self._use_table()
        if table[1] or attr in self._set_names:
            return False
        run = _modules.active()
        return not (run is not None and run.files and run.touched(attr, "store", self.module_name))

    _READING = frozenset({"get", "keys", "values", "items", "copy", "index", "count"})
    _READERS = frozenset({"len", "print", "sorted", "str", "repr", "isinstance", "bool", "any", "all", "max", "min",
                          "sum", "tuple", "frozenset", "set", "list", "dict", "enumerate", "zip", "iter", "reversed",
                          "hash", "id", "type", "format"})

    def container_unchanged(self, name: str, literal: cst.CSTNode, module_level: bool = False,
                            use: Optional[cst.Name] = None, within: Optional[cst.CSTNode] = None) -> bool:
        """Whether the literal dict/list bound to *name* is never changed in place: every use
        of the name anywhere in the file reads it (an item or slice read, ``in``, iteration,
        ``len(...)`` and other readers, ``.get/.keys/.values/.items/.copy/.index/.count``).
        An item store or ``del``, any other method, passing it to another function, aliasing
        or returning it count as changes; so does letting an element escape when an element
        is itself a mutable literal. *use*, the use whose value is asked (the whole
        container, ``torch.randn(shape)``), does not count: it is not a change before itself.
        *within*: the function whose local the name is (its uses elsewhere name other
        variables)."""
        key = (name, module_level, id(literal), id(use), id(within))  # (the nodes live as long as the tree)
        hit = self._unchanged.get(key)
        if hit is not None:
            return hit
        uses, _ = self._use_table()
        ok = True
        leak = None  # the least depth of the elements that escape
        for node in uses.get(name, ()):
            if node is use or (within is not None and not self._inside(node, within)):
                continue
            verdict = self._use_verdict(node)
            if verdict is False:
                ok = False
                break
            if verdict is not True:
                leak = verdict if leak is None else min(leak, verdict)
        if ok and module_level and self.namespace_changed(name)[1]:
            ok = False  # ``globals()["CFG"] = {...}``, ``exec(...)``: rebound or changed unseen
        if ok and module_level:
            # another module of the run may change it (``a.SIZES["k"] = v``, ``from a import
            # SIZES; SIZES.update(...)``) or let its items escape
            run = _modules.active()
            if run is not None and run.files:
                if run.touched(name, "container", self.own_stores_elsewhere):
                    ok = False
                elif run.touched(name, "element", self.own_stores_elsewhere):
                    leak = 1
        if ok and leak is not None and _nested_mutable(literal, leak):
            ok = False
        self._unchanged[key] = ok
        return ok

    def _inside(self, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
        parent = self._uses_parent
        p = parent.get(node)
        while p is not None and p is not ancestor:
            p = parent.get(p)
        return p is ancestor

    def _use_verdict(self, x: cst.Name):
        """True: a read of the container; a number d: a read that lets the elements at
        depth d (1: the container's own elements) escape, with what they hold; False: a
        change, or the container itself escapes."""
        parent = self._uses_parent
        cur, depth = x, 0
        p = parent.get(cur)
        while type(p) is cst.Subscript and p.value is cur:
            cur, depth, p = p, depth + 1, parent.get(p)
        # a target? (climbing out of tuple/list targets)
        t, tp = cur, p
        while type(tp) in (cst.Element, cst.StarredElement, cst.Tuple, cst.List):
            t, tp = tp, parent.get(tp)
        if (type(tp) in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.Del)
                and getattr(tp, "target", None) is t) or (type(tp) is cst.AsName and tp.name is t):
            # the name itself bound (reaching() sees that), or an item of it stored or deleted
            return True if depth == 0 else False
        if depth:
            if type(p) is cst.Attribute and p.value is cur:
                return depth if p.attr.value in self._READING else False
            return depth
        if type(p) is cst.Attribute and p.value is cur:
            return (1 if p.attr.value in ("get", "values", "items", "copy") else True) \
                if p.attr.value in self._READING else False
        if type(p) is cst.Arg and p.value is cur:
            call = parent.get(p)
            if type(call) is cst.Call and type(call.func) is cst.Name and call.func.value in self._READERS:
                return 1
            return False
        if type(p) in (cst.ComparisonTarget, cst.Comparison, cst.FormattedStringExpression, cst.Expr):
            return True
        if type(p) in (cst.For, cst.CompFor) and p.iter is cur:
            return 1
        return False

    def _use_table(self):
        """Every ``Name`` the file evaluates, by identifier (and each node's parent), and
        whether it calls ``setattr``/``delattr``/``vars``/``globals``: one walk of the tree,
        made the first time a class attribute or a container element is asked about."""
        if self._uses is None:
            uses: Dict[str, List[cst.Name]] = {}
            attr_uses: Dict[str, List[cst.Attribute]] = {}
            namespace_calls: List[cst.Call] = []
            parent: Dict[cst.CSTNode, cst.CSTNode] = {}
            dynamic = False
            makes_classes = False
            set_names: Set[str] = set()
            stack: List[cst.CSTNode] = [self.module_scope.node]
            while stack:
                node = stack.pop()
                cls = type(node)
                if cls is cst.Name:
                    uses.setdefault(node.value, []).append(node)
                    continue
                if cls is cst.Attribute:
                    attr_uses.setdefault(node.attr.value, []).append(node)
                    if node.attr.value in _SETS_THROUGH:
                        # ``self.__dict__.update(cfg)``, ``object.__setattr__(self, k, v)``:
                        # attributes set by names we do not read (a literal one: that one)
                        up = parent.get(node)
                        name = _dunder_set_name(up) if node.attr.value != "__dict__" and type(up) is cst.Call \
                            and up.func is node else None
                        if name is not None:
                            set_names.add(name)
                        else:
                            dynamic = True
                if cls is cst.Call and type(node.func) is cst.Name and node.func.value == "type" and len(node.args) >= 3:
                    makes_classes = True  # a subclass made so may override any class attribute
                if cls is cst.Call and type(node.func) is cst.Name and node.func.value in (
                        "setattr", "delattr", "vars", "globals", "exec", "locals"):
                    name = _literal_attr_name(node) if node.func.value in ("setattr", "delattr") else None
                    if name is not None:
                        set_names.add(name)  # ``setattr(args, "seq_len", v)`` changes that attribute only
                    elif node.func.value != "locals":
                        dynamic = True
                    if node.func.value == "exec" or (node.func.value != "setattr" and node.func.value != "delattr"
                                                     and not node.args):
                        namespace_calls.append(node)  # see namespace_changed()
                order = _FIELD_ORDER.get(cls)
                if order is None:
                    order = _field_order(cls)
                if order is False:
                    dynamic = True  # a node we cannot read: assume the worst
                    continue
                skipped = _IDENTIFIER_FIELDS.get(cls, ())
                for fname, _ in order:
                    if fname in skipped:
                        continue
                    value = getattr(node, fname)
                    if type(value) is tuple or type(value) is list:
                        for child in value:
                            if isinstance(child, cst.CSTNode) and type(child) not in _INERT:
                                parent[child] = node
                                stack.append(child)
                    elif isinstance(value, cst.CSTNode) and type(value) not in _INERT:
                        parent[value] = node
                        stack.append(value)
            self._uses_parent = parent
            self._attr_uses = attr_uses
            self._namespace_calls = namespace_calls
            self._set_names = frozenset(set_names)
            self._makes_classes = makes_classes
            self._uses = (uses, dynamic)
        return self._uses

    def namespace_changed(self, name: str) -> Tuple[bool, bool]:
        """Whether the module-level *name* may be rebound by name, unseen
        (``globals()["NAME"] = v``, any other store through ``globals()``, or
        ``vars()``/``locals()`` at the top level, which are ``globals()``; ``.update(...)``,
        passing it on; ``exec`` but with a globals dict of its own (``exec(code, {})``); a use of ``sys.modules`` other than a plain read such as
        ``k in sys.modules`` or a read of another module, ``sys.modules["tensorflow"]``,
        ``sys.modules.get("horovod")``: ``setattr(sys.modules[__name__], "NAME", v)``), and whether the object it
        holds may escape by name (``x = globals()["NAME"]``). Reading (``globals()[k]``,
        ``.get``, ``k in globals()``) changes nothing."""
        if self._namespace is None and not self.may_reach_namespace:
            self._namespace = (frozenset(), frozenset())  # (no walk: nothing can reach it)
        if self._namespace is None:
            self._use_table()
            rebound: Set[Optional[str]] = set()  # None: any name
            escaped: Set[Optional[str]] = set()
            direct: Set[Optional[str]] = set()  # see namespace_rebinds
            for node in self._namespace_calls:
                if type(node.func) is cst.Name and node.func.value == "exec":
                    if not self._exec_confined(node):
                        rebound.add(None)
                        direct.add(None)  # (in a function too: its code may say ``global``)
                    continue
                verdict = self._use_verdict(node)
                if verdict is True:
                    continue
                key = None
                p = self._uses_parent.get(node)
                if type(p) is cst.Subscript and p.value is node and len(p.slice) == 1 and \
                        isinstance(p.slice[0].slice, cst.Index) and type(p.slice[0].slice.value) is cst.SimpleString:
                    key = literal_value(p.slice[0].slice.value)  # globals()["NAME"]...
                    key = key if isinstance(key, str) else None
                (rebound if verdict is False else escaped).add(key)
                if verdict is False and (node.func.value == "globals" or self._at_top_level(node)):
                    direct.add(key)  # (a function's or class's locals()/vars() is not the module's)
            self._namespace_direct = frozenset(direct)
            for a in self._attr_uses.get("modules", ()):
                if type(a.value) is cst.Name and a.value.value == "sys" and self._use_verdict(a) is not True \
                        and not self._other_module_read(a):
                    rebound.add(None)  # a module object (``sys.modules[__name__]``) may reach setattr
            self._namespace = (frozenset(rebound), frozenset(escaped))
        rebound, escaped = self._namespace
        hit = None in rebound or name in rebound
        return hit, hit or None in escaped or name in escaped

    def _at_top_level(self, node: cst.CSTNode) -> bool:
        """Whether *node* (a node of the use table) runs in the module's own namespace: not in
        a function, lambda or class body."""
        parent = self._uses_parent
        n = parent.get(node)
        while n is not None:
            if type(n) in (cst.FunctionDef, cst.Lambda, cst.ClassDef):
                return False
            n = parent.get(n)
        return True

    def namespace_rebinds(self, name: str) -> bool:
        """Whether the module-level *name* may be rebound through the namespace dict
        (``globals()["hccl_ops"] = myops``, ``globals().update(...)``, ``exec``; ``vars()`` and
        ``locals()`` at the top level): :meth:`namespace_changed` without its reading of
        ``sys.modules``, whose uses (a stand-in, ``sys.modules[__name__].VERSION = 1``)
        :meth:`stubbed` judges for imports, and without a function's ``locals()``."""
        self.namespace_changed(name)
        direct = self._namespace_direct
        return None in direct or name in direct

    def _exec_confined(self, call: cst.Call) -> bool:
        """Whether ``exec(code, ns)`` runs with a globals dict of its own: a literal dict, a
        ``dict(...)``, or a name only ever bound so in the file (``ns = {}``), none of which
        can hold ``globals()``, ``vars()``, ``locals()``, a ``__dict__`` or ``sys.modules``
        (those reach through ``globals()``, ``sys.modules``, ... in namespace_changed too)."""
        ns = None
        for i, a in enumerate(call.args):
            if a.star:
                return False
            if (a.keyword is None and i == 1) or (a.keyword is not None and a.keyword.value == "globals"):
                ns = a.value
        if ns is None:
            return False
        if type(ns) is cst.Name:
            bl = [b for b in self.all_bindings() if b.name == ns.value]
            return bool(bl) and all(b.kind == "assign" and not b.index and b.value is not None
                                    and type(b.value) is not cst.Name and self._own_dict(b.value) for b in bl)
        return self._own_dict(ns)

    def _own_dict(self, expr: cst.CSTNode) -> bool:
        """A literal dict or a ``dict(...)`` call that names no namespace (see _exec_confined)."""
        if type(expr) is cst.Call:
            if type(expr.func) is not cst.Name or expr.func.value != "dict":
                return False
        elif type(expr) is not cst.Dict:
            return False
        stack = [expr]
        while stack:
            node = stack.pop()
            if type(node) is cst.Name and node.value in ("globals", "vars", "locals", "sys"):
                return False
            if type(node) is cst.Attribute and node.attr.value == "__dict__":
                return False
            stack.extend(node.children)
        return True

    def stubbed(self, qualname: str) -> bool:
        """Whether the module *qualname* names (or one it is in) may be another object in this
        file: it puts one in its place, or changes it, through ``sys.modules``
        (``sys.modules["torch_npu"] = MagicMock()``, a test's stand-in; ``del``, an attribute of
        the item set; a key or a use that is not certain: any module). Its imports in this file
        may then bind that object, never the API (whatever the order: not followed)."""
        if self._stubs is None:
            stubs: Set[Optional[str]] = set()
            self._use_table()
            for a in self._attr_uses.get("modules", ()):
                if type(a.value) is cst.Name and a.value.value == "sys" and self._use_verdict(a) is False:
                    stubs.update(self._stub_keys(a))
            self._stubs = frozenset(stubs)
        if not self._stubs:
            return False
        return any(k is None or qualname == k or qualname.startswith(k + ".") for k in self._stubs)

    def _stub_keys(self, a: cst.Attribute) -> Set[Optional[str]]:
        """The modules a use of ``sys.modules`` (*a*) that is not a read may put an object in
        place of, or change: a literal key's (``sys.modules["x"] = m``, ``.setdefault("x", m)``,
        a literal dict's keys in ``.update({...})`` or ``mock.patch.dict(sys.modules, {...})``,
        the keywords of ``mock.patch.dict(sys.modules, x=m)``, the literal strings passed beside
        it, as to ``monkeypatch.setitem(sys.modules, "x", m)``), none for this module's own item
        (``sys.modules[__name__]``) and for a removal (``.pop``, ``del``), and any (None) for
        another use: a helper's ``sys.modules[name] = m`` may be given any name."""
        parent = self._uses_parent
        p = parent.get(a)
        keys: Optional[Set[Optional[str]]] = None
        if type(p) is cst.Subscript and p.value is a:
            if type(parent.get(p)) is cst.Del:
                return set()  # removed: an import loads the module again
            if len(p.slice) == 1 and isinstance(p.slice[0].slice, cst.Index):
                k = p.slice[0].slice.value
                if type(k) is cst.Name and k.value == "__name__":
                    return set()
                name = _literal_str(k)
                keys = {name} if name is not None else None
        elif type(p) is cst.Attribute and p.value is a:
            if p.attr.value in _modules.MODULES_KEEPING:
                return set()
            call = parent.get(p)
            if type(call) is cst.Call and call.func is p and call.args and not call.args[0].star:
                if p.attr.value == "setdefault":
                    name = _literal_str(call.args[0].value)
                    keys = {name} if name is not None else None
                elif p.attr.value == "update":
                    keys = _literal_keys(call.args[0].value)
        elif type(p) is cst.Arg:
            # mock.patch.dict(sys.modules, {"x": m}) or (..., x=m), monkeypatch.setitem(sys.modules, "x", m)
            call = parent.get(p)
            if type(call) is cst.Call:
                others = [arg for arg in call.args if arg is not p]
                if others and all(arg.star == "" for arg in others):
                    found: Set[Optional[str]] = set()
                    for arg in others:
                        if arg.keyword is not None:
                            found.add(arg.keyword.value)
                        elif type(arg.value) is cst.Dict:
                            found |= _literal_keys(arg.value) or {None}
                        elif _literal_str(arg.value) is not None:
                            found.add(_literal_str(arg.value))
                    keys = found or None
        return keys if keys is not None else {None}

    def _other_module_read(self, a: cst.Attribute) -> bool:
        """Whether ``sys.modules`` (*a*) is used here only for another module than this one, by
        a literal key that cannot name this module (its name, its last part, ``__main__``):
        ``sys.modules["tensorflow"]``, ``sys.modules.get("horovod")``, and also a store or a
        ``del`` of such an item (a test's stub, ``sys.modules["torch_npu"] = fake``), which binds
        nothing in this module's namespace (what it does to imports is resolution's:
        :mod:`npulint.modules`)."""
        parent = self._uses_parent
        p = parent.get(a)
        if type(p) is cst.Subscript and p.value is a:
            if len(p.slice) != 1 or not isinstance(p.slice[0].slice, cst.Index):
                return False
            key = p.slice[0].slice.value
        elif type(p) is cst.Attribute and p.value is a and p.attr.value == "get":
            call = parent.get(p)
            if type(call) is not cst.Call or call.func is not p or not call.args or call.args[0].star or \
                    call.args[0].keyword is not None:
                return False
            key = call.args[0].value
        else:
            return False
        name = _literal_str(key)
        if name is None or self.module_name is None:
            return False
        ours = self.module_name
        return name not in ("__main__", ours) and name.split(".")[-1] != ours.split(".")[-1]

    def changed_in_place(self, name: str, attribute: bool = False, within: Optional[cst.CSTNode] = None) -> bool:
        """Whether the object a name (with *attribute*: an attribute of that name, on any
        object: ``self.buf``, ``C.buf``) holds may be changed in place in a way that changes a
        tensor's shape, dtype or layout, anywhere in the file: it is the receiver of an
        in-place method (``buf.resize_(...)``, ``b.squeeze_(0)``, ``c.t_()``: PyTorch names
        them with a trailing ``_``) other than those that only write values
        (:data:`_VALUE_ONLY_INPLACE`), an attribute of it is assigned, augmented or deleted
        (``a.data = a.data.half()``) other than :data:`_VALUE_ONLY_ATTRS`, it is passed
        to ``setattr``/``delattr``, as a call's ``out=`` (``torch.cat(ts, out=buf)``) or to a
        parameter that a function of this file changes so (:meth:`_helper_changes`); or so
        is a plain alias of it (``b = buf``). *within*: the function whose local the name is
        (its uses elsewhere name other variables)."""
        key = (name, attribute, id(within))  # (the nodes live as long as the tree)
        hit = self._in_place.get(key)
        if hit is None:
            self._in_place[key] = False  # an alias cycle (a = b; b = a) adds nothing
            uses, _ = self._use_table()
            nodes = self._attr_uses.get(name, ()) if attribute else uses.get(name, ())
            hit = self._in_place[key] = any(self._changes_receiver(n, within) for n in nodes
                                            if within is None or self._inside(n, within))
        return hit

    def _changes_receiver(self, node: cst.CSTNode, within: Optional[cst.CSTNode] = None) -> bool:
        parent = self._uses_parent
        p = parent.get(node)
        if self._held_elsewhere(node, p) and self._changes_anything():
            return True  # ``holder.buf = x; holder.buf.resize_(...)``, ``for b in [x, w]: b.resize_(...)``
        if type(p) is cst.Assign and p.value is node:  # an alias (``b = buf``) changed in place
            return any(type(t.target) is cst.Name and self.changed_in_place(t.target.value, within=within)
                       for t in p.targets)
        if type(p) is cst.Attribute and p.value is node:
            attr = p.attr.value
            up = parent.get(p)
            if type(up) is cst.Call and up.func is p:
                return attr.endswith("_") and not attr.endswith("__") and attr not in _VALUE_ONLY_INPLACE
            # (``x.data.resize_(...)``, ``x.detach().squeeze_(0)`` leave x alone: PyTorch does not let
            # a tensor made by .data or .detach() change its sizes, strides or storage, and raises)
            return self._is_store_target(p) and attr not in _VALUE_ONLY_ATTRS
        # ``out=x``, ``out=(values, indices)``: the call writes its result there, resizing it
        arg, ap = node, p
        while type(ap) in (cst.Element, cst.Tuple, cst.List):
            arg, ap = ap, parent.get(ap)
        if type(ap) is cst.Arg and ap.value is arg and ap.keyword is not None and ap.keyword.value == "out":
            return True
        if type(p) is cst.Arg and p.value is node:
            call = parent.get(p)
            if type(call) is not cst.Call:
                return False
            if type(call.func) is cst.Name and call.func.value in ("setattr", "delattr"):
                return bool(call.args) and call.args[0] is p
            return self._helper_changes(call, p)
        return False

    _STORING = frozenset({"append", "appendleft", "insert", "extend", "extendleft", "add", "setdefault", "update",
                          "put", "put_nowait"})

    def _held_elsewhere(self, node: cst.CSTNode, p) -> bool:
        """Whether the object *node* evaluates to may be reached through another reference than
        a plain name: stored in an attribute or an item (``holder.buf = x``, ``d["k"] = x``),
        put in a container (``bufs.append(x)``), or an element of a literal container that is
        bound, stored, extended with or iterated (``bufs = [x, w]``, ``for b in (x, w)``)."""
        parent = self._uses_parent
        held, hp = node, p
        while type(hp) in (cst.Element, cst.StarredElement, cst.DictElement, cst.Tuple, cst.List, cst.Set,
                           cst.Dict):
            held, hp = hp, parent.get(hp)
        in_literal = held is not node
        tp = type(hp)
        if tp is cst.Assign and hp.value is held:
            return in_literal or any(_stores_object(t.target) for t in hp.targets)
        if tp is cst.AnnAssign and hp.value is held:
            return in_literal or _stores_object(hp.target)
        if tp in (cst.AugAssign, cst.NamedExpr) and hp.value is held:
            return in_literal
        if tp in (cst.For, cst.CompFor) and hp.iter is held:
            return in_literal
        if tp is cst.Arg and hp.value is held:
            call = parent.get(hp)
            return type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value in self._STORING
        return False

    def _changes_anything(self) -> bool:
        """Whether the file may change some tensor's shape, dtype or layout in place through
        a reference other than a plain name: it calls a method that may (``.resize_(...)`` on
        any receiver), passes ``out=``, stores a ``.data`` or calls ``setattr``/``delattr``."""
        if self._any_change is None:
            self._use_table()
            parent = self._uses_parent
            hit = False
            for attr, nodes in self._attr_uses.items():
                if attr == "data":
                    hit = any(self._is_store_target(n) for n in nodes)
                elif attr.endswith("_") and not attr.endswith("__") and attr not in _VALUE_ONLY_INPLACE:
                    hit = any(type(parent.get(n)) is cst.Call and parent.get(n).func is n for n in nodes)
                if hit:
                    break
            if not hit:
                uses = self._uses[0]
                hit = bool(uses.get("setattr") or uses.get("delattr")) or any(
                    type(n) is cst.Arg and n.keyword is not None and n.keyword.value == "out" for n in parent)
            self._any_change = hit
        return self._any_change

    def _is_store_target(self, attr: cst.Attribute) -> bool:
        """Whether the attribute *attr* is assigned, augmented or deleted (climbing out of
        tuple/list targets)."""
        parent = self._uses_parent
        t, tp = attr, parent.get(attr)
        while type(tp) in (cst.Element, cst.StarredElement, cst.Tuple, cst.List):
            t, tp = tp, parent.get(tp)
        return (type(tp) in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.Del)
                and getattr(tp, "target", None) is t) or (type(tp) is cst.AsName and tp.name is t)

    def _helper_changes(self, call: cst.Call, arg: cst.Arg) -> bool:
        """Whether *arg* of *call* may reach a parameter that a function of this file changes in
        place (``def pad(t, m): t.resize_(m, 512)``, then ``pad(x, 128)``): every def of the
        called name counts (``f(x)``: any def named ``f``; ``obj.f(x)``: any def named ``f``,
        a method's first parameter being its receiver), so a def the name may not reach only
        makes more tensors unknown. An argument unpacked with ``*``/``**``, or one that lands
        in a def's ``*args``/``**kwargs``, is not followed."""
        func = call.func
        if type(func) is cst.Name:
            name, via_attr = func.value, False
        elif type(func) is cst.Attribute:
            name, via_attr = func.attr.value, True
        else:
            return False
        defs = self._defs_by_name().get(name)
        if not defs or arg.star:
            return False
        keyword = arg.keyword.value if arg.keyword is not None else None
        position: Optional[int] = 0
        if keyword is None:
            for a in call.args:
                if a is arg:
                    break
                if a.star:
                    position = None  # after ``*xs``: any positional parameter
                    break
                if a.keyword is None:
                    position += 1
        for fn in defs:
            ps = fn.params
            positional = list(ps.posonly_params) + list(ps.params)
            if keyword is not None:
                targets = [q for q in list(ps.params) + list(ps.kwonly_params) if q.name.value == keyword]
            elif position is None:
                targets = positional
            else:
                site = self.def_site.get(fn)
                shift = 1 if via_attr and site is not None and site.scope.kind == "class" and not any(
                    type(d.decorator) is cst.Name and d.decorator.value == "staticmethod" for d in fn.decorators) else 0
                targets = positional[position + shift:position + shift + 1]
            if any(self.changed_in_place(q.name.value, within=fn) for q in targets):
                return True
        return False

    def _defs_by_name(self) -> Dict[str, List[cst.FunctionDef]]:
        if self._defs is None:
            defs: Dict[str, List[cst.FunctionDef]] = {}
            for node in self.def_site:
                if type(node) is cst.FunctionDef:
                    defs.setdefault(node.name.value, []).append(node)
            self._defs = defs
        return self._defs

    def callee_qualname(self, func: cst.CSTNode, site: Site) -> Optional[str]:
        """The qualified name of what a call's *func* certainly names: a class or function
        defined in this file (``module.Name``) or one imported (``pkg.mod.Name``)."""
        if isinstance(func, cst.Name):
            cands, exact = self.reaching(func.value, site)
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

    def resolve(self, expr: cst.CSTNode, site: Site, names) -> Optional[str]:
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

    def function_def(self, expr: cst.CSTNode, site: Site) -> Optional[cst.CSTNode]:
        """The FunctionDef/Lambda that *expr* certainly names in this file, if any:
        a lambda, a name bound once to a def, or ``self.method`` inside a class."""
        if isinstance(expr, cst.Lambda):
            return expr
        if isinstance(expr, cst.Name):
            cands, exact = self.reaching(expr.value, site)
            if exact and cands[0].kind == "def":
                return cands[0].node
            if exact and cands[0].kind == "assign" and not cands[0].index and cands[0].value is not None:
                return self.function_def(cands[0].value, cands[0].site) if isinstance(
                    cands[0].value, (cst.Name, cst.Lambda)) else None
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in (
                "self", "cls"):
            fn = site.scope.enclosing_function()
            cls = fn.parent if fn is not None else None
            if cls is not None and cls.kind == "class":
                bl = cls.bindings.get(expr.attr.value)
                if bl and len(bl) == 1 and bl[0].kind == "def":
                    return bl[0].node
        return None


class Walker(cst.CSTVisitor):
    """The one traversal of a file: maintains :class:`Semantic` and calls the hooks of
    *checkers* (the analyses: LibCST's metadata providers, in effect) as it goes. The hooks of
    *deferred* (the rules) are not called during the walk: each call the walk would make is
    recorded with the point of the program it was made at (its :class:`Site`), and
    :meth:`replay` makes them, in the walk's order, once the providers are complete (as LibCST
    calls a visitor's hooks only after resolving the metadata it declares)."""

    # _walk does what on_visit/on_leave do without calling them, unless a subclass overrides them
    _inline = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._inline = cls.on_visit is Walker.on_visit and cls.on_leave is Walker.on_leave

    def __init__(self, semantic: Semantic, checkers: Sequence, on_error, deferred: Sequence = ()):
        super().__init__()
        self.sem = semantic
        self.on_error = on_error
        self.checkers = list(checkers)
        self.visit_hooks, self.leave_hooks = _hook_tables(self.checkers)
        self.deferred_visit, self.deferred_leave = _hook_tables(deferred)
        # the deferred hook calls of the walk: (hooks, node, site), in order (see replay())
        self.events: List[Tuple[List, cst.CSTNode, Site]] = []
        self._replayed: Optional[Site] = None
        self.disabled: set = set()
        self._plans: Dict[type, tuple] = {}  # node class -> _plan()
        self._top = None  # the position unit being walked: i (module.body[i]) or (i, j) (its class body's j-th)
        self._class_block = None

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

    def replay(self) -> None:
        """Make the deferred hook calls the walk recorded, in its order; during each,
        :meth:`replayed_site` is the point it was recorded at."""
        events, self.events = self.events, []
        for hooks, node, site in events:
            self._replayed = site
            self._call(hooks, node)
        self._replayed = None

    def replayed_site(self) -> Site:
        """The point of the program of the hook call :meth:`replay` is making (what the file
        context's ``site()`` answers then)."""
        if self._replayed is None:
            raise RuntimeError("site() is asked outside a hook")
        return self._replayed

    # -- dispatch ---------------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        sem = self.sem
        sem.seq += 1
        t = type(node).__name__
        handler = _ENGINE_VISIT.get(t)
        if handler is not None:
            handler(sem, node)
        hooks = self.visit_hooks.get(t)
        if hooks:
            self._call(hooks, node)
        hooks = self.deferred_visit.get(t)
        if hooks:
            self.events.append((hooks, node, sem.site()))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        t = type(original_node).__name__
        hooks = self.leave_hooks.get(t)
        if hooks:
            self._call(hooks, original_node)
        hooks = self.deferred_leave.get(t)
        if hooks:
            self.events.append((hooks, original_node, self.sem.site()))
        handler = _ENGINE_LEAVE.get(t)
        if handler is not None:
            self.sem.seq += 1
            handler(self.sem, original_node)
        record = _flow.LEAVE.get(type(original_node))
        if record is not None:
            record(self.sem.flows, original_node)

    # (the node classes are tested by type, not isinstance: LibCST's are never subclassed, and
    # these two run for every field that opens a block or a scope)
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.sem.flows.visit_attribute(node, attribute)
        t = type(node)
        if (attribute == "body" and t in _BLOCK_OWNER_TYPES and t is not cst.While) or (
                attribute == "test" and t is cst.While):  # a while test runs on every iteration
            scope = self.sem.scope
            if attribute == "body" and t is cst.If and scope is self.sem.module_scope and \
                    not scope.blocks and is_main_guard(node, self.sem):
                self.sem.main_guards.add(node)
                self.sem.open_partial(node)
                return  # the script's body: straight-line code (RULES.md "Resolve values")
            scope.blocks = scope.blocks + ((node, t in _LOOP_TYPES),)
        elif attribute == "params" and (t is cst.FunctionDef or t is cst.Lambda):
            self.sem.def_site[node] = self.sem.site()
            self.sem.push("function" if t is cst.FunctionDef else "lambda", node)
        elif attribute == "body" and t is cst.ClassDef:
            self.sem.def_site[node] = self.sem.site()
            self.sem.push("class", node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        self.sem.flows.leave_attribute(original_node, attribute)
        if attribute == "body":
            t = type(original_node)
            if t in _BLOCK_OWNER_TYPES:
                if t is cst.If and original_node in self.sem.main_guards:
                    self.sem.close_partial(original_node)
                    return
                scope = self.sem.scope
                scope.blocks = scope.blocks[:-1]
            elif t is cst.FunctionDef or t is cst.Lambda or t is cst.ClassDef:
                self.sem.pop()

    # -- the traversal ----------------------------------------------------------------
    def walk(self, module: cst.CSTNode) -> None:
        """Visit *module* in LibCST's order, with the same callbacks as ``module.visit(self)``,
        but without rebuilding every node on the way up (LibCST's ``visit`` constructs and
        validates a new node per node, even for a read-only visitor; docs/benchmarks.md,
        "Figures behind the engine's comments")
        and without descending into whitespace, comments, brackets and operators, which no
        hook looks at."""
        self._walk(module)
        self.sem.complete = True

    def _plan(self, cls: type):
        """What visiting a node of class *cls* involves, looked up once per class: its field
        order, the engine's own visit and leave handlers, and the checkers' hooks."""
        order = _FIELD_ORDER.get(cls)
        if order is None:
            order = _field_order(cls)
        skipped = _IDENTIFIER_FIELDS.get(cls)
        if skipped and order is not False:
            order = tuple(f for f in order if f[0] not in skipped)
        t = cls.__name__
        plan = self._plans[cls] = (order, _ENGINE_VISIT.get(t), self.visit_hooks.get(t), self.leave_hooks.get(t),
                                   _ENGINE_LEAVE.get(t), _flow.LEAVE.get(cls), self.deferred_visit.get(t),
                                   self.deferred_leave.get(t))
        return plan

    def _walk(self, node: cst.CSTNode) -> None:
        sem = self.sem
        if self._top is not None:
            sem.top_of[id(node)] = self._top
        cls = type(node)
        plan = self._plans.get(cls)
        if plan is None:
            plan = self._plan(cls)
        order, engine_visit, visit_hooks, leave_hooks, engine_leave, flow_leave, deferred_visit, deferred_leave = plan
        if order is False:  # no readable field order: LibCST walks this subtree
            node.visit(self)
            return
        if self._inline:  # on_visit, inline
            sem.seq += 1
            if engine_visit is not None:
                engine_visit(sem, node)
            if visit_hooks:
                self._call(visit_hooks, node)
            if deferred_visit:
                self.events.append((deferred_visit, node, sem.site()))
        else:
            self.on_visit(node)
        for name, attr_cb in order:
            value = getattr(node, name)
            if attr_cb:
                self.on_visit_attribute(node, name)
            if type(value) is tuple or type(value) is list:
                if cls is cst.Module and name == "body":
                    for index, child in enumerate(value):
                        self._top = index
                        self._class_block = child.body if type(child) is cst.ClassDef and \
                            type(child.body) is cst.IndentedBlock else None
                        self._walk(child)
                    self._top = self._class_block = None
                elif node is self._class_block and name == "body":  # a top-level class's statements
                    top = self._top
                    for index, child in enumerate(value):
                        self._top = (top, index)
                        self._walk(child)
                    self._top = top
                else:
                    for child in value:
                        if type(child) not in _INERT:
                            self._walk(child)
            else:
                walkable = _WALKABLE.get(type(value))
                if walkable is None:  # CSTNode is an ABC: isinstance is slow, so once per type
                    walkable = _WALKABLE[type(value)] = isinstance(value, cst.CSTNode) and type(value) not in _INERT
                if walkable:
                    self._walk(value)
            if attr_cb:
                self.on_leave_attribute(node, name)
        if self._inline:  # on_leave, inline
            if leave_hooks:
                self._call(leave_hooks, node)
            if deferred_leave:
                self.events.append((deferred_leave, node, sem.site()))
            if engine_leave is not None:
                sem.seq += 1
                engine_leave(sem, node)
            if flow_leave is not None:  # (no step of its own: the resolver's order is as without it)
                flow_leave(sem.flows, node)
        else:
            self.on_leave(node)


def _hook_tables(checkers: Sequence) -> Tuple[Dict[str, List], Dict[str, List]]:
    """The ``visit_<Node>`` and ``leave_<Node>`` hooks of *checkers*, by node class name:
    ``[(checker, bound method), ...]`` in the checkers' order."""
    visit: Dict[str, List] = {}
    leave: Dict[str, List] = {}
    for checker in checkers:
        for attr in dir(type(checker)):
            if attr.startswith("visit_"):
                visit.setdefault(attr[6:], []).append((checker, getattr(checker, attr)))
            elif attr.startswith("leave_"):
                leave.setdefault(attr[6:], []).append((checker, getattr(checker, attr)))
    return visit, leave


# PyTorch's in-place methods that write a tensor's values and keep its shape, dtype and
# strides (an in-place op's result must have self's shape and is cast to self's dtype); every
# other method whose name ends in one ``_`` (``resize_``, ``set_``, ``squeeze_``, ``t_``,
# ``transpose_``, ``as_strided_``...) may change them.
_VALUE_ONLY_INPLACE = frozenset({
    "requires_grad_", "zero_", "fill_", "copy_", "detach_", "share_memory_",
    "normal_", "uniform_", "random_", "bernoulli_", "exponential_", "geometric_", "log_normal_", "cauchy_",
    "add_", "sub_", "mul_", "div_", "pow_", "neg_", "abs_", "sqrt_", "rsqrt_", "exp_", "log_", "clamp_",
    "clamp_min_", "clamp_max_", "masked_fill_", "masked_scatter_", "index_fill_", "index_copy_", "index_add_",
    "scatter_", "scatter_add_", "put_", "fill_diagonal_", "addcmul_", "addcdiv_", "lerp_", "sigmoid_", "tanh_",
    "relu_", "floor_", "ceil_", "round_", "trunc_", "sign_", "reciprocal_",
})
# Tensor attributes whose assignment leaves its shape, dtype and layout alone.
_VALUE_ONLY_ATTRS = frozenset({"requires_grad", "grad"})

# Fields that hold names which are text, not expressions: an attribute's, a keyword's, a
# parameter's, a def's or class's, the names of imports, ``global``/``nonlocal``, ``except
# ... as`` and match patterns. The walk does not go into them, so a ``Name`` hook sees the
# names Python evaluates or binds as variables (CPython's ``ast.Name``s), and never takes
# the name of an attribute or a keyword for a use of a variable of that name. (The parent's
# own hook reads them: ``node.attr``, ``arg.keyword``, ``node.name``...)
_IDENTIFIER_FIELDS: Dict[type, FrozenSet[str]] = {
    cst.Attribute: frozenset({"attr"}),
    cst.Arg: frozenset({"keyword"}),
    cst.FunctionDef: frozenset({"name"}),
    cst.ClassDef: frozenset({"name"}),
    cst.Param: frozenset({"name"}),
    cst.Import: frozenset({"names"}),
    cst.ImportFrom: frozenset({"module", "names"}),
    cst.Global: frozenset({"names"}),
    cst.Nonlocal: frozenset({"names"}),
    cst.ExceptHandler: frozenset({"name"}),
    cst.ExceptStarHandler: frozenset({"name"}),
    cst.MatchAs: frozenset({"name"}),
    cst.MatchStar: frozenset({"name"}),
    cst.MatchMapping: frozenset({"rest"}),
    cst.MatchKeywordElement: frozenset({"key"}),
}

# Field value type -> whether the walk goes into it (a node that is not inert).
_WALKABLE: Dict[type, bool] = {}

# The attributes whose visit the engine tracks (``on_visit_attribute``).
_ATTR_CALLBACKS = frozenset({"body", "params", "test", "orelse", "iter", "bases"})

# Node types that hold only whitespace, comments or fixed tokens: never walked into.
_INERT_BASES = (cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline, cst.Comment,
                cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
                cst.RightCurlyBrace, cst.Comma, cst.Semicolon, cst.Colon, cst.Dot, cst.AssignEqual, cst.ImportStar,
                cst.Asynchronous, cst.BaseBinaryOp, cst.BaseAugOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp)
# (the MRO, not issubclass: LibCST's bases are ABCs, whose issubclass is slow at import)
_INERT = frozenset(c for c in vars(cst).values()
                   if isinstance(c, type) and any(b in c.__mro__ for b in _INERT_BASES))

# Per node class: its child fields in the order LibCST's ``_visit_and_replace_children``
# visits them, with whether the engine tracks the field; False when that order cannot be
# read (then LibCST's own ``visit`` walks such a node). Each field is visited through a
# ``visit_*(self, "<field>", self.<field>, visitor)`` call, in source order, so the field
# names appear in that order among the method's string constants (``co_consts`` keeps the
# order of first use; a test compares the resulting traversal with LibCST's).
_FIELD_ORDER: Dict[type, object] = {}


def child_nodes(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The children of *node* that are not whitespace, comments or fixed tokens, in LibCST's
    order: LibCST's ``children`` without its cost (it rebuilds the node's fields through a
    visitor), for walks that only look."""
    cls = type(node)
    order = _FIELD_ORDER.get(cls)
    if order is None:
        order = _field_order(cls)
    if order is False:
        return [c for c in node.children if type(c) not in _INERT]
    out: List[cst.CSTNode] = []
    for name, _ in order:
        value = getattr(node, name)
        if type(value) is tuple or type(value) is list:
            out.extend(c for c in value if isinstance(c, cst.CSTNode) and type(c) not in _INERT)
        elif isinstance(value, cst.CSTNode) and type(value) not in _INERT:
            out.append(value)
    return out


def _field_order(cls: type):
    fields = getattr(cls, "__dataclass_fields__", None)
    code = getattr(getattr(cls, "_visit_and_replace_children", None), "__code__", None)
    if fields is None or code is None:
        order = False
    else:
        names: List[str] = []
        for const in code.co_consts:
            if isinstance(const, str) and const in fields and const not in names:
                names.append(const)
        order = tuple((name, name in _ATTR_CALLBACKS) for name in names)
    _FIELD_ORDER[cls] = order
    return order


# -- the engine's own bookkeeping, by node type --------------------------------------

def _foreign(sem: Semantic, module: Optional[str]) -> bool:
    """Whether *module* is a module of the run in no package that this file's import does
    not certainly reach (:meth:`npulint.modules.RunModules.foreign`)."""
    run = _modules.active()
    return run is not None and bool(run.paths) and run.foreign(module, sem.module_name, sem.is_package)


def _v_import(sem: Semantic, node: cst.Import) -> None:
    for alias in node.names:
        full = dotted(alias.name)
        if full is None:
            continue
        if full == sem.module_name:
            sem.imports_self = True
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            sem.bind(alias.asname.name.value, "import", node,
                     qualname=None if _foreign(sem, full) else _aliased(full))
        else:
            top = full.split(".")[0]
            sem.bind(top, "import", node, qualname=None if _foreign(sem, top) else top)


def _absolute(sem: Semantic, node: cst.ImportFrom) -> Optional[str]:
    """The absolute module of a ``from`` import, resolving relative imports against the
    file's module name; None when that is unknown."""
    module = dotted(node.module) if node.module is not None else ""
    return absolute_module(module, len(node.relative), sem.module_name, sem.is_package)


def _v_import_from(sem: Semantic, node: cst.ImportFrom) -> None:
    module = _absolute(sem, node)
    if module and _foreign(sem, module):
        module = None  # some module of that name, not the linted one
    if sem.is_package and sem.module_name and module and module.startswith(sem.module_name + ".") \
            and sem.scope is sem.module_scope:
        # In a package's __init__, importing from one of its submodules also binds the
        # submodule's name there (the import system sets it on the package: its globals)
        sub = module[len(sem.module_name) + 1:].split(".")[0]
        sem.bind(sub, "import", node, qualname=_aliased(f"{sem.module_name}.{sub}"))
    if isinstance(node.names, cst.ImportStar):
        exports = STAR_EXPORTS.get(module) if module is not None else None
        if exports is None and module is not None:
            run = _modules.active()  # a module of the run whose names are known
            exports = run.star_names(module) if run is not None and run.is_module(module) else None
        if exports is None:
            sem.scope.stars.append((sem.seq, module or "."))
        else:
            for name, q in exports.items():
                sem.bind(name, "import", node, qualname=_aliased(q))
        return
    for alias in node.names:
        if not isinstance(alias.name, cst.Name):
            continue
        name = alias.name.value
        bound = alias.asname.name.value if alias.asname is not None and isinstance(
            alias.asname.name, cst.Name) else name
        qualname = None if module is None else _aliased(f"{module}.{name}" if module else name)
        if module and f"{module}.{name}" == sem.module_name:
            sem.imports_self = True
        sem.bind(bound, "import", node, qualname=qualname)


def _v_def(sem: Semantic, node) -> None:
    sem.bind(node.name.value, "def" if isinstance(node, cst.FunctionDef) else "class", node)


def _v_params(sem: Semantic, node: cst.Parameters) -> None:
    for group in (node.posonly_params, node.params, node.kwonly_params):
        for p in group:
            sem.bind(p.name.value, "param", p)
    for star in (node.star_arg, node.star_kwarg):
        if isinstance(star, cst.Param):
            sem.bind(star.name.value, "param", star)


def _v_for(sem: Semantic, node: cst.For) -> None:
    sem.opaque_attribute_stores(node.target, node)
    sem.bind_target(node.target, "loop", node)


# A context manager whose ``__exit__`` returns a true value swallows the exception raised in
# its body, and execution goes on after the ``with`` from the middle of the body
# (``contextlib.suppress``, ``pytest.raises``, ``unittest.TestCase.assertRaises``, a class of
# the project's, ``ExitStack`` with such a callback). A ``with`` body runs whole, for what
# comes after it, only where every manager is one of these, which never swallow: their
# ``__exit__`` returns None or False, or they are ``@contextmanager`` generators that do not
# catch (the standard library's; PyTorch's torch/autograd/grad_mode.py, torch/amp/autocast_mode.py,
# torch/profiler; torchair's scopes return ``_npu_scope_exit()``, whose op returns None:
# Ascend/torchair@fced8842 python/torchair/scope/__init__.py:18-19, scope/_scope.py:44;
# TensorFlow's scopes and sessions).
STRAIGHT_MANAGERS = frozenset({
    "open", "io.open", "builtins.open", "gzip.open", "bz2.open", "lzma.open", "tarfile.open", "zipfile.ZipFile",
    "tempfile.TemporaryDirectory", "tempfile.NamedTemporaryFile", "tempfile.TemporaryFile",
    "contextlib.nullcontext", "contextlib.redirect_stdout", "contextlib.redirect_stderr",
    "warnings.catch_warnings", "threading.Lock", "threading.RLock", "multiprocessing.Pool",
    "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled",
    "torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.npu.amp.autocast",
    "torch.device", "torch.cuda.device", "torch.npu.device", "torch.cuda.stream", "torch.npu.stream",
    "torch.profiler.profile", "torch.profiler.record_function", "torch.autograd.profiler.record_function",
    "torch.autograd.profiler.profile", "torch.autograd.set_detect_anomaly", "torch.autograd.detect_anomaly",
    "torch_npu.profiler.profile", "torch_npu.npu.stream", "torch_npu.npu.device",
    "torchair.scope.npu_stream_switch", "torchair.scope.super_kernel",
    "torchair.scope.limit_core_num", "torchair.scope.op_never_timeout", "torchair.ops.NpuStreamSwitch",
    "tensorflow.name_scope", "tensorflow.variable_scope", "tensorflow.compat.v1.variable_scope",
    "tensorflow.compat.v1.name_scope", "tensorflow.device", "tensorflow.control_dependencies",
    "tensorflow.GradientTape", "tensorflow.Session", "tensorflow.compat.v1.Session", "tensorflow.Graph.as_default",
    "npu_bridge.estimator.npu.npu_scope.npu_weight_prefetch_scope",
})


def _v_with(sem: Semantic, node) -> None:
    site = sem.site()
    sem.withs.append((node, site))
    sem.scope.with_depth += 1
    calls = [item.item for item in node.items if isinstance(item.item, cst.Call)]
    names = [sem.qualnames(call.func, site) for call in calls]
    if len(calls) < len(node.items) or not all(_straight_manager(n) for n in names):
        span = sem.open_partial(node)
        if any(_expects_raise(call.func, n) for call, n in zip(calls, names)):
            sem.expecting_spans.append(span)


# the managers whose body a test expects to raise: pytest.raises, unittest's assertRaises*
_RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


def _expects_raise(func: cst.BaseExpression, names) -> bool:
    """Whether a ``with`` item's call (*func*, its qualified names *names*) expects an exception."""
    return (isinstance(func, cst.Attribute) and func.attr.value in _RAISES_METHODS) or "pytest.raises" in names


def _straight_manager(names) -> bool:
    """Whether the qualified names a ``with`` item's call may have are all managers known to
    run their body whole (:data:`STRAIGHT_MANAGERS`)."""
    return bool(names) and all(n in STRAIGHT_MANAGERS for n in names)


def _l_with(sem: Semantic, node) -> None:
    sem.scope.with_depth -= 1
    sem.close_partial(node)


def _l_with_item(sem: Semantic, node: cst.WithItem) -> None:
    if node.asname is not None:
        sem.opaque_attribute_stores(node.asname.name, node)
        sem.bind_target(node.asname.name, "with", node)


def _l_assign(sem: Semantic, node: cst.Assign) -> None:
    for t in node.targets:
        if isinstance(t.target, cst.Attribute):
            sem.bind_attribute(t.target, "assign", node, value=node.value)
        else:
            if isinstance(t.target, (cst.Tuple, cst.List, cst.StarredElement)):
                sem.opaque_attribute_stores(t.target, node)
            sem.bind_target(t.target, "assign", node, value=node.value)


def _l_ann_assign(sem: Semantic, node: cst.AnnAssign) -> None:
    if node.value is not None:
        if isinstance(node.target, cst.Attribute):
            sem.bind_attribute(node.target, "assign", node, value=node.value)
        else:
            sem.bind_target(node.target, "assign", node, value=node.value)


def _l_aug_assign(sem: Semantic, node: cst.AugAssign) -> None:
    if isinstance(node.target, cst.Attribute):
        sem.bind_attribute(node.target, "aug", node, value=node.value)
    else:
        sem.bind_target(node.target, "aug", node, value=node.value)


def _l_named_expr(sem: Semantic, node: cst.NamedExpr) -> None:
    # in an operand that may not be evaluated (``flag and (WS := 3)``, an arm of ``x if c else
    # y``, an ``assert``, which ``python -O`` drops), the binding may not happen
    sem.skippable = any(_may_skip(e, node) for e in sem.choices)
    try:
        sem.bind_target(node.target, "assign", node, value=node.value)
    finally:
        sem.skippable = False


def _binds_anywhere(fn: cst.CSTNode, name: str) -> bool:
    """Whether the function (or lambda) *fn* binds *name* as a local of its own: a parameter,
    or a store anywhere in its body outside nested functions and classes (their names count),
    unless it declares the name ``global`` or ``nonlocal`` itself."""
    params = getattr(fn, "params", None)
    if params is not None:
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            if p.name.value == name:
                return True
        for p in (params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param) and p.name.value == name:
                return True
    found = False
    todo: List[cst.CSTNode] = [fn.body]
    while todo:
        n = todo.pop()
        t = type(n)
        if t is cst.Global or t is cst.Nonlocal:
            if any(a.name.value == name for a in n.names):
                return False
            continue
        if t is cst.FunctionDef or t is cst.ClassDef:
            found = found or n.name.value == name
            todo.extend(d.decorator for d in n.decorators)
            continue  # (its body is a scope of its own)
        if t is cst.Lambda:
            continue
        target = None
        if t is cst.AssignTarget or t is cst.AnnAssign or t is cst.AugAssign or t is cst.For \
                or t is cst.NamedExpr or t is cst.Del:
            target = n.target
        elif t is cst.AsName:
            target = n.name
        elif t is cst.ImportAlias and n.asname is None:
            found = found or (dotted(n.name) or "").split(".")[0] == name
        elif t is cst.MatchAs or t is cst.MatchStar:
            found = found or (n.name is not None and n.name.value == name)
        if target is not None:
            stack = [target]
            while stack:
                e = stack.pop()
                if type(e) is cst.Name:
                    found = found or e.value == name
                elif type(e) in (cst.Tuple, cst.List):
                    stack.extend(el.value for el in e.elements)
                elif type(e) is cst.StarredElement:
                    stack.append(e.value)
        todo.extend(child_nodes(n))
    return found


def _may_skip(expr: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether *node*, inside the ``and``/``or``, conditional expression or ``assert`` *expr*,
    is in a part of it that may not be evaluated."""
    if type(expr) is cst.Assert:
        return True
    parts = (expr.right,) if type(expr) is cst.BooleanOperation else (expr.body, expr.orelse)
    for part in parts:
        todo = [part]
        while todo:
            n = todo.pop()
            if n is node:
                return True
            todo.extend(child_nodes(n))
    return False


def _v_choice(sem: Semantic, node: cst.CSTNode) -> None:
    sem.choices.append(node)


def _l_choice(sem: Semantic, node: cst.CSTNode) -> None:
    sem.choices.pop()


def _v_global(sem: Semantic, node: cst.Global) -> None:
    for n in node.names:
        sem.scope.globals.add(n.name.value)


def _v_nonlocal(sem: Semantic, node: cst.Nonlocal) -> None:
    for n in node.names:
        sem.scope.nonlocals.add(n.name.value)


def _v_del(sem: Semantic, node: cst.Del) -> None:
    sem.opaque_attribute_stores(node.target, node)
    sem.bind_target(node.target, "del", node)


def _v_except(sem: Semantic, node) -> None:
    if node.name is not None:
        sem.bind_target(node.name.name, "except", node)


def _v_comp(sem: Semantic, node) -> None:
    sem.push("comprehension", node)


def _l_comp(sem: Semantic, node) -> None:
    sem.pop()


def _v_comp_for(sem: Semantic, node: cst.CompFor) -> None:
    sem.bind_target(node.target, "loop", node)


def _v_match_name(sem: Semantic, node) -> None:
    name = getattr(node, "name", None) or getattr(node, "rest", None)
    if isinstance(name, cst.Name):
        sem.bind(name.value, "other", node)


_ENGINE_VISIT_BASE = {
    "Import": _v_import,
    "ImportFrom": _v_import_from,
    "FunctionDef": _v_def,
    "ClassDef": _v_def,
    "Parameters": _v_params,
    "For": _v_for,
    "With": _v_with,
    "Global": _v_global,
    "Nonlocal": _v_nonlocal,
    "Del": _v_del,
    "ExceptHandler": _v_except, "ExceptStarHandler": _v_except,
    "ListComp": _v_comp, "SetComp": _v_comp, "DictComp": _v_comp, "GeneratorExp": _v_comp,
    "CompFor": _v_comp_for,
    "MatchAs": _v_match_name, "MatchStar": _v_match_name, "MatchMapping": _v_match_name,
    "BooleanOperation": _v_choice, "IfExp": _v_choice, "Assert": _v_choice,
}

_ENGINE_LEAVE = {
    "With": _l_with,
    "WithItem": _l_with_item,
    "Assign": _l_assign,
    "AnnAssign": _l_ann_assign,
    "AugAssign": _l_aug_assign,
    "NamedExpr": _l_named_expr,
    "BooleanOperation": _l_choice, "IfExp": _l_choice, "Assert": _l_choice,
    "ListComp": _l_comp, "SetComp": _l_comp, "DictComp": _l_comp, "GeneratorExp": _l_comp,
}


def _with_flow(base: Dict[str, Callable], flow: Dict[type, Callable]) -> Dict[str, Callable]:
    """The engine's handlers by node class name: Semantic's, then the flow recorder's."""
    out = dict(base)
    for cls, record in flow.items():
        name = cls.__name__
        own = base.get(name)
        if own is None:
            out[name] = lambda sem, node, record=record: record(sem.flows, node)
        else:
            out[name] = lambda sem, node, own=own, record=record: (own(sem, node), record(sem.flows, node))
    return out


_ENGINE_VISIT = _with_flow(_ENGINE_VISIT_BASE, {**_flow.VISIT, cst.Call: FlowRecorder.call})
