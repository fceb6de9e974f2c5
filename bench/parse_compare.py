#!/usr/bin/env python3
"""What the cold run's floor would be on CPython's ``ast`` instead of LibCST.

For the Python files of a corpus that npulint's prefilter would parse (every enabled checker's
``wants``, files up to the size limit), times on one core, with the cyclic collector off as
in npulint's analysis:

* LibCST: ``pipeline._parse`` (what a run does) and npulint's ``Walker`` with no checkers;
* CPython: ``ast.parse`` and an explicit-stack walk over every node with a per-type dispatch
  (the shape of npulint's Walker).

Neither side runs the rules: this measures the engine's fixed cost per parsed file, the part
an ``ast``-based engine would change. Usage::

    python bench/parse_compare.py /tmp/corpus/torchair [--rounds 2]
"""

from __future__ import annotations

import argparse
import ast
import gc
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from npulint import pipeline, registry  # noqa: E402
from npulint.source import PYTHON  # noqa: E402

SIZE_LIMIT = 256 * 1024
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", "node_modules"}


def selected(corpus: str):
    _, checkers = registry.load()
    python = [c for c in checkers if c.language == PYTHON]
    out = []
    for folder, dirs, names in os.walk(corpus):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if len(data) > SIZE_LIMIT:
                continue
            present: dict = {}
            if any(c.wants(text, path, present) for c in python):
                out.append(text)
    return out


def walk_ast(tree) -> int:
    stack = [tree]
    n = 0
    imports = {}
    while stack:
        node = stack.pop()
        n += 1
        if type(node) is ast.Import:
            for a in node.names:
                imports[a.asname or a.name.split(".")[0]] = a.name
        elif type(node) is ast.ImportFrom:
            for a in node.names:
                imports[a.asname or a.name] = f"{node.module}.{a.name}"
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(x for x in value if isinstance(x, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return n


def time_ast(texts):
    t0 = time.process_time()
    trees = [ast.parse(t) for t in texts]
    t1 = time.process_time()
    nodes = sum(walk_ast(tree) for tree in trees)
    return t1 - t0, time.process_time() - t1, nodes


def time_libcst(texts):
    from npulint.semantic import Semantic, Walker

    t0 = time.process_time()
    modules = [pipeline._parse(t, True) for t in texts]
    t1 = time.process_time()
    for module in modules:
        Walker(Semantic(module), [], None).walk(module)
    return t1 - t0, time.process_time() - t1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    texts = selected(args.corpus)
    lines = sum(t.count("\n") for t in texts)
    print(f"{args.corpus}: {len(texts)} files the prefilter parses, {lines} lines")

    def measure():
        gc.disable()
        try:
            for r in range(args.rounds):
                ap_, aw, nodes = time_ast(texts)
                cp, cw = time_libcst(texts)
                print(f"round {r + 1}: ast parse {ap_:.2f} s, walk {aw:.2f} s ({nodes} nodes) | "
                      f"LibCST parse {cp:.2f} s, walk {cw:.2f} s")
        finally:
            gc.enable()

    pipeline._in_big_stack(measure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
