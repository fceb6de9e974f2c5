#!/usr/bin/env python3
"""Differential testing of npulint's torchair config rules against torchair's own config classes.

NPU204 (config option type), NPU206 (unknown config option) and NPU207 (invalid compile mode)
claim that torchair raises at an assignment to a ``CompilerConfig`` option (or, for some
messages, that it stores the value and ignores it). The oracle is torchair's own
``python/torchair/configs/*.py``: this tool loads that package from a torchair tree (a checkout
or a ``git archive`` of a release branch; none of its code enters this repository) in a
subprocess, with stub ``torch``/``torch.distributed`` and ``torchair.core.utils`` modules (the
only things the config modules touch at import and at assignment besides the standard library and
``torchair._utils.error_code``, which is loaded from the tree itself, without the
``torchair`` and ``torchair._utils`` package ``__init__`` modules, which import torch), generates assignment
scripts over the whole option tree (the tree torchair builds, plus npulint's own :data:`TREE`)
and runs each against torchair's classes, recording whether it raises and what. The same
scripts are linted by npulint with the release pinned (``[tool.npulint.releases] torchair``),
and once with no pin (every release npulint knows).

The invariant (RULES.md "NPU2xx", and a false positive is the worst bug):

* ``FP``: npulint says torchair raises (or that a value is stored unchecked) at a statement, and
  torchair does otherwise there, on a release the finding holds for;
* ``FN``: torchair raises at a statement whose value npulint can know (a literal; never a
  filesystem path, whose existence is the machine's), and npulint says nothing.

    python tools/tadiff.py --mirror /path/to/torchair.git            # every release of the generator
    python tools/tadiff.py 7.3.0=/tmp/ta/7.3.0 master=/tmp/ta/master  # given trees
    python tools/tadiff.py --mirror M --show-fn                        # list the false negatives too

Exit status 1 when a false positive is found. docs/internals.md ("Differential testing of the
torchair config rules") describes it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

from npulint.releases import known
from npulint.rules.torchair_config import leaf_paths

RELEASES = tuple(known("torchair"))  # those of rules/torchair_releases.json (tools/gen_torchair_releases.py)

CODES = ("NPU204", "NPU206", "NPU207")

# Runs in a subprocess: argv[1] is the torchair tree, stdin a JSON list of cases (lists of
# statements); prints the schema of the config tree and, per case, the index of the statement
# that raised (or -1) with the exception.
ORACLE = r"""
import json, os, sys, types
root = os.path.join(sys.argv[1], "python", "torchair")
torch = types.ModuleType("torch"); torch.__path__ = []
dist = types.ModuleType("torch.distributed")
dist.is_available = lambda: False
dist.is_initialized = lambda: False
dist.get_rank = lambda *a, **k: 0
dist.get_world_size = lambda *a, **k: 1
torch.distributed = dist
ta = types.ModuleType("torchair"); ta.__path__ = [root]
core = types.ModuleType("torchair.core"); core.__path__ = []
_utils = types.ModuleType("torchair._utils"); _utils.__path__ = [os.path.join(root, "_utils")]
utils = types.ModuleType("torchair.core.utils")
import logging
utils.logger = logging.getLogger("tadiff-torchair")
utils.logger.disabled = True
sys.modules.update({"torch": torch, "torch.distributed": dist, "torchair": ta,
                    "torchair.core": core, "torchair.core.utils": utils, "torchair._utils": _utils})
from torchair.configs.compiler_config import CompilerConfig
from torchair.configs._option_base import OptionValue, NpuBaseConfig
ta.CompilerConfig = CompilerConfig

def schema(obj, prefix, out):
    names = list(getattr(obj, "_fixed_attrs", None) or [])
    for k, v in vars(obj).items():
        if k == "_fixed_attrs":
            continue
        path = prefix + (k,)
        entry = {"fixed": k in names if hasattr(obj, "_fixed_attrs") else None, "cls": type(v).__name__}
        if isinstance(v, OptionValue):
            entry["optional"] = repr(v.optional)
            entry["default"] = repr(v.default)
            for a in ("_IntRangeValue__min", "_IntRangeValue__max"):
                if hasattr(v, a):
                    entry[a.rsplit("__", 1)[1]] = getattr(v, a)
        out[".".join(path)] = entry
        if not isinstance(v, OptionValue) and not isinstance(v, (str, int, float, bool, type(None), list,
                                                                 tuple, dict)) and not callable(v):
            schema(v, path, out)
    for k in dir(type(obj)):
        if not k.startswith("__") and ".".join(prefix + (k,)) not in out and \
                isinstance(getattr(type(obj), k), property) and getattr(type(obj), k).fset is not None:
            out[".".join(prefix + (k,))] = {"fixed": None, "cls": "property"}
    return out

result = {"schema": schema(CompilerConfig(), (), {}), "cases": []}
for stmts in json.load(sys.stdin):
    ns = {"torchair": ta, "config": CompilerConfig()}
    got = [-1, None, None]
    for i, s in enumerate(stmts):
        try:
            exec(s, ns)
        except BaseException as e:
            got = [i, type(e).__name__, str(e).split("\n")[0][:160]]
            break
    if got[0] < 0:
        try:
            got.append(repr(eval("config." + stmts[-1].split(" = ")[0].split("config.", 1)[1] + ".value", ns))
                       if stmts[-1].startswith("config.") and " = " in stmts[-1] else None)
        except BaseException:
            got.append(None)
    result["cases"].append(got)
print(json.dumps(result))
"""

# values of every type; the path values exist on the machine running the oracle, but npulint
# cannot know it (FN ignores FileNotFoundError)
VALUES = ("True", "False", "None", "0", "1", "2", "-1", "64", "0.0", "1.0", "1.5", "0j", "(1+0j)",
          "'True'", "'False'", "'0'", "'1'", "'2'", "''", "'txt'", "'TXT'", "'npy'", "'csv'", "'zip'",
          "'product'", "'O1'", "'o1'", "'O3'", "'BFS'", "'bfs'", "'auto'", "'input'", "'tensor'",
          "'original'", "'max-autotune'", "'reduce-overhead'", "'Reduce-Overhead'", "'npugraph_ex'",
          "'reduce_overhead'", "'max-autotune '", "'0|1'", "'0-1'", "'abc'", "'/tmp'", "'/nonexistent-tadiff'",
          "[]", "[1, 2]", "['a']", "()", "(0, 0)", "(1, 2)", "{}", "{'a': 1}", "print", "b'1'",
          "2**63", "2**63-1", "-2")


def near_misses(name: str) -> List[str]:
    out = {name + "s", name[:-1], name.upper(), name.capitalize(), "_" + name}
    return sorted(n for n in out if n.isidentifier() and n != name)


def cases_for(schema: Dict[str, dict], tree_paths: List[str]) -> List[List[str]]:
    """The assignment scripts (lists of statements after ``config = CompilerConfig()``)."""
    paths = sorted(set(schema) | set(tree_paths))
    cases: List[List[str]] = []
    for p in paths:
        entry = schema.get(p, {})
        option = entry.get("cls", "").endswith("Value") or entry.get("cls") == "property" or p not in schema
        values = VALUES if option else ("None", "1", "'x'", "{}")
        for v in values:
            cases.append([f"config.{p} = {v}"])
            if entry.get("cls", "").endswith("Value"):
                cases.append([f"config.{p}.value = {v}"])
        parent, _, name = p.rpartition(".")
        owner = f"config.{parent}" if parent else "config"
        cases.append([f"setattr({owner}, {name!r}, 1)"])
        cases.append([f"config.{p}._value = 1"])
        cases.append([f"config.{p}.x = 1"])
        cases.append([f"config.{p}.default = 1"])
        cases.append([f"config.{p} += 1"])
        cases.append([f"del config.{p}"])
        for miss in near_misses(name):
            if f"{parent}.{miss}".lstrip(".") not in schema:
                cases.append([f"{owner}.{miss} = 1"])
    # an assignment after another (release evidence, replaced sub-configs)
    for p in paths:
        cases.append(["config.mode = 'npugraph_ex'", f"config.{p} = 1"])
        cases.append([f"config.{p.split('.')[0]} = None", f"config.{p} = 1"])
    return cases


def oracle(tree: str, cases: List[List[str]]) -> dict:
    out = subprocess.run([sys.executable, "-c", ORACLE, tree], input=json.dumps(cases), capture_output=True,
                         text=True, timeout=600)
    if out.returncode:
        raise RuntimeError(f"torchair's configs of {tree} did not load:\n{out.stderr}")
    return json.loads(out.stdout)


def lint(cases: List[List[str]], release: str) -> Dict[int, List[dict]]:
    """npulint's findings per case (index -> findings of CODES), the torchair release pinned
    (``""``: no pin)."""
    with tempfile.TemporaryDirectory() as d:
        pin = f"[tool.npulint.releases]\ntorchair = \"{release}\"\n" if release else ""
        with open(os.path.join(d, "pyproject.toml"), "w") as f:
            f.write("[project]\nname = \"tadiff\"\n" + pin)
        for i, stmts in enumerate(cases):
            with open(os.path.join(d, f"c{i}.py"), "w") as f:
                f.write("import torchair\nconfig = torchair.CompilerConfig()\n" + "\n".join(stmts) + "\n")
        out = subprocess.run([sys.executable, "-m", "npulint", "--no-cache", "--select", ",".join(CODES),
                              "--format", "json", d], capture_output=True, text=True, cwd=d, timeout=1800)
        found: Dict[int, List[dict]] = {}
        for item in json.loads(out.stdout or "[]"):
            i = int(re.search(r"c(\d+)\.py$", item["path"]).group(1))
            found.setdefault(i, []).append(item)
        return found


def named_releases(message: str) -> List[str]:
    """The torchair releases a message names ("torchair 7.2.0 to master", "torchair@7.1.0"); all
    of them when it names none."""
    order = list(RELEASES)
    m = re.findall(r"torchair@?\s?(\d[\w.]*|master)(?: to (\d[\w.]*|master))?((?:, (?:\d[\w.]*|master))*)", message)
    if not m:
        return order
    out: List[str] = []
    for first, last, rest in m:
        if first not in order:
            continue
        if last and last in order:
            out.extend(order[order.index(first):order.index(last) + 1])
        else:
            out.append(first)
        out.extend(r for r in re.findall(r"(\d[\w.]*|master)", rest) if r in order)
    return out or order


def claim(item: dict) -> str:
    """``raises`` or ``stores`` (no exception at the statement)."""
    msg = item["message"]
    if "stored and ignored" in msg or "stores it unchecked" in msg or "torchair accepts it" in msg \
            or "has no effect" in msg:
        return "stores"
    return "raises"


def compare(results: Dict[str, dict], findings: Dict[str, Dict[int, List[dict]]],
            cases: List[List[str]]) -> Tuple[List[str], List[str]]:
    fps: List[str] = []
    fns: List[str] = []
    for pin, found in findings.items():
        for i, items in found.items():
            for item in items:
                stmt = item["line"] - 3  # the statement's index in the case
                rels = [pin] if pin else [r for r in named_releases(item["message"]) if r in results]
                if not pin and item["code"] == "NPU204":
                    # RULES.md "Releases": code that sets an option runs on a release that defines it
                    option = re.match(r"`config\.([\w.]+)`", item["message"]).group(1)
                    rels = [r for r in rels if option in results[r]["schema"]]
                for r in rels:
                    raised_at, exc = results[r]["cases"][i][0], results[r]["cases"][i][1]
                    if 0 <= raised_at < stmt:
                        continue  # an earlier statement raised: this one never runs
                    want = claim(item)
                    named = re.search(r"raises (\w+Error)", item["message"])
                    ok = raised_at == stmt and (named is None or named.group(1) == exc) if want == "raises" \
                        else raised_at != stmt
                    if want == "raises" and named is not None:
                        want = f"raises {named.group(1)}"
                    if not ok:
                        fps.append(f"{pin or 'unpinned'} vs {r}: {cases[i]!r} {item['code']} says {want}, torchair: "
                                   f"{exc or 'no exception'} ({results[r]['cases'][i][2]}) -- {item['message']}")
        if not pin:
            continue
        for i, got in enumerate(results[pin]["cases"]):
            if got[0] < 0 or got[1] == "FileNotFoundError":
                continue
            stmt = cases[i][got[0]]
            if "/tmp" in stmt or "nonexistent" in stmt or stmt.startswith("setattr("):
                continue
            if not any(it["line"] - 3 == got[0] for it in found.get(i, ())):
                fns.append(f"{pin}: {cases[i]!r}: torchair {got[1]} ({got[2]})")
    return fps, fns


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs="*", help="RELEASE=PATH: a torchair tree of that release")
    ap.add_argument("--mirror", help="a torchair git mirror: git archive every release of the generator")
    ap.add_argument("--show-fn", action="store_true", help="list the false negatives")
    ap.add_argument("--unpinned", action="store_true", help="also lint with no release pinned")
    args = ap.parse_args(argv)

    trees = dict(t.split("=", 1) for t in args.trees)
    tmp = tempfile.TemporaryDirectory()
    if args.mirror:
        for r in RELEASES:
            dest = os.path.join(tmp.name, r)
            os.makedirs(dest)
            archive = subprocess.run(["git", "-C", args.mirror, "archive", r, "python/torchair/configs",
                                      "python/torchair/_utils/error_code.py"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
            trees[r] = dest
    schemas = {r: oracle(t, [])["schema"] for r, t in trees.items()}
    paths = sorted({p for s in schemas.values() for p in s} | set(leaf_paths()))
    merged = {p: e for s in schemas.values() for p, e in s.items()}
    cases = cases_for(merged, paths)
    results = {r: oracle(t, cases) for r, t in trees.items()}
    findings = {r: lint(cases, r) for r in trees}
    if args.unpinned:
        findings[""] = lint(cases, "")
    fps, fns = compare(results, findings, cases)
    print(f"{len(cases)} cases x {len(trees)} releases; {len(fps)} false positives, {len(fns)} false negatives")
    for line in fps:
        print("FP", line)
    if args.show_fn:
        for line in fns:
            print("FN", line)
    return 1 if fps else 0


if __name__ == "__main__":
    sys.exit(main())
