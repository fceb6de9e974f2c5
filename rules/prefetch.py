"""NPU101-NPU105: TensorFlow weight prefetch buffer pools
(``npu_bridge.estimator.npu.npu_scope.npu_weight_prefetch_scope``)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from npulint import modules as _modules
from npulint.checker import FileContext
from npulint.lintrule import Analysis, Invalid, LintRule
from npulint.model import Span
from npulint.paths import absolute_module
from npulint.semantic import Site
from npulint.values import UNKNOWN, Tensor, is_constant

from .signature import SIGNATURES

PREFETCH = "npu_bridge.estimator.npu.npu_scope.npu_weight_prefetch_scope"
ALLGATHER = "npu_bridge.hccl.hccl_ops.allgather"
HCOM_ALIGN = 512
HCOM_PAD = 512  # before and after

_SOURCE = ("the npu_weight_prefetch_scope API page, Restrictions 1-4 (https://www.hiascend.com/document/detail/en/"
           "TensorFlowCommercial/800/API/tfadapter1x/tfmigr1_tfadapi_0082.html; hicann/tensorflow@82957b92 "
           "docs/en/tfadapter_1/apiref/npu_scope/npu_weight_prefetch_scope.md) and its docstring's constraints 1-4 "
           "(hicann/tensorflow@82957b92 tf_adapter/python/npu_bridge/estimator/npu/npu_scope.py:119-144)")

# Graph control flow that builds a subgraph from the functions it is given (TF1 and TF2
# names; tf.compat.v1.X resolves to tensorflow.X).
_CF = ("cond", "case", "switch_case", "while_loop", "map_fn", "scan", "foldl", "foldr")
CONTROL_FLOW: Set[str] = {f"tensorflow.{n}" for n in _CF} | {
    f"tensorflow.python.ops.control_flow_ops.{n}" for n in ("cond", "case", "while_loop")} | {
    f"tensorflow.python.ops.functional_ops.{n}" for n in ("map_fn", "scan", "foldl", "foldr")} | {
    "tensorflow.python.ops.map_fn.map_fn", "tensorflow.python.ops.control_flow_switch_case.switch_case",
    "tensorflow.python.ops.cond.cond", "tensorflow.python.ops.while_loop.while_loop",
    "tensorflow.function",  # tf.function(fn) traces fn into a subgraph
}
SUBGRAPH_DECORATORS: Set[str] = {
    "tensorflow.function", "tensorflow.python.eager.def_function.function",
    "tensorflow.python.framework.function.Defun",
}

# TF ops whose first argument is a list of tensors (several inputs).
MULTI_INPUT_OPS: Set[str] = {f"tensorflow.{n}" for n in (
    "concat", "stack", "parallel_stack", "add_n", "math.add_n", "accumulate_n", "math.accumulate_n",
    "dynamic_stitch", "identity_n", "group", "tuple", "meshgrid", "einsum")}
# (einsum's first argument is the equation string, never a list: it never matches the list test)


@dataclasses.dataclass
class _Scope:
    with_node: cst.With
    call: cst.Call
    site: Site
    pool_id: Any
    size: Any
    index: int  # of its item in the with (the items before it are entered before it)


def _module(site: Site):
    s = site.scope
    fn = s.enclosing_function()
    if fn is not None:
        return fn
    while s.parent is not None:
        s = s.parent
    return s


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class PrefetchAnalysis(Analysis):
    """The file's prefetch scopes (``with npu_weight_prefetch_scope(...)``, their pool id and
    size when statically known) and what the rules judge in them: every call and every unpacking
    assignment inside a ``with``, with the ``with`` statements open around it
    (:meth:`scope_around`). Names and values are resolved in ``finish()``. Each scope whose id
    and size are valid ints is a fact ``(line, column, end_line, end_column, pool_id, size, path,
    exclusive)`` for NPU101: *path* the file the run read, *exclusive* the ``(line, column)`` of
    the file's scopes of that id that never run with it (the other arm of its ``if``)."""

    tokens = (("npu_weight_prefetch_scope",),)

    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        self.with_stack: List[cst.With] = []  # the withs whose body the traversal is in
        self.withs: List[Tuple[cst.With, Site]] = []
        self._bodies: Dict[cst.CSTNode, cst.With] = {}  # a with's body -> the with
        self._item_of: Dict[cst.WithItem, Tuple[cst.With, int]] = {}  # an item -> its with and index
        # a call or an unpacking assignment inside a with -> the withs open around it, and, for
        # one in a with's items, that with and the item's index (the items before it are entered)
        self.open: Dict[cst.CSTNode, Tuple[Tuple[cst.With, ...], Optional[Tuple[cst.With, int]]]] = {}
        self._item: List[Tuple[cst.With, int]] = []  # the with items the traversal is in
        # after finish(): every prefetch scope in source order, and a with -> its prefetch items
        # in order (the last is the one in force)
        self.found: List[_Scope] = []
        self.scopes: Dict[cst.With, List[_Scope]] = {}

    # -- traversal: structure only; names and values are resolved in finish() -----------
    def visit_With(self, node: cst.With) -> None:
        self.withs.append((node, self.ctx.site()))
        self._bodies[node.body] = node
        self._item_of.update((item, (node, k)) for k, item in enumerate(node.items))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        self._item.append(self._item_of.pop(node))

    def leave_WithItem(self, node: cst.WithItem) -> None:
        self._item.pop()

    # a with is open in its body only: its items (the scope's own arguments, the other context
    # managers) are evaluated around it
    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        w = self._bodies.pop(node, None)
        if w is not None:
            self.with_stack.append(w)

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if self.with_stack and self.with_stack[-1].body is node:
            self.with_stack.pop()

    visit_SimpleStatementSuite = visit_IndentedBlock
    leave_SimpleStatementSuite = leave_IndentedBlock

    def _open_here(self) -> Optional[Tuple[Tuple[cst.With, ...], Optional[Tuple[cst.With, int]]]]:
        item = self._item[-1] if self._item else None  # (no statement, so no with, is in an item)
        if not self.with_stack and item is None:
            return None
        return tuple(self.with_stack), item

    def visit_Call(self, node: cst.Call) -> None:
        here = self._open_here()
        if here is not None:
            self.open[node] = here

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and any(
                isinstance(t.target, (cst.Tuple, cst.List)) and len(t.target.elements) >= 2 for t in node.targets):
            here = self._open_here()
            if here is not None:
                self.open[node] = here

    def finish(self) -> None:
        ctx = self.ctx
        sig = SIGNATURES[PREFETCH]
        for with_node, site in self.withs:
            for index, item in enumerate(with_node.items):
                call = item.item
                if not isinstance(call, cst.Call) or ctx.resolve(call.func, site, {PREFETCH}) is None:
                    continue
                bound = ctx.bind(sig, call)
                if bound.error is not None:  # NPU010 reports it; its values are not trusted
                    pid, size = UNKNOWN, UNKNOWN
                else:
                    pid = ctx.arg_value(bound, "buffer_pool_id", site)
                    size = ctx.arg_value(bound, "buffer_pool_size", site)
                scope = _Scope(with_node, call, site, pid, size, index)
                self.found.append(scope)
                self.scopes.setdefault(with_node, []).append(scope)
        valid = [s for s in self.found if _is_int(s.pool_id) and s.pool_id >= 0 and _is_int(s.size) and s.size > 0]
        spans = [ctx.span(s.call) for s in valid]
        for s, span in zip(valid, spans):
            flow = ctx.sem.flows.flow(s.site.scope.node)
            exclusive = tuple((o_span.line, o_span.column) for o, o_span in zip(valid, spans)
                              if o is not s and o.pool_id == s.pool_id and o.site.scope is s.site.scope
                              and flow.exclusive(o.call, s.call))
            ctx.fact(PrefetchAnalysis, (span.line, span.column, span.end_line, span.end_column,
                                        s.pool_id, s.size, ctx.path, exclusive))

    def scope_around(self, node: cst.CSTNode, site: Site) -> Optional[_Scope]:
        """The prefetch scope in force at *node* (a call, or an unpacking assignment, met at
        *site*), if *node* is in its body or in a later item of its ``with`` (the items are
        entered in order) and it was opened in the same function."""
        here = self.open.get(node)
        if here is None:
            return None
        withs, item = here
        fn = _module(site)
        if item is not None:  # in a with's item: the scopes of the items before it are entered
            w, k = item
            entered = [s for s in self.scopes.get(w, ()) if s.index < k]
            if entered:
                return entered[-1] if _module(entered[-1].site) is fn else None
        for w in reversed(withs):
            items = self.scopes.get(w)
            if items:
                s = items[-1]
                if _module(s.site) is not fn:
                    return None
                return s
        return None


class PrefetchPoolSizeMismatch(LintRule):
    CODE = "NPU101"
    NAME = "prefetch-pool-size-mismatch"
    SEVERITY = "error"
    SUMMARY = "Two prefetch scopes use one buffer_pool_id with different buffer_pool_size."
    EXPLANATION = (
        "Buffer pools with the same ID must have the same size. One TensorFlow graph spans the "
        "modules of a program, so scopes are compared across the files of one run that can be in "
        "one program: one file, or two files that one file of the run imports (directly or "
        "through other files of the run; it may be one of them). Unrelated programs of one tree "
        "(a model zoo's `model_a/train.py` and `model_b/train.py`) are not compared, nor are "
        "scopes that never run together (the two arms of one `if`). Omitted arguments take the "
        "defaults: `npu_weight_prefetch_scope()` is pool 0 of 536870912 bytes. Every scope whose "
        "size differs from the first scope seen for that id that it may meet (in sorted path "
        "order, then source order) is reported, and the message names that first location. "
        "Ids or sizes that cannot be known statically are not compared."
    )
    SOURCE = _SOURCE + "; here restriction 2 (npu_scope.py:131)"
    INVALID = (
        Invalid("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
                "with npu_weight_prefetch_scope():\n    a = 1\n"
                "with npu_weight_prefetch_scope(0, 268435456):\n    b = 2\n", range=(4, 6, 4, 45),
                message="prefetch pool 0 is 268435456 bytes here but 536870912 bytes at line 2: pools with the same "
                        "buffer_pool_id must have the same buffer_pool_size; use one size for each id"),
        Invalid("from npu_bridge.npu_init import *\nPOOL = 1\nMB = 1024 * 1024\n"
                "with npu_scope.npu_weight_prefetch_scope(POOL, 256 * MB):\n    a = 1\n"
                "with npu_scope.npu_weight_prefetch_scope(buffer_pool_id=1, buffer_pool_size=128 * MB):\n    b = 2\n",
                range=(6, 6, 6, 86),
                message="prefetch pool 1 is 134217728 bytes here but 268435456 bytes at line 4: pools with the same "
                        "buffer_pool_id must have the same buffer_pool_size; use one size for each id"),
    )
    VALID = (
        "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
        "with npu_weight_prefetch_scope():\n    a = 1\n"
        "with npu_weight_prefetch_scope(1, 268435456):\n    b = 2\n",
        "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
        "def build(size):\n    with npu_weight_prefetch_scope(0, size):\n        pass\n"
        "with npu_weight_prefetch_scope(0, 1024):\n    pass\n",
    )
    HOW_TO_FIX = "Give each pool id one size everywhere (define the size once, as a constant)."

    uses = (PrefetchAnalysis,)

    @classmethod
    def project(cls, facts, report, settings, shared=None) -> None:
        seen: Dict[int, List[Tuple[str, int, int, int, str, Tuple[Tuple[int, int], ...]]]] = {}
        scopes = (shared or {}).get(PrefetchAnalysis.__name__, ())
        together = _one_program()
        for path, (line, col, end_line, end_col, pid, size, file, exclusive) in scopes:  # sorted path, then source order
            earlier = seen.setdefault(pid, [])
            first = next((e for e in earlier if ((line, col) not in e[5] if e[4] == file else together(e[4], file))),
                         None)
            earlier.append((path, line, col, size, file, exclusive))
            if first is None:
                continue
            fpath, fline, fcol, fsize = first[:4]
            if size != fsize:
                where = f"line {fline}" if fpath == path else f"{fpath}:{fline}:{fcol}"
                cls.report_in(report, path, Span(line, col, end_line, end_col),
                              f"prefetch pool {pid} is {size} bytes here but {fsize} bytes at {where}: pools "
                              "with the same buffer_pool_id must have the same buffer_pool_size; use one size "
                              "for each id", related=((fpath, fline, fcol),))


# ``import a.b, c as d`` and ``from .a import (b, c)`` (its first line: what a continuation line
# names is not read, so a module imported only there is not a link)
_IMPORT_TEXT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+([^\n#;]*)"
                          r"|import[ \t]+([^\n#;]*))", re.M)


def _import_texts(text: str) -> Optional[Tuple[Tuple[int, str, Tuple[str, ...]], ...]]:
    """The imports a file's text shows, ``(level, module, names)``: ``import a.b`` is
    ``(0, "a.b", ())``, ``from ..a import b, c`` is ``(2, "a", ("b", "c"))``; None for none."""
    if "import" not in text:
        return None
    found = []
    for dots, module, names, plain in _IMPORT_TEXT.findall(text):
        if plain:
            for part in plain.split(","):
                words = part.split()
                if words and re.fullmatch(r"[\w.]+", words[0]):
                    found.append((0, words[0], ()))
        else:
            listed = tuple(w.split()[0] for w in names.strip().strip("()\\").split(",") if w.split())
            found.append((len(dots), module, listed))
    return tuple(found) or None


_modules.register_text_facts("prefetch.imports", _import_texts)


def _one_program() -> Callable[[str, str], bool]:
    """``together(a, b)``: whether the files *a* and *b* of the run (two files) can be in one
    program: some Python file of the run or of its programs (:mod:`npulint.program`) imports
    both (it may be one of them), through the modules of the run, directly or through other
    files. The imports are read from the texts the first time two files are asked about;
    without the run's table, never."""
    ancestors: Dict[str, FrozenSet[str]] = {}
    importers: List[Dict[str, Set[str]]] = []

    def graph() -> Dict[str, Set[str]]:
        if not importers:
            run = _modules.active()
            by_file: Dict[str, Set[str]] = {}
            if run is not None:
                names = {where[0]: (name, where[1]) for name, where in run.paths.items() if where is not None}
                # (None: the program's files are too many to read; no two files are then known together)
                for path, imports in (run.text_facts("prefetch.imports") or {}).items():
                    this, is_package = names.get(path, (None, False))
                    for level, module, listed in imports:
                        base = absolute_module(module or None, level, this, is_package)
                        if base is None or (this is not None and run.foreign(base, this, is_package)):
                            continue  # (foreign: a top-level module of another folder, found by name only)
                        targets = [base] + [f"{base}.{n}" for n in listed]
                        for target in targets:
                            parts = target.split(".")
                            for k in range(1, len(parts) + 1):  # a module's packages run first
                                where = run.paths.get(".".join(parts[:k]))
                                if where is not None and where[0] != path:
                                    by_file.setdefault(where[0], set()).add(path)
            importers.append(by_file)
        return importers[0]

    def up(path: str) -> FrozenSet[str]:
        hit = ancestors.get(path)
        if hit is None:
            edges = graph()
            found = {path}
            todo = [path]
            while todo:
                for importer in edges.get(todo.pop(), ()):
                    if importer not in found:
                        found.add(importer)
                        todo.append(importer)
            hit = ancestors[path] = frozenset(found)
        return hit

    def together(a: str, b: str) -> bool:
        return bool(up(a) & up(b))

    return together


class PrefetchInControlFlow(LintRule):
    CODE = "NPU102"
    NAME = "prefetch-in-control-flow"
    SEVERITY = "error"
    SUMMARY = "A prefetch scope inside graph control flow or a subgraph."
    EXPLANATION = (
        "Prefetch buffer pools are not supported for prefetch operators in a subgraph or in control "
        "flow. Reported when the scope is in a function or lambda passed as a branch, body or fn to "
        "`tf.cond`, `tf.case`, `tf.switch_case`, `tf.while_loop`, `tf.map_fn`, `tf.scan`, `tf.foldl`, "
        "`tf.foldr` (also their `tf.compat.v1` names), in a function decorated with `tf.function` or "
        "`Defun`, or in a function of this file called from one of those.\n\nNot a violation: Python "
        "`if`/`for`/`while` in TF1 graph-building code. They run once while the graph is built and "
        "unroll; they create no graph control flow."
    )
    SOURCE = _SOURCE + "; here restriction 4 (npu_scope.py:136-137)"
    INVALID = (
        Invalid("import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
                "def branch():\n    with npu_scope.npu_weight_prefetch_scope():\n"
                "        return hccl_ops.allgather(w, 8)\n"
                "out = tf.cond(pred, branch, lambda: w)\n", range=(4, 10, 4, 47),
                message="npu_weight_prefetch_scope in a function passed to tf.cond: prefetch buffer pools are not "
                        "supported in graph control flow or subgraphs; create the scope outside it"),
        Invalid("import tensorflow as tf\nfrom npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
                "@tf.function\ndef step(x):\n    with npu_weight_prefetch_scope():\n        return x\n",
                range=(5, 10, 5, 37),
                message="npu_weight_prefetch_scope in a function decorated with tf.function: prefetch buffer pools "
                        "are not supported in graph control flow or subgraphs; create the scope outside it"),
    )
    VALID = (
        "from npu_bridge.npu_init import *\n"
        "for i in range(4):\n    with npu_scope.npu_weight_prefetch_scope():\n"
        "        g = hccl_ops.allgather(ws[i], 8)\n",
    )
    HOW_TO_FIX = "Create the prefetch scope outside the branch or loop body, or drop it there."

    uses = (PrefetchAnalysis,)

    # the hooks collect the file's subgraph roots and call graph; finish() judges each scope by
    # what reaches its function, which takes every call of the file
    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        # roots: functions that become a graph subgraph, with why (decorated ones take precedence)
        self.decorated: Dict[cst.CSTNode, str] = {}
        self.passed: Dict[cst.CSTNode, str] = {}
        self.edges: Dict[cst.CSTNode, List[cst.CSTNode]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        ctx = self.ctx
        if not node.decorators or not ctx.analysis(PrefetchAnalysis).found:
            return
        site = ctx.site()
        for dec in node.decorators:
            expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
            q = ctx.resolve(expr, site, SUBGRAPH_DECORATORS)
            if q is not None:
                self.decorated.setdefault(node, f"a function decorated with {_tf_short(q)}")

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if not ctx.analysis(PrefetchAnalysis).found:
            return
        sem = ctx.sem
        site = ctx.site()
        q = ctx.resolve(node.func, site, CONTROL_FLOW)
        if q is not None:
            for arg in node.args:
                for fexpr in _function_exprs(arg.value, lambda e: ctx.resolve(e, site, _PARTIAL)):
                    target = sem.function_def(fexpr, site)
                    if target is not None:
                        self.passed.setdefault(target, f"a function passed to {_tf_short(q)}")
        callee = sem.function_def(node.func, site)
        if callee is not None:
            self.edges.setdefault(_module(site).node, []).append(callee)

    def finish(self) -> None:
        a = self.ctx.analysis(PrefetchAnalysis)
        roots = dict(self.decorated)
        for fn, why in self.passed.items():
            roots.setdefault(fn, why)
        if not roots:
            return
        reach: Dict[cst.CSTNode, str] = {}
        todo = list(roots.items())
        while todo:
            fn, why = todo.pop()
            if fn in reach:
                continue
            reach[fn] = why
            for nxt in self.edges.get(fn, ()):
                if nxt not in reach:
                    todo.append((nxt, why))
        for s in a.found:
            fn = _module(s.site).node
            why = reach.get(fn)
            if why is not None:
                self.report(s.call, f"npu_weight_prefetch_scope in {why}: prefetch buffer pools are not supported in "
                                    "graph control flow or subgraphs; create the scope outside it")


class PrefetchPoolInvalidArgument(LintRule):
    CODE = "NPU103"
    NAME = "prefetch-pool-invalid-argument"
    SEVERITY = "error"
    SUMMARY = "buffer_pool_id is not a non-negative int, or buffer_pool_size not a positive int."
    EXPLANATION = (
        "The scope stores both values as integer graph attributes. A bool, float, string, zero "
        "size or negative value is rejected when the scope is entered (protobuf TypeError) or "
        "makes the pool unusable. Only statically known values are checked."
    )
    SOURCE = _SOURCE + "; here the attributes it builds with AttrValue(i=...) (npu_scope.py:139-141)"
    INVALID = (
        Invalid("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
                "with npu_weight_prefetch_scope(0, 5e8):\n    pass\n", range=(2, 6, 2, 39),
                message="buffer_pool_size=500000000.0 is not a positive int: the pool size is stored as an integer "
                        "number of bytes; use an int > 0, e.g. 256 * 1024 * 1024"),
        Invalid("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
                "ID = -1\nwith npu_weight_prefetch_scope(buffer_pool_id=ID):\n    pass\n", range=(3, 6, 3, 50),
                message="buffer_pool_id=-1 is not a non-negative int: the pool id is stored as an integer graph "
                        "attribute; use an int >= 0"),
    )
    VALID = (
        "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
        "with npu_weight_prefetch_scope(0, 500 * 1024 * 1024):\n    pass\n",
    )
    HOW_TO_FIX = "Pass integers: an id >= 0 and a size in bytes > 0 (e.g. `256 * 1024 * 1024`)."

    uses = (PrefetchAnalysis,)

    def visit_With(self, node: cst.With) -> None:
        for s in self.ctx.analysis(PrefetchAnalysis).scopes.get(node, ()):
            if is_constant(s.pool_id) and not (_is_int(s.pool_id) and s.pool_id >= 0):
                self.report(s.call, f"buffer_pool_id={s.pool_id!r} is not a non-negative int: the pool id is "
                                    "stored as an integer graph attribute; use an int >= 0")
            if is_constant(s.size) and not (_is_int(s.size) and s.size > 0):
                self.report(s.call, f"buffer_pool_size={s.size!r} is not a positive int: the pool size is "
                                    "stored as an integer number of bytes; use an int > 0, e.g. 256 * 1024 * 1024")


class PrefetchMultiIoOp(LintRule):
    CODE = "NPU104"
    NAME = "prefetch-multi-io-op"
    SEVERITY = "warning"
    SUMMARY = "An op in a prefetch scope has several inputs or several outputs."
    EXPLANATION = (
        "The prefetch buffer pool supports only prefetch operators with a single input and a single "
        "output. Reported for an op created directly in the scope body with a list/tuple of tensors as "
        "its input (e.g. `tf.concat([a, b], 0)`, `tf.add_n([a, b])`) or whose result is unpacked into "
        "several targets (e.g. `a, b = tf.split(w, 2)`)."
    )
    SOURCE = _SOURCE + "; here restriction 1 (npu_scope.py:129-130)"
    INVALID = (
        Invalid("import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
                "with npu_scope.npu_weight_prefetch_scope():\n    w = tf.concat([a, b], 0)\n", range=(4, 9, 4, 29),
                message="tf.concat takes 2 inputs inside npu_weight_prefetch_scope: the prefetch buffer pool "
                        "supports only single-input, single-output ops; move it out of the scope"),
        Invalid("import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
                "with npu_scope.npu_weight_prefetch_scope():\n    a, b = tf.split(w, 2)\n", range=(4, 12, 4, 26),
                message="the result is unpacked into 2 outputs inside npu_weight_prefetch_scope: the prefetch buffer "
                        "pool supports only single-input, single-output ops; move it out of the scope"),
    )
    VALID = (
        "import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
        "with npu_scope.npu_weight_prefetch_scope():\n    g = hccl_ops.allgather(w, 8)\n"
        "a, b = tf.split(g, 2)\n",
    )
    HOW_TO_FIX = "Keep only the single-input, single-output prefetch op (e.g. the allgather) in the scope."

    uses = (PrefetchAnalysis,)

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        site = ctx.site()
        if ctx.analysis(PrefetchAnalysis).scope_around(node, site) is None:
            return
        q = ctx.resolve(node.func, site, MULTI_INPUT_OPS)
        if q is None:
            return
        first = node.args[0].value if node.args and node.args[0].keyword is None and not node.args[0].star \
            else next((arg.value for arg in node.args if arg.keyword is not None
                       and arg.keyword.value in ("values", "inputs", "tensors")), None)
        first = _display(ctx, first, site)
        if first is not None and sum(1 for el in first.elements if not isinstance(el, cst.StarredElement)) >= 2:
            self.report(node, f"{_tf_short(q)} takes {len(first.elements)} inputs inside "
                              "npu_weight_prefetch_scope: the prefetch buffer pool supports only "
                              "single-input, single-output ops; move it out of the scope")

    def visit_Assign(self, node: cst.Assign) -> None:
        ctx = self.ctx
        site = ctx.site()
        if ctx.analysis(PrefetchAnalysis).scope_around(node, site) is None:
            return
        qs = ctx.sem.qualnames(node.value.func, site)
        if qs and all(q.startswith(("tensorflow.", "npu_bridge.")) for q in qs):
            n = max(len(t.target.elements) for t in node.targets if isinstance(t.target, (cst.Tuple, cst.List)))
            self.report(node.value,
                        f"the result is unpacked into {n} outputs inside npu_weight_prefetch_scope: the prefetch "
                        "buffer pool supports only single-input, single-output ops; move it out of the scope")


class PrefetchPoolTooSmall(LintRule):
    CODE = "NPU105"
    NAME = "prefetch-pool-too-small"
    SEVERITY = "error"
    SUMMARY = "The largest prefetch op in a pool does not fit in buffer_pool_size."
    EXPLANATION = (
        "The pool must hold its largest prefetch operator including alignment and padding. For "
        "`hccl_ops.allgather(x, rank_size)` in the scope, with `x` statically known (from "
        "`tf.get_variable`/`tf.Variable`/`tf.zeros`/`tf.ones`/`tf.random.*` with literal shape and "
        "dtype) and `rank_size` known, the output takes bytes(x) x rank_size, rounded up to 512, "
        "plus 512 bytes before and after (HCOM alignment). More than `buffer_pool_size` is reported."
    )
    SOURCE = _SOURCE + "; here restriction 3 (npu_scope.py:132-135)"
    INVALID = (
        Invalid("import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
                "w = tf.get_variable('w', shape=[8192, 8192], dtype=tf.float32)\n"
                "with npu_scope.npu_weight_prefetch_scope(1, 128 * 1024 * 1024):\n"
                "    g = hccl_ops.allgather(w, 8)\n", range=(5, 9, 5, 33),
                message="allgather output needs 2147484672 bytes (2147483648 bytes = float32[8192, 8192] x rank_size "
                        "8, aligned to 512 plus 512 bytes before and after) but prefetch pool 1 holds 134217728 "
                        "bytes: the op does not fit; raise buffer_pool_size to at least 2147484672"),
    )
    VALID = (
        "import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
        "w = tf.get_variable('w', shape=[1024, 1024], dtype=tf.float16)\n"
        "with npu_scope.npu_weight_prefetch_scope(1, 128 * 1024 * 1024):\n"
        "    g = hccl_ops.allgather(w, 8)\n",
    )
    HOW_TO_FIX = "Raise buffer_pool_size to at least the size in the message, or prefetch a smaller tensor."

    uses = (PrefetchAnalysis,)

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        site = ctx.site()
        s = ctx.analysis(PrefetchAnalysis).scope_around(node, site)
        if s is not None and ctx.resolve(node.func, site, {ALLGATHER}) is not None:
            self._check_fit(node, site, s)

    def _check_fit(self, call: cst.Call, site: Site, s: _Scope) -> None:
        ctx = self.ctx
        if not (_is_int(s.size) and s.size > 0):
            return
        bound = ctx.bind(SIGNATURES[ALLGATHER], call)
        if bound.error is not None:
            return
        x = ctx.arg_value(bound, "tensor", site)
        rank = ctx.arg_value(bound, "rank_size", site)
        if not isinstance(x, Tensor) or not _is_int(rank) or rank <= 0:
            return
        nbytes = x.nbytes()
        if nbytes is None:
            return
        out = nbytes * rank
        need = -(-out // HCOM_ALIGN) * HCOM_ALIGN + 2 * HCOM_PAD
        if need > s.size:
            self.report(call, f"allgather output needs {need} bytes ({out} bytes = {x.dtype.name}{list(x.shape)} x "
                              f"rank_size {rank}, aligned to {HCOM_ALIGN} plus {HCOM_PAD} bytes before and after) "
                              f"but {'the prefetch pool' if s.pool_id is UNKNOWN else f'prefetch pool {s.pool_id!r}'} "
                              f"holds {s.size} bytes: the op does not fit; "
                              f"raise buffer_pool_size to at least {need}")


def _display(ctx: FileContext, expr, site: Site):
    """The list/tuple display *expr* is, or that a name is certainly bound to."""
    if expr is None:
        return None
    expr, _ = ctx.sem.bound_expr(expr, site)
    return expr if isinstance(expr, (cst.List, cst.Tuple)) else None


def _function_exprs(expr: cst.BaseExpression, is_partial):
    """Function-valued expressions in an argument: the argument itself, the elements of a
    list/tuple/dict display (``tf.case``, ``switch_case``), ``functools.partial(f, ...)``."""
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Lambda)):
        yield expr
    elif isinstance(expr, (cst.List, cst.Tuple)):
        for el in expr.elements:
            yield from _function_exprs(el.value, is_partial)
    elif isinstance(expr, cst.Dict):
        for el in expr.elements:
            if isinstance(el, cst.DictElement):
                yield from _function_exprs(el.value, is_partial)
    elif isinstance(expr, cst.Call) and expr.args and is_partial(expr.func):
        yield from _function_exprs(expr.args[0].value, is_partial)


_PARTIAL = {"functools.partial"}


def _tf_short(q: str) -> str:
    parts = q.split(".")
    if parts[0] == "tensorflow":
        return "tf." + parts[-1] if parts[-1] != "Defun" else "Defun"
    return parts[-1]
