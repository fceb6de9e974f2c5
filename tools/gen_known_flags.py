#!/usr/bin/env python3
"""Regenerate rules/mindspeed_known_flags.txt, the flags NPU502 knows: every ``--flag`` that
an ``add_argument`` call registers in any Python file of any release of MindSpeed,
MindSpeed-LLM, MindSpeed-MM, MindSpeed-RL and Megatron-LM, read from bare git mirrors.

    python tools/gen_known_flags.py                      # mirrors under /work/.mirror
    python tools/gen_known_flags.py --mirrors DIR --check  # exit 1 if the file is stale
    python tools/gen_known_flags.py --where=--mm-model   # which files register a flag

It also writes rules/mindspeed_release_flags.json: for the release branches npulint models
(RELEASE_REFS), which of them register each flag, so that a launch tells the releases it can run
on (a flag the parser of a release's launches does not take makes that release reject the launch).
MindSpeed's legacy parser (mindspeed/arguments.py) counts only for the stacks whose launches run
it, with the line that decides it (LEGACY_PARSER below; docs/releases.md).

Standard library and git only. Upstream code is never imported or run: each file is parsed
with ``ast`` (npulint/argflags.py says which option strings are read). Megatron-LM 0.16 and
later also register flags from dataclass fields (``ArgumentGroupFactory(Config)``): every
field of such a class and of its bases becomes ``--field-name`` (and ``--no-``/``--disable-``
for a bool), plus the ``arg_names`` of its metadata. The output is deterministic: the same
mirrors give the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import os
import re
import subprocess
import sys
from typing import Dict, Iterable, List, Optional, Set, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from npulint.argflags import _Resolver, _Scopes, calls_in_text, call_flags, flags_in_tree, is_flag, parse  # noqa: E402

OUTPUT = os.path.join(ROOT, "rules", "mindspeed_known_flags.txt")
RELEASE_OUTPUT = os.path.join(ROOT, "rules", "mindspeed_release_flags.json")

# The refs whose flags tell which stack release a launch can run on (npulint/releases.py): the
# release branches of the frameworks (as in rules/mindspeed_releases.json) and the Megatron-LM
# refs they are installed with.
RELEASE_REFS: Tuple[Tuple[str, str, str], ...] = tuple(
    [("mindspeed", "Ascend/MindSpeed", r) for r in (
        "2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0", "2.1.0_core_r0.12.1", "2.2.0_core_r0.12.1",
        "2.3.0_core_r0.12.1", "26.0.0_core_r0.12.1", "26.1.0_core_r0.12.1", "master")]
    + [("mindspeed-llm", "Ascend/MindSpeed-LLM", r) for r in ("2.0.0", "2.1.0", "2.2.0", "2.3.0", "26.0.0", "26.1.0", "master")]
    + [("mindspeed-mm", "Ascend/MindSpeed-MM", r) for r in ("2.0.0", "2.1.0", "2.2.0", "2.3.0", "26.0.0", "26.1.0", "master")]
    + [("megatron", "NVIDIA/Megatron-LM", r) for r in ("core_r0.8.0", "core_v0.12.1")])
DEFAULT_MIRRORS = os.environ.get("NPULINT_MIRRORS", "/work/.mirror")

# (repository, short label, ref patterns): every branch and tag of the Ascend frameworks; of
# Megatron-LM its release branches and tags (core_r*, core_v*: MindSpeed builds on them) and main.
SOURCES: Tuple[Tuple[str, str, Tuple[str, ...]], ...] = (
    ("Ascend/MindSpeed", "MindSpeed", ("refs/heads/*", "refs/tags/*")),
    ("Ascend/MindSpeed-LLM", "LLM", ("refs/heads/*", "refs/tags/*")),
    ("Ascend/MindSpeed-MM", "MM", ("refs/heads/*", "refs/tags/*")),
    ("Ascend/MindSpeed-RL", "RL", ("refs/heads/*", "refs/tags/*")),
    ("NVIDIA/Megatron-LM", "Megatron", ("refs/heads/core_r*", "refs/heads/main", "refs/tags/core_r*",
                                        "refs/tags/core_v*")),
)

FACTORY = "ArgumentGroupFactory"


class Git:
    def __init__(self, git_dir: str):
        self.git_dir = git_dir

    def run(self, *args: str, ok_codes=(0,)) -> bytes:
        proc = subprocess.run(["git", "--git-dir", self.git_dir, *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        if proc.returncode not in ok_codes:
            raise SystemExit(f"git {' '.join(args)} in {self.git_dir}: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout

    def refs(self, patterns: Iterable[str]) -> List[Tuple[str, str]]:
        """``(refname, commit)`` of the refs matching *patterns*, sorted by name."""
        out = []
        lines = self.run("for-each-ref", "--format=%(refname) %(objectname) %(*objectname)").decode().splitlines()
        for line in lines:
            parts = line.split()
            name, obj = parts[0], parts[-1]  # a tag's peeled commit is the last field
            if any(fnmatch.fnmatchcase(name, p) for p in patterns):
                out.append((name, obj))
        return sorted(out)

    def grep_files(self, commit: str, *patterns: str) -> List[str]:
        args = ["grep", "-l", "-I"]
        for p in patterns:
            args += ["-e", p]
        raw = self.run(*args, commit, "--", "*.py", ok_codes=(0, 1)).decode("utf-8", "surrogateescape")
        return sorted(line.split(":", 1)[1] for line in raw.splitlines() if ":" in line)

    def blobs(self, commit: str, paths: List[str]) -> Dict[str, str]:
        """path -> blob id (present blobs only)."""
        if not paths:
            return {}
        out = {}
        raw = self.run("ls-tree", "-z", commit, "--", *paths).decode("utf-8", "surrogateescape")
        for entry in raw.split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            mode, kind, sha = meta.split()
            if kind == "blob" and mode != "120000":
                out[path] = sha
        return out

    def read(self, shas: List[str]) -> Dict[str, Optional[bytes]]:
        if not shas:
            return {}
        proc = subprocess.Popen(["git", "--git-dir", self.git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE)
        out: Dict[str, Optional[bytes]] = {}
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(s + "\n" for s in shas).encode())
        proc.stdin.close()
        for sha in shas:
            header = proc.stdout.readline().split()
            if len(header) < 3 or header[1] == b"missing":
                out[sha] = None  # a large file the mirror leaves out
                continue
            size = int(header[2])
            out[sha] = proc.stdout.read(size)
            proc.stdout.read(1)
        proc.wait()
        return out


# ------------------------------------------------------------------------------ one file


class FileFlags:
    __slots__ = ("flags", "uncertain", "factories", "classes")

    def __init__(self):
        self.flags: Dict[str, int] = {}
        self.uncertain: List[int] = []
        self.factories: Set[str] = set()  # names passed to ArgumentGroupFactory(...)
        self.classes: Dict[str, Tuple[List[str], Dict[str, int]]] = {}  # class -> (bases, field flags)


def read_file(data: bytes) -> FileFlags:
    out = FileFlags()
    text = data.decode("utf-8", "replace")
    tree = parse(text)
    if tree is None:
        # syntax this Python cannot parse (newer f-strings): each call alone, literals only
        literal = _Resolver(None)
        for line, call in calls_in_text(text):
            if call is None:
                out.uncertain.append(line)
                continue
            flags, complete = call_flags(call, literal)
            for f in flags:
                out.flags.setdefault(f, line)
            if not complete:
                out.uncertain.append(line)
        return out
    out.flags, out.uncertain = flags_in_tree(tree)
    factory_names = {FACTORY}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(_name(b) == FACTORY for b in node.bases):
            factory_names.add(node.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) in factory_names and node.args:
            n = _name(node.args[0])
            if n:
                out.factories.add(n)
        elif isinstance(node, ast.ClassDef):
            out.classes[node.name] = ([_name(b) for b in node.bases if _name(b)], _field_flags(node))
    return out


def _name(expr) -> Optional[str]:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Subscript):  # Generic[T] and the like
        return _name(expr.value)
    return None


def _field_flags(node: ast.ClassDef) -> Dict[str, int]:
    """The flags ArgumentGroupFactory would make of a (data)class's own fields: ``--a-b`` for
    field ``a_b``, ``--no-a-b``/``--disable-a-b`` too for a bool, and any ``arg_names`` of the
    field's metadata. Every annotated field is taken (``exclude=`` lists are not read)."""
    out: Dict[str, int] = {}
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        ann = ast.unparse(stmt.annotation) if hasattr(ast, "unparse") else ""
        if "ClassVar" in ann or "InitVar" in ann:
            continue
        base = "--" + stmt.target.id.replace("_", "-")
        names = [base]
        if re.search(r"\bbool\b", ann):
            names += ["--no-" + base[2:], "--disable-" + base[2:]]
        if stmt.value is not None:
            for sub in ast.walk(stmt.value):
                if isinstance(sub, ast.Dict):
                    for k, v in zip(sub.keys, sub.values):
                        if isinstance(k, ast.Constant) and k.value == "arg_names" and isinstance(
                                v, (ast.List, ast.Tuple)):
                            names += [e.value for e in v.elts if isinstance(e, ast.Constant)
                                      and isinstance(e.value, str)]
        for f in names:
            if is_flag(f):
                out.setdefault(f, stmt.lineno)
    return out


# ---------------------------------------------------------------------------- the sources


class Result:
    def __init__(self):
        self.refs: List[Tuple[str, str, str]] = []  # (repository, refname, commit)
        # flag -> {(repository, path, line): the first commit read that has it there}
        self.where: Dict[str, Dict[Tuple[str, str, int], str]] = {}
        self.labels: Dict[str, Set[str]] = {}
        self.uncertain: Set[Tuple[str, str, int]] = set()
        # commit -> flag -> the files that register it there
        self.by_commit: Dict[str, Dict[str, Set[str]]] = {}

    def add(self, flag: str, repo: str, label: str, path: str, line: int, commit: str) -> None:
        self.where.setdefault(flag, {}).setdefault((repo, path, line), commit)
        self.labels.setdefault(flag, set()).add(label)
        self.by_commit.setdefault(commit, {}).setdefault(flag, set()).add(path)


def collect(sources, mirrors: Dict[str, str], log=None) -> Result:
    """Read every source: ``sources`` as in SOURCES, ``mirrors`` repository -> git dir."""
    result = Result()
    for repo, label, patterns in sources:
        git = Git(mirrors[repo])
        refs = git.refs(patterns)
        cache: Dict[str, FileFlags] = {}  # blob -> what it registers
        done_commits: Set[str] = set()
        for refname, commit in refs:
            result.refs.append((repo, refname, commit))
            if commit in done_commits:
                continue
            done_commits.add(commit)
            if log:
                log(f"{repo} {refname} {commit[:12]}")
            paths = git.grep_files(commit, "add_argument", FACTORY)
            files = _read_files(git, commit, paths, cache)
            for path, ff in sorted(files.items()):
                for flag, line in ff.flags.items():
                    result.add(flag, repo, label, path, line, commit)
                for line in ff.uncertain:
                    result.uncertain.add((repo, path, line))
            wanted = set().union(*(ff.factories for ff in files.values())) if files else set()
            if wanted:
                _factory_flags(git, commit, wanted, cache, result, repo, label)
    return result


def _read_files(git: Git, commit: str, paths: List[str], cache: Dict[str, FileFlags]) -> Dict[str, FileFlags]:
    blobs = git.blobs(commit, paths)
    todo = sorted({sha for sha in blobs.values() if sha not in cache})
    for sha, data in git.read(todo).items():
        cache[sha] = read_file(data) if data is not None else FileFlags()
    return {path: cache[sha] for path, sha in blobs.items()}


def _factory_flags(git: Git, commit: str, wanted: Set[str], cache, result: Result, repo: str, label: str) -> None:
    """Flags of the dataclasses given to ArgumentGroupFactory and of their bases (classes
    found by name anywhere in the tree; every class of that name counts)."""
    seen: Set[str] = set()
    while wanted - seen:
        names = sorted(wanted - seen)
        seen |= set(names)
        pattern = r"^\s*class (" + "|".join(re.escape(n) for n in names) + r")\b"
        paths = [p for p in _grep_e(git, commit, pattern)]
        files = _read_files(git, commit, paths, cache)
        for path, ff in sorted(files.items()):
            for cls in names:
                if cls in ff.classes:
                    bases, fields = ff.classes[cls]
                    for flag, line in fields.items():
                        result.add(flag, repo, label, path, line, commit)
                    wanted |= set(bases)


def _grep_e(git: Git, commit: str, pattern: str) -> List[str]:
    raw = git.run("grep", "-l", "-I", "-E", "-e", pattern, commit, "--", "*.py", ok_codes=(0, 1))
    return sorted(line.split(":", 1)[1] for line in raw.decode("utf-8", "surrogateescape").splitlines()
                  if ":" in line)


# ------------------------------------------------------------------------------ the file


def render(result: Result, sources) -> str:
    order = [label for _, label, _ in sources]
    out = [
        "# npulint known flags (NPU502): every --flag that an add_argument call registers in a Python file of",
        "# one of the sources below, plus the fields Megatron-LM's ArgumentGroupFactory turns into flags.",
        "# Generated by tools/gen_known_flags.py; do not edit by hand (run it again).",
        "# After each flag: the repositories that register it (" + ", ".join(
            f"{label} = {repo}" for repo, label, _ in sources) + ").",
        "#",
        "# Sources (repository, ref, commit):",
    ]
    for repo, ref, commit in result.refs:
        out.append(f"#   {repo} {ref} {commit}")
    flags = sorted(result.where)
    out.append(f"# {len(flags)} flags.")
    for f in flags:
        labels = " ".join(sorted(result.labels[f], key=order.index))
        out.append(f"{f}\t# {labels}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------- the parsers a launch runs

# MindSpeed's legacy parser: ``process_args`` of mindspeed/arguments.py adds its flags to
# Megatron's parser only where that module's ``parse_args_wrapper`` wraps Megatron's
# ``parse_args``. Each MindSpeed release patches ``parse_args`` once: the core_r0.8.0 releases
# with the legacy wrapper (``megatron_training_adaptation_l0``, run by ``exe_adaptation`` when
# ``--optimization-level`` >= 0, its default 2), the *_core_r0.12.1 releases and master with the
# feature manager's (``mindspeed.core.megatron_basic.arguments_basic``: the features'
# ``register_args``); there ``process_args`` only feeds the side parser MindSpeed reads its own
# options with (``get_mindspeed_args``, ``parse_known_args``), and the training's pretrain
# decorators (auto-settings, auto-pipeline), not every launch. A framework on a MindSpeed that
# wires it may still replace ``process_args`` before the adaptor runs: MindSpeed-LLM 2.0.0/2.1.0
# register a dummy whose ``--optimization-level`` defaults to -1, so the wiring never happens.
# The legacy parser's registrations are thus a part of their own in the release data, which a
# stack's parser takes only when it runs it (``stack_parts``; docs/releases.md).
LEGACY_PARSER = "mindspeed/arguments.py"
LEGACY_MODULE = "mindspeed.arguments"
PARSE_ARGS_PATCH = r"""['"]megatron\.training\.arguments\.parse_args['"]"""
PROCESS_ARGS_PATCH = r"""['"]mindspeed\.arguments\.process_args['"]"""
PACKAGES = {"mindspeed": "mindspeed/", "mindspeed-llm": "mindspeed_llm/", "mindspeed-mm": "mindspeed_mm/"}


def _cite(repo: str, commit: str, path: str, line: int) -> str:
    return f"{repo}@{commit[:8]} {path}:{line}"


def _grep_lines(git: Git, commit: str, pattern: str, under: str) -> List[Tuple[str, int]]:
    """``(path, line)`` of the lines of the Python files under *under* that match *pattern*."""
    raw = git.run("grep", "-n", "-I", "-E", "-e", pattern, commit, "--", "*.py", ok_codes=(0, 1))
    out = []
    for hit in raw.decode("utf-8", "surrogateescape").splitlines():
        _, path, line, _ = hit.split(":", 3)
        if path.startswith(under):
            out.append((path, int(line)))
    return sorted(out)


def _module_of(path: str, level: int, module: Optional[str]) -> str:
    """The module an ``from <dots><module> import`` in the file *path* names."""
    if not level:
        return module or ""
    parts = path[:-len(".py")].split("/")[:-1]  # the file's package
    parts = parts[:len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


def legacy_wired(git: Git, repo: str, commit: str) -> Tuple[bool, str]:
    """Whether the MindSpeed release at *commit* wraps Megatron's ``parse_args`` with the legacy
    parser's wrapper, and the line that patches it: the one ``register_patch`` of
    ``megatron.training.arguments.parse_args`` in the package, whose wrapper is the name the
    nearest import above it brings (relative imports resolved)."""
    hits = _grep_lines(git, commit, PARSE_ARGS_PATCH, PACKAGES["mindspeed"])
    if len(hits) != 1:
        raise SystemExit(f"gen_known_flags: {repo}@{commit[:8]} patches Megatron's parse_args at "
                         f"{hits or 'no line'}, not at one: decide its parser by hand")
    path, line = hits[0]
    tree = ast.parse(git.run("show", f"{commit}:{path}").decode("utf-8", "replace"))
    wrapper = next((node.args[1].id for node in ast.walk(tree) if isinstance(node, ast.Call)
                    and node.lineno == line and len(node.args) == 2 and isinstance(node.args[1], ast.Name)), None)
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.lineno < line
               and any((a.asname or a.name) == wrapper for a in node.names)]
    if wrapper is None or not imports:
        raise SystemExit(f"gen_known_flags: {_cite(repo, commit, path, line)}: which wrapper? decide by hand")
    source = max(imports, key=lambda node: node.lineno)
    return _module_of(path, source.level, source.module) == LEGACY_MODULE, _cite(repo, commit, path, line)


def legacy_parser_runs(mirrors: Dict[str, str], commits: Dict[str, Tuple[str, str]],
                       pairs: Dict[str, str]) -> Dict[str, Tuple[bool, str, str]]:
    """For each stack release of RELEASE_REFS (``framework@release``; *commits* maps it to its
    repository and commit, *pairs* a MindSpeed-LLM/-MM release to its MindSpeed): whether a
    launch's parser runs MindSpeed's legacy parser there, the MindSpeed release whose legacy
    parser it is, and the line that decides it. A
    MindSpeed-LLM/-MM stack runs it when its MindSpeed wires it and the framework does not
    replace ``process_args`` (a ``register`` of ``mindspeed.arguments.process_args`` in its
    package). A stack whose MindSpeed is not modelled has no entry."""
    gits = {repo: Git(mirrors[repo]) for repo, _ in commits.values()}
    out: Dict[str, Tuple[bool, str, str]] = {}
    for stack, (repo, commit) in commits.items():
        fw = stack.partition("@")[0]
        if fw != "mindspeed":
            continue
        wired, where = legacy_wired(gits[repo], repo, commit)
        out[stack] = (wired, stack, ("runs it: " if wired else "not run: parse_args is patched with another "
                                                                "wrapper, ") + where)
    for stack, (repo, commit) in commits.items():
        fw = stack.partition("@")[0]
        if fw not in PACKAGES or fw == "mindspeed" or pairs.get(stack) not in out:
            continue
        ms = pairs[stack]
        wired, _, where = out[ms]
        where = where.partition(": ")[2]
        if not wired:
            out[stack] = (False, ms, f"not run on its MindSpeed ({ms}): {where}")
            continue
        replaced = _grep_lines(gits[repo], commit, PROCESS_ARGS_PATCH, PACKAGES[fw])
        if replaced:
            out[stack] = (False, ms, "not run: it replaces mindspeed.arguments.process_args, "
                          + _cite(repo, commit, *replaced[0]))
        else:
            out[stack] = (True, ms, f"runs it: its MindSpeed's ({ms}), {where}")
    return out


def release_commits(result: Result) -> Dict[str, Tuple[str, str]]:
    """``framework@ref`` -> (repository, commit) for RELEASE_REFS (a tag's commit when the branch
    is absent), in their order."""
    commits = {}
    for repo, ref, commit in result.refs:
        for prefix in ("refs/heads/", "refs/tags/"):
            if ref.startswith(prefix):
                commits.setdefault((repo, ref[len(prefix):]), commit)
    out = {}
    for fw, repo, ref in RELEASE_REFS:
        commit = commits.get((repo, ref))
        if commit is None:
            raise SystemExit(f"gen_known_flags: {repo} has no ref {ref}")
        out[f"{fw}@{ref}"] = (repo, commit)
    return out


def render_releases(result: Result, commits: Dict[str, Tuple[str, str]],
                    legacy: Dict[str, Tuple[bool, str, str]]) -> str:
    """``{"refs": {name: commit}, "legacy_parser": {stack: decision}, "stack_parts": {stack:
    [name]}, "flags": {flag: [index of each ref that registers it]}}``: a flag's releases, for the
    refs in RELEASE_REFS (*commits*, :func:`release_commits`); a MindSpeed ref's flags leave out
    those only its legacy parser registers, which are a ref of their own (``<ref> <file>``) that
    the stacks running it (*legacy*, :func:`legacy_parser_runs`) take too."""
    import json

    names = list(commits)
    order = [commit for _, commit in commits.values()]
    parts = {stack: [f"{ms} {LEGACY_PARSER}"] for stack, (runs, ms, _) in legacy.items() if runs}
    for ms in sorted({ms for runs, ms, _ in legacy.values() if runs}, key=names.index):
        names.append(f"{ms} {LEGACY_PARSER}")
        order.append(commits[ms][1])
    flags: Dict[str, List[int]] = {}
    for i, (name, commit) in enumerate(zip(names, order)):
        legacy_part = name.endswith(" " + LEGACY_PARSER)
        for flag, paths in result.by_commit.get(commit, {}).items():
            if legacy_part:
                counts = LEGACY_PARSER in paths
            elif name.startswith("mindspeed@"):
                counts = bool(paths - {LEGACY_PARSER})
            else:
                counts = True
            if counts:
                flags.setdefault(flag, []).append(i)
    doc = {"generated_by": "tools/gen_known_flags.py", "refs": dict(zip(names, order)),
           "legacy_parser": {s: legacy[s][2] for s in commits if s in legacy},
           "stack_parts": parts, "flags": {f: flags[f] for f in sorted(flags)}}
    return json.dumps(doc, indent=0, sort_keys=False, separators=(",", ":")) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", default=DEFAULT_MIRRORS,
                    help="folder of bare mirrors, one per repository: MIRRORS/<owner>+<name>/repo")
    ap.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=GITDIR",
                    help="read this repository from GITDIR instead (repeatable); with --only, only these")
    ap.add_argument("--only", action="store_true", help="read only the repositories given with --repo")
    ap.add_argument("--output", default=OUTPUT)
    ap.add_argument("--release-output", default=RELEASE_OUTPUT,
                    help="where the flags of each release go (not written with --only)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the output file differs")
    ap.add_argument("--where", metavar="FLAG", help="print where FLAG is registered, then stop")
    ap.add_argument("--uncertain", action="store_true",
                    help="also list (on stderr) add_argument calls whose option strings were not all certain")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)

    given = {}
    for spec in args.repo:
        name, sep, path = spec.partition("=")
        if not sep:
            ap.error(f"--repo wants OWNER/NAME=GITDIR, not {spec!r}")
        given[name] = path
    sources = [s for s in SOURCES if not args.only or s[0] in given]
    for name in given:
        if name not in {s[0] for s in SOURCES}:
            sources.append((name, name.split("/")[-1], ("refs/heads/*", "refs/tags/*")))
    mirrors = {}
    for repo, _, _ in sources:
        mirrors[repo] = given.get(repo) or os.path.join(args.mirrors, repo.replace("/", "+"), "repo")
        if not os.path.isdir(mirrors[repo]):
            print(f"gen_known_flags: no git mirror of {repo} at {mirrors[repo]}", file=sys.stderr)
            return 2

    log = (lambda msg: print(msg, file=sys.stderr)) if args.verbose else None
    result = collect(sources, mirrors, log)
    if args.where:
        for (repo, path, line), commit in sorted(result.where.get(args.where, {}).items()):
            print(f"{repo}@{commit[:12]} {path}:{line}")
        return 0 if args.where in result.where else 1
    if args.uncertain:
        for repo, path, line in sorted(result.uncertain):
            print(f"uncertain: {repo} {path}:{line}", file=sys.stderr)
    outputs = [(args.output, render(result, sources))]
    if not args.only:
        from npulint.releases import mindspeed_data

        commits = release_commits(result)
        legacy = legacy_parser_runs(mirrors, commits, mindspeed_data().get("pairs", {}))
        outputs.append((args.release_output, render_releases(result, commits, legacy)))
    if args.check:
        stale = []
        for path, text in outputs:
            try:
                with open(path, encoding="utf-8") as fh:
                    if fh.read() != text:
                        stale.append(path)
            except OSError:
                stale.append(path)
        for path in stale:
            print(f"{path} is not what the sources give: run tools/gen_known_flags.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    print(f"{args.output}: {len(result.where)} flags from {len(result.refs)} refs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
