#!/usr/bin/env python3
"""CPU time of the engine's per-file steps on the files of a tree that the prefilter parses.

    python bench/engine_time.py /path/to/tree [--rounds 3]

For every ``.py`` file that the prefilter sends to a parse (every rule selected), times in
one process, best of ``--rounds``: CPython's ``compile`` (the syntax check), LibCST's parse,
and the analysis (every active checker's hooks and ``finish``, as ``analyse.run_checkers`` runs
them: the analyses' hooks in the traversal, the rules' replayed after it) driven two ways over the same
tree: npulint's own walker (``Walker.walk``) and LibCST's traversal calling the same walker
(``module.visit(walker)``: LibCST's ``on_visit``/``on_leave``/``on_visit_attribute``
protocol, which its batched visitors use too). A LibCST batched visit
(``libcst._batched_visitor.visit_batched``) of an empty visitor with the checkers' hook names
is timed as well: the cost of LibCST's traversal alone, before any hook does work.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from npulint import registry  # noqa: E402
from npulint.analyse import _cpython_check, _parse, _prefilter  # noqa: E402
from npulint.inputs import DEFAULT_MAX_FILE_SIZE  # noqa: E402
from npulint.config import Settings  # noqa: E402
from npulint.source import PYTHON  # noqa: E402


def _libcst_walk(walker, module) -> None:
    """The walker driven by LibCST's own traversal instead of its ``walk``."""
    module.visit(walker)
    walker.sem.complete = True


def _files(root: str):
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                if os.path.getsize(path) <= DEFAULT_MAX_FILE_SIZE:
                    yield path


def _best(fn, rounds: int) -> float:
    """The least CPU time of *rounds* calls of *fn*, with the cyclic collector off, as the engine
    runs a file (``workers``: no collection while a file is analysed)."""
    best = None
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        t = time.process_time()
        try:
            fn()
        finally:
            dt = time.process_time() - t
            gc.enable()
        best = dt if best is None or dt < best else best
    return best or 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)

    from libcst._batched_visitor import BatchableCSTVisitor, visit_batched

    from npulint.analyse import file_checkers, run_checkers
    from npulint.checker import FileContext
    from npulint.lintrule import with_analyses

    rules, checkers = registry.load()
    enabled = {r.code for r in rules}
    settings = Settings(root=args.tree)
    parsed = []
    for path in _files(args.tree):
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        _, active = _prefilter(path, path, PYTHON, text, checkers, enabled)
        if active and _cpython_check(text) is None:
            parsed.append((path, text, active))
    lines = sum(t.count("\n") for _, t, _ in parsed)
    print(f"{args.tree}: {len(parsed)} files parsed ({lines} lines); CPU seconds, best of {args.rounds}")

    def compile_all():
        for _, text, _ in parsed:
            _cpython_check(text, [])

    modules = []

    def parse_all():
        modules.clear()
        for _, text, _ in parsed:
            modules.append(_parse(text, python_accepts=True))

    def analyse(own_walk: bool):
        def run():
            for (path, text, active), module in zip(parsed, modules):
                top = []
                _cpython_check(text, top)
                ctx = FileContext(path, path, text, module, settings, enabled, top_lines=top)
                cs, live = file_checkers(ctx, active)  # as the pipeline makes and runs them
                run_checkers(ctx, module, cs, live, lambda *a: None, walk=None if own_walk else _libcst_walk)
        return run

    hook_names = sorted({a for c in with_analyses(checkers) for a in dir(c) if a.startswith(("visit_", "leave_"))})

    class Empty(BatchableCSTVisitor):
        pass

    for name in hook_names:
        setattr(Empty, name, lambda self, node: None)

    def batched():
        for module in modules:
            visit_batched(module, [Empty()])

    t_compile = _best(compile_all, args.rounds)
    t_parse = _best(parse_all, args.rounds)
    t_own = _best(analyse(True), args.rounds) - t_compile  # (each file's statement lines compiled again)
    t_libcst = _best(analyse(False), args.rounds) - t_compile
    t_batched = _best(batched, args.rounds)
    print(f"  CPython compile (syntax check):           {t_compile:7.2f}")
    print(f"  LibCST parse:                             {t_parse:7.2f}")
    print(f"  analysis, npulint's walker (Walker.walk): {t_own:7.2f}")
    print(f"  analysis, LibCST's traversal (visit):     {t_libcst:7.2f}")
    print(f"  LibCST visit_batched, empty hooks:        {t_batched:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
