#!/usr/bin/env python3
"""Run npulint over real repositories and print one Markdown row per repository: files and
lines found, cold and warm wall time, peak memory, files parsed, findings per code, and
internal errors (NPU000; must be 0). Read-only: the cache goes to a temporary folder.

    python bench/realworld.py /tmp/corpus/MindSpeed /tmp/corpus/torchair ... [--npulint-cmd CMD]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time


def count(root):
    files = lines = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in {".git", "__pycache__"}]
        for n in names:
            if n.endswith((".py", ".sh", ".bash", ".pyi")):
                files += 1
                try:
                    with open(os.path.join(folder, n), "rb") as fh:
                        lines += fh.read().count(b"\n")
                except OSError:
                    pass
    return files, lines


def timed(cmd):
    fd, out = tempfile.mkstemp()
    os.close(fd)
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-o", out, "-f", "%M"] + cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    with open(out) as fh:
        rss = int(fh.read().split()[-1]) / 1024
    os.unlink(out)
    return wall, rss, proc


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--npulint-cmd", default=shutil.which("npulint") or "npulint")
    args = ap.parse_args(argv)
    exe = shlex.split(args.npulint_cmd)
    print("| repository | files (.py/.sh) | lines | cold s | warm s | peak MB | findings (by code) | NPU000 |")
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    for repo in args.repos:
        cache = tempfile.mkdtemp(prefix="rw-cache-")
        cmd = exe + [repo, "--select", "ALL", "--format", "json", "--exit-zero", "--cache-dir", cache]
        cold, rss, proc = timed(cmd)
        warm, _, again = timed(cmd)
        shutil.rmtree(cache, ignore_errors=True)
        files, lines = count(repo)
        try:
            found = json.loads(proc.stdout or "[]")
        except ValueError:
            print(f"{repo}: not JSON: {proc.stdout[:200]!r} {proc.stderr[-500:]!r}", file=sys.stderr)
            found = []
        if again.stdout != proc.stdout:
            print(f"{repo}: the warm run differs from the cold run", file=sys.stderr)
        if proc.returncode not in (0, 1) or "Traceback" in proc.stderr:
            print(f"{repo}: exit {proc.returncode}: {proc.stderr[-2000:]}", file=sys.stderr)
        by_code = collections.Counter(f["code"] for f in found)
        codes = ", ".join(f"{c} {n}" for c, n in sorted(by_code.items())) or "none"
        print(f"| {os.path.basename(repo.rstrip('/'))} | {files:,} | {lines:,} | {cold:.2f} | {warm:.2f} | "
              f"{rss:.0f} | {codes} | {by_code.get('NPU000', 0)} |", flush=True)
        for line in proc.stderr.splitlines():
            if "warning" in line:
                print(f"    {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
