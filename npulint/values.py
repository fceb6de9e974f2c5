"""The shared value resolver: "resolve values, never guess" (RULES.md).

:func:`Evaluator.value` returns a Python constant (int, float, str, bytes, bool, None,
tuple), a :class:`Ref` to an imported object, a :class:`DType`, a :class:`Tensor`, or
:data:`UNKNOWN`. Anything not statically certain is UNKNOWN, and rules say nothing then.
"""

from __future__ import annotations

import dataclasses
import operator
import os
import sys
from typing import Any, Callable, Dict, FrozenSet, Optional, Set, Tuple

import libcst as cst

from npulint import modules as _modules
from npulint.semantic import LOCAL, Semantic, Site, _aliased, _nested_mutable, literal_value


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False


UNKNOWN = _Unknown()


class ListValue(tuple):
    """The items of a list (a list literal, ``[4] * 2``, ``L + [1]``) inside the evaluator,
    which ``%`` formats as the list it is (``"%s" % ([4, 5],)`` is ``"[4, 5]"``, and ``"%s" %
    [4]`` formats the list as one argument: ``"[4]"``); :meth:`Evaluator.value` gives the
    rules a plain tuple of its items."""

    __slots__ = ()


def _plain(v):
    """*v* with its :class:`ListValue` items as plain tuples (what the rules are given)."""
    if isinstance(v, tuple) and (type(v) is ListValue or any(isinstance(x, tuple) for x in v)):
        return tuple(_plain(x) for x in v)
    return v


def _as_python(v):
    """*v* with its :class:`ListValue` items made lists again (what ``%`` formats)."""
    if isinstance(v, tuple):
        items = [_as_python(x) for x in v]
        return items if type(v) is ListValue else tuple(items)
    return v
_UNSET: Any = object()  # not worked out yet; a dtype= not given


@dataclasses.dataclass(frozen=True)
class Ref:
    """An imported object we can name but not evaluate (``tensorflow.float32`` before lookup)."""

    qualname: str


@dataclasses.dataclass(frozen=True)
class DType:
    name: str  # "float32", "bfloat16", ...
    itemsize: int


@dataclasses.dataclass(frozen=True)
class Tensor:
    """A tensor whose shape and/or dtype are statically known (None where not)."""

    shape: Optional[Tuple[int, ...]]
    dtype: Optional[DType]
    transposed: bool = False
    zero: bool = False  # every element is known to be 0 (``torch.zeros(n)``, never written since)

    def nbytes(self) -> Optional[int]:
        if self.shape is None or self.dtype is None:
            return None
        n = self.dtype.itemsize
        for d in self.shape:
            n *= d
        return n


_ITEMSIZE = {
    "float16": 2, "half": 2, "bfloat16": 2, "float32": 4, "float": 4, "float64": 8, "double": 8,
    "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8,
    "uint64": 8, "bool": 1, "complex64": 8, "complex128": 16,
}
_CANON = {"half": "float16", "float": "float32", "double": "float64"}


def is_constant(v) -> bool:
    """A plain Python constant (what scalar rules may compare): not UNKNOWN, not a
    :class:`Ref` to an imported object, not a tensor or dtype."""
    if isinstance(v, tuple):
        return all(is_constant(x) for x in v)
    return v is None or isinstance(v, (int, float, str, bytes, bool))


def dtype_named(name: str) -> Optional[DType]:
    size = _ITEMSIZE.get(name)
    if size is None:
        return None
    return DType(_CANON.get(name, name), size)


# Known constants by canonical qualified name (dtype objects of the frameworks).
CONSTANTS: Dict[str, object] = {}
for _n in _ITEMSIZE:
    if _n not in ("float", "double", "half"):
        CONSTANTS[f"tensorflow.{_n}"] = dtype_named(_n)
        CONSTANTS[f"tensorflow.dtypes.{_n}"] = dtype_named(_n)
    CONSTANTS[f"torch.{_n}"] = dtype_named(_n)
del _n

# Constructors whose result the resolver knows: canonical qualname -> handler.
# A handler gets (evaluator, call, site) and returns a value or UNKNOWN.
CONSTRUCTORS: Dict[str, Callable] = {}


def constructor(*qualnames: str):
    def deco(fn):
        for q in qualnames:
            CONSTRUCTORS[q] = fn
        return fn

    return deco


_MAX_INT_BITS = 4096
_MAX_STR = 1 << 16

_BINOPS = {
    cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
    cst.Divide: operator.truediv, cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod,
    cst.Power: operator.pow, cst.LeftShift: operator.lshift, cst.RightShift: operator.rshift,
    cst.BitAnd: operator.and_, cst.BitOr: operator.or_, cst.BitXor: operator.xor,
}

_NUMBER = (int, float)


def fold_unary(op: str, v):
    """``-v``, ``+v``, ``~v`` (an int) or ``not v`` (*op*: "-", "+", "~", "not") of a folded
    number; UNKNOWN for anything else."""
    if v is UNKNOWN or not isinstance(v, (int, float, bool)):
        return UNKNOWN
    if op == "-":
        return -v
    if op == "+":
        return +v
    if op == "~" and isinstance(v, int):
        return ~v
    if op == "not":
        return not v
    return UNKNOWN


_UNARY = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~", cst.Not: "not"}


def _safe_binop(op, a, b):
    """Apply *op* unless the operands are not plain constants or the result could be huge."""
    ok = (int, float, str, bytes, tuple, bool)
    if not isinstance(a, ok) or not isinstance(b, ok):
        return UNKNOWN
    if op is operator.pow:
        if not (isinstance(a, _NUMBER) and isinstance(b, _NUMBER)):
            return UNKNOWN
        if isinstance(b, int) and isinstance(a, int) and (abs(b) > 4096 or
                                                          a.bit_length() * max(b, 0) > _MAX_INT_BITS):
            return UNKNOWN
    if op is operator.lshift and isinstance(b, int) and b > _MAX_INT_BITS:
        return UNKNOWN
    if op is operator.mul:
        seq = a if isinstance(a, (str, bytes, tuple)) else b if isinstance(b, (str, bytes, tuple)) else None
        if seq is not None:
            n = b if seq is a else a
            if not isinstance(n, int) or isinstance(n, bool) or len(seq) * max(n, 0) > _MAX_STR:
                return UNKNOWN
    lists = type(a) is ListValue or type(b) is ListValue
    if lists and isinstance(a, tuple) and isinstance(b, tuple) and type(a) is not type(b):
        return UNKNOWN  # a tuple and a list: a TypeError
    try:
        result = op(a, _as_python(b) if op is operator.mod and isinstance(a, (str, bytes)) else b)
    except Exception:  # ZeroDivisionError, TypeError, OverflowError, ValueError
        return UNKNOWN
    if lists and type(result) is tuple:
        result = ListValue(result)  # ``[4] * 2``, ``L + [1]``: a list
    if isinstance(result, int) and result.bit_length() > _MAX_INT_BITS:
        return UNKNOWN
    if isinstance(result, complex):
        return UNKNOWN
    return result


class Evaluator:
    """Resolves expressions to values for one file, through its :class:`Semantic`."""

    def __init__(self, semantic: Semantic, torch_default_dtype: Optional[Callable[[], Optional[DType]]] = None):
        self.sem = semantic
        self._active: set = set()  # (id(node), seq) under evaluation, to stop cycles
        # what torch's default dtype is where the program does not change it, asked the first
        # time a tensor needs it (:func:`program_default_dtype`); None: unknown
        self._program_default = torch_default_dtype
        self._default: Any = _UNSET
        self._in_unknown_with: Optional[FrozenSet[cst.Call]] = None  # see default_dtype()

    def value(self, expr: Optional[cst.CSTNode], site: Site, _depth: int = 0):
        """The value of *expr* at *site* (a list's items as a tuple), or UNKNOWN."""
        return _plain(self._val(expr, site, _depth))

    def _val(self, expr: Optional[cst.CSTNode], site: Site, _depth: int = 0):
        """:meth:`value`, with lists as :class:`ListValue` (what the evaluator itself folds)."""
        if expr is None or _depth > 50:
            return UNKNOWN
        key = (id(expr), site.seq)
        if key in self._active:
            return UNKNOWN
        self._active.add(key)
        try:
            return self._value(expr, site, _depth + 1)
        finally:
            self._active.discard(key)

    def _fstring(self, e: cst.FormattedString, site: Site, depth: int):
        """An f-string whose every field is a known str, int, float, bool or None, written with
        no conversion, format spec or ``=`` (``f"reduce_{KIND}"``); else unknown. Text with a
        backslash is not decoded: unknown too."""
        out = []
        for part in e.parts:
            if isinstance(part, cst.FormattedStringText):
                if "\\" in part.value:
                    return UNKNOWN
                out.append(part.value.replace("{{", "{").replace("}}", "}"))
                continue
            if not isinstance(part, cst.FormattedStringExpression) or part.conversion is not None \
                    or part.format_spec is not None or part.equal is not None:
                return UNKNOWN
            v = self._value(part.expression, site, depth + 1)
            if v is None or type(v) in (str, int, float, bool):
                out.append(format(v, ""))
            else:
                return UNKNOWN
        return "".join(out)

    def _value(self, e: cst.CSTNode, site: Site, depth: int):
        if isinstance(e, (cst.Integer, cst.Float)):
            return e.evaluated_value
        if isinstance(e, cst.Imaginary):
            return UNKNOWN
        if isinstance(e, cst.FormattedString):
            return self._fstring(e, site, depth)
        if isinstance(e, (cst.SimpleString, cst.ConcatenatedString)):
            if isinstance(e, cst.ConcatenatedString) and (
                    isinstance(e.left, cst.FormattedString) or isinstance(e.right, cst.FormattedString)):
                left, right = self._value(e.left, site, depth), self._value(e.right, site, depth)
                return left + right if type(left) is str and type(right) is str else UNKNOWN
            try:
                v = literal_value(e)
            except Exception:
                return UNKNOWN
            return UNKNOWN if v is None else v
        if isinstance(e, cst.Name):
            if e.value in ("True", "False", "None"):
                cands, _ = self.sem.reaching(e.value, site)
                if not cands:
                    return {"True": True, "False": False, "None": None}[e.value]
            return self._name(e, site, depth)
        if isinstance(e, cst.Attribute):
            base = self._val(e.value, site, depth)
            if isinstance(base, Ref):
                return self._ref(f"{base.qualname}.{e.attr.value}")
            if e.attr.value in ("T", "mT"):
                return _transposed(base) if isinstance(base, Tensor) else Tensor(None, None, True)
            b = self.sem.class_attribute(e, site)
            if b is not None:
                v = self._bound_value(b, depth)
                if isinstance(v, Tensor) and self.sem.changed_in_place(e.attr.value, attribute=True):
                    return UNKNOWN  # ``self.buf.resize_(...)``: its shape, dtype or layout may change
                if isinstance(v, Tensor) and v.zero:
                    return dataclasses.replace(v, zero=False)  # any method may write its values
                return v
            return UNKNOWN
        if isinstance(e, cst.UnaryOperation):
            return fold_unary(_UNARY.get(type(e.operator), ""), self._val(e.expression, site, depth))
        if isinstance(e, cst.BinaryOperation):
            op = _BINOPS.get(type(e.operator))
            if op is None:
                return UNKNOWN
            a = self._val(e.left, site, depth)
            if a is UNKNOWN:
                return UNKNOWN
            b = self._val(e.right, site, depth)
            if b is UNKNOWN:
                return UNKNOWN
            return _safe_binop(op, a, b)
        if isinstance(e, (cst.Tuple, cst.List)):
            out = []
            for el in e.elements:
                if isinstance(el, cst.StarredElement):
                    return UNKNOWN
                v = self._val(el.value, site, depth)
                if v is UNKNOWN:
                    return UNKNOWN
                out.append(v)
            return ListValue(out) if isinstance(e, cst.List) else tuple(out)
        if isinstance(e, cst.Subscript):
            if len(e.slice) != 1 or not isinstance(e.slice[0].slice, cst.Index):
                return UNKNOWN
            found = self._element(e, site, depth)
            if found is not None:  # an element of a literal dict/list/tuple, bound once and never changed
                return self._val(found[0], found[1], depth) if found[0] is not None else UNKNOWN
            if isinstance(e.value, cst.Name):
                b = self.sem.certain_binding(e.value, site)
                if b is not None and b.kind == "assign" and not b.index and isinstance(b.value, (cst.List, cst.Dict)):
                    return UNKNOWN  # a list or dict that may change in place
            base = self._val(e.value, site, depth)
            if not isinstance(base, (tuple, str)):
                return UNKNOWN
            idx = self._val(e.slice[0].slice.value, site, depth)
            if not isinstance(idx, int) or isinstance(idx, bool):
                return UNKNOWN
            try:
                return base[idx]
            except IndexError:
                return UNKNOWN
        if isinstance(e, cst.Call):
            return self._call(e, site, depth)
        return UNKNOWN

    def _ref(self, qualname: str):
        if qualname in CONSTANTS:
            return CONSTANTS[qualname]
        run = _modules.active()
        if run is not None and run.paths:
            known, v = run.constant(qualname, _aliased)  # a constant of a module of the run
            if known:
                return v
            q = run.rewrite(qualname, _aliased)
            if q in CONSTANTS:
                return CONSTANTS[q]
        return Ref(qualname)

    def _bound_value(self, b, depth: int):
        """The value of a plain assignment binding (with tuple unpacking), else UNKNOWN."""
        if b.kind != "assign" or b.value is None:
            return UNKNOWN
        v = self._val(b.value, b.site, depth)
        for i in b.index:
            if not isinstance(v, tuple) or i >= len(v):
                return UNKNOWN
            v = v[i]
        return v

    def _container(self, expr: cst.CSTNode, site: Site, depth: int):
        """The literal dict/list/tuple *expr* certainly is, with its site and whether its
        mutable items are known too: a literal, a name bound once to one (straight-line, never
        changed in place: no item store or ``del``, no method but reading ones, not passed
        on), or an element of such a container that is itself a literal; None otherwise. A
        tuple itself cannot change, but the lists and dicts it holds can (``T[0][0] = 8``,
        ``first = T[0]; first.append(8)``): they are known only while the tuple's name is
        used as an unchanged list's would be (the third item, False otherwise)."""
        if isinstance(expr, (cst.Dict, cst.List, cst.Tuple)):
            return expr, site, True
        if isinstance(expr, cst.Name):
            b = self.sem.certain_binding(expr, site)
            if b is None or b.kind != "assign" or b.index or not isinstance(b.value, (cst.Dict, cst.List, cst.Tuple)):
                return None
            if isinstance(b.value, cst.Tuple) and not _nested_mutable(b.value, 1):
                return b.value, b.site, True  # a tuple of constants: nothing in it can change
            unchanged = self.sem.container_unchanged(expr.value, b.value, b.site.scope is self.sem.module_scope)
            if not unchanged and not isinstance(b.value, cst.Tuple):
                return None
            return b.value, b.site, unchanged
        if isinstance(expr, cst.Subscript):
            found = self._element(expr, site, depth)
            if found is not None and found[0] is not None:
                return self._container(found[0], found[1], depth)
        return None

    def _element(self, e: cst.Subscript, site: Site, depth: int):
        """For ``C[k]`` where ``C`` is a known literal container (see :meth:`_container`)
        and ``k`` a known key or index: ``(element expression, its site)``; ``(None, None)``
        when the container is known but the element is not (a missing key, a ``**``
        spread); None when the container is not known."""
        if len(e.slice) != 1 or not isinstance(e.slice[0].slice, cst.Index):
            return None
        found = self._container(e.value, site, depth)
        if found is None:
            return None
        box, box_site, items_known = found
        key = self._val(e.slice[0].slice.value, site, depth)
        if key is UNKNOWN:
            return None, None
        if isinstance(box, cst.Dict):
            hit = (None, None)
            for el in box.elements:
                if not isinstance(el, cst.DictElement):
                    return None, None  # ``**other``: unknown keys
                k = self._val(el.key, box_site, depth)
                if k is UNKNOWN or not is_constant(k):
                    return None, None
                try:
                    if k == key:  # as a dict compares keys (1, 1.0 and True are one key)
                        hit = (el.value, box_site)  # the last one wins, as in Python
                except Exception:
                    return None, None
            return hit
        if not isinstance(key, int) or isinstance(key, bool):
            return None, None
        elements = box.elements
        if any(isinstance(el, cst.StarredElement) for el in elements):
            return None, None
        try:
            item = elements[key].value
        except IndexError:
            return None, None
        if not items_known and _nested_mutable(item, 0):
            return None, None  # a list or dict in a tuple that may have changed
        return item, box_site

    def _name(self, e: cst.Name, site: Site, depth: int):
        cands, exact = self.sem.reaching(e.value, site)
        if not cands:
            return UNKNOWN
        if not exact:
            # Several imports of the same thing (try/except ImportError) still name one object.
            qs = self.sem.qualnames(e, site)
            if len(qs) == 1 and LOCAL not in qs and not self._rebound_unseen(e.value, cands):
                return self._ref(next(iter(qs)))
            return UNKNOWN
        b = cands[0]
        if b.kind == "import":
            if not b.qualname or self._rebound_unseen(e.value, cands):
                return UNKNOWN  # ``from pkg.const import WS`` then ``globals()["WS"] = 8``
            return self._ref(b.qualname)
        if b.site.scope is self.sem.module_scope and b.kind in ("assign", "aug"):
            if self.sem.namespace_changed(e.value)[0]:
                return UNKNOWN  # ``globals()["POOL"] = 1``, ``exec(...)``: rebound unseen
            # a module-level name another module of the run may set (``import a; a.POOL = 1``)
            run = _modules.active()
            if run is not None and run.files and run.touched(
                    e.value, "store", self.sem.own_stores_elsewhere):
                return UNKNOWN
        if b.kind == "assign":
            top = b.site.scope is self.sem.module_scope
            if not b.index and isinstance(b.value, (cst.List, cst.Dict)) and not self.sem.container_unchanged(
                    e.value, b.value, top, use=e, within=None if top or b.site.scope.kind != "function"
                    else b.site.scope.node):
                return UNKNOWN  # a list or dict taken whole that may change in place (``s.pop()``, ``f(s)``)
            v = self._bound_value(b, depth)
            within = None if top or b.site.scope.kind != "function" else b.site.scope.node
            if isinstance(v, Tensor) and self.sem.changed_in_place(e.value, within=within):
                return UNKNOWN  # ``buf.resize_(...)``, ``a.data = ...``: its shape, dtype or layout may change
            if isinstance(v, Tensor) and v.zero and not self.sem.container_unchanged(
                    e.value, b.value, top, use=e, within=within):
                # ``b.fill_(1)``, ``b[0] = 1``, ``init.normal_(b)``, an alias: its values may change
                return dataclasses.replace(v, zero=False)
            return v
        if b.kind == "aug" and isinstance(b.node, cst.AugAssign) and not b.index:
            op = _BINOPS.get(_AUG_TO_BIN.get(type(b.node.operator)))
            if op is None:
                return UNKNOWN
            prev = self._prev(e.value, b, depth)
            if prev is UNKNOWN:
                return UNKNOWN
            rhs = self._val(b.value, b.site, depth)
            if rhs is UNKNOWN:
                return UNKNOWN
            return _safe_binop(op, prev, rhs)
        return UNKNOWN

    def _rebound_unseen(self, name: str, cands) -> bool:
        """Whether a module-level import binding among *cands* may be rebound by name, unseen
        (``globals()["WS"] = 8``, ``globals().update(...)``, ``exec(...)``: see
        :meth:`Semantic.namespace_changed`)."""
        return any(b.kind == "import" and b.site.scope is self.sem.module_scope for b in cands) and \
            self.sem.namespace_changed(name)[0]

    def _prev(self, name: str, b, depth: int):
        """The value *name* had just before the augmented assignment *b*."""
        probe = Site(b.site.scope, b.site.seq - 1, b.site.blocks, b.site.with_depth)
        # b.site.seq is taken after the right-hand side; bindings strictly before b count.
        cands, exact = self.sem.reaching(name, probe)
        cands = [c for c in cands if c is not b]
        if not exact or len(cands) != 1:
            return UNKNOWN
        prev_b = cands[0]
        if prev_b.kind == "assign":
            return self._bound_value(prev_b, depth)
        if prev_b.kind == "aug":
            return self._name(cst.Name(name), Site(prev_b.site.scope, prev_b.site.seq + 1, prev_b.site.blocks, 0), depth)
        return UNKNOWN

    def _call(self, e: cst.Call, site: Site, depth: int):
        q = self.sem.resolve(e.func, site, CONSTRUCTORS)
        if q is not None:
            try:
                return CONSTRUCTORS[q](self, e, site)
            except RecursionError:
                raise
            except Exception:
                return UNKNOWN
        # methods on known tensors: .npu() .cuda() .to(...) keep shape and dtype
        if isinstance(e.func, cst.Attribute):
            return tensor_method(self, self.value(e.func.value, site, depth), e, site)
        return UNKNOWN

    # -- helpers for constructors -----------------------------------------------------
    def arg(self, call: cst.Call, position: Optional[int], keyword: Optional[str]):
        """The expression passed for a parameter (by position or keyword), or None."""
        positional = 0
        for a in call.args:
            if a.star:
                return None
            if a.keyword is not None:
                if keyword is not None and a.keyword.value == keyword:
                    return a.value
                continue
            if position is not None and positional == position:
                return a.value
            positional += 1
        return None

    def shape(self, expr, site: Site):
        v = self.value(expr, site)
        if isinstance(v, int) and not isinstance(v, bool):
            v = (v,)
        if isinstance(v, tuple) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in v):
            return v
        return None

    def default_dtype(self, call: cst.Call) -> Optional[DType]:
        """torch's default dtype where *call* runs (None: unknown): unknown when a file of the
        run may change it (:func:`program_default_dtype`), and for a call inside a ``with``
        (at any depth, in a function defined there too) whose context manager is not known
        to leave it alone: vLLM's ``with set_default_torch_dtype(torch.bfloat16):`` sets it
        for the tensors made inside (vllm-project/vllm@3d333269
        vllm/model_executor/model_loader/utils.py:31-37)."""
        if self._default is _UNSET:
            self._default = self._program_default() if self._program_default is not None else None
        if self._default is None:
            return None
        if self.sem.withs:
            if self._in_unknown_with is None:
                self._in_unknown_with = self._calls_in_unknown_withs()
            if call in self._in_unknown_with:
                return None
        return self._default

    def _calls_in_unknown_withs(self) -> FrozenSet[cst.Call]:
        """The calls in the bodies of the file's ``with`` statements whose context managers
        are not all known to leave torch's default dtype alone (:data:`DTYPE_NEUTRAL_MANAGERS`)."""
        calls: Set[cst.Call] = set()
        collect = _CallCollector(calls)
        for node, site in self.sem.withs:
            if all(_dtype_neutral(self.sem, item.item, site) for item in node.items):
                continue
            node.body.visit(collect)
        return frozenset(calls)

    def dtype(self, expr, site: Site, default: Optional[DType]):
        if expr is None:
            return default
        v = self.value(expr, site)
        if v is None:  # dtype=None: the default
            return default
        if isinstance(v, DType):
            return v
        if isinstance(v, str):
            return dtype_named(v)
        return None


_AUG_TO_BIN = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power, cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
    cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
}


def _transposed(t: Tensor) -> Tensor:
    shape = t.shape
    if shape is not None and len(shape) == 2:
        shape = (shape[1], shape[0])
    elif shape is not None:
        shape = None
    return Tensor(shape, t.dtype, not t.transposed, t.zero)


_DTYPE_METHODS = {"half": "float16", "float": "float32", "double": "float64", "bfloat16": "bfloat16",
                  "int": "int32", "long": "int64", "char": "int8", "byte": "uint8", "bool": "bool"}
_TRANSPOSING = ("t", "transpose", "t_", "transpose_")
_KEEPING = ("npu", "cuda", "cpu", "detach", "clone", "requires_grad_", "pin_memory", "to")


def tensor_method(ev: Evaluator, base, call: cst.Call, site: Site):
    """``x.npu()``, ``x.to(dtype)``, ``x.half()``, ``x.t()``, ``x.permute(1, 0)``, ... on a
    known tensor; a transposing method on an unknown receiver still gives a tensor known
    to be a transposed view (its receiver must be a tensor for the call to make sense)."""
    name = call.func.attr.value
    if name in ("transpose", "transpose_") and _same_dims(ev, call.args, site):
        return base if isinstance(base, Tensor) else UNKNOWN  # ``x.transpose(0, 0)``: x itself
    if not isinstance(base, Tensor):
        if name in _TRANSPOSING or (name == "permute" and _permute_swaps(ev, call, site)):
            return Tensor(None, None, True)
        return UNKNOWN
    if name == "contiguous" or any(a.keyword is not None and a.keyword.value == "memory_format"
                                   for a in call.args if name in _KEEPING):
        # .contiguous(), .clone(memory_format=...), .to(memory_format=...): a transposed view
        # becomes a (possibly) contiguous copy, so it is no longer known to be transposed
        base = dataclasses.replace(base, transposed=False)
        if name == "contiguous":
            return base
    if name in _KEEPING and name != "to":
        return base
    if name in _DTYPE_METHODS and not call.args:
        return dataclasses.replace(base, dtype=dtype_named(_DTYPE_METHODS[name]))
    if name in _TRANSPOSING:
        return _transposed(base)
    if name == "permute":
        return _transposed(base) if _permute_swaps(ev, call, site) else UNKNOWN
    if name == "to":
        dt = base.dtype
        for a in call.args:
            if a.star:
                return UNKNOWN
            kw = a.keyword.value if a.keyword is not None else None
            if kw in ("device", "non_blocking", "copy", "memory_format"):
                continue
            v = ev.value(a.value, site)
            if isinstance(v, DType):
                dt = v
            elif isinstance(v, str) and kw is None:
                continue  # a device string
            else:
                return dataclasses.replace(base, dtype=None)  # an unknown dtype or device
        return dataclasses.replace(base, dtype=dt)
    return UNKNOWN


def _permute_swaps(ev: Evaluator, call: cst.Call, site: Site) -> bool:
    dims = [ev.value(a.value, site) for a in call.args if not a.star and a.keyword is None]
    if len(dims) == 1 and isinstance(dims[0], tuple):
        dims = list(dims[0])
    return dims == [1, 0]


# -- TensorFlow tensor constructors (NPU105) ------------------------------------------
# Arguments are bound to the constructors' real signatures, so a dtype given by position is
# read where it stands (tf.random.normal's 4th, stateless_normal's 5th, ...).
_TF_FLOAT32 = dtype_named("float32")
_TF_SIGNATURES = {
    "zeros": "zeros(shape, dtype='float32', name=None, layout=None)",
    "ones": "ones(shape, dtype='float32', name=None, layout=None)",
    "random.normal": "normal(shape, mean=0.0, stddev=1.0, dtype='float32', seed=None, name=None)",
    "random_normal": "random_normal(shape, mean=0.0, stddev=1.0, dtype='float32', seed=None, name=None)",
    "random.truncated_normal": "truncated_normal(shape, mean=0.0, stddev=1.0, dtype='float32', seed=None, name=None)",
    "truncated_normal": "truncated_normal(shape, mean=0.0, stddev=1.0, dtype='float32', seed=None, name=None)",
    "random.uniform": "uniform(shape, minval=0, maxval=None, dtype='float32', seed=None, name=None)",
    "random_uniform": "random_uniform(shape, minval=0, maxval=None, dtype='float32', seed=None, name=None)",
    "random.stateless_normal": "stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype='float32', name=None, "
                               "alg='auto_select')",
    "random.stateless_uniform": "stateless_uniform(shape, seed, minval=0, maxval=None, dtype='float32', name=None, "
                                "alg='auto_select')",
    "get_variable": "get_variable(name, shape=None, dtype=None, initializer=None, *args, **kwargs)",
    "Variable": "Variable(initial_value=None, trainable=None, validate_shape=True, caching_device=None, name=None, "
                "variable_def=None, dtype=None, *args, **kwargs)",
}


def _tf_bound(ev: Evaluator, call: cst.Call, site: Site):
    from npulint.signatures import Signature, bind

    q = ev.sem.resolve(call.func, site, CONSTRUCTORS) or ""
    text = _TF_SIGNATURES.get(q[len("tensorflow."):])
    if text is None:
        return None
    sig = _SIG_CACHE.get(text)
    if sig is None:
        sig = _SIG_CACHE[text] = Signature.parse(text)
    bound = bind(sig, call)
    return bound if bound.error is None and bound.complete else None


_SIG_CACHE: Dict[str, object] = {}


def _dtype_arg(ev: Evaluator, bound, site: Site, default: Optional[DType]):
    expr = bound.args.get("dtype")
    return ev.dtype(expr, site, default) if expr is not None else default


@constructor(*[f"tensorflow.{n}" for n in _TF_SIGNATURES if n not in ("get_variable", "Variable")])
def _tf_filled(ev: Evaluator, call: cst.Call, site: Site):
    bound = _tf_bound(ev, call, site)
    if bound is None:
        return UNKNOWN
    shape = ev.shape(bound.args.get("shape"), site)
    dtype = _dtype_arg(ev, bound, site, _TF_FLOAT32)
    return Tensor(shape, dtype)


@constructor("tensorflow.get_variable")
def _tf_get_variable(ev: Evaluator, call: cst.Call, site: Site):
    bound = _tf_bound(ev, call, site)
    if bound is None:
        return UNKNOWN
    init = bound.args.get("initializer")
    init_v = ev.value(init, site) if init is not None else UNKNOWN
    shape_expr = bound.args.get("shape")
    shape = ev.shape(shape_expr, site) if shape_expr is not None else (
        init_v.shape if isinstance(init_v, Tensor) else None)
    if "dtype" in bound.args:
        dtype = ev.dtype(bound.args["dtype"], site, None)
    elif init is None:
        dtype = _TF_FLOAT32  # tf.get_variable's default dtype is DT_FLOAT
    else:
        dtype = init_v.dtype if isinstance(init_v, Tensor) else None
    return Tensor(shape, dtype)


@constructor("tensorflow.Variable")
def _tf_variable(ev: Evaluator, call: cst.Call, site: Site):
    bound = _tf_bound(ev, call, site)
    if bound is None:
        return UNKNOWN
    init_v = ev.value(bound.args.get("initial_value"), site)
    if not isinstance(init_v, Tensor):
        return UNKNOWN
    dtype = ev.dtype(bound.args["dtype"], site, None) if "dtype" in bound.args else init_v.dtype
    return Tensor(init_v.shape, dtype)


# -- PyTorch tensor constructors (NPU4xx) ---------------------------------------------
TORCH_FLOAT32 = dtype_named("float32")

# Context managers that leave torch's default dtype alone: torch's grad modes, autocast (it
# changes the dtype ops compute in, not the one factories make: pytorch/pytorch@cdec2c6b
# torch/autograd/grad_mode.py, @291bc5ca torch/amp/autocast_mode.py), devices, streams and
# profilers, and Python's own. A ``with`` of anything else may set it (vLLM's
# ``set_default_torch_dtype``), so torch's default dtype is unknown inside it.
DTYPE_NEUTRAL_MANAGERS = frozenset({
    "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled",
    "torch.autograd.no_grad", "torch.autograd.enable_grad", "torch.autograd.inference_mode",
    "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.no_grad",
    "torch.autograd.grad_mode.enable_grad", "torch.autograd.grad_mode.inference_mode",
    "torch.autograd.grad_mode.set_grad_enabled",
    "torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
    "torch.npu.amp.autocast", "torch_npu.npu.amp.autocast",
    "torch.device", "torch.cuda.device", "torch.npu.device", "torch_npu.npu.device",
    "torch.cuda.stream", "torch.npu.stream", "torch_npu.npu.stream",
    "torch.profiler.profile", "torch.profiler.record_function", "torch.autograd.profiler.profile",
    "torch.autograd.profiler.record_function", "torch_npu.profiler.profile",
    "builtins.open", "contextlib.nullcontext", "contextlib.suppress", "warnings.catch_warnings",
})
# the setters of torch's default dtype, as text (a file that names one may call it)
_DEFAULT_DTYPE_SETTERS = ("set_default_dtype", "set_default_tensor_type")


def _dtype_neutral(sem: Semantic, manager: cst.BaseExpression, site: Site) -> bool:
    """Whether the context manager *manager* (a ``with`` item) is certainly one of
    :data:`DTYPE_NEUTRAL_MANAGERS`, called."""
    if not isinstance(manager, cst.Call):
        return False
    names = sem.qualnames(manager.func, site)
    return bool(names) and names <= DTYPE_NEUTRAL_MANAGERS


class _CallCollector(cst.CSTVisitor):
    def __init__(self, calls: Set[cst.Call]):
        self.calls = calls

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.add(node)


def _sets_default_dtype(text: str) -> bool:
    return any(name in text for name in _DEFAULT_DTYPE_SETTERS)


_DEFAULT_DTYPE_KEY = "values.sets_default_dtype"
_modules.register_text_facts(_DEFAULT_DTYPE_KEY, _sets_default_dtype)


# Top-level packages whose import or calls leave torch's default dtype alone (besides the
# standard library's): torch's own setters are found by name in the linted texts; the test
# frameworks and PyYAML name no setter (PyYAML 6 searched); a module of another package may
# set it where npulint does not see.
DTYPE_NEUTRAL_PACKAGES = frozenset({"torch", "torch_npu", "torchair", "numpy", "npu_bridge", "tensorflow",
                                    "pytest", "_pytest", "expecttest", "hypothesis", "parameterized", "yaml"})


def program_default_dtype(text: str, sem: Optional[Semantic] = None) -> Optional[DType]:
    """torch's default dtype for a file whose text is *text*: float32, unless this file or
    any Python file of the run or of its programs (:mod:`npulint.program`) names one of its
    setters (the call may run before any of the file's tensors are made), or the file (*sem*)
    imports a module npulint does not see (:func:`_imports_unseen`): then None, unknown. The
    texts are scanned once per run, the first time a file asks (a cached result depends on
    the answer)."""
    if _sets_default_dtype(text):
        return None
    run = _modules.active()
    if run is not None and run.files:
        setters = run.text_facts(_DEFAULT_DTYPE_KEY)
        if setters is None or setters:  # (None: the program's files are too many to read)
            return None
    if sem is not None and _imports_unseen(sem, run):
        return None
    return TORCH_FLOAT32


def _imports_unseen(sem: Semantic, run) -> bool:
    """Whether the file imports a module whose code npulint does not read and that may set
    torch's default dtype (importing runs its top level; ``from mysetup import init; init()``):
    one of no package of :data:`DTYPE_NEUTRAL_PACKAGES`, not of the standard library, and not a
    file of the run or of its programs (whose texts :func:`program_default_dtype` reads)."""
    seen = run.program_names() if run is not None else frozenset()
    for b in sem.all_bindings():
        if b.kind != "import":
            continue
        node = b.node
        if isinstance(node, cst.ImportFrom) and node.relative:
            continue  # a module of the file's own package
        if any(type(blk) is cst.If and sem.resolve(blk.test, b.site, _TYPE_CHECKING) for blk, _ in b.site.blocks):
            continue  # under ``if TYPE_CHECKING:``, false when the code runs
        top = (b.qualname or "").split(".", 1)[0]
        if top and top not in DTYPE_NEUTRAL_PACKAGES and top not in _STDLIB and top not in seen \
                and top != "__future__":
            return True
    return False


_TYPE_CHECKING = frozenset({"typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"})

# (Python 3.9 has no list of its own: the modules scripts import most)
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) or frozenset((
    "abc", "argparse", "array", "ast", "atexit", "base64", "bisect", "builtins", "collections", "contextlib",
    "copy", "csv", "ctypes", "dataclasses", "datetime", "decimal", "enum", "errno", "faulthandler", "fractions",
    "functools", "gc", "getpass", "glob", "gzip", "hashlib", "heapq", "importlib", "inspect", "io", "itertools",
    "json", "logging", "math", "multiprocessing", "numbers", "operator", "os", "pathlib", "pickle", "platform",
    "pprint", "queue", "random", "re", "shlex", "shutil", "signal", "site", "socket", "stat", "statistics",
    "string", "struct", "subprocess", "sys", "sysconfig", "tarfile", "tempfile", "textwrap", "threading", "time",
    "traceback", "types", "typing", "unittest", "uuid", "warnings", "weakref", "zipfile"))


def _torch_dtype(ev: Evaluator, call: cst.Call, site: Site, dtype_expr) -> Optional[DType]:
    """The dtype a torch factory makes: its ``dtype=``, or torch's default where it runs."""
    dtype = ev.dtype(dtype_expr, site, _UNSET)
    return ev.default_dtype(call) if dtype is _UNSET else dtype


@constructor("torch.randn", "torch.rand", "torch.ones", "torch.empty")
def _torch_filled(ev: Evaluator, call: cst.Call, site: Site):
    sizes = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        shape = None
    elif len(sizes) == 1:
        shape = ev.shape(sizes[0].value, site)  # torch.randn([m, k]) or torch.randn(n)
    elif sizes:
        shape = _dims(ev, sizes, site)  # torch.randn(m, k)
    else:
        size_kw = ev.arg(call, None, "size")
        shape = ev.shape(size_kw, site) if size_kw is not None else None
    return Tensor(shape, _torch_dtype(ev, call, site, ev.arg(call, None, "dtype")))


@constructor("torch.zeros")
def _torch_zeros(ev: Evaluator, call: cst.Call, site: Site):
    t = _torch_filled(ev, call, site)
    return t if ev.arg(call, None, "out") is not None else dataclasses.replace(t, zero=True)


def _dims(ev: Evaluator, args, site: Site):
    out = []
    for a in args:
        v = ev.value(a.value, site)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return None
        out.append(v)
    return tuple(out)


@constructor("torch.full")
def _torch_full(ev: Evaluator, call: cst.Call, site: Site):
    shape = ev.shape(ev.arg(call, 0, "size"), site)
    dtype_expr = ev.arg(call, None, "dtype")
    fill = ev.value(ev.arg(call, 1, "fill_value"), site)
    if dtype_expr is not None:
        dtype = ev.dtype(dtype_expr, site, None)
    else:  # inferred from the fill value
        dtype = (dtype_named("bool") if isinstance(fill, bool) else dtype_named("int64") if isinstance(fill, int)
                 else _torch_dtype(ev, call, site, None) if isinstance(fill, float) else None)
    zero = isinstance(fill, (int, float)) and fill == 0 and ev.arg(call, None, "out") is None
    return Tensor(shape, dtype, zero=zero)


@constructor("torch.t", "torch.transpose")
def _torch_transpose(ev: Evaluator, call: cst.Call, site: Site):
    base = ev.value(ev.arg(call, 0, "input"), site)
    if _same_dims(ev, call.args[1:], site):
        return base if isinstance(base, Tensor) else UNKNOWN  # ``torch.transpose(x, 1, 1)``: x itself
    return _transposed(base) if isinstance(base, Tensor) else Tensor(None, None, True)


def _same_dims(ev: Evaluator, args, site: Site) -> bool:
    """Whether *args* are two positional dims known to be one int (``transpose(0, 0)``, a
    no-op); a keyword, a star or an unknown dim: not known."""
    if len(args) != 2 or any(a.keyword is not None or a.star for a in args):
        return False
    a, b = (ev.value(x.value, site) for x in args)
    return isinstance(a, int) and not isinstance(a, bool) and a == b
