#!/usr/bin/env python3
"""How much of the files a tree parses could be left out of LibCST's parse, by a criterion a
single file can decide soundly: function bodies (at any depth) that no rule can need.

    python bench/partial_parse.py /path/to/tree [/path/to/tree ...]

A body (the lines of a ``def``'s statements, on lines of their own) counts as blankable when
CPython's tree of it shows none of what an analysis reads from a body that holds no API call:
no prefilter token in its text, no ``global``/``nonlocal``, no store to an attribute or an item,
and no name from outside the body other than a builtin or a module-level import of a module
that is neither one of the run's own nor an API package (torch_npu, torchair, mindspeed, ...).
With ``strict`` as well no call through a parameter (``self.helper()``: a method of the class
may create or record an event). Everything else keeps its LibCST parse: a closure over
module-level names would have to be worked out across files (see docs/benchmarks.md, "Tried
and dropped: parsing only the statements the rules can see"). Prints, per tree, the share of
the selected files' lines such bodies hold and what working that out costs in Python.
"""

from __future__ import annotations

import ast
import builtins
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from npulint import registry  # noqa: E402
from npulint.source import PYTHON  # noqa: E402

API_PACKAGES = {"torch_npu", "torchair", "mindspeed", "npu_bridge", "megatron", "mindspeed_llm", "mindspeed_mm"}
BUILTINS = set(dir(builtins))


def _run_modules(root):
    names = set()
    for _, dirs, files in os.walk(root):
        names.update(f[:-3] for f in files if f.endswith(".py"))
        names.update(dirs)
    return names


def _module_kinds(tree, own):
    """name -> "ext" when the module binds it only by importing a module outside the run and
    the API packages, else "other"."""
    kinds = {}

    def mark(name, kind):
        kinds[name] = "other" if kinds.get(name, kind) != kind else kind

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                mark(a.asname or top, "ext" if top not in own and top not in API_PACKAGES else "other")
        elif isinstance(node, ast.ImportFrom):
            top = (node.module or "").split(".")[0]
            ext = node.level == 0 and top not in own and top not in API_PACKAGES
            for a in node.names:
                mark(a.asname or a.name, "ext" if ext else "other")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            mark(node.name, "other")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            mark(node.id, "other")
        elif isinstance(node, ast.arg):
            mark(node.arg, "other")
    return kinds


def _locals(fn):
    params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    names = set(params)
    for node in ast.walk(ast.Module(body=fn.body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names, params


def _root(expr):
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr


def _blankable(fn, lines, kinds, tokens, strict):
    first, last = fn.body[0], fn.body[-1]
    if first.lineno == fn.lineno or lines[first.lineno - 1][:first.col_offset].strip():
        return False
    tail = lines[last.end_lineno - 1][last.end_col_offset:].strip()
    if tail and not tail.startswith("#"):
        return False
    if any(t in "".join(lines[first.lineno - 1:last.end_lineno]) for t in tokens):
        return False
    local, params = _locals(fn)
    for node in ast.walk(ast.Module(body=fn.body, type_ignores=[])):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return False
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            return False
        if isinstance(node, ast.Name) and node.id not in local and not (
                node.id in BUILTINS and node.id not in kinds) and kinds.get(node.id) != "ext":
            return False
        if strict and isinstance(node, ast.Call):
            r = _root(node.func)
            if isinstance(r, ast.Name) and r.id in params:
                return False
    return True


def measure(root, classes, tokens, strict):
    own = _run_modules(root)
    files = total = blank = 0
    start = time.process_time()
    for folder, _, names in os.walk(root):
        for name in names:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            if not any(c.wants(text, path, {}) for c in classes):
                continue
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError):
                continue
            files += 1
            lines = text.splitlines(True)
            total += len(lines)
            kinds = _module_kinds(tree, own)
            stack = [tree]
            while stack:
                node = stack.pop()
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and _blankable(
                            child, lines, kinds, tokens, strict):
                        blank += child.body[-1].end_lineno - child.body[0].lineno + 1
                    else:
                        stack.append(child)
    return files, total, blank, time.process_time() - start


def main(argv=None) -> int:
    roots = (argv if argv is not None else sys.argv[1:])
    if not roots:
        print(__doc__)
        return 2
    classes = [c for c in registry.load()[1] if c.language == PYTHON]
    tokens = sorted({t for c in classes for g in c.tokens for t in g})
    print("| tree | files | lines | blankable | blankable, strict | cost of deciding (CPU s) |")
    print("|---|---:|---:|---:|---:|---:|")
    for root in roots:
        f, t, b, s = measure(root, classes, tokens, False)
        _, _, bs, _ = measure(root, classes, tokens, True)
        print(f"| {os.path.basename(root.rstrip('/'))} | {f} | {t:,} | {100 * b / max(t, 1):.0f}% | "
              f"{100 * bs / max(t, 1):.0f}% | {s:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
