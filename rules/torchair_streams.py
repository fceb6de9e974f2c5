"""NPU301-NPU308: TorchAir in-graph multi-stream (``torchair.scope``, ``torchair.ops``).

One shared analysis, :class:`StreamsAnalysis` (the calls of the stream and tagged-event APIs, the
event table, the facts for the project phase), and one rule class per code. NPU301, NPU302, NPU304,
NPU305 and NPU307 judge each call in their ``visit_Call``, from the analysis's record of that call
(``resolved``, ``switch()``, ``creation()``, ``event_wait()``); NPU303, NPU306 and NPU308 judge the
run's facts in ``project()``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from npulint import modules as _modules
from npulint.checker import FileContext
from npulint.flow import Flow
from npulint.lintrule import Analysis, Invalid, LintRule
from npulint.model import Span
from npulint.paths import reached_from
from npulint.semantic import PLAIN_BASES, Scope, Semantic, Site, child_nodes, dotted
from npulint.values import UNKNOWN, is_constant

from .signature import SIGNATURES
from .torchair_config import ACLGRAPH_MODES, COMPILED

SWITCH = {"torchair.scope.npu_stream_switch", "torchair.ops.NpuStreamSwitch", "torchair.NpuStreamSwitch"}
WAIT_TENSOR = {"torchair.scope.npu_wait_tensor", "torchair.ops.npu_wait_tensor"}
CREATE = "torchair.ops.npu_create_tagged_event"
RECORD = "torchair.ops.npu_tagged_event_record"
WAIT = "torchair.ops.npu_tagged_event_wait"
RECORD_STREAM = "torchair.ops.npu_record_tagged_stream"
API = SWITCH | WAIT_TENSOR | {CREATE, RECORD, WAIT, RECORD_STREAM}
# What a class's __init__ may hold its submodules in (:meth:`StreamsAnalysis._held`): a
# Sequential calls each element when it is called; the others are indexed or iterated.
_SEQUENTIAL = {"torch.nn.Sequential", "torch.nn.modules.container.Sequential"}
_CONTAINERS = {"torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.modules.container.ModuleList",
               "torch.nn.modules.container.ModuleDict", "builtins.list", "builtins.tuple", "builtins.dict"}
# Base classes that share no tagged-event attributes with their subclasses.
_PLAIN_BASES = frozenset(PLAIN_BASES)  # (bases whose __init__ is known: semantic.PLAIN_BASES)

# builtins that read nothing of an instance's attributes (hasattr asks one exists)
_INSTANCE_READERS = frozenset("builtins." + n for n in (
    "super", "isinstance", "issubclass", "id", "type", "hash", "repr", "str", "print", "len", "bool", "hasattr",
    "callable", "format"))
# builtins that give a function's namespace as a dict, called without arguments
_NAMESPACE_READERS = frozenset({"builtins.locals", "builtins.vars"})

_SRC = ("torchair's page 图内多流表达功能（aclgraph） (Ascend/torchair@fbd4456f "
        "docs/zh/context/图内多流表达功能（aclgraph）.md); Ascend/torchair@fced8842 python/torchair/scope/, "
        "python/torchair/ops/_tagged_event.py")
_IMP = "import torch\nimport torchair as tng\n"
# What "compiled" means for NPU303/NPU308 (the COMPILED facts of rules/torchair_config.py)
_COMPILED_CLASS = (
    "A class is compiled when an instance of it reaches `torch.compile(..., backend=<torchair backend>)` in the "
    "same run, or its bound `forward` does (`model.forward = torch.compile(model.forward, backend=...)`, "
    "`self.forward` in a method of the class, `Model.forward`), or it reaches torchair's "
    "`torchair.inference.cache_compile(model.forward, config=cfg)` (Ascend/torchair@fced8842 "
    "python/torchair/inference/__init__.py:12 and _cache_compiler.py:602: `func` is a bound method of an "
    "`nn.Module`; the backend is made from `cfg` (its mode at the cache_compile call), from `backend=`'s "
    "config, or from the default config when neither is given). A class of a module name two files hold "
    "(`model.py` of two folders each run as its own script) is the one of the compiling file's own import folder "
    "(`qwen/run.py` compiles `qwen/model.py`'s `M`, not `llama/model.py`'s), else none. Its methods run in the graph: "
    "those of its "
    "class and those it inherits (a base's method that the class or a nearer base overrides only when an "
    "overriding method calls it through `super()`; where a base that is not a class of the run comes first "
    "in the method resolution order, which method runs is unknown); the classes it instantiates in its "
    "graph are compiled with it: in `forward` of its classes or in a method it names as `self.<m>` or "
    "`super().<m>` (called or not), and, of those its construction makes (the class body, `__init__` and the "
    "methods it names), the ones its graph certainly calls (`forward` and the methods it certainly calls): a "
    "submodule held as `self.attn = Attn()` (also under `if`) called as `self.attn(x)`; "
    "held in `self.layers = nn.ModuleList([...])` (a `ModuleDict`, a list, `.append(...)`) whose elements it "
    "calls (`for layer in self.layers: x = layer(x)`, or `self.layers[i](x)` outside a loop when they are all "
    "of one class); in `self.body = nn.Sequential(...)` called as `self.body(x)`. Not a submodule the graph "
    "does not certainly call (`self.mtp = MTP()`, a drafter compiled on its own; a sampler called from outside; "
    "layers passed on or called under `if`, after an `if` arm that may end the method, in a loop a "
    "`continue`/`break`/`return` may leave first, or by index in a loop or over a slice, which may not run), "
    "nor one of two classes held under one attribute (`self.mlp = MoE() if c else Dense()`, or stored again "
    "under `if`), nor an element of a container stored from what npulint cannot read or changed after the "
    "construction (an item replaced, `.append` elsewhere, passed to a function, `register_module`), nor an "
    "instance another method makes (`def make_draft(self): return Draft()` "
    "called from outside). A compiled bound method other than `forward` (one the class defines in this file: "
    "`model.decode = torch.compile(model.decode, backend=...)`) compiles that method and the methods it "
    "calls, unconditionally, as `self.<m>(...)` or `super().<m>(...)`, and the `forward` of a submodule it calls "
    "as `self.<attr>(...)` (an attribute `__init__` binds once to an instance of a class of the run: "
    "`self.attn = Attn()`), not the rest of the class. Only calls "
    "that run whenever their method runs are judged: Dynamo traces the branch the run takes, so a call under "
    "`if`/`else`/`try`/`for`/`while`/`match` in its method, in a comprehension or in an operand of "
    "`x if c else y`/`and`/`or` is not reported.")


# -- the shared analysis -------------------------------------------------------------------

@dataclasses.dataclass
class Tables:
    """The facts of every file of a run, folded (the project phase of NPU303, NPU306, NPU308)."""

    # class that owns a creation -> 2 when one process certainly makes more than one (its
    # subclasses' instances counted too), else 1 or 0; and "<class>.__init__" -> the same for
    # the instantiations that run that class's __init__ (a subclass's runs it only when it
    # defines no __init__ or its __init__ calls super().__init__() or Base.__init__(self))
    total: Dict[str, int]
    bases: Dict[str, Tuple[str, ...]]
    # class -> the names its body binds -> (``self.<m>()`` and ``super().<m>()`` its method calls)
    methods: Dict[str, Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...]]]]
    # class -> method (None: the class body) -> classes it instantiates there, each with where
    # the class holds the instance (:meth:`StreamsAnalysis._held`; None: unknown)
    children: Dict[str, Dict[Optional[str], Set[Tuple[str, Optional[str]]]]]
    # (path, tag, line, col, end_line, end_col, owner class, looped, conditional)
    creations: List[tuple]
    apis: List[tuple]  # (path, kind, api, owner class, method, line, col, end_line, end_col)
    imports: Dict[str, Set[str]]  # path -> the files of the run it imports (:func:`_import_graph`)
    used: Set[str]  # the tagged-event APIs the run calls
    # path -> the torchair releases its configuration runs, and those to judge on when the code
    # rules out every one of them (every one when they were inferred)
    torchair: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...]]]
    refs: Dict[str, Dict[str, Tuple[str, ...]]]  # class -> method -> the names it takes as self.<m>, super().<m>
    attrs: Dict[str, Dict[str, str]]  # class -> attribute its __init__ binds once to an instance -> its class
    # per process: class that owns a creation -> the branches of each instantiation (its
    # subclasses' too); "<class>.__init__" -> those of the instantiations that run its __init__
    together: List[Dict[str, list]]
    # (path, qualified name a file names) -> the name the tables key that class or function by
    # (:func:`_keys`): what a COMPILED fact of that file names (:func:`_modes`)
    key: Callable[[str, Optional[str]], Optional[str]]
    # classes whose calls may not make an instance as written (StreamsAnalysis._opaque_class)
    opaque: Dict[str, int] = dataclasses.field(default_factory=dict)


# A project computation that several rules need, made once per run: (the fact lists it read, value).
_RUN_MEMO: Dict[str, Tuple[Tuple[Any, ...], Any]] = {}


def _once_per_run(name: str, lists: Sequence[Any], compute: Callable[[], Any]) -> Any:
    """``compute()``, memoised on the identity of the fact lists it reads: the pipeline gathers
    each topic's facts once per run, so the rules that read one topic get the same list. The
    memo holds the lists, so their identities cannot be reused while it does."""
    hit = _RUN_MEMO.get(name)
    if hit is not None and len(hit[0]) == len(lists) and all(a is b for a, b in zip(hit[0], lists)):
        return hit[1]
    value = compute()
    _RUN_MEMO[name] = (tuple(lists), value)
    return value


class StreamsAnalysis(Analysis):
    """The NPU3xx event table: the file's calls of the stream and tagged-event APIs (resolved),
    its loads (for escape analysis) and classes; the stream switches and tagged-event creations
    with their tags, the waits on known events with their records; and, for the project phase,
    the facts: the tagged-event APIs the file calls, the creations with a literal tag, the
    instantiations, classes and imports, and the mode-dependent calls by owning class."""

    # The stream APIs, plus the configuration checker's tokens: the analysis also runs where
    # that one does (a file that compiles a model may instantiate or import what it needs).
    tokens = (("npu_stream_switch",), ("tagged_event",), ("npu_record_tagged_stream",), ("npu_wait_tensor",),
              ("NpuStreamSwitch",), ("CompilerConfig",), ("get_npu_backend",))

    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        self.calls: List[Tuple[cst.Call, Site]] = []
        self.loads: List[Tuple[cst.CSTNode, Site]] = []  # names and attributes, for escape analysis
        self.classes: List[Tuple[cst.ClassDef, Site]] = []
        # the calls of the APIs -> their site and qualified name, in the file's order (after finish())
        self.resolved: Dict[cst.Call, Tuple[Site, str]] = {}
        self._memo: Dict[str, Any] = {}
        self._choices = 0  # conditional expressions and and/or operations open at this point
        self.guarded: Set[int] = set()  # calls under one, or in a guarded comprehension (see conditional())
        self._not_plain: Set[int] = set()  # id() of function scopes: see visit_Yield
        self._header = 0  # parameter lists and decorators open at this point
        self.header_calls: Set[int] = set()  # calls there: they run where the ``def`` runs, not in its calls
        self._params = 0  # parameter lists open at this point (the traversal is in the function's scope there)
        self.param_calls: Set[int] = set()  # header calls in one (a default)
        self._ending_loops: Set[int] = set()  # id() of loop bodies a return/raise/break/continue may leave
        self._blocks: Dict[int, tuple] = {}  # id(block) -> (block, _block()'s answer)

    # a function whose calls may not run its body as written (see _plain_function): a generator,
    # or a return/raise in a loop; noted on the way, not by walking each function again
    def visit_Yield(self, node: cst.Yield) -> None:
        self._not_plain.add(id(self.ctx.site().scope))

    def visit_Return(self, node: cst.Return) -> None:
        site = self.ctx.site()
        if site.in_loop:
            self._not_plain.add(id(site.scope))
            self._ends_loops(site)

    def visit_Raise(self, node: cst.Raise) -> None:
        self.visit_Return(node)  # (the same test)

    def visit_Break(self, node: cst.Break) -> None:
        self._ends_loops(self.ctx.site())

    def visit_Continue(self, node: cst.Continue) -> None:
        self._ends_loops(self.ctx.site())

    def _ends_loops(self, site: Site) -> None:
        self._ending_loops.update(id(body) for body, loop in site.blocks if loop)

    def _loop_may_end(self, site: Site) -> bool:
        """Whether a loop around *site* holds a ``return``, ``raise``, ``break`` or ``continue``
        (not in a function of its own): one may leave an iteration before the call at *site*."""
        return any(loop and id(body) in self._ending_loops for body, loop in site.blocks)

    def _count(self, node: cst.CSTNode, counter: str, step: int) -> None:
        setattr(self, counter, getattr(self, counter) + step)

    # a def's parameters (their defaults) and decorators run where the def runs
    visit_Decorator = functools.partialmethod(_count, counter="_header", step=1)
    leave_Decorator = functools.partialmethod(_count, counter="_header", step=-1)

    def visit_Parameters(self, node: cst.Parameters) -> None:
        self._header += 1
        self._params += 1

    def leave_Parameters(self, node: cst.Parameters) -> None:
        self._header -= 1
        self._params -= 1


    def visit_Call(self, node: cst.Call) -> None:
        site = self.ctx.site()
        self.calls.append((node, site))
        f = node.func
        if site.blocks and ((type(f) is cst.Attribute and f.attr.value in ("exit", "_exit")) or
                            (type(f) is cst.Name and f.value in ("exit", "quit"))):
            self._ends_loops(site)  # (``sys.exit()``, ``exit()``: see _looped)
        if self._header:
            self.header_calls.add(id(node))
            if self._params:
                self.param_calls.add(id(node))
        if self._choices or (site.scope.kind == "comprehension" and _comprehension_guarded(site.scope)):
            self.guarded.add(id(node))

    # an operand of ``a if c else b``, ``a and b``, ``a or b`` may not be evaluated
    visit_IfExp = visit_BooleanOperation = functools.partialmethod(_count, counter="_choices", step=1)
    leave_IfExp = leave_BooleanOperation = functools.partialmethod(_count, counter="_choices", step=-1)

    def conditional(self, call: cst.Call, site: Site) -> bool:
        """Whether *call* may not run when its function (or module) runs, other than by being
        repeated: under ``if``/``else``/``try``/``except``/``match`` in its scope, in an operand
        of a conditional expression or of ``and``/``or``, in a comprehension with an ``if``
        clause or inside such a block."""
        return id(call) in self.guarded or any(not loop for _, loop in site.blocks)

    def visit_Name(self, node: cst.Name) -> None:
        self.loads.append((node, self.ctx.site()))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.loads.append((node, self.ctx.site()))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append((node, self.ctx.site()))

    def visit_Global(self, node: cst.Global) -> None:
        self._plain_names(node.names, self.ctx.site())

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._plain_names(node.names, self.ctx.site())

    def _plain_names(self, items, site: Site) -> None:
        # a name declared ``global``/``nonlocal`` is shared with other scopes: a use of it
        for item in items:
            self.loads.append((item.name, site))

    def finish(self) -> None:
        ctx = self.ctx
        for call, site in self.calls:
            q = ctx.resolve(call.func, site, API)
            if q is not None:
                self.resolved[call] = (site, q)
        self._stream_facts()
        if not self.resolved:
            self._facts_for_instances()
            return
        self._facts(self.resolved)
        self._api_facts(self.resolved)

    def _once(self, name: str, compute: Callable[[], Any]) -> Any:
        if name not in self._memo:
            self._memo[name] = compute()
        return self._memo[name]

    # -- what the rules read ----------------------------------------------------------
    def arg(self, q: str, call: cst.Call, name: str):
        """The call bound to *q*'s signature and the argument of parameter *name* (None), or
        (None, None) when it does not bind."""
        bound = self.ctx.bind(SIGNATURES[q], call)
        if bound.error is not None:
            return None, None
        return bound, bound.args.get(name)

    def switches(self) -> Dict[cst.Call, Tuple[Site, Any, Optional[cst.CSTNode], Any]]:
        """The stream switches: call -> ``(site, bound, tag expression, tag value)``; *bound* is
        None (and the tag UNKNOWN) for a call that does not bind."""
        def compute():
            out = {}
            for call, (site, q) in self.resolved.items():
                if q in SWITCH:
                    bound, tag_expr = self.arg(q, call, "stream_tag")
                    tag = self.ctx.arg_value(bound, "stream_tag", site) if bound is not None else UNKNOWN
                    out[call] = (site, bound, tag_expr, tag)
            return out

        return self._once("switches", compute)

    def switch(self, call: cst.Call) -> Optional[Tuple[Site, Any, Optional[cst.CSTNode], Any]]:
        """*call*'s record in :meth:`switches` (None: not a stream switch)."""
        return self.switches().get(call) if call in self.resolved else None

    def switch_tags(self) -> Tuple[Set[str], bool]:
        """The stream tags the file's switches use, and whether some switch's tag is unknown."""
        def compute():
            tags: Set[str] = set()
            unknown = False
            for _, bound, _, tag in self.switches().values():
                if bound is not None and isinstance(tag, str):
                    tags.add(tag)
                else:
                    unknown = True
            return tags, unknown

        return self._once("switch_tags", compute)

    def record_streams(self) -> Dict[cst.Call, Tuple[Site, Optional[cst.CSTNode], Any]]:
        """The ``npu_record_tagged_stream`` calls: call -> ``(site, tag expression, tag value)``;
        the expression is None (and the tag UNKNOWN) for a call that does not bind or passes no tag."""
        def compute():
            out = {}
            for call, (site, q) in self.resolved.items():
                if q == RECORD_STREAM:
                    bound, tag_expr = self.arg(q, call, "tagged_stream")
                    if bound is None:
                        tag_expr = None
                    out[call] = (site, tag_expr, UNKNOWN if tag_expr is None else self.ctx.value(tag_expr, site))
            return out

        return self._once("record_streams", compute)

    def record_stream(self, call: cst.Call) -> Optional[Tuple[Site, Optional[cst.CSTNode], Any]]:
        """*call*'s record in :meth:`record_streams` (None: not an ``npu_record_tagged_stream``)."""
        return self.record_streams().get(call) if call in self.resolved else None

    def creations(self) -> Dict[cst.Call, Tuple[Site, cst.CSTNode, Any]]:
        """The ``npu_create_tagged_event`` calls that bind and pass a tag: call -> ``(site, tag
        expression, tag value)``."""
        def compute():
            out = {}
            for call, (site, q) in self.resolved.items():
                if q == CREATE:
                    bound, tag_expr = self.arg(q, call, "tag")
                    if bound is None or tag_expr is None:
                        continue
                    out[call] = (site, tag_expr, self.ctx.value(tag_expr, site))
            return out

        return self._once("creations", compute)

    def creation(self, call: cst.Call) -> Optional[Tuple[Site, cst.CSTNode, Any]]:
        """*call*'s record in :meth:`creations` (None: not one of them)."""
        return self.creations().get(call) if call in self.resolved else None

    def event_wait(self, call: cst.Call) -> Optional[Tuple[Site, cst.CSTNode, List[Tuple[cst.Call, Site]]]]:
        """*call*'s record if it is a wait on a known event (bound to a name or ``self.<attr>``
        whose every binding is ``npu_create_tagged_event(...)``, and that does not escape):
        ``(site, event expression, the records of that event)``; None otherwise."""
        if call not in self.resolved:
            return None
        return self._once("event_waits", self._event_waits).get(call)

    def _event_waits(self):
        families = self._families()
        records: Dict[tuple, List[Tuple[cst.Call, Site]]] = {}
        waits: List[Tuple[cst.Call, Site, tuple, cst.CSTNode]] = []
        counted: Set[int] = set()
        for call, site in self.calls:
            api = self.resolved.get(call)
            if api is not None and api[1] in (RECORD, WAIT):
                q = api[1]
                ev = self.arg(q, call, "event")[1]
                if ev is None:
                    continue
            elif api is None and type(call.func) is cst.Attribute and call.func.attr.value == "record":
                q, ev = RECORD, call.func.value  # ``e.record(stream=None)``: the event's own method
            else:
                continue
            key = self._event_key(ev, site, families)
            if key is None:
                continue
            counted.add(id(ev) if api is not None else id(call.func))  # (the method: see _escaped)
            if q == RECORD:
                records.setdefault(key, []).append((call, site))
            else:
                waits.append((call, site, key, ev))
        if not waits:
            return {}
        escaped = self._escaped(families, counted)
        return {call: (site, ev, records.get(key, [])) for call, site, key, ev in waits
                if key not in escaped and self._created(key, ev, site, families) and not self._used_elsewhere(key)}

    # -- the event table ----------------------------------------------------------------
    def _families(self) -> Dict[Scope, Optional[int]]:
        """Classes of this file grouped with the classes they inherit from or that inherit
        from them; None for a class with a base we cannot see (it may share attributes)."""
        sem = self.ctx.sem
        parent: Dict[cst.ClassDef, cst.ClassDef] = {}
        open_: Set[cst.ClassDef] = set()
        by_scope = {}

        def find(c):
            while parent.get(c, c) is not c:
                c = parent[c]
            return c

        for cls, site in self.classes:
            parent.setdefault(cls, cls)
            for base in cls.bases:
                b = base.value
                binding = sem.certain_binding(b, site)
                if binding is not None and binding.kind == "class":  # a class of this file
                    other = binding.node
                    parent.setdefault(other, other)
                    parent[find(cls)] = find(other)
                    continue
                qs = sem.qualnames(b, site)
                if not qs or not qs <= _PLAIN_BASES:
                    open_.add(cls)
        roots_open = {find(c) for c in open_}
        for cls, _ in self.classes:
            scope = sem.scope_of.get(cls)
            if scope is not None:
                root = find(cls)
                by_scope[scope] = None if root in roots_open else id(root)
        return by_scope

    def _event_key(self, expr, site: Site, families) -> Optional[tuple]:
        sem = self.ctx.sem
        if isinstance(expr, cst.Name):
            scope, bl, _ = sem.lookup(expr.value, site)
            if scope is None or not bl or any(b.kind == "param" for b in bl):
                return None
            return ("name", id(scope), expr.value)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            cls = self._self_class(site, expr.value.value)
            if cls is None:
                return None
            fam = families.get(cls)
            if fam is None:
                return None
            return ("attr", fam, expr.attr.value)
        return None

    def _used_elsewhere(self, key: tuple) -> bool:
        """Whether another module of the run may use the event: a module-level name it
        imports (``from pkg.base import MOE_EVENT``), or ``self.<attr>`` that a subclass there,
        or any object there, passes on or records (``x.<attr>`` used other than by a read).
        Such an event escapes the file: its records there are not counted here."""
        sem = self.ctx.sem
        run = _modules.active()
        if run is None or not run.files or not sem.module_name or run.paths.get(sem.module_name) is None:
            return False  # no module of the run can name this file (none, or two files, have its name)
        if key[0] == "name" and key[1] != id(sem.module_scope):
            return False  # a local or closure variable
        return run.touched(key[2], "use", sem.module_name)

    def _self_class(self, site: Site, name: str) -> Optional[Scope]:
        """The class whose instance *name* is at *site*: the first parameter of the method
        *site* is in, or of the method a nested function or lambda at *site* takes it from as a
        closure variable (``def branch(x): npu_tagged_event_record(self.ev)`` in ``forward``),
        when nothing between rebinds it and the method binds it only as that parameter."""
        sem = self.ctx.sem
        cls = sem.self_class(site.scope, name)
        if cls is not None or site.scope.kind not in ("function", "lambda", "comprehension"):
            return cls
        scope, bl, _ = sem.lookup(name, site)
        if scope is None or scope is site.scope or len(bl) != 1 or bl[0].kind != "param":
            return None
        return sem.self_class(scope, name)

    def _created(self, key, ev, site: Site, families) -> bool:
        """Every binding of the event name is ``npu_create_tagged_event(...)``: an event bound
        to a parameter, a subscript or any other expression is unknown (RULES.md NPU3xx)."""
        sem = self.ctx.sem
        if key[0] == "name":
            scope, bl, _ = sem.lookup(ev.value, site)
            bindings = list(bl)
        else:
            bindings = [b for scope, fam in families.items() if fam == key[1]
                        for b in sem.attrs.get(scope, {}).get(key[2], ())]
        if not bindings:
            return False
        for b in bindings:
            if b.kind != "assign" or b.index or not isinstance(b.value, cst.Call):
                return False
            if self.ctx.resolve(b.value.func, b.site, {CREATE}) is None:
                return False
        return True

    def _escaped(self, families, counted: Set[int]) -> Set[tuple]:
        """Event keys used other than as the event of a record/wait call or an assignment
        target (passed to a function, stored elsewhere, returned...): another name may record them.
        An attribute of the event (a ``torch.npu.Event``) is such a use too, unless it is a method
        that records nothing (:data:`_EVENT_READS`) or the ``record`` of a call counted as a record."""
        sem = self.ctx.sem
        stores: Set[int] = set()
        for scope_attrs in sem.attrs.values():
            for bl in scope_attrs.values():
                for b in bl:
                    if isinstance(b.node, cst.Assign):
                        stores.update(id(t.target) for t in b.node.targets)
        for scope in sem.scope_of.values():
            for bl in scope.bindings.values():
                for b in bl:
                    if isinstance(b.node, cst.Assign):
                        stores.update(id(t.target) for t in b.node.targets)
        out = set()
        inner: Set[int] = set()
        for node, site in self.loads:
            if isinstance(node, cst.Attribute):
                inner.add(id(node.value))
                inner.add(id(node.attr))
                if node.attr.value not in _EVENT_READS and id(node) not in counted:
                    key = self._event_key(node.value, site, families)
                    if key is not None:
                        out.add(key)  # ``e.ipc_handle()``, ``e.<unknown>``, ``r = e.record``
        foreign: Set[str] = set()  # ``<expr>.<attr>`` on an object we cannot tell: maybe an instance's
        for node, site in self.loads:
            if id(node) in counted or id(node) in stores or id(node) in inner:
                continue
            key = self._event_key(node, site, families)
            if key is not None:
                out.add(key)
            elif isinstance(node, cst.Attribute):
                foreign.add(node.attr.value)
        out |= self._reflective(families, inner)
        foreign &= {name for attrs in sem.attrs.values() for name in attrs}
        if foreign:
            # ``for m in [self]: npu_tagged_event_record(m.ev)``, ``E.rec(self)`` recording ``m.ev``:
            # the same attribute of an object that may be an instance of the class
            out.update(("attr", fam, name) for fam in set(families.values()) if fam is not None for name in foreign)
        return out

    def _reflective(self, families, inner: Set[int]) -> Set[tuple]:
        """Event keys a name cannot be seen to reach: every ``self.<attr>`` of a class whose
        instance is passed to a function not of this file (``getattr(self, f"ev_{i}")``,
        ``vars(self)``, ``helper(self)``) or read through ``self.__dict__`` /
        ``self.__getattribute__``; every name of a function whose ``locals()``/``vars()`` is
        read; a module-level name that may escape through the module's namespace
        (:meth:`Semantic.namespace_changed`: ``globals()["EV"]``, ``sys.modules[__name__].EV``)."""
        sem = self.ctx.sem
        argument: Dict[int, Tuple[cst.Call, Site]] = {}
        spaces: Set[int] = set()  # id(function scope) whose names are read by its namespace dict
        for call, site in self.calls:
            for a in call.args:
                argument[id(a.value)] = (call, site)
            if not call.args and site.scope is not sem.module_scope and \
                    sem.resolve(call.func, site, _NAMESPACE_READERS) is not None:
                spaces.add(id(site.scope))
        whole: Set[int] = set()  # families of classes whose instance escapes
        for node, site in self.loads:
            if type(node) is cst.Attribute:
                if node.attr.value in ("__dict__", "__getattribute__") and type(node.value) is cst.Name:
                    cls = self._self_class(site, node.value.value)
                    if cls is not None and families.get(cls) is not None:
                        whole.add(families[cls])
                continue
            if type(node) is not cst.Name or id(node) in inner or id(node) not in argument:
                continue
            cls = self._self_class(site, node.value)
            if cls is None or families.get(cls) is None:
                continue
            call, csite = argument[id(node)]
            if not self._sees_through(call, csite):
                whole.add(families[cls])
        out: Set[tuple] = set()
        if whole:
            for cls, attrs in sem.attrs.items():
                if families.get(cls) in whole:
                    out.update(("attr", families[cls], name) for name in attrs)
        for scope in set(sem.scope_of.values()):
            if id(scope) in spaces:
                out.update(("name", id(scope), name) for name in scope.bindings)
        module = sem.module_scope
        out.update(("name", id(module), name) for name in module.bindings if sem.namespace_changed(name)[1])
        return out

    def _sees_through(self, call: cst.Call, site: Site) -> bool:
        """Whether passing an instance to *call* lets no unseen code reach its attributes: a
        builtin that reads nothing of them, ``super``, a function or class of this file (its
        own attribute reads are seen: ``_escaped``'s foreign names), a base's ``__init__``."""
        sem = self.ctx.sem
        f = call.func
        if sem.resolve(f, site, _INSTANCE_READERS) is not None:
            return True
        if type(f) is cst.Name:
            b = sem.certain_binding(f, site)
            return b is not None and b.kind in ("def", "class")
        if type(f) is cst.Attribute and f.attr.value == "__init__":  # Base.__init__(self), nn.Module.__init__(self)
            b = sem.certain_binding(f.value, site) if type(f.value) is cst.Name else None
            if b is not None and b.kind == "class":
                return True
            return sem.resolve(f.value, site, _PLAIN_BASES) is not None
        return False

    # -- facts for the project-wide phase -------------------------------------------------
    def _class_qualname(self, site: Site) -> Optional[str]:
        fn = site.scope.enclosing_function()
        if fn is None or fn.parent is None or fn.parent.kind != "class":
            return None
        return self.ctx.sem.qualname_of_def(fn.parent.node)

    def _facts(self, resolved) -> None:
        ctx = self.ctx
        # the tagged-event APIs the file calls: not every torchair release has each of them, so
        # they tell which releases the code can run on (NPU303 holds on some releases only)
        for q in sorted({q for _, q in resolved.values() if q in _release_apis()}):
            ctx.fact(StreamsAnalysis, ("uses", q))
        # the releases of this file's own configuration (a nested one may name others than the run's)
        ctx.fact(StreamsAnalysis, ("torchair",) + _file_releases(ctx.settings))
        numbers: Dict[int, int] = {}  # id(branch statement) -> its number among this file's creations
        for call, (site, _, tag) in self.creations().items():
            if not isinstance(tag, str):
                continue
            where = self._branches(call, site, ctx.sem, numbers)
            if where is None:
                continue  # after a return: never runs
            span = ctx.span(call)
            looped = self._looped(call, site)
            # a parameter's default runs where its def runs, whose scope the traversal is not in
            # there (the function's own): not counted per instance or per call
            default = id(call) in self.param_calls
            ctx.fact(StreamsAnalysis, ("create", tag, span.line, span.column, span.end_line, span.end_column,
                                       None if default else self._class_qualname(site), looped,
                                       self.conditional(call, site), where,
                                       self._runner(site) if id(call) not in self.header_calls else "?"))
        self._facts_for_instances()

    def _stream_facts(self) -> None:
        """NPU305's fact (one per file the analysis reads, so the project phase knows which files
        it has read): the file's own path; the tags of its torchair stream switches and whether
        one is unknown; the strings its other calls pass on (a project's wrapper of the switch
        takes the tag so: ``npu_stream_switch(enable, "22")`` in hicann/cann-recipes-infer,
        executor/utils/common_utils.py:111-113); and its ``npu_record_tagged_stream`` calls with
        a literal tag, each with the program's other files whose text may pass that tag on
        (:func:`_tag_users`; None: unknown)."""
        ctx = self.ctx
        tags, unknown = self.switch_tags()
        passed: Set[str] = set()
        records = []
        for call, site in self.calls:
            if call not in self.resolved:
                for a in call.args:
                    if self._may_hold_strings(a.value, site):
                        _strings(ctx.value(a.value, site), passed)
                continue
            record = self.record_stream(call)
            if record is not None and isinstance(record[2], str) and record[2] != "default":
                span = ctx.span(record[1])
                records.append((record[2], span.line, span.column, span.end_line, span.end_column))
        users = _tag_users(ctx.path, {r[0] for r in records}) if records else {}
        ctx.fact(StreamsAnalysis, ("streams", ctx.path, tuple(sorted(tags)), unknown, tuple(sorted(passed)),
                                   tuple(r + (users[r[0]],) for r in records)))

    def _may_hold_strings(self, e: cst.BaseExpression, site: Site, depth: int = 0) -> bool:
        """Whether evaluating *e* may give a string or a container holding one (what
        :meth:`_stream_facts` keeps of a call's arguments): a string literal, a name bound to
        such an expression or imported (a module's constant), an attribute or item (a class's or
        a literal's), an operation or display with such a part. Anything else (a call's result,
        a parameter, a number) gives none, so it is not evaluated: evaluating every argument of
        every call was the costliest part of the streams analysis."""
        t = type(e)
        if t in (cst.SimpleString, cst.ConcatenatedString, cst.Attribute, cst.Subscript):
            return True
        if depth > 8:
            return True
        if t is cst.BinaryOperation:
            return self._may_hold_strings(e.left, site, depth + 1) or self._may_hold_strings(e.right, site, depth + 1)
        if t in (cst.Tuple, cst.List, cst.Set):
            return any(self._may_hold_strings(el.value, site, depth + 1) for el in e.elements)
        if t is cst.Dict:
            return any(isinstance(el, cst.StarredDictElement) or self._may_hold_strings(el.key, site, depth + 1)
                       or self._may_hold_strings(el.value, site, depth + 1) for el in e.elements)
        if t is not cst.Name:
            return False
        cands, _ = self.ctx.sem.reaching(e.value, site)
        return any(b.kind in ("import", "aug") or (b.kind == "assign" and b.value is not None and
                                                  self._may_hold_strings(b.value, b.site, depth + 1))
                   for b in cands)

    def _looped(self, call: cst.Call, site: Site) -> bool:
        """Whether *call* may run more than once per run of its function (or module): in a
        comprehension, or in a loop whose iteration may go on after it. A loop whose body,
        from the statement that holds the call, certainly leaves the loop (a ``break``,
        ``return``, ``raise`` or ``sys.exit()`` at its top level, no ``continue`` of the loop on
        the way) runs the call at most once."""
        if any(s.kind == "comprehension" for s in site.scope.chain()):
            return True
        return any(is_loop and (id(blk) not in self._ending_loops or not self._leaves_after(blk, call, site))
                   for blk, is_loop in site.blocks)

    def _leaves_after(self, loop: cst.CSTNode, node: cst.CSTNode, site: Site) -> bool:
        """Whether every iteration of *loop* (a ``for`` or ``while``) that runs *node* leaves the
        loop after it: in the body's top level or in the ``if``/``else`` arms that hold *node*, a
        statement from the one that holds *node* on is a ``break``, ``return``, ``raise`` or a
        ``sys.exit()``/``os._exit()``/``exit()`` call, and no ``continue`` stands in those statements before
        it. (Not through ``try`` or ``with``: an exception caught there goes on with the loop.)"""
        body: Optional[cst.CSTNode] = getattr(loop, "body", None)
        while body is not None:
            units, owner, continues = self._block(body)
            at = owner.get(id(node))
            if at is None:
                return False  # (a while loop's test, a for loop's iterable, an if's test: every iteration)
            for i in range(at, len(units)):
                u = units[i]
                if continues[i]:
                    return False
                if isinstance(u, (cst.Break, cst.Return, cst.Raise)) or (
                        isinstance(u, cst.Expr) and isinstance(u.value, cst.Call)
                        and self.ctx.sem.resolve(u.value.func, site, _EXITS) is not None):
                    return True
            body = self._arm_holding(units[at], node)  # the if/else arm that holds it, down an elif chain
        return False

    def _arm_holding(self, stmt: cst.CSTNode, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The body of the ``if``/``elif``/``else`` arm of *stmt* that holds *node*; None when
        *stmt* is no ``if`` or *node* is in a test."""
        arm: Optional[cst.CSTNode] = stmt
        while isinstance(arm, cst.If):
            if id(node) in self._block(arm.body)[1]:
                return arm.body
            arm = arm.orelse
            if isinstance(arm, cst.Else):
                return arm.body if id(node) in self._block(arm.body)[1] else None
        return None

    def _block(self, body: cst.CSTNode):
        """A block's statements (a line's small statements one by one), the index of the
        statement that holds each node in it, and whether each holds a ``continue`` of the loop
        it is in: worked out once per block, with one walk of it."""
        hit = self._blocks.get(id(body))
        if hit is not None and hit[0] is body:
            return hit[1]
        units: List[cst.CSTNode] = []
        for stmt in getattr(body, "body", ()):
            units.extend(stmt.body if isinstance(stmt, cst.SimpleStatementLine) else (stmt,))
        owner: Dict[int, int] = {}
        continues: List[bool] = []
        for i, u in enumerate(units):
            found = False
            todo = [(u, True)]  # (node, whether a continue there is of this loop)
            while todo:
                n, own = todo.pop()
                owner[id(n)] = i
                t = type(n)
                if own and t is cst.Continue:
                    found = True
                if t is cst.For or t is cst.While:  # (a loop's else belongs to the loop around it)
                    todo.extend((c, own and c is n.orelse) for c in child_nodes(n))
                elif t is cst.FunctionDef or t is cst.ClassDef or t is cst.Lambda:
                    todo.extend((c, False) for c in child_nodes(n))
                else:
                    todo.extend((c, own) for c in child_nodes(n))
            continues.append(found)
        info = (units, owner, continues)
        self._blocks[id(body)] = (body, info)
        return info

    def _facts_for_instances(self) -> None:
        """Instantiations of classes (calls resolved to a qualified name) and class bases,
        so the project phase can tell a class instantiated more than once; the modules this
        one imports, so it can tell which files run in one process."""
        ctx = self.ctx
        sem = ctx.sem
        if sem.module_name:
            imported = set()
            for b in sem.all_bindings():
                if b.kind == "import" and b.qualname:
                    names = [b.qualname]
                    if isinstance(b.node, cst.Import) and "." not in b.qualname:
                        # ``import pkg.mod`` binds ``pkg`` and runs ``pkg.mod`` too
                        names = [d for d in (dotted(a.name) for a in b.node.names if a.asname is None)
                                 if d and d.split(".")[0] == b.qualname] or names
                    for name in names:
                        parts = name.split(".")
                        imported.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
            ctx.fact(StreamsAnalysis, ("module", sem.module_name, tuple(sorted(imported))))
        calls = self._method_calls() if self.classes else {}
        refs = self._method_refs() if self.classes else {}
        for cls, site in self.classes:
            q = sem.qualname_of_def(cls)
            if q is None:
                continue
            # a base we cannot name is a class of its own whose methods are unknown
            bases = [sem.callee_qualname(base.value, site) or f"?{i}:{q}" for i, base in enumerate(cls.bases)]
            scope = sem.scope_of.get(cls)
            own = calls.get(scope, {})
            # every name the class body binds shadows the bases' (a method, or an attribute)
            methods = sorted(scope.bindings) if scope is not None else ()
            named = refs.get(scope, {})
            # what a call of the class makes is unknown: a decorator may return another object
            # (a singleton's cached instance), a metaclass's ``__call__`` may not run
            # ``__init__``, and a name bound twice (``def Events(): return _inst``) may not be
            # the class where it is called
            opaque = self._opaque_class(cls, site)
            ctx.fact(StreamsAnalysis, ("class", q, tuple(bases), tuple(
                (m,) + tuple(tuple(sorted(c)) for c in own.get(m, (set(), set(), set()))) +
                (tuple(sorted(named.get(m, ()))),) for m in methods), opaque))
        for q, attr, child in self._submodules():
            ctx.fact(StreamsAnalysis, ("attr", q, attr, child))
        for q in self._called_by_name():
            ctx.fact(StreamsAnalysis, ("direct", q))
        # an instantiation under `if __name__ == "__main__":` runs only when this file is the
        # script, never in a process that imports it
        guards = {sem.top_of.get(id(g)) for g in sem.main_guards}  # top-level statements: calls in one share its index
        branches: Dict[int, int] = {}  # id(branch statement) -> its number in this file
        held = self._held() if self.classes else {}
        plain: Dict[int, bool] = {}  # id(function scope) -> whether a call runs its body as written
        for call, site in self.calls:
            # (a function that calls only torchair, such as ``make()`` returning a created
            # event, is counted by its calls too)
            fn = site.scope.enclosing_function()
            if fn is not None and fn.kind == "function" and id(fn) not in plain:
                plain[id(fn)] = id(fn) not in self._not_plain and _plain_function(fn.node)
                runner = self._runner(site)
                if plain[id(fn)] and runner not in (None, "?"):
                    ctx.fact(StreamsAnalysis, ("plain", runner))
                if fn.parent is sem.module_scope and runner not in (None, "?"):
                    # defined at the top level (with a decorator too): where the run does not
                    # show how often it runs, an entry of its own (:func:`_entry`)
                    ctx.fact(StreamsAnalysis, ("toplevel", runner))
            q = sem.callee_qualname(call.func, site)
            if q is None or q.startswith(("torch.", "torchair.")):
                continue
            looped = self._looped(call, site)
            owner = sem.enclosing_class(site)
            in_main = bool(guards) and sem.top_of.get(id(call), ()) in guards
            where = self._branches(call, site, sem, branches)
            if where == () and id(call) in self.guarded:
                # an operand of ``and``/``or`` (``_m = _m or make()``) or a filtered comprehension,
                # which the flow does not split: it may not run, so it runs under a branch of its
                # own (one no other call shares: it excludes nothing)
                where = ((branches.setdefault(id(call), len(branches)), (0,)),)
            runner = self._runner(site) if id(call) not in self.header_calls else "?"  # (evaluated where the def runs)
            ctx.fact(StreamsAnalysis, ("new", q, looped, sem.qualname_of_def(owner.node) if owner else None, in_main,
                                       where, runner, held.get(id(call))))

    def _opaque_class(self, cls: cst.ClassDef, site: Site) -> int:
        """Whether a call of the class *cls* may not make an instance as written: 2 where its
        subclasses inherit that (a metaclass other than ``abc.ABCMeta`` or ``type``, which may
        cache instances or not run ``__init__``; any other class keyword), 1 for the class
        alone (a decorator that may return another object, unless it is known to return the
        class: :data:`_CLASS_DECORATORS`, or a function of this file whose every ``return``
        gives back its parameter; the class's name bound twice, as by a later
        ``def Events(): return _inst``), 0 for a plain class."""
        sem = self.ctx.sem
        for kw in cls.keywords:
            if kw.keyword is None or kw.keyword.value != "metaclass" or \
                    sem.resolve(kw.value, site, _PLAIN_METACLASSES) is None:
                return 2
        if any(not self._returns_the_class(d.decorator, site) for d in cls.decorators):
            return 1
        return 1 if len(site.scope.bindings.get(cls.name.value, ())) > 1 else 0

    def _returns_the_class(self, decorator: cst.CSTNode, site: Site) -> bool:
        sem = self.ctx.sem
        if sem.resolve(decorator.func if isinstance(decorator, cst.Call) else decorator, site,
                       _CLASS_DECORATORS) is not None:
            return True  # (``@dataclass`` and ``@dataclass(frozen=True)`` alike)
        if not isinstance(decorator, cst.Name):
            return False
        b = sem.certain_binding(decorator, site)
        fn = b.node if b is not None and b.kind == "def" else None
        if not isinstance(fn, cst.FunctionDef) or fn.asynchronous is not None:
            return False
        params = fn.params.posonly_params or fn.params.params
        if not params:
            return False
        first = params[0].name.value
        returns = []
        todo: List[cst.CSTNode] = [fn.body]
        while todo:
            n = todo.pop()
            t = type(n)
            if t is cst.Return:
                returns.append(n)
            elif t in (cst.Yield, cst.Await):
                return False
            if t not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
                todo.extend(child_nodes(n))
        # (a body that may end without a return gives None: not the class)
        return bool(returns) and all(isinstance(r.value, cst.Name) and r.value.value == first for r in returns) \
            and _ends_in_return(fn.body)

    def _called_by_name(self) -> List[str]:
        """The functions of the file's top level (defined once, not under a branch, without a
        decorator) whose name the file uses only to call them (``run_inference(args)``; not
        passed on, stored, exported by ``global`` or a star import): in this file, they run
        where its calls of them run (:func:`_callers`). Their qualified names."""
        sem = self.ctx.sem
        module = sem.module_scope
        if module.stars:
            return []
        defs = {name: bl[0].node for name, bl in module.bindings.items()
                if len(bl) == 1 and bl[0].kind == "def" and not bl[0].conditional
                and isinstance(bl[0].node, cst.FunctionDef) and not bl[0].node.decorators}
        if not defs:
            return []
        called = {id(call.func) for call, _ in self.calls}
        own = {id(fn.name) for fn in defs.values()}
        for node, _ in self.loads:
            if isinstance(node, cst.Attribute):
                own.add(id(node.attr))  # ``x.run_inference``: another object's
        for node, site in self.loads:
            if type(node) is cst.Name and node.value in defs and id(node) not in called and id(node) not in own:
                scope = sem.lookup(node.value, site)[0]
                if scope is None or scope is module:
                    del defs[node.value]
        return sorted(q for q in (sem.qualname_of_def(fn) for fn in defs.values())
                      if q is not None and not q.startswith("<file>"))

    @staticmethod
    def _branches(call: cst.Call, site: Site, sem: Semantic, numbers: Dict[int, int]):
        """The branches *call* runs under in its function (or module): ``((branch, arms), ...)``
        with the branch numbered in this file (:mod:`npulint.flow`); None when it never runs."""
        scope = site.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        flow = sem.flows.flow(scope.node)
        if id(call) in flow.dead:
            return None
        path = flow.paths.get(id(call), {})
        return tuple(sorted((numbers.setdefault(k, len(numbers)), tuple(sorted(arms))) for k, arms in path.items()))

    def _submodules(self) -> List[Tuple[str, str, str]]:
        """``(class, attribute, class of the instance it holds)`` for each attribute a class's
        ``__init__`` binds at its top level to an instance of a named class
        (``self.attn = Attn(...)``), and that nothing else assigns (:meth:`Semantic.attribute_stored_once`:
        no other store of the name in the file, on any object, nor in another module): a
        compiled method that calls ``self.attn(...)`` runs ``Attn.forward``."""
        sem = self.ctx.sem
        sites = {id(call): site for call, site in self.calls}
        out = []
        for cls, _ in self.classes:
            q = sem.qualname_of_def(cls)
            init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
            if q is None or init is None or not init.params.params:
                continue
            me = init.params.params[0].name.value
            candidates = []  # (attribute, class) of __init__'s top-level self.<attr> = Class(...)
            for stmt in init.body.body:
                if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1 or type(stmt.body[0]) is not cst.Assign:
                    continue
                a = stmt.body[0]
                if len(a.targets) != 1 or type(a.value) is not cst.Call:
                    continue
                target = a.targets[0].target
                if type(target) is not cst.Attribute or type(target.value) is not cst.Name or target.value.value != me:
                    continue
                site = sites.get(id(a.value))
                child = sem.callee_qualname(a.value.func, site) if site is not None else None
                if child is not None and not child.startswith(("torch.", "torchair.")):
                    candidates.append((target.attr.value, child))
            out.extend((q, attr, child) for attr, child in candidates if sem.attribute_stored_once(attr))
        return out

    def _held(self) -> Dict[int, str]:
        """id(instantiation) -> where the instance its class's construction makes is held, by the
        name a method calls it with: ``"attn"`` for ``self.attn = Attn()`` (also under ``if``, or
        ``Attn() if c else None``; ``self.attn(x)`` calls it), ``"body"`` for an element of
        ``self.body = nn.Sequential(A(), B())`` (``self.body(x)`` calls them all), ``"layers[]"``
        for an element of ``self.layers = nn.ModuleList([...])`` (``ModuleDict``, a list, tuple
        or dict display or comprehension; or added by ``self.layers.append(Layer())``,
        ``.extend``, ``.insert``, ``self.layers[k] = ...``): iterating over ``self.layers`` and
        calling the item calls each, ``self.layers[i](x)`` one of them. In the class's
        construction: ``__init__`` and the methods of the class it names (``self._build()``),
        transitively; and only where every store of the attribute name in the run is one of
        theirs (:meth:`Semantic.attribute_stored_only`): then nothing rebinds it after."""
        sem = self.ctx.sem
        sites = {id(call): site for call, site in self.calls}
        out: Dict[int, str] = {}
        refs = self._method_refs()

        def kind(call: cst.Call) -> Optional[str]:
            site = sites.get(id(call))
            q = sem.callee_qualname(call.func, site) if site is not None else None
            if q in _SEQUENTIAL:
                return "sequential"
            if q in _CONTAINERS:
                return "container"
            return None if q is None or q.startswith(("torch.", "torchair.")) else "instance"

        classes: Dict[str, Set[Optional[str]]] = {}  # key -> the classes instantiated under it
        sequentials: Set[str] = set()  # attributes holding an nn.Sequential (a call runs every element)

        unread: Set[str] = set()  # keys holding something other than instances we can name

        def instance(e, key: str, found: Dict[int, str]) -> None:
            """*e* is the value held under *key*."""
            if isinstance(e, cst.IfExp):
                instance(e.body, key, found)
                instance(e.orelse, key, found)
            elif isinstance(e, cst.Call) and kind(e) == "instance":
                found[id(e)] = key
                site = sites.get(id(e))
                classes.setdefault(key, set()).add(sem.callee_qualname(e.func, site) if site is not None else None)
            elif key.endswith("[]"):
                unread.add(key)  # an element we cannot name (``layers.append(block)``): which class it is is unknown

        def elements(e, key: str, found: Dict[int, str]) -> None:
            """*e* is a collection whose elements are held under *key*."""
            if isinstance(e, (cst.List, cst.Tuple, cst.Set)):
                for el in e.elements:
                    if isinstance(el, cst.StarredElement):
                        elements(el.value, key, found)
                    else:
                        instance(el.value, key, found)
            elif isinstance(e, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
                instance(e.elt, key, found)
            elif isinstance(e, cst.DictComp):
                instance(e.value, key, found)
            elif isinstance(e, cst.Dict):
                for el in e.elements:
                    if isinstance(el, cst.DictElement):
                        instance(el.value, key, found)
                    else:
                        unread.add(key)  # ``{**other}``
            else:
                unread.add(key)  # ``ModuleList(list(self.layers) + [Dense()])``, ``ModuleList(blocks)``

        def value(v, attr: str, found: Dict[int, str]) -> bool:
            """``self.<attr> = v``; whether *v* is a container (its elements are held)."""
            if isinstance(v, cst.Call) and kind(v) == "sequential":
                sequentials.add(attr)
                for a in v.args:
                    if a.star == "*":
                        elements(a.value, attr, found)
                    elif not a.keyword and not a.star:
                        instance(a.value, attr, found)
                return False
            if isinstance(v, cst.Call) and kind(v) == "container":
                if v.args and not v.args[0].keyword and not v.args[0].star:
                    elements(v.args[0].value, attr + "[]", found)
                return True
            if isinstance(v, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp, cst.Dict, cst.DictComp)):
                elements(v, attr + "[]", found)
                return True
            instance(v, attr, found)
            return False

        def statements(body, me: str):
            for stmt in body:
                if isinstance(stmt, cst.SimpleStatementLine):
                    yield from stmt.body
                elif isinstance(stmt, cst.BaseSmallStatement):  # ``if c: self.a = A()``
                    yield stmt
                elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                    continue
                else:
                    for block in _blocks(stmt):
                        yield from statements(block, me)

        def on_self(e, me: str) -> Optional[str]:
            if isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and e.value.value == me:
                return e.attr.value
            return None

        for cls, _ in self.classes:
            stores: Dict[str, int] = {}  # attribute -> its stores in the class's methods
            found: Dict[str, Dict[int, str]] = {}  # attribute -> the instances it holds
            containers: Set[str] = set()
            added: List[Tuple[str, cst.CSTNode, bool]] = []  # (attribute, what .append/[k] = adds, .extend)
            # the construction: __init__ and the methods of the class it names as self.<m>, transitively
            named = refs.get(sem.scope_of.get(cls), {})
            construction, todo = {"__init__"}, ["__init__"]
            while todo:
                for m in named.get(todo.pop(), ()):
                    if m not in construction:
                        construction.add(m)
                        todo.append(m)
            smalls = []  # (the method's instance parameter, a simple statement of the method)
            for fn in cls.body.body:
                if isinstance(fn, cst.FunctionDef) and fn.name.value in construction and fn.params.params and \
                        not fn.decorators:
                    me = fn.params.params[0].name.value
                    smalls.extend((me, small) for small in statements(fn.body.body, me))
            for me, small in smalls:
                if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    if len(targets) != 1:
                        continue
                    attr = on_self(targets[0], me)
                    if attr is not None:
                        stores[attr] = stores.get(attr, 0) + 1
                        if value(small.value, attr, found.setdefault(attr, {})):
                            containers.add(attr)
                    elif isinstance(targets[0], cst.Subscript):
                        attr = on_self(targets[0].value, me)
                        if attr is not None:
                            added.append((attr, small.value, False))
                elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
                        isinstance(small.value.func, cst.Attribute) and small.value.args:
                    attr = on_self(small.value.func.value, me)
                    method = small.value.func.attr.value
                    if attr is not None and method in ("append", "extend", "insert"):
                        added.append((attr, small.value.args[-1].value, method == "extend"))
            for attr, v, many in added:
                if attr in containers:
                    (elements if many else instance)(v, attr + "[]", found[attr])
            for attr, held in found.items():
                if not held or attr in unread or attr + "[]" in unread:
                    continue
                if self._replaced_by_name(attr) or ((attr in containers or attr in sequentials) and
                                                    not self._container_kept(attr, construction, cls)):
                    continue  # changed where we do not follow it: what it holds when called is unknown
                held_classes = set().union(*(classes.get(k, set()) for k in set(held.values())))
                if len(held_classes) > 1 and (stores[attr] > 1 or attr not in containers | sequentials):
                    continue  # ``self.mlp = MoE() if c else Dense()``, or two stores: which one it holds is unknown
                if held and sem.attribute_stored_only(attr, stores[attr]):
                    out.update(held)
        # instance, elements and statements call themselves through their cells, a cycle that
        # holds the binding table and so the file's tree: emptied here, it is freed with the file
        instance = elements = statements = None  # type: ignore[assignment]  # noqa: F841
        return out

    def _container_kept(self, attr: str, construction: Set[str], cls: cst.ClassDef) -> bool:
        """Whether every use of ``<x>.<attr>`` in the file reads the container (a call, iteration,
        an item read, ``len``/``enumerate``/``list``..., a reading method, a store of the attribute
        itself), or is one of the additions the construction of *cls* makes (``.append`` and item
        stores in its methods); and no other module of the run may change it in place or take it
        (``m.layers.append(Dense())`` later, ``add_first(self.layers)``, ``m.layers[0] = Dense()``)."""
        sem = self.ctx.sem
        uses, _ = sem._use_table()
        parent = sem._uses_parent
        sites = self._load_sites()
        for a in sem._attr_uses.get(attr, ()):
            p = parent.get(a)
            site = sites.get(id(a))
            fn = site.scope.enclosing_function() if site is not None else None
            in_construction = fn is not None and fn.parent is not None and fn.parent.node is cls and \
                isinstance(fn.node, cst.FunctionDef) and fn.node.name.value in construction
            if _reads_container(a, p, parent):
                continue
            if isinstance(p, cst.AssignTarget) or (isinstance(p, cst.AnnAssign) and p.target is a):
                continue  # a store of the attribute: counted by attribute_stored_only
            if in_construction and isinstance(p, cst.Attribute) and p.value is a and \
                    p.attr.value in ("append", "extend", "insert"):
                continue  # an addition the construction makes (see _held)
            return False  # (an item stored, even in the construction: which element is there is unknown)
        return not self._changed_in_other_modules(attr)

    def _replaced_by_name(self, attr: str) -> bool:
        """Whether a file of the run may replace the submodule *attr* by name: ``register_module``,
        ``add_module`` or ``_modules[...]`` with that name, or with a name we cannot read."""
        if _by_name_pattern(attr).search(self.ctx.text) is not None:
            return True
        names = _run_texts("torchair_streams.replacements", self.ctx.path)
        return names is None or "" in names or attr in names

    def _changed_in_other_modules(self, attr: str) -> bool:
        """Whether another Python file of the run may change the container held as *attr* in
        place (:data:`_CHANGED_TEXT`, :data:`_DELETED_TEXT`): what it does to it we do not follow."""
        names = _run_texts("torchair_streams.changes", self.ctx.path)
        return names is None or attr in names

    def _load_sites(self) -> Dict[int, Site]:
        found = self._memo.get("load_sites")
        if found is None:
            found = self._memo["load_sites"] = {id(n): site for n, site in self.loads}
        return found

    def _runner(self, site: Site) -> Optional[str]:
        """The function whose runs run the code at *site*: None at module level (in a class
        body there too), the qualified name of the innermost ``def`` around it, "?" for a lambda
        or a function that has none."""
        fn = site.scope.enclosing_function()
        if fn is None:
            return None
        q = self.ctx.sem.qualname_of_def(fn.node) if fn.kind == "function" else None
        return q if q is not None and not q.startswith("<file>") else "?"

    def _method_calls(self) -> Dict[Scope, Dict[str, Tuple[Set[str], Set[str], Set[str]]]]:
        """Class -> method -> the names it calls as ``self.<name>(...)`` and as
        ``super().<name>(...)``, and the classes whose ``__init__`` it calls on its instance
        (``Base.__init__(self, ...)``, by qualified name), where the call runs whenever the method
        runs (not under ``if``/``for``/``try``..., not in a nested function): what a compiled
        method certainly brings into its graph, and which overridden methods of a base still
        run (a subclass's ``__init__`` that calls neither ``super().__init__()`` nor
        ``Base.__init__(self)`` does not run the base's); not after an ``if`` arm that may end the
        method (``if skip: return x``)."""
        sem = self.ctx.sem
        out: Dict[Scope, Dict[str, Tuple[Set[str], Set[str], Set[str]]]] = {}
        for call, site in self.calls:
            fn = site.scope
            func = call.func
            if fn.kind != "function" or fn.parent is None or fn.parent.kind != "class":
                continue

            def after_an_end() -> bool:
                """after a return (or raise...) that may end the method first: ``if skip: return x``"""
                flow = sem.flows.flow(fn.node)
                return id(call) in flow.dead or bool(flow.paths.get(id(call)))

            if all(loop for _, loop in site.blocks):
                element = self._element_call(call, site)
                if element is not None:
                    if site.blocks and (element.endswith("[i]") or self._loop_may_end(site)) or after_an_end():
                        # one of them in a loop that may not run (``for i in range(k)``), or a loop
                        # a ``continue``/``break``/``return``/``raise`` may leave before the call
                        continue
                    out.setdefault(fn.parent, {}).setdefault(fn.node.name.value, (set(), set(), set()))[0].add(element)
                    continue
            if site.conditional:
                continue
            if isinstance(func, cst.Name) and sem.self_class(fn, func.value) is fn.parent:
                # ``self(x)``: the instance's ``__call__`` (an nn.Module's runs ``forward``)
                if after_an_end():
                    continue
                out.setdefault(fn.parent, {}).setdefault(fn.node.name.value, (set(), set(), set()))[0].add("__call__")
                continue
            if not isinstance(func, cst.Attribute):
                continue
            recv = func.value
            if isinstance(recv, cst.Name) and func.attr.value == "__init__" and call.args and \
                    isinstance(call.args[0].value, cst.Name) and not call.args[0].keyword and \
                    not call.args[0].star and sem.self_class(fn, call.args[0].value.value) is fn.parent:
                # ``Base.__init__(self, ...)``: that class's __init__ runs on this instance
                base = sem.callee_qualname(recv, site)
                if base is not None and not after_an_end():
                    out.setdefault(fn.parent, {}).setdefault(fn.node.name.value, (set(), set(), set()))[2].add(base)
                continue
            if isinstance(recv, cst.Name):
                if sem.self_class(fn, recv.value) is not fn.parent:
                    continue
                slot = 0
            elif isinstance(recv, cst.Call) and isinstance(recv.func, cst.Name) and \
                    sem.qualnames(recv.func, site) == {"builtins.super"}:
                args = recv.args
                if args and not (len(args) == 2 and isinstance(args[0].value, cst.Name) and
                                 args[0].value.value == fn.parent.node.name.value):
                    continue  # super(Other, self): another class's next method
                slot = 1
            else:
                continue
            if after_an_end():
                continue
            per = out.setdefault(fn.parent, {}).setdefault(fn.node.name.value, (set(), set(), set()))
            per[slot].add(func.attr.value)
        return out

    def _element_call(self, call: cst.Call, site: Site) -> Optional[str]:
        """For a call in a method of an element of a collection its instance holds (see
        :meth:`_held`): ``"layers[]"`` when it calls every element, ``for layer in self.layers:
        x = layer(x)`` (also ``enumerate(self.layers)``, ``self.layers.values()``/``.items()``),
        ``"layers[i]"`` when it calls one or some (``self.layers[i](x)``, ``layer =
        self.layers[i]`` then ``layer(x)``, ``for layer in self.layers[a:b]``); else None. The
        loop variable or name must be bound once in the method, and the call be in that loop."""
        sem = self.ctx.sem
        fn = site.scope

        def held(e) -> Optional[str]:  # ``self.<attr>``
            if isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and \
                    sem.self_class(fn, e.value.value) is fn.parent:
                return e.attr.value
            return None

        func = call.func
        if isinstance(func, cst.Subscript):
            attr = held(func.value)
            if attr is None:
                return None
            # ``for i in range(len(self.layers)): self.layers[i](x)``: every element, as iterating
            sl = func.slice
            index = sl[0].slice.value if len(sl) == 1 and isinstance(sl[0].slice, cst.Index) else None
            if isinstance(index, cst.Name):
                bl = fn.bindings.get(index.value, ())
                loop = bl[0].node if len(bl) == 1 and bl[0].kind == "loop" and bl[0].index == () else None
                it = loop.iter if isinstance(loop, cst.For) and (loop, True) in site.blocks else None
                if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and len(it.args) == 1 and \
                        sem.qualnames(it.func, site) == {"builtins.range"}:
                    n = it.args[0].value
                    if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and len(n.args) == 1 and \
                            sem.qualnames(n.func, site) == {"builtins.len"} and held(n.args[0].value) == attr:
                        return attr + "[]"
            return attr + "[i]"
        if not isinstance(func, cst.Name):
            return None
        bl = fn.bindings.get(func.value, ())
        if len(bl) != 1:
            return None
        b = bl[0]
        if b.kind == "assign" and isinstance(b.value, cst.Subscript) and held(b.value.value) is not None:
            return held(b.value.value) + "[i]"
        if b.kind != "loop" or not isinstance(b.node, cst.For) or (b.node, True) not in site.blocks:
            return None
        it, index = b.node.iter, b.index
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate" and \
                sem.qualnames(it.func, site) == {"builtins.enumerate"} and len(it.args) == 1 and index == (1,):
            it, index = it.args[0].value, ()
        elif isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and not it.args and \
                (it.func.attr.value, index) in (("values", ()), ("items", (1,))):
            it, index = it.func.value, ()
        if index != ():
            return None
        if isinstance(it, cst.Subscript) and held(it.value) is not None:
            return held(it.value) + "[i]"  # a slice: some of them
        attr = held(it)
        return attr + "[]" if attr is not None else None

    def _method_refs(self) -> Dict[Scope, Dict[str, Set[str]]]:
        """Class -> method -> every name it (or a function or lambda nested in it) takes as
        ``self.<name>`` or ``super().<name>``, called or not, under a condition or not: the
        methods it may run (worked out once per file: the class facts and the held instances
        both ask)."""
        return self._once("method_refs", self._find_method_refs)

    def _find_method_refs(self) -> Dict[Scope, Dict[str, Set[str]]]:
        sem = self.ctx.sem
        out: Dict[Scope, Dict[str, Set[str]]] = {}
        for node, site in self.loads:
            if not isinstance(node, cst.Attribute):
                continue
            method = site.scope
            while method is not None and not (method.kind == "function" and method.parent is not None
                                              and method.parent.kind == "class"):
                method = method.parent
            if method is None:
                continue
            recv = node.value
            if isinstance(recv, cst.Name):
                if self._self_class(site, recv.value) is not method.parent:
                    continue
            elif not (isinstance(recv, cst.Call) and isinstance(recv.func, cst.Name)
                      and sem.qualnames(recv.func, site) == {"builtins.super"}):
                continue
            out.setdefault(method.parent, {}).setdefault(method.node.name.value, set()).add(node.attr.value)
        return out

    def _api_facts(self, resolved) -> None:
        """Calls whose legality depends on the compile mode, by the class whose method holds them.
        Only the calls that run whenever the method runs: Dynamo traces the branch the values
        of the run take, so a call under ``if``/``else``/``try``/``for``/``while``/``match`` in
        its method (or in a comprehension) may never reach the graph, and its condition is
        unknown (RULES.md: a rule whose inputs are unknown says nothing)."""
        ctx = self.ctx
        for call, (site, q) in resolved.items():
            kind = "event" if q in (RECORD, WAIT, RECORD_STREAM) else "wait_tensor" if q in WAIT_TENSOR else None
            if kind is None or site.conditional or site.scope.kind == "comprehension" or id(call) in self.guarded:
                continue
            owner = ctx.sem.enclosing_class(site)
            cq = ctx.sem.qualname_of_def(owner.node) if owner is not None else None
            if cq is None:
                continue
            fn = site.scope.enclosing_function()
            method = fn.node.name.value if fn is not None and fn.kind == "function" else None
            span = ctx.span(call)
            ctx.fact(StreamsAnalysis, ("api", kind, q.rsplit(".", 1)[-1], cq, method, span.line, span.column,
                                       span.end_line, span.end_column))

    # -- the project phase: computations shared by the rules ------------------------------
    @classmethod
    def facts_in(cls, shared) -> List[Tuple[str, Any]]:
        """This analysis's facts in a rule's *shared* (``project()``/``followup()``)."""
        return (shared or {}).get(cls.__name__, [])

    @classmethod
    def followup_tokens(cls, facts) -> Tuple[Any, ...]:
        """Files that may instantiate, subclass or import what the first pass found: the
        classes holding tagged-event creations or mode-dependent calls, and the modules
        holding creations (for NPU306 across files and NPU303/NPU308 through submodules).

        A class is wanted only together with the last part of its module's name: a file
        reaches ``pkg.layers.Layer`` only by importing it (``from pkg.layers import Layer``,
        ``from .layers import Layer``, ``from pkg import layers``), and the resolver gives
        the class that qualified name in no other way. A class defined in a function
        (``<locals>``) or in a file whose module name is unknown cannot be imported at all:
        in a run over several repositories, a test class ``Model`` of torchair's had made the
        follow-up parse every file of the others that says ``Model``."""
        return _once_per_run("followup", (facts,), lambda: _followup_tokens(facts))

    @classmethod
    def tables(cls, facts) -> Tables:
        """The run's facts folded (once per run)."""
        return _once_per_run("tables", (facts,), lambda: _tables(facts))

    @classmethod
    def modes(cls, facts, compiled) -> Dict[Tuple[str, Optional[str]], Dict[str, Tuple[str, int]]]:
        """(class, method) -> compile mode -> where it is compiled (path, line), for the
        methods that run in a graph compiled with a known mode (the COMPILED facts of
        rules/torchair_config.py; :func:`_modes`). Once per run."""
        return _once_per_run("modes", (facts, compiled), lambda: _modes(cls.tables(facts), compiled))


def _blocks(stmt: cst.CSTNode) -> List[Sequence[cst.CSTNode]]:
    """The statement lists of a compound statement (its body, ``elif``/``else`` arms, handlers...)."""
    out: List[Sequence[cst.CSTNode]] = []
    todo = [stmt]
    while todo:
        n = todo.pop()
        body = getattr(n, "body", None)
        if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            out.append(body.body)
        for field in ("orelse", "finalbody"):
            extra = getattr(n, field, None)
            if extra is not None:
                todo.append(extra)
        todo.extend(getattr(n, "handlers", ()))
        todo.extend(getattr(n, "cases", ()))
    return out


def _comprehension_guarded(scope: Scope) -> bool:
    """Whether a comprehension's element may not be evaluated on some run of the code around
    it: the comprehension (or one it is nested in) has an ``if`` clause, or stands in an
    ``if``/``try``/``match`` block of the function or module around it."""
    s: Optional[Scope] = scope
    while s is not None and s.kind == "comprehension":
        comp = s.node.for_in if hasattr(s.node, "for_in") else None
        while comp is not None:
            if comp.ifs:
                return True
            comp = comp.inner_for_in
        s = s.parent
    return s is not None and any(not loop for _, loop in s.blocks)


def _followup_tokens(facts) -> Tuple[Any, ...]:
    out: Set[Any] = set()
    creating_paths = {path for path, f in facts if f[0] == "create"}
    module_of = {path: f[1] for path, f in facts if f[0] == "module"}

    def wanted(name: str) -> bool:
        return len(name) >= 3 and name.isidentifier()

    for path, f in facts:
        owner = f[6] if f[0] == "create" else f[3] if f[0] == "api" else None
        if owner:
            module = module_of.get(path)
            if not module or not owner.startswith(module + ".") or "<locals>" in owner:
                continue
            name, last = owner.rsplit(".", 1)[-1], module.rsplit(".", 1)[-1]
            if wanted(name) and last.isidentifier():
                out.add((name, last))
        elif f[0] == "module" and path in creating_paths:
            name = f[1].rsplit(".", 1)[-1]
            if wanted(name):
                out.add(name)
    return tuple(sorted(out, key=lambda t: (t,) if isinstance(t, str) else t))


def _tables(facts) -> Tables:
    bases: Dict[str, Tuple[str, ...]] = {}
    methods: Dict[str, Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...]]]] = {}
    children: Dict[str, Dict[Optional[str], Set[Tuple[str, Optional[str]]]]] = {}
    refs: Dict[str, Dict[str, Tuple[str, ...]]] = {}
    attrs: Dict[str, Dict[str, str]] = {}
    explicit_inits: Dict[str, Tuple[str, ...]] = {}
    creations = []
    apis = []
    modules: Dict[str, str] = {}
    imported: Dict[str, Tuple[str, ...]] = {}  # path -> the modules (and prefixes) it imports
    used: Set[str] = set()
    torchair: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...]]] = {}
    calls: Dict[str, List[tuple]] = {}  # path -> its calls of named things (:func:`_per_process`)
    plain: Set[str] = set()  # functions a call runs the body of then and there (:func:`_plain_function`)
    direct: Dict[str, str] = {}  # function -> its file, for those the file uses only to call them
    toplevel: Set[str] = set()  # functions defined at the top level of their file (:func:`_entry`)
    opaque: Dict[str, int] = {}  # classes whose calls may not make an instance (StreamsAnalysis._opaque_class)
    for path, fact in facts:
        if fact[0] == "module":
            modules[path] = fact[1]
            imported[path] = fact[2]
    key = _keys(modules)
    for path, fact in facts:
        kind = fact[0]
        if kind == "new":
            _, q, looped, owner, main, branches, runner, held = fact
            q, owner, runner = key(path, q), key(path, owner), key(path, runner)
            calls.setdefault(path, []).append((q, 2 if looped else 1, main, branches, runner))
            if owner is not None and (runner is None or runner.startswith(owner + ".")):
                # the method of the class that makes it (None: the class body); not one in a lambda
                method = runner[len(owner) + 1:].split(".", 1)[0] if runner is not None else None
                children.setdefault(owner, {}).setdefault(method, set()).add((q, held))
        elif kind == "attr":
            attrs.setdefault(key(path, fact[1]), {})[fact[2]] = key(path, fact[3])
        elif kind == "class":
            q = key(path, fact[1])
            bases[q] = tuple(key(path, b) for b in fact[2])
            methods[q] = {m: (own, sup) for m, own, sup, _, _ in fact[3]}
            explicit_inits[q] = next((tuple(key(path, b) for b in ex) for m, _, _, ex, _ in fact[3]
                                      if m == "__init__"), ())
            refs[q] = {m: named for m, _, _, _, named in fact[3]}
            if fact[4]:
                opaque[q] = fact[4]
        elif kind == "api":
            apis.append((path,) + fact[1:3] + (key(path, fact[3]),) + fact[4:])
        elif kind == "module":
            pass  # (read above)
        elif kind == "uses":
            used.add(fact[1])
        elif kind == "plain":
            plain.add(key(path, fact[1]))
        elif kind == "direct":
            direct[key(path, fact[1])] = path
        elif kind == "toplevel":
            toplevel.add(key(path, fact[1]))
        elif kind == "torchair":
            torchair[path] = (fact[1], fact[2])
        elif kind == "streams":
            pass  # NPU305's (RecordStreamUnknownTag.project)
        else:
            creations.append((path,) + fact[1:6] + (key(path, fact[6]),) + fact[7:10] + (key(path, fact[10]),))
    if opaque:  # a call of such a class (or of a subclass, where a metaclass is inherited) is no known instantiation
        calls = {path: [r for r in records if r[0] not in opaque and
                        not any(opaque.get(a) == 2 for a in _ancestors(r[0], bases))]
                 for path, records in calls.items()}
    imports = _import_graph(modules, imported)
    # what is counted: the classes whose methods create events, and the functions a call runs
    # the body of then and there that create one outside any class (``make()`` returning one)
    owners = {c[6] for c in creations if c[6] is not None}
    owners |= {c[10] for c in creations if c[6] is None and c[10] in plain}
    total, together = _per_process(calls, bases, methods, explicit_inits, imports, owners, plain, direct,
                                   frozenset(toplevel))
    return Tables(total, bases, methods, children, creations, apis, imports, used, torchair,
                  refs, attrs, together, key, opaque)


def _files_of(modules: Dict[str, str]) -> Dict[str, List[str]]:
    """Module name -> the files of the run that hold it (*modules*: path -> module name), sorted."""
    out: Dict[str, List[str]] = {}
    for path, m in sorted(modules.items()):
        out.setdefault(m, []).append(path)
    return out


def _keys(modules: Dict[str, str]) -> Callable[[str, Optional[str]], Optional[str]]:
    """How the tables name the class or function that a file calls *q* (its own, or one it
    instantiates, subclasses or calls through an import): by that qualified name, unless the
    module of *q* (the longest prefix of it that is a module of the run) is a name two files hold
    (``model`` of ``qwen/`` and ``llama/``, each run by its own ``run.py``): then by the file that
    defines it, ``"<file>::<q>"``, the one the name reaches from the file that names it
    (:func:`npulint.paths.reached_from`: its own file, the one of its own folder), so each file's
    ``Attn`` is counted apart; and ``"?<path>::<q>"`` when that is not known (a class of its own,
    with no facts: nothing of it is counted). The last dotted part stays the name."""
    files = _files_of(modules)
    shared = {m: paths for m, paths in files.items() if len(paths) > 1}
    if not shared:
        return lambda path, q: q
    reached: Dict[Tuple[str, str], Optional[str]] = {}

    def key(path: str, q: Optional[str]) -> Optional[str]:
        if q is None:
            return None
        parts = q.split(".")
        m = next((m for m in (".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)) if m in files), None)
        if m not in shared:
            return q
        if (path, m) not in reached:
            reached[path, m] = reached_from(path, shared[m])
        target = reached[path, m]
        return f"{target}::{q}" if target is not None else f"?{path}::{q}"

    return key


# the methods of torch.npu.Event that do not record it (Ascend/pytorch@9e73e708 torch_npu/npu/streams.py:
# wait 219-227, query 229-236, elapsed_time 238-242, recorded_time 244-247, synchronize 249-258); its
# ``record(stream=None)`` (:209-217) records it, and any other attribute may
_EVENT_READS = frozenset({"wait", "query", "elapsed_time", "recorded_time", "synchronize"})

_CONTAINER_READERS = frozenset({"len", "enumerate", "list", "tuple", "iter", "reversed", "zip", "sorted", "print",
                                "isinstance", "id", "repr", "str", "bool"})
_CONTAINER_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
                                 "popitem", "add_module", "register_module", "__setitem__", "__delitem__",
                                 "__iadd__"})


def _reads_container(a: cst.Attribute, p, parent) -> bool:
    """Whether the use *a* (``<x>.<attr>``, its parent *p*) only reads the container it holds."""
    if isinstance(p, cst.Call) and p.func is a:
        return True  # calls it (a Sequential runs its elements; a ModuleList is not callable)
    if isinstance(p, cst.Subscript) and p.value is a:
        up = parent.get(p)
        if isinstance(up, (cst.Element, cst.StarredElement)) or (isinstance(up, (cst.For, cst.CompFor))
                                                                 and up.target is p):
            return False  # (possibly) a target: ``m.layers[0], m.layers[1] = ...``, ``for m.layers[0] in``
        return not isinstance(up, (cst.AssignTarget, cst.Del, cst.AugAssign)) and not (
            isinstance(up, cst.Attribute) and up.value is p and up.attr.value in _CONTAINER_MUTATORS)
    if isinstance(p, cst.Attribute) and p.value is a:
        return p.attr.value not in _CONTAINER_MUTATORS and not p.attr.value.startswith("_")
    if isinstance(p, (cst.For, cst.CompFor)) and p.iter is a:
        return True
    if isinstance(p, cst.Arg) and p.value is a:
        call = parent.get(p)
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in _CONTAINER_READERS
    return isinstance(p, (cst.If, cst.IfExp, cst.While, cst.Comparison, cst.ComparisonTarget, cst.UnaryOperation,
                          cst.BooleanOperation, cst.Assert, cst.FormattedStringExpression))


@functools.lru_cache(maxsize=256)
def _by_name_pattern(attr: str) -> "re.Pattern[str]":
    """Text that may replace the submodule *attr* by name, other than by an attribute store:
    ``m.register_module("moe", Dense())``, ``add_module``, ``m._modules["moe"] = ...``, with
    that name or one that is not a literal."""
    name = re.escape(attr)
    return re.compile(r"\.(?:\s|\\)*(?:register_module|add_module)(?:\s|\\)*\((?:\s|\\)*(?:(?!['\"])|['\"]%s['\"])"
                      r"|\._modules(?:\s|\\)*\[(?:\s|\\)*(?:(?!['\"])|['\"]%s['\"])" % (name, name))


# In another module's text: an attribute changed in place (``x.NAME[k] = v``, ``+=``,
# ``x.NAME.append(v)`` and the other mutators, ``del x.NAME[k]``; not the container passed to a
# function there: ``len(model.layers)`` and the like are too common to read as changes), and a
# submodule replaced by name (``register_module``, ``add_module``, ``_modules[...]``: the name, or
# "" for one that is not a literal).
_GAP = r"(?:\s|\\)*"
_CHANGED_TEXT = re.compile(r"\." + _GAP + r"(\w+)" + _GAP + r"(?:\[[^\]\n]*\]" + _GAP + r"(?:=(?!=)|[-+*/%@&|^]=)|\."
                           + _GAP + r"(?:" + "|".join(sorted(_CONTAINER_MUTATORS)) + r")\b)")
_DELETED_TEXT = re.compile(r"del\b[^\n]*\." + _GAP + r"(\w+)" + _GAP + r"\[")
_BY_NAME_TEXT = re.compile(r"\." + _GAP + r"(?:register_module|add_module)" + _GAP + r"\(" + _GAP + r"(?:['\"](\w+)['\"])?"
                           r"|\._modules" + _GAP + r"\[" + _GAP + r"(?:['\"](\w+)['\"])?")


def _changed_names(text: str) -> Set[str]:
    """The names of ``findall`` of the two patterns above as one alternation (a match of one
    hides the other's that start inside it), each searched for apart: a pattern that starts with
    a literal is found by a fast scan, an alternation is tried at every character."""
    names: Set[str] = set()
    store = _CHANGED_TEXT.search(text)
    delete = _DELETED_TEXT.search(text) if "del" in text else None
    while store is not None or delete is not None:
        m = store if delete is None or (store is not None and store.start() < delete.start()) else delete
        names.add(m.group(1))
        end = m.end()
        if store is not None and store.start() < end:
            store = _CHANGED_TEXT.search(text, end)
        if delete is not None and delete.start() < end:
            delete = _DELETED_TEXT.search(text, end)
    return names


def _change_texts(text: str) -> Optional[Tuple[str, ...]]:
    """The attribute names a file's text may change in place, sorted; None for none."""
    changed = tuple(sorted(_changed_names(text))) if "." in text else ()
    return changed or None


def _replacement_texts(text: str) -> Optional[Tuple[str, ...]]:
    """The submodule names a file's text may replace by name ("" for a name that is not a
    literal), sorted; None for none."""
    if "_module" not in text:
        return None
    return tuple(sorted({a or b or "" for a, b in _BY_NAME_TEXT.findall(text)})) or None


# two keys: the in-place changes cost a scan of every text, asked only about a held container
_modules.register_text_facts("torchair_streams.changes", _change_texts)
_modules.register_text_facts("torchair_streams.replacements", _replacement_texts)


def _run_texts(key: str, own: str) -> Optional[FrozenSet[str]]:
    """What the Python files of the run's programs other than *own* hold under the text facts
    *key* (read once per run from their texts; a cached result depends on them); None when they
    are too many to read (anything)."""
    run = _modules.active()
    if run is None or not run.files:
        return frozenset()
    facts = run.text_facts(key)
    if facts is None:
        return None
    return frozenset(name for path, names in facts.items() if path != own for name in names)


# NPU305: whether a file's text names torchair's stream switch (read only where a run's
# npu_record_tagged_stream has a literal tag: :func:`_tag_users`)
def _names_switch(text: str) -> bool:
    return "npu_stream_switch" in text or "NpuStreamSwitch" in text


_modules.register_text_facts("torchair_streams.switches", _names_switch)


def _tag_users(own: str, tags: Set[str]) -> Dict[str, Optional[Tuple[str, ...]]]:
    """Each tag -> the Python files of the run's programs other than *own* whose text names
    torchair's stream switch or holds the tag between quotes: where the project phase has not
    read one, that file may switch to the tag's stream (directly or through a wrapper); None
    when that cannot be told (the files are too many to read, or a text would write the tag
    with escapes)."""
    run = _modules.active()
    if run is None or not run.files:
        return {t: () for t in tags}
    switching = run.text_facts("torchair_streams.switches")
    out: Dict[str, Optional[Tuple[str, ...]]] = {}
    for t in tags:
        plain = len(t) <= 200 and repr(t)[1:-1] == t  # (held between quotes as it is)
        quoting = run.quoting(t) if switching is not None and plain else None
        out[t] = None if quoting is None else tuple(sorted((set(switching) | set(quoting)) - {own}))
    return out


def _strings(value: Any, out: Set[str], depth: int = 0) -> None:
    """The strings *value* is or holds (in a tuple, list, set or dict), onto *out*."""
    if isinstance(value, str):
        out.add(value)
    elif depth < 3 and isinstance(value, (tuple, list, set, frozenset)):
        for v in value:
            _strings(v, out, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for k, v in value.items():
            _strings(k, out, depth + 1)
            _strings(v, out, depth + 1)


def _plain_function(fn: cst.FunctionDef) -> bool:
    """Whether a call of *fn* runs its body then and there: no decorator (``lru_cache`` may run
    it once for many calls), not ``async``; and (noted in the traversal, see
    ``StreamsAnalysis.visit_Yield``) not a generator, no ``return``/``raise`` in a loop
    (``for m in registry: return m``: what follows the loop may not run)."""
    return not fn.decorators and fn.asynchronous is None


def _most(sites: List[Tuple[int, Sequence[Dict[Any, FrozenSet[int]]]]]) -> int:
    """How many instantiations the *sites* ((count, ways), :func:`_sites`) certainly make in one
    process: 2 for "more than one" (one site in a loop, or two that may both run: not reached
    only under disjoint arms of one statement, :func:`_apart`), 1, or 0."""
    if not sites:
        return 0
    if any(n > 1 for n, _ in sites):
        return 2
    for i, (_, a) in enumerate(sites):
        if any(not _apart(a, b) for _, b in sites[i + 1:]):
            return 2
    return 1


def _apart(a: Sequence[Dict[Any, FrozenSet[int]]], b: Sequence[Dict[Any, FrozenSet[int]]]) -> bool:
    """Whether code reached only in the ways *a* and code reached only in the ways *b* (each
    way: the branches it runs under, :mod:`npulint.flow`) never both run: every way of one
    excludes every way of the other."""
    return all(Flow.disjoint(x, y) for x in a for y in b)


_MOST_WAYS = 64  # a function reached in more ways than this (through its callers' callers...) is not followed
_MOST_DEPTH = 32  # nor one reached only through a longer chain of calls (each way keys its branches by the chain)


_MAIN = {("entry",): frozenset(("__main__",))}  # the script's main guard: an entry of its own (:func:`_entry`)


def _certainly_run(counted) -> Callable[[str], Optional[Dict[Any, FrozenSet[Any]]]]:
    """Whether the process of *counted* (its calls, as :func:`_callers` reads them) certainly
    runs the function *q*: ``{}`` when a call of it runs under no branch in the modules' code
    (outside the main guard), or in a function that is so run; the main guard's entry
    (``_MAIN``) when only the script's main guard certainly runs it; None when nothing does."""
    by_callee: Dict[str, list] = {}
    for _, r in counted:
        by_callee.setdefault(r[0], []).append(r)
    memo: Dict[str, Optional[Dict[Any, FrozenSet[Any]]]] = {}

    def runs(q: str) -> Optional[Dict[Any, FrozenSet[Any]]]:
        if q not in memo:
            memo[q] = None  # (a cycle: not known)
            found = None
            for r in by_callee.get(q, ()):
                if r[3] != ():
                    continue
                up = {} if r[4] is None else (runs(r[4]) if r[4] != "?" else None)
                if up is None:
                    continue
                way = {**up, **_MAIN} if r[2] else up
                if not way:
                    found = way
                    break
                found = way
            memo[q] = found
        return memo[q]

    return runs


def _entry(q: Optional[str], toplevel: FrozenSet[str],
           runs: Callable[[str], Optional[Dict[Any, FrozenSet[Any]]]] = lambda q: None) -> Dict[Any, FrozenSet[Any]]:
    """The branch that code of the top-level function *q* runs under when the run does not show
    how often *q* runs (nothing in the run calls it; or it is passed on, decorated, called from a
    lambda): one arm of a statement all such functions share, so two of them are never known to
    both run (``infer()`` and ``bench()`` picked as subcommands: one process runs one), while code
    of one of them runs with itself and with the module's code. A test (``test*``) is not one:
    pytest runs every test of its files in one process. Empty for anything else: a method runs
    where its class is instantiated (RULES.md NPU306). A function the process certainly calls
    (*runs*) runs where that call runs: with the module's code, or as part of the main guard's
    entry (a script's own: a function the script's main guard does not call is not run with it)."""
    if q is None or q not in toplevel or q.rsplit(".", 1)[-1].startswith("test"):
        return {}
    certain = runs(q)
    return certain if certain is not None else {("entry",): frozenset((q,))}


def _callers(counted, direct: Dict[str, str], importers: Dict[str, Set[str]],
             toplevel: FrozenSet[str] = frozenset(),
             runs: Callable[[str], Optional[Dict[Any, FrozenSet[Any]]]] = lambda q: None
             ) -> Callable[[Optional[str]], Optional[list]]:
    """The ways the code of each function runs in one process (*counted*: its calls, ``(path,
    (callee, count, in the main guard, branches, runner))``): for a function of *direct* (one
    its file uses only to call it by name, :meth:`StreamsAnalysis._called_by_name`) in a file
    no other module of the run imports, the branches of each of its calls, with the ways the
    function around that call runs (a call at module level: its own branches), up the chain of
    callers, or one way with no branch when no call of the run reaches it (it runs as written, as
    the run's other code: an entry point's ``main``, a test); None (not known: only its own
    branches count) for any other function, one called from a lambda, a parameter default or a
    function not known so, one in a cycle of calls, or one reached in too many ways. ``run_benchmark()`` and
    ``run_inference()`` called in the two arms of ``if args.bench:`` in ``main()`` never both
    run, nor what they make."""
    calls: Dict[str, list] = {}
    for path, r in counted:
        if r[0] in direct and r[3] is not None:  # (a call that never runs reaches nothing)
            calls.setdefault(r[0], []).append((path, r[1], r[3], r[4], r[2]))
    memo: Dict[str, Optional[list]] = {}

    def ways(q: Optional[str]) -> Optional[list]:
        if q is None:
            return [((), {})]  # a module's top level: it runs once
        if q not in direct:
            return None
        if q in memo:
            return memo[q]
        memo[q] = None  # (a cycle: not known)
        if importers.get(direct[q], set()) - {direct[q]}:
            return None
        if q not in calls:
            # called from outside the run (an entry point, pytest): runs as written, as an entry
            memo[q] = [((), _entry(q, toplevel, runs))]
            return memo[q]
        out: Optional[list] = []
        for i, (path, count, branches, runner, main) in enumerate(calls[q]):
            up = ways(runner)
            if up is None or len(out) + len(up) > _MOST_WAYS or any(len(ctx) >= _MOST_DEPTH for ctx, _ in up):
                out = None
                break
            for ctx, way in up:
                # the call's branches are those of one run of its caller (*ctx*); each call is a
                # run of q of its own (a call in a loop, many)
                out.append((ctx + ((q, i, count > 1),), {**way, **(_MAIN if main else {}), **_branch_keys(ctx, path, branches)}))
        memo[q] = out
        return out

    return ways


def _branch_keys(ctx: tuple, path: str, branches) -> Dict[Any, FrozenSet[int]]:
    """The branches *branches* of a function's body (or a module's top level) in the run of
    it that *ctx* names (:func:`_callers`): two runs of one function may take different arms of
    one of its statements, so they are two runs' branches; in a run that is one of many (a call
    in a loop, or in a function so called), none: its arms may take turns."""
    if any(looped for _, _, looped in ctx):
        return {}
    return {(ctx, path, k): frozenset(arms) for k, arms in branches}


def _per_process(calls: Dict[str, List[tuple]], bases: Dict[str, Tuple[str, ...]],
                 methods: Dict[str, Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...]]]],
                 explicit_inits: Dict[str, Tuple[str, ...]], imports: Dict[str, Set[str]],
                 owners: Set[str], plain: FrozenSet[str] = frozenset(),
                 direct: Optional[Dict[str, str]] = None,
                 toplevel: FrozenSet[str] = frozenset()) -> Tuple[Dict[str, int], List[Dict[str, list]]]:
    """Class -> whether one process certainly instantiates it more than once (2), once (1):
    on its own, and with its subclasses for a class that owns a creation. A process runs one
    script: the whole file (its main guard too) and the module-level code of every module of
    the run it imports, directly or through others (RULES.md NPU306: the second creation *in a
    process* raises), and in those modules the functions that code calls (by name: a function,
    ``Class.method``, the ``__init__`` of a class it instantiates, and the bases' ``__init__``
    that one calls through ``super()`` or as ``Base.__init__(self)``), transitively; a call in
    another function of theirs is not known to run. Two entry scripts that instantiate a class once each are two processes,
    as for two creations of one tag (:func:`_one_process`). Two instantiations under disjoint
    arms of one statement never both run, also when the arms are those of their functions'
    calls (:func:`_callers`), and one in dead code never runs (:mod:`npulint.flow`).
    Only the classes that own a creation, and their subclasses, are counted; for a class's
    ``__init__`` ("<class>.__init__"), only the instantiations that run it."""
    wanted: Dict[str, List[str]] = {}  # class -> the owners of creations it runs the methods of
    for records in calls.values():
        for q, *_ in records:
            if q not in wanted:
                wanted[q] = [b for b in [q] + _ancestors(q, bases) if b in owners]
    wanted = {q: line for q, line in wanted.items() if line}
    if not wanted:
        return {}, []
    importers: Dict[str, Set[str]] = {}  # path -> the files of the run that import it
    for path, targets in imports.items():
        for t in targets:
            importers.setdefault(t, set()).add(path)

    # the scripts: the files that instantiate a wanted class, and those whose process imports one
    scripts = {p for p, records in calls.items() if any(r[0] in wanted for r in records)}
    for path in list(scripts):
        scripts |= _closure(path, importers)
    # what the modules run on import, and what their functions run when called
    on_import: Dict[str, List[tuple]] = {}
    in_function: Dict[str, Dict[str, List[tuple]]] = {}  # path -> function -> its calls
    for path, records in calls.items():
        for r in records:
            if r[2]:
                continue  # the main guard runs only when this file is the script
            if r[4] is None:
                on_import.setdefault(path, []).append(r)
            else:
                in_function.setdefault(path, {}).setdefault(r[4], []).append(r)
    mro_memo: Dict[str, Optional[List[str]]] = {}

    inits_memo: Dict[str, List[str]] = {}

    def inits(q: str) -> List[str]:
        """The ``__init__`` methods an instantiation of *q* certainly runs: the first one of
        its method resolution order, and from each that runs, the next one of the order when it
        calls ``super().__init__()``, and the one ``Base.__init__(self)`` names (found in
        ``Base``'s order, its own ``super()`` going on in *q*'s)."""
        if q in inits_memo:
            return inits_memo[q]
        out: List[str] = []
        order = _mro(q, bases, mro_memo) or []

        def first(line: List[str]) -> Optional[str]:
            for c in line:
                if c not in methods:
                    if c in _PLAIN_BASES:
                        continue
                    return None  # a class whose methods are unknown: which __init__ runs is unknown
                if "__init__" in methods[c]:
                    return c
            return None

        todo = [first(order)]
        while todo:
            c = todo.pop()
            if c is None or c + ".__init__" in out:
                continue
            out.append(c + ".__init__")
            if "__init__" in methods[c]["__init__"][1]:  # super().__init__()
                todo.append(first(order[order.index(c) + 1:]) if c in order else None)
            for b in explicit_inits.get(c, ()):  # Base.__init__(self)
                d = first(_mro(b, bases, mro_memo) or [])
                todo.append(d if d in order else None)
        inits_memo[q] = out
        return out

    total: Dict[str, int] = {}
    together: List[Dict[str, list]] = []  # per process: owner -> the branches of each instance
    lines: Dict[str, List[str]] = {}  # class -> it and its ancestors (see _sites)
    for script in scripts:
        others = sorted(_closure(script, imports) - {script})
        counted = [(script, r) for r in calls.get(script, ())]
        counted += [(p, r) for p in others for r in on_import.get(p, ())]
        running: Set[str] = set()
        todo = [r[0] for _, r in counted]
        while todo:
            q = todo.pop()
            if q in running:
                continue
            running.add(q)
            todo.extend(inits(q))
            for p in others:
                for r in in_function.get(p, {}).get(q, ()):
                    counted.append((p, r))
                    todo.append(r[0])
        runs = _certainly_run(counted)
        ways = _callers(counted, direct or {}, importers, toplevel, runs)
        # a call that runs whenever a class's __init__ runs (at its top level, no branch) runs
        # once per instance of that class, subclasses' included (``Layer.__init__`` making
        # ``MoE()``, with ``ModuleList([Layer(i) for i in range(n)])``), and one at the top level
        # of a function once per call of it (``make()`` returning ``Layer()``, called in a
        # comprehension): it runs more than once when the class is instantiated, or the function
        # called, more than once; to a fixed point, down the nesting
        while True:
            sites = _sites(counted, bases, lines, inits, ways, toplevel, runs)
            # a function's calls by the code they are in (one function, or a module's top level):
            # only calls in one such body certainly run together, not two in functions that may
            # never both run (``train()`` and ``eval()`` each calling ``build()``)
            together_calls: Dict[str, Dict[Tuple[str, Optional[str]], list]] = {}
            for path, (q, n, _, branches, runner) in counted:
                if q in plain and branches is not None:
                    together_calls.setdefault(q, {}).setdefault((path, runner), []).append(
                        (n, ({(path, k): frozenset(arms) for k, arms in branches},)))
            grown = False
            for i, (path, r) in enumerate(counted):
                q, n, main, branches, runner = r
                if n < 2 and branches == () and runner and (
                        (runner.endswith(".__init__") and _most(sites.get(runner, ())) > 1) or
                        (runner in plain and any(_most(c) > 1 for c in together_calls.get(runner, {}).values()))):
                    counted[i] = (path, (q, 2, main, branches, runner))
                    grown = True
            if not grown:
                break
        keys = (owners | {b + ".__init__" for b in owners}) & sites.keys()
        for b in keys:
            total[b] = max(total.get(b, 0), _most(sites[b]))
        # (for two owners' creations of one tag: whether one process makes both)
        together.append({b: [way for _, way in sites[b]] for b in keys})
    return total, together


def _sites(counted, bases: Dict[str, Tuple[str, ...]], lines: Dict[str, List[str]],
           inits: Callable[[str], List[str]], ways: Callable[[Optional[str]], Optional[list]],
           toplevel: FrozenSet[str] = frozenset(),
           runs: Callable[[str], Optional[Dict[Any, FrozenSet[Any]]]] = lambda q: None) -> Dict[str, list]:
    """Class -> its instantiations in one process, its own and its subclasses', and
    "<class>.__init__" -> those that run that ``__init__`` (*inits*), each ``(1 or 2, ways)``
    (:func:`_most` counts them): the ways it runs, its branches with each way its function runs
    (*ways*: :func:`_callers`), or its branches alone; from *counted*, ``(path, (class, 1 or 2,
    in the main guard, branches, runner))``. Every class, not only those that own a creation: the
    count of a class's ``__init__`` tells how often its calls run. *lines* memoizes each class
    with its ancestors and the ``__init__`` methods it runs."""
    out: Dict[str, list] = {}
    for path, (q, n, main, branches, runner) in counted:
        if branches is None:
            continue  # never runs
        up = ways(runner)
        guard = _MAIN if main else {}  # (the main guard: the script's entry)
        if up is None:  # its own branches only (and, for a top-level function, its entry)
            site = (n, [{**_entry(runner, toplevel, runs), **guard,
                         **_branch_keys(((None, None, False),), path, branches)}])
        else:
            site = (n, [{**way, **guard, **_branch_keys(ctx, path, branches)} for ctx, way in up])
        line = lines.get(q)
        if line is None:
            line = lines[q] = [q] + _ancestors(q, bases) + inits(q)
        for b in line:
            out.setdefault(b, []).append(site)
    return out


def _modes(tables: Tables, compiled) -> Dict[Tuple[str, Optional[str]], Dict[str, Tuple[str, int]]]:
    """(class, method) -> mode -> where it is compiled, for the methods that run in a graph
    compiled with a known mode. A compiled instance (or its ``forward``) runs the methods its
    class has, its own and those it inherits (not a base's that its class or a nearer base
    overrides, unless an overriding method calls it through ``super()``), and the classes those
    classes instantiate where its construction or its graph runs are compiled with it
    (:func:`_children`). A compiled bound method (``torch.compile(model.decode,
    ...)``) runs that method and the methods it calls as ``self.<m>()`` or ``super().<m>()``,
    and the ``forward`` of a submodule it calls as ``self.<attr>(...)`` (an attribute its
    class's ``__init__`` binds once to an instance of a class of the run).
    Where a base whose methods are unknown (not a class of the run) comes first in the method
    resolution order, which method runs is unknown: none is judged."""
    modes: Dict[Tuple[str, Optional[str]], Dict[str, Tuple[str, int]]] = {}
    mro_memo: Dict[str, Optional[List[str]]] = {}

    def mro(q: str) -> List[str]:
        return _mro(q, tables.bases, mro_memo) or []

    def resolve(q: str, name: str, after: Optional[str] = None) -> Optional[str]:
        """The class of *q*'s method resolution order (after *after*) whose body binds *name*;
        None when none does, "" when that is unknown."""
        order = mro(q)
        if after is not None:
            order = order[order.index(after) + 1:] if after in order else []
        for c in order:
            if c in tables.methods:
                if name in tables.methods[c]:
                    return c
            elif c not in _PLAIN_BASES:
                return ""  # a class whose methods are unknown: it may define it
        return None

    seen: Set[tuple] = set()
    called: List[tuple] = []  # submodules a compiled method calls (``self.attn(x)``): their forward runs

    def submodule(q: str, attr: str) -> Optional[str]:
        for c in mro(q):
            child = tables.attrs.get(c, {}).get(attr)
            if child is not None:
                return child
        return None

    def run(q: str, cls: str, name: Optional[str], mode: str, where) -> None:
        """*cls*'s method *name* runs (for an instance of *q*), and what it calls."""
        todo = [(cls, name)]
        while todo:
            c, n = todo.pop()
            if (q, c, n, mode) in seen:
                continue
            seen.add((q, c, n, mode))
            modes.setdefault((c, n), {}).setdefault(mode, where)
            own, sup = tables.methods.get(c, {}).get(n, ((), ())) if n is not None else ((), ())
            for m in own:
                d = resolve(q, m)
                if d is None and m == "__call__":  # nn.Module.__call__ runs forward
                    m = "forward"
                    d = resolve(q, m)
                elif d is None:
                    child = submodule(q, m)
                    if child is not None:
                        called.append((child, mode, where, "forward"))
                if d:
                    todo.append((d, m))
            todo.extend((d, m) for d, m in ((resolve(q, m, c), m) for m in sup) if d)

    def graph_calls(q: str) -> Set[str]:
        """What the graph of a compiled instance of *q* certainly calls as ``self.<name>(...)``
        (and the elements of the collections it holds, :meth:`StreamsAnalysis._element_call`):
        in its ``forward`` (its ``__call__`` where its classes define one) and, transitively,
        the methods that one certainly calls as ``self.<m>()`` or ``super().<m>()``."""
        out: Set[str] = set()
        start = resolve(q, "__call__")
        todo = [(start, "__call__")] if start else [(resolve(q, "forward"), "forward")]
        visited: Set[Tuple[str, str]] = set()
        while todo:
            c, n = todo.pop()
            if not c or (c, n) in visited:
                continue
            visited.add((c, n))
            own, sup = tables.methods.get(c, {}).get(n, ((), ()))
            out.update(own)
            for m in own:
                d = resolve(q, m)
                if d is None and m == "__call__":
                    m, d = "forward", resolve(q, "forward")
                todo.append((d, m))
            todo.extend((resolve(q, m, c), m) for m in sup)
        return out

    done: Set[Tuple[str, str]] = set()
    # (what a call of a class whose calls may not make an instance gives is not known to be one)
    todo = [(k, mode, (path, line), method) for path, (q, mode, line, method) in compiled
            for k in (tables.key(path, q),) if k not in tables.opaque]
    while todo:
        q, mode, where, method = todo.pop()
        if method is not None:
            c = resolve(q, method)
            if c:
                run(q, c, method, mode, where)
                todo.extend(called)
                called.clear()
            continue
        if (q, mode) in done:
            continue
        done.add((q, mode))
        for c in mro(q):
            if c not in tables.methods:
                continue
            run(q, c, None, mode, where)  # a class-level lambda or the class body
            for name in tables.methods[c]:
                if resolve(q, name) == c:
                    run(q, c, name, mode, where)
        todo.extend((child, mode, where, None) for child in _children(q, mro(q), tables, graph_calls(q)))
        called.clear()  # (its submodules are among its children, compiled whole)
    return modes


def _children(q: str, order: List[str], tables: Tables, called: Set[str]) -> Set[str]:
    """The classes an instance of *q* compiled whole makes where its graph runs them: in
    ``forward`` (``__call__``) of the classes of its method resolution order *order*, and in the
    methods those take as ``self.<m>`` or ``super().<m>`` (called or not, under a condition or
    not), transitively, by name; and those its construction makes (in the class bodies,
    ``__init__`` and the methods it names, where not in the graph's) that its graph certainly
    calls, *called* (``graph_calls`` in :func:`_modes`): held by its ``__init__`` as
    ``self.attn = Attn()`` (also under ``if``) and called as ``self.attn(x)``, held in
    ``self.layers = nn.ModuleList([...])`` (a ``ModuleDict``, list, ``.append``...) whose
    elements it calls (``for layer in self.layers: x = layer(x)``; ``self.layers[i](x)`` when
    they are all of one class), in ``self.body = nn.Sequential(...)`` called as ``self.body(x)``
    (:meth:`StreamsAnalysis._held`). One its construction makes that the graph does not
    certainly call is not compiled with it: a drafter held as ``self.mtp`` and compiled on its
    own, a sampler called from outside, the layers of a list the graph passes on
    (``run(self.layers, x)``) or calls under ``if``; and neither is an instance another
    method makes (``def make_draft(self): return Draft()``, called from outside): that method
    runs neither in its construction nor in its graph."""

    def closure(start: Set[Optional[str]]) -> Set[Optional[str]]:
        names, todo = set(start), [n for n in start if n is not None]
        while todo:
            n = todo.pop()
            for c in order:
                for m in tables.refs.get(c, {}).get(n, ()):
                    if m not in names:
                        names.add(m)
                        todo.append(m)
        return names

    graph = closure({"forward", "__call__"})
    construction = closure({None, "__init__"})
    out: Set[str] = set()
    for c in order:
        made_by = tables.children.get(c, {})
        held: Dict[str, Set[str]] = {}  # where the class holds them -> the classes
        for made in made_by.values():
            for child, key in made:
                if key is not None:
                    held.setdefault(key, set()).add(child)
        for n, made in made_by.items():
            for child, key in made:
                if n in graph:
                    out.add(child)
                elif n in construction and key is not None and (key in called or (
                        key.endswith("[]") and key[:-2] + "[i]" in called and len(held[key]) == 1)):
                    out.add(child)
    return out


def _mro(q: str, bases: Dict[str, Tuple[str, ...]], memo: Dict[str, Optional[List[str]]]) -> Optional[List[str]]:
    """Python's method resolution order of *q* (C3), with a class we have no facts of taken
    as having no bases; None where C3 fails (Python would not create the class)."""
    if q in memo:
        return memo[q]
    memo[q] = None  # a cycle: no order
    lines = []
    for b in bases.get(q, ()):
        sub = _mro(b, bases, memo)
        if sub is None:
            return None
        lines.append(list(sub))
    lines.append(list(bases.get(q, ())))
    out = [q]
    while any(lines):
        lines = [ln for ln in lines if ln]
        head = next((ln[0] for ln in lines if not any(ln[0] in other[1:] for other in lines)), None)
        if head is None:
            return None
        out.append(head)
        lines = [ln[1:] if ln[0] == head else ln for ln in lines]
    memo[q] = out
    return out


def _compiled_calls(kind: str, shared):
    """NPU303/NPU308: the calls of *kind* (``"event"``, ``"wait_tensor"``) in the methods that
    run in a graph compiled with a known mode: ``(path, span, api, class name, mode, (path,
    line) of the compilation)``, each call with each mode in order."""
    facts = StreamsAnalysis.facts_in(shared)
    compiled = (shared or {}).get(COMPILED, [])
    tables = StreamsAnalysis.tables(facts)
    if not tables.apis or not compiled:
        return
    modes = StreamsAnalysis.modes(facts, compiled)
    for path, k, api, owner, method, line, col, end_line, end_col in tables.apis:
        if k != kind:
            continue
        span = Span(line, col, end_line, end_col)
        for mode, where in sorted(modes.get((owner, method), {}).items()):
            yield path, span, api, owner.rsplit(".", 1)[-1], mode, where


# -- the rules -----------------------------------------------------------------------------

class EventWaitWithoutRecord(LintRule):
    CODE = "NPU301"
    NAME = "event-wait-without-record"
    SEVERITY = "error"
    SUMMARY = "npu_tagged_event_wait on an event that is never recorded."
    EXPLANATION = (
        "A wait on an event that is never recorded (passed to `npu_tagged_event_record`, or recorded by its own "
        "method: the event is a `torch.npu.Event`, and `e.record(stream=None)` records it) does nothing: "
        "torch_npu creates the event lazily on its first record, and a wait on an event never created enqueues "
        "no wait. No synchronisation happens and the streams race. An event is identified by the name it is bound to: a "
        "local or closure variable (recorded in the defining function or a function nested in it), a "
        "module-level name (recorded anywhere in the module), or `self.<attr>` (recorded in any method of the "
        "class or of the classes it inherits from or that inherit from it in the same file, or in a function or "
        "lambda nested in one, where `self` is the method's). Events reached through parameters, subscripts or "
        "other expressions, passed to other functions, or whose other attributes are used (any but the "
        "methods that record nothing: `wait`, `query`, `elapsed_time`, `recorded_time`, `synchronize`) are "
        "unknown; so is `self.<attr>` when the same "
        "attribute of an object that cannot be told is used in the file (`npu_tagged_event_record(m.ev)` with "
        "`m` a parameter or a loop variable, `self.sub.ev`): that object may be the instance. So are the events "
        "a name cannot be seen to reach: every `self.<attr>` of a class whose instance is read reflectively "
        "(`getattr(self, ...)`, `vars(self)`, `self.__dict__`) or passed to a function not of this file (but "
        "builtins that read no attribute, `super`, a base's `__init__`), and the names of a namespace read as a "
        "dict (`locals()`, `vars()`; for the module also `globals()` and `sys.modules[__name__]`). An event that "
        "another linted module may use escapes the file and is unknown too: a module-level name used there "
        "(`from pkg.events import MOE_EVENT` and a record of it), or `self.<attr>` when `x.<attr>` is used there "
        "other than by a read (a subclass that records `self.<attr>`).")
    SOURCE = (_SRC + "; a wait on an event never recorded enqueues nothing: Ascend/pytorch@9e73e708 "
              "torch_npu/csrc/core/npu/NPUEvent.cpp:123-147; the event's methods: Ascend/pytorch@9e73e708 "
              "torch_npu/npu/streams.py:209-258")
    INVALID = (
        Invalid(_IMP + "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                       "        self.ev = tng.ops.npu_create_tagged_event(tag='a')\n"
                       "    def forward(self, x):\n        tng.ops.npu_tagged_event_wait(self.ev)\n        return x\n",
                range=(8, 9, 8, 47),
                message="npu_tagged_event_wait on 'self.ev', which is never recorded: the wait does not synchronise "
                        "anything; record it with npu_tagged_event_record before the wait"),
    )
    VALID = (_IMP + "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.ev = tng.ops.npu_create_tagged_event(tag='a')\n"
                    "    def forward(self, x):\n        tng.ops.npu_tagged_event_record(self.ev)\n"
                    "        with tng.scope.npu_stream_switch('1'):\n"
                    "            tng.ops.npu_tagged_event_wait(self.ev)\n"
                    "        return x\n",
             _IMP + "def step(events, i):\n    tng.ops.npu_tagged_event_wait(events[i])\n")
    HOW_TO_FIX = "Record the event with npu_tagged_event_record on the producing stream before the wait."
    uses = (StreamsAnalysis,)

    def visit_Call(self, node: cst.Call) -> None:
        wait = self.ctx.analysis(StreamsAnalysis).event_wait(node)
        if wait is not None and not wait[2]:
            self.report(node, f"npu_tagged_event_wait on '{self.ctx.code(wait[1])}', which is never recorded: the "
                              "wait does not synchronise anything; record it with npu_tagged_event_record "
                              "before the wait")


class EventWaitBeforeRecord(LintRule):
    CODE = "NPU302"
    NAME = "event-wait-before-record"
    SEVERITY = "warning"
    SUMMARY = "A wait comes before the event's only records, later in the same function."
    EXPLANATION = ("Within one function, `npu_tagged_event_wait(e)` runs before every record of e "
                   "(`npu_tagged_event_record(e)`, `e.record()`) "
                   "(which are all later in that function, no other function records e, and no other linted "
                   "module may use it: see NPU301). The wait finds the "
                   "event not yet recorded and synchronises nothing. Not reported when a loop encloses both.")
    SOURCE = (_SRC + "; Ascend/pytorch@9e73e708 torch_npu/csrc/core/npu/NPUEvent.cpp:123-147 (the event is "
              "created by its first record)")
    INVALID = (
        Invalid(_IMP + "def f(x):\n    ev = tng.ops.npu_create_tagged_event(tag='b')\n"
                       "    tng.ops.npu_tagged_event_wait(ev)\n    y = x + 1\n    tng.ops.npu_tagged_event_record(ev)\n"
                       "    return y\n",
                range=(5, 5, 5, 38),
                message="npu_tagged_event_wait on 'ev' comes before its only record (line 7) in this function: the "
                        "wait finds the event not yet recorded and synchronises nothing; record before waiting"),
    )
    VALID = (_IMP + "def f(x):\n    ev = tng.ops.npu_create_tagged_event(tag='b')\n"
                    "    tng.ops.npu_tagged_event_record(ev)\n    y = x + 1\n    tng.ops.npu_tagged_event_wait(ev)\n"
                    "    return y\n",)
    HOW_TO_FIX = "Move the record before the wait (record on the producer stream, wait on the consumer stream)."
    uses = (StreamsAnalysis,)

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        wait = ctx.analysis(StreamsAnalysis).event_wait(node)
        if wait is None or not wait[2]:
            return
        site, ev, recs = wait
        fn = site.scope.enclosing_function()
        if fn is None or any(r_site.scope.enclosing_function() is not fn for _, r_site in recs):
            return
        if all(r_site.seq > site.seq for _, r_site in recs) and not any(
                site.shared_loop(r_site) is not None for _, r_site in recs):
            line = ctx.line(recs[0][0])
            self.report(node, f"npu_tagged_event_wait on '{ctx.code(ev)}' comes before its only record (line "
                              f"{line}) in this function: the wait finds the event not yet recorded and "
                              "synchronises nothing; record before waiting")


class TaggedEventOutsideAclgraph(LintRule):
    CODE = "NPU303"
    NAME = "tagged-event-outside-aclgraph"
    SEVERITY = "error"
    SUMMARY = "Tagged-event APIs in code compiled in max-autotune mode."
    EXPLANATION = ("`npu_tagged_event_record`, `npu_tagged_event_wait` and `npu_record_tagged_stream` have no GE "
                   "converter: in code compiled with a torchair backend whose effective mode is `max-autotune` "
                   "(the default), compilation raises NotImplementedError. Creating the event is fine anywhere. "
                   + _COMPILED_CLASS)
    SOURCE = (_SRC + "; Ascend/torchair@fced8842 python/torchair/ops/_tagged_event.py:76-80, :92-96, :121-125, "
              "tests/st/torchair_aclgraph_st.py:457-503")
    INVALID = (
        Invalid(_IMP + "class M(torch.nn.Module):\n    def forward(self, x):\n"
                       "        tng.ops.npu_record_tagged_stream(x, '1')\n        return x\n"
                       "cfg = tng.CompilerConfig()\n"
                       "model = torch.compile(M(), backend=tng.get_npu_backend(compiler_config=cfg))\n",
                range=(5, 9, 5, 49),
                message="npu_record_tagged_stream in M, which is compiled in max-autotune mode (line 8): torchair's "
                        "GE converter raises NotImplementedError for it (torchair 7.2.0 to master: "
                        "Ascend/torchair@fced8842 python/torchair/ops/_tagged_event.py:80,96,125); compile with "
                        "config.mode = \"reduce-overhead\", or use npu_wait_tensor in max-autotune"),
        Invalid(_IMP + "from torchair.inference import cache_compile\n"
                       "class M(torch.nn.Module):\n    def forward(self, x):\n"
                       "        tng.ops.npu_record_tagged_stream(x, '1')\n        return x\n"
                       "cfg = tng.CompilerConfig()\nmodel = M()\n"
                       "model.forward = cache_compile(model.forward, config=cfg)\n",
                range=(6, 9, 6, 49),
                message="npu_record_tagged_stream in M, which is compiled in max-autotune mode (line 10): torchair's "
                        "GE converter raises NotImplementedError for it (torchair 7.2.0 to master: "
                        "Ascend/torchair@fced8842 python/torchair/ops/_tagged_event.py:80,96,125); compile with "
                        "config.mode = \"reduce-overhead\", or use npu_wait_tensor in max-autotune"),
    )
    VALID = (_IMP + "class M(torch.nn.Module):\n    def forward(self, x):\n"
                    "        tng.ops.npu_record_tagged_stream(x, '1')\n        return x\n"
                    "cfg = tng.CompilerConfig()\ncfg.mode = 'reduce-overhead'\n"
                    "model = torch.compile(M(), backend=tng.get_npu_backend(compiler_config=cfg))\n",
             _IMP + "from torchair.inference import cache_compile\n"
                    "class M(torch.nn.Module):\n    def forward(self, x):\n"
                    "        tng.ops.npu_record_tagged_stream(x, '1')\n        return x\n"
                    "cfg = tng.CompilerConfig()\ncfg.mode = 'reduce-overhead'\nmodel = M()\n"
                    "model.forward = cache_compile(model.forward, config=cfg)\n")
    HOW_TO_FIX = ("Compile with config.mode = 'reduce-overhead' (or npugraph_ex), or use npu_wait_tensor in "
                  "max-autotune.")
    uses = (StreamsAnalysis,)
    consumes = (COMPILED,)

    @classmethod
    def followup(cls, facts, shared=None) -> Tuple[Any, ...]:
        return StreamsAnalysis.followup_tokens(StreamsAnalysis.facts_in(shared))

    @classmethod
    def project(cls, facts, report, settings, shared=None) -> None:
        calls = list(_compiled_calls("event", shared))
        if not calls:
            return
        tables = StreamsAnalysis.tables(StreamsAnalysis.facts_in(shared))
        default = _file_releases(settings)
        judged: Dict[Tuple[str, ...], Optional[Tuple[str, str]]] = {}
        for path, span, api, name, mode, (cpath, cline) in calls:
            if mode != "max-autotune":
                continue
            # judged on the releases of the configuration the call's file is under
            rels = tables.torchair.get(path, default)
            if rels not in judged:
                judged[rels] = _npu303_releases(rels, tables.used)
            if judged[rels] is None:
                continue
            releases, citation = judged[rels]
            where = f"line {cline}" if cpath == path else f"{cpath}:{cline}"
            cls.report_in(report, path, span,
                          f"{api} in {name}, which is compiled in max-autotune mode ({where}): torchair's GE "
                          f"converter raises NotImplementedError for it ({releases}: {citation}); compile "
                          "with config.mode = \"reduce-overhead\", or use npu_wait_tensor in max-autotune",
                          related=((cpath, cline, 1),))


class StreamPriorityReserved(LintRule):
    CODE = "NPU304"
    NAME = "stream-priority-reserved"
    SEVERITY = "warning"
    SUMMARY = "stream_priority other than 0 in torchair's npu_stream_switch."
    EXPLANATION = ("The `stream_priority` parameter is reserved: keep the default 0. The aclgraph modes "
                   "ignore it; max-autotune passes it on to GE as the op attribute `_user_stream_priority`.")
    SOURCE = (_SRC + "; stream_priority is reserved: Ascend/torchair@fced8842 "
              "docs/zh/ascend_ir/api/scope/npu_stream_switch.md:18, python/torchair/scope/__init__.py:22-26 "
              "(max-autotune: GE op attributes), _scope_attr.py:99-108 (aclgraph: a plain stream)")
    INVALID = (
        Invalid(_IMP + "with tng.scope.npu_stream_switch('1', 2):\n    pass\n", range=(3, 39, 3, 40),
                message="stream_priority=2: the parameter is reserved; keep the default 0 (the aclgraph modes "
                        "ignore it; max-autotune passes it on to GE as `_user_stream_priority`)"),
    )
    VALID = (_IMP + "with tng.scope.npu_stream_switch('1', 0):\n    pass\n",
             "from vllm_ascend.utils import npu_stream_switch\nwith npu_stream_switch('1', 2):\n    pass\n")
    HOW_TO_FIX = "Drop stream_priority."
    uses = (StreamsAnalysis,)

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        switch = ctx.analysis(StreamsAnalysis).switch(node)
        if switch is None or switch[1] is None:
            return
        site, bound = switch[:2]
        prio = ctx.arg_value(bound, "stream_priority", site)
        if is_constant(prio) and prio != 0:
            self.report(bound.args.get("stream_priority", node),
                        f"stream_priority={prio!r}: the parameter is reserved; keep the default 0 (the aclgraph "
                        "modes ignore it; max-autotune passes it on to GE as `_user_stream_priority`)")


class RecordStreamUnknownTag(LintRule):
    CODE = "NPU305"
    NAME = "record-stream-unknown-tag"
    SEVERITY = "warning"
    SUMMARY = "npu_record_tagged_stream with a tag no npu_stream_switch of the program uses."
    EXPLANATION = ("`npu_record_tagged_stream(t, tag)` with a literal tag that no torchair `npu_stream_switch` uses "
                   "(and not \"default\"): an unknown tag silently creates a new, idle stream, so the tensor's memory "
                   "is not kept alive for the stream that really uses it. torchair keeps the streams by tag for the "
                   "whole process, so the switches of every linted file count, not only those of the record's file. "
                   "Not reported when the tag may reach a switch in a way npulint does not read: some stream switch "
                   "of the linted files has a tag that cannot be known statically (a project's wrapper "
                   "`def npu_stream_switch(flag, tag): return tng.scope.npu_stream_switch(tag)`), a call other than "
                   "torchair's stream APIs in the linted files passes the tag on (`with npu_stream_switch(flag, "
                   "\"22\")`, a wrapper npulint cannot read), or a file of the program that the run does not read "
                   "names the stream switch or holds the tag as a string literal.")
    SOURCE = (_SRC + "; the streams by tag, process-wide: Ascend/torchair@fced8842 "
              "python/torchair/scope/_scope_attr.py:95-108 (`_GLOBAL_TAG_TO_STREAM`), "
              "python/torchair/ops/_tagged_event.py:54-55 (the record takes its stream from it)")
    INVALID = (
        Invalid(_IMP + "with tng.scope.npu_stream_switch('1'):\n    y = x + 1\n"
                       "tng.ops.npu_record_tagged_stream(y, '2')\n",
                range=(5, 37, 5, 40),
                message="npu_record_tagged_stream tag '2' is used by no npu_stream_switch of the linted files "
                        "(their tags: '1'): an unknown tag silently creates a new, idle stream; use the tag of the "
                        "stream that uses the tensor"),
    )
    VALID = (_IMP + "with tng.scope.npu_stream_switch('1'):\n    y = x + 1\n"
                    "tng.ops.npu_record_tagged_stream(y, '1')\n",)
    HOW_TO_FIX = "Use the tag of the npu_stream_switch the tensor is used on."
    uses = (StreamsAnalysis,)

    @classmethod
    def project(cls, facts, report, settings, shared=None) -> None:
        streams = [(path, f) for path, f in StreamsAnalysis.facts_in(shared) if f[0] == "streams"]
        if not any(f[5] for _, f in streams) or any(f[3] for _, f in streams):
            return  # no record with a literal tag, or a switch whose tag is unknown
        read = {f[1] for _, f in streams}
        tags = {t for _, f in streams for t in f[2]}
        passed = {t for _, f in streams for t in f[4]}
        known = ", ".join(repr(t) for t in sorted(tags)) or "none"
        for path, f in streams:
            for tag, line, col, end_line, end_col, users in f[5]:
                if tag in tags or tag in passed or users is None or any(u not in read for u in users):
                    continue
                cls.report_in(report, path, Span(line, col, end_line, end_col),
                              f"npu_record_tagged_stream tag {tag!r} is used by no npu_stream_switch of the linted "
                              f"files (their tags: {known}): an unknown tag silently creates a new, idle stream; use "
                              "the tag of the stream that uses the tensor")


class TaggedEventTagReused(LintRule):
    CODE = "NPU306"
    NAME = "tagged-event-tag-reused"
    SEVERITY = "error"
    SUMMARY = "A tagged-event tag is created twice in one process."
    EXPLANATION = ("torchair keeps tagged events in a process-wide registry and raises "
                   "`ValueError(\"tagged event tag ... is already in use\")` on the second creation of a tag. "
                   "Reported when two `npu_create_tagged_event` calls use one literal tag (in the files of one run; "
                   "at the later one; not two that never both run: the arms of one `if` or `x if c else y`, an "
                   "`if` arm that returns and what follows it, code after a `return`; a creation in a method of a "
                   "class runs only where the class is instantiated, so two classes' creations count only where one "
                   "process may make both), or when a creation with a literal tag runs more than once: in `__init__` or "
                   "another method of a class instantiated more than once in one process (two call sites, or inside "
                   "a loop or comprehension such as `ModuleList([Layer() for _ in range(n)])`, also through a "
                   "subclass: for a creation in `__init__`, one that runs it, as Python does only when the "
                   "subclass defines no `__init__` or its `__init__` calls `super().__init__()` or "
                   "`Base.__init__(self)`), in a function called more than once (`make()` returning the event, "
                   "called twice or in a loop; only a function a call runs then and there: no decorator, not "
                   "`async`, not a generator), or directly in a loop (not one whose body leaves after the creation: a "
                   "`break`, `return`, `raise` or `sys.exit()`/`exit()` after it, no `continue` before). A call of a "
                   "class that may not make an instance is no instantiation: a class with a decorator other than one "
                   "known to return it (`dataclass`, a function of the file that returns its argument), with a "
                   "metaclass other than `abc.ABCMeta` (also for its subclasses: a singleton's metaclass caches the "
                   "instance), or whose name is bound twice. A creation that may not run at all (under "
                   "`if`/`try`/`match` in its function, after an `if` arm that ends the function (`if small: "
                   "return`), in an operand of `x if c else y`/`and`/`or`, in a comprehension with an `if` "
                   "clause) is not known to run more than once and is not reported for it; nor is one in a "
                   "parameter's default, which runs once, where the `def` runs. Two instantiations that "
                   "never both run are one instance: in two arms of one `if`/`elif`/`else`, `match` or "
                   "`x if c else y`, in a `try` body and its handler, or one in an `if` arm that always ends in "
                   "`return`/`raise`/`continue`/`break` and one after that `if` (`if small: return Model(1)` then "
                   "`return Model()`), with no loop around that statement; one after a `return` never runs. "
                   "This follows calls: instantiations in functions that run only in such arms (`if args.bench: "
                   "run_benchmark() else: run_inference()`, each making `Model()`), directly or through their "
                   "callers, are one instance too. It holds for a function defined once at the top level of a file "
                   "that no other module of the run imports, without a decorator, and that the file names only to "
                   "call it (one nothing in the run calls, such as an entry point's `main` or a test, runs as written; "
                   "one passed on, stored or called from a lambda may run anywhere, and only its own branches count). "
                   "A top-level function that nothing certainly runs (nothing in the run calls it, or it is "
                   "decorated, passed on or stored: `main`, a subcommand of argparse, click or a dispatch dict) is "
                   "an entry of its own, and so is the script's `if __name__ == \"__main__\":` block: what one entry "
                   "makes counts with itself and with the modules' other code, not with another entry's, which one "
                   "process may never run (`infer()` and `bench()` each making `Model()`; a function the main guard "
                   "does not call). Tests (`test*`) are not: pytest runs them all in one process. "
                   "A class made at the top level of another's `__init__` is made once per instance of that one "
                   "(`ModuleList([Layer(i) for i in range(n)])` whose `Layer.__init__` makes `MoE()` makes n `MoE`s), "
                   "and one made at the top level of a function once per call of it (`[make() for _ in range(n)]` "
                   "where `make()` returns `MoE()`; not a function with a decorator, `async` or a generator). "
                   "Instantiations count together when they are in one process: "
                   "those of one script, and those of the modules of the run it imports (directly or through others) "
                   "that run there: their module-level code outside their `if __name__ == \"__main__\":` guard, and "
                   "the functions that code or the script calls by name, transitively (`infer.main()`; a class's "
                   "`__init__` when it is instantiated, and the bases' `__init__` it calls through `super()` or as "
                   "`Base.__init__(self)`); a call "
                   "in a function of theirs that nothing there calls is not known to run; two entry scripts "
                   "that do not import each other are two processes, each with its own registry, so one instance in "
                   "each is not reported, and neither are two creations of one tag in them. A module name that two "
                   "files of the run hold (`model.py` of two folders each run as its own script) is, where a file "
                   "imports it, the one in that file's own import folder, else neither; one process never loads both. "
                   "A class of such a module is that file's own: `qwen/run.py` making two `Attn` of `qwen/model.py` "
                   "is reported, whatever `llama/run.py` makes of `llama/model.py`'s; one made where the name "
                   "reaches neither file is unknown and not counted.")
    SOURCE = (_SRC + "; Ascend/torchair@fced8842 python/torchair/ops/_tagged_event.py:137-138; "
              "Ascend/torchair@fbd4456f docs/zh/context/npu_create_tagged_event.md:13")
    INVALID = (
        Invalid(_IMP + "class Layer(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                       "        self.ev = tng.ops.npu_create_tagged_event(tag='layer')\n"
                       "layers = torch.nn.ModuleList([Layer() for _ in range(4)])\n",
                range=(6, 19, 6, 63),
                message="npu_create_tagged_event(tag='layer') runs once per instance of Layer, which is instantiated "
                        "more than once: the second creation raises ValueError('tagged event tag layer is already in "
                        "use'); include an index in the tag or share one event"),
        Invalid(_IMP + "a = tng.ops.npu_create_tagged_event(tag='x')\nb = tng.ops.npu_create_tagged_event(tag='x')\n",
                range=(4, 5, 4, 45),
                message="tagged event tag 'x' is already created at line 3: the second npu_create_tagged_event "
                        "raises ValueError('tagged event tag x is already in use'); give each event its own tag"),
    )
    VALID = (_IMP + "class Layer(torch.nn.Module):\n    def __init__(self, i):\n        super().__init__()\n"
                    "        self.ev = tng.ops.npu_create_tagged_event(tag=f'layer{i}')\n"
                    "layers = torch.nn.ModuleList([Layer(i) for i in range(4)])\n",)
    HOW_TO_FIX = ("Give every event its own tag (e.g. include the layer index), or create the events once and share "
                  "them.")
    uses = (StreamsAnalysis,)

    @classmethod
    def followup(cls, facts, shared=None) -> Tuple[Any, ...]:
        return StreamsAnalysis.followup_tokens(StreamsAnalysis.facts_in(shared))

    @classmethod
    def project(cls, facts, report, settings, shared=None) -> None:
        tables = StreamsAnalysis.tables(StreamsAnalysis.facts_in(shared))
        first_tag: Dict[str, List[tuple]] = {}
        imports = tables.imports
        for path, tag, line, col, end_line, end_col, owner, looped, conditional, where, runner in tables.creations:
            span = Span(line, col, end_line, end_col)
            arms = {k: frozenset(a) for k, a in where}
            # a creation in a class's __init__ runs for the instances that run that __init__
            # (not a subclass's whose own __init__ does not call it); in another method, for any
            key = runner if owner is not None and runner == owner + ".__init__" else owner
            # two creations in disjoint arms of one statement of one function never both run
            seen = next((t for t in first_tag.get(tag, ()) if (
                t[0] == path or _one_process(t[0], path, imports)) and not (
                t[0] == path and t[4] == runner and Flow.disjoint(t[3], arms))
                and _both_made(t[5], key, tables)), None)
            first_tag.setdefault(tag, []).append((path, line, col, arms, runner, key))
            if seen is not None:
                fpath, fline, fcol = seen[:3]
                where = f"line {fline}" if fpath == path else f"{fpath}:{fline}:{fcol}"
                cls.report_in(report, path, span,
                              f"tagged event tag {tag!r} is already created at {where}: the second "
                              f"npu_create_tagged_event raises ValueError('tagged event tag {tag} is already in use'); "
                              "give each event its own tag", related=((fpath, fline, fcol),))
                continue
            if conditional or where:
                # whether it runs at all is unknown (under if/try/match, or after an if arm that
                # returns: ``if small: return``), so whether it runs twice is too
                continue
            if looped:
                cls.report_in(report, path, span,
                              f"npu_create_tagged_event(tag={tag!r}) runs in a loop: the second creation raises "
                              f"ValueError('tagged event tag {tag} is already in use'); create it once or give each "
                              "its own tag")
            elif owner is not None and tables.total.get(key, 0) > 1:
                cls.report_in(report, path, span,
                              f"npu_create_tagged_event(tag={tag!r}) runs once per instance of "
                              f"{owner.rsplit('.', 1)[-1]}, which is instantiated more than once: the second "
                              f"creation raises ValueError('tagged event tag {tag} is already in use'); include an "
                              "index in the tag or share one event")
            elif owner is None and runner is not None and tables.total.get(runner, 0) > 1:
                cls.report_in(report, path, span,
                              f"npu_create_tagged_event(tag={tag!r}) runs once per call of "
                              f"{runner.rsplit('.', 1)[-1]}(), which is called more than once: the second "
                              f"creation raises ValueError('tagged event tag {tag} is already in use'); create "
                              "the event once and share it, or give each call its own tag")


class StreamTagType(LintRule):
    CODE = "NPU307"
    NAME = "stream-tag-type"
    SEVERITY = "error"
    SUMMARY = "A stream tag or event tag that is not a str."
    EXPLANATION = ("`npu_stream_switch(stream_tag, ...)`, `npu_record_tagged_stream(input, tagged_stream)` and "
                   "`npu_create_tagged_event(tag)` take string tags: a tag known to be another constant (a literal, "
                   "or a name bound to one) is reported.")
    SOURCE = (_SRC + "; Ascend/torchair@fced8842 python/torchair/scope/__init__.py:22 (stream_tag: str), "
              "python/torchair/ops/_tagged_event.py:100, :170-171 (record_tagged_stream_ takes str tag)")
    INVALID = (
        Invalid(_IMP + "with tng.scope.npu_stream_switch(1):\n    pass\n", range=(3, 34, 3, 35),
                message="stream tag 1 is not a str: entering the scope fails (torch.ops.air.scope_enter takes "
                        "str[]) when the graph is traced; pass the tag as a string, e.g. '1'"),
    )
    VALID = (_IMP + "with tng.scope.npu_stream_switch('1'):\n    pass\n",)
    HOW_TO_FIX = "Pass the tag as a string, e.g. '1'."
    uses = (StreamsAnalysis,)

    def visit_Call(self, node: cst.Call) -> None:
        analysis = self.ctx.analysis(StreamsAnalysis)
        switch = analysis.switch(node)
        if switch is not None:
            _, bound, tag_expr, tag = switch
            if bound is not None and not isinstance(tag, str) and is_constant(tag) and tag_expr is not None:
                self.report(tag_expr, f"stream tag {tag!r} is not a str: entering the scope fails "
                                      "(torch.ops.air.scope_enter takes str[]) when the graph is traced; pass the tag "
                                      "as a string, e.g. '1'")
            return
        record = analysis.record_stream(node)
        if record is not None:
            _, tag_expr, tag = record
            if tag_expr is not None and not isinstance(tag, str) and is_constant(tag):
                self.report(tag_expr, f"stream tag {tag!r} is not a str: the call fails (the op "
                                      "torch.ops.air.record_tagged_stream_ takes the tag as str); pass the tag as a "
                                      "string, the one the stream's npu_stream_switch uses")
            return
        creation = analysis.creation(node)
        if creation is not None:
            _, tag_expr, tag = creation
            if is_constant(tag) and not isinstance(tag, str):
                self.report(tag_expr, f"event tag {tag!r} is not a str: the tagged-event ops take the tag as a "
                                      "string, so the first record or wait on this event fails; pass it as a "
                                      f"string, e.g. '{tag}'")


class WaitTensorInAclgraph(LintRule):
    CODE = "NPU308"
    NAME = "wait-tensor-in-aclgraph"
    SEVERITY = "error"
    SUMMARY = "npu_wait_tensor in code compiled in an aclgraph mode."
    EXPLANATION = ("`npu_wait_tensor` works only in max-autotune: in code compiled with a backend whose effective "
                   "mode is `reduce-overhead` or `npugraph_ex` it raises NotImplementedError. Use the tagged "
                   "events there (npu_create_tagged_event / npu_tagged_event_record / npu_tagged_event_wait). "
                   + _COMPILED_CLASS)
    SOURCE = (_SRC + "; Ascend/torchair@fced8842 python/torchair/scope/_wait_tensor.py:19-26; "
              "Ascend/torchair@fbd4456f docs/zh/context/npu_wait_tensor.md:28")
    INVALID = (
        Invalid(_IMP + "class M(torch.nn.Module):\n    def forward(self, x, y):\n"
                       "        return tng.scope.npu_wait_tensor(x, y)\n"
                       "cfg = tng.CompilerConfig()\ncfg.mode = 'reduce-overhead'\n"
                       "model = torch.compile(M(), backend=tng.get_npu_backend(compiler_config=cfg))\n",
                range=(5, 16, 5, 47),
                message="npu_wait_tensor in M, which is compiled in reduce-overhead mode (line 8): it raises "
                        "NotImplementedError there; use npu_create_tagged_event / npu_tagged_event_record / "
                        "npu_tagged_event_wait instead"),
    )
    VALID = (_IMP + "class M(torch.nn.Module):\n    def forward(self, x, y):\n"
                    "        return tng.scope.npu_wait_tensor(x, y)\n"
                    "cfg = tng.CompilerConfig()\n"
                    "model = torch.compile(M(), backend=tng.get_npu_backend(compiler_config=cfg))\n",)
    HOW_TO_FIX = "Use tagged events in reduce-overhead, or compile this model in max-autotune."
    uses = (StreamsAnalysis,)
    consumes = (COMPILED,)

    @classmethod
    def followup(cls, facts, shared=None) -> Tuple[Any, ...]:
        return StreamsAnalysis.followup_tokens(StreamsAnalysis.facts_in(shared))

    @classmethod
    def project(cls, facts, report, settings, shared=None) -> None:
        for path, span, _, name, mode, (cpath, cline) in _compiled_calls("wait_tensor", shared):
            if mode not in ACLGRAPH_MODES:
                continue
            where = f"line {cline}" if cpath == path else f"{cpath}:{cline}"
            cls.report_in(report, path, span,
                          f"npu_wait_tensor in {name}, which is compiled in {mode} mode ({where}): it raises "
                          "NotImplementedError there; use npu_create_tagged_event / npu_tagged_event_record / "
                          "npu_tagged_event_wait instead", related=((cpath, cline, 1),))


# -- helpers -------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _release_apis() -> Dict[str, FrozenSet[str]]:
    """Tagged-event API -> the torchair releases that define it (rules/torchair_releases.json)."""
    from npulint.releases import torchair_data

    return {q: frozenset(where) for q, where in torchair_data()["apis"].items()}


def _file_releases(settings) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """The torchair releases a configuration runs (configured or inferred, else every one), and
    those to judge on when the code rules out every one of them (``Releases.fallback``)."""
    from npulint.releases import effective

    releases = effective(settings)
    return tuple(releases.torchair()), tuple(releases.fallback("torchair"))


def _npu303_releases(releases: Tuple[Tuple[str, ...], Tuple[str, ...]], used: Set[str]) -> Optional[Tuple[str, str]]:
    """NPU303 holds where torchair's GE converter raises for the tagged-event ops (7.2.0 on), not
    where it drops them (7.1.0). The code may run on those of *releases* (those of its
    configuration, configured or inferred, else every release npulint knows; with the releases to
    judge on when the code rules out every one of them) that define every tagged-event API the
    run calls. Returns the releases NPU303 holds on (text) and the upstream line at the newest,
    when it holds on every release the code may run on; None otherwise."""
    from npulint.releases import holds_on, torchair_data

    apis = _release_apis()
    return holds_on("torchair", releases[0], (apis[q] for q in used if q in apis),
                    torchair_data()["checks"]["NPU303"]["holds"], releases[1])


def _both_made(a: Optional[str], b: Optional[str], tables: Tables) -> bool:
    """Whether the creations in methods of the classes *a* and *b* (None: not in a class;
    "<class>.__init__": in that ``__init__``, which runs only for the instantiations that run
    it) may both run: a class's creation runs only where the class is instantiated, and two classes'
    only where one process certainly instantiates both, not under disjoint arms of one
    statement (``if variant == "deepseek": DeepseekMoE() else: QwenMoE()``)."""
    owners = [o for o in (a, b) if o is not None]
    if not owners:
        return True
    if len(owners) == 1 or a == b:
        return any(owners[0] in sites for sites in tables.together)
    return any(not _apart(x, y) for sites in tables.together
               for x in sites.get(a, ()) for y in sites.get(b, ()))


def _import_graph(modules: Dict[str, str], imported: Dict[str, Tuple[str, ...]]) -> Dict[str, Set[str]]:
    """path -> the files of the run it imports (*modules*: path -> module name; *imported*:
    path -> the names it imports). A name two files hold (``model`` of two folders run as
    scripts) is the file :func:`npulint.paths.reached_from` says, or neither: one process never
    loads both."""
    paths_of = _files_of(modules)
    graph: Dict[str, Set[str]] = {}
    for path, names in imported.items():
        found = graph[path] = set()
        for name in names:
            target = reached_from(path, paths_of.get(name, ()))
            if target is not None and target != path:
                found.add(target)
    return graph


def _closure(start: str, edges: Dict[str, Set[str]]) -> Set[str]:
    """*start* and every file reached from it along *edges*."""
    seen, todo = set(), [start]
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        todo.extend(edges.get(x, ()))
    return seen


def _one_process(a: str, b: str, imports: Dict[str, Set[str]]) -> bool:
    """Two files certainly run in one process when one imports the other (directly or
    through files of the run) or a third file of the run imports both (:func:`_import_graph`:
    two files of one module name never do). Independent entry points (two test scripts) each
    run in their own process."""
    reach: Dict[str, Set[str]] = {}

    def reachable(m: str) -> Set[str]:
        if m not in reach:
            reach[m] = _closure(m, imports)
        return reach[m]

    if b in reachable(a) or a in reachable(b):
        return True
    return any(a in reachable(c) and b in reachable(c) for c in imports)


_EXITS = frozenset({"sys.exit", "os._exit", "builtins.exit", "builtins.quit"})
# metaclasses whose call makes an instance and runs __init__ as type's does
_PLAIN_METACLASSES = frozenset({"abc.ABCMeta", "builtins.type"})
# class decorators that return the class they are given
_CLASS_DECORATORS = frozenset({"dataclasses.dataclass", "functools.total_ordering", "typing.final",
                               "typing.runtime_checkable", "enum.unique"})


def _ends_in_return(body: cst.CSTNode) -> bool:
    """Whether the last statement of a function's *body* is a ``return`` (so no path falls off
    the end of it, given every ``return`` of the body was read)."""
    stmts = getattr(body, "body", ())
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], cst.Return)
    return False


def _ancestors(q: str, bases: Dict[str, Tuple[str, ...]]) -> List[str]:
    out, todo = [], list(bases.get(q, ()))
    while todo:
        b = todo.pop()
        if b in out:
            continue
        out.append(b)
        todo.extend(bases.get(b, ()))
    return out
