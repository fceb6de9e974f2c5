#!/usr/bin/env python3
"""Compare npulint's own name resolver with LibCST's metadata providers on a corpus.

    python bench/resolver_compare.py /path/to/corpus [--json out.json] [--show 40]

Every .py file is parsed once (``libcst.parse_module``) and then, on that same tree:

* (a) parse only;
* (b) our :class:`npulint.semantic.Walker` with no checkers (the cost every parsed file pays);
* (b+) the Walker with a checker that records every call and its ``sem.site()``, then
  ``Semantic.qualnames(call.func, site)`` for every call at the end of the file;
* (c) ``MetadataWrapper(module, unsafe_skip_copy=True).resolve_many([ScopeProvider,
  QualifiedNameProvider])`` and the qualified names of every ``call.func`` (LibCST computes
  them lazily, so they are forced inside the timed region).

Times are CPU seconds (``time.process_time``). Agreement is reported for call sites whose
qualified name ends with one of ``--targets`` (a dotted suffix; "ours, unique": our only
candidate matches, which is what ``Semantic.resolve``, used by the rules, accepts), and
more broadly for the set of import-derived names of every call (ours without ``<local>`` and
``builtins.``; LibCST's IMPORT names, not relative ones, rewritten through npulint's
``canonical``).

A file that takes longer than ``--budget`` seconds is interrupted, listed with the stage
it was in, and left out of the totals (our resolver can be exponential: see
docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import importlib.metadata
import json
import os
import statistics
import sys
import threading
import time

import libcst as cst
from libcst._metadata_dependent import LazyValue
from libcst.metadata import (MetadataWrapper, PositionProvider, QualifiedNameProvider, QualifiedNameSource,
                             ScopeProvider)

from npulint.semantic import LOCAL, Semantic, Walker, canonical, dotted

TARGETS = ("npu_weight_prefetch_scope", "hccl_ops.allgather", "torchair.get_npu_backend",
           "torchair.ops.npu_tagged_event_wait", "torch_npu.npu_mm_reduce_scatter_base", "torch.compile",
           "torch.distributed.all_reduce")
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", "node_modules"}


class CallRecorder:
    """A checker for the Walker: remembers every call and where it stands."""

    def __init__(self, sem: Semantic):
        self.sem = sem
        self.calls = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.sem.site()))


def _fail(checker, exc, node):
    raise exc


def ours(module):
    """{call: frozenset of qualified names} from our resolver."""
    sem = Semantic(module)
    rec = CallRecorder(sem)
    module.visit(Walker(sem, [rec], _fail))
    return {call: sem.qualnames(call.func, site) for call, site in rec.calls}


def libcst_names(module):
    """(wrapper, {call: frozenset of QualifiedName}) from LibCST's providers."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    qn = wrapper.resolve_many([ScopeProvider, QualifiedNameProvider])[QualifiedNameProvider]
    out = {}
    for node in _calls(module):
        v = qn.get(node.func, frozenset())
        out[node] = frozenset(v() if isinstance(v, LazyValue) else v)
    return wrapper, out


def _calls(module):
    found = []

    class V(cst.CSTVisitor):
        def visit_Call(self, node):
            found.append(node)

    module.visit(V())
    return found


def matches(names, suffix: str) -> bool:
    return any(q == suffix or q.endswith("." + suffix) for q in names)


def ext_ours(names):
    return frozenset(q for q in names if q != LOCAL and not q.startswith("builtins."))


def ext_libcst(names):
    return frozenset(canonical(q.name) for q in names
                     if q.source is QualifiedNameSource.IMPORT and not q.name.startswith("."))


def python_files(root):
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(names):
            if name.endswith(".py"):
                yield os.path.join(folder, name)


class OverBudget(BaseException):
    """Raised in the worker thread when one file takes longer than ``--budget`` seconds (a
    BaseException, so that no ``except Exception`` on the way swallows it)."""


class Watchdog(threading.Thread):
    """Interrupts the worker thread (``PyThreadState_SetAsyncExc``) when one file runs past
    the budget, so that one pathological file cannot stall the whole comparison."""

    def __init__(self, worker_ident: int, budget: float):
        super().__init__(daemon=True)
        self.worker, self.budget, self.since = worker_ident, budget, None
        self.lock = threading.Lock()

    def arm(self):
        with self.lock:
            self.since = time.monotonic()

    def disarm(self):
        with self.lock:
            self.since = None

    def run(self):
        while True:
            time.sleep(0.1)
            with self.lock:
                if self.since is not None and time.monotonic() - self.since > self.budget:
                    self.since = None
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.worker),
                                                               ctypes.py_object(OverBudget))


def compare(root, targets, limit=None, budget=60.0):
    t = collections.Counter()  # CPU seconds per phase
    per_file = collections.defaultdict(list)
    files = lines = 0
    errors = []
    target_rows = {s: collections.Counter() for s in targets}
    diffs = []  # disagreeing target call sites
    ext = collections.Counter()
    ext_examples = []
    dog = Watchdog(threading.get_ident(), budget)
    dog.start()
    stage = [""]

    def measure(text):
        """CPU seconds of each stage, our names and LibCST's names of every call."""
        stage[0] = "parse"
        c0 = time.process_time()
        module = cst.parse_module(text)
        c1 = time.process_time()
        stage[0] = "npulint walk"
        module.visit(Walker(Semantic(module), [], _fail))
        c2 = time.process_time()
        stage[0] = "npulint qualnames"
        mine = ours(module)
        c3 = time.process_time()
        stage[0] = "libcst providers"
        wrapper, theirs = libcst_names(module)
        c4 = time.process_time()
        return module, wrapper, mine, theirs, {"a": c1 - c0, "b": c2 - c0, "b+": c1 - c0 + c3 - c2,
                                               "c": c1 - c0 + c4 - c3}

    for path in python_files(root):
        if limit is not None and files >= limit:
            break
        rel = os.path.relpath(path, root)
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            errors.append((rel, "read", repr(exc)))
            continue
        try:
            dog.arm()
            module, wrapper, mine, theirs, cpu = measure(text)
            dog.disarm()
        except OverBudget:
            errors.append((rel, stage[0], f"over the {budget:g} s budget (interrupted)"))
            continue
        except Exception as exc:  # ParserSyntaxError, RecursionError, a resolver bug
            dog.disarm()
            msg = str(exc).splitlines()[0] if str(exc) else ""
            errors.append((rel, stage[0], f"{type(exc).__name__}: {msg}"))
            continue
        files += 1
        lines += text.count("\n")
        for phase, dt in cpu.items():
            t[phase] += dt
            per_file[phase].append(dt)

        pos = None
        for call, qs in mine.items():
            lq = theirs.get(call, frozenset())
            lnames = {q.name for q in lq}
            for s in targets:
                a, b = matches(qs, s), matches(lnames, s)
                row = target_rows[s]
                row["ours"] += a
                # what Semantic.resolve accepts: one candidate, no <local>/None alternatives
                row["ours unique"] += a and len(qs) == 1
                row["libcst"] += b
                row["both"] += a and b
                if a != b:
                    pos = pos or wrapper.resolve(PositionProvider)
                    diffs.append({"target": s, "path": rel, "line": pos[call].start.line,
                                  "code": " ".join(module.code_for_node(call.func).split())[:80],
                                  "ours": sorted(qs), "libcst": sorted(f"{q.name} ({q.source.name})" for q in lq)})
            eo, el = ext_ours(qs), ext_libcst(lq)
            if not eo and not el:
                ext["neither"] += 1
            elif eo == el:
                ext["equal"] += 1
            else:
                kind = ("only ours" if not el else "only libcst" if not eo else
                        "ours subset" if eo < el else "libcst subset" if el < eo else "different")
                if dotted(call.func) is None:  # e.g. f().g: LibCST names it as if it were f.g
                    kind += ", func not a name chain"
                ext[kind] += 1
                if len(ext_examples) < 5000:
                    pos = pos or wrapper.resolve(PositionProvider)
                    ext_examples.append({"kind": kind, "path": rel, "line": pos[call].start.line,
                                         "code": " ".join(module.code_for_node(call.func).split())[:80],
                                         "ours": sorted(qs), "libcst": sorted(el)})
    return {"files": files, "lines": lines, "cpu": dict(t), "per_file": per_file, "errors": errors,
            "targets": {s: dict(r) for s, r in target_rows.items()}, "diffs": diffs,
            "external": dict(ext), "external_examples": ext_examples}


def print_report(res, show: int) -> None:
    files, lines = res["files"], res["lines"]
    print(f"files parsed: {files}, lines: {lines}, skipped/errors: {len(res['errors'])}")
    for rel, stage, msg in res["errors"]:
        print(f"  {stage:8} {rel}: {msg}")
    print("\n| mode | CPU s | ms/file (mean) | ms/file (median) | ms per 1k lines | vs parse |")
    print("|---|---:|---:|---:|---:|---:|")
    names = {"a": "(a) parse", "b": "(b) parse + Walker (no checkers)",
             "b+": "(b+) parse + Walker + qualnames of every call",
             "c": "(c) parse + ScopeProvider + QualifiedNameProvider (every call)"}
    base = res["cpu"].get("a", 0) or 1
    for k in ("a", "b", "b+", "c"):
        s = res["cpu"].get(k, 0.0)
        pf = res["per_file"].get(k) or [0]
        print(f"| {names[k]} | {s:.2f} | {1000 * s / max(files, 1):.2f} | {1000 * statistics.median(pf):.2f} | "
              f"{1000 * s / max(lines, 1) * 1000:.2f} | {s / base:.2f}x |")
    a = res["cpu"].get("a", 0.0)
    print(f"\nresolver cost beyond parsing: ours (b+) {res['cpu'].get('b+', 0) - a:.2f} s, "
          f"libcst (c) {res['cpu'].get('c', 0) - a:.2f} s")
    print("\n| target suffix | ours | ours, unique | libcst | both | only ours | only libcst |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for s, r in res["targets"].items():
        o, lc, b = r.get("ours", 0), r.get("libcst", 0), r.get("both", 0)
        print(f"| `{s}` | {o} | {r.get('ours unique', 0)} | {lc} | {b} | {o - b} | {lc - b} |")
    print(f"\ndisagreeing target call sites: {len(res['diffs'])}")
    for d in res["diffs"][:show]:
        print(f"  {d['path']}:{d['line']}: {d['code']}  [{d['target']}]" + _both(d))
    ext = res["external"]
    total = sum(ext.values())
    print(f"\nevery call: import-derived names ({total} calls): " +
          ", ".join(f"{k} {v}" for k, v in sorted(ext.items(), key=lambda kv: -kv[1])))
    kinds = collections.Counter(e["kind"] for e in res["external_examples"])
    shown = collections.Counter()
    for e in res["external_examples"]:
        if shown[e["kind"]] >= max(show // max(len(kinds), 1), 3):
            continue
        shown[e["kind"]] += 1
        print(f"  [{e['kind']}] {e['path']}:{e['line']}: {e['code']}" + _both(e))


def _both(d) -> str:
    return f"\n      ours={d['ours']}\n      libcst={d['libcst']}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma-separated qualified-name suffixes")
    ap.add_argument("--limit", type=int, help="only the first N files")
    ap.add_argument("--show", type=int, default=40, help="how many disagreements to print")
    ap.add_argument("--json", help="write the full result (every disagreement) here")
    ap.add_argument("--budget", type=float, default=60.0,
                    help="seconds one file may take before it is interrupted and reported (default 60)")
    args = ap.parse_args(argv)
    targets = tuple(s.strip() for s in args.targets.split(",") if s.strip())

    box = {}

    def work():  # LibCST recurses once per nesting level: a big stack, as npulint does
        box["res"] = compare(args.corpus, targets, args.limit, args.budget)

    threading.stack_size(512 * 1024 * 1024)
    sys.setrecursionlimit(12000)
    th = threading.Thread(target=work)
    th.start()
    th.join()
    if "res" not in box:
        return 2
    res = box["res"]
    print(f"corpus: {args.corpus}  (libcst {importlib.metadata.version('libcst')}, python {sys.version.split()[0]})")
    print_report(res, args.show)
    if args.json:
        out = dict(res)
        out.pop("per_file")
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
