"""The framework releases a project runs, for the rules whose truth depends on them.

Configured (``[tool.npulint.releases]``: one key per framework), else inferred where that is
unambiguous (the linted tree is the framework itself; a pinned requirement), else every release
npulint knows: a release-dependent rule then reports only what every one of them rejects. A
release the project names (a pin, its own tree) that npulint has no data for is *unknown*: the
framework's releases are then none (``()``), and its release-dependent rules say nothing.

The release data are generated from the upstream sources (``tools/gen_releases.py``,
``tools/gen_torchair_releases.py``) into ``rules/*_releases.json``; see ``docs/releases.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

from npulint.paths import nearest_project

MINDSPEED_FRAMEWORKS = ("mindspeed", "mindspeed-llm", "mindspeed-mm")
FRAMEWORKS = MINDSPEED_FRAMEWORKS + ("torchair",)
LABELS = {"mindspeed": "MindSpeed", "mindspeed-llm": "MindSpeed-LLM", "mindspeed-mm": "MindSpeed-MM",
          "torchair": "torchair"}

# The deprecated ``mindspeed-stack`` key, as the releases it stood for: "legacy" the
# core_r0.8.0-era MindSpeed releases (whose mindspeed/arguments.py validator runs), "current"
# MindSpeed master and the *_core_r0.12.1 releases, MindSpeed-LLM 2.2.0 and later.
_STACK_ALIAS = {
    "legacy": {"mindspeed": lambda r: "core_r0.8.0" in r},
    "current": {"mindspeed": lambda r: "core_r0.8.0" not in r,
                "mindspeed-llm": lambda r: r not in ("2.0.0", "2.1.0")},
}


def _data_path(name: str) -> str:
    from npulint.registry import _load_rules_package

    return os.path.join(os.path.dirname(_load_rules_package().__file__), name)


@functools.lru_cache(maxsize=None)
def _load(name: str) -> dict:
    with open(_data_path(name), encoding="utf-8") as fh:
        return json.load(fh)


def mindspeed_data() -> dict:
    return _load("mindspeed_releases.json")


def torchair_data() -> dict:
    return _load("torchair_releases.json")


def _data(framework: str) -> dict:
    return torchair_data() if framework == "torchair" else mindspeed_data()


def known(framework: str) -> Tuple[str, ...]:
    """The releases of *framework* npulint has data for, oldest first."""
    if framework == "torchair":
        return tuple(torchair_data()["releases"])
    return tuple(mindspeed_data()["releases"].get(framework, ()))


@functools.lru_cache(maxsize=None)
def _versions(framework: str) -> Dict[str, Tuple[str, ...]]:
    """Declared package version -> the releases a tree declaring it may run: those that declare it,
    and for a version upstream master declared for a while, the releases branched from master
    while it did, their neighbours (the last branched before, the first after: a master snapshot
    between two branch points may behave like either) and master while it still declares it
    (``master_versions``, from master's history of the version file)."""
    out: Dict[str, List[str]] = {}
    data = _data(framework)
    declared = data.get("versions", {})
    if framework == "torchair":  # one framework: keyed by release
        declared = {f"torchair@{r}": v for r, v in declared.items()}
    for stack, version in declared.items():
        fw, _, rel = stack.partition("@")
        if fw == framework:
            rels = out.setdefault(canonical_version(version), [])
            # master's own periods are master_versions; a release branch declares it at every
            # snapshot since it set it, which may be older than the one npulint models
            rels.extend(r for r in ((rel,) if rel == "master" else _branch_line(framework, rel)) if r not in rels)
    first = _first_branch_point(framework)
    for version, history in data.get("master_versions", {}).get(framework, {}).items():
        key = canonical_version(version)
        ended = [_point_date(p["to"]) if p.get("to") else None for p in history.get("periods", ())]
        if key not in out and first is not None and ended and all(e is not None and e < first for e in ended):
            # only master declared it, and only before any release npulint models was branched:
            # such a tree is older than all of them, a release npulint has no data for (as
            # torchair==6.0.rc1 is): unknown
            continue
        rels = out.setdefault(key, [])
        rels.extend(r for r in history["releases"] if r not in rels)
    order = known(framework)
    return {v: tuple(sorted(rs, key=lambda r: order.index(r) if r in order else len(order)))
            for v, rs in out.items()}


@functools.lru_cache(maxsize=None)
def _branch_line(framework: str, release: str) -> Tuple[str, ...]:
    """The releases a snapshot of *release*'s branch may behave like, at any time since the
    branch left master: npulint models each release at its branch's commit in the generated
    data, and a project that installed the branch (or its tag, or the package the tag built)
    earlier may lack checks backported since. At its branch point the branch was master, which
    may behave like the release branched last before it (as in :func:`_versions`), so the line
    is the release and those branched last before it (by ``branch_points`` where the data have
    them, else the order of the releases); a checkout of master may be of any date: every
    release."""
    order = known(framework)
    if release == "master":
        return order
    if release not in order:
        return ()
    points = {}
    for stack, text in _data(framework).get("branch_points", {}).items():
        fw, _, rel = stack.partition("@")
        if fw == framework:
            points[rel] = _point_date(text)
    if release in points and None not in points.values():
        mine = points[release]
        before = [points[r] for r in points if points[r] < mine]
        last = max(before) if before else None
        line = {r for r in points if points[r] == mine or points[r] == last}
    else:
        i = order.index(release)
        line = set(order[max(0, i - 1):i + 1])
    return tuple(r for r in order if r in line)


def _first_branch_point(framework: str):
    """The date the first release of *framework* npulint models left master, or None."""
    dates = [_point_date(text) for stack, text in _data(framework).get("branch_points", {}).items()
             if stack.partition("@")[0] == framework]
    return min(dates) if dates and None not in dates else None


def _point_date(text: str):
    """The date of a ``branch_points`` value (``Owner/Repo@sha8 <ISO date>``), or None."""
    import datetime

    try:
        return datetime.datetime.fromisoformat(text.split()[-1])
    except (ValueError, IndexError):
        return None


_PEP440 = re.compile(r"v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?"
                     r"(?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d*))?(?:[-_.]?(dev)[-_.]?(\d*))?(\+[a-z0-9._-]+)?")
_PRE = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc", "preview": "rc"}


def canonical_version(value: str) -> str:
    """*value* in PEP 440's normal form, trailing zeros of the release left out, as pip's
    ``canonicalize_version`` writes it (``26.0.0.dev0`` and ``26.0.0dev0`` are one version: pip
    freeze writes the first, the upstream ``setup.py`` the second); *value* itself lower-cased
    when it is not a version."""
    v = value.strip().lower()
    m = _PEP440.fullmatch(v)
    if m is None:
        return v
    release, pre, pre_n, post_implicit, post, post_n, dev, dev_n, local = m.groups()
    parts = release.split(".")
    while len(parts) > 1 and parts[-1].isdigit() and int(parts[-1]) == 0:
        parts.pop()
    out = ".".join(str(int(p)) for p in parts)
    if pre:
        out += _PRE[pre] + str(int(pre_n or 0))
    if post_implicit is not None:
        out += ".post" + str(int(post_implicit))
    elif post:
        out += ".post" + str(int(post_n or 0))
    if dev:
        out += ".dev" + str(int(dev_n or 0))
    return out + (local or "")


@dataclasses.dataclass(frozen=True)
class Releases:
    """The releases in effect for one run: ``chosen`` maps a framework to its releases and to how
    they were decided ("configured", "inferred from <path>", "mindspeed-stack = ...")."""

    chosen: Tuple[Tuple[str, Tuple[str, ...], str], ...] = ()

    def of(self, framework: str) -> Optional[Tuple[str, ...]]:
        for fw, rels, _ in self.chosen:
            if fw == framework:
                return rels
        return None

    def mindspeed_stacks(self) -> FrozenSet[str]:
        """The stack releases (``framework@release``) a launch may run on: those of the
        MindSpeed frameworks chosen, else every one npulint knows; none when one of them is
        unknown (a stack runs MindSpeed-LLM or -MM on a MindSpeed)."""
        if any(self.unknown(fw) for fw in MINDSPEED_FRAMEWORKS):
            return frozenset()
        out = {f"{fw}@{r}" for fw, rels, _ in self.chosen if fw in MINDSPEED_FRAMEWORKS for r in rels}
        if out:
            return frozenset(out)
        return frozenset(f"{fw}@{r}" for fw in MINDSPEED_FRAMEWORKS for r in known(fw))

    def torchair(self) -> Tuple[str, ...]:
        """The torchair releases in effect: none when the project's is unknown."""
        rels = self.of("torchair")
        return known("torchair") if rels is None else rels

    def unknown(self, framework: str) -> bool:
        """Whether the project names a release of *framework* npulint has no data for."""
        return self.of(framework) == ()

    def inferred(self, framework: str) -> bool:
        """Whether *framework*'s releases were inferred from the project (not configured, not
        the ``mindspeed-stack`` alias) and are known."""
        return any(fw == framework and rels and how.startswith("inferred") for fw, rels, how in self.chosen)

    def fallback(self, framework: str) -> Tuple[str, ...]:
        """The releases to judge code on when its own evidence (the APIs it calls, the options it
        sets) rules out every one of *framework*'s releases: when those were inferred, the
        inference is contradicted and every release npulint knows is judged; configured
        releases stand (nothing: code they exclude is not judged)."""
        return known(framework) if self.inferred(framework) else ()

    def mindspeed_fallback(self) -> FrozenSet[str]:
        """:meth:`fallback` for a launch: every stack release npulint knows when the MindSpeed
        frameworks' releases were inferred (the launch's flags rule out every one of
        :meth:`mindspeed_stacks`: the inference is contradicted), else none; none when one of
        them is unknown (nothing can contradict what npulint has no data for)."""
        if any(self.unknown(fw) for fw in MINDSPEED_FRAMEWORKS):
            return frozenset()
        if any(self.inferred(fw) for fw in MINDSPEED_FRAMEWORKS):
            return frozenset(f"{fw}@{r}" for fw in MINDSPEED_FRAMEWORKS for r in known(fw))
        return frozenset()

    def key(self) -> Tuple:
        return self.chosen


def holds_on(framework: str, releases: Sequence[str], evidence: Iterable[FrozenSet[str]],
             holds: Mapping[str, str], fallback: Sequence[str] = ()) -> Optional[Tuple[str, str]]:
    """RULES.md "Releases" for one framework's check: the code may run on those of *releases*
    (configured, inferred, else every known one) that each set of *evidence* contains (the
    releases that have an API it calls, an option it sets), or, when the evidence rules out
    every one of them, on those of *fallback* it allows (:meth:`Releases.fallback`: every known
    release when *releases* were inferred); *holds* maps the releases the check holds on to its
    upstream line there. When it holds on every release the code may run on: every release it
    holds on as text (as the NPU5xx messages name an entry's releases) and the line at the
    newest release the code may run on; else None."""
    evidence = list(evidence)
    may_run = [r for r in releases if all(r in e for e in evidence)]
    if not may_run:
        may_run = [r for r in fallback if all(r in e for e in evidence)]
    if not may_run or not all(r in holds for r in may_run):
        return None
    return describe(f"{framework}@{r}" for r in holds), holds[may_run[-1]]


def describe(stacks: Iterable[str]) -> str:
    """``framework@release`` names as text, runs of consecutive releases as a range:
    "MindSpeed-LLM 2.2.0 to master, MindSpeed 2.1.0_core_r0.8.0"."""
    by_fw: Dict[str, List[str]] = {}
    for s in stacks:
        fw, _, rel = s.partition("@")
        by_fw.setdefault(fw, []).append(rel)
    parts = []
    for fw in FRAMEWORKS:
        rels = by_fw.get(fw)
        if not rels:
            continue
        order = known(fw)
        idx = sorted(order.index(r) for r in rels if r in order)
        runs: List[List[int]] = []
        for i in idx:
            if runs and i == runs[-1][-1] + 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        text = []
        for run in runs:
            if len(run) >= 3:
                text.append(f"{order[run[0]]} to {order[run[-1]]}")
            else:
                text.extend(order[i] for i in run)
        parts.append(f"{LABELS[fw]} {', '.join(text)}")
    return "; ".join(parts)


def newest(stacks: Iterable[str]) -> Optional[str]:
    """The stack release to cite: the newest of the first framework (in FRAMEWORKS order)."""
    stacks = list(stacks)
    for fw in FRAMEWORKS:
        rels = [s.partition("@")[2] for s in stacks if s.partition("@")[0] == fw]
        if rels:
            order = known(fw)
            return f"{fw}@{max(rels, key=lambda r: order.index(r) if r in order else -1)}"
    return None


# -- configuration ----------------------------------------------------------------------------

def check_config(value, where: str) -> Dict[str, Tuple[str, ...]]:
    """``[tool.npulint.releases]``: framework = "release" or ["release", ...]."""
    from npulint.config import ConfigError, _did_you_mean

    if not isinstance(value, dict):
        raise ConfigError(f"{where}: 'releases' must be a table of framework = \"release\" (or a list)")
    out = {}
    for fw, rels in value.items():
        if fw not in FRAMEWORKS:
            raise ConfigError(f"{where}: releases: unknown framework '{fw}'{_did_you_mean(fw, FRAMEWORKS)} "
                              f"(known: {', '.join(FRAMEWORKS)})")
        if isinstance(rels, str):
            rels = [rels]
        if not isinstance(rels, list) or not rels or not all(isinstance(r, str) for r in rels):
            raise ConfigError(f"{where}: releases.{fw} must be a release name or a non-empty list of them")
        names = known(fw)
        for r in rels:
            if r not in names:
                raise ConfigError(f"{where}: releases.{fw}: unknown release {r!r}{_did_you_mean(r, names)} "
                                  f"(known: {', '.join(names)})")
        out[fw] = tuple(r for r in names if r in rels)
    return out


# -- inference --------------------------------------------------------------------------------

_READ_LIMIT = 1 << 20
# a package's identity in its own tree: framework -> (the folder of the package, a file of the
# package, the file that declares its version, the pattern of the declaration), the two files in
# that folder (torchair: python/, the root of the tree or the folder a run is rooted at)
_SETUP_VERSION = r"\bversion\s*=\s*['\"]([^'\"]+)['\"]"
_IDENTITY = (
    ("mindspeed-llm", "", "mindspeed_llm/__init__.py", "setup.py", r"__version__\s*=\s*['\"]([^'\"]+)['\"]"),
    ("mindspeed-mm", "", "mindspeed_mm/__init__.py", "pyproject.toml", r"(?m)^version\s*=\s*['\"]([^'\"]+)['\"]"),
    ("mindspeed", "", "mindspeed/megatron_adaptor.py", "setup.py", r"__version__\s*=\s*['\"]([^'\"]+)['\"]"),
    ("torchair", "python", "torchair/__init__.py", "setup.py", _SETUP_VERSION),
    ("torchair", "", "torchair/__init__.py", "setup.py", _SETUP_VERSION),
)
# the name the framework's own setup.py gives its distribution, where its package name alone
# could be a project's own (a ``torchair/`` shim package): every torchair release's python/setup.py
# says ``name='torchair'`` (Ascend/torchair, the release branches 6.0.rc1 to 26.0.0 and master)
_IDENTITY_NAME = {"torchair": re.compile(r"""\bname\s*=\s*['"]torchair['"]""")}
_PIN_NAMES = {"mindspeed": "mindspeed", "mindspeed_llm": "mindspeed-llm", "mindspeed-llm": "mindspeed-llm",
              "mindspeed_mm": "mindspeed-mm", "mindspeed-mm": "mindspeed-mm", "torchair": "torchair"}
_PIN = re.compile(r"(?i)(?<![\w.-])(mindspeed[-_]llm|mindspeed[-_]mm|mindspeed|torchair)\s*===?\s*([A-Za-z0-9_.+-]+)")
_COMMENT = re.compile(r"(?m)(^|\s)#.*$")
_GIT_PIN = re.compile(r"(?i)/(mindspeed-llm|mindspeed-mm|mindspeed|torchair)(?:\.git)?@([A-Za-z0-9_.-]+)")


def _read(path: str) -> Optional[str]:
    from npulint.source import TooBig, read_regular

    try:
        return read_regular(path, _READ_LIMIT).decode("utf-8", "replace")
    except (OSError, TooBig):
        return None


def project_root(settings, files: Sequence[str]) -> Optional[str]:
    """Where the project's own files (its package, its requirements) are: the configuration's
    folder, else the nearest folder at or above the linted files' common folder that holds a
    project marker (``.git``, ``setup.py``, ``pyproject.toml``, ...), else that common folder."""
    if getattr(settings, "config_path", None):
        return settings.root
    if not files:
        return None
    try:
        common = os.path.commonpath([os.path.abspath(f) for f in files])
    except ValueError:  # paths on different drives
        return None
    if not os.path.isdir(common):
        common = os.path.dirname(common)
    return nearest_project(common) or common


def _inferred(settings, files: Sequence[str]) -> Dict[str, Tuple[Tuple[str, ...], str]]:
    """What :func:`infer` finds for the files' project. Without a configuration, the files may
    belong to several projects (each its nearest folder with a project marker). A project that
    says nothing of a framework takes what the nearest project above it says (``docs/`` with its
    own ``requirements.txt`` runs in the repository's environment); then a framework's releases
    are inferred when every project gives the same, unknown when one of them names a release
    npulint has no data for (its files must not be judged by another's), and not inferred
    otherwise, so the pin of one project never decides for another's files."""
    if getattr(settings, "config_path", None) or len(files) < 2:
        return infer(project_root(settings, files))
    memo: Dict[str, Optional[str]] = {}
    marked = {folder: nearest_project(folder, memo) for folder in {os.path.dirname(os.path.abspath(f)) for f in files}}
    if not any(marked.values()):  # no project marker anywhere: one project, at the common folder
        return infer(project_root(settings, files))
    roots = {root or folder for folder, root in marked.items()}
    if len(roots) == 1:
        return infer(roots.pop())
    said: Dict[str, Dict[str, Tuple[Tuple[str, ...], str]]] = {}  # project -> what it (or one above it) says

    def says(root: str) -> Dict[str, Tuple[Tuple[str, ...], str]]:
        if root not in said:
            own = infer(root)
            parent = os.path.dirname(root)
            above = nearest_project(parent, memo) if parent != root else None
            said[root] = {**(says(above) if above else {}), **own}
        return said[root]

    found = [says(root) for root in sorted(roots)]
    out: Dict[str, Tuple[Tuple[str, ...], str]] = {}
    for fw in FRAMEWORKS:
        given = [f[fw] for f in found if fw in f]
        unknown = next((g for g in given if not g[0]), None)
        if unknown is not None:
            out[fw] = unknown
        elif len(given) == len(found) and all(g[0] == given[0][0] for g in given):
            out[fw] = given[0]
    return out


def _to_releases(framework: str, value: str, package: Optional[str] = None) -> Tuple[str, ...]:
    """The releases a pinned or declared *value* (a release name or a version) names; () when
    it names a release npulint has no data for: none it knows, or a version that a release it
    does not model declares too (``unmodelled``: every torchair release declares 0.1) -- unless
    *package*, the folder of the framework's own package in the linted tree, holds the
    ``marker`` file, which every modelled release has and no unmodelled one."""
    names = known(framework)
    if value in names:  # a branch (or a release named so): any snapshot of it
        return _branch_line(framework, value)
    version = canonical_version(value)
    rels = _versions(framework).get(version, ())
    data = _data(framework)
    if rels and any(canonical_version(str(v.get("version"))) == version for v in data.get("unmodelled", {}).values()):
        marker = data["marker"]["path"].split("/", 1)[1]  # python/torchair/... -> torchair/...
        if package is None or not os.path.isfile(os.path.join(package, marker)):
            return ()
    return rels


def infer(root: Optional[str]) -> Dict[str, Tuple[Tuple[str, ...], str]]:
    """framework -> (releases, evidence) inferred from the project at *root*: the tree being the
    framework itself (its package and declared version; a package without a version leaves every
    release of that framework), or pinned requirements naming a release or a version that maps to
    releases. Nothing is inferred from what could name several frameworks' releases at once. A
    version or pin that names a release npulint has no data for (:func:`_to_releases`) gives
    none: the framework's release is unknown."""
    out: Dict[str, Tuple[Tuple[str, ...], str]] = {}
    if not root or not os.path.isdir(root):
        return out
    for fw, base, package_file, version_file, pattern in _IDENTITY:
        folder = os.path.join(root, base) if base else root
        if fw not in out and os.path.isfile(os.path.join(folder, package_file)):
            text = _read(os.path.join(folder, version_file)) or ""
            if fw in _IDENTITY_NAME and not _IDENTITY_NAME[fw].search(text):
                continue  # a package of that name, not the framework's own tree
            m = re.search(pattern, text)
            if m is None:  # no version: every release
                out[fw] = (known(fw), f"inferred from {os.path.join(folder, package_file)}")
                continue
            rels = _to_releases(fw, m.group(1), folder)
            out[fw] = (rels, f"inferred from {os.path.join(folder, version_file)} (version {m.group(1)}"
                             f"{'' if rels else ', a release npulint has no data for'})")
    if out:
        return out
    pins: Dict[str, set] = {}
    unknown: set = set()
    evidence: Dict[str, str] = {}
    try:
        names = sorted(os.listdir(root))
    except OSError:
        names = []
    for name in names:
        if not (name.startswith("requirements") and name.endswith(".txt")) and \
                name not in ("pyproject.toml", "setup.py", "setup.cfg"):
            continue
        text = _read(os.path.join(root, name))
        if not text:
            continue
        # comments say nothing of what is installed (a `#` that starts the line or follows a blank:
        # a URL's `#egg=` stays)
        text = _COMMENT.sub("", text)
        for pattern in (_PIN, _GIT_PIN):
            for m in pattern.finditer(text):
                fw = _PIN_NAMES.get(m.group(1).lower())
                if fw is None:
                    continue
                rels = _to_releases(fw, m.group(2))
                pins.setdefault(fw, set()).update(rels)
                if not rels:  # the project may run a release npulint has no data for
                    unknown.add(fw)
                    evidence[fw] = f"inferred from {os.path.join(root, name)} ({m.group(0).strip()}, " \
                                   "a release npulint has no data for)"
                evidence.setdefault(fw, f"inferred from {os.path.join(root, name)} ({m.group(0).strip()})")
    for fw, rels in pins.items():
        order = known(fw)
        out[fw] = (() if fw in unknown else tuple(r for r in order if r in rels), evidence[fw])
    # MindSpeed pinned alone: the project may run it under MindSpeed-LLM or MindSpeed-MM, on the
    # releases of those that pair with it (a pin does not say which framework launches run)
    if out.get("mindspeed", ((),))[0]:
        pinned = {f"mindspeed@{r}" for r in out["mindspeed"][0]}
        pairs = mindspeed_data().get("pairs", {})
        for fw in ("mindspeed-llm", "mindspeed-mm"):
            if fw not in out:
                rels = tuple(r for r in known(fw) if pairs.get(f"{fw}@{r}") in pinned)
                if rels:
                    out[fw] = (rels, out["mindspeed"][1] + f" (the {LABELS[fw]} releases paired with it)")
    return out


def resolve(settings, files: Sequence[str], infer_from_project: bool = True) -> Releases:
    """The run's releases: configured ones, the deprecated ``mindspeed-stack`` alias, inferred
    ones (unless *infer_from_project* is false: then nothing is read); a framework with none of
    these is left out (every release it has)."""
    configured: Mapping[str, Tuple[str, ...]] = getattr(settings, "releases", None) or {}
    chosen = [(fw, rels, "configured") for fw, rels in configured.items()]
    have = set(configured)
    stack = getattr(settings, "mindspeed_stack", None)
    ms_configured = bool(have & set(MINDSPEED_FRAMEWORKS))
    if stack and not ms_configured:
        for fw, keep in _STACK_ALIAS[stack].items():
            chosen.append((fw, tuple(r for r in known(fw) if keep(r)), f"mindspeed-stack = \"{stack}\""))
        have.update(MINDSPEED_FRAMEWORKS)
    wanted = [fw for fw in FRAMEWORKS if fw not in have]
    if wanted and infer_from_project:
        inferred = _inferred(settings, files)
        if ms_configured or stack:
            inferred = {fw: v for fw, v in inferred.items() if fw not in MINDSPEED_FRAMEWORKS}
        for fw in wanted:
            if fw in inferred:
                rels, how = inferred[fw]
                chosen.append((fw, rels, how))
    order = {fw: i for i, fw in enumerate(FRAMEWORKS)}
    return Releases(tuple(sorted(chosen, key=lambda c: order[c[0]])))


# -- what a launch's flags say ----------------------------------------------------------------

def _megatron_ref(mindspeed_release: str) -> str:
    """The Megatron-LM a MindSpeed release is installed with: core_r0.8.0 for the *_core_r0.8.0
    releases, core_v0.12.1 for the *_core_r0.12.1 ones and master (research/mindspeed-flags.md
    §0; the install guides' `git checkout`)."""
    return "megatron@core_r0.8.0" if "core_r0.8.0" in mindspeed_release else "megatron@core_v0.12.1"


@functools.lru_cache(maxsize=1)
def _release_flags() -> Tuple[Dict[str, int], Dict[str, int]]:
    """(flag -> bit mask of the refs that register it, stack release -> mask of its refs: its
    framework's, its MindSpeed's, its Megatron-LM's, and the parts only some stacks' parsers run,
    ``stack_parts``: MindSpeed's legacy parser, tools/gen_known_flags.py)."""
    data = _load("mindspeed_release_flags.json")
    index = {name: i for i, name in enumerate(data["refs"])}
    flags = {f: sum(1 << i for i in refs) for f, refs in data["flags"].items()}
    pairs = mindspeed_data().get("pairs", {})
    extra = data.get("stack_parts", {})
    stacks: Dict[str, int] = {}
    for fw in MINDSPEED_FRAMEWORKS:
        for rel in known(fw):
            stack = f"{fw}@{rel}"
            ms = stack if fw == "mindspeed" else pairs.get(stack)
            parts = {stack, *extra.get(stack, ())} | ({ms, _megatron_ref(ms.partition("@")[2])} if ms else set())
            if all(p in index for p in parts):  # else: unknown, the stack is never excluded
                stacks[stack] = functools.reduce(lambda a, b: a | b, (1 << index[p] for p in parts))
    return flags, stacks


def runs_on(flags: Iterable[str], stacks: FrozenSet[str],
            fallback: FrozenSet[str] = frozenset()) -> FrozenSet[str]:
    """The stack releases among *stacks* whose argument parsers register every one of *flags*
    that some release registers: on the others Megatron's ``parse_args`` rejects the launch
    before any check runs. A flag no release registers (a typo, the project's own) says nothing
    here. When the flags rule out every one of *stacks*: those of *fallback* they allow
    (:meth:`Releases.mindspeed_fallback`: every known stack release when *stacks* were
    inferred)."""
    known_flags, masks = _release_flags()
    need = [known_flags[f] for f in flags if f in known_flags]
    if not need:
        return stacks
    out = frozenset(s for s in stacks if s not in masks or all(m & masks[s] for m in need))
    if not out and fallback:
        return runs_on(flags, fallback)
    return out


def narrowing(flags: Iterable[str], stacks: FrozenSet[str],
              fallback: FrozenSet[str] = frozenset()) -> Tuple[str, ...]:
    """The flags among *flags* that :func:`runs_on` rules a release out by: those some release
    of the set it judges from (*stacks*, or *fallback* when the flags rule out every one of
    *stacks*) does not register, sorted. A launch judged on fewer releases because of one of
    them is judged wrongly when the project's own parser registers it (the project phase knows)."""
    flags = tuple(flags)
    known_flags, masks = _release_flags()
    base = stacks
    if fallback and not runs_on(flags, stacks):
        base = fallback
    judged = [masks[s] for s in base if s in masks]
    return tuple(sorted(f for f in flags if f in known_flags and any(not known_flags[f] & m for m in judged)))


def effective(settings) -> Releases:
    """The releases a file's settings carry: those the run resolved for its configuration
    (``settings.effective_releases``), else (settings made outside a run) what is configured,
    with nothing read from disk."""
    got = getattr(settings, "effective_releases", None)
    if got is None:
        got = settings.effective_releases = resolve(settings, (), infer_from_project=False)
    return got
