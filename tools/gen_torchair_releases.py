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
* the same ``self.<name> = <Value class>(...)`` calls, for what each option accepts (``values``:
  dotted path -> release -> ``cls``, the class of ``_option_base.py`` it instantiates, ``args``,
  its positional arguments evaluated (literals, ``2 ** 63 - 1``, and module-level names bound to
  them; an option with an argument that cannot be is left out), and ``source``): an ``OptionValue``'s optional list, an
  ``IntRangeValue``'s bounds, a ``RegexValue``'s pattern (NPU204);
* the NPU010 signatures (``SIGNATURES``: qualified name -> the file and the ``def``/``class``
  that define it; a class's ``__init__`` without ``self``), rendered without annotations, with
  their defaults (``signatures``: name -> release -> text and ``Repo@sha file:line``);
* ``python/setup.py``: the package version each release declares (``versions``), and the same for
  every other release branch of the mirror (``unmodelled``: a branch named like a release,
  ``6.0.rc1``, ``7.0.0``, that is not in ``RELEASES``). Every one declares ``0.1``, so a tree's
  version cannot tell its release; ``marker`` is a file every modelled release has and no
  unmodelled release has, which tells a torchair tree of a modelled release from an older one.
* ``python/torchair/configs/compiler_config.py``: the compile modes ``CompilerConfig`` accepts
  (``modes``: mode -> release -> where), the list of ``self.mode = OptionValue(default, [...])``
  (NPU207);
* ``python/torchair/npu_fx_compiler.py``: what the backend ``get_npu_backend`` returns (the function
  its ``functools.partial`` wraps) does with the ``mode`` keyword argument ``torch.compile`` passes
  to a custom backend (``mode_kwarg``: release -> effect and where; NPU208): ``raises`` where the
  function takes neither ``mode`` nor ``**kwargs`` (Python raises TypeError at the call),
  ``ignores`` where it takes ``**kwargs`` and only hands them to functions (of the file or imported
  from ``torchair``) none of which names ``"mode"``, ``reads`` where ``mode`` is a parameter or
  such a function names ``"mode"``, ``unknown`` otherwise.
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


# NPU010's torchair signatures: qualified name -> (the file that defines it, the def or class)
SIGNATURES = {
    "torchair.get_npu_backend": ("python/torchair/npu_fx_compiler.py", "get_npu_backend"),
    "torchair.npu_fx_compiler.get_npu_backend": ("python/torchair/npu_fx_compiler.py", "get_npu_backend"),
    "torchair.CompilerConfig": ("python/torchair/configs/compiler_config.py", "CompilerConfig"),
    "torchair.configs.compiler_config.CompilerConfig": ("python/torchair/configs/compiler_config.py",
                                                        "CompilerConfig"),
    "torchair.scope.npu_stream_switch": ("python/torchair/scope/__init__.py", "npu_stream_switch"),
    "torchair.scope.npu_wait_tensor": ("python/torchair/scope/__init__.py", "npu_wait_tensor"),
    **{f"torchair.ops.{name}": ("python/torchair/ops/__init__.py", name)
       for name in ("npu_create_tagged_event", "npu_tagged_event_record", "npu_tagged_event_wait",
                    "npu_record_tagged_stream")},
}
RELEASE_BRANCH = re.compile(r"^\d+\.\d+\.(\d+|rc\d+)$")
SETUP = "python/setup.py"


def git(mirror: str, *args: str) -> str:
    return subprocess.run(["git", "-C", mirror, *args], check=True, capture_output=True, text=True).stdout


def show(mirror: str, rev: str, path: str) -> str:
    try:
        return git(mirror, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return ""


CONFIGS = "python/torchair/configs/"


_UNKNOWN = object()


def _evaluate(node, names: dict):
    """A literal, a list/tuple of them, ``-x``, ``a + b``, ``a - b``, ``a * b``, ``a ** b`` of
    ints, or a name bound to one at module level (*names*); ``_UNKNOWN`` otherwise."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_evaluate(e, names) for e in node.elts]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else items
    if isinstance(node, ast.Name):
        return names.get(node.id, _UNKNOWN)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _evaluate(node.operand, names)
        return -v if type(v) is int else _UNKNOWN
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Pow: lambda a, b: a ** b}
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        a, b = _evaluate(node.left, names), _evaluate(node.right, names)
        return ops[type(node.op)](a, b) if type(a) is int and type(b) is int and 0 <= b <= 64 else _UNKNOWN
    return _UNKNOWN


def config_options(mirror: str, rev: str, short: str, values: dict = None) -> dict:
    """Dotted option path -> ``Repo@sha file:line`` of its definition, at *rev*; *values*, when
    given, gets what each option defined by a class of ``_option_base.py`` accepts (dotted path
    -> ``{"cls", "args", "source"}``, see the module docstring). A class name
    is looked up in its own file, then through that file's ``from torchair.configs.<m> import``
    (two files define an ``_ExperimentalConfig``); a class's bases are read too (``_path`` of
    the dump configs comes from their base)."""
    names = git(mirror, "ls-tree", "--name-only", rev, CONFIGS).split()
    classes = {}  # (file, class name) -> ClassDef
    imports = {}  # (file, name) -> the file that defines it
    constants = {}  # file -> module-level name -> value
    for path in sorted(n for n in names if n.endswith(".py")):
        try:
            tree = ast.parse(show(mirror, rev, path))
        except SyntaxError:
            continue
        constants[path] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = _evaluate(node.value, constants[path])
                if value is not _UNKNOWN:
                    constants[path][node.targets[0].id] = value
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
                            cls = lookup(path, value.func.id) if isinstance(value, ast.Call) and isinstance(
                                value.func, ast.Name) else None
                            args = [_evaluate(a, constants.get(path, {})) for a in value.args] \
                                if cls is not None and cls[0].endswith("_option_base.py") else [_UNKNOWN]
                            if values is not None and _UNKNOWN not in args:
                                values[".".join(name)] = {"cls": cls[1], "args": args,
                                                          "source": f"{REPO}@{short} {path}:{sub.lineno}"}
                            found = lookup(path, value.func.id) if isinstance(value, ast.Call) and isinstance(
                                value.func, ast.Name) else None
                            if found is not None and found not in seen:
                                walk(found, name, seen | {key})

    root = lookup(CONFIGS + "compiler_config.py", "CompilerConfig")
    if root is not None:
        walk(root, (), frozenset())
    return out


def signature(mirror: str, rev: str, short: str, path: str, name: str):
    """The text of the top-level ``def name`` (or ``class name``'s ``__init__`` without ``self``)
    in *path* at *rev*, annotations dropped, and where it is; None where it is not defined."""
    try:
        tree = ast.parse(show(mirror, rev, path))
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            args, line = node.args, node.lineno
        elif isinstance(node, ast.ClassDef) and node.name == name:
            init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
            if init is None:
                args, line = ast.arguments([], [], None, [], [], None, []), node.lineno
            else:
                args, line = init.args, init.lineno
                args.args = args.args[1:]
        else:
            continue
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if a is not None:
                a.annotation = None
        return {"text": f"{name}({ast.unparse(args)})", "source": f"{REPO}@{short} {path}:{line}"}
    return None


def compile_modes(mirror: str, rev: str, short: str) -> dict:
    """Mode -> ``Repo@sha file:line`` of the ``self.mode = OptionValue(default, [...])`` in
    ``CompilerConfig.__init__`` that lists it, at *rev*."""
    path = CONFIGS + "compiler_config.py"
    cls = next((n for n in ast.parse(show(mirror, rev, path)).body
                if isinstance(n, ast.ClassDef) and n.name == "CompilerConfig"), None)
    for node in ast.walk(cls) if cls is not None else ():
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.value.args) == 2 and \
                any(isinstance(t, ast.Attribute) and t.attr == "mode" and isinstance(t.value, ast.Name) and
                    t.value.id == "self" for t in node.targets):
            return {ast.literal_eval(e): f"{REPO}@{short} {path}:{node.lineno}" for e in node.value.args[1].elts}
    return {}


FX_COMPILER = "python/torchair/npu_fx_compiler.py"


def _module_path(module: str) -> str:
    return "python/" + module.replace(".", "/") + ".py"


def mode_kwarg(mirror: str, rev: str, short: str) -> dict:
    """What torchair's backend does with ``mode=`` (see the module docstring), and where."""
    tree = ast.parse(show(mirror, rev, FX_COMPILER))
    defs = {n.name: (FX_COMPILER, n) for n in tree.body if isinstance(n, ast.FunctionDef)}
    imported = {a.asname or a.name: (_module_path(n.module), a.name) for n in tree.body
                if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("torchair.") for a in n.names}
    factory = defs["get_npu_backend"][1]
    ret = next(n for n in ast.walk(factory) if isinstance(n, ast.Return))
    backend = defs[ret.value.args[0].id][1]  # return functools.partial(_npu_backend, ...)
    args = backend.args
    where = f"{REPO}@{short} {FX_COMPILER}:{backend.lineno}"
    if "mode" in [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]:
        return {"effect": "reads", "source": where}
    if args.kwarg is None:
        return {"effect": "raises", "source": where}
    kwargs = args.kwarg.arg
    uses = [n for n in ast.walk(backend) if isinstance(n, ast.Name) and n.id == kwargs]
    calls = [n for n in ast.walk(backend) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and
             any(isinstance(a, ast.Name) and a.id == kwargs for a in n.args)]
    if len(calls) != len(uses):
        return {"effect": "unknown", "source": where}  # used otherwise than handed to a function
    cites = [where]
    for call in calls:
        if call.func.id in defs:
            path, fn = defs[call.func.id]
        elif call.func.id in imported:
            path, name = imported[call.func.id]
            fn = next((n for n in ast.parse(show(mirror, rev, path)).body
                       if isinstance(n, ast.FunctionDef) and n.name == name), None)
            if fn is None:
                return {"effect": "unknown", "source": where}
        else:
            return {"effect": "unknown", "source": where}
        if any(isinstance(n, ast.Constant) and n.value == "mode" for n in ast.walk(fn)):
            return {"effect": "reads", "source": f"{REPO}@{short} {path}:{fn.lineno}-{fn.end_lineno}"}
        cites.append(f"{path}:{fn.lineno}-{fn.end_lineno}")
    return {"effect": "ignores", "source": ", ".join(cites)}


def version(mirror: str, rev: str) -> str:
    m = re.search(r"\bversion\s*=\s*['\"]([^'\"]+)['\"]", show(mirror, rev, SETUP))
    return m.group(1) if m else ""


def main(mirror: str) -> dict:
    commits = {r: git(mirror, "rev-parse", r).strip() for r in RELEASES}
    apis = {f"torchair.ops.{name}": {} for name in APIS}
    raises = {}
    ignores = {}
    options = {}
    values = {}
    signatures = {}
    modes = {}
    kwarg = {}
    for rel in RELEASES:
        short = commits[rel][:8]
        for mode, where in compile_modes(mirror, rel, short).items():
            modes.setdefault(mode, {})[rel] = where
        kwarg[rel] = mode_kwarg(mirror, rel, short)
        for qual, (path, name) in SIGNATURES.items():
            found = signature(mirror, rel, short, path, name)
            if found is not None:
                signatures.setdefault(qual, {})[rel] = found
        accepts = {}
        for name, where in config_options(mirror, rel, short, accepts).items():
            options.setdefault(name, {})[rel] = where
        for name, entry in accepts.items():
            values.setdefault(name, {})[rel] = entry
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
    branches = git(mirror, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split()
    unmodelled = {b: {"commit": git(mirror, "rev-parse", b).strip(), "version": version(mirror, b)}
                  for b in branches if RELEASE_BRANCH.match(b) and b not in RELEASES}
    files = [set(git(mirror, "ls-tree", "-r", "--name-only", r, "python/torchair/").split()) for r in RELEASES]
    older = set().union(*(git(mirror, "ls-tree", "-r", "--name-only", b, "python/torchair/").split()
                          for b in unmodelled))
    marker = min(set.intersection(*files) - older)
    return {
        "generated_by": "tools/gen_torchair_releases.py",
        "repo": REPO,
        "releases": list(RELEASES),
        "commits": commits,
        "apis": apis,
        "checks": {"NPU303": {"holds": raises, "does_not_hold": ignores}},
        "options": options,
        "modes": modes,
        "values": values,
        "mode_kwarg": kwarg,
        "signatures": signatures,
        "versions": {r: version(mirror, r) for r in RELEASES},
        "unmodelled": unmodelled,
        "marker": {"path": marker, "source": f"{REPO}@{commits[RELEASES[0]][:8]} {marker}"},
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[2])
    json.dump(main(sys.argv[1]), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
