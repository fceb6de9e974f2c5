"""Loads the rules (``rules/`` in a checkout, installed as ``npulint.rules``)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Dict, List, Tuple

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


def load() -> Tuple[List[Rule], List[type]]:
    """All rules (sorted by code) and all checker classes."""
    if "rules" not in _CACHE:
        pkg = _load_rules_package()
        rules = sorted(pkg.ALL_RULES, key=lambda r: r.code)
        codes = [r.code for r in rules]
        if len(set(codes)) != len(codes):  # pragma: no cover - a packaging bug
            raise RuntimeError("duplicate rule codes")
        _CACHE["rules"] = rules
        _CACHE["checkers"] = list(pkg.CHECKERS)
    return _CACHE["rules"], _CACHE["checkers"]  # type: ignore[return-value]
