#!/usr/bin/env python3
"""Regenerate ``rules/torchair_releases.json``: the torchair releases npulint knows, which of
them define each tagged-event API, and in which the GE converter raises NotImplementedError for
the tagged-event ops (NPU303's premise).

Reads a bare mirror of Ascend/torchair through git (never imports or runs it):

    python tools/gen_torchair_releases.py /path/to/torchair.git [> rules/torchair_releases.json]

What is read, per release branch:

* ``python/torchair/ops/__init__.py``: the ``def npu_...`` of each tagged-event API (whether the
  release has it, and where);
* ``python/torchair/ops/_tagged_event.py`` (7.2.0 and later): the ``raise NotImplementedError(
  "torch.ops.air.<op>.default ge_converter is not implemented!")`` of each converter;
* ``python/torchair/ops/_external_event.py`` (7.1.0 only): its converters, which return None
  (the ops are dropped from the GE graph: no error, and no synchronisation either).

Releases before 7.1.0 have none of these APIs and are not listed.

* ``python/torchair/configs/*.py``: the options of ``CompilerConfig`` (``options``: dotted path
  -> release -> where it is defined), read from the classes' ``self.<name> = ...`` in
  ``__init__`` and their class attributes, following ``self.<name> = _SomeConfig()`` into the
  sub-config classes (not into the option value classes of ``_option_base.py``). A rule whose
  premise or advice names an option holds only on the releases that define it (NPU201, NPU202,
  NPU203).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

REPO = "Ascend/torchair"
RELEASES = ("7.1.0", "7.2.0", "7.3.0", "26.0.0", "master")
APIS = ("npu_create_tagged_external_event", "npu_create_tagged_event", "npu_tagged_event_record",
        "npu_tagged_event_wait", "npu_record_tagged_stream")
RAISING_OPS = ("tagged_event_record", "tagged_event_wait", "record_tagged_stream")


def git(mirror: str, *args: str) -> str:
    return subprocess.run(["git", "-C", mirror, *args], check=True, capture_output=True, text=True).stdout


def show(mirror: str, rev: str, path: str) -> str:
    try:
        return git(mirror, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return ""


CONFIGS = "python/torchair/configs/"


def config_options(mirror: str, rev: str, short: str) -> dict:
    """Dotted option path -> ``Repo@sha file:line`` of its definition, at *rev*. A class name
    is looked up in its own file, then through that file's ``from torchair.configs.<m> import``
    (two files define an ``_ExperimentalConfig``); a class's bases are read too (``_path`` of
    the dump configs comes from their base)."""
    names = git(mirror, "ls-tree", "--name-only", rev, CONFIGS).split()
    classes = {}  # (file, class name) -> ClassDef
    imports = {}  # (file, name) -> the file that defines it
    for path in sorted(n for n in names if n.endswith(".py")):
        try:
            tree = ast.parse(show(mirror, rev, path))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                classes[(path, node.name)] = node
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torchair.configs."):
                source = CONFIGS + node.module.rsplit(".", 1)[1] + ".py"
                for alias in node.names:
                    imports[(path, alias.asname or alias.name)] = source

    def lookup(path: str, name: str):
        if (path, name) in classes:
            return path, name
        source = imports.get((path, name))
        return (source, name) if source is not None and (source, name) in classes else None

    out = {}

    def walk(key, prefix: tuple, seen: frozenset) -> None:
        path, _ = key
        node = classes[key]
        if path.endswith("_option_base.py"):
            return  # an option value's own attributes are not options
        for base in node.bases:
            found = lookup(path, base.id) if isinstance(base, ast.Name) else None
            if found is not None and found not in seen:
                walk(found, prefix, seen | {key})
        for stmt in node.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):  # class attributes
                for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                    if isinstance(target, ast.Name) and not target.id.startswith("__"):
                        out[".".join(prefix + (target.id,))] = f"{REPO}@{short} {path}:{stmt.lineno}"
            elif isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
                for sub in ast.walk(stmt):
                    if not isinstance(sub, ast.Assign):
                        continue
                    for target in sub.targets:
                        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                                target.value.id == "self":
                            name = prefix + (target.attr,)
                            out[".".join(name)] = f"{REPO}@{short} {path}:{sub.lineno}"
                            value = sub.value
                            found = lookup(path, value.func.id) if isinstance(value, ast.Call) and isinstance(
                                value.func, ast.Name) else None
                            if found is not None and found not in seen:
                                walk(found, name, seen | {key})

    root = lookup(CONFIGS + "compiler_config.py", "CompilerConfig")
    if root is not None:
        walk(root, (), frozenset())
    return out


def main(mirror: str) -> dict:
    commits = {r: git(mirror, "rev-parse", r).strip() for r in RELEASES}
    apis = {f"torchair.ops.{name}": {} for name in APIS}
    raises = {}
    ignores = {}
    options = {}
    for rel in RELEASES:
        short = commits[rel][:8]
        for name, where in config_options(mirror, rel, short).items():
            options.setdefault(name, {})[rel] = where
        init = show(mirror, rel, "python/torchair/ops/__init__.py")
        for lineno, line in enumerate(init.splitlines(), 1):
            m = re.match(r"def (npu_\w+)\(", line)
            if m and m.group(1) in APIS:
                apis[f"torchair.ops.{m.group(1)}"][rel] = f"{REPO}@{short} python/torchair/ops/__init__.py:{lineno}"
        tagged = show(mirror, rel, "python/torchair/ops/_tagged_event.py")
        found = []
        for lineno, line in enumerate(tagged.splitlines(), 1):
            m = re.search(r'raise NotImplementedError\("torch\.ops\.air\.(\w+)\.default ge_converter', line)
            if m and m.group(1) in RAISING_OPS:
                found.append((m.group(1), lineno))
        if {op for op, _ in found} == set(RAISING_OPS):
            lines = ",".join(str(n) for _, n in found)
            raises[rel] = f"{REPO}@{short} python/torchair/ops/_tagged_event.py:{lines}"
        external = show(mirror, rel, "python/torchair/ops/_external_event.py")
        if external:
            conv = [n for n, line in enumerate(external.splitlines(), 1)
                    if "register_fx_node_ge_converter(torch.ops.air.external_event_" in line]
            if conv:
                ignores[rel] = (f"{REPO}@{short} python/torchair/ops/_external_event.py:{conv[0]}-{conv[-1] + 4} "
                                "(the GE converters return None)")
    return {
        "generated_by": "tools/gen_torchair_releases.py",
        "repo": REPO,
        "releases": list(RELEASES),
        "commits": commits,
        "apis": apis,
        "checks": {"NPU303": {"holds": raises, "does_not_hold": ignores}},
        "options": options,
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[2])
    json.dump(main(sys.argv[1]), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
