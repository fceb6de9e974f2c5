"""NPU301-NPU308: TorchAir in-graph multi-stream (``torchair.scope``, ``torchair.ops``)."""

from __future__ import annotations

import functools
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from npulint.checker import Checker, FileContext
from npulint.model import Rule, Span
from npulint.semantic import Scope, Site
from npulint.values import is_constant

from .signature import SIGNATURES
from .torchair_config import ACLGRAPH_MODES, COMPILED

SWITCH = {"torchair.scope.npu_stream_switch", "torchair.ops.NpuStreamSwitch", "torchair.NpuStreamSwitch"}
WAIT_TENSOR = {"torchair.scope.npu_wait_tensor", "torchair.ops.npu_wait_tensor"}
CREATE = "torchair.ops.npu_create_tagged_event"
RECORD = "torchair.ops.npu_tagged_event_record"
WAIT = "torchair.ops.npu_tagged_event_wait"
RECORD_STREAM = "torchair.ops.npu_record_tagged_stream"
API = SWITCH | WAIT_TENSOR | {CREATE, RECORD, WAIT, RECORD_STREAM}
# Base classes that share no tagged-event attributes with their subclasses.
_PLAIN_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module", "builtins.object"}

_SRC = ("docs/002 (图内多流表达功能); research/npu-api-constraints.md §B (torchair python/torchair/scope, "
        "python/torchair/ops/_tagged_event.py)")
_IMP = "import torch\nimport torchair as tng\n"

EVENT_WAIT_WITHOUT_RECORD = Rule(
    code="NPU301", name="event-wait-without-record", severity="error",
    summary="npu_tagged_event_wait on an event that is never recorded.",
    explanation=(
        "A wait on an event that is never passed to `npu_tagged_event_record` does nothing: torch_npu creates "
        "the event lazily on its first record, and a wait on an event never created enqueues no wait. No "
        "synchronisation happens and the streams race. An event is identified by the name it is bound to: a "
        "local or closure variable (recorded in the defining function or a function nested in it), a "
        "module-level name (recorded anywhere in the module), or `self.<attr>` (recorded in any method of the "
        "class or of the classes it inherits from or that inherit from it in the same file). Events reached "
        "through parameters, subscripts or other expressions, or passed to other functions, are unknown."),
    source=_SRC + " §B.4 (NPUEvent.cpp L123-147)",
    invalid=(_IMP + "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.ev = tng.ops.npu_create_tagged_event(tag='a')\n"
                    "    def forward(self, x):\n        tng.ops.npu_tagged_event_wait(self.ev)\n        return x\n",),
    valid=(_IMP + "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                  "        self.ev = tng.ops.npu_create_tagged_event(tag='a')\n"
                  "    def forward(self, x):\n        tng.ops.npu_tagged_event_record(self.ev)\n"
                  "        with tng.scope.npu_stream_switch('1'):\n            tng.ops.npu_tagged_event_wait(self.ev)\n"
                  "        return x\n",
           _IMP + "def step(events, i):\n    tng.ops.npu_tagged_event_wait(events[i])\n"),
    fix="Record the event with npu_tagged_event_record on the producing stream before the wait.")

EVENT_WAIT_BEFORE_RECORD = Rule(
    code="NPU302", name="event-wait-before-record", severity="warning",
    summary="A wait comes before the event's only records, later in the same function.",
    explanation=("Within one function, `npu_tagged_event_wait(e)` runs before every `npu_tagged_event_record(e)` "
                 "(which are all later in that function, and no other function records e). The wait finds the "
                 "event not yet recorded and synchronises nothing. Not reported when a loop encloses both."),
    source=_SRC + " §B.4",
    invalid=(_IMP + "def f(x):\n    ev = tng.ops.npu_create_tagged_event(tag='b')\n"
                    "    tng.ops.npu_tagged_event_wait(ev)\n    y = x + 1\n    tng.ops.npu_tagged_event_record(ev)\n"
                    "    return y\n",),
    valid=(_IMP + "def f(x):\n    ev = tng.ops.npu_create_tagged_event(tag='b')\n"
                  "    tng.ops.npu_tagged_event_record(ev)\n    y = x + 1\n    tng.ops.npu_tagged_event_wait(ev)\n"
                  "    return y\n",),
    fix="Move the record before the wait (record on the producer stream, wait on the consumer stream).")

TAGGED_EVENT_OUTSIDE_ACLGRAPH = Rule(
    code="NPU303", name="tagged-event-outside-aclgraph", severity="error",
    summary="Tagged-event APIs in code compiled in max-autotune mode.",
    explanation=("`npu_tagged_event_record`, `npu_tagged_event_wait` and `npu_record_tagged_stream` have no GE "
                 "converter: in code compiled with a torchair backend whose effective mode is `max-autotune` "
                 "(the default), compilation raises NotImplementedError. Creating the event is fine anywhere. "
                 "A class is compiled when an instance of it reaches `torch.compile(..., backend=<torchair "
                 "backend>)` in the same run, and the classes it instantiates in its methods are compiled with it."),
    source=_SRC + " §B.1 (_tagged_event.py L76-80, L92-96, L121-125; tests/st/torchair_aclgraph_st.py L457-503)",
    invalid=(_IMP + "class M(torch.nn.Module):\n    def forward(self, x):\n"
                    "        tng.ops.npu_record_tagged_stream(x, '1')\n        return x\n"
                    "cfg = tng.CompilerConfig()\nmodel = torch.compile(M(), backend=tng.get_npu_backend(compiler_config=cfg))\n",),
    valid=(_IMP + "class M(torch.nn.Module):\n    def forward(self, x):\n"
                  "        tng.ops.npu_record_tagged_stream(x, '1')\n        return x\n"
                  "cfg = tng.CompilerConfig()\ncfg.mode = 'reduce-overhead'\n"
                  "model = torch.compile(M(), backend=tng.get_npu_backend(compiler_config=cfg))\n",),
    fix="Compile with config.mode = 'reduce-overhead' (or npugraph_ex), or use npu_wait_tensor in max-autotune.")

STREAM_PRIORITY_RESERVED = Rule(
    code="NPU304", name="stream-priority-reserved", severity="warning",
    summary="stream_priority other than 0 in torchair's npu_stream_switch.",
    explanation="The `stream_priority` parameter is reserved: keep the default 0 (the aclgraph path ignores it).",
    source=_SRC + " §B.3",
    invalid=(_IMP + "with tng.scope.npu_stream_switch('1', 2):\n    pass\n",),
    valid=(_IMP + "with tng.scope.npu_stream_switch('1', 0):\n    pass\n",
           "from vllm_ascend.utils import npu_stream_switch\nwith npu_stream_switch('1', 2):\n    pass\n"),
    fix="Drop stream_priority.")

RECORD_STREAM_UNKNOWN_TAG = Rule(
    code="NPU305", name="record-stream-unknown-tag", severity="warning",
    summary="npu_record_tagged_stream with a tag no npu_stream_switch in the file uses.",
    explanation=("`npu_record_tagged_stream(t, tag)` with a literal tag that no torchair `npu_stream_switch` in "
                 "the same file uses (and not \"default\"): an unknown tag silently creates a new, idle stream, "
                 "so the tensor's memory is not kept alive for the stream that really uses it. Not reported when "
                 "some stream switch in the file has a tag that cannot be known statically."),
    source=_SRC + " §B.4 (_scope_attr.py L95-108)",
    invalid=(_IMP + "with tng.scope.npu_stream_switch('1'):\n    y = x + 1\ntng.ops.npu_record_tagged_stream(y, '2')\n",),
    valid=(_IMP + "with tng.scope.npu_stream_switch('1'):\n    y = x + 1\ntng.ops.npu_record_tagged_stream(y, '1')\n",),
    fix="Use the tag of the npu_stream_switch the tensor is used on.")

TAGGED_EVENT_TAG_REUSED = Rule(
    code="NPU306", name="tagged-event-tag-reused", severity="error",
    summary="A tagged-event tag is created twice in one process.",
    explanation=("torchair keeps tagged events in a process-wide registry and raises "
                 "`ValueError(\"tagged event tag ... is already in use\")` on the second creation of a tag. "
                 "Reported when two `npu_create_tagged_event` calls use one literal tag (in the files of one run; "
                 "at the later one), or when a creation with a literal tag runs more than once: in `__init__` or "
                 "another method of a class instantiated more than once (two call sites, or inside a loop or "
                 "comprehension such as `ModuleList([Layer() for _ in range(n)])`, also through a subclass), "
                 "or directly in a loop."),
    source=_SRC + " §B.4 (_tagged_event.py L137-138)",
    invalid=(_IMP + "class Layer(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.ev = tng.ops.npu_create_tagged_event(tag='layer')\n"
                    "layers = torch.nn.ModuleList([Layer() for _ in range(4)])\n",
             _IMP + "a = tng.ops.npu_create_tagged_event(tag='x')\nb = tng.ops.npu_create_tagged_event(tag='x')\n"),
    valid=(_IMP + "class Layer(torch.nn.Module):\n    def __init__(self, i):\n        super().__init__()\n"
                  "        self.ev = tng.ops.npu_create_tagged_event(tag=f'layer{i}')\n"
                  "layers = torch.nn.ModuleList([Layer(i) for i in range(4)])\n",),
    fix="Give every event its own tag (e.g. include the layer index), or create the events once and share them.")

STREAM_TAG_TYPE = Rule(
    code="NPU307", name="stream-tag-type", severity="error",
    summary="A stream tag or event tag that is not a str.",
    explanation="`npu_stream_switch(stream_tag, ...)` and `npu_create_tagged_event(tag)` take string tags.",
    source=_SRC + " §B.1",
    invalid=(_IMP + "with tng.scope.npu_stream_switch(1):\n    pass\n",),
    valid=(_IMP + "with tng.scope.npu_stream_switch('1'):\n    pass\n",),
    fix="Pass the tag as a string, e.g. '1'.")

WAIT_TENSOR_IN_ACLGRAPH = Rule(
    code="NPU308", name="wait-tensor-in-aclgraph", severity="error",
    summary="npu_wait_tensor in code compiled in an aclgraph mode.",
    explanation=("`npu_wait_tensor` works only in max-autotune: in code compiled with a backend whose effective "
                 "mode is `reduce-overhead` or `npugraph_ex` it raises NotImplementedError. Use the tagged "
                 "events there (npu_create_tagged_event / npu_tagged_event_record / npu_tagged_event_wait)."),
    source=_SRC + " §B.1 (scope/_wait_tensor.py L19-26)",
    invalid=(_IMP + "class M(torch.nn.Module):\n    def forward(self, x, y):\n"
                    "        return tng.scope.npu_wait_tensor(x, y)\n"
                    "cfg = tng.CompilerConfig()\ncfg.mode = 'reduce-overhead'\n"
                    "model = torch.compile(M(), backend=tng.get_npu_backend(compiler_config=cfg))\n",),
    valid=(_IMP + "class M(torch.nn.Module):\n    def forward(self, x, y):\n"
                  "        return tng.scope.npu_wait_tensor(x, y)\n"
                  "cfg = tng.CompilerConfig()\n"
                  "model = torch.compile(M(), backend=tng.get_npu_backend(compiler_config=cfg))\n",),
    fix="Use tagged events in reduce-overhead, or compile this model in max-autotune.")

RULES = (EVENT_WAIT_WITHOUT_RECORD, EVENT_WAIT_BEFORE_RECORD, TAGGED_EVENT_OUTSIDE_ACLGRAPH,
         STREAM_PRIORITY_RESERVED, RECORD_STREAM_UNKNOWN_TAG, TAGGED_EVENT_TAG_REUSED, STREAM_TAG_TYPE,
         WAIT_TENSOR_IN_ACLGRAPH)




class StreamsChecker(Checker):
    rules = RULES
    consumes = (COMPILED,)
    # The stream APIs, plus the configuration checker's tokens: this checker also runs where
    # that one does (a file that compiles a model may instantiate or import what it needs).
    tokens = (("npu_stream_switch",), ("tagged_event",), ("npu_record_tagged_stream",), ("npu_wait_tensor",),
              ("NpuStreamSwitch",), ("CompilerConfig",), ("get_npu_backend",))

    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        self.calls: List[Tuple[cst.Call, Site]] = []
        self.loads: List[Tuple[cst.CSTNode, Site]] = []  # names and attributes, for escape analysis
        self.classes: List[Tuple[cst.ClassDef, Site]] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.ctx.site()))

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

    # -- helpers ----------------------------------------------------------------------
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
            cls = sem.self_class(site.scope, expr.value.value)
            if cls is None:
                return None
            fam = families.get(cls)
            if fam is None:
                return None
            return ("attr", fam, expr.attr.value)
        return None

    def _arg(self, q: str, call: cst.Call, name: str):
        bound = self.ctx.bind(SIGNATURES[q], call)
        if bound.error is not None:
            return None, None
        return bound, bound.args.get(name)

    # -- decisions ----------------------------------------------------------------------
    def finish(self) -> None:
        ctx = self.ctx
        resolved: List[Tuple[cst.Call, Site, str]] = []
        for call, site in self.calls:
            q = ctx.resolve(call.func, site, API)
            if q is not None:
                resolved.append((call, site, q))
        if not resolved:
            self._facts_for_instances()
            return
        self._check_tags(resolved)
        self._check_events(resolved)
        self._facts(resolved)
        self._api_facts(resolved)

    def _check_tags(self, resolved) -> None:
        ctx = self.ctx
        switch_tags: Set[str] = set()
        unknown_switch = False
        for call, site, q in resolved:
            if q in SWITCH:
                bound, tag_expr = self._arg(q, call, "stream_tag")
                if bound is None:
                    unknown_switch = True
                    continue
                tag = ctx.arg_value(bound, "stream_tag", site)
                if isinstance(tag, str):
                    switch_tags.add(tag)
                else:
                    unknown_switch = True
                    if is_constant(tag) and tag_expr is not None:
                        ctx.report("NPU307", tag_expr, f"stream tag {tag!r} is not a str: entering the scope fails "
                                                       "(torch.ops.air.scope_enter takes str[]) when the graph is "
                                                       "traced; pass the tag as a string, e.g. '1'")
                prio = ctx.arg_value(bound, "stream_priority", site)
                if is_constant(prio) and prio != 0:
                    ctx.report("NPU304", bound.args.get("stream_priority", call),
                               f"stream_priority={prio!r}: the parameter is reserved (the aclgraph path ignores it); "
                               "keep the default 0")
            elif q == CREATE:
                bound, tag_expr = self._arg(q, call, "tag")
                if bound is None or tag_expr is None:
                    continue
                tag = ctx.value(tag_expr, site)
                if is_constant(tag) and not isinstance(tag, str):
                    ctx.report("NPU307", tag_expr, f"event tag {tag!r} is not a str: the tagged-event ops take the "
                                                   "tag as a string, so the first record or wait on this event fails; "
                                                   f"pass it as a string, e.g. '{tag}'")
        if unknown_switch or not ctx.wants("NPU305"):
            return
        for call, site, q in resolved:
            if q != RECORD_STREAM:
                continue
            bound, tag_expr = self._arg(q, call, "tagged_stream")
            if bound is None or tag_expr is None:
                continue
            tag = ctx.value(tag_expr, site)
            if isinstance(tag, str) and tag != "default" and tag not in switch_tags:
                known = ", ".join(repr(t) for t in sorted(switch_tags)) or "none"
                ctx.report("NPU305", tag_expr,
                           f"npu_record_tagged_stream tag {tag!r} is used by no npu_stream_switch in this file "
                           f"(tags: {known}): an unknown tag silently creates a new, idle stream; use the tag "
                           "of the stream that uses the tensor")

    def _check_events(self, resolved) -> None:
        ctx = self.ctx
        if not (ctx.wants("NPU301") or ctx.wants("NPU302")):
            return
        families = self._families()
        records: Dict[tuple, List[Tuple[cst.Call, Site]]] = {}
        waits: List[Tuple[cst.Call, Site, tuple, cst.CSTNode]] = []
        counted: Set[int] = set()
        for call, site, q in resolved:
            if q not in (RECORD, WAIT):
                continue
            bound, ev = self._arg(q, call, "event")
            if ev is None:
                continue
            key = self._event_key(ev, site, families)
            if key is None:
                continue
            counted.add(id(ev))
            if q == RECORD:
                records.setdefault(key, []).append((call, site))
            else:
                waits.append((call, site, key, ev))
        if not waits:
            return
        escaped = self._escaped(families, counted)
        for call, site, key, ev in waits:
            if key in escaped or not self._created(key, ev, site, families):
                continue
            recs = records.get(key, [])
            if not recs:
                ctx.report("NPU301", call,
                           f"npu_tagged_event_wait on '{ctx.code(ev)}', which is never recorded: the wait does not "
                           "synchronise anything; record it with npu_tagged_event_record before the wait")
                continue
            fn = site.scope.enclosing_function()
            if fn is None or any(r_site.scope.enclosing_function() is not fn for _, r_site in recs):
                continue
            if all(r_site.seq > site.seq for _, r_site in recs) and not any(
                    site.shared_loop(r_site) is not None for _, r_site in recs):
                line = ctx.line(recs[0][0])
                ctx.report("NPU302", call,
                           f"npu_tagged_event_wait on '{ctx.code(ev)}' comes before its only record (line {line}) in this "
                           "function: the wait finds the event not yet recorded and synchronises nothing; "
                           "record before waiting")

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
        target (passed to a function, stored elsewhere, returned...): another name may record them."""
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
        for node, _ in self.loads:
            if isinstance(node, cst.Attribute):
                inner.add(id(node.value))
                inner.add(id(node.attr))
        for node, site in self.loads:
            if id(node) in counted or id(node) in stores or id(node) in inner:
                continue
            key = self._event_key(node, site, families)
            if key is not None:
                out.add(key)
        return out

    # -- facts for the project-wide phase (NPU306) ------------------------------------
    def _class_qualname(self, site: Site) -> Optional[str]:
        fn = site.scope.enclosing_function()
        if fn is None or fn.parent is None or fn.parent.kind != "class":
            return None
        return self.ctx.sem.qualname_of_def(fn.parent.node)

    def _facts(self, resolved) -> None:
        ctx = self.ctx
        # the tagged-event APIs the file calls: not every torchair release has each of them, so
        # they tell which releases the code can run on (NPU303 holds on some releases only)
        for q in sorted({q for _, _, q in resolved if q in _release_apis()}):
            ctx.fact(StreamsChecker, ("uses", q))
        for call, site, q in resolved:
            if q != CREATE:
                continue
            bound, tag_expr = self._arg(q, call, "tag")
            if bound is None or tag_expr is None:
                continue
            tag = ctx.value(tag_expr, site)
            if not isinstance(tag, str):
                continue
            span = ctx.span(call)
            looped = site.in_loop or any(s.kind == "comprehension" for s in site.scope.chain())
            ctx.fact(StreamsChecker, ("create", tag, span.line, span.column, span.end_line, span.end_column,
                                      self._class_qualname(site), looped))
        self._facts_for_instances()

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
                    parts = b.qualname.split(".")
                    imported.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
            ctx.fact(StreamsChecker, ("module", sem.module_name, tuple(sorted(imported))))
        for cls, site in self.classes:
            q = sem.qualname_of_def(cls)
            if q is None:
                continue
            bases = [bq for bq in (sem.callee_qualname(base.value, site) for base in cls.bases) if bq]
            ctx.fact(StreamsChecker, ("class", q, tuple(bases)))
        for call, site in self.calls:
            q = sem.callee_qualname(call.func, site)
            if q is None or q.startswith(("torch.", "torchair.")):
                continue
            looped = site.in_loop or any(s.kind == "comprehension" for s in site.scope.chain())
            owner = sem.enclosing_class(site)
            ctx.fact(StreamsChecker, ("new", q, looped, sem.qualname_of_def(owner.node) if owner else None))

    def _api_facts(self, resolved) -> None:
        """Calls whose legality depends on the compile mode, by the class whose method holds them."""
        ctx = self.ctx
        for call, site, q in resolved:
            kind = "event" if q in (RECORD, WAIT, RECORD_STREAM) else "wait_tensor" if q in WAIT_TENSOR else None
            if kind is None:
                continue
            owner = ctx.sem.enclosing_class(site)
            cq = ctx.sem.qualname_of_def(owner.node) if owner is not None else None
            if cq is None:
                continue
            span = ctx.span(call)
            ctx.fact(StreamsChecker, ("api", kind, q.rsplit(".", 1)[-1], cq, span.line, span.column, span.end_line,
                                      span.end_column))

    @classmethod
    def followup(cls, facts, shared=None) -> Tuple[Any, ...]:
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

    @classmethod
    def project(cls, facts, report, settings, shared=None) -> None:
        instances: Dict[str, int] = {}
        bases: Dict[str, Tuple[str, ...]] = {}
        children: Dict[str, Set[str]] = {}  # class -> classes its methods instantiate
        first_tag: Dict[str, List[Tuple[str, int, int]]] = {}
        creations = []
        apis = []
        modules: Dict[str, str] = {}  # path -> module name
        imports: Dict[str, Set[str]] = {}  # module -> modules (and prefixes) it imports
        used: Set[str] = set()  # the tagged-event APIs the run calls
        for path, fact in facts:
            kind = fact[0]
            if kind == "new":
                _, q, looped, owner = fact
                instances[q] = instances.get(q, 0) + (2 if looped else 1)
                if owner is not None:
                    children.setdefault(owner, set()).add(q)
            elif kind == "class":
                bases[fact[1]] = fact[2]
            elif kind == "api":
                apis.append((path,) + fact[1:])
            elif kind == "module":
                modules[path] = fact[1]
                imports[fact[1]] = set(fact[2])
            elif kind == "uses":
                used.add(fact[1])
            else:
                creations.append((path,) + fact[1:])
        # a subclass instance runs the base class's __init__ too
        total = dict(instances)
        for q, n in instances.items():
            for b in _ancestors(q, bases):
                total[b] = total.get(b, 0) + n
        cls._check_compiled(apis, (shared or {}).get(COMPILED, []), bases, children, report,
                            _npu303_releases(settings, used))
        for path, tag, line, col, end_line, end_col, owner, looped in creations:
            span = Span(line, col, end_line, end_col)
            seen = next((t for t in first_tag.get(tag, ()) if t[0] == path or
                         _one_process(modules.get(t[0]), modules.get(path), imports)), None)
            first_tag.setdefault(tag, []).append((path, line, col))
            if seen is not None:
                fpath, fline, fcol = seen
                where = f"line {fline}" if fpath == path else f"{fpath}:{fline}:{fcol}"
                report.report(path, span, "NPU306",
                              f"tagged event tag {tag!r} is already created at {where}: the second "
                              f"npu_create_tagged_event raises ValueError('tagged event tag {tag} is already in use'); "
                              "give each event its own tag", related=((fpath, fline, fcol),))
                continue
            if looped:
                report.report(path, span, "NPU306",
                              f"npu_create_tagged_event(tag={tag!r}) runs in a loop: the second creation raises "
                              f"ValueError('tagged event tag {tag} is already in use'); create it once or give each "
                              "its own tag")
            elif owner is not None and total.get(owner, 0) > 1:
                report.report(path, span, "NPU306",
                              f"npu_create_tagged_event(tag={tag!r}) runs once per instance of "
                              f"{owner.rsplit('.', 1)[-1]}, which is instantiated more than once: the second "
                              f"creation raises ValueError('tagged event tag {tag} is already in use'); include an "
                              "index in the tag or share one event")

    @classmethod
    def _check_compiled(cls, apis, compiled, bases, children, report, npu303=None) -> None:
        """NPU303/NPU308: calls in the methods of classes compiled with a known mode. A
        compiled class's bases (inherited methods) and the classes its methods instantiate
        (submodules) are compiled with it. *npu303*: the releases NPU303 holds on and the upstream
        line, when it holds on every torchair release the code may run on (else None)."""
        if not apis or not compiled:
            return
        modes: Dict[str, Dict[str, Tuple[str, int]]] = {}  # class -> mode -> (where)
        todo = [(q, mode, (path, line)) for path, (q, mode, line) in compiled]
        while todo:
            q, mode, where = todo.pop()
            if mode in modes.setdefault(q, {}):
                continue
            modes[q][mode] = where
            todo.extend((b, mode, where) for b in _ancestors(q, bases))
            todo.extend((c, mode, where) for c in children.get(q, ()))
        for path, kind, api, owner, line, col, end_line, end_col in apis:
            span = Span(line, col, end_line, end_col)
            for mode, (cpath, cline) in sorted(modes.get(owner, {}).items()):
                where = f"line {cline}" if cpath == path else f"{cpath}:{cline}"
                name = owner.rsplit(".", 1)[-1]
                if kind == "event" and mode == "max-autotune" and npu303 is not None:
                    releases, citation = npu303
                    report.report(path, span, "NPU303",
                                  f"{api} in {name}, which is compiled in max-autotune mode ({where}): torchair's GE "
                                  f"converter raises NotImplementedError for it ({releases}: {citation}); compile "
                                  "with config.mode = \"reduce-overhead\", or use npu_wait_tensor in max-autotune",
                                  related=((cpath, cline, 1),))
                elif kind == "wait_tensor" and mode in ACLGRAPH_MODES:
                    report.report(path, span, "NPU308",
                                  f"npu_wait_tensor in {name}, which is compiled in {mode} mode ({where}): it raises "
                                  "NotImplementedError there; use npu_create_tagged_event / npu_tagged_event_record / "
                                  "npu_tagged_event_wait instead", related=((cpath, cline, 1),))


@functools.lru_cache(maxsize=1)
def _release_apis() -> Dict[str, FrozenSet[str]]:
    """Tagged-event API -> the torchair releases that define it (rules/torchair_releases.json)."""
    from npulint.releases import torchair_data

    return {q: frozenset(where) for q, where in torchair_data()["apis"].items()}


def _npu303_releases(settings, used: Set[str]) -> Optional[Tuple[str, str]]:
    """NPU303 holds where torchair's GE converter raises for the tagged-event ops (7.2.0 on), not
    where it drops them (7.1.0). The code may run on the releases configured or inferred (else on
    every release npulint knows) that define every tagged-event API it calls. Returns the
    releases NPU303 holds on (text) and the upstream line at the newest, when it holds on every
    release the code may run on; None otherwise."""
    from npulint.releases import describe, resolve, torchair_data

    effective = getattr(settings, "effective_releases", None) or resolve(settings, ())
    apis = _release_apis()
    may_run = [r for r in effective.torchair() if all(r in apis[q] for q in used if q in apis)]
    holds = torchair_data()["checks"]["NPU303"]["holds"]
    if not may_run or not all(r in holds for r in may_run):
        return None
    return describe(f"torchair@{r}" for r in holds), holds[may_run[-1]]


def _one_process(a: Optional[str], b: Optional[str], imports: Dict[str, Set[str]]) -> bool:
    """Two modules certainly run in one process when one imports the other (directly or
    through modules of the run) or a third module of the run imports both. Independent entry
    points (two test scripts) each run in their own process."""
    if not a or not b:
        return False
    reach: Dict[str, Set[str]] = {}

    def reachable(m: str) -> Set[str]:
        if m not in reach:
            seen, todo = set(), [m]
            while todo:
                x = todo.pop()
                if x in seen:
                    continue
                seen.add(x)
                todo.extend(y for y in imports.get(x, ()) if y in imports)
            reach[m] = seen
        return reach[m]

    if b in reachable(a) or a in reachable(b):
        return True
    return any(a in reachable(c) and b in reachable(c) for c in imports)


def _ancestors(q: str, bases: Dict[str, Tuple[str, ...]]) -> List[str]:
    out, todo = [], list(bases.get(q, ()))
    while todo:
        b = todo.pop()
        if b in out:
            continue
        out.append(b)
        todo.extend(bases.get(b, ()))
    return out
