#!/usr/bin/env python3
"""Run npulint on generated hostile inputs, one subprocess per input, and print a Markdown
table of wall time and peak memory per input (the bounded-work target: every input under 1 s
and 200 MB). Nothing is written outside a temporary folder.

    python bench/hostile.py [--npulint-cmd CMD] [--repeat N] [--max-file-size SIZE]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time


def inputs():
    """name -> (file name, text)."""
    doubling = "V0=--bf16\n" + "".join(f'V{i}="$V{i - 1} $V{i - 1}"\n' for i in range(1, 31))
    yield "shell: expansion doubling, 30 levels", "dbl.sh", doubling + "torchrun pretrain_gpt.py $V30\n"
    for n in (2_000, 12_000):
        yield (f"shell: {n:,} nested while loops", f"nest{n}.sh",
               "while true; do\n" * n + "torchrun pretrain_gpt.py --bf16\n" + "done\n" * n)
    yield ("shell: array doubling, 30 levels", "arr.sh",
           "A=(--bf16)\n" + "".join('A=("${A[@]}" "${A[@]}")\n' for _ in range(30))
           + 'torchrun pretrain_gpt.py "${A[@]}"\n')
    yield ("shell: 40 case statements (2^40 paths)", "case.sh",
           "".join(f"case $X in a{i}) P{i}=1 ;; b{i}) P{i}=2 ;; esac\n" for i in range(40))
           + "torchrun pretrain_gpt.py --bf16\n")
    yield ("shell: 2,000 here-documents", "heredoc.sh",
           "".join(f"cat <<EOF{i}\n$(echo x)\nEOF{i}\n" for i in range(2000)) + "torchrun pretrain_gpt.py\n")
    yield ("shell: 5,000 nested subshells", "sub.sh", "(" * 5000 + "torchrun pretrain_gpt.py --bf16" + ")" * 5000 + "\n")
    yield ("shell: 20,000-command && list", "and.sh",
           " && ".join(["true"] * 20000) + " && torchrun pretrain_gpt.py --bf16\n")
    yield ("python: 10,000 nested parentheses", "paren.py", "import torch_npu\nx = " + "(" * 10000 + "1" + ")" * 10000 + "\n")
    yield ("python: doubling names, 40 levels", "names.py",
           "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\nV0 = 1\n"
           + "".join(f"V{i} = V{i - 1} + V{i - 1}\n" for i in range(1, 41))
           + "with npu_weight_prefetch_scope(0, V40):\n    pass\n")
    yield ("python: \"a\" * 10**9", "rep.py",
           "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\nS = 'a' * 10**9\n"
           "with npu_weight_prefetch_scope(0, len(S)):\n    pass\n")
    yield ("python: a 19,000-item tuple (under the literal bound)", "tuple19k.py",
           "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\nT = ("
           + ", ".join("1" for _ in range(19_000)) + ")\nwith npu_weight_prefetch_scope(T[0], T[-1]):\n    pass\n")
    yield ("python: 57,600 syntax nodes in statements (under the node bound)", "nodes99k.py",
           "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
           + "".join(f"v{i} = {i}\n" for i in range(14_400)) + "with npu_weight_prefetch_scope(0, v1):\n    pass\n")
    yield ("python: 62,400 syntax nodes in statements (over the node bound)", "nodes102k.py",
           "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
           + "".join(f"v{i} = {i}\n" for i in range(15_600)) + "with npu_weight_prefetch_scope(0, v1):\n    pass\n")
    yield ("python: a 200,000-item tuple", "tuple.py",
           "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\nT = ("
           + ", ".join("1" for _ in range(200_000)) + ")\nwith npu_weight_prefetch_scope(T[0], T[-1]):\n    pass\n")


def run_one(cmd, path, size_args=()):
    start = time.perf_counter()
    proc = subprocess.Popen(cmd + ["--no-cache", *size_args, "--select", "ALL", "--exit-zero", path],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = b"", b""
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except ChildProcessError:
        status, usage = 0, None
    wall = time.perf_counter() - start
    out, err = proc.stdout.read(), proc.stderr.read()
    codes = sorted({line.split()[1] for line in out.decode(errors="replace").splitlines() if line.count(":") >= 3})
    rss_mb = usage.ru_maxrss / 1024 if usage is not None else float("nan")
    return wall, rss_mb, codes, b"Traceback" in err


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npulint-cmd", default=f"{shlex.quote(sys.executable)} -m npulint")
    ap.add_argument("--repeat", type=int, default=1, help="runs per input; the slowest is shown")
    ap.add_argument("--max-file-size", metavar="SIZE",
                    help="passed to npulint (default: npulint's own default, as a pre-commit hook runs it; "
                         "0 lifts the size limit, so that only the analysis bounds stop the large inputs)")
    args = ap.parse_args()
    cmd = shlex.split(args.npulint_cmd)
    folder = tempfile.mkdtemp(prefix="npulint-hostile-")
    try:
        print("| input | size | wall (s) | peak RSS (MB) | findings | traceback |")
        print("|---|---|---|---|---|---|")
        for name, file_name, text in inputs():
            path = os.path.join(folder, file_name)
            with open(path, "w") as fh:
                fh.write(text)
            size_args = ["--max-file-size", args.max_file_size] if args.max_file_size is not None else []
            runs = [run_one(cmd, path, size_args) for _ in range(args.repeat)]
            wall = max(r[0] for r in runs)
            rss = max(r[1] for r in runs)
            codes, tb = runs[-1][2], any(r[3] for r in runs)
            print(f"| {name} | {len(text.encode()) / 1024:.0f} KB | {wall:.2f} | {rss:.0f} | "
                  f"{', '.join(codes) or 'none'} | {'yes' if tb else 'no'} |")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
