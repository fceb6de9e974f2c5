#!/usr/bin/env python3
"""Benchmark npulint against ruff, flake8 and Fixit on a folder of Python files.

    python bench/bench.py /path/to/corpus --runs 3
    python bench/bench.py --synthetic 2000          # a generated corpus, nothing to fetch
    python bench/bench.py --synthetic 11500 --make-only /tmp/synth2m   # ~2M lines, written and kept

npulint runs cold (an empty cache folder before every run), warm (the cache filled by the
previous run, nothing changed) and cold with ``--jobs 1`` (the speed-up of the automatic
worker processes); ruff runs cold (``--no-cache``) and warm (its cache filled), both with
``--select ALL --output-format concise``; flake8, Fixit (``fixit lint``) and TorchFix
(``torchfix``) once each.

Each tool runs as a subprocess on the whole corpus, ``--runs`` times after one warm-up run
(so every tool sees a warm file cache), the tools alternately: one run of each per round. Wall time is the median of the runs; CPU time
(user + sys of the child) and peak RSS are taken from ``/usr/bin/time`` when present,
else from ``resource.getrusage(RUSAGE_CHILDREN)`` in a fresh wrapper process. The ratio is
the tool's wall time divided by npulint's. ruff and flake8 are run only if installed (on
PATH or beside this Python). A run over ``--timeout`` seconds is killed (its process group)
and the tool reported as timed out. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", "node_modules"}

# Runs a command and writes its children's CPU time and peak RSS (KB) to a file.
_WRAPPER = ("import resource, subprocess, sys\n"
            "rc = subprocess.call(sys.argv[2:])\n"
            "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "open(sys.argv[1], 'w').write(f'{r.ru_maxrss} {r.ru_utime} {r.ru_stime}')\n"
            "sys.exit(rc)\n")


# npulint with its prefilter off: every checker parses and walks every file (what the run
# would cost if every file mentioned a checked API). Needs npulint importable by this Python.
_NO_PREFILTER = ("import npulint.checker as c; c.Checker.wants = classmethod(lambda cls, text: True); "
                 "import sys; from npulint.cli import main; sys.exit(main())")


def find_tool(name: str):
    return shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))


def count_python(root: str):
    files = lines = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in names:
            if name.endswith(".py"):
                files += 1
                with open(os.path.join(folder, name), "rb") as fh:
                    lines += fh.read().count(b"\n")
    return files, lines


# The tools run as after an install: their modules byte-compiled. pip compiles an installed
# package's modules; an editable install (this checkout) writes them on the first run, unless
# PYTHONDONTWRITEBYTECODE is set, when every run would compile npulint's modules from source
# (docs/benchmarks.md). The warm-up run writes them.
_TOOL_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_once(cmd, timeout, before=None):
    """(wall seconds, cpu seconds, peak RSS in MB, exit code) of one run of *cmd*, or None
    if it ran longer than *timeout* seconds."""
    fd, out = tempfile.mkstemp(prefix="bench-")
    os.close(fd)
    if before is not None:
        before()
    try:
        if os.path.exists("/usr/bin/time"):
            full = ["/usr/bin/time", "-o", out, "-f", "%M %U %S"] + cmd
        else:
            full = [sys.executable, "-c", _WRAPPER, out] + cmd
        start = time.perf_counter()
        proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                env=_TOOL_ENV)
        # A blocking wait, and a timer that kills the session we started (the timer and the
        # tool) on time-out: Popen.wait(timeout=...) polls, sleeping up to 50 ms between looks,
        # which added up to 50 ms to every run (a third of a warm npulint run).
        killed = []

        def kill():
            killed.append(True)
            os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            rc = proc.wait()
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        if killed:
            return None
        with open(out) as fh:
            fields = fh.read().split()[-3:]  # /usr/bin/time may prepend "Command exited ..."
    finally:
        os.unlink(out)
    rss_kb, user, system = int(fields[0]), float(fields[1]), float(fields[2])
    return wall, user + system, rss_kb / 1024, rc


def measure(cmd, runs: int, timeout: float, before=None):
    results = [run_once(cmd, timeout, before) for _ in range(runs + 1)][1:]  # the first is a warm-up
    return summarise(results)


def summarise(results):
    if not results or None in results:
        return None
    return {
        "wall": statistics.median(r[0] for r in results),
        "cpu": statistics.median(r[1] for r in results),
        "rss": max(r[2] for r in results),
        "rc": sorted({r[3] for r in results}),
    }


# -- the synthetic corpus -----------------------------------------------------------------

_PLAIN = '''

class {cls}(object):
    """A plain class with a few methods ({i})."""

    def __init__(self, size={n}, name="{cls}"):
        self.size = size
        self.name = name
        self.items = [x * {n} for x in range(size) if x % 3]

    def total(self, scale=1.0):
        acc = 0.0
        for j, item in enumerate(self.items):
            if j % 2 == 0:
                acc += item * scale
            else:
                acc -= math.sqrt(abs(item))
        return acc

    def describe(self):
        return "{{}}: {{}} items, total={{:.3f}}".format(self.name, len(self.items), self.total())


def {fn}(values, *, limit={n}):
    result = {{}}
    for key, value in sorted(values.items()):
        try:
            result[key] = json.dumps(value)[:limit]
        except (TypeError, ValueError) as exc:
            logging.warning("cannot encode %s: %s", key, exc)
    return [k for k in result if os.path.basename(k)]
'''

_PREFETCH = '''

def build_{fn}(weights, rank_size={rank}):
    outputs = []
    with npu_scope.npu_weight_prefetch_scope(buffer_pool_id={pool}, buffer_pool_size={size}):
        for w in weights:
            outputs.append(hccl_ops.allgather(w, rank_size))
    return tf.add_n(outputs)
'''

_MC2 = '''

def {fn}(x, weight, hcomm_info, world_size):
    return torch_npu.npu_mm_reduce_scatter_base(x, weight.t(), hcomm_info, world_size, reduce_op="sum")
'''


def synthetic_file(rng: random.Random, i: int, npu_share: float) -> str:
    kind = "plain"
    roll = rng.random()
    if roll < npu_share:
        kind = "prefetch" if roll < npu_share * 0.7 else "mc2"
    head = ["# synthetic module %d (%s)" % (i, kind), "import json", "import logging", "import math", "import os"]
    if kind == "prefetch":
        head += ["import tensorflow as tf", "from npu_bridge.npu_init import *"]
    elif kind == "mc2":
        head += ["import torch", "import torch_npu"]
    parts = ["\n".join(head) + "\n"]
    for k in range(rng.randint(3, 8)):
        parts.append(_PLAIN.format(cls="Model%d_%d" % (i, k), fn="helper_%d_%d" % (i, k), i=i, n=rng.randint(2, 64)))
    if kind == "prefetch":
        pool = rng.randint(0, 3)
        size = rng.choice([256, 512]) * 1024 * 1024  # mismatched sizes across files: NPU101
        parts.append(_PREFETCH.format(fn="layer_%d" % i, rank=rng.choice([2, 8]), pool=pool, size=size))
    elif kind == "mc2":
        parts.append(_MC2.format(fn="row_parallel_%d" % i))
    return "".join(parts)


def make_synthetic(n: int, seed: int, npu_share: float, root=None) -> str:
    if root:
        os.makedirs(root, exist_ok=True)
    else:
        root = tempfile.mkdtemp(prefix="npulint-synthetic-")
    rng = random.Random(seed)
    for i in range(n):
        folder = os.path.join(root, "pkg_%03d" % (i // 100))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "mod_%05d.py" % i), "w") as fh:
            fh.write(synthetic_file(rng, i, npu_share))
    return root


# -- main ---------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", help="folder to lint (omit with --synthetic)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per tool (after one warm-up run)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds before a run is killed (default 600)")
    ap.add_argument("--npulint-cmd", default=None,
                    help="how to run npulint (default: npulint on PATH or beside this Python)")
    ap.add_argument("--synthetic", type=int, metavar="N", help="generate a corpus of N files instead")
    ap.add_argument("--seed", type=int, default=20261121, help="seed of the synthetic corpus")
    ap.add_argument("--npu-share", type=float, default=0.03, help="share of synthetic files using NPU APIs")
    ap.add_argument("--keep", action="store_true", help="keep the synthetic corpus (its path is printed)")
    ap.add_argument("--make-only", metavar="DIR", help="write the synthetic corpus to DIR and exit")
    ap.add_argument("--no-warm", action="store_true", help="skip the warm (cached) runs")
    ap.add_argument("--no-jobs1", action="store_true", help="skip npulint's --jobs 1 run")
    ap.add_argument("--no-others", action="store_true", help="time npulint only")
    ap.add_argument("--no-prefilter", action="store_true",
                    help="run npulint (importable by this Python) with every checker on every file")
    args = ap.parse_args(argv)
    if (args.corpus is None) == (args.synthetic is None):
        ap.error("give a corpus folder or --synthetic N (not both)")
    if args.no_prefilter and args.npulint_cmd:
        ap.error("--no-prefilter and --npulint-cmd do not combine")

    if args.make_only:
        if not args.synthetic:
            ap.error("--make-only needs --synthetic N")
        root = make_synthetic(args.synthetic, args.seed, args.npu_share, args.make_only)
        print(root, *count_python(root))
        return 0
    corpus = make_synthetic(args.synthetic, args.seed, args.npu_share) if args.synthetic else args.corpus
    try:
        return report(corpus, args)
    finally:
        if args.synthetic and not args.keep:
            shutil.rmtree(corpus, ignore_errors=True)


def report(corpus: str, args) -> int:
    files, lines = count_python(corpus)
    npulint = shlex.split(args.npulint_cmd) if args.npulint_cmd else [find_tool("npulint") or "npulint"]
    if args.no_prefilter:
        npulint = [sys.executable, "-c", _NO_PREFILTER]
    cache = tempfile.mkdtemp(prefix="bench-npulint-cache-")
    ruff_cache = tempfile.mkdtemp(prefix="bench-ruff-cache-")

    def empty_cache():
        shutil.rmtree(cache, ignore_errors=True)

    label = "npulint" + (" (no prefilter)" if args.no_prefilter else "")
    base_cmd = npulint + [corpus, "--exit-zero", "-q", "--cache-dir", cache]
    tools = [(label + " cold", base_cmd, empty_cache)]
    if not args.no_warm:
        tools.append((label + " warm", base_cmd, None))
    if not args.no_jobs1:
        tools.append((label + " cold -j1", base_cmd + ["--jobs", "1"], empty_cache))
    if not args.no_others:
        ruff, flake8, fixit = find_tool("ruff"), find_tool("flake8"), find_tool("fixit")
        torchfix = find_tool("torchfix")
        if ruff:
            ruff_cmd = [ruff, "check", "--select", "ALL", "--output-format", "concise", "--exit-zero"]
            tools.append(("ruff ALL cold", ruff_cmd + ["--no-cache", corpus], None))
            if not args.no_warm:
                tools.append(("ruff ALL warm", ruff_cmd + ["--cache-dir", ruff_cache, corpus], None))
        if flake8:
            tools.append(("flake8", [flake8, "--exit-zero", corpus], None))
        if fixit:
            tools.append(("fixit", [fixit, "lint", corpus], None))
        if torchfix:
            tools.append(("torchfix", [torchfix, corpus], None))

    print(f"corpus: {corpus}{' (synthetic, seed %d)' % args.seed if args.synthetic else ''}")
    print(f"python files: {files}, lines: {lines}, runs: {args.runs} (+1 warm-up), cpus: {os.cpu_count()}")
    rows = []
    try:
        load = os.getloadavg()
        print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    except OSError:
        pass
    # The tools run alternately (one run of each, round after round), so that a change in the
    # machine's load during the benchmark falls on all of them alike; the slow LibCST linters
    # (Fixit, TorchFix) and flake8 run in the first round only.
    once = ("flake8", "fixit", "torchfix")
    for name, cmd, before in tools:
        print(f"  {name}: {' '.join(shlex.quote(c) for c in cmd)}", file=sys.stderr)
        if name not in once:
            run_once(cmd, args.timeout, before)  # warm-up (file cache, imports)
    results = {name: [] for name, _, _ in tools}
    for r in range(args.runs):
        for name, cmd, before in tools:
            if name in once and r > 0:
                continue
            if results[name] and results[name][-1] is None:
                continue  # timed out once: not again
            results[name].append(run_once(cmd, args.timeout, before))
    rows.extend((name, summarise(results[name])) for name, _, _ in tools)
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(ruff_cache, ignore_errors=True)

    base = rows[0][1]["wall"] if rows[0][1] else None
    header = ("tool", "wall s", "cpu s", "files/s", "lines/s", "peak MB", "ratio")
    table = [header]
    for name, m in rows:
        if m is None:
            table.append((name, f">{args.timeout:g}", "-", "-", "-", "-", "-"))
            continue
        table.append((name, f"{m['wall']:.2f}", f"{m['cpu']:.2f}", f"{files / m['wall']:,.0f}",
                      f"{lines / m['wall']:,.0f}", f"{m['rss']:.0f}", f"{m['wall'] / base:.2f}x" if base else "-"))
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    print()
    for k, row in enumerate(table):
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        print("| " + " | ".join(cells) + " |")
        if k == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print("\nratio = tool wall time / npulint cold wall time; cpu s = user + sys of the tool's process(es)")
    walls = {name: m["wall"] for name, m in rows if m}
    for a, b in ((label + " cold", "ruff ALL cold"), (label + " warm", "ruff ALL warm"),
                 (label + " cold -j1", label + " cold")):
        if a in walls and b in walls:
            print(f"{a} / {b}: {walls[a] / walls[b]:.2f}")
    try:
        load = os.getloadavg()
        print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    except OSError:
        pass
    bad = [(name, f"exited with {m['rc']}" if m else "timed out") for name, m in rows
           if m is None or (m["rc"] != [0] and name not in ("fixit", "torchfix"))]
    for name, what in bad:
        print(f"warning: {name} {what}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
