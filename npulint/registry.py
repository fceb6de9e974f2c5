"""Loads the rules (``rules/`` in a checkout, installed as ``npulint.rules``)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Dict, FrozenSet, List, Tuple

from npulint.model import Rule


def _load_rules_package():
    try:
        return importlib.import_module("npulint.rules")
    except ModuleNotFoundError as exc:
        if exc.name != "npulint.rules":
            raise
    # A source checkout run without installing: rules/ sits beside npulint/.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    init = os.path.join(here, "rules", "__init__.py")
    spec = importlib.util.spec_from_file_location("npulint.rules", init,
                                                  submodule_search_locations=[os.path.dirname(init)])
    if spec is None or spec.loader is None:  # pragma: no cover
        raise ImportError("npulint: cannot find the rules package")
    module = importlib.util.module_from_spec(spec)
    sys.modules["npulint.rules"] = module
    spec.loader.exec_module(module)
    return module


_CACHE: Dict[str, object] = {}


def _import_rule_modules(pkg) -> None:
    """Import every module of the rules package: each defines its rule classes."""
    import pkgutil

    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{info.name}")


def load() -> Tuple[List[Rule], List[type]]:
    """All rules (sorted by code) and the classes the engine runs over a file: the rule classes
    (discovered: every :class:`npulint.rulebase.RuleBase` subclass with a code in the rules
    package) that are checkers (:class:`npulint.lintrule.LintRule`), with the shared analyses
    they use. An analysis is listed so that the prefilter knows it: one that ``provides`` a
    fact topic runs whenever a consumer of the topic is on, even with none of its own rules on."""
    if "rules" not in _CACHE:
        from npulint.lintrule import LintRule, with_analyses
        from npulint.rulebase import discovered

        pkg = _load_rules_package()
        _import_rule_modules(pkg)
        classes = discovered()
        rules = sorted((c.meta() for c in classes), key=lambda r: r.code)
        codes = [r.code for r in rules]
        twice = sorted({c for c in codes if codes.count(c) > 1})
        if twice:
            raise RuntimeError(f"duplicate rule codes: {', '.join(twice)}")
        _CACHE["rules"] = rules
        _CACHE["checkers"] = with_analyses([c for c in classes if issubclass(c, LintRule)])
    return _CACHE["rules"], _CACHE["checkers"]  # type: ignore[return-value]


def engine():
    """``rules/engine.py``, the module of the rules the engine reports itself (their classes
    make its findings), imported alone: it needs neither LibCST nor the other rule modules, so
    that a run answered from the cache can report NPU003 with it."""
    if "engine" not in _CACHE:
        _CACHE["engine"] = importlib.import_module(f"{_load_rules_package().__name__}.engine")
    return _CACHE["engine"]


def engine_codes() -> FrozenSet[str]:
    """The codes of the rules the engine reports itself: the rule classes of ``rules/engine.py``."""
    from npulint.rulebase import RuleBase

    return frozenset(c.CODE for c in vars(engine()).values()
                     if isinstance(c, type) and issubclass(c, RuleBase) and c.CODE)
