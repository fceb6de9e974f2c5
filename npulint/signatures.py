"""Binding a call to a catalogued signature, as Python would (NPU010 and every rule that
reads an argument by name, with defaults applied)."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, Optional, Tuple

import libcst as cst

REQUIRED = object()


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "posonly" | "pos" | "kwonly"
    default: object = REQUIRED  # a Python literal, or REQUIRED


@dataclasses.dataclass(frozen=True)
class Signature:
    name: str
    params: Tuple[Param, ...]
    varargs: bool = False
    varkw: bool = False
    no_keywords: bool = False  # e.g. ``adapt_mem_func_wrapper(fc_class, *args)``

    @staticmethod
    def parse(text: str) -> "Signature":
        """``"allgather(tensor, rank_size, group='hccl_world_group')"`` -> Signature."""
        fn = ast.parse(f"def {text}: pass").body[0]
        assert isinstance(fn, ast.FunctionDef)
        a = fn.args
        params = []
        positional = list(a.posonlyargs) + list(a.args)
        defaults = [REQUIRED] * (len(positional) - len(a.defaults)) + [ast.literal_eval(d) for d in a.defaults]
        for i, p in enumerate(positional):
            params.append(Param(p.arg, "posonly" if i < len(a.posonlyargs) else "pos", defaults[i]))
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            params.append(Param(p.arg, "kwonly", REQUIRED if d is None else ast.literal_eval(d)))
        return Signature(fn.name, tuple(params), a.vararg is not None, a.kwarg is not None)

    def param(self, name: str) -> Optional[Param]:
        for p in self.params:
            if p.name == name:
                return p
        return None


@dataclasses.dataclass
class Bound:
    """The result of binding: argument expressions by parameter name; ``error`` says why
    the call does not bind (None if it does); ``complete`` is False when a ``*``/``**``
    spread hides some arguments, and then parameters not bound explicitly are unknown."""

    sig: Signature
    args: Dict[str, cst.BaseExpression]
    error: Optional[str] = None
    complete: bool = True

    def is_default(self, name: str) -> bool:
        """True if *name* certainly takes its default."""
        return self.complete and name not in self.args


def bind(sig: Signature, call: cst.Call) -> Bound:
    args: Dict[str, cst.BaseExpression] = {}
    positional_params = [p for p in sig.params if p.kind in ("posonly", "pos")]
    spread = any(a.star for a in call.args)
    result = Bound(sig, args, complete=not spread)
    pos_i = 0
    seen_star = False
    for a in call.args:
        if a.star == "*":
            seen_star = True
            continue
        if a.star == "**":
            continue
        if a.keyword is None:
            if seen_star:
                continue  # position unknown after a *spread
            if pos_i < len(positional_params):
                args[positional_params[pos_i].name] = a.value
            elif not sig.varargs and result.error is None:
                kwonly = [p.name for p in sig.params if p.kind == "kwonly"]
                n_pos = len(positional_params)
                if kwonly:
                    shown = ", ".join(kwonly[:4]) + (", ..." if len(kwonly) > 4 else "")
                    result.error = (f"takes {n_pos} positional argument{'s' if n_pos != 1 else ''}; "
                                    f"{shown} {'is' if len(kwonly) == 1 else 'are'} keyword-only")
                else:
                    result.error = f"takes at most {n_pos} positional argument{'s' if n_pos != 1 else ''}"
            pos_i += 1
            continue
        name = a.keyword.value
        p = sig.param(name)
        if sig.no_keywords and result.error is None:
            result.error = f"takes no keyword arguments (got {name}=)"
            continue
        if p is None or p.kind == "posonly":
            if not sig.varkw and result.error is None:
                result.error = f"got an unexpected keyword argument '{name}'"
            continue
        if name in args and result.error is None:
            result.error = f"got multiple values for argument '{name}'"
        args[name] = a.value
    if result.error is None and not spread:
        missing = [p.name for p in sig.params if p.default is REQUIRED and p.name not in args]
        if missing:
            result.error = "missing required argument" + ("s" if len(missing) > 1 else "") + " " + ", ".join(
                f"'{m}'" for m in missing)
    if spread and result.error is not None and result.error.startswith(("takes", "missing")):
        result.error = None  # cannot be decided with a spread
    return result
