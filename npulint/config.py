"""Configuration: ``[tool.npulint]`` in ``pyproject.toml``, or ``npulint.toml`` /
``.npulint.toml`` (top-level keys), found upward from the linted path."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

PRODUCTS = ("atlas-a2", "atlas-a3")
MINDSPEED_STACKS = ("current", "legacy")
CONFIG_NAMES = (".npulint.toml", "npulint.toml", "pyproject.toml")

# Like ruff's defaults, plus our own cache folder; a folder holding pyvenv.cfg is skipped too.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".npulint_cache", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn",
    ".tox", ".venv", ".vscode", "__pycache__", "__pypackages__", "_build", "buck-out", "build", "dist",
    "node_modules", "site-packages", "venv",
)

KEYS = ("extend", "product", "releases", "mindspeed-stack", "select", "ignore", "extend-select", "per-file-ignores",
        "exclude", "extend-exclude", "extend-known-flags", "force-exclude", "fixable", "unfixable",
        "extend-fixable", "extend-safe-fixes", "extend-unsafe-fixes", "unsafe-fixes")
_FIX_KEYS = {"fixable": "fixable", "unfixable": "unfixable", "extend-fixable": "extend_fixable",
             "extend-safe-fixes": "extend_safe_fixes", "extend-unsafe-fixes": "extend_unsafe_fixes"}


# a long option as a launch command writes it: "--name", without a value
_FLAG = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_.-]*")


class ConfigError(Exception):
    """A configuration or usage problem: exit code 2 with this one-line message."""


@dataclasses.dataclass
class Settings:
    root: str  # folder that relative patterns in the config are relative to
    config_path: Optional[str] = None
    product: str = "atlas-a2"
    # deprecated: "current" or "legacy", an alias for a set of MindSpeed releases (releases.py)
    mindspeed_stack: Optional[str] = None
    # [tool.npulint.releases]: framework -> the releases the project runs (releases.py)
    releases: Dict[str, Tuple[str, ...]] = dataclasses.field(default_factory=dict)
    select: Optional[List[str]] = None
    extend_select: List[str] = dataclasses.field(default_factory=list)
    ignore: List[str] = dataclasses.field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = dataclasses.field(default_factory=dict)
    exclude: List[str] = dataclasses.field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: List[str] = dataclasses.field(default_factory=list)
    # training flags the project registers where npulint cannot see it (NPU502 knows them)
    extend_known_flags: List[str] = dataclasses.field(default_factory=list)
    # the excludes apply to files named on the command line too (ruff's force-exclude)
    force_exclude: bool = False
    # fixes (ruff's keys, npulint.fixes.FixPolicy): whose fixes may be applied, which count as safe
    fixable: Optional[List[str]] = None  # None: every rule
    unfixable: List[str] = dataclasses.field(default_factory=list)
    extend_fixable: List[str] = dataclasses.field(default_factory=list)
    extend_safe_fixes: List[str] = dataclasses.field(default_factory=list)
    extend_unsafe_fixes: List[str] = dataclasses.field(default_factory=list)
    unsafe_fixes: Optional[bool] = None  # --fix applies unsafe fixes too (--unsafe-fixes); None: no
    # the configuration files this one extends (``extend``), the nearest first
    extends: Tuple[str, ...] = ()
    # the run's releases, configured or inferred (set by the pipeline at the start of a run)
    effective_releases: Optional[object] = None

    def fingerprint(self) -> Tuple:
        """Everything that can change a finding (for caches)."""
        return (self.product, self.mindspeed_stack, tuple(self.select or ()), tuple(self.extend_select),
                tuple(self.ignore), tuple(sorted((k, tuple(v)) for k, v in self.per_file_ignores.items())),
                tuple(self.extend_known_flags),
                self.effective_releases.key() if self.effective_releases is not None else
                (tuple(sorted(self.releases.items())), self.mindspeed_stack))


def find_config(start: str) -> Optional[str]:
    """The nearest configuration file at or above *start* (a file or folder)."""
    here = os.path.abspath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    while True:
        found = config_in(here)
        if found is not None:
            return found
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def config_in(folder: str) -> Optional[str]:
    """The configuration file in *folder* itself, if any."""
    for name in CONFIG_NAMES:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            if name != "pyproject.toml" or _has_tool_section(candidate):
                return candidate
    return None


_CONFIG_LIMIT = 16 << 20  # a configuration file larger than this is not one


def _read_config(path: str) -> bytes:
    from npulint.source import TooBig, read_regular

    try:
        return read_regular(path, _CONFIG_LIMIT)
    except TooBig as exc:
        raise OSError(0, f"{exc.size} bytes is too large for a configuration file")


def _has_tool_section(path: str) -> bool:
    try:
        data = _read_config(path)
    except OSError:
        return False
    if b"tool.npulint" not in data and b"npulint" not in data:
        return False
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError):
        return True  # let load_config report the broken file instead of skipping it silently
    return isinstance(doc.get("tool"), dict) and "npulint" in doc["tool"]


def load_config(path: str, known_codes: Sequence[str], _chain: Tuple[str, ...] = ()) -> Settings:
    """The settings of the configuration file *path*: the file it ``extend``s first (a path
    relative to *path*'s folder, itself read so), then its own keys over them (ruff's order: a
    key replaces the extended file's; ``ignore``, ``unfixable`` and the ``extend-*`` lists add
    to them, unless this file sets ``select`` / ``fixable``). A cycle is an error."""
    try:
        raw = _read_config(path)  # a regular file, by a bounded read (a FIFO never hangs)
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}")
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8")
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}")
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply to read")
    if os.path.basename(path) == "pyproject.toml":
        table = doc.get("tool", {}).get("npulint", {}) if isinstance(doc.get("tool"), dict) else {}
        where = f"{path} [tool.npulint]"
    else:
        table = doc
        where = path
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table")
    here = os.path.abspath(path)
    settings = Settings(root=os.path.dirname(here), config_path=here)
    if "extend" in table:
        settings = _extended(settings, table["extend"], where, known_codes, _chain + (here,))
        table = {k: v for k, v in table.items() if k != "extend"}
    apply_table(settings, table, where, known_codes)
    return settings


def _extended(settings: Settings, value, where: str, known_codes: Sequence[str], chain: Tuple[str, ...]) -> Settings:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: 'extend' must be the path of a configuration file, not {value!r}")
    target = os.path.normpath(os.path.join(settings.root, os.path.expanduser(os.path.expandvars(value))))
    real = os.path.realpath(target)
    if real in {os.path.realpath(p) for p in chain}:
        cycle = " -> ".join(chain[chain.index(next(p for p in chain if os.path.realpath(p) == real)):] + (target,))
        raise ConfigError(f"{where}: 'extend' makes a cycle: {cycle}")
    if not os.path.isfile(target):
        raise ConfigError(f"{where}: 'extend': no configuration file {target}")
    base = load_config(target, known_codes, chain)
    # the extended file's patterns are relative to its own folder (as in ruff): rewritten relative
    # to this file's, whose settings apply; an anchored one that points outside it matches nothing here
    rebase = functools.partial(_rebased_patterns, base.root, settings.root)
    return dataclasses.replace(
        base, root=settings.root, config_path=settings.config_path,
        extends=(os.path.abspath(target),) + base.extends,
        exclude=[q for p in base.exclude for q in rebase(p)],
        extend_exclude=[q for p in base.extend_exclude for q in rebase(p)],
        per_file_ignores={q: codes for p, codes in base.per_file_ignores.items() for q in rebase(p)})


def _rebased_patterns(old_root: str, new_root: str, pattern: str) -> List[str]:
    """*pattern*, relative to *old_root*, as patterns relative to *new_root*: each alternative
    of its ``{a,b}`` groups rebased on its own (:func:`_rebased_pattern`: none where it points
    outside *new_root*); an anchored one also as its absolute path, which ruff's reading of the
    rebased (root-anchored) text would take from the file system's root (:mod:`npulint.globs`)."""
    from npulint import globs

    if os.path.normpath(old_root) == os.path.normpath(new_root):
        return [pattern]
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    try:
        alternatives = globs.expand(body) if "{" in body else [body]
    except globs.GlobError as exc:
        raise ConfigError(f"invalid pattern {pattern!r}: {exc}")
    out: List[str] = []
    for alt in alternatives:
        rebased = _rebased_pattern(old_root, new_root, ("!" if negated else "") + alt)
        if rebased is None:
            continue
        out.append(rebased)
        anchored = "/" in alt.rstrip("/") and not alt.startswith("**/")
        if anchored and not negated and rebased.lstrip("!") not in ("*",):
            out.append(os.path.join(os.path.abspath(old_root), alt.lstrip("/")))
    return list(dict.fromkeys(out))


def _rebased_pattern(old_root: str, new_root: str, pattern: str) -> Optional[str]:
    """A gitignore-style *pattern* relative to *old_root*, made relative to *new_root*; None
    when it is anchored to a place outside *new_root* (it can match nothing there). Unanchored
    patterns (no slash but a trailing one, or a leading ``**/``) match at any depth: unchanged."""
    import fnmatch

    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    if os.path.normpath(old_root) == os.path.normpath(new_root):
        return pattern
    between = os.path.relpath(new_root, old_root).replace(os.sep, "/")
    inside = between != ".." and not between.startswith("../")
    if "/" not in body.rstrip("/") or body.startswith("**/"):
        # unanchored: matches at any depth; if it matches a folder between the two roots, it
        # covers everything under the new one
        name = body[3:] if body.startswith("**/") else body
        if inside and "/" not in name.rstrip("/") and any(fnmatch.fnmatchcase(part, name.rstrip("/"))
                                                          for part in between.split("/")):
            return ("!" if negated else "") + "*"
        return pattern
    where = os.path.normpath(os.path.join(old_root, body.lstrip("/")))
    rel = os.path.relpath(where, new_root).replace(os.sep, "/")
    if rel == ".":  # the new root itself
        return ("!" if negated else "") + "*"
    if rel == ".." or rel.startswith("../"):
        return None
    # still anchored: a leading slash where the rest no longer has one ("pkg/tests" -> "/tests")
    anchor = "/" if body.startswith("/") or "/" not in rel else ""
    return ("!" if negated else "") + anchor + rel + ("/" if body.endswith("/") else "")


def _str_list(value, key: str, where: str) -> List[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings")
    return list(value)


def apply_table(settings: Settings, table: Mapping, where: str, known_codes: Sequence[str]) -> None:
    """Apply *table*'s keys to *settings* (fresh, or those of an extended file): a key replaces
    what is there, but ``ignore``, ``unfixable`` and the ``extend-*`` lists add to it; ``select``
    (``fixable``) starts the selection (of fixable rules) afresh, as in ruff."""
    if "select" in table:
        settings.extend_select, settings.ignore = [], []
    if "fixable" in table:
        settings.extend_fixable, settings.unfixable = [], []
    for key, value in table.items():
        if key not in KEYS:
            hint = _did_you_mean(key, KEYS)
            raise ConfigError(f"{where}: unknown key '{key}'{hint}")
        if key == "product":
            if value not in PRODUCTS:
                raise ConfigError(f"{where}: product must be one of {', '.join(PRODUCTS)}, not {value!r}")
            settings.product = value
        elif key == "mindspeed-stack":
            if value not in MINDSPEED_STACKS:
                raise ConfigError(f"{where}: mindspeed-stack must be one of "
                                  f"{', '.join(MINDSPEED_STACKS)}, not {value!r}")
            settings.mindspeed_stack = value
        elif key == "releases":
            from npulint.releases import check_config

            settings.releases = check_config(value, where)
        elif key in ("select", "ignore", "extend-select"):
            codes = check_codes(_str_list(value, key, where), known_codes, f"{where}: '{key}'")
            if key == "select":
                settings.select = codes
            elif key == "ignore":
                settings.ignore = settings.ignore + codes
            else:
                settings.extend_select = settings.extend_select + codes
        elif key in _FIX_KEYS:
            codes = check_codes(_str_list(value, key, where), known_codes, f"{where}: '{key}'")
            attr = _FIX_KEYS[key]
            setattr(settings, attr, codes if key == "fixable" else getattr(settings, attr) + codes)
        elif key == "unsafe-fixes":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: 'unsafe-fixes' must be true or false, not {value!r}")
            settings.unsafe_fixes = value
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: 'per-file-ignores' must be a table of pattern = [codes]")
            pfi = {}
            for pattern, codes in value.items():
                _check_pattern(pattern, f"per-file-ignores.{pattern}", where)
                pfi[pattern] = check_codes(_str_list(codes, f"per-file-ignores.{pattern}", where),
                                           known_codes, f"{where}: 'per-file-ignores.{pattern}'")
            settings.per_file_ignores = pfi
        elif key == "exclude":
            settings.exclude = [_check_pattern(p, key, where) for p in _str_list(value, key, where)]
        elif key == "extend-exclude":
            settings.extend_exclude = settings.extend_exclude + [_check_pattern(p, key, where)
                                                                 for p in _str_list(value, key, where)]
        elif key == "force-exclude":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: 'force-exclude' must be true or false, not {value!r}")
            settings.force_exclude = value
        elif key == "extend-known-flags":
            flags = _str_list(value, key, where)
            for flag in flags:
                if not _FLAG.fullmatch(flag):
                    raise ConfigError(f"{where}: 'extend-known-flags' wants flags as written on a command line, "
                                      f"like \"--my-flag\", not {flag!r}")
            settings.extend_known_flags = settings.extend_known_flags + flags


def _check_pattern(pattern: str, key: str, where: str) -> str:
    """A pattern both readings can compile and match with (ruff's glob, :mod:`npulint.globs`,
    after an initial ``!``; and each of its ``{a,b}`` alternatives as a gitignore line), else a
    clear error (``[z-a]`` is a bad range, ``{a`` an unclosed group; pathspec raises on some
    patterns only when matching)."""
    import pathspec

    from npulint import globs

    try:
        body = pattern[1:] if pattern.startswith("!") else pattern
        globs.compile_glob(body)
        spec = pathspec.GitIgnoreSpec.from_lines(globs.expand(body))
        spec.match_file("a/b.py")
    except Exception as exc:  # GlobError; re.error, ValueError, TypeError from the pattern parser
        raise ConfigError(f"{where}: '{key}': invalid pattern {pattern!r}: {exc}")
    return pattern


def check_codes(codes: Iterable[str], known_codes: Sequence[str], where: str) -> List[str]:
    """Validate codes or prefixes (``NPU1``, ``NPU101``, ``ALL``); raise on an unknown one."""
    out = []
    for raw in codes:
        code = raw.strip().upper()
        if not code:
            continue
        if code != "ALL" and not any(k.startswith(code) for k in known_codes):
            hint = _did_you_mean(code, known_codes)
            raise ConfigError(f"{where}: unknown rule code or prefix '{raw}'{hint}")
        out.append(code)
    return out


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _match_len(code: str, patterns: Iterable[str]) -> int:
    best = -1
    for p in patterns:
        if p == "ALL":
            best = max(best, 0)
        elif code.startswith(p):
            best = max(best, len(p))
    return best


def enabled_codes(all_rules, select: Optional[Sequence[str]], extend_select: Sequence[str],
                  ignore: Sequence[str]) -> Set[str]:
    """ruff's semantics: the most specific matching selector wins; on a tie, ``ignore`` wins.

    Without ``select``, every rule whose severity is not ``info`` is selected.
    """
    out = set()
    for rule in all_rules:
        code = rule.code
        if select is None:
            sel = max(_match_len(code, extend_select), 0 if rule.default_enabled else -1)
        else:
            sel = max(_match_len(code, select), _match_len(code, extend_select))
        ign = _match_len(code, ignore)
        if sel >= 0 and sel > ign:
            out.add(code)
    return out


class ConfigResolver:
    """Settings for each linted file: the nearest configuration above the file's folder
    (ruff's hierarchical configuration), or the ``--config`` file for every file; command-
    line selections apply on top. Cached per folder and per configuration file."""

    def __init__(self, rules, explicit: Optional[str] = None, select: Optional[List[str]] = None,
                 extend_select: Sequence[str] = (), ignore: Sequence[str] = (),
                 fixable: Optional[List[str]] = None, unfixable: Sequence[str] = (),
                 extend_fixable: Sequence[str] = (), exclude: Optional[Sequence[str]] = None,
                 extend_exclude: Sequence[str] = ()):
        self.rules = list(rules)
        # --exclude replaces every configuration's exclude (the defaults too), --extend-exclude
        # adds to it, as in ruff; their patterns are relative to the working folder (ruff's
        # FilePattern::from_str), rewritten relative to each configuration's folder
        for key, patterns in (("--exclude", exclude or ()), ("--extend-exclude", extend_exclude)):
            for pattern in patterns:
                _check_pattern(pattern, key, "command line")
        self.exclude = None if exclude is None else list(exclude)
        self.extend_exclude = list(extend_exclude)
        self.cwd = os.getcwd()
        self.known = [r.code for r in self.rules]
        self.select = select
        self.extend_select = list(extend_select)
        self.ignore = list(ignore)
        # --fixable replaces the configured selection; --unfixable and --extend-fixable add (ruff)
        self.fixable = fixable
        self.unfixable = list(unfixable)
        self.extend_fixable = list(extend_fixable)
        self._by_config: Dict[Optional[str], Tuple[Settings, Set[str]]] = {}
        self._by_dir: Dict[str, Optional[str]] = {}
        self._by_path: Dict[str, Tuple[Settings, Set[str]]] = {}
        self.explicit = None
        if explicit is not None:
            if not os.path.isfile(explicit):
                raise ConfigError(f"config file not found: {explicit}" if not os.path.exists(explicit) else
                                  f"cannot read config {explicit}: not a regular file")
            self.explicit = os.path.abspath(explicit)

    def _load(self, config: Optional[str]) -> Tuple[Settings, Set[str]]:
        cached = self._by_config.get(config)
        if cached is None:
            settings = load_config(config, self.known) if config else Settings(root=os.getcwd())
            if self.select is not None:
                settings.select = list(self.select)
            settings.extend_select = settings.extend_select + self.extend_select
            settings.ignore = settings.ignore + self.ignore
            if self.fixable is not None:
                settings.fixable, settings.extend_fixable = list(self.fixable), []
            settings.unfixable = list(settings.unfixable) + self.unfixable
            settings.extend_fixable = list(settings.extend_fixable) + self.extend_fixable
            rebase = functools.partial(_rebased_patterns, self.cwd, settings.root)
            if self.exclude is not None:
                settings.exclude = [q for p in self.exclude for q in rebase(p)]
            settings.extend_exclude = list(settings.extend_exclude) + [q for p in self.extend_exclude for q in rebase(p)]
            enabled = enabled_codes(self.rules, settings.select, settings.extend_select, settings.ignore)
            cached = self._by_config[config] = (settings, enabled)
        return cached

    def config_for_dir(self, folder: str) -> Optional[str]:
        if self.explicit is not None:
            return self.explicit
        folder = os.path.abspath(folder)
        found = self._by_dir.get(folder, False)
        if found is False:
            # each folder looks at its own files once; the rest comes from its parent's answer
            found = config_in(folder)
            if found is None:
                parent = os.path.dirname(folder)
                found = self.config_for_dir(parent) if parent != folder else None
            self._by_dir[folder] = found
        return found

    def for_dir(self, folder: str) -> Tuple[Settings, Set[str]]:
        return self._load(self.config_for_dir(folder))

    def for_path(self, path: str) -> Tuple[Settings, Set[str]]:
        found = self._by_path.get(path)
        if found is None:
            folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
            found = self._by_path[path] = self.for_dir(folder)
        return found

    def for_file(self, path: str) -> Tuple[Settings, Set[str]]:
        """:meth:`for_path` for an absolute path known not to be a folder (one that discovery
        found): no stat."""
        found = self._by_path.get(path)
        if found is None:
            found = self._by_path[path] = self.for_dir(os.path.dirname(path))
        return found

    def all_enabled(self) -> Set[str]:
        out: Set[str] = set()
        for _, enabled in self._by_config.values():
            out |= enabled
        return out
