#!/usr/bin/env python3
"""Instructions a command executes, counted by valgrind's callgrind over the process and its
children (with ``PYTHONHASHSEED=0``): about the same count for the same run whatever else the
machine is doing, where wall times on a shared machine move by tens of percent from one minute
to the next. For comparing two commits of npulint on one tree (each installed in its own venv),
not for ratios to ruff (the targets are wall times; ruff runs threads).

    python bench/instructions.py -- /tmp/venv-a/bin/npulint TREE --no-cache --exit-zero -q -j1
    python bench/instructions.py -- /tmp/venv-b/bin/npulint TREE --no-cache --exit-zero -q -j1

Prints the total and, per process, what callgrind collected. Under callgrind a run takes about
fifty times as long as without it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys


def count(cmd):
    """(total, per-process counts) of *cmd* run under callgrind."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           "--trace-children=yes", *cmd],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace",
                          env=dict(os.environ, PYTHONHASHSEED="0"))
    counts = [int(n) for n in re.findall(r"^==\d+== Collected : (\d+)$", proc.stderr, re.M)]
    return sum(counts), counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="the command, after --")
    args = ap.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no command given")
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    total, counts = count(cmd)
    if not counts:
        print("callgrind collected nothing (did the command run?)", file=sys.stderr)
        return 2
    print(f"{total:,} instructions ({', '.join(f'{c:,}' for c in counts)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
