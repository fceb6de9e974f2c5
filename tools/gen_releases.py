#!/usr/bin/env python3
"""Regenerate rules/mindspeed_releases.json: in which stack releases each MindSpeed catalog entry holds.

Standard library only. Upstream code is read through ``git`` from the bare mirrors (never imported,
never copied): only ``Owner/Repo@<sha8> path:line`` citations go into the output.

Usage::

    python tools/gen_releases.py            # writes rules/mindspeed_releases.json
    python tools/gen_releases.py --check    # exit 1 if the file on disk differs
    python tools/gen_releases.py --report   # also print per-entry / per-stack notes to stderr

How it works
------------
1. *Anchors.*  Every ``file:line`` citation in ``Entry.source`` (``MS@master mindspeed/arguments.py:728``,
   ``(MS@core010 :765-766)``, ``:39,44-45`` ...) is read at the cited ref's commit.  The cited lines,
   normalised (comments and whitespace dropped), are the anchor's *fingerprint*: the check's condition
   and its raise/assert.  An entry whose citation cannot be used gets a hand-written anchor in
   ``EXTRA_ANCHORS`` below (with the reason).  Several anchors of one entry are alternative forms of the
   same check (the legacy validator's assert and the feature's ``incompatible_check``, say).
2. *Finding the check in a release.*  For each stack release, every ``.py`` file of the code that
   release runs (MindSpeed at the paired commit, MindSpeed-LLM / MindSpeed-MM at the release commit,
   Megatron's ``arguments.py``) is indexed by normalised line.  A fingerprint matches where all its
   lines occur in one file, in order, each within ``MAX_GAP`` lines of the previous one (lines cited
   together within ``GROUP_SLACK`` lines more than in the cited source).  This tolerates line moves
   and file renames, and nothing else: a changed condition or message (an inverted check) does not
   match, so the entry does not hold there.  A feature's own ``incompatible_check`` /
   ``dependency_check`` line matches only in a class whose feature is one of the entry's flags.
3. *Activation.*  A match counts only inside code that the stack release executes at start-up:
   the registered validator function and the module functions it calls (transitively), and the
   validation methods of the feature classes in the feature list that stack uses (plus inherited
   ones).  Which validators are registered per stack release is the table ``STACK_VALIDATORS``; its
   evidence citations are located by ``EVIDENCE`` patterns (so a line move is followed) and written
   into the output's ``validators`` section.

4. *Aliases.*  Validator lines ``args.D = args.S`` between two flags' attributes, with their ``if``
   tests as catalog conditions, and per entry and stack release whether one onto the entry's flags
   runs before the check (``aliases``, ``entry_aliases``; docs/releases.md "Flag aliases").

5. *Versions.*  ``versions`` is what each release declares (``setup.py`` ``__version__`` of MindSpeed and
   MindSpeed-LLM, ``pyproject.toml`` ``version`` of MindSpeed-MM).  ``master_versions`` adds master's
   history of that file (``git log --first-parent``: the periods during which master declared each
   version) and ``branch_points`` each release's ``git merge-base`` with master: a tree declaring a
   version may also run the releases branched while master declared it, the neighbours branched
   last before and first after the period, and master while it still declares it; a version master
   declared before any known release was branched names every release (such a snapshot is older
   than all of them) (:func:`master_history`).

Activation facts (verified from the source; line numbers are recomputed on every run, see the
JSON ``validators.*.evidence``):

* MindSpeed core_r0.8.0 releases (2.0.0_core_r0.8.0, 2.1.0_core_r0.8.0): ``import mindspeed.megatron_adaptor``
  runs ``exe_adaptation()`` at import; with the default ``--optimization-level`` (2) it calls
  ``adaptation_l0`` -> ``megatron_training_adaptation_l0``, which registers the legacy
  ``mindspeed.arguments.validate_args_wrapper`` over Megatron's ``validate_args``.  That wrapper also
  runs ``validate_args`` of the (short) ``mindspeed/features_manager/__init__.py`` FEATURES_LIST.
* MindSpeed core_r0.12.1 releases and master: ``megatron_adaptor.patch_features()`` only applies
  ``MindSpeedFeaturesManager`` features; ``MegatronBasicFeature.register_patches`` registers
  ``mindspeed.core.megatron_basic.arguments_basic.validate_args_wrapper`` (pre-validate, Megatron,
  post-validate, validate of every feature of ``create_features_list()``).  ``mindspeed/arguments.py``'s
  legacy validator is not registered there.
* MindSpeed-LLM 2.0.0 / 2.1.0: ``MegatronAdaptation.pre_execute._by_pass_ms_core`` replaces
  ``mindspeed.arguments.process_args`` by a dummy parser whose ``--optimization-level`` defaults to -1
  *before* ``mindspeed.megatron_adaptor`` is imported; that import's ``exe_adaptation()`` then skips
  ``adaptation_l0`` (``if mindspeed_args.optimization_level >= 0``), so MindSpeed's legacy validator is
  never registered.  (So the issue text is right and the old docs, "2.0.0 runs it through
  exe_adaptation()", were wrong: exe_adaptation runs, but registers nothing for validation.)
  MindSpeed-LLM's own monolith ``mindspeed_llm/training/arguments.py:validate_args_decorator`` is
  registered instead; in 2.1.0 it also runs ``validate_args`` of MindSpeed-LLM's small FEATURES_LIST
  and, from ``_validate_dualpipe_args``, MindSpeed's ``FwdBwdOverlapFeature`` / ``DualpipeVFeature``.
* MindSpeed-LLM >= 2.2.0: ``mindspeed_llm/__init__.py`` imports ``megatron_adaptor_v2``; the feature list
  is ``mindspeed_llm.features_manager.create_features_list()`` (set with
  ``MindSpeedFeaturesManager.set_features_list``), validated by ``validate_args_v2_decorator``
  (registered by MindSpeed-LLM's ``MegatronBasicFeature``).  The monolith helpers still exist but the
  old adaptor that registers them is not imported.
* MindSpeed-MM: the entry scripts ``import mindspeed.megatron_adaptor``; ``mindspeed_mm/patchs/validate_args_patch.py``
  force-patches Megatron's ``validate_args`` with MM's own copy and registers MindSpeed's *legacy*
  ``mindspeed.arguments.validate_args_wrapper`` on ``mindspeed_mm.patchs.validate_args_patch.validate_args``.
  With a core_r0.8.0 MindSpeed (MM 2.0.0, 2.1.0) the legacy wrapper is already a wrapper of the
  Megatron patch, so it runs around MM's validate_args.  With a feature-manager MindSpeed (MM >= 2.2.0)
  the Megatron patch (registered first, at ``import mindspeed.megatron_adaptor``) ends up as
  ``arguments_basic.validate_args_wrapper(MM validate_args)``; the legacy wrapper only replaces the
  module attribute ``validate_args_patch.validate_args``, which Megatron does not call, so the legacy
  checks do not run (``Patch.apply_patch`` in ``mindspeed/patch_utils.py``).  MindSpeed's own feature
  list (``create_features_list()``) is validated.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import json
import os
import re
import subprocess
import sys
from functools import lru_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rules.mindspeed_catalog import CATALOG, value_flags  # noqa: E402  (our own data, not upstream code)

OUT = os.path.join(ROOT, "rules", "mindspeed_releases.json")
MIRRORS = os.environ.get("NPULINT_MIRRORS", "/work/.mirror")

MS, LLM, MM, MEG = "Ascend/MindSpeed", "Ascend/MindSpeed-LLM", "Ascend/MindSpeed-MM", "NVIDIA/Megatron-LM"
REPO_DIRS = {MS: "Ascend+MindSpeed", LLM: "Ascend+MindSpeed-LLM", MM: "Ascend+MindSpeed-MM", MEG: "NVIDIA+Megatron-LM"}
PACKAGE = {MS: "mindspeed/", LLM: "mindspeed_llm/", MM: "mindspeed_mm/", MEG: "megatron/training/arguments.py"}
MODULE_REPO = {"mindspeed": MS, "mindspeed_llm": LLM, "mindspeed_mm": MM, "megatron": MEG}

MS_RELEASES = ["2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0", "2.1.0_core_r0.12.1", "2.2.0_core_r0.12.1",
               "2.3.0_core_r0.12.1", "26.0.0_core_r0.12.1", "26.1.0_core_r0.12.1", "master"]
LLM_RELEASES = ["2.0.0", "2.1.0", "2.2.0", "2.3.0", "26.0.0", "26.1.0", "master"]
MM_RELEASES = ["2.0.0", "2.1.0", "2.2.0", "2.3.0", "26.0.0", "26.1.0", "master"]
# Megatron the MindSpeed release is built for (MindSpeed setup.py __version__ 0.8.0 / 0.12.1; install
# guides check out Megatron core_r0.8.0 / core_v0.12.1).  The tag core_v0.8.0 is used for r0.8.0
# ("core_r0.8.0" is ambiguous in the Megatron mirror).
MEG_REFS = {"core_v0.8.0": "core_v0.8.0^{commit}", "core_v0.12.1": "core_v0.12.1^{commit}"}


def meg_for(ms_release):
    return "core_v0.8.0" if "r0.8.0" in ms_release else "core_v0.12.1"


# Pairing of MindSpeed-LLM / MindSpeed-MM releases with a MindSpeed release, from each release's
# install documentation (``git checkout`` of MindSpeed).  Where the doc pins a commit, the pair is the
# listed MindSpeed release branch that contains that commit (checked with git merge-base below).
# (stack, MindSpeed release, doc repo, doc path, regex of the doc line, pinned commit or None)
PAIRS = [
    ("mindspeed-llm@2.0.0", "2.0.0_core_r0.8.0", LLM, "docs/features/install_guide.md", r"git checkout 2\.0\.0_core_r0\.8\.0", None),
    ("mindspeed-llm@2.1.0", "2.1.0_core_r0.8.0", LLM, "docs/pytorch/install_guide.md", r"git checkout 2c085cc9", "2c085cc9"),
    ("mindspeed-llm@2.2.0", "2.2.0_core_r0.12.1", LLM, "docs/pytorch/install_guide.md", r"git checkout 2\.2\.0_core_r0\.12\.1", None),
    ("mindspeed-llm@2.3.0", "2.3.0_core_r0.12.1", LLM, "docs/pytorch/install_guide.md", r"git checkout 2\.3\.0_core_r0\.12\.1", None),
    ("mindspeed-llm@26.0.0", "26.0.0_core_r0.12.1", LLM, "docs/zh/pytorch/training/install_guide.md", r"git checkout 26\.0\.0_core_r0\.12\.1", None),
    ("mindspeed-llm@26.1.0", "26.1.0_core_r0.12.1", LLM, "docs/zh/pytorch/training/install_guide.md", r"git checkout 26\.1\.0_core_r0\.12\.1", None),
    ("mindspeed-llm@master", "master", LLM, "docs/zh/pytorch/training/install_guide.md", r"git checkout master", None),
    ("mindspeed-mm@2.0.0", "2.0.0_core_r0.8.0", MM, "examples/hunyuanvideo/README.md", r"git checkout 6f11a6c9", "6f11a6c9"),
    ("mindspeed-mm@2.1.0", "2.1.0_core_r0.8.0", MM, "docs/user-guide/getting_start.md", r"git checkout 8db50131", "8db50131"),
    ("mindspeed-mm@2.2.0", "2.2.0_core_r0.12.1", MM, "docs/user-guide/getting_start.md", r"git checkout 5176c6f5", "5176c6f5"),
    ("mindspeed-mm@2.3.0", "2.3.0_core_r0.12.1", MM, "docs/user-guide/getting_start.md", r"git checkout 93c45456", "93c45456"),
    ("mindspeed-mm@26.0.0", "26.0.0_core_r0.12.1", MM, "docs/zh/pytorch/install_guide.md", r"git checkout 26\.0\.0_core_r0\.12\.1", None),
    ("mindspeed-mm@26.1.0", "26.1.0_core_r0.12.1", MM, "docs/zh/pytorch/install_guide.md", r"git checkout 26\.1\.0_core_r0\.12\.1", None),
    # MM master's install guide still checks out MindSpeed 26.0.0_core_r0.12.1
    ("mindspeed-mm@master", "26.0.0_core_r0.12.1", MM, "docs/zh/pytorch/install_guide.md", r"git checkout 26\.0\.0_core_r0\.12\.1", None),
]

# Refs of the catalog's citations (research/mindspeed-flags.md §0).
CITED_REFS = {
    "MS@master": (MS, "028de58ca629d035185b00ff7d1eb7eff4f7fd48"),
    "MS@200r08": (MS, "c721ce33e5995c2f2f8f91a433d726f2571053b7"),
    "MS@210r08": (MS, "1e898a29c7505860dc711295349472e8a9dd66f4"),
    "MS@230r12": (MS, "674226a15a8214cc0c78f986b0b89fbe6b879ba1"),
    "MS@core010": (MS, "341447fa2143949feb0ef6e4a276a7ad70cbe080"),
    "LLM@master": (LLM, "c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91"),
    "LLM@2.0.0": (LLM, "b626d239cd49b7e681a170ba8c3472f713596476"),
    "LLM@2.3.0": (LLM, "62d4640b977443db69121fcabf71ea40c98de063"),
    "MEG@0.12.1": (MEG, "a845aa7e12b3a117e24c2352b9e3e60bad2e3a17"),
    "MEG@0.8.0": (MEG, "baf94af3c667248865f23df73b9fb8e2395e6fd0"),
}

# Hand-written anchors, exact lines (not completed to statements): (ref, path, line groups) added to the parsed ones, keyed by a distinctive fragment of
# the entry's message (the key itself would hide what the anchor is for).  Reasons in comments.
EXTRA_ANCHORS = {
    # The source names the file only (argparse choices): the add_argument lines.
    "--context-parallel-kv-cache-policy must be one of": [
        ("MS@master", "mindspeed/features_manager/context_parallel/context_parallel_kv_cache.py", [[16, 17]])],
    "--moe-zero-memory must be one of": [
        ("MS@master", "mindspeed/features_manager/moe/moe_zero_memory.py", [[18, 19]])],
}

MAX_GAP = 80  # lines between consecutive fingerprint lines of one anchor
GROUP_SLACK = 3  # lines a release may add between two lines cited together (a comment, a blank line)
_SELF_CHECK = re.compile(r"self\.(incompatible|dependency)_check\(")
VALIDATION_METHODS_EXCLUDED = {"__init__", "register_args", "register_patches", "pre_register_patches"}


# --------------------------------------------------------------------------------------------- git
def repo_dir(repo):
    return os.path.join(MIRRORS, REPO_DIRS[repo], "repo")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo_dir(repo), *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


@lru_cache(maxsize=None)
def rev(repo, ref):
    return git(repo, "rev-parse", ref).strip()


@lru_cache(maxsize=None)
def show(repo, commit, path):
    try:
        return git(repo, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return None


@lru_cache(maxsize=None)
def py_files(repo, commit):
    """{path: text} of every .py file of the repository's package at commit (one git cat-file --batch)."""
    pkg = PACKAGE[repo]
    listing = git(repo, "ls-tree", "-r", commit, "--", pkg.rstrip("/"))
    entries = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        _mode, kind, sha = meta.split()
        if kind == "blob" and path.endswith(".py") and "/tests/" not in path:
            entries.append((path, sha))
    proc = subprocess.run(["git", "-C", repo_dir(repo), "cat-file", "--batch"],
                          input="".join(f"{sha}\n" for _, sha in entries).encode(), capture_output=True, check=True)
    data, pos, out = proc.stdout, 0, {}
    for path, _sha in entries:
        header_end = data.index(b"\n", pos)
        size = int(data[pos:header_end].split()[2])
        out[path] = data[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
        pos = header_end + 1 + size + 1
    return out


# ----------------------------------------------------------------------------------- normalising
_COMMENT = re.compile(r"\s+#[^'\"]*$")


def norm(line):
    s = _COMMENT.sub("", line.strip())
    if s.startswith("#"):
        return ""
    s = s.rstrip("\\").strip()
    s = re.sub(r"\s+", " ", s)
    s = re.sub(r"\s*([(),\[\]:=<>!+*/%-])\s*", r"\1", s)  # spacing around punctuation does not matter
    s = s.replace('"', "'")
    return s


def trivial(s):
    return len(re.sub(r"[^A-Za-z0-9]", "", s)) < 4 or s in {"else:", "try:", "pass", "return", "args"}


@lru_cache(maxsize=None)
def line_index(repo, commit):
    """normalised line -> [(path, lineno)] over the package's .py files at commit."""
    idx = {}
    for path, text in py_files(repo, commit).items():
        for i, raw in enumerate(text.splitlines(), 1):
            s = norm(raw)
            if s and not trivial(s):
                idx.setdefault(s, []).append((path, i))
    return idx


# --------------------------------------------------------------------------------------- anchors
CITE = re.compile(r"(?:(?P<ref>(?:MS|LLM|MEG|MM)@[\w.]+)\s*)?(?P<path>[\w./-]+\.py)?:(?P<lines>\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)")


def parse_lines(spec):
    groups = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        groups.append(list(range(int(a), int(b or a) + 1)))
    return groups


def parse_source(source):
    """[(ref, path, [[line, ...], ...])] from an Entry.source string."""
    out, ref, path = [], None, None
    for m in CITE.finditer(source):
        if m.group("ref"):
            ref = m.group("ref")
        if m.group("path"):
            path = m.group("path")
        if ref is None or path is None:
            continue
        # a path of the other repository under the previous ref ("(LLM@master's Feature calls it, mindspeed_llm/...:47)")
        for prefix, default in (("mindspeed_llm/", "LLM@master"), ("mindspeed/", "MS@master")):
            if path.startswith(prefix) and CITED_REFS[ref][0] != CITED_REFS[default][0]:
                ref = default
        if m.group("ref") and not m.group("path") and source[m.end("ref"):m.start("lines")].strip() != "":
            continue
        out.append((ref, path, parse_lines(m.group("lines"))))
    return out


def statement_lines(text, wanted):
    """The cited lines completed to whole statements: a cited line inside a raise/assert/call
    statement brings the whole statement (its full message) and, when that statement is the body of an
    ``if``, the ``if``'s condition; a cited line in an ``if`` header brings the whole condition.
    Returns (sorted line numbers, {line: enclosing class or function name})."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return sorted(wanted), {}
    parents, context = {}, {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    stmts = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    out = set()
    for n in wanted:
        inner = None
        for st in stmts:
            if isinstance(st, (ast.If, ast.While)) and st.test.lineno <= n <= st.test.end_lineno:
                cand = (st.test.lineno, st.test.end_lineno)
            elif isinstance(st, (ast.If, ast.While, ast.For, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef)):
                continue
            elif st.lineno <= n <= st.end_lineno:
                cand = (st.lineno, st.end_lineno)
            else:
                continue
            if inner is None or cand[1] - cand[0] < inner[1][1] - inner[1][0]:
                inner = (st, cand)
        if inner is None:
            out.add(n)
            continue
        st, (a, b) = inner
        out.update(range(a, b + 1))
        parent = parents.get(st)
        if isinstance(parent, ast.If) and st in parent.body and not (parent.test.lineno <= n <= parent.test.end_lineno):
            out.update(range(parent.test.lineno, parent.test.end_lineno + 1))
        ctx, node = None, st
        while node in parents:
            node = parents[node]
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and ctx is None or isinstance(node, ast.ClassDef):
                ctx = node.name
        for ln in range(a, b + 1):
            context[ln] = ctx
    return sorted(out), context


class Anchor:
    def __init__(self, ref, path, groups, origin):
        self.ref, self.path, self.groups, self.origin = ref, path, groups, origin
        self.repo, self.commit = CITED_REFS[ref]
        text = show(self.repo, self.commit, path)
        self.ok = text is not None
        lines = text.splitlines() if text else []
        cited = {n for g in groups for n in g if 1 <= n <= len(lines)}
        # hand anchors are exact lines (argparse calls whose help text changes between releases)
        full, ctx = statement_lines(text, cited) if text and origin != "hand" else (sorted(cited), {})
        self.context = {ctx.get(n) for n in cited} - {None}
        self.fingerprint = []  # [(normalised line, group index)]: contiguous runs are groups
        self.gaps = []  # lines from the previous fingerprint line in the same group (None: a new group)
        gi, prev = -1, None
        for n in full:
            s = norm(lines[n - 1])
            if not s or trivial(s):
                continue
            if prev is None or n - prev > 1:
                gi += 1
                self.gaps.append(None)
            else:
                self.gaps.append(n - prev)
            prev = n
            self.fingerprint.append((s, gi))
        self.raw = [lines[n - 1] for n in full]
        # ``self.incompatible_check(args, 'x')`` raises for the feature of the class it is in: it
        # is the entry's check only in a feature class whose feature_name is one of the entry's flags
        self.feature_check = any(_SELF_CHECK.search(s) for s, _ in self.fingerprint)
        literals = " ".join(re.findall(r"'([^']*)'", " ".join(s for s, _ in self.fingerprint)))
        # A fingerprint without a message of its own (``self.incompatible_check(args, 'x')``) can only be
        # recognised in the same file or the same class/function.
        self.generic = len(re.sub(r"[^A-Za-z]", "", literals)) < 20

    def __repr__(self):
        return f"{self.ref} {self.path}:{','.join(f'{g[0]}-{g[-1]}' for g in self.groups)}"


def entry_flags(entry):
    flags = set()

    def walk(c):
        if isinstance(c, tuple):
            for x in c:
                walk(x)
        elif isinstance(c, str) and c.startswith("--"):
            flags.add(c)
    walk(entry.a)
    walk(entry.b)
    return flags


def anchors_for(entry):
    found = [Anchor(ref, path, groups, "source") for ref, path, groups in parse_source(entry.source)]
    for fragment, extra in EXTRA_ANCHORS.items():
        if fragment in entry.message:
            found += [Anchor(ref, path, groups, "hand") for ref, path, groups in extra]
    return found


def anchor_mentions_entry(anchor, entry):
    text = " ".join(anchor.raw)
    for f in entry_flags(entry):
        name = f[2:]
        if name in text or name.replace("-", "_") in text:
            return True
    return False


# ---------------------------------------------------------------------------------------- matching
def _own_feature_name(node):
    """The ``feature_name=`` or first string argument of an ``__init__`` call in a class, as a flag."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__":
            named = [k.value for k in n.keywords if k.arg == "feature_name"]
            strings = named or [a for a in n.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if strings and isinstance(strings[0], ast.Constant) and isinstance(strings[0].value, str):
                return "--" + strings[0].value.replace("_", "-")
    return None


def feature_names(repo, commit, path, line):
    """The features (as flags) a method line of a feature class runs for: the class's own
    ``feature_name`` and those of its subclasses in the same file (a shared base class's
    ``validate_args``, ``RiPipeSchedulesFeature``); empty outside a class."""
    info = module_info(repo, commit, path)
    classes = info.classes if info else {}
    todo = [c for c, node in classes.items() if node.lineno <= line <= node.end_lineno]
    names, seen = set(), set()
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.add(c)
        names.add(_own_feature_name(classes[c]))
        todo += [s for s, node in classes.items()
                 if any(isinstance(b, ast.Name) and b.id == c for b in node.bases)]
    return names - {None}


def find_matches(anchor, repo, commit, flags=frozenset()):
    """[(path, line)] where the anchor's fingerprint occurs in repo@commit (cited line: first line of
    the anchor's last line group).  Lines of one group (contiguous in the cited source) must stay
    about as close as they are there (``GROUP_SLACK``); a feature's own check
    (:attr:`Anchor.feature_check`) matches only in a class whose feature is one of *flags*."""
    if not anchor.fingerprint:
        return []
    idx = line_index(repo, commit)
    first = idx.get(anchor.fingerprint[0][0], [])
    results = []
    for path, start in first:
        positions = {}
        pos_list = {s: sorted(n for p, n in idx.get(s, []) if p == path) for s, _ in anchor.fingerprint}
        cur, ok = start, True
        positions[0] = start
        for k, (s, gi) in enumerate(anchor.fingerprint[1:], 1):
            cands = pos_list[s]
            j = bisect.bisect_left(cands, cur)  # same line allowed (a fingerprint line may repeat)
            gap = MAX_GAP if anchor.gaps[k] is None else anchor.gaps[k] + GROUP_SLACK
            if j < len(cands) and cands[j] - cur <= gap:
                cur = cands[j]
                positions[k] = cur
            else:
                ok = False
                break
        if ok and anchor.generic and path != anchor.path:
            try:
                _, ctx = statement_lines(py_files(repo, commit)[path], {start})
                ok = bool(anchor.context & {ctx.get(start)})
            except KeyError:
                ok = False
        if ok and anchor.feature_check:
            ok = bool(feature_names(repo, commit, path, start) & flags)
        if ok:
            last_group = anchor.fingerprint[-1][1]
            k0 = min(k for k, (_, gi) in enumerate(anchor.fingerprint) if gi == last_group)
            results.append((path, positions[k0]))
    return results


# -------------------------------------------------------------------------------------- activation
class ModuleInfo:
    """Functions, classes and imports of one upstream file (parsed as text with ast)."""

    def __init__(self, text, path):
        self.tree = ast.parse(text)
        package = path.rsplit("/", 1)[0].split("/")  # the file's package (relative imports)
        self.funcs, self.classes, self.imports = {}, {}, {}
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.funcs[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[:len(package) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module
                for a in node.names:
                    self.imports[a.asname or a.name] = (module, a.name)


@lru_cache(maxsize=None)
def module_info(repo, commit, path):
    text = show(repo, commit, path)
    if text is None:
        return None
    try:
        return ModuleInfo(text, path)
    except SyntaxError:
        return None


def span(node):
    return set(range(node.lineno, node.end_lineno + 1))


def called_names(node):
    names, inst_calls = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Name):
                names.add(n.func.id)
            elif isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Call) \
                    and isinstance(n.func.value.func, ast.Name) and "validate" in n.func.attr:
                inst_calls.add(n.func.value.func.id)  # XFeature().validate_args(args)
        elif isinstance(n, ast.Name):
            names.add(n.id)
    return names, inst_calls


class Stack:
    def __init__(self, name, commits):
        self.name, self.commits = name, commits  # repo -> full sha
        self.active = {}  # (repo, path) -> set of lines (validator scope)
        self.gates = {}  # (repo, path, line) -> the attribute that gates its feature (gate_ok)
        self.parser = {}  # (repo, path) -> set of lines (argparse scope, for `choices` entries)
        self.seen_classes = set()

    def add(self, scope, repo, path, lines):
        scope.setdefault((repo, path), set()).update(lines)

    def resolve(self, module):
        repo = MODULE_REPO.get(module.split(".")[0])
        if repo is None or repo not in self.commits:
            return None, None
        base = module.replace(".", "/")
        for cand in (base + ".py", base + "/__init__.py"):
            if show(repo, self.commits[repo], cand) is not None:
                return repo, cand
        return None, None

    def resolve_name(self, repo, path, name):
        """(repo, path) of the module defining `name` as used in repo:path."""
        info = module_info(repo, self.commits[repo], path)
        if info is None:
            return None, None, name
        if name in info.classes or name in info.funcs:
            return repo, path, name
        if name in info.imports:
            module, orig = info.imports[name]
            r, p = self.resolve(module)
            if r is None:
                return None, None, name
            info2 = module_info(r, self.commits[r], p)
            if info2 and (orig in info2.classes or orig in info2.funcs):
                return r, p, orig
            if info2 and orig in info2.imports:  # re-exported from a package __init__
                return self.resolve_name(r, p, orig)
            return r, p, orig
        return None, None, name

    def add_function(self, repo, path, name, scope=None, done=None):
        """A validator function and the module functions it calls; feature classes it validates."""
        scope = self.active if scope is None else scope
        done = set() if done is None else done
        if (repo, path, name) in done:
            return
        done.add((repo, path, name))
        info = module_info(repo, self.commits[repo], path)
        if info is None or name not in info.funcs:
            raise SystemExit(f"{self.name}: no function {name} in {repo}:{path}")
        node = info.funcs[name]
        self.add(scope, repo, path, span(node))
        names, inst = called_names(node)
        for n in names:
            if n in info.funcs:
                self.add_function(repo, path, n, scope, done)
        gates = _instantiation_gates(node)
        for cls in inst:
            r, p, c = self.resolve_name(repo, path, cls)
            if r:
                self.add_gated(r, p, c, gates.get(cls))
        if "FEATURES_LIST" in names and "validate_args" in ast.unparse(node):
            r, p, _ = self.resolve_name(repo, path, "FEATURES_LIST")
            if r is None and "FEATURES_LIST" in info.imports:
                r, p = self.resolve(info.imports["FEATURES_LIST"][0])
            # ``for feature in FEATURES_LIST: if getattr(args, feature.feature_name, None) ...``
            # (MindSpeed's legacy validator, @1e898a29 mindspeed/arguments.py:1042-1046; MindSpeed-LLM
            # 2.0.0/2.1.0, @70116e9b mindspeed_llm/training/arguments.py:1532-1536): a feature of a
            # level above 0 validates only when the attribute its name gives is true
            gated = any(isinstance(n, ast.For) and isinstance(n.iter, ast.Name) and n.iter.id == "FEATURES_LIST"
                        and "feature.feature_name" in ast.unparse(n) for n in ast.walk(node))
            if r:
                self.add_feature_list(r, p, literal_only=True, gated=gated)

    def feature_identity(self, repo, path, cls):
        """(the attribute ``MindSpeedFeature`` makes of the name the class passes to
        ``super().__init__``, its optimization level), or None when the class does not say."""
        info = module_info(repo, self.commits[repo], path)
        node = info.classes.get(cls) if info else None
        init = next((m for m in node.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None) if node else None
        for n in ast.walk(init) if init else ():
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__" \
                    and isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name) \
                    and n.func.value.func.id == "super" and n.args and isinstance(n.args[0], ast.Constant) \
                    and isinstance(n.args[0].value, str):
                level = n.args[1] if len(n.args) > 1 else next(
                    (k.value for k in n.keywords if k.arg == "optimization_level"), ast.Constant(2))
                if not isinstance(level, ast.Constant) or not isinstance(level.value, int):
                    return None
                return n.args[0].value.strip().replace("-", "_"), level.value
        return None

    def gate_ok(self, repo, path, line, entry, attrs):
        """Whether a check at *line* can run for *entry*'s launches: not in a feature validated
        only when its name's attribute is true (:meth:`add_feature_list`), or the entry's
        condition turns that attribute's flag on (``--moe-unperm2-mem-optim-swap`` needs
        ``--moe-fb-overlap``: checked only within the fb-overlap feature, so never)."""
        gate = self.gates.get((repo, path, line))
        if gate is None:
            return True
        flag = attrs.get(gate, (None,))[0]
        if flag is None:
            return False  # (``high_availability``: no flag has that attribute)
        conds = entry.a[1:] if entry.a[0] == "all" else (entry.a,)
        # a condition that makes the flag's attribute true: on, or equal to (one of) truthy values
        return any(c[0] == "on" and c[1] == flag or c[0] == "eq" and c[1] == flag and bool(c[2]) or
                   c[0] == "in" and c[1] == flag and all(bool(v) for v in c[2]) for c in conds)

    def add_feature_list(self, repo, path, literal_only=False, gated=False):
        info = module_info(repo, self.commits[repo], path)
        nodes = []
        if not literal_only and "create_features_list" in info.funcs:
            todo, seen = ["create_features_list"], set()
            while todo:
                f = todo.pop()
                if f in seen or f not in info.funcs:
                    continue
                seen.add(f)
                nodes.append(info.funcs[f])
                todo += [n for n in called_names(info.funcs[f])[0] if n in info.funcs]
        else:
            for node in info.tree.body:
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FEATURES_LIST" for t in node.targets):
                    nodes.append(node)
        for node in nodes:
            for n in ast.walk(node):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id[:1].isupper():
                    r, p, c = self.resolve_name(repo, path, n.func.id)
                    if not r:
                        continue
                    ident = self.feature_identity(r, p, c) if gated else None
                    self.add_gated(r, p, c, ident[0] if ident is not None and ident[1] != 0 else None)

    def add_gated(self, repo, path, cls, gate):
        """:meth:`add_class`, the lines it adds validating only when the attribute *gate* is
        true (None: always)."""
        if gate is None:
            self.add_class(repo, path, cls)
            return
        before = {k: set(v) for k, v in self.active.items()}
        self.add_class(repo, path, cls)
        for k, lines in self.active.items():
            for ln in lines - before.get(k, set()):
                self.gates.setdefault((k[0], k[1], ln), gate)

    def add_class(self, repo, path, cls, overridden=frozenset()):
        key = (repo, path, cls, overridden)
        if key in self.seen_classes:
            return
        self.seen_classes.add(key)
        info = module_info(repo, self.commits[repo], path)
        if info is None or cls not in info.classes:
            return
        node = info.classes[cls]
        methods = {m.name: m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        supered = set()
        for name, m in methods.items():
            if name == "register_args":
                self.add(self.parser, repo, path, span(m))
            if name in VALIDATION_METHODS_EXCLUDED or name in overridden:
                continue
            self.add(self.active, repo, path, span(m))
            calls, _ = called_names(m)
            for c in calls:
                if c in info.funcs:
                    self.add_function(repo, path, c)
            if "super(" in ast.unparse(m):
                supered.add(name)
        hide = frozenset((set(overridden) | set(methods)) - supered)
        for b in node.bases:
            bname = b.id if isinstance(b, ast.Name) else getattr(b, "attr", None)
            if not bname or bname in ("MindSpeedFeature", "object"):
                continue
            r, p, c = self.resolve_name(repo, path, bname)
            if r:
                self.add_class(r, p, c, hide)

    def is_active(self, repo, path, line, kind):
        if line in self.active.get((repo, path), ()):
            return True
        if kind == "choices":
            return line in self.parser.get((repo, path), ()) or repo == MEG
        return False


# ------------------------------------------------------------------------------------ the stacks
# What each stack release registers (see the module docstring).  Roots:
#   ("func", repo, path, function)        a registered validator function
#   ("features", repo, path)              a feature list file (create_features_list() or FEATURES_LIST)
#   ("parser", repo, path, function)      a registered argument parser function (for `choices`)
LEGACY_VALIDATOR = ("func", MS, "mindspeed/arguments.py", "validate_args_wrapper")
LEGACY_PARSER = ("parser", MS, "mindspeed/arguments.py", "process_args")
MS_FEATURES = ("features", MS, "mindspeed/features_manager/__init__.py")
LLM_MONOLITH = ("func", LLM, "mindspeed_llm/training/arguments.py", "validate_args_decorator")
LLM_MONOLITH_PARSER = ("parser", LLM, "mindspeed_llm/training/arguments.py", "process_args")
LLM_FEATURES = ("features", LLM, "mindspeed_llm/features_manager/__init__.py")
MM_VALIDATOR = ("func", MM, "mindspeed_mm/patchs/validate_args_patch.py", "validate_args")


def stack_roots(stack):
    family, release = stack.split("@")
    if family == "mindspeed":
        return [LEGACY_VALIDATOR, LEGACY_PARSER] if "r0.8.0" in release else [MS_FEATURES]
    if family == "mindspeed-llm":
        return [LLM_MONOLITH, LLM_MONOLITH_PARSER] if release in ("2.0.0", "2.1.0") else [LLM_FEATURES]
    ms = dict((p[0], p[1]) for p in PAIRS)[stack]
    if "r0.8.0" in ms:
        return [MM_VALIDATOR, LEGACY_VALIDATOR, LEGACY_PARSER]
    return [MM_VALIDATOR, MS_FEATURES]


def validator_flags(stack, st):
    """Which validation paths run, from the roots and from the code found active."""
    roots = stack_roots(stack)
    return {
        "mindspeed-legacy": LEGACY_VALIDATOR in roots,
        "mindspeed-features": any(r == MS and p.startswith("mindspeed/features_manager/") for r, p in st.active),
        "llm-monolith": LLM_MONOLITH in roots,
        "llm-features": any(r == LLM and p.startswith("mindspeed_llm/features_manager/") for r, p in st.active),
    }


# Evidence for the activation facts: (stack family/release predicate, repo, path, regex); the first
# matching line at the stack's commit of that repo is cited.
EVIDENCE = [
    ("mindspeed@r0.8.0", MS, "mindspeed/megatron_adaptor.py", r"register_patch\('megatron\.training\.arguments\.validate_args', validate_args_wrapper\)"),
    ("mindspeed@r0.8.0", MS, "mindspeed/arguments.py", r"'--optimization-level', type=int, choices=\[0, 1, 2\], default=2"),
    ("mindspeed@r0.8.0", MS, "mindspeed/megatron_adaptor.py", r"if mindspeed_args\.optimization_level >= 0:"),
    ("mindspeed@r0.8.0", MS, "mindspeed/arguments.py", r"feature\.validate_args\(args\)"),
    ("mindspeed@r0.12.1", MS, "mindspeed/megatron_adaptor.py", r"MindSpeedFeaturesManager\.apply_features_patches\(mindspeed_args\)"),
    ("mindspeed@r0.12.1", MS, "mindspeed/features_manager/megatron_basic/megatron_basic.py", r"register_patch\('megatron\.training\.arguments\.validate_args', validate_args_wrapper\)"),
    ("mindspeed@r0.12.1", MS, "mindspeed/features_manager/__init__.py", r"def create_features_list"),
    ("mindspeed-llm@monolith", LLM, "mindspeed_llm/__init__.py", r"from mindspeed_llm\.tasks import megatron_adaptor"),
    ("mindspeed-llm@monolith", LLM, "mindspeed_llm/tasks/megatron_adaptor.py", r"group\.add_argument\('--optimization-level', type=int, default=-1\)"),
    ("mindspeed-llm@monolith", LLM, "mindspeed_llm/tasks/megatron_adaptor.py", r"register\('mindspeed\.arguments\.process_args', _process_args_dummy\)"),
    ("mindspeed-llm@monolith", LLM, "mindspeed_llm/tasks/megatron_adaptor.py", r"from mindspeed\.megatron_adaptor import"),
    ("mindspeed-llm@monolith", MS, "mindspeed/megatron_adaptor.py", r"if mindspeed_args\.optimization_level >= 0:"),
    ("mindspeed-llm@monolith", LLM, "mindspeed_llm/tasks/megatron_adaptor.py", r"register\('megatron\.training\.arguments\.validate_args', validate_args_decorator\)"),
    ("?mindspeed-llm@monolith", LLM, "mindspeed_llm/training/arguments.py", r"feature\.validate_args\(args\)"),
    ("?mindspeed-llm@monolith", LLM, "mindspeed_llm/training/arguments.py", r"(FwdBwdOverlapFeature|DualpipeVFeature)\(\)\.validate_args\(args\)"),
    ("mindspeed-llm@features", LLM, "mindspeed_llm/__init__.py", r"megatron_adaptor_v2"),
    ("mindspeed-llm@features", LLM, "mindspeed_llm/features_manager/__init__.py", r"MindSpeedFeaturesManager\.set_features_list\(create_features_list\(\)\)"),
    ("mindspeed-llm@features", LLM, "mindspeed_llm/features_manager/megatron_basic/megatron_basic.py", r"validate_args_v2_decorator\)"),
    ("mindspeed-llm@features", LLM, "mindspeed_llm/training/arguments.py", r"MindSpeedFeaturesManager\.validate_features_args\(args=args\)"),
    ("mindspeed-mm@*", MM, "pretrain_vlm.py", r"^import mindspeed\.megatron_adaptor"),
    ("mindspeed-mm@*", MM, "mindspeed_mm/patchs/validate_args_patch.py", r"register_patch\(\"megatron\.training\.arguments\.validate_args\", validate_args, force_patch=True\)"),
    ("mindspeed-mm@*", MM, "mindspeed_mm/patchs/validate_args_patch.py", r"register_patch\(\"mindspeed_mm\.patchs\.validate_args_patch\.validate_args\", validate_args_wrapper\)"),
    ("mindspeed-mm@r0.8.0", MS, "mindspeed/megatron_adaptor.py", r"register_patch\('megatron\.training\.arguments\.validate_args', validate_args_wrapper\)"),
    ("mindspeed-mm@r0.12.1", MS, "mindspeed/features_manager/megatron_basic/megatron_basic.py", r"register_patch\('megatron\.training\.arguments\.validate_args', validate_args_wrapper\)"),
    ("mindspeed-mm@r0.12.1", MS, "mindspeed/patch_utils.py", r"if self\.is_applied:"),
]


def evidence_kind(stack):
    family, release = stack.split("@")
    ms = release if family == "mindspeed" else dict((p[0], p[1]) for p in PAIRS)[stack]
    r08 = "r0.8.0" in ms
    if family == "mindspeed":
        return {"mindspeed@r0.8.0" if r08 else "mindspeed@r0.12.1"}
    if family == "mindspeed-llm":
        return {"mindspeed-llm@monolith" if release in ("2.0.0", "2.1.0") else "mindspeed-llm@features"}
    return {"mindspeed-mm@*", "mindspeed-mm@r0.8.0" if r08 else "mindspeed-mm@r0.12.1"}


def short(repo, commit):
    return f"{repo}@{commit[:8]}"


def grep_line(repo, commit, path, pattern):
    text = show(repo, commit, path)
    if text is None:
        return None
    rx = re.compile(pattern)
    for i, line in enumerate(text.splitlines(), 1):
        if rx.search(line):
            return i
    return None


# ------------------------------------------------------------------------------------------ aliases
# A validator line ``args.D = args.S`` (D and S the attributes of two flags) makes the checks that
# run after it read S's value as D's: a deprecated flag mapped onto its successor (MindSpeed-LLM
# >= 2.2.0 DeprecatedArgsFeature), LLM 2.0.0/2.1.0's ``_add_dummy_args`` (``attention_mask_type =
# cp_attention_mask_type``, unguarded), MindSpeed's MLAFeature.  Each alias is written with the
# ``if`` tests around it as a catalog condition on the launch (``("unknown",)`` for a part npulint
# cannot express: then the alias may or may not run), the parser defaults of the flags the test
# reads and of S (what D gets when S is not written), and its line.  For every entry and stack, ``entry_aliases`` says which aliases onto one of the
# entry's flags run before the check ("after") or may do so ("unknown": neither order is certain).
# A validator line ``args.D = <literal>`` (``use_flash_attn = True`` where context parallel needs
# it, Megatron's ``sequence_parallel = False`` at TP 1) is written so too, with ``"from": null`` and
# its ``"value"`` (only where every assignment of that attribute in its file's validator lines is
# that literal: a bypass set then restored is not a setting), onto
# the flags of an entry's condition and of what it requires or rejects; npulint
# takes such a line as one that may run (an early ``return`` before it is not read), so a launch is
# reported only where the check fails both with and without it. Any other assignment to a flag's
# attribute (a model config's value, ``args.D -= ...``) under ``if`` tests of the launch's own flags
# is written with ``"from": null`` and ``"unknown": true``: where it may run, D is not known.
_NO_DEFAULT = "<not a literal>"


def registrations(st):
    """The stack's ``add_argument`` calls (the registrations in its parser scope, then Megatron's
    arguments.py), in that order: (dest, the ``--`` option strings, default, repo, path, line),
    with ``dest=`` or the flag's name and the literal ``default=`` (``store_true``: False; none:
    None; anything else :data:`_NO_DEFAULT`)."""
    scopes = sorted(st.parser.items()) + [((MEG, PACKAGE[MEG]), None)]
    for (repo, path), lines in scopes:
        info = module_info(repo, st.commits[repo], path)
        if info is None:
            continue
        for n in ast.walk(info.tree):
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"):
                continue
            if lines is not None and n.lineno not in lines:
                continue
            opts = [a.value for a in n.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                    and a.value.startswith("--")]
            if not opts:
                continue
            kw = {k.arg: k.value for k in n.keywords}
            dest = kw["dest"].value if isinstance(kw.get("dest"), ast.Constant) else opts[0][2:].replace("-", "_")
            action = kw["action"].value if isinstance(kw.get("action"), ast.Constant) else None
            if "default" in kw:
                try:
                    default = ast.literal_eval(kw["default"])
                except ValueError:
                    default = _NO_DEFAULT
            else:
                default = {"store_true": False, "store_false": True}.get(action)
            yield dest, tuple(opts), default, repo, path, n.lineno


def parser_attrs(st):
    """{attribute: (flag, default)} of the stack's parsers: the first registration of each
    attribute (:func:`registrations`) and its first option string."""
    out = {}
    for dest, opts, default, _repo, _path, _line in registrations(st):
        out.setdefault(dest, (opts[0], default))
    return out


UNKNOWN = ("unknown",)  # a part of a test npulint cannot express: neither true nor false


def guard_condition(test, attrs):
    """A validator ``if`` test as a catalog condition on the launch; a part npulint cannot express
    (a truth test of a flag whose default is truthy, a comparison with a non-literal, run-time
    state) is :data:`UNKNOWN`, so that only the other parts can decide it."""
    def flag_of(node):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "args" \
                and node.attr in attrs:
            return attrs[node.attr]
        # ``getattr(args, "name", default)``: the attribute, the parsers registering it
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == "args" \
                and isinstance(node.args[1], ast.Constant) and node.args[1].value in attrs:
            return attrs[node.args[1].value]
        return None

    if isinstance(test, ast.BoolOp):
        return ("all" if isinstance(test.op, ast.And) else "any",) + tuple(guard_condition(v, attrs) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = guard_condition(test.operand, attrs)
        return UNKNOWN if inner == UNKNOWN else ("not", inner)
    reg = flag_of(test)
    if reg is not None:  # truth of the attribute: "given" when its default is falsy
        return ("on", reg[0]) if reg[1] in (None, False, 0, "") else UNKNOWN
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr" \
            and len(test.args) == 2 and isinstance(test.args[1], ast.Constant):
        # the launch's namespace holds what the stack's parsers register, nothing else (of
        # another object, ``hasattr(args.mm.model, "predictor")``, nothing is known)
        if not (isinstance(test.args[0], ast.Name) and test.args[0].id == "args"):
            return UNKNOWN
        return ("all",) if test.args[1].value in attrs else ("any",)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        reg, op, right = flag_of(test.left), test.ops[0], test.comparators[0]
        if reg is not None and isinstance(right, ast.Constant):
            if right.value is None and isinstance(op, (ast.Is, ast.IsNot)) and reg[1] is None:
                given = ("on", reg[0])
                return given if isinstance(op, ast.IsNot) else ("not", given)
            if isinstance(op, (ast.Eq, ast.NotEq)) and right.value is not None:
                return ("eq" if isinstance(op, ast.Eq) else "ne", reg[0], right.value)
    return UNKNOWN


def _cond_flags(cond):
    if cond[0] in ("all", "any", "not"):
        return set().union(*(_cond_flags(c) for c in cond[1:]))
    return {cond[1]} if len(cond) > 1 else set()


def args_assignments(st, scopes):
    """(attribute, repo, path, statement) for each assignment to ``args.X`` (also within a tuple
    or an item target, ``+=``, annotated) on the lines of *scopes* ((repo, path) -> lines)."""
    for (repo, path), lines in sorted(scopes.items()):
        info = module_info(repo, st.commits[repo], path)
        for n in ast.walk(info.tree) if info is not None else ():
            if getattr(n, "lineno", None) not in lines:
                continue
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
                n, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                for x in ast.walk(t):
                    if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name) and x.value.id == "args":
                        yield x.attr, repo, path, n


def validator_scopes(st):
    """(repo, path) -> lines: the stack's validator scope, with Megatron's own ``validate_args``
    (it runs on every stack, between MindSpeed's pre- and post-validation)."""
    scopes = {k: set(v) for k, v in st.active.items()}
    meg = module_info(MEG, st.commits[MEG], PACKAGE[MEG]) if MEG in st.commits else None
    if meg is not None and "validate_args" in meg.funcs:
        fn = meg.funcs["validate_args"]
        scopes.setdefault((MEG, PACKAGE[MEG]), set()).update(range(fn.lineno, fn.end_lineno + 1))
    return scopes


def alias_sites(st):
    """The stack's aliases: [{"from", "to", "when", "default", "at", "site": (repo, path, line)}]."""
    attrs = parser_attrs(st)
    out = []
    # Megatron's literal settings (``sequence_parallel = False`` at TP 1) count too
    scopes = validator_scopes(st)
    # every value each attribute is assigned in those lines, per file: a literal setting counts
    # only where all of that file's are that one literal (``use_legacy_models = False`` before
    # Megatron's check, then ``= True`` after it, only bypasses that check: later ones see True)
    assigned = {}
    for attr, repo, path, n in args_assignments(st, scopes):
        v = n.value if isinstance(n, ast.Assign) else None
        assigned.setdefault((attr, repo, path), set()).add(
            ("literal", repr(v.value)) if isinstance(v, ast.Constant) else ("other", id(n)))
    for (repo, path), lines in sorted(scopes.items()):
        info = module_info(repo, st.commits[repo], path)
        if info is None:
            continue
        up = parent_map(info)
        for n in ast.walk(info.tree):
            if not (isinstance(n, (ast.Assign, ast.AugAssign)) and n.lineno in lines
                    and len(getattr(n, "targets", (n,))) == 1):
                continue
            t, v = (n.targets[0] if isinstance(n, ast.Assign) else n.target), n.value
            if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "args"
                    and t.attr in attrs):
                continue
            unknown = False
            if isinstance(n, ast.AugAssign):
                # ``args.D -= args.E``: D's value is not known after it
                dst, src, unknown = attrs[t.attr][0], (None, _NO_DEFAULT), True
            elif isinstance(v, ast.Constant) and (v.value is None or isinstance(v.value, (bool, int, float, str))) \
                    and assigned.get((t.attr, repo, path)) == {("literal", repr(v.value))}:
                # ``args.D = <literal>``: a validator that sets a flag's value (``use_flash_attn =
                # True`` under context parallel, ``recompute_in_advance = False`` without a
                # one-layer virtual pipeline): the checks after it read that value
                dst, src = attrs[t.attr][0], (None, _NO_DEFAULT)
            elif isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id == "args" \
                    and v.attr in attrs:
                dst, src = attrs[t.attr][0], attrs[v.attr]
                if dst == src[0]:
                    continue
            elif isinstance(v, ast.Constant):
                continue  # (a literal its file also assigns otherwise: a bypass, set and restored)
            else:
                # ``args.D = <anything else>`` (a model config's value, a computed one): D's value
                # is not known after it, where its ``if`` tests hold (below)
                dst, src, unknown = attrs[t.attr][0], (None, _NO_DEFAULT), True
            guards, node = [], n
            while node in up and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                parent = up[node]
                if isinstance(parent, ast.If):
                    c = guard_condition(parent.test, attrs)
                    guards.append(("not", c) if node in parent.orelse and c != UNKNOWN else
                                  UNKNOWN if node in parent.orelse else c)
                node = parent
            when = ("all",) + tuple(reversed(guards))
            if unknown and (not guards or _has_unknown(when)):
                # only under tests of the launch's own flags (``if args.dist_train:``): one with no
                # test, or with a part npulint cannot read, is left out (a restore of a saved value,
                # Megatron's ``min(tp, world_size)``: taking each as unknown lost findings the
                # oracle confirms, docs/releases.md)
                continue
            by_flag = {f: d for f, d in attrs.values()}
            # the parser defaults the test reads (an absent flag compared with a value) and S's
            # (what D gets when S is not written); a default that is not a literal is left out
            defaults = {f: by_flag[f] for f in sorted(_cond_flags(when) | ({src[0]} if src[0] else set()))
                        if f in by_flag and by_flag[f] != _NO_DEFAULT}
            found = {"from": src[0], "to": dst, "when": when, "defaults": defaults,
                     "at": f"{short(repo, st.commits[repo])} {path}:{n.lineno}", "site": (repo, path, n.lineno)}
            if unknown:
                found["unknown"] = True
            elif src[0] is None:
                found["value"] = v.value
            out.append(found)
    return out


# ------------------------------------------------------------------------------ parser defaults
# A flag the launch does not write has its parser's default, on the release the launch runs on:
# ``--moe-token-dispatcher-type`` is "allgather", ``--context-parallel-algo`` "ulysses_cp_algo" on the
# core_r0.8.0-era releases and "megatron_cp_algo" later.  For each flag a catalog condition
# compares by value, a stack's default is written only where it is certain: every registration
# of the flag in the stack's parsers gives the same literal (not None), no ``set_defaults`` in
# them names its attribute, and no validator line assigns the attribute other than as an alias
# npulint models (``args.D = args.S``, a literal setting), nor sets attributes by a computed name:
# an attribute assigned otherwise may hold anything by the time a check reads it.
_ANY = "*"  # a ``setattr(args, name, ...)`` / ``vars(args)`` with a name not written out


def catalog_value_flags():
    return set().union(*(value_flags(e) for e in CATALOG))


@lru_cache(maxsize=None)
def parent_map(info):
    """{node: its parent} of a module's tree."""
    return {c: p for p in ast.walk(info.tree) for c in ast.iter_child_nodes(p)}


@lru_cache(maxsize=None)
def literals(info):
    """The identifiers the module writes as string constants."""
    return frozenset(n.value for n in ast.walk(info.tree) if isinstance(n, ast.Constant)
                     and isinstance(n.value, str) and n.value.isidentifier())


def _class_constant(call, name, up):
    """``self.NAME`` where the class around *call* binds ``NAME = "literal"`` in its body: that
    constant; else *name*."""
    if not (isinstance(name, ast.Attribute) and isinstance(name.value, ast.Name) and name.value.id == "self"):
        return name
    node = call
    while node in up and not isinstance(node, ast.ClassDef):
        node = up[node]
    for stmt in node.body if isinstance(node, ast.ClassDef) else ():
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and any(
                isinstance(t, ast.Name) and t.id == name.attr for t in stmt.targets):
            return stmt.value
    return name


def _sets_only_none(call, name, up):
    """Whether ``setattr(args, name, ...)`` runs only where ``getattr(args, name, None)`` is None
    (Megatron's ``validate_args`` defaults, MEG@a845aa7e megatron/training/arguments.py:389-395:
    the else arm of ``if getattr(args, key, None) is not None``): it sets no attribute whose
    parser default is a value."""
    node = call
    while node in up:
        parent = up[node]
        test = parent.test if isinstance(parent, ast.If) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
            left = test.left
            reads = isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "getattr" \
                and len(left.args) == 3 and isinstance(left.args[0], ast.Name) and left.args[0].id == "args" \
                and isinstance(left.args[1], ast.Name) and isinstance(name, ast.Name) and left.args[1].id == name.id \
                and isinstance(left.args[2], ast.Constant) and left.args[2].value is None
            if reads and ((node in parent.orelse) if isinstance(test.ops[0], ast.IsNot) else (node in parent.body)):
                return True
        node = parent
    return False


# Functions that run before the validators and may assign flags' attributes, but hold no catalog
# check: MindSpeed-LLM's registered wrapper (2.2.0 on) runs ``_add_dummy_args_v2`` before
# ``validate_features_args`` (Ascend/MindSpeed-LLM@c77308a1 mindspeed_llm/training/arguments.py:179-216;
# @337813b0 sets ``transformer_impl`` and ``ckpt_format`` there).
WRAPPERS = ((LLM, "mindspeed_llm/training/arguments.py", ("validate_args_v2_decorator",)),)


def wrapper_scopes(st):
    """(repo, path) -> lines of :data:`WRAPPERS` in the stack and the module functions they call."""
    out = {}
    for repo, path, names in WRAPPERS:
        info = module_info(repo, st.commits[repo], path) if repo in st.commits else None
        todo = [n for n in names if info is not None and n in info.funcs]
        seen = set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            node = info.funcs[name]
            out.setdefault((repo, path), set()).update(span(node))
            todo += [n for n in called_names(node)[0] if n in info.funcs]
    return out


def assigned_attrs(st):
    """{attribute: {(repo, path, line)}} the stack's validator lines (and :data:`WRAPPERS`) assign
    (``_ANY``: a name not written out), and the attributes a ``set_defaults`` in its parser scope
    names."""
    out = {}
    for scopes in (validator_scopes(st), wrapper_scopes(st), st.parser):
        for attr, repo, path, n in args_assignments(st, scopes):
            out.setdefault(attr, set()).add((repo, path, n.lineno))
        for (repo, path), lines in sorted(scopes.items()):
            info = module_info(repo, st.commits[repo], path)
            for n in ast.walk(info.tree) if info is not None else ():
                if getattr(n, "lineno", None) not in lines:
                    continue
                site = (repo, path, n.lineno)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr") \
                        and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == "args":
                    name = n.args[1] if len(n.args) > 1 else None
                    name = _class_constant(n, name, parent_map(info))
                    if isinstance(name, ast.Constant) and isinstance(name.value, str):
                        out.setdefault(name.value, set()).add(site)
                    elif not _sets_only_none(n, name, parent_map(info)):
                        # a name computed in the file: any attribute the file names in a string
                        for attr in literals(info) if isinstance(name, ast.Name) else (_ANY,):
                            out.setdefault(attr, set()).add(site)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "vars" and n.args \
                        and isinstance(n.args[0], ast.Name) and n.args[0].id == "args" or \
                        isinstance(n, ast.Attribute) and n.attr == "__dict__" and isinstance(n.value, ast.Name) \
                        and n.value.id == "args":
                    out.setdefault(_ANY, set()).add(site)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "set_defaults":
                    for k in n.keywords:
                        out.setdefault(k.arg or _ANY, set()).add(site)
    return out


def parser_defaults(st, flags, aliases):
    """{flag: [default, "short path:line"]}: the certain parser defaults of *flags* on the stack
    (see above), at their first registration."""
    regs = {}
    for dest, opts, default, repo, path, line in registrations(st):
        for flag in opts:
            regs.setdefault(flag, []).append((dest, default, repo, path, line))
    assigned = assigned_attrs(st)
    if _ANY in assigned:
        return {}
    out = {}
    for flag in sorted(flags):
        found = regs.get(flag)
        if not found:
            continue
        dests, values = {d for d, *_ in found}, {repr(v) for _, v, *_ in found}
        default = found[0][1]
        if len(dests) != 1 or len(values) != 1 or default is None or default == _NO_DEFAULT:
            continue
        modelled = {a["site"] for a in aliases if a["to"] == flag}
        if assigned.get(next(iter(dests)), set()) - modelled:
            continue
        _, _, repo, path, line = found[0]
        out[flag] = [default, f"{short(repo, st.commits[repo])} {path}:{line}"]
    return out


def _has_unknown(cond):
    return cond == UNKNOWN or (cond[0] in ("all", "any", "not") and any(_has_unknown(c) for c in cond[1:]))


_PHASES = {"pre_validate_args": 0, "post_validate_args": 2}


def _innermost_def(repo, commit, path, line):
    """The line of the innermost ``def`` around *line* whose body holds no loop around it (two
    lines of one such body run in their order), or None."""
    info = module_info(repo, commit, path)
    best = None
    for node in ast.walk(info.tree) if info else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
            if best is None or node.lineno > best.lineno:
                best = node
    if best is None:
        return None
    for node in ast.walk(best):
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)) and node.lineno <= line <= node.end_lineno:
            return None
    return best.lineno


def _instantiation_gates(fn):
    """{class name: attribute} for the classes *fn* instantiates only in the body of an
    ``if args.<attribute>:`` (MindSpeed-LLM 2.1.0's ``if args.moe_fb_overlap:
    FwdBwdOverlapFeature().validate_args(args)``, @70116e9b mindspeed_llm/training/arguments.py:239-241)."""
    parents = {c: p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    seen = {}
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id[:1].isupper()):
            continue
        gate, node = None, n
        while node in parents and node is not fn:
            parent = parents[node]
            if isinstance(parent, ast.If) and node in parent.body and isinstance(parent.test, ast.Attribute) \
                    and isinstance(parent.test.value, ast.Name) and parent.test.value.id == "args":
                gate = parent.test.attr
                break
            node = parent
        seen.setdefault(n.func.id, set()).add(gate)
    return {cls: next(iter(g)) for cls, g in seen.items() if len(g) == 1 and None not in g}


def _enclosing_method(repo, commit, path, line):
    """(class name or None, function name) of the innermost def around *line*."""
    info = module_info(repo, commit, path)
    best = (None, None)
    for node in info.tree.body if info else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
            best = (None, node.name)
        elif isinstance(node, ast.ClassDef) and node.lineno <= line <= node.end_lineno:
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.lineno <= line <= m.end_lineno:
                    best = (node.name, m.name)
    return best


def ordered_classes(st, repo, path):
    """The feature classes of a feature list file in the order the list holds them (the calls of
    ``create_features_list`` followed in order, else the ``FEATURES_LIST`` literal)."""
    info = module_info(repo, st.commits[repo], path)
    out = []

    def walk(node, seen):
        calls = sorted((x for x in ast.walk(node) if isinstance(x, ast.Call) and isinstance(x.func, ast.Name)),
                       key=lambda x: (x.lineno, x.col_offset))
        for c in calls:
            name = c.func.id
            if name in info.funcs and name not in seen:
                walk(info.funcs[name], seen | {name})
            elif name[:1].isupper():
                r, p, cls = st.resolve_name(repo, path, name)
                if r:
                    out.append((r, p, cls))

    if "create_features_list" in info.funcs:
        walk(info.funcs["create_features_list"], {"create_features_list"})
    else:
        for node in info.tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FEATURES_LIST" for t in node.targets):
                walk(node, set())
    return out


def run_positions(st):
    """{(repo, path, line): {position}}: when each validator line runs, as comparable tuples, for
    the validators whose order is read (MindSpeed-LLM's monolith: the statements of its wrapper in
    order; a feature list: pre-validation, Megatron's validation, post-validation, then each
    feature's ``validate_args`` in the list's order).  A line missing here runs at an unknown time."""
    roots = stack_roots(st.name)
    pos = {}

    def mark(tmp, key, phase_of=None):
        for (r, p), lines in tmp.active.items():
            for ln in lines:
                ph = phase_of(r, p, ln) if phase_of else 0
                pos.setdefault((r, p, ln), set()).add((ph,) + key if ph is not None else None)

    if LLM_MONOLITH in roots:
        _, repo, path, fn = LLM_MONOLITH
        info = module_info(repo, st.commits[repo], path)
        wrapper = next(n for n in ast.walk(info.funcs[fn]) if isinstance(n, ast.FunctionDef) and n.name == "wrapper")
        for i, stmt in enumerate(wrapper.body):
            tmp = Stack(st.name, st.commits)
            tmp.add(tmp.active, repo, path, span(stmt))
            names, inst = called_names(stmt)
            for n in names:
                if n in info.funcs:
                    tmp.add_function(repo, path, n)
            for cls in inst:
                r, p, c = tmp.resolve_name(repo, path, cls)
                if r:
                    tmp.add_class(r, p, c)
            if "FEATURES_LIST" in names:
                r, p, _ = tmp.resolve_name(repo, path, "FEATURES_LIST")
                if r is None and "FEATURES_LIST" in info.imports:
                    r, p = tmp.resolve(info.imports["FEATURES_LIST"][0])
                if r:
                    tmp.add_feature_list(r, p, literal_only=True)
            mark(tmp, (i,))
        return {k: v for k, v in pos.items() if None not in v}
    features = [r for r in roots if r[0] == "features"]
    if len(features) != 1 or LEGACY_VALIDATOR in roots:
        return {}

    def phase_of(r, p, ln):
        cls, meth = _enclosing_method(r, st.commits[r], p, ln)
        return _PHASES.get(meth, 3) if cls else None

    for j, (r, p, c) in enumerate(ordered_classes(st, features[0][1], features[0][2])):
        tmp = Stack(st.name, st.commits)
        tmp.add_class(r, p, c)
        mark(tmp, (j,), phase_of)
    if MM_VALIDATOR in roots:  # MindSpeed-MM's copy of Megatron's validate_args: between pre and post
        tmp = Stack(st.name, st.commits)
        tmp.add_function(*MM_VALIDATOR[1:])
        mark(tmp, (0,), lambda *_: 1)
    return {k: v for k, v in pos.items() if None not in v}


def alias_order(positions, alias_site, check_site, commits):
    """"after" when the alias runs before every run of the check, "before" when after every one,
    else "unknown"."""
    a, c = positions.get(alias_site), positions.get(check_site)
    if not a or not c:
        # (order not read, as in the legacy validator: within one function, its lines' order)
        if alias_site[:2] == check_site[:2]:
            fa = _innermost_def(alias_site[0], commits[alias_site[0]], *alias_site[1:])
            if fa is not None and fa == _innermost_def(check_site[0], commits[check_site[0]], *check_site[1:]):
                return "after" if alias_site[2] < check_site[2] else "before"
        return "unknown"
    same_def = alias_site[:2] == check_site[:2] and a == c and len(a) == 1 and \
        _enclosing_method(alias_site[0], commits[alias_site[0]], *alias_site[1:]) == \
        _enclosing_method(check_site[0], commits[check_site[0]], *check_site[1:])
    if same_def:
        return "after" if alias_site[2] < check_site[2] else "before"
    if max(a) < min(c):
        return "after"
    if min(a) > max(c):
        return "before"
    return "unknown"


# ------------------------------------------------------------------------------ master's versions
# The file that declares each framework's version, and the declaration.
VERSION_FILES = {
    "mindspeed": (MS, "setup.py", r"__version__\s*=\s*['\"]([^'\"]+)"),
    "mindspeed-llm": (LLM, "setup.py", r"__version__\s*=\s*['\"]([^'\"]+)"),
    "mindspeed-mm": (MM, "pyproject.toml", r"(?m)^version\s*=\s*['\"]([^'\"]+)"),
}
RELEASES = {"mindspeed": MS_RELEASES, "mindspeed-llm": LLM_RELEASES, "mindspeed-mm": MM_RELEASES}


def commit_time(repo, commit):
    """(unix time, ISO date) of the commit's committer date."""
    ts, iso = git(repo, "log", "-1", "--format=%ct %cI", commit).split()
    return int(ts), iso


def master_periods(repo, master, path, rx):
    """The periods during which master (its first-parent history up to *master*) declared one
    version: [(version, set_commit, set_line, set_time, set_date, end_commit or None, end_line,
    end_time, end_date)], oldest first (a line is None where the file declares no version); a
    period without a declaration is left out."""
    log = git(repo, "log", "--first-parent", "--reverse", "--format=%H", master, "--", path).split()
    changes = []
    for commit in log:
        text = show(repo, commit, path) or ""
        m = re.search(rx, text)
        version = m.group(1) if m else None
        if changes and changes[-1][0] == version:
            continue
        line = text.count("\n", 0, m.start()) + 1 if m else None
        changes.append((version, commit, line) + commit_time(repo, commit))
    out = []
    for i, (version, commit, line, ts, date) in enumerate(changes):
        nxt = changes[i + 1] if i + 1 < len(changes) else None
        if version is not None:
            out.append((version, commit, line, ts, date) + (nxt[1:] if nxt else (None,) * 4))
    return out


def period_releases(points, order, start, end):
    """The releases a master snapshot from the period *start* to *end* (unix times; *end* None:
    master still declares it) may behave like: those branched during it, the one(s) branched last
    before it began and first after it ended (a snapshot between two branch points may behave like
    either neighbour), and master while it still declares it or when no release was branched since.
    A period that began before any release of *points* ({release: branch time}) was branched holds
    snapshots older than all of them, whose checks are unknown: every release of *order*."""
    rels = {r for r, t in points.items() if start <= t and (end is None or t < end)}
    before = [t for t in points.values() if t < start]
    if not before:
        # (RULES.md: a launch is then reported only where every release rejects it)
        return set(order)
    rels.update(r for r, t in points.items() if t == max(before))
    after = [t for t in points.values() if end is not None and t >= end]
    if after:
        rels.update(r for r, t in points.items() if t == min(after))
    else:
        rels.add("master")
    return rels


def master_history(repos, versions):
    """For every version master ever declared, the releases a tree declaring it may run: the releases
    that declare it; for each period master declared it, the releases branched from master during the
    period, the one(s) branched last before it began and first after it ended (a master snapshot
    between two branch points may behave like either neighbour), and master while it still declares
    it.  A release's branch point is ``git merge-base master <release>`` (its committer date orders
    it).  Returns (master_versions, branch_points) for the JSON."""
    master_versions, branch_points = {}, {}
    for fam, (repo, path, rx) in VERSION_FILES.items():
        master = repos[repo]["master"]
        points = {}
        for r in RELEASES[fam]:
            if r == "master":
                continue
            base = git(repo, "merge-base", master, repos[repo][r]).strip()
            ts, date = commit_time(repo, base)
            points[r] = ts
            branch_points[f"{fam}@{r}"] = f"{short(repo, base)} {date}"
        order = RELEASES[fam]
        out = {}
        for version, commit, line, ts, date, end, end_line, end_ts, end_date in master_periods(repo, master, path, rx):
            entry = out.setdefault(version, {"releases": set(), "periods": []})
            rels = entry["releases"]
            rels.update(r for r in order if versions[f"{fam}@{r}"] == version)
            rels.update(period_releases(points, order, ts, end_ts))
            entry["periods"].append({
                "set": f"{short(repo, commit)} {path}:{line}", "from": date,
                "until": (f"{short(repo, end)} {path}" + (f":{end_line}" if end_line else "")) if end else None,
                "to": end_date})
        master_versions[fam] = {v: {"releases": [r for r in order if r in e["releases"]], "periods": e["periods"]}
                                for v, e in out.items()}
    return master_versions, branch_points


# ------------------------------------------------------------------------------------------- main
def build(report=False):
    log = (lambda *a: print(*a, file=sys.stderr)) if report else (lambda *a: None)
    repos = {MS: {r: rev(MS, r) for r in MS_RELEASES}, LLM: {r: rev(LLM, r) for r in LLM_RELEASES},
             MM: {r: rev(MM, r) for r in MM_RELEASES}, MEG: {k: rev(MEG, v) for k, v in MEG_REFS.items()}}
    pair_of = {}
    pairs_out, versions, validators = {}, {}, {}
    for stack, ms_rel, doc_repo, doc_path, doc_rx, pin in PAIRS:
        fam, rel = stack.split("@")
        doc_commit = repos[doc_repo][rel]
        line = grep_line(doc_repo, doc_commit, doc_path, doc_rx)
        if line is None:
            raise SystemExit(f"pairing evidence not found: {stack} {doc_path} /{doc_rx}/")
        if pin:
            full = rev(MS, pin)
            subprocess.run(["git", "-C", repo_dir(MS), "merge-base", "--is-ancestor", full, repos[MS][ms_rel]], check=True)
        pair_of[stack] = ms_rel
        pairs_out[stack] = f"mindspeed@{ms_rel}"

    stacks = {}
    for r in MS_RELEASES:
        stacks[f"mindspeed@{r}"] = {MS: repos[MS][r], MEG: repos[MEG][meg_for(r)]}
    for r in LLM_RELEASES:
        ms = pair_of[f"mindspeed-llm@{r}"]
        stacks[f"mindspeed-llm@{r}"] = {LLM: repos[LLM][r], MS: repos[MS][ms], MEG: repos[MEG][meg_for(ms)]}
    for r in MM_RELEASES:
        ms = pair_of[f"mindspeed-mm@{r}"]
        stacks[f"mindspeed-mm@{r}"] = {MM: repos[MM][r], MS: repos[MS][ms], MEG: repos[MEG][meg_for(ms)]}

    # versions: setup.py __version__ (MindSpeed, MindSpeed-LLM), pyproject.toml version (MindSpeed-MM)
    for fam, (repo, path, rx) in VERSION_FILES.items():
        for r in RELEASES[fam]:
            versions[f"{fam}@{r}"] = re.search(rx, show(repo, repos[repo][r], path)).group(1)
    master_versions, branch_points = master_history(repos, versions)

    built = {}
    for name, commits in stacks.items():
        st = Stack(name, commits)
        for root in stack_roots(name):
            if root[0] == "func":
                st.add_function(root[1], root[2], root[3])
            elif root[0] == "parser":
                st.add_function(root[1], root[2], root[3], scope=st.parser)
            else:
                st.add_feature_list(root[1], root[2])
        built[name] = st
        flags = validator_flags(name, st)
        ev = []
        for kind, repo, path, rx in EVIDENCE:
            optional = kind.startswith("?")
            if kind.lstrip("?") in evidence_kind(name):
                line = grep_line(repo, commits[repo], path, rx)
                if line is None and optional:
                    continue
                if line is None:
                    raise SystemExit(f"{name}: activation evidence not found: {repo} {path} /{rx}/")
                ev.append(f"{short(repo, commits[repo])} {path}:{line}")
        validators[name] = {**flags, "evidence": "; ".join(ev)}
        log(f"{name}: {sum(len(v) for v in st.active.values())} active validator lines in {len(st.active)} files")

    aliases = {name: alias_sites(st) for name, st in built.items()}
    attrs_of = {name: parser_attrs(st) for name, st in built.items()}
    value_flags = catalog_value_flags()
    defaults = {name: parser_defaults(st, value_flags, aliases[name]) for name, st in built.items()}
    positions = {name: run_positions(st) for name, st in built.items()}
    entries, notes, entry_aliases = {}, {}, {}
    for entry in CATALOG:
        anchors = anchors_for(entry)
        usable = []
        for a in anchors:
            if not a.ok:
                notes.setdefault(entry.key, []).append(f"anchor file missing: {a}")
            elif not a.fingerprint:
                notes.setdefault(entry.key, []).append(f"anchor lines empty: {a}")
            elif a.repo != MEG and not anchor_mentions_entry(a, entry):
                notes.setdefault(entry.key, []).append(f"anchor does not mention the entry's flags: {a}")
                usable.append(a)
            else:
                usable.append(a)
        holds = {}
        for name, st in built.items():
            best = None
            for a in usable:
                for repo, commit in st.commits.items():
                    if a.repo == MEG and repo != MEG or a.repo != MEG and repo == MEG:
                        continue
                    for path, line in find_matches(a, repo, commit, entry_flags(entry)):
                        if st.is_active(repo, path, line, entry.kind) and \
                                st.gate_ok(repo, path, line, entry, attrs_of[name]):
                            # first found: the release's own repository before the paired MindSpeed
                            # (stack commits are ordered so), then the anchors' order in the source
                            if best is None:
                                best = (repo, path, line)
                            break
            if best:
                holds[name] = f"{short(best[0], st.commits[best[0]])} {best[1]}:{best[2]}"
                # (onto a flag of what it requires or rejects too: a validator that sets the
                # companion, ``use_flash_attn = True``, meets the requirement, and one that copies
                # a deprecated flag's value onto it gives it that value)
                flags = entry_flags(entry) | (_cond_flags(entry.b) if entry.kind in ("requires", "conflict") else set())
                onto = [(i, a) for i, a in enumerate(aliases[name]) if a["to"] in flags]
                if onto:
                    order = {i: alias_order(positions[name], a["site"], best, st.commits) for i, a in onto}
                    seen = [[i, o] for i, o in sorted(order.items()) if o != "before"]
                    if seen:
                        entry_aliases.setdefault(entry.key, {})[name] = seen
        entries[entry.key] = dict(sorted(holds.items(), key=lambda kv: list(stacks).index(kv[0])))
        if not holds:
            notes.setdefault(entry.key, []).append("holds in no stack release")
    data = {
        "generated_by": "tools/gen_releases.py",
        "repos": repos,
        "releases": {"mindspeed": MS_RELEASES, "mindspeed-llm": LLM_RELEASES, "mindspeed-mm": MM_RELEASES},
        "pairs": pairs_out,
        "versions": versions,
        "branch_points": branch_points,
        "master_versions": master_versions,
        "validators": validators,
        "entries": entries,
        "aliases": {name: [{k: v for k, v in a.items() if k != "site"} for a in found]
                    for name, found in aliases.items() if found},
        "entry_aliases": entry_aliases,
        "parser_defaults": {name: found for name, found in defaults.items() if found},
    }
    return data, notes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the JSON on disk is not up to date")
    ap.add_argument("--report", action="store_true", help="print notes per entry and counts to stderr")
    ns = ap.parse_args(argv)
    try:
        data, notes = build(report=ns.report)
    except subprocess.CalledProcessError as exc:  # a mirror or ref that is not there: one line, not a traceback
        where = exc.cmd[2] if len(exc.cmd) > 2 else MIRRORS
        detail = (exc.stderr or "").strip().splitlines()
        print(f"gen_releases: git {' '.join(exc.cmd[3:])} failed in {where}"
              f"{': ' + detail[-1] if detail else ''} (fetch the upstream mirrors into {MIRRORS}, or set NPULINT_MIRRORS)",
              file=sys.stderr)
        return 2
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if ns.report:
        by_key = {e.key: e for e in CATALOG}
        for key, ns_ in notes.items():
            e = by_key[key]
            print(f"{key} [{e.kind}] {e.message}\n    {e.source}", file=sys.stderr)
            for n in ns_:
                print(f"    - {n}", file=sys.stderr)
        counts = {}
        for key, holds in data["entries"].items():
            for s in holds:
                counts[s] = counts.get(s, 0) + 1
        for s in [f"mindspeed@{r}" for r in MS_RELEASES] + [f"mindspeed-llm@{r}" for r in LLM_RELEASES] + \
                 [f"mindspeed-mm@{r}" for r in MM_RELEASES]:
            print(f"{s:32} {counts.get(s, 0)}", file=sys.stderr)
    if ns.check:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print("rules/mindspeed_releases.json is out of date: run tools/gen_releases.py", file=sys.stderr)
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
