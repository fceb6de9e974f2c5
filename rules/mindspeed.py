"""NPU501-NPU505: MindSpeed launch flags, read from shell launch scripts and Python launchers,
checked against the catalog in :mod:`mindspeed_catalog`; AMO and ``adapt_mem_func_wrapper``.

Shared analyses (they report no rule of their own): :class:`ShellLaunches` and
:class:`PythonLaunches` read the launch commands (of shell scripts; of ``subprocess``/``os.exec*``
lists, built from parts with ``+``, ``*`` and ``shlex.split`` too, ``os.execl*`` arguments, and
``sys.argv``) and record, per launch of a training entry, what the launch rules find in its
command given the catalog entries that hold on the releases it may run on (:func:`launch_found`),
and whether it enables AMO; :class:`FlagFacts` records the flags the linted files register
(with the choices of those the catalog has choices for) and whose parser reads each linted entry
script's command line, made once per run into :class:`RunFlags`; :class:`FunctionClasses` knows
a file's classes and which subclass ``torch.autograd.Function``, and records their bases for the
project phase. The rules: NPU501 (``conflict`` entries), NPU504 (``requires``, ``choices`` and
``range`` entries) and NPU502 (flags no release registers) each check a launch command
(``check``) and report in the project phase what they keep of it given the linted files
(``judge``: the launches Megatron's parser reads, their registrations); NPU503 records its
``X.apply(...)`` calls (with their fixes) and reports them in the project phase when a launch
enables AMO; NPU505 checks the file's ``adapt_mem_func_wrapper`` calls, those naming a class of
another module in the project phase."""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import os
import re
import shlex
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from npulint import argflags
from npulint.checker import render_in_block
from npulint.lintrule import Analysis, Invalid, LintRule
from npulint.model import Fix, LazySpan, Span
from npulint.paths import reached_from
from npulint.shell import command_start
from npulint.source import SHELL

from npulint.program import one_program, program_root
from npulint.releases import narrowing, runs_on

from .mindspeed_catalog import (CATALOG, DEFAULTS, TRAINING_ENTRIES, Applicable, Entry, catalog_index, compared_flags,
                                condition_flags, partial_requirements)

_SRC = ("MindSpeed's adaptive memory optimization page, Ascend/MindSpeed@c721ce33 (2.0.0_core_r0.8.0) "
        "docs/features/adaptive-memory.md:32-40")
AMO_FLAG = "--adaptive-memory-optimization"
# Every TRAINING_ENTRIES name starts with one of these (the prefilter looks for them).
ENTRY_PREFIXES = ("pretrain_", "posttrain_", "finetune_")
WRAPPER_MODULE = "mindspeed.core.memory.adaptive_memory.adaptive_memory_function"
WRAPPER_NAME = "adapt_mem_func_wrapper"
WRAPPER = f"{WRAPPER_MODULE}.{WRAPPER_NAME}"
FUNCTION_BASES = {"torch.autograd.Function", "torch.autograd.function.Function"}
MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
# the facts the launch readers record for the project phase: each launch's findings (held back
# until it is known whether its entry script parses its own arguments), and where AMO is enabled
LAUNCH_TOPIC = "mindspeed.launch"
AMO_TOPIC = "mindspeed.amo"
ARGPARSE_TOPIC = "mindspeed.argparse"
# the flags the catalog has a parser's ``choices`` for: their registrations in the linted files
# judge a value outside them (MindSpeedMissingRequirement.judge)
CHOICE_FLAGS = tuple(sorted({e.a[1] for e in CATALOG if e.kind == "choices" and e.checked_by == "parser"}))


# ---------------------------------------------------------------------------------------------
# Launch commands (shared by the shell and Python sides): a word is (text, span, known, splat)


class Word(LazySpan):
    """*span* may be a function that computes it, called on first use."""

    __slots__ = ("text", "_span", "known", "splat")

    def __init__(self, text: str, span, known: bool = True, splat: bool = False):
        self.text = text
        self._span = span
        self.known = known
        self.splat = splat  # stands for any number of unknown words

    def __repr__(self) -> str:
        return f"Word({self.text!r}, {self.span!r}, {self.known!r}, {self.splat!r})"


@dataclasses.dataclass
class Occ:
    flag: str
    word: Word
    value: Optional[Word]
    index: int


@dataclasses.dataclass
class Launch:
    entry: Word
    args: List[Word]


_PYTHON = re.compile(r"python(3(\.\d+)?)?")


def find_launch(words: Sequence[Word]) -> Optional[Launch]:
    """The entry script and its arguments, for a launcher command (after the wrappers that
    run it: ``nohup``, ``timeout N``, ``env A=B``, ``numactl …``, ``taskset …``); None for
    anything else."""
    i = command_start(words)
    if i is None or i >= len(words) or not words[i].known:
        return None
    name = os.path.basename(words[i].text)
    rest = list(words[i + 1:])
    if _PYTHON.fullmatch(name):
        # python [opts] entry.py ... | python -m torch.distributed.launch|run [opts] entry.py ...
        j = 0
        while j < len(rest) and rest[j].known and rest[j].text.startswith("-") and rest[j].text not in ("-m", "-c"):
            j += 2 if rest[j].text in ("-W", "-X") else 1  # options with an argument
        if j < len(rest) and rest[j].known and rest[j].text == "-m":
            if j + 1 < len(rest) and rest[j + 1].known and rest[j + 1].text in ("torch.distributed.launch",
                                                                                 "torch.distributed.run"):
                return _entry(rest[j + 2:])
            return None
        if j < len(rest) and is_script_word(rest[j]):
            return Launch(rest[j], rest[j + 1:])
        return None
    if name in ("torchrun", "msrun"):
        return _entry(rest)
    return None


def is_script_word(w: Word) -> bool:
    """A word that names a ``.py`` script: known, or known from its last ``/`` on (its folder
    from a variable: ``$BASE/pretrain_gpt.py``, ``${DIR}/posttrain_gpt.py``)."""
    text = w.text
    if w.known:
        return text.endswith(".py") and not text.startswith("-")
    if "/" not in text:
        return False
    name = text.rsplit("/", 1)[1]
    return name.endswith(".py") and "\x00" not in name and "\x01" not in name


def _entry(rest: Sequence[Word]) -> Optional[Launch]:
    for k, w in enumerate(rest):
        if is_script_word(w):
            return Launch(w, list(rest[k + 1:]))
        if w.known and w.text in ("-m", "--module", "--no-python", "--no_python"):
            return None
    return None


def is_training_entry(entry: Word) -> bool:
    return re.fullmatch(TRAINING_ENTRIES, os.path.basename(entry.text)) is not None


def flags_of(args: Sequence[Word]) -> Tuple[List[Occ], List[int]]:
    """Flag occurrences (``--name value`` or ``--name=value``) and the indices of splats."""
    occs: List[Occ] = []
    splats = []
    i = 0
    while i < len(args):
        w = args[i]
        if w.splat:
            splats.append(i)
            i += 1
            continue
        if w.known and w.text.startswith("--") and len(w.text) > 2:
            if "=" in w.text:
                name, _, val = w.text.partition("=")
                occs.append(Occ(name, Word(name, w.lazy_span), Word(val, w.lazy_span), i))
                i += 1
                continue
            value = None
            if i + 1 < len(args) and not args[i + 1].splat and not (
                    args[i + 1].known and args[i + 1].text.startswith("--")):
                value = args[i + 1]
            occs.append(Occ(w.text, w, value, i))
            i += 2 if value is not None else 1
            continue
        i += 1
    return occs, splats


class Cmd:
    """A launch's flags, with what can and cannot be known about them."""

    def __init__(self, launch: Launch):
        self.launch = launch
        self.occs, self.splats = flags_of(launch.args)
        self.by_flag: Dict[str, List[Occ]] = {}
        for o in self.occs:
            self.by_flag.setdefault(o.flag, []).append(o)
        self.has_unknown = bool(self.splats) or any(not w.known for w in launch.args)
        # what an alias (Alias) changed: the values of absent flags, and flags it leaves unknown
        self.defaults: Dict[str, Any] = DEFAULTS
        self.set_absent: Dict[str, Any] = {}
        self.unknown_flags: FrozenSet[str] = frozenset()

    def under(self, alias) -> "Cmd":
        """The command as the checks after *alias* read it (whether it runs is the caller's
        question): *alias.to* takes *alias.source*'s occurrences (the flag named is the one
        written), or, when the source is not written, its parser default (unknown without one);
        or the literal *alias.value* a validator sets it to."""
        view = copy.copy(self)
        view.by_flag = dict(self.by_flag)
        view.defaults = dict(self.defaults)
        view.set_absent = dict(self.set_absent)
        view.by_flag.pop(alias.to, None)
        view.set_absent.pop(alias.to, None)
        if alias.source is None and alias.unknown:  # set to a value not known (a model config's)
            view.unknown_flags = self.unknown_flags | {alias.to}
            return view
        if alias.source is None:  # set to a literal (``args.use_flash_attn = True``)
            known, value, occ = self.value(alias.to)
            if known and occ is not None and (value == alias.value or str(value) == str(alias.value)):
                return self  # (the value written: nothing changes, and the flag keeps its place)
            view.defaults[alias.to] = view.set_absent[alias.to] = alias.value
            view.unknown_flags = self.unknown_flags - {alias.to}
            return view
        occs = self.by_flag.get(alias.source)
        if occs or alias.source in self.unknown_flags or self.splats:
            view.unknown_flags = self.unknown_flags - {alias.to}
            if occs:
                view.by_flag[alias.to] = occs
            else:
                view.unknown_flags |= {alias.to}
            return view
        defaults = dict(alias.defaults)
        if alias.source in defaults:
            view.defaults[alias.to] = view.set_absent[alias.to] = defaults[alias.source]
            view.unknown_flags = self.unknown_flags - {alias.to}
        else:
            view.unknown_flags = self.unknown_flags | {alias.to}
        return view

    def value(self, flag: str):
        """(known, value, occ): the flag's effective value (the last occurrence, or the default)."""
        occs = self.by_flag.get(flag)
        if not occs:
            if self.splats or flag in self.unknown_flags:
                return False, None, None
            return True, self.defaults.get(flag), None
        last = occs[-1]
        if any(s > last.index for s in self.splats):
            return False, None, last
        if last.value is None:
            return True, True, last
        if not last.value.known:
            return False, None, last
        return True, last.value.text, last

    def holds(self, cond) -> Tuple[Optional[bool], Optional[Occ]]:
        kind = cond[0]
        if kind in ("all", "any"):
            return self._combined(kind, cond[1:])
        if kind == "unknown":
            return None, None
        if kind == "not":
            r, occ = self.holds(cond[1])
            return (None if r is None else not r), occ
        flag = cond[1]
        if kind == "on":
            occs = self.by_flag.get(flag)
            if flag in self.unknown_flags and not occs:
                return None, None
            if flag in self.set_absent and not occs:  # set from an alias's default: its truth
                return bool(self.set_absent[flag]), None
            if occs:
                # MindSpeed mostly tests the attribute's truth: `--moe-zero-memory-num-layers 0` is
                # off for an int flag but `--noop-layers 0` (a str) is on; without the flag's type
                # a zero or empty value is unknown
                last = occs[-1]
                if last.value is not None and last.value.known and _falsy(last.value.text):
                    return None, last
                return True, occs[0]
            return (None if self.splats else False), None
        known, value, occ = self.value(flag)
        if not known or value is None:  # absent without a catalogued default: unknown
            return None, occ
        if kind in ("gt", "le", "lt"):
            try:
                num = float(value)
            except (TypeError, ValueError):
                return None, occ
            return {"gt": num > cond[2], "le": num <= cond[2], "lt": num < cond[2]}[kind], occ
        text = str(value)
        if kind == "eq":
            return text == str(cond[2]), occ
        if kind == "ne":
            return text != str(cond[2]), occ
        if kind == "in":
            return text in tuple(map(str, cond[2])), occ
        if kind == "notin":
            return text not in tuple(map(str, cond[2])), occ
        return None, occ

    def _combined(self, kind: str, conds) -> Tuple[Optional[bool], Optional[Occ]]:
        """``("all", c, ...)``: every condition holds; ``("any", c, ...)``: at least one does.
        Unknown unless decided by the known parts (an ``all`` with a false part is false, an
        ``any`` with a true part is true). The occurrence is the latest written flag involved."""
        results = [self.holds(c) for c in conds]
        decisive = False if kind == "all" else True
        hits = [occ for r, occ in results if r is decisive]
        if hits or (kind == "all" and any(r is False for r, _ in results)):
            if kind == "all":
                return False, None
            written = [o for o in hits if o is not None]
            return True, (max(written, key=lambda o: o.index) if written else None)
        if any(r is None for r, _ in results):
            return None, None
        # all parts hold (all) / all parts are false (any)
        if kind == "any":
            return False, None
        written = [occ for _, occ in results if occ is not None]
        return True, (max(written, key=lambda o: o.index) if written else None)

    def has_unknown_for(self, cond) -> bool:
        """Whether an unknown word could be the companion flag (or its value). Any unknown word
        could be a flag: a word after a flag may be its value or a flag of its own (the known-flag
        list does not say which flags take values)."""
        if self.has_unknown:
            return True
        if cond[0] in ("all", "any", "not"):
            return any(self.has_unknown_for(c) for c in cond[1:])
        if cond[0] == "unknown" or cond[1] in self.unknown_flags:
            return True
        occs = self.by_flag.get(cond[1])
        if occs and (occs[-1].value is not None and not occs[-1].value.known):
            return True
        return False


def _variants(cmd: Cmd, view) -> List[Cmd]:
    """The command as an entry's check reads it on one release: its absent flags with the
    release's parser defaults (*view*'s), then each alias of *view* (in upstream's order) applied
    where its test holds on the launch (read with those defaults), and both with and without it
    where that test or the order is not known."""
    if view.defaults:
        cmd = copy.copy(cmd)
        cmd.defaults = {**cmd.defaults, **dict(view.defaults)}
    out = [cmd]
    for alias in view.aliases:
        after = []
        for c in out:
            judge = copy.copy(c)
            judge.defaults = {**c.defaults, **dict(alias.defaults)}
            runs, _ = judge.holds(alias.when)
            if runs is False:
                after.append(c)
            elif runs and alias.certain:
                after.append(c.under(alias))
            else:
                after += [c, c.under(alias)]
        out = after
    return out


def agreed(cmd: Cmd, applicable: Applicable, find) -> list:
    """What ``find(c)`` (a list) finds in every way the releases of *applicable* may read *cmd*
    (:attr:`Applicable.views`, :func:`_variants`): a release that maps a flag onto another, or
    may, does not report what only the unmapped reading shows, and neither do the others."""
    found = None
    for view in applicable.views:
        for c in _variants(cmd, view):
            these = find(c)
            found = these if found is None else [f for f in found if f in these]
            if not found:
                return []
    return found or []


def _falsy(text: str) -> bool:
    if text == "":
        return True
    try:
        return float(text) == 0
    except ValueError:
        return False


# Flags that make Megatron take the arguments from elsewhere: a YAML file (``--yaml-cfg``, MEG@0.12.1
# megatron/training/arguments.py:87-91), or the checkpoint, which ``load_args_from_checkpoint``
# reads before the validators and which overrides written flags too (``--use-checkpoint-args``:
# the dispatcher, the normalization, the experts, TP/PP/EP... with ``force=True``, NVIDIA/Megatron-LM@a845aa7e
# megatron/training/checkpointing.py:1075-1145; Ascend/MindSpeed-LLM@c77308a1
# mindspeed_llm/training/initialize.py:102-104). Then only the spelling of the flags can be checked.
ARGS_FROM_ELSEWHERE = ("--yaml-cfg", "--use-checkpoint-args")


def args_from_elsewhere(cmd: Cmd) -> bool:
    return any(flag in cmd.by_flag for flag in ARGS_FROM_ELSEWHERE)


def catalog_entries(cmd: Cmd, runs: FrozenSet[str]) -> Tuple[Applicable, ...]:
    """The catalog entries to check in a launch command that may run on any of *runs* (stack
    releases, ``framework@release``: :func:`launch_runs_on`): those that hold on all of them
    and name a flag it writes (:func:`mindspeed_catalog.catalog_index`), in catalog order. None
    when Megatron takes the arguments from elsewhere (:data:`ARGS_FROM_ELSEWHERE`)."""
    if args_from_elsewhere(cmd):
        return ()
    entries, index = catalog_index(runs)
    return tuple(entries[at] for at in sorted({i for flag in cmd.by_flag for i in index.get(flag, ())}))


def launch_runs_on(cmd: Cmd, stacks: FrozenSet[str], fallback: FrozenSet[str] = frozenset(),
                   declared: FrozenSet[str] = frozenset()) -> FrozenSet[str]:
    """The releases a launch command that may run on any of *stacks*, or on any of *fallback*
    when its flags rule out every one of *stacks* (inferred releases the launch contradicts),
    is judged on: those whose parsers take every flag of the command but those the
    configuration declares (*declared*: the project's parser takes them on every release)."""
    return runs_on(_narrowing_flags(cmd, declared), stacks, fallback)


def rejected_everywhere(cmd: Cmd, runs: FrozenSet[str]) -> List[tuple]:
    """NPU504's candidates for a flag whose requirements differ between the releases the
    launch may run on (*runs*: :func:`launch_runs_on`) and fail on each of them: one finding
    at the flag, naming each requirement with the releases it holds for."""
    if args_from_elsewhere(cmd) or not runs:
        return []
    partial = partial_requirements(runs)
    out: List[tuple] = []
    for flag in cmd.by_flag:
        fired = []
        for mine, applicable in partial.get(flag, ()):
            found = agreed(cmd, applicable, lambda c, a=applicable: MindSpeedMissingRequirement._finding(c, a))
            if found:
                fired.append((mine, found[0]))
        if fired and frozenset().union(*(mine for mine, _ in fired)) == runs:
            span = fired[0][1][0]
            parts = [found[1].split(": ", 1)[1] for _, found in fired]
            out.append((span, f"{flag}: {'; and '.join(parts)}: every release the launch may run on rejects it", None))
    return out


def _narrowing_flags(cmd: Cmd, declared: FrozenSet[str]) -> List[str]:
    """The flags of *cmd* that may say which releases it runs on: all but the declared ones."""
    return [f for f in cmd.by_flag if f not in declared]


# MindSpeed-MM's YAML launches: from 26.0.0 on, `pretrain_transformers.py` (and, from 26.1.0,
# `mindspeed_mm/mcore/models/qwen3_5/pretrain_qwen3_5.py`) run mindspeed_mm/configs/read_yaml_config.py
# before Megatron parses anything (Ascend/MindSpeed-MM@57069cd5 (master) pretrain_transformers.py:42-43;
# @5f5b60a3 (26.0.0) pretrain_transformers.py:34-35); when sys.argv[1] ends in ".yaml" it sets
# sys.argv to the script name and the flags of the YAML's `gpt_args` alone, dropping the rest of
# the command line (@57069cd5 mindspeed_mm/configs/read_yaml_config.py:31-33, 49, 75; the same at
# 26.0.0 and 26.1.0). Earlier releases, and entries that do not read the YAML, reject the
# positional argument at start-up (Megatron's parse_args, NPU502's source): either way the
# command line's flags are not what the training runs with.
YAML_ENTRIES = ("pretrain_transformers.py", "pretrain_qwen3_5.py")


def flags_from_yaml(launch: Launch) -> bool:
    """Whether the launch's first argument may be a YAML file that replaces its flags: one that
    ends in ``.yaml`` (also with a folder from a variable), or for the entries that read one
    (:data:`YAML_ENTRIES`), one npulint does not know (an unset variable may hold the path)."""
    if not launch.args:
        return False
    first = launch.args[0]
    if first.splat or not first.known:
        if first.text.endswith(".yaml"):
            return True
        return os.path.basename(launch.entry.text) in YAML_ENTRIES
    return first.text.endswith(".yaml")


def launch_found(launch: Launch, stacks: FrozenSet[str], fallback: FrozenSet[str] = frozenset(),
                 declared: FrozenSet[str] = frozenset()) -> Tuple[Dict[str, list], Tuple[str, ...]]:
    """What each launch rule finds in one launch command of a training entry, by code
    (:meth:`_LaunchRule.check`: its candidates, plain data), given the command and the catalog
    entries that apply to it (:func:`catalog_entries`); and the flags that narrowed the releases
    it is judged on (:func:`npulint.releases.narrowing`). Nothing for another command, or for one
    whose flags a YAML file replaces (:func:`flags_from_yaml`)."""
    if not is_training_entry(launch.entry) or flags_from_yaml(launch):
        return {}, ()
    cmd = Cmd(launch)
    runs = launch_runs_on(cmd, stacks, fallback, declared)
    entries = catalog_entries(cmd, runs)
    out = {}
    for rule in LAUNCH_RULES:
        found = rule.check(cmd, entries)
        if rule is MindSpeedMissingRequirement:
            found = found + [f for f in rejected_everywhere(cmd, runs) if not any(g[0] == f[0] for g in found)]
        if found:
            out[rule.CODE] = found
    narrowed = narrowing(_narrowing_flags(cmd, declared), stacks, fallback) if entries or out else ()
    return out, narrowed


@functools.lru_cache(maxsize=1)
def known_flags() -> frozenset:
    path = os.path.join(os.path.dirname(__file__), "mindspeed_known_flags.txt")
    with open(path, encoding="utf-8") as fh:
        # section D's lines carry the releases after the flag ("--use-fused-mlp\t# 2.0.0,2.3.0")
        return frozenset(line.split("#", 1)[0].strip() for line in fh if line.startswith("--"))


def _distance(a: str, b: str, limit: int) -> int:
    """Damerau-Levenshtein (optimal string alignment) distance, stopping above *limit*."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: List[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def suggestion(flag: str, extra: FrozenSet[str] = frozenset()) -> Optional[str]:
    """The known flag (shipped, or in *extra*) closest to *flag*, within a small edit distance;
    None when *flag* is itself known or nothing is close."""
    known = known_flags()
    if flag in known or flag in extra:
        return None
    limit = 1 if len(flag) < 10 else 2
    best, best_d = None, limit + 1
    for k in itertools.chain(_near(flag, limit), (e for e in extra if e not in known)):
        d = _distance(flag, k, limit)
        if d < best_d or (d == best_d and best is not None and k < best):
            best, best_d = k, d
    return best if best_d <= limit else None


def _bigrams(s: str) -> FrozenSet[str]:
    return frozenset(s[i:i + 2] for i in range(len(s) - 1))


@functools.lru_cache(maxsize=1)
def _bigram_index() -> Tuple[Tuple[str, ...], Dict[str, List[int]]]:
    flags = tuple(sorted(known_flags()))
    index: Dict[str, List[int]] = {}
    for n, k in enumerate(flags):
        for bg in _bigrams(k):
            index.setdefault(bg, []).append(n)
    return flags, index


def _near(flag: str, limit: int) -> List[str]:
    """The shipped flags that may be within *limit* edits of *flag*: an edit (a transposition
    too) removes at most three of a string's distinct bigrams, so those flags share all but
    3 * limit of *flag*'s (the distance itself is computed only for them: about 1 in 200)."""
    flags, index = _bigram_index()
    mine = _bigrams(flag)
    need = len(mine) - 3 * limit
    counts: Dict[int, int] = {}
    for bg in mine:
        for n in index.get(bg, ()):
            counts[n] = counts.get(n, 0) + 1
    n_flag = len(flag)
    return [flags[n] for n, c in counts.items() if c >= need and abs(len(flags[n]) - n_flag) <= limit] \
        if need > 0 else [k for k in flags if abs(len(k) - n_flag) <= limit]


def launch_fact(ctx, launch: Launch, found: Dict[str, list], narrowed: Tuple[str, ...],
                noqa_lines: Tuple[int, ...] = ()) -> Optional[dict]:
    """A launch's ``mindspeed.launch`` fact: its entry, what each launch rule found in it and the
    flags that narrowed its releases (:func:`launch_found`, less what has no place in the file),
    the ``# noqa`` lines above its command (a shell script's) and the flags the configuration
    declares. The rules report from it in the project phase (:class:`_LaunchRule`), once it is
    known whether the entry script is a linted file that parses its own arguments, and which
    flags the run's own parsers register."""
    kept = {}
    for code, items in found.items():
        placed = [item for item in items if item[0] is not None]
        if placed:
            kept[code] = placed
    if not kept:
        return None
    return {"entry": launch.entry.text, "found": kept, "noqa": tuple(noqa_lines),
            "declared": tuple(ctx.settings.extend_known_flags), "narrowed": narrowed}


# ---------------------------------------------------------------------------------------------
# Shell


class ShellLaunches(Analysis):
    """The launch commands of a shell script (read as bash reads it: variables, arrays, appends,
    branches as alternatives): per launch of a training entry, what the launch rules find in it
    (a ``mindspeed.launch`` fact, see :func:`launch_fact`), and the first launch that enables AMO
    (a ``mindspeed.amo`` fact). It reads the script the engine parsed (``ShellContext.script``),
    which runs it only on a script it could read (a syntax error, CRLF line endings or a script
    past a bound of the analysis is the engine's NPU001, NPU004 or NPU005)."""

    language = SHELL
    # A launch matters when it runs a training entry (launch_found) or enables AMO (the fact):
    # the script then names the entry or the flag (a value from a sourced file is unknown).
    tokens = tuple((launcher, word) for launcher in ("torchrun", "python", "msrun")
                   for word in (*ENTRY_PREFIXES, AMO_FLAG))
    provides = (AMO_TOPIC, LAUNCH_TOPIC)

    def finish(self) -> None:
        ctx = self.ctx
        # past MAX_PATHS branch paths later commands were not recorded: nothing is said of them
        stacks, fallback = _stacks(ctx.settings)
        declared = frozenset(ctx.settings.extend_known_flags)
        seen = set()
        amo_done = False
        runs = []
        for command in ctx.script.commands:
            words = [Word(a.text, a.lazy_span, a.known, a.splat) for a in command.words]
            launch = find_launch(words)
            if launch is not None:
                runs.append((command, launch, *launch_found(launch, stacks, fallback, declared)))
        _requirements_on_every_path(runs)
        for command, launch, candidates, narrowed in runs:
            found = {}
            for code, items in candidates.items():
                # a finding another command of the script (another branch) had already: once
                # (a command judged on releases its flags narrowed may lose its findings)
                fresh = []
                for item in items:
                    if (code, item, command.noqa_lines, narrowed) not in seen:
                        seen.add((code, item, command.noqa_lines, narrowed))
                        fresh.append(item)
                if fresh:
                    found[code] = fresh
            fact = launch_fact(ctx, launch, found, narrowed, command.noqa_lines)
            if fact is not None:
                ctx.fact(LAUNCH_TOPIC, fact)
            if not amo_done:
                amo = amo_occ(launch)
                if amo is not None:
                    amo_done = True
                    ctx.fact(AMO_TOPIC, (amo.line, amo.column))


def _requirements_on_every_path(runs: List[tuple]) -> None:
    """Keep an NPU504 finding of a shell command only where every run of that command from one
    place (one run per path through the script; the calls of the function that holds it are
    places of their own) whose words hold the finding's token gives it too: where the companion
    is there on one path and not on another (``if [ -n "$BF" ]; then ARGS+=" --bf16"; fi``),
    whether it is there depends on what the script cannot know, and nothing is said. A token
    the paths do not share (a flag or value assigned in one branch) is judged on the paths that
    hold it. *runs*: ``(command, launch, candidates, narrowed)``; the candidates are filtered in
    place."""
    code = MindSpeedMissingRequirement.CODE
    by_command: Dict[tuple, list] = {}
    for run in runs:
        by_command.setdefault((run[0].span, run[0].calls), []).append(run)
    for same in by_command.values():
        if len(same) < 2 or not any(code in run[2] for run in same):
            continue
        spans = [{w.span for w in (run[1].entry, *run[1].args)} for run in same]
        gives = [{_requirement_key(item) for item in run[2].get(code, ())} for run in same]
        for run in same:
            items = run[2].get(code)
            if not items:
                continue
            kept = [item for item in items
                    if all(_requirement_key(item) in given for held, given in zip(spans, gives) if item[0] in held)]
            if kept:
                run[2][code] = kept
            else:
                del run[2][code]


def _requirement_key(item: tuple) -> tuple:
    """An NPU504 finding, less the releases its message names (paths may narrow them apart)."""
    span, message = item[0], item[1]
    return span, message.rsplit(" (", 1)[0]


def _stacks(settings) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The stack releases the run's launches may run on, and those to judge a launch on when its
    flags rule out every one of them (npulint.releases: every known one when they were inferred)."""
    from npulint.releases import effective

    releases = effective(settings)
    return releases.mindspeed_stacks(), releases.mindspeed_fallback()


def _printable(message: str) -> str:
    """A message with the bytes of the script that are not UTF-8 shown as ``\\xNN``."""
    if message.isascii():
        return message
    return message.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def amo_occ(launch: Launch) -> Optional[Span]:
    """Where the launch enables AMO: its flag, unless a YAML file replaces its flags."""
    if flags_from_yaml(launch):
        return None
    for w in launch.args:
        if w.known and w.text == AMO_FLAG and w.span is not None:
            return w.span
    return None


# ---------------------------------------------------------------------------------------------
# Python

_SUBPROCESS = {f"subprocess.{n}" for n in ("run", "Popen", "call", "check_call", "check_output")}
_EXECV = {f"os.{n}" for n in ("execv", "execve", "execvp", "execvpe")}
# os.execl(path, arg0, arg1, ...): the words are the positional arguments after the first; the
# ``e`` variants end with the environment, which is not a word
_EXECL = {f"os.{n}" for n in ("execl", "execle", "execlp", "execlpe")}
_EXECL_ENV = {"os.execle", "os.execlpe"}
_LAUNCH_CALLS = _SUBPROCESS | _EXECV | _EXECL
_SHLEX_SPLIT = {"shlex.split"}
_ARGV = {"sys.argv"}
ARGV_KEY = "sys.argv"  # (not a name: PythonLaunches records sys.argv's changes under it)
# calls known to leave a list passed to them as it is: the launch calls, reading builtins and
# functions, and methods of a list or string that read their argument (``" ".join(cmd)``,
# ``base.extend(cmd)``); any other call may change it (``add_flag(cmd, "--x")``)
_READERS = _LAUNCH_CALLS | {f"builtins.{n}" for n in (
    "print", "len", "list", "tuple", "str", "repr", "sorted", "set", "frozenset", "enumerate", "iter", "any",
    "all", "zip", "map", "filter", "reversed", "isinstance", "id", "hash", "bool", "min", "max", "sum",
    "format", "dict")} | {"shlex.join", "shlex.quote", "copy.copy", "copy.deepcopy", "os.path.join",
                          "subprocess.list2cmdline", "json.dumps"} | {
    f"logging.{n}" for n in ("debug", "info", "warning", "error", "critical", "exception", "log")}
_READING_METHODS = frozenset({"join", "extend", "index", "count", "format"})
_EXECUTABLE = {"sys.executable"}


def _splat() -> Word:
    return Word("\x00", None, False, True)  # any number of unknown words


_DEFAULT_MISSING = object()


class PythonLaunches(Analysis):
    """The launch commands of a Python file: string lists passed to ``subprocess``/``os.exec*``
    or assigned to ``sys.argv``, also when built from parts (``+``, ``*spread``, ``shlex.split``
    of a known string: :meth:`_words`), and the arguments of ``os.execl*``
    (``mindspeed.launch`` and ``mindspeed.amo`` facts, as
    :class:`ShellLaunches` records them); and the file's ``adapt_mem_func_wrapper(...)`` calls
    (``wrapper_calls``: NPU505 looks its calls up in it).

    A launch list matters only when it launches a training entry (launch_found) or enables AMO
    (the ``mindspeed.amo`` fact), and the resolver knows only this file's string values: so the
    file's text names the entry or the flag (an entry name assembled from pieces, "pre" +
    "train_gpt.py", is missed); or, for ``sys.argv = [...]`` without an entry, the file is itself
    the entry. Most files that merely mention ``subprocess`` or ``sys.argv`` are never parsed for
    it. NPU503's files (``X.apply(...)`` calls, joined to parses or reached by the follow-up
    phase) bring it along, and it reads their launches too."""

    tokens = (*((launcher, word) for launcher in ("subprocess", "execv", "execl", "argv")
                for word in (*ENTRY_PREFIXES, AMO_FLAG)),
              (WRAPPER_NAME,))
    provides = (AMO_TOPIC, LAUNCH_TOPIC)

    @classmethod
    def wants(cls, text: str, path: str = "", present=None) -> bool:
        return super().wants(text, path, present) or (
            "argv" in text and re.fullmatch(TRAINING_ENTRIES, os.path.basename(path)) is not None)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.calls = []
        self.argv = []
        # names (and ARGV_KEY, for sys.argv) of lists that may change after they are built, once
        # finish() has folded in the changes made through aliases, helpers and sys.argv
        self.grown = set()
        self.changed = set()
        # what finish() resolves: (target, value, site) of `a = b`; (expr, site) of a list that
        # escapes (into a container, an attribute, a call); ("grown"|"changed", expr, site) of a
        # change through an expression that may be sys.argv
        self.aliases: List[Tuple[Any, Any, Any]] = []
        self.escapes: List[Tuple[Any, Any]] = []
        self.argv_changes: List[Tuple[str, Any, Any]] = []
        # the names `from sys import argv [as x]` may bind (cheap to tell before resolving)
        self.argv_names = {"argv", *re.findall(r"\bargv\s+as\s+(\w+)", ctx.text)}
        self.wrapper_calls: Set[cst.Call] = set()

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.ctx.site()))

    def visit_Assign(self, node: cst.Assign) -> None:
        site = self.ctx.site()
        self.argv.append((node, site))
        for t in node.targets:
            self._store(t.target)
            self._bind(t.target, node.value, site)

    # Names of lists that may change after they are built: a list only appended to (``append``,
    # ``extend``, ``+=``) still holds its words, more may follow; any other change (``remove``,
    # ``pop``, ``del cmd[i]``, ``cmd[i] = ...``, ``clear``, ``insert``...) leaves it unknown. So
    # does a list that another name, a container, an attribute or a call may change: a name bound
    # to it (``extra = cmd``) shares its changes, and one stored or passed to a call that is not
    # known to leave its arguments alone (:data:`_READERS`) is unknown.
    _GROW = frozenset({"append", "extend"})
    _READ = frozenset({"copy", "count", "index"})
    # the list methods that change it in place (sys.argv's; any other attribute of a name's list
    # counts as a change)
    _LIST_CHANGES = frozenset({"insert", "remove", "pop", "clear", "sort", "reverse", "__setitem__",
                               "__delitem__", "__iadd__", "__imul__"})

    def visit_Attribute(self, node: cst.Attribute) -> None:
        attr = node.attr.value
        grows = attr in self._GROW
        if isinstance(node.value, cst.Name):
            if grows:
                self.grown.add(node.value.value)
            elif attr not in self._READ:
                self.changed.add(node.value.value)
        if (grows or attr in self._LIST_CHANGES) and self._may_be_argv(node.value):
            self.argv_changes.append(("grown" if grows else "changed", node.value, self.ctx.site()))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        kind = "grown" if isinstance(node.operator, cst.AddAssign) else "changed"
        if isinstance(node.target, cst.Name):
            (self.grown if kind == "grown" else self.changed).add(node.target.value)
        else:
            self._store(node.target)
        if self._may_be_argv(node.target):
            self.argv_changes.append((kind, node.target, self.ctx.site()))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._store(node.target)
        if node.value is not None:
            self._bind(node.target, node.value, self.ctx.site())

    def visit_Del(self, node: cst.Del) -> None:
        self._store(node.target)

    def _store(self, target) -> None:
        """An assignment or ``del`` target: a subscript of a name changes that name's list."""
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.changed.add(target.value.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._store(el.value)
        if isinstance(target, cst.Subscript) and self._may_be_argv(target.value):
            self.argv_changes.append(("changed", target.value, self.ctx.site()))

    def _bind(self, target, value, site) -> None:
        """``target = value``: a name bound to a list's name shares its changes; a list's name
        stored anywhere else (an attribute, a subscript, unpacked) may be changed there."""
        if not self._listlike(value):
            return
        if isinstance(target, cst.Name) or self._may_be_argv(target):
            self.aliases.append((target, value, site))
        else:
            self.escapes.append((value, site))

    def _listlike(self, expr) -> bool:
        """An expression that may name a launch list: a name, or one that may be sys.argv."""
        return isinstance(expr, cst.Name) or self._may_be_argv(expr)

    def _may_be_argv(self, expr) -> bool:
        """Whether *expr* may name ``sys.argv`` (``sys.argv``, ``s.argv``, ``argv``): finish()
        resolves it."""
        if isinstance(expr, cst.Attribute):
            return expr.attr.value == "argv"
        return isinstance(expr, cst.Name) and expr.value in self.argv_names

    def _container(self, elements) -> None:
        for el in elements:
            value = getattr(el, "value", None)
            if not isinstance(el, (cst.StarredElement, cst.StarredDictElement)) and value is not None \
                    and self._listlike(value):
                self.escapes.append((value, self.ctx.site()))

    def visit_List(self, node: cst.List) -> None:
        self._container(node.elements)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._container(node.elements)

    def visit_Set(self, node: cst.Set) -> None:
        self._container(node.elements)

    def visit_Dict(self, node: cst.Dict) -> None:
        self._container(node.elements)

    def _key(self, expr, site) -> Optional[str]:
        """The name a list's changes are recorded under: :data:`ARGV_KEY` for ``sys.argv``, a
        name's own, else None."""
        if self._may_be_argv(expr) and self.ctx.resolve(expr, site, _ARGV) is not None:
            return ARGV_KEY
        return expr.value if isinstance(expr, cst.Name) else None

    def _fold_changes(self) -> None:
        """The changes made through sys.argv, aliases and the calls a list is passed to, folded
        into :attr:`grown` and :attr:`changed` (a name and the names bound to it share them)."""
        ctx = self.ctx
        for kind, expr, site in self.argv_changes:
            if ctx.resolve(expr, site, _ARGV) is not None:
                (self.grown if kind == "grown" else self.changed).add(ARGV_KEY)
        for node, site in self.calls:
            passed = [a.value for a in node.args if a.star == "" and self._listlike(a.value)]
            if not passed or (isinstance(node.func, cst.Attribute) and node.func.attr.value in _READING_METHODS) \
                    or ctx.resolve(node.func, site, _READERS) is not None:
                continue
            self.escapes.extend((value, site) for value in passed)
        for expr, site in self.escapes:
            key = self._key(expr, site)
            if key is not None:
                self.changed.add(key)
        if not self.aliases:
            return
        group: Dict[str, str] = {}

        def find(k: str) -> str:
            while group.get(k, k) != k:
                k = group[k]
            return k

        for target, value, site in self.aliases:
            a, b = self._key(target, site), self._key(value, site)
            if a is not None and b is not None and find(a) != find(b):
                group[find(a)] = find(b)
        for names in (self.grown, self.changed):
            roots = {find(k) for k in names}
            names.update(k for k in group if find(k) in roots)
            names.update(k for k in list(group.values()) if find(k) in roots)

    def _words(self, expr, site, _depth: int = 0) -> Optional[List[Word]]:
        """The words of a launch list: a list/tuple display (through the names bound to it), its
        ``*starred`` parts, ``a + b`` of such parts, or ``shlex.split(s)``; each word at its own
        span (a ``shlex.split`` word at the string's). None if *expr* is none of these (not a
        launch list). A part that does not resolve (``sys.argv[1:]``, a parameter, a call, an
        unknown string to split) stands for any number of unknown words (a splat)."""
        if _depth > 20:
            return None
        named = expr.value if isinstance(expr, cst.Name) else None
        expr, site = self.ctx.sem.bound_expr(expr, site)
        if isinstance(expr, (cst.List, cst.Tuple)):
            words = []
            for el in expr.elements:
                if isinstance(el, cst.StarredElement):
                    words.extend(self._words(el.value, site, _depth + 1) or [_splat()])
                    continue
                words.append(self._word(el.value, site))
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            left = self._words(expr.left, site, _depth + 1)
            right = self._words(expr.right, site, _depth + 1)
            if left is None and right is None:
                return None  # not a list (``"torchrun " + args``)
            words = (left or [_splat()]) + (right or [_splat()])
        elif isinstance(expr, cst.Call) and self.ctx.resolve(expr.func, site, _SHLEX_SPLIT) is not None:
            words = self._shlex_words(expr, site)
        else:
            # a list or tuple of strings imported from a linted module: its words at this name
            v = self.ctx.value(expr, site) if named is not None else None
            if not (isinstance(v, tuple) and v and all(isinstance(x, str) for x in v)):
                return None
            span = functools.partial(self.ctx.span, expr)
            words = [Word(x, span) for x in v]
        if named is not None and named in self.changed:
            return None  # `cmd.remove(...)`, `del cmd[i]`, `cmd[i] = ...` somewhere: not known
        if named is not None and named in self.grown:
            # `cmd.append(...)`, `cmd += [...]` somewhere: more words may follow
            words.append(_splat())
        return words

    def _word(self, expr, site) -> Word:
        v = self.ctx.value(expr, site)
        span = functools.partial(self.ctx.span, expr)  # computed when reported
        if isinstance(v, str):
            return Word(v, span)
        if self.ctx.resolve(expr, site, _EXECUTABLE) is not None:
            return Word("python", span)  # the interpreter running the launcher: a python launcher word
        return Word("\x00", span, False, False)

    def _shlex_words(self, call: cst.Call, site) -> List[Word]:
        """``shlex.split(s)`` of a string that resolves: its words (POSIX shell-like splitting,
        comments kept as words, as the defaults), each at the string's span; otherwise unknown
        words."""
        pos = [a for a in call.args if a.keyword is None]
        if len(pos) != 1 or pos[0].star:
            return [_splat()]
        for a in call.args:
            if a.keyword is not None:
                default = {"comments": False, "posix": True}.get(a.keyword.value, _DEFAULT_MISSING)
                if default is _DEFAULT_MISSING or self.ctx.value(a.value, site) is not default:
                    return [_splat()]  # another splitting than the defaults: not followed
        node, nsite = self.ctx.sem.bound_expr(pos[0].value, site)
        text = self.ctx.value(node, nsite)
        if not isinstance(text, str):
            return [_splat()]
        try:
            parts = shlex.split(text)
        except ValueError:  # no closing quotation: shlex raises at run time
            return [_splat()]
        span = functools.partial(self.ctx.span, node)
        return [Word(w, span) for w in parts]

    def _execl_words(self, call: cst.Call, site, with_env: bool) -> Optional[List[Word]]:
        """``os.execl*(path, arg0, arg1, ...)``: the positional arguments after the first (for
        ``execle``/``execlpe`` not the last, the environment)."""
        args = [a for a in call.args if a.keyword is None]
        if any(a.keyword is not None for a in call.args):
            return None  # a TypeError (these take no keywords)
        words: List[Word] = []
        rest = args[1:]
        if with_env:
            if rest and rest[-1].star:
                rest = rest[:-1] + [None]  # the environment is in the spread: so may words be
            else:
                rest = rest[:-1]
        for a in rest:
            if a is None:
                words.append(_splat())
            elif a.star:
                words.extend((self._words(a.value, site) or [_splat()]) if a.star == "*" else [_splat()])
            else:
                words.append(self._word(a.value, site))
        return words

    def _check_words(self, words: List[Word], argv_entry: bool) -> None:
        if argv_entry:
            if not words:
                return
            entry = words[0] if words[0].known and words[0].text.endswith(".py") else \
                Word(os.path.basename(self.ctx.path), None)
            # a splat first (``sys.argv = sys.argv + [...]``) may hold the script and arguments
            launch = Launch(entry, words if words[0].splat else words[1:])
        else:
            launch = find_launch(words)
            if launch is None:
                return
        fact = launch_fact(self.ctx, launch, *launch_found(launch, *_stacks(self.ctx.settings),
                                                           frozenset(self.ctx.settings.extend_known_flags)))
        if fact is not None:
            self.ctx.fact(LAUNCH_TOPIC, fact)
        amo = amo_occ(launch)
        if amo is not None:
            self.ctx.fact(AMO_TOPIC, (amo.line, amo.column))

    def finish(self) -> None:
        ctx = self.ctx
        self._fold_changes()
        for node, site in self.calls:
            q = ctx.resolve(node.func, site, _LAUNCH_CALLS | {WRAPPER})
            if q in _SUBPROCESS or q in _EXECV:
                index = 0 if q in _SUBPROCESS else 1
                pos = [a for a in node.args if a.keyword is None]
                arg = pos[index].value if len(pos) > index and pos[index].star == "" else None
                if arg is None and q in _SUBPROCESS:
                    arg = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "args"), None)
                if arg is not None:
                    words = self._words(arg, site)
                    if words:
                        self._check_words(words, False)
            elif q in _EXECL:
                words = self._execl_words(node, site, q in _EXECL_ENV)
                if words:
                    self._check_words(words, False)
            elif q == WRAPPER:
                self.wrapper_calls.add(node)
        for node, site in self.argv:
            if any(ctx.resolve(t.target, site, _ARGV) for t in node.targets):
                words = self._words(node.value, site)
                if words is None or ARGV_KEY in self.changed:
                    continue  # `sys.argv.insert(...)`, `sys.argv[i] = ...` somewhere: not known
                if ARGV_KEY in self.grown:
                    words.append(_splat())  # `sys.argv.append(...)`, `sys.argv += [...]` somewhere
                self._check_words(words, True)


class FunctionClasses(Analysis):
    """A file's classes: their bases' qualified names, and whether an expression names a class
    of this file that subclasses ``torch.autograd.Function`` (for NPU503 and NPU505). Its facts
    (``{"classes": {qualified name: [base's qualified name or None]}}``, one per file with
    classes) reach the rules that use it in the project phase, where a class of another
    module is told by its bases (:func:`subclass_of`)."""

    tokens = PythonLaunches.tokens

    def __init__(self, ctx):
        super().__init__(ctx)
        self.classes: List[Tuple[cst.ClassDef, Any]] = []
        # qualified name -> its bases' qualified names (None: not known), once finished
        self.named: Dict[str, List[Optional[str]]] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append((node, self.ctx.site()))

    def finish(self) -> None:
        for node, _ in self.classes:
            q = self.ctx.sem.qualname_of_def(node)
            if q is not None:
                self.named[q] = self.bases(node)
        if self.named:
            self.ctx.fact(type(self), {"classes": self.named})

    def function_class(self, expr, site) -> bool:
        """*expr* certainly names a class of this file that subclasses torch.autograd.Function."""
        node = self.local_class(expr, site)
        return node is not None and self.local_subclass(node, FUNCTION_BASES, set())

    def local_class(self, expr, site):
        if isinstance(expr, cst.Name):
            cands, exact = self.ctx.sem.reaching(expr.value, site)
            if exact and cands[0].kind == "class":
                return cands[0].node
        return None

    def bases(self, node: cst.ClassDef) -> List[Optional[str]]:
        site = self.ctx.sem.def_site.get(node)
        out = []
        for b in node.bases:
            if b.keyword is not None or b.star:
                continue
            out.append(self.ctx.sem.callee_qualname(b.value, site) if site is not None else None)
        return out

    def local_subclass(self, node, roots, seen) -> bool:
        if id(node) in seen:
            return False
        seen.add(id(node))
        site = self.ctx.sem.def_site.get(node)
        for b in node.bases:
            if b.keyword is not None or b.star:
                continue
            q = self.ctx.sem.callee_qualname(b.value, site) if site is not None else None
            if q in roots:
                return True
            local = self.local_class(b.value, site) if site is not None else None
            if local is not None and self.local_subclass(local, roots, seen):
                return True
        return False


def subclass_of(facts) -> Any:
    """``subclass(q, roots, where)``: whether the class *q*, as the file *where* names it,
    certainly subclasses one of *roots* (qualified names), by the bases in *facts* (``(path,
    {"classes": {...}})``, as NPU503 and :class:`FunctionClasses` record them). A name that two
    files define (``model.MyFn`` of two folders run as scripts) is the one of *where*'s own file
    or import root (:func:`npulint.paths.reached_from`), else unknown."""
    defs: Dict[str, Dict[str, List[Optional[str]]]] = {}  # class -> file defining it -> its bases
    for path, f in facts:
        for q, named in f["classes"].items():
            defs.setdefault(q, {})[path] = named

    @functools.lru_cache(maxsize=None)
    def subclass(q: str, roots: frozenset, where: str, depth: int = 0) -> bool:
        if q in roots:
            return True
        found = defs.get(q)
        if depth > 20 or not found:
            return False
        path = reached_from(where, sorted(found))
        return path is not None and any(b is not None and subclass(b, roots, path, depth + 1) for b in found[path])

    return subclass


# ---------------------------------------------------------------------------------------------
# The linted files' own flags and parsers (facts), and the launch findings that wait for them


class FlagFacts(Analysis):
    """Records, for the project phase, the ``--flags`` each linted Python file registers with
    ``add_argument`` (and the choices of the registrations of :data:`CHOICE_FLAGS`) and, for
    each training entry script (``pretrain_*.py``, ...), whose parser reads its command line
    (:func:`npulint.argflags.entry_parser`); with the launches' facts (see :func:`launch_fact`)
    they make the run's :class:`RunFlags`, once per run (:meth:`of_run`), from which NPU501,
    NPU502 and NPU504 report.

    It never selects a file for parsing: it joins files parsed anyway, and reads the rest from
    their text (:meth:`scan`: each ``add_argument(...)`` call parsed alone)."""

    piggyback = ("add_argument",)
    provides = (ARGPARSE_TOPIC,)

    @classmethod
    def wants(cls, text: str, path: str = "", present=None) -> bool:
        return False

    @classmethod
    def joins(cls, text: str, path: str = "") -> bool:
        return "add_argument" in text or _is_entry_path(path)

    def finish(self) -> None:
        fact = _argparse_fact(self.ctx.path, self.ctx.text, self.ctx.python_tree)
        if fact is not None:
            self.ctx.fact(ARGPARSE_TOPIC, fact)

    @classmethod
    def scan(cls, text: str, path: str):
        if "add_argument" not in text and not os.path.basename(path).startswith(ENTRY_PREFIXES):
            return None  # (most files: two substring tests)
        fact = _argparse_fact(path, text, None)
        return {ARGPARSE_TOPIC: [fact]} if fact is not None else None

    # the last run's facts: (its launch facts, its argparse facts, the RunFlags), the lists
    # themselves kept so that their identity cannot be reused by another run's
    _folded: Optional[Tuple[list, list, "RunFlags"]] = None

    @classmethod
    def of_run(cls, shared) -> "RunFlags":
        """The run's launches and registrations (:class:`RunFlags`), made once per run for
        NPU501, NPU502 and NPU504 (the project phase hands each of them the same lists of
        facts)."""
        launches = shared.get(LAUNCH_TOPIC, [])
        argparse = shared.get(ARGPARSE_TOPIC, [])
        folded = cls._folded
        if folded is not None and folded[0] is launches and folded[1] is argparse:
            return folded[2]
        out = RunFlags(launches, argparse)
        cls._folded = (launches, argparse, out)
        return out


class RunFlags:
    """What the linted files say about the run's launches (facts, for the launch rules):

    * ``launches``: ``(path, launch fact)`` of the launches whose entry script Megatron's parser
      reads, as far as the linted files show (:func:`launch_fact`); a launch of a linted entry
      script that does not visibly use it, itself or through the modules of the run it imports
      (:class:`_Followed`), is left out: its own parser, or one npulint cannot read, judges it;
    * ``registered``: every flag an ``add_argument`` of the linted files registers, and
      ``maybe(flag)``: whether one whose option strings are not certain may register it;
      :meth:`own_parser_takes` asks the same of the registrations that may extend the parser of
      a launch (an ``extra_args_provider``): those outside Megatron-family packages, in files
      that parse no command line themselves (a tool's parser reads no launch of a training
      entry);
    * ``choices``: flag -> ``[(path, line, choices, file)]``, the linted registrations of the
      flags the catalog has ``choices`` for (:func:`npulint.argflags.choices_in_text`) that may
      be the parser of a launch: in a package of Megatron's family (a folder named ``megatron``,
      ``ascendspeed``, ``modellink``, ``mindspeed``...: a vendored parser), or in a training entry
      script (:meth:`parsers` keeps these for the launches of that script only); a tool's own
      parser elsewhere in the tree reads no launch of a training entry;
    * ``entries``: the linted training entry scripts (path -> whose parser reads them)."""

    def __init__(self, launches, argparse):
        self.launches: List[Tuple[str, dict]] = []
        self.registered: FrozenSet[str] = frozenset()
        self.maybe = None
        self._own: FrozenSet[str] = frozenset()
        self._own_maybe = None
        self.choices: Dict[str, List[Tuple[str, int, Optional[Tuple[str, ...]], str]]] = {}
        self.entries: Dict[str, str] = {}
        self._known: Dict[Tuple[str, ...], FrozenSet[str]] = {}
        self._roots: Dict[str, Optional[str]] = {}  # folder -> its project root (one_program's memo)
        if not launches:
            return
        registered = set()
        patterns = set()
        own, own_patterns = set(), set()
        entries = {}  # path of a linted entry script -> whose parser reads its command line
        imports = {}  # path of an entry script judged "unknown" by itself -> the modules it imports
        for display, f in argparse:
            registered.update(f["flags"])
            patterns.update(f["unknown"])
            if not _in_megatron_family(f["path"]) and not f["parses"]:
                own.update(f["flags"])
                own_patterns.update(f["unknown"])
            if f["choices"] and (f["entry"] is not None or _in_megatron_family(f["path"])):
                for flag, line, values in f["choices"]:
                    self.choices.setdefault(flag, []).append((display, line, values, f["path"]))
            if f["entry"] is not None:
                entries[f["path"]] = f["entry"][0]
                if f.get("imports"):
                    imports[f["path"]] = f["imports"]
        followed = _Followed(imports)
        self.entries = entries
        unlinted = _UnlintedEntries()
        for display, f in launches:
            if entries and any(entries[p] != argflags.MEGATRON and not followed.megatron(p)
                               for p in self.entries_of(f, display)):
                continue  # not visibly Megatron's parser: its own (or one we cannot read) judges
            if not self.entries_of(f, display):
                # an entry script of its program the run does not lint: the same, and what a
                # Megatron entry registers counts as a linted one's does
                found = unlinted.facts(f["entry"], display)
                if any(e["entry"] is not None and e["entry"][0] != argflags.MEGATRON for e in found):
                    continue
                for e in found:
                    registered.update(e["flags"])
                    patterns.update(e["unknown"])
            self.launches.append((display, f))
        self.registered = frozenset(registered)
        # an add_argument whose option strings are not certain may register any flag they may
        # be: such a flag is not known to be unknown (the linted files' flags count for every
        # launch, so do these)
        if patterns:
            self.maybe = _any_of(patterns)
        self._own = frozenset(own)
        if own_patterns:
            self._own_maybe = _any_of(own_patterns)

    def parsers(self, flag: str, launch: dict, where: str) -> List[Tuple[str, int, Optional[Tuple[str, ...]], str]]:
        """The linted registrations of *flag* that may be in the parser reading *launch* (in the
        file *where*): those of Megatron-family packages, and those of the entry script it runs,
        in the program of that entry script (of the launch's file where no linted entry script
        is named: :func:`npulint.program.one_program`; a clone beside it in the run has a parser
        of its own release)."""
        found = self.choices.get(flag)
        if not found:
            return []
        entries = self.entries
        mine = self.entries_of(launch, where) if entries else []
        anchors = mine or [where]
        return [r for r in found if (r[3] not in entries or r[3] in mine)
                and any(self._one_program(a, r[3]) for a in anchors)]

    def entries_of(self, launch: dict, where: str) -> List[str]:
        """The linted entry scripts *launch* (in the file *where*) may run: those its entry word
        may name (:func:`_linted_entries`), in the launch's own program; in another program,
        the one the word is the path of from the launch's folder (``torchrun
        ../other/pretrain_gpt.py`` runs the other checkout's)."""
        named = _linted_entries(launch["entry"], self.entries)
        mine = [p for p in named if self._one_program(where, p)]
        if mine or not named:
            return mine
        # another program's, where the word is its path from the launch's folder
        written = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(where)), launch["entry"]))
        return [p for p in named if os.path.normpath(os.path.abspath(p)) == written]

    def _one_program(self, a: str, b: str) -> bool:
        return one_program(a, b, self._roots)

    def own_parser_takes(self, flags: Sequence[str]) -> bool:
        """Whether a registration of the linted files that may extend a launch's parser registers,
        or may register, one of *flags*: one outside Megatron-family packages (a vendored
        framework's registrations are its release's own: a MindSpeed-LLM checkout's parser is
        that release's) in a file that parses no command line itself (a tool's parser is its
        own). The project's parser takes the flag on every release."""
        return any(f in self._own or (self._own_maybe is not None and self._own_maybe(f)) for f in flags)

    def known(self, declared: Tuple[str, ...]) -> FrozenSet[str]:
        """The flags the linted files register and those the configuration declares."""
        if not declared:
            return self.registered
        found = self._known.get(declared)
        if found is None:
            found = self._known[declared] = self.registered | frozenset(declared)
        return found


def _any_of(patterns) -> Any:
    """``fullmatch`` of any of the regular expressions *patterns*."""
    return re.compile("|".join(f"(?:{p})" for p in sorted(patterns))).fullmatch


@functools.lru_cache(maxsize=4096)
def _suggestion_cached(flag: str, extra: FrozenSet[str]) -> Optional[str]:
    return suggestion(flag, extra)


def _in_megatron_family(path: str) -> bool:
    """*path* is in a folder named as a package of Megatron's family (a vendored parser)."""
    return any(part in argflags.MEGATRON_TOPS for part in os.path.dirname(path).replace("\\", "/").split("/"))


def _is_entry_path(path: str) -> bool:
    return re.fullmatch(TRAINING_ENTRIES, os.path.basename(path)) is not None


# a file that parses a command line itself (``parser.parse_args()``, ``parse_known_args``, any
# method whose name starts so, as argflags.entry_parser reads it): a program of its own
_PARSES = re.compile(r"\.parse_(?:known_)?args\w*\s*\(")


def _argparse_fact(path: str, text: str, tree) -> Optional[dict]:
    """``{"path", "flags", "unknown", "entry", "imports", "choices", "parses"}`` for a Python
    file: the flags
    it registers, what the option strings it registers that are not certain may be (regular
    expressions, :func:`npulint.argflags.call_patterns`), the registrations of the flags the
    catalog has ``choices`` for (:data:`CHOICE_FLAGS`: ``(flag, line, choices)``, as
    :func:`npulint.argflags.choices_in_text` reads them), and for a training entry script whose parser reads
    its command line (``(kind, line)`` of
    :func:`npulint.argflags.entry_parser`; ``("unknown", None)`` for one CPython cannot compile:
    it never gets to parse anything) and, for one that shows no parser itself, the modules it
    imports (:func:`npulint.argflags.imported_modules`), and whether it parses a command line
    itself (:data:`_PARSES`: its registrations are then its own program's), or None. *tree*:
    None, or for a file
    the engine parsed, a function that gives CPython's tree of it (made once, when needed)."""
    whole = _once(tree if tree is not None else lambda: argflags.parse(text))
    # a file the engine did not parse is read whole only up to argflags.WHOLE_MAX (read_text)
    readable = whole if tree is not None or len(text) <= argflags.WHOLE_MAX else None
    entry = _is_entry_path(path)
    flags, patterns, choices = {}, [], []
    if "add_argument" in text:
        found = argflags.read_text(text, readable)
        if found is None:  # CPython cannot compile it: it never runs
            return {"path": path, "flags": (), "unknown": (), "entry": (argflags.UNKNOWN, None),
                    "imports": (), "choices": (), "parses": False} if entry else None
        flags, patterns = found
        registered = [f for f in CHOICE_FLAGS if f in flags]  # (only a certain registration has choices to read)
        if registered and readable is not None:
            choices = argflags.choices_in_text(text, registered, readable)
    judged = None
    imports = ()
    if entry:
        module = whole()
        judged = argflags.entry_parser(module) if module is not None else (argflags.UNKNOWN, None)
        if judged[0] == argflags.UNKNOWN and module is not None:
            imports = argflags.imported_modules(module)  # followed in the modules of the run (_Followed)
    if not flags and not patterns and judged is None:
        return None
    return {"path": path, "flags": tuple(sorted(flags)), "unknown": tuple(patterns), "entry": judged,
            "imports": imports, "choices": tuple(choices), "parses": _PARSES.search(text) is not None}


def _once(make):
    """*make*, called once, when first needed."""
    box = []

    def made():
        if not box:
            box.append(make())
        return box[0]
    return made


class _Followed:
    """Whether an entry script that by itself shows no parser reaches Megatron's through the
    modules of the run it imports (:func:`npulint.argflags.reaches_megatron`), asked once per
    entry of a launch; *imports*: path -> the ``imports`` of its fact. Outside a run (one file
    alone) nothing is followed."""

    def __init__(self, imports: Dict[str, Tuple[Tuple[str, int], ...]]):
        self.imports = imports
        self.known: Dict[str, bool] = {}
        self.trees: Dict[str, Any] = {}  # module name -> (CPython's tree, is_package), or None

    def megatron(self, path: str) -> bool:
        if path not in self.imports:
            return False
        if path not in self.known:
            from npulint import modules
            from npulint.paths import module_name

            run = modules.active()
            self.known[path] = run is not None and argflags.reaches_megatron(
                self.imports[path], module_name(path)[0], lambda name, by, by_package: self._load(
                    run, name, by, by_package)) is not None
        return self.known[path]

    def _load(self, run, name: str, importer: Optional[str], importer_is_package: bool):
        found = run.source(name, importer, importer_is_package)
        if found is None:
            return None
        if name not in self.trees:
            tree = argflags.parse(found[0])
            self.trees[name] = None if tree is None else (tree, found[1])
        return self.trees[name]


class _UnlintedEntries:
    """The entry scripts of a launch's program that the run does not lint (a pre-commit run or
    an editor's buffer of the launch script alone), as :func:`_argparse_fact` reads their text.
    A run given the program's folders has none such; outside a run, nothing is read."""

    def __init__(self):
        self._programs: Dict[str, Sequence[str]] = {}  # program root (or script folder) -> its unlinted files
        self._roots: Dict[str, Optional[str]] = {}  # folder -> its project root (nearest_project's memo)
        self._facts: Dict[str, Optional[dict]] = {}  # path -> its _argparse_fact

    def facts(self, entry: str, where: str) -> List[dict]:
        """The :func:`_argparse_fact` of each unlinted entry script of *where*'s program that the
        launch's entry word *entry* may name (one npulint cannot read is left out: Megatron's,
        as an entry script outside the program is)."""
        from npulint import modules

        run = modules.active()
        if run is None or run.program_of is None:
            return []
        path = os.path.abspath(where)
        # the launches of one program (or one folder without a project marker) share its files
        key = program_root(path, self._roots) or os.path.dirname(path)
        if key not in self._programs:
            self._programs[key] = run.program_of([path]) or ()
        out = []
        for path in _linted_entries(entry, dict.fromkeys(self._programs[key], "")):
            if path not in self._facts:
                text = run._asked_text(path, keep=False)
                self._facts[path] = _argparse_fact(path, text, None) if text is not None else None
            if self._facts[path] is not None:
                out.append(self._facts[path])
        return out


def _linted_entries(entry: str, entries: Dict[str, str]) -> List[str]:
    """The linted entry scripts which *entry* (the launch's word) may name: those whose path
    ends with the path written (a folder the script ``cd``'d to, or a variable,
    ``$DIR/finetune_x.py``, may stand before it)."""
    tail = re.split("[\x00\x01]", entry)[-1].replace("\\", "/")
    parts = [p for p in tail.split("/") if p not in ("", ".", "..")]
    if not parts:
        return []
    suffix = "/" + "/".join(parts)
    return [path for path in entries if path.replace(os.sep, "/").endswith(suffix)]



# ---------------------------------------------------------------------------------------------
# NPU503's fix: ``X.apply(args)`` -> ``adapt_mem_func_wrapper(X, args)``, a LibCST node


@dataclasses.dataclass(frozen=True)
class ApplyCall:
    callee: str  # qualified name of X in X.apply
    span: Span
    fix: Optional[Fix]
    name: str


# a hanging call's first line of arguments that would be longer than this with ``X, `` in front
# of it (pycodestyle's default maximum line length) gets ``X`` on a line of its own instead
MAX_LINE = 79


def wrapped_call(call: cst.Call, x_own_line: bool = False, shift: int = 0, visual_column: int = 0,
                 indent: str = "") -> cst.Call:
    """``X.apply(args)`` as ``adapt_mem_func_wrapper(X, args)``: the old arguments' nodes, with
    their whitespace and comments. A call laid out with a hanging indent keeps it (``X`` goes
    first on the arguments' first line, or on a line of its own when each argument has one or
    *x_own_line*); a call whose arguments are aligned with its opening bracket (visual indent)
    has its lines that are aligned at *visual_column* or beyond moved by *shift* columns, as far
    as the bracket moved (*indent*: the enclosing block's indentation, which LibCST writes at the
    start of such lines). A generator expression that was the only argument gets its own
    parentheses."""
    assert isinstance(call.func, cst.Attribute)
    args = list(call.args)
    if len(args) == 1 and isinstance(args[0].value, cst.GeneratorExp) and not args[0].value.lpar:
        args[0] = args[0].with_changes(value=args[0].value.with_changes(lpar=[cst.LeftParen()],
                                                                        rpar=[cst.RightParen()]))
    if shift and args:
        args = [a.visit(_Shift(shift, visual_column, indent)) for a in args]
    first = cst.Arg(value=call.func.value)
    if args:
        after: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace(" ")
        before = call.whitespace_before_args
        first_comma = args[0].comma
        if isinstance(before, cst.ParenthesizedWhitespace) and (x_own_line or (
                isinstance(first_comma, cst.Comma) and isinstance(first_comma.whitespace_after,
                                                                  cst.ParenthesizedWhitespace))):
            # X on a line of its own, at the first argument's indentation
            after = cst.ParenthesizedWhitespace(indent=before.indent, last_line=before.last_line)
        first = first.with_changes(comma=cst.Comma(whitespace_after=after))
    return cst.Call(func=cst.Name(WRAPPER_NAME), args=[first, *args], whitespace_after_func=call.whitespace_after_func,
                    whitespace_before_args=call.whitespace_before_args)


class _Shift(cst.CSTTransformer):
    """Moves the lines of a visually indented call's arguments that are aligned at *column* or
    beyond (their line breaks: ``ParenthesizedWhitespace``, and the comment lines in it) by
    *shift* columns. The block's *indent* counts where LibCST writes it (``indent=True``)."""

    def __init__(self, shift: int, column: int, indent: str):
        super().__init__()
        self.shift = shift
        self.column = column
        self.indent = indent

    def _moved(self, indented: bool, space: str) -> Optional[Tuple[bool, str]]:
        if "\t" in space or (indented and "\t" in self.indent):
            return None
        width = (len(self.indent) if indented else 0) + len(space)
        if width < self.column:
            return None
        if self.shift > 0:
            return indented, space + " " * self.shift
        if len(space) >= -self.shift:
            return indented, space[:self.shift]
        return False, " " * (width + self.shift)

    def leave_ParenthesizedWhitespace(self, original, updated):
        moved = self._moved(updated.indent, updated.last_line.value)
        if moved is None:
            return updated
        return updated.with_changes(indent=moved[0], last_line=cst.SimpleWhitespace(moved[1]))

    def leave_EmptyLine(self, original, updated):
        if updated.comment is None:
            return updated
        moved = self._moved(updated.indent, updated.whitespace.value)
        if moved is None:
            return updated
        return updated.with_changes(indent=moved[0], whitespace=cst.SimpleWhitespace(moved[1]))


# ---------------------------------------------------------------------------------------------
# The rules


class _LaunchRule(LintRule):
    """NPU501, NPU502 and NPU504: each checks one launch command in :meth:`check` (given the
    command and the catalog entries that apply to it: the launch readers call it for every
    launch of a training entry and keep what it finds in the launch's fact, :func:`launch_found`),
    and reports in the project phase what :meth:`judge` keeps of that, given what the linted
    files say (:class:`RunFlags`). Never run over a file itself, so no hooks: its analyses do the
    reading (a shell script has no LibCST tree), and a launch is judged only against the whole
    run's registrations."""

    uses = (ShellLaunches, PythonLaunches, FlagFacts)
    consumes = (LAUNCH_TOPIC, ARGPARSE_TOPIC)
    # whether the rule checks the catalog's entries, which hold on the releases the launch's
    # flags leave (:func:`catalog_entries`)
    CATALOG = True

    @classmethod
    def wants(cls, text: str, path: str = "", present=None) -> bool:
        return False

    @classmethod
    def check(cls, cmd: Cmd, entries: Sequence[Applicable]) -> list:
        """This rule's candidates in a launch command: tuples of plain data, the first item
        the place (a Span, or None when the word has none)."""
        raise NotImplementedError

    @classmethod
    def judge(cls, item: tuple, launch: dict, run: "RunFlags", where: str) -> Optional[Tuple[Span, str]]:
        """``(span, message)`` for a candidate of :meth:`check` in *launch* (its fact, in the file
        *where*), or None."""
        return item[0], item[1]

    @classmethod
    def project(cls, facts, report, settings, shared=None) -> None:
        run = FlagFacts.of_run(shared or {})
        seen = set()
        for display, launch in run.launches:
            if cls.CATALOG and run.own_parser_takes(launch["narrowed"]):
                # judged on the releases that register a flag the project's own parser takes
                # too: the launch starts on the others as well, and may pass their checks
                continue
            noqa_lines = launch["noqa"]
            for item in launch["found"].get(cls.CODE, ()):
                found = cls.judge(item, launch, run, display)
                # one finding per place and message; a command covered by a ``# noqa`` line and
                # another that is not (two calls of one function) are two
                if found is None or (display, found, noqa_lines) in seen:
                    continue
                seen.add((display, found, noqa_lines))
                cls.report_in(report, display, found[0], _printable(found[1]), noqa_lines=noqa_lines)


class MindSpeedIncompatibleFlags(_LaunchRule):
    CODE = "NPU501"
    NAME = "mindspeed-incompatible-flags"
    SEVERITY = "error"
    SUMMARY = "Two flags MindSpeed rejects together in one launch command."
    EXPLANATION = (
        "MindSpeed's argument validation raises at start-up (after the job has been scheduled) when "
        "these flags are combined, e.g. `--adaptive-memory-optimization` with any `--recompute-granularity` "
        "or `--recompute-method`, `--recompute-activations`, adaptive selective recompute, `--swap-attention`, "
        "`--recompute-in-bubble`, `--recompute-activation-function`, `--ampipe-degree` > 1 or "
        "`--memory-fragmentation`; then the pairwise rules of MindSpeed's feature checks. Flags are read from "
        "launch commands (`torchrun`, `python -m torch.distributed.launch|run`, `msrun`, `python entry.py`) in "
        "shell scripts, through variables, arrays and appends, and from string lists passed to "
        "`subprocess`/`os.exec*` or assigned to `sys.argv` (also lists built from parts that resolve: "
        "`BASE + ARGS + [\"--bf16\"]`, `[*BASE, ...]`, `shlex.split(\"...\")` of a known string, whose words "
        "are placed at the string; and the argument lists of `os.execl`/`execle`/`execlp`/`execlpe`, less the "
        "environment of the `e` variants). A part that does not resolve (`+ sys.argv[1:]`, `shlex.split(line)`) "
        "stands for unknown words; `sys.executable` is a `python` launcher; a list the file appends to (`append`, `extend`, `+=`) may hold more words, and "
        "one it changes otherwise (`remove`, `pop`, `del cmd[i]`, `cmd[i] = ...`, `clear`, `insert`) is not checked; so with "
        "`sys.argv` after its literal (also as `s.argv` or `argv` imported from `sys`); a name bound to a list "
        "shares its changes, and a list stored in a container or an attribute, or passed to a call other than the "
        "launch and a few that only read it (`print`, `len`, `\" \".join`, `shlex.join`, `logging.*`), is not "
        "checked. A launch whose first argument is a `.yaml` file is not checked (MindSpeed-MM's "
        "`pretrain_transformers.py` replaces the flags after it with the file's). Branches of `if`/`case` are "
        "alternatives (except where bash decides the condition from values the script holds: then only the branch it takes runs): only "
        "flags on one path conflict. Reported once per pair at the flag that comes later. A check is reported only "
        "when it holds on every release the launch may run on: those configured in `[tool.npulint.releases]`, "
        "else inferred from the project, else every release npulint knows, less those whose parsers do not take "
        "every flag of the launch (but one the project's own parser registers, or the configuration declares: "
        "then a check is not reported for a launch whose releases such a flag narrowed); the message names the "
        "releases it holds for and the upstream line (README, "
        "\"Releases\"). The AMO rules are those of the core_r0.8.0-era MindSpeed validator.")
    SOURCE = ("the checks MindSpeed runs at start-up: Ascend/MindSpeed@028de58c (master) mindspeed/arguments.py:713-735 "
              "(validate_args_wrapper: adaptive memory optimization, adaptive selective recompute) and "
              "mindspeed/features_manager/; Ascend/MindSpeed-LLM@c77308a1 (master) mindspeed_llm/features_manager/; "
              "each message names the check's line at the releases it holds for (docs/releases.md); " + _SRC)
    INVALID = (
        Invalid('torchrun --nproc_per_node 8 pretrain_gpt.py --adaptive-memory-optimization '
                '--recompute-granularity full\n', range=(1, 76, 1, 99),
                message="--recompute-granularity conflicts with --adaptive-memory-optimization: adaptive memory "
                        "optimization is not compatible with recompute_granularity (full or selective); rejected at "
                        "start-up (MindSpeed 2.0.0_core_r0.8.0, 2.1.0_core_r0.8.0; MindSpeed-MM 2.0.0, 2.1.0: "
                        "Ascend/MindSpeed@1e898a29 mindspeed/arguments.py:855)"),
    )
    VALID = ('torchrun --nproc_per_node 8 pretrain_gpt.py --adaptive-memory-optimization --recompute-num-layers 2\n',)
    HOW_TO_FIX = "Drop one of the two flags (for AMO: drop the recompute/swap flags, AMO chooses the strategy itself)."
    EXAMPLE_LANGUAGE = "shell"
    EXAMPLE_CONFIG = '[tool.npulint.releases]\nmindspeed = "2.1.0_core_r0.8.0"\n'

    @classmethod
    def check(cls, cmd: Cmd, entries: Sequence[Applicable]) -> List[Tuple[Optional[Span], str]]:
        """The ``conflict`` entries whose two conditions hold on flags the command writes (a
        default value never conflicts): one finding per pair of flags, at the later one."""
        out = []
        pairs = set()

        def both(c: Cmd, e: Entry) -> List[Tuple[Occ, Occ]]:
            a, occ_a = c.holds(e.a)
            if a is not True or occ_a is None:
                return []
            b, occ_b = c.holds(e.b)
            return [(occ_a, occ_b)] if b is True and occ_b is not None else []

        written = cmd.by_flag.keys()
        for applicable in entries:
            e = applicable.entry
            if e.kind != "conflict":
                continue
            sources = applicable.settable[1]
            if (condition_flags(e.a) | sources).isdisjoint(written) or (condition_flags(e.b) | sources).isdisjoint(written):
                continue  # (a pair needs a written flag on each side)
            for occ_a, occ_b in agreed(cmd, applicable, lambda c: both(c, e)):
                pair = frozenset((occ_a.flag, occ_b.flag))
                if pair in pairs:
                    continue
                pairs.add(pair)
                later = occ_a if occ_a.index > occ_b.index else occ_b
                other = occ_b if later is occ_a else occ_a
                out.append((later.word.span, f"{later.flag} conflicts with {other.flag}: {e.message}; rejected at "
                                             f"start-up ({applicable.releases}: {applicable.citation})"))
        return out


class MindSpeedUnknownFlag(_LaunchRule):
    CODE = "NPU502"
    NAME = "mindspeed-unknown-flag"
    SEVERITY = "error"
    SUMMARY = "A training flag no MindSpeed/Megatron stack registers, close to one that exists."
    EXPLANATION = (
        "Megatron parses its arguments strictly (`allow_abbrev=False`, no unknown arguments), so a misspelled "
        "flag aborts training at start-up. Reported only when a known flag is within a small edit distance "
        "(the message says which), and only for Megatron-style entry scripts (`pretrain_*.py`, "
        "`posttrain_*.py`, `finetune_*.py`). Known flags: those of every release of MindSpeed, MindSpeed-LLM, "
        "MindSpeed-MM, MindSpeed-RL and Megatron-LM (every `add_argument` of their Python files, shipped as "
        "data and regenerated by `tools/gen_known_flags.py`), every `add_argument(\"--x\", ...)` in the linted "
        "Python files (also through a loop over a literal collection or a private helper's parameter), and the "
        "configuration's `extend-known-flags`. A flag that an `add_argument` of the linted files whose option "
        "strings npulint cannot read may register (`\"--log-\" + name` may be `--log-steps`) is not reported, nor is "
        "any flag of a launch that also passes a flag no stack registers and close to no known one (a fork's "
        "`--flexpipe-config`): the parser that reads it accepts flags npulint does not know. "
        "A launch of an entry script that is itself "
        "linted is judged by Megatron's rules only when the script visibly uses Megatron's parser (it imports "
        "Megatron, other than `megatron.core`, or MindSpeed or a framework built on it, itself or, when it parses "
        "no command line itself, through the modules of the linted tree it imports); otherwise its own parser "
        "(`parse_args`/`parse_known_args`, `hydra.main`), or one npulint does not read (python-fire, click, tyro, "
        "a parser built by a helper it imports), judges it: NPU501, NPU502 and NPU504 say nothing about it.")
    SOURCE = ("NVIDIA/Megatron-LM@a845aa7e (core_v0.12.1) megatron/training/arguments.py:81-84 (parse_args rejects "
              "unknown arguments); rules/mindspeed_known_flags.txt (its header: every source and commit)")
    INVALID = (
        Invalid("torchrun pretrain_gpt.py --tensor-model-paralel-size 2\n", range=(1, 26, 1, 53),
                message="unknown flag --tensor-model-paralel-size: did you mean --tensor-model-parallel-size? "
                        "Megatron rejects unknown arguments at start-up"),
    )
    VALID = ("torchrun pretrain_gpt.py --tensor-model-parallel-size 2\n",)
    HOW_TO_FIX = "Use the flag's correct spelling."
    EXAMPLE_LANGUAGE = "shell"
    CATALOG = False

    @classmethod
    def check(cls, cmd: Cmd, entries: Sequence[Applicable]) -> List[Tuple[Optional[Span], str]]:
        """``(span, flag)`` for each flag no release registers (launcher-style and dotted
        options, ``--a_b`` and ``--a.b``, aside): whether the linted files register it, and
        what it is close to, is settled in :meth:`judge`."""
        known = known_flags()
        return [(o.word.span, o.flag) for o in cmd.occs
                if "_" not in o.flag and "." not in o.flag and o.flag not in known]

    @classmethod
    def judge(cls, item: tuple, launch: dict, run: "RunFlags", where: str) -> Optional[Tuple[Span, str]]:
        span, flag = item
        known = run.known(launch["declared"])

        def unknown(f: str) -> bool:
            return f not in known and not (run.maybe is not None and run.maybe(f))

        if not unknown(flag):
            return None
        near = _suggestion_cached(flag, known)
        if near is None:
            return None
        # Another flag of the launch that no stack registers and that is close to no known one
        # (`--flexpipe-config`): the parser that reads the launch accepts flags npulint does not
        # know (a fork's, an extension's), and this one may be one of them.
        if any(other != flag and unknown(other) and _suggestion_cached(other, known) is None
               for _, other in launch["found"].get(cls.CODE, ())):
            return None
        return span, f"unknown flag {flag}: did you mean {near}? Megatron rejects unknown arguments at start-up"


class AutogradApplyBypassesAmo(LintRule):
    CODE = "NPU503"
    NAME = "autograd-apply-bypasses-amo"
    # the rewrite makes adaptive memory optimization manage the Function from then on: a change
    # of run-time behaviour
    FIX_APPLICABILITY = "unsafe"
    SEVERITY = "warning"
    SUMMARY = "`X.apply(...)` of a custom autograd Function in a module, while a launch enables AMO."
    EXPLANATION = (
        "A launch command of the run enables `--adaptive-memory-optimization` for its program (the files under "
        "its project folder, the nearest one up with `.git`, `setup.py`, `pyproject.toml`, `setup.cfg` or "
        "`requirements.txt`; a project nested in it or holding it is one program, another clone beside it is "
        "not), and a method of an `nn.Module` "
        "subclass calls `X.apply(...)` where `X` subclasses `torch.autograd.Function` (in the linted files). "
        "Adaptive memory optimization manages only the Functions called through "
        "`adapt_mem_func_wrapper(X, *args)`; this call is invisible to it. The automatic fix rewrites the call "
        "and adds `from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import "
        "adapt_mem_func_wrapper`.")
    SOURCE = (_SRC + " (使用方法, note 2); Ascend/MindSpeed@c721ce33 mindspeed/core/memory/adaptive_memory/"
              "adaptive_memory_function.py:112-135")
    INVALID = (
        Invalid("import subprocess\nimport torch\n\n"
                "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
                "class M(torch.nn.Module):\n    def forward(self, x):\n        return F.apply(x)\n\n"
                "subprocess.run(['torchrun', 'pretrain_gpt.py', '--adaptive-memory-optimization'])\n",
                range=(11, 16, 11, 26),
                message="F.apply(...) bypasses adaptive memory optimization, which a launch command enables "
                        "(t.py:13:48): call adapt_mem_func_wrapper(F, ...) so AMO can manage it",
                fixed="import subprocess\nimport torch\n"
                      "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import "
                      "adapt_mem_func_wrapper\n\n"
                      "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                      "        return x\n\n"
                      "class M(torch.nn.Module):\n    def forward(self, x):\n"
                      "        return adapt_mem_func_wrapper(F, x)\n\n"
                      "subprocess.run(['torchrun', 'pretrain_gpt.py', '--adaptive-memory-optimization'])\n"),
    )
    VALID = ("import subprocess\nimport torch\n"
             "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper\n\n"
             "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
             "class M(torch.nn.Module):\n    def forward(self, x):\n        return adapt_mem_func_wrapper(F, x)\n\n"
             "subprocess.run(['torchrun', 'pretrain_gpt.py', '--adaptive-memory-optimization'])\n",)
    HOW_TO_FIX = "`X.apply(a, b)` -> `adapt_mem_func_wrapper(X, a, b)` (automatic fix)."
    AUTOFIX = True
    uses = (PythonLaunches, FunctionClasses)
    # The launchers' files and the wrapper's select a file. The `X.apply(...)` calls and Function
    # classes matter only in a run where some launch enables AMO: they join files parsed anyway
    # (piggyback) and, when a launch enables AMO, the follow-up phase parses the rest.
    tokens = PythonLaunches.tokens
    piggyback = (".apply", "autograd")
    consumes = (AMO_TOPIC,)

    @classmethod
    def wants(cls, text: str, path: str = "", present=None) -> bool:
        return PythonLaunches.wants(text, path, present)

    @classmethod
    def followup(cls, facts, shared=None):
        return cls.piggyback if (shared or {}).get(AMO_TOPIC) else ()

    def __init__(self, ctx):
        super().__init__(ctx)
        self.applies: List[ApplyCall] = []
        self.blocks: List[str] = []  # the indentation of each enclosing block

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(node.indent if node.indent is not None else self.ctx.module.default_indent)

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.pop()

    def visit_Call(self, node: cst.Call) -> None:
        """An ``X.apply(...)`` in a method: a candidate, with its fix. Whether X is a Function
        and the class a Module (the bases may be another module's), and whether a launch of the
        run enables AMO, only the project phase knows."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "apply") or ".apply" not in self.ctx.text:
            return
        ctx = self.ctx
        sem = ctx.sem
        site = ctx.site()
        cls = sem.enclosing_class(site)
        if cls is None or site.scope.enclosing_function() is None:
            return
        owner = sem.qualname_of_def(cls.node)
        callee = sem.callee_qualname(func.value, site)
        if callee is None or owner is None:
            return
        self.applies.append(ApplyCall(callee, ctx.span(node), self._fix(node, "".join(self.blocks)), owner))

    def finish(self) -> None:
        """The file's fact: each class's bases, and the candidates of :meth:`visit_Call`."""
        classes = self.ctx.analysis(FunctionClasses).named
        if classes or self.applies:
            self.ctx.fact(type(self), {"classes": classes, "applies": self.applies})

    def _fix(self, node: cst.Call, indent: str) -> Optional[Fix]:
        """The call through the wrapper (a LibCST node: :func:`wrapped_call`), and the import."""
        ctx = self.ctx
        if any(a.keyword is not None for a in node.args) or any(a.star == "**" for a in node.args):
            return None  # the wrapper takes no keywords
        import_edits = ctx.import_edits(WRAPPER_MODULE, WRAPPER_NAME)  # () when imported already
        if import_edits is None or import_edits and re.search(rf"\b{WRAPPER_NAME}\b", ctx.text):
            return None  # the import cannot be added, or the name is taken by something else here
        module = ctx.module
        if "\n" in module.code_for_node(node.func.value):
            return None
        shift = column = 0
        own_line = False
        if node.args and isinstance(node.whitespace_before_args, cst.ParenthesizedWhitespace):
            line = ctx.lines()[ctx.line(node.args[0]) - 1].rstrip("\r\n")
            own_line = len(line) + len(module.code_for_node(node.func.value)) + 2 > MAX_LINE
        func = module.code_for_node(node.func)
        bracket = func + module.code_for_node(node.whitespace_after_func)  # up to the opening bracket
        if node.args and not isinstance(node.whitespace_before_args, cst.ParenthesizedWhitespace) \
                and "\n" not in bracket:
            # the arguments start on the bracket's line (visual indent): the lines aligned with
            # them move as far as the bracket does
            span = ctx.span(node)
            before = ctx.lines()[span.line - 1][:span.column - 1]
            if "\t" not in before:
                shift = len(WRAPPER_NAME) - len(func)
                column = len(before) + len(bracket) + 1 + len(module.code_for_node(node.whitespace_before_args))
        code = render_in_block(module, wrapped_call(node, own_line, shift, column, indent), indent)
        if code is None:
            return None
        edits = [*import_edits, ctx.replace(node, code)]
        return Fix("call through adapt_mem_func_wrapper so adaptive memory optimization manages it", tuple(edits))

    @classmethod
    def project(cls, facts, report, settings, shared=None) -> None:
        amo = (shared or {}).get(AMO_TOPIC, [])
        if not amo:
            return
        subclass = subclass_of(facts)
        fn_roots = frozenset(FUNCTION_BASES)
        mod_roots = frozenset(MODULE_BASES)
        memo: Dict[str, Optional[str]] = {}
        for path, f in facts:
            # a launch enables AMO for its own program only, not for another clone of the
            # workspace the run was given (npulint.program.one_program)
            where = next((a for a in amo if one_program(a[0], path, memo)), None) if f["applies"] else None
            if where is None:
                continue
            for call in f["applies"]:
                if call.callee in fn_roots or not subclass(call.callee, fn_roots, path):
                    continue
                if not subclass(call.name, mod_roots, path):
                    continue
                x = call.callee.rsplit(".", 1)[-1]
                cls.report_in(report, path, call.span,
                              f"{x}.apply(...) bypasses adaptive memory optimization, which a launch command "
                              f"enables ({where[0]}:{where[1][0]}:{where[1][1]}): call "
                              f"adapt_mem_func_wrapper({x}, ...) so AMO can manage it",
                              related=((where[0], where[1][0], where[1][1]),), fix=call.fix)


class MindSpeedMissingRequirement(_LaunchRule):
    CODE = "NPU504"
    NAME = "mindspeed-missing-requirement"
    SEVERITY = "error"
    SUMMARY = "A MindSpeed flag whose required companion is absent or has a wrong value."
    EXPLANATION = (
        "From the catalog of MindSpeed's start-up checks, e.g. `--recompute-in-bubble` needs pipeline size > 1 "
        "and a virtual pipeline (`--num-layers-per-virtual-pipeline-stage`); `--fsdp2-config-path` needs "
        "`--use-torch-fsdp2`; `--reuse-fp32-param` needs `--bf16`; `--use-ascend-mc2` needs "
        "`--sequence-parallel` and TP > 1. Absent flags take the parser defaults of the releases the launch may "
        "run on (pipeline size 1, the allgather dispatcher): a pair MindSpeed rejects where the launch writes one "
        "flag and leaves the other at a default it rejects (`--moe-fb-overlap` without `--moe-token-dispatcher-type`) "
        "is reported here, at the written flag (NPU501 takes the pairs written both). Also a "
        "value outside the flag's allowed choices or range. A value outside the choices a parser declares "
        "(`choices=` in the flag's registration, not a validator's check) is judged by the "
        "linted files' own registrations of the flag where there are some (a Megatron fork's parser in the tree, "
        "e.g. AscendSpeed's `--recompute-method`, which takes `custom`): nothing is reported when one of them takes "
        "the value or does not say for certain which values it takes (no `choices`; choices that are neither "
        "literal strings nor, with `type=int`, integers, nor a name bound to such; a `type` other than `str` or "
        "`int`); otherwise the message names their choices and the first of them. Nothing is reported when part "
        "of the command is unknown (a variable the script does not set may hold the companion; in a Python launch list, a part "
        "that does not resolve, such as `+ sys.argv[1:]` or `shlex.split(line)`), nor where the companion is there on "
        "some paths through the script only (`if [ -n \"$BF\" ]; then ARGS+=\" --bf16\"; fi`): a flag or value is "
        "reported where every path that runs the command with it lacks the companion.")
    SOURCE = ("the checks MindSpeed runs at start-up: Ascend/MindSpeed@028de58c (master) mindspeed/features_manager/ "
              "and mindspeed/arguments.py (validate_args_wrapper); Ascend/MindSpeed-LLM@c77308a1 (master) "
              "mindspeed_llm/features_manager/; Ascend/MindSpeed-LLM@b626d239 (2.0.0) "
              "mindspeed_llm/training/arguments.py; each message names the check's line at the releases it holds "
              "for (docs/releases.md)")
    INVALID = (
        Invalid("torchrun pretrain_gpt.py --reuse-fp32-param --fp16\n", range=(1, 26, 1, 44),
                message="--reuse-fp32-param: reuse_fp32_param requires bf16 (MindSpeed 2.0.0_core_r0.8.0 to master; "
                        "MindSpeed-LLM 2.0.0 to master; MindSpeed-MM 2.0.0 to master: Ascend/MindSpeed@028de58c "
                        "mindspeed/features_manager/memory/reuse_fp32_param.py:19)"),
    )
    VALID = ("torchrun pretrain_gpt.py --reuse-fp32-param --bf16\n",
             "torchrun pretrain_gpt.py --reuse-fp32-param $EXTRA_ARGS\n")
    HOW_TO_FIX = "Add the companion flag, or drop the flag that needs it."
    EXAMPLE_LANGUAGE = "shell"

    @classmethod
    def check(cls, cmd: Cmd, entries: Sequence[Applicable]) -> List[tuple]:
        """``(span, message, choice)``: a ``requires`` entry whose first condition holds on a
        flag the command writes and whose second is false with nothing unknown that could make
        it hold; a written value outside a ``choices`` entry's (*choice*: ``(flag, value)``, for
        :meth:`judge`) or a ``range`` entry's (not gated by ``("on", flag)``: that condition
        leaves a zero value unknown, since for a switch-like int flag 0 means off, but a range
        compares the literal number, and 0 may be out of range)."""
        out: List[tuple] = []
        written = cmd.by_flag.keys()
        for applicable in entries:
            e = applicable.entry
            if e.kind == "conflict":
                defaulted, sources = applicable.settable
                if not any(not (compared_flags(other) - written).isdisjoint(defaulted) and
                           not (condition_flags(mine) | sources).isdisjoint(written)
                           for mine, other in ((e.a, e.b), (e.b, e.a))):
                    continue  # (no side written while the other compares a flag left at a default)
            if e.kind in ("range", "requires", "choices", "conflict"):
                out += agreed(cmd, applicable, lambda c: cls._finding(c, applicable))
        return out

    @staticmethod
    def _by_default(cmd: Cmd, e: Entry, where: str) -> List[tuple]:
        """A ``conflict`` one side of which the command writes while the other holds only through
        defaults (the releases' parser defaults, or a validator's setting): the written flag
        needs another value of the flags it leaves out (NPU501 takes the pairs written both)."""
        a, occ_a = cmd.holds(e.a)
        b, occ_b = cmd.holds(e.b)
        if a is not True or b is not True or (occ_a is None) == (occ_b is None):
            return []
        other, occ = (e.b, occ_a) if occ_a is not None else (e.a, occ_b)
        if cmd.has_unknown_for(other):
            return []
        absent = [(f, value) for f in sorted(compared_flags(other) - cmd.by_flag.keys())
                  for value in (cmd.value(f)[1],) if value is not None]
        if not absent:
            return []
        given = ", ".join(f"{f} is not given and defaults to {v}" for f, v in absent)
        return [(occ.word.span, f"{occ.flag}: {e.message}; {given} ({where})", None)]

    @staticmethod
    def _finding(cmd: Cmd, applicable: Applicable) -> List[tuple]:
        """:meth:`check`'s finding for one entry, as *cmd* reads (a list of one, or empty)."""
        e = applicable.entry
        where = f"{applicable.releases}: {applicable.citation}"
        if e.kind == "range":
            flag, lo, hi = e.b
            known, value, occ = cmd.value(flag)
            if not known or occ is None or occ.value is None:
                return []
            try:
                num = float(value)
            except (TypeError, ValueError):
                return []
            if (lo is not None and num < lo) or (hi is not None and num > hi):
                return [(occ.value.span or occ.word.span, f"{occ.flag} {value}: {e.message} ({where})", None)]
            return []
        if e.kind == "conflict":
            return MindSpeedMissingRequirement._by_default(cmd, e, where)
        a, occ_a = cmd.holds(e.a)
        if a is not True or occ_a is None:
            return []
        if e.kind == "requires":
            b, _ = cmd.holds(e.b)
            if b is False and not cmd.has_unknown_for(e.b):
                return [(occ_a.word.span, f"{occ_a.flag}: {e.message} ({where})", None)]
            return []
        known, value, occ = cmd.value(occ_a.flag)
        if known and occ is not None and occ.value is not None and str(value) not in tuple(map(str, e.b[2])):
            return [(occ.value.span or occ.word.span, f"{occ.flag} {value}: {e.message} ({where})",
                     (occ.flag, str(value)) if e.checked_by == "parser" else None)]
        return []

    @classmethod
    def judge(cls, item: tuple, launch: dict, run: "RunFlags", where: str) -> Optional[Tuple[Span, str]]:
        """A value outside a ``choices`` entry's is judged by the linted files' registrations of
        the flag that may be the launch's parser (:meth:`RunFlags.parsers`) where there are some
        (a Megatron fork's parser in the tree: AscendSpeed's ``--recompute-method`` takes
        ``custom``): nothing when one of them takes the value or
        does not say for certain which values it takes (no ``choices``, or choices npulint
        cannot read; integer choices are compared with the integer the value spells); when every
        one excludes it, the finding names their choices and the
        first of them."""
        span, message, choice = item
        if choice is None:
            return span, message
        flag, value = choice
        registrations = run.parsers(flag, launch, where)
        if not registrations:
            return span, message
        allowed: Dict[str, None] = {}
        as_int = _int_text(value)
        for _, _, values, _ in registrations:
            if values is None or value in values or as_int in values:
                return None
            allowed.update(dict.fromkeys(values))
        path, line, _, _ = registrations[0]
        return span, f"{flag} {value}: {flag} must be one of {', '.join(allowed)} (the parser in the linted files: " \
                     f"{path}:{line})"


def _wrapper_binding(args: Sequence[cst.Arg]) -> Optional[str]:
    """Why the arguments *args* cannot bind to ``adapt_mem_func_wrapper(fc_class, *args)``
    (Python's own TypeError), or None: a keyword other than ``fc_class``, or ``fc_class=``
    beside a positional argument (a ``*`` spread that may be empty is unknown)."""
    for a in args:
        if a.keyword is not None and a.keyword.value != "fc_class":
            return f"got an unexpected keyword argument '{a.keyword.value}'"
    if any(a.keyword is not None for a in args) and any(a.keyword is None and not a.star for a in args):
        return "got multiple values for argument 'fc_class'"
    return None


class AdaptMemWrapperMisuse(LintRule):
    CODE = "NPU505"
    NAME = "adapt-mem-wrapper-misuse"
    SEVERITY = "error"
    SUMMARY = "`adapt_mem_func_wrapper` given something other than an autograd Function class, or keywords it lacks."
    EXPLANATION = (
        "`adapt_mem_func_wrapper(fc_class, *args)` first checks that `fc_class` is a subclass of "
        "`torch.autograd.Function` and raises `TypeError` otherwise; passing an instance, `X.apply`, a function "
        "or a lambda fails. Its only keyword is `fc_class` (a keyword other than that, or `fc_class=` beside a "
        "positional argument, raises `TypeError` when the call binds). The Function class may be defined in another "
        "linted module "
        "(`from pkg.fns import MyFn`: `MyFn.apply`, `MyFn()`); a class of a module that is not linted is unknown.")
    SOURCE = (_SRC + "; Ascend/MindSpeed@c721ce33 "
              "mindspeed/core/memory/adaptive_memory/adaptive_memory_function.py:112-114")
    INVALID = (
        Invalid("import torch\n"
                "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper\n\n"
                "class F(torch.autograd.Function):\n    pass\n\ny = adapt_mem_func_wrapper(F.apply, x)\n",
                range=(7, 28, 7, 35),
                message="adapt_mem_func_wrapper() needs a torch.autograd.Function subclass as its first argument, "
                        "not F.apply (pass the class itself): it raises TypeError"),
    )
    VALID = ("import torch\n"
             "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper\n\n"
             "class F(torch.autograd.Function):\n    pass\n\ny = adapt_mem_func_wrapper(F, x)\n",)
    HOW_TO_FIX = "Pass the Function class itself, then its positional arguments: `adapt_mem_func_wrapper(F, x)`."
    uses = (PythonLaunches, FunctionClasses)
    tokens = ((WRAPPER_NAME,),)
    # A class of another linted module (`from pkg.fns import MyFn`) is told by its bases in the
    # project phase: the files that define classes join parses (piggyback), and the follow-up
    # phase parses a file that defines a class a call names (its name and `class`).
    piggyback = ("autograd",)

    def __init__(self, ctx):
        super().__init__(ctx)
        # (class's qualified name, span, what): X.apply / X() of a class this file does not know
        self.elsewhere: List[Tuple[str, Span, str]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if node not in self.ctx.analysis(PythonLaunches).wrapper_calls:
            return
        problem = _wrapper_binding(node.args)
        if problem:
            self.report(node, f"adapt_mem_func_wrapper() {problem} "
                              "(signature: adapt_mem_func_wrapper(fc_class, *args)): it raises TypeError")
            return
        # the class: the first positional argument, or ``fc_class=`` given alone
        given = [a for a in node.args if a.keyword is None] or list(node.args)
        if not given or given[0].star:
            return
        first = given[0].value
        site = self.ctx.site()
        what = self._not_a_function_class(first, site)
        if what:
            self.report(first, _wrapper_message(what))
            return
        other = self._of_another_module(first, site)
        if other is not None:
            self.elsewhere.append((other[0], self.ctx.span(first), other[1]))

    def finish(self) -> None:
        """The calls whose class is another module's: one fact for the file, judged in the
        project phase."""
        if self.elsewhere:
            self.ctx.fact(type(self), {"calls": self.elsewhere})

    def _of_another_module(self, expr, site) -> Optional[Tuple[str, str]]:
        """``(qualified name of X, what)`` for ``X.apply`` or ``X(...)`` where X names a class
        this file does not know to subclass torch.autograd.Function (one of another module, or
        one of this file whose bases are): whether it does is told in the project phase."""
        ctx = self.ctx
        if isinstance(expr, cst.Attribute) and expr.attr.value == "apply":
            x, what = expr.value, f"{ctx.code(expr)} (pass the class itself)"
        elif isinstance(expr, cst.Call):
            x, what = expr.func, "an instance of the Function (pass the class itself)"
        else:
            return None
        q = ctx.sem.callee_qualname(x, site)
        if q is None or q in FUNCTION_BASES:
            return None
        return q, what

    @classmethod
    def followup(cls, facts, shared=None):
        defined = set()
        for _, f in (shared or {}).get(FunctionClasses.__name__, ()):
            defined.update(f["classes"])
        return tuple((q.rsplit(".", 1)[-1], "class") for _, f in facts for q, _, _ in f["calls"] if q not in defined)

    @classmethod
    def project(cls, facts, report, settings, shared=None) -> None:
        subclass = subclass_of((shared or {}).get(FunctionClasses.__name__, ()))
        roots = frozenset(FUNCTION_BASES)
        for path, f in facts:
            for q, span, what in f["calls"]:
                if subclass(q, roots, path):
                    cls.report_in(report, path, span, _wrapper_message(what))

    def _not_a_function_class(self, expr, site) -> Optional[str]:
        ctx = self.ctx
        known = ctx.analysis(FunctionClasses)
        if isinstance(expr, cst.Lambda):
            return "a lambda"
        if isinstance(expr, cst.Attribute) and expr.attr.value == "apply":
            if known.function_class(expr.value, site):
                return f"{ctx.code(expr)} (pass the class itself)"
            return None
        if isinstance(expr, cst.Call) and known.function_class(expr.func, site):
            return "an instance of the Function (pass the class itself)"
        if isinstance(expr, cst.Name):
            cands, exact = ctx.sem.reaching(expr.value, site)
            if exact and cands[0].kind == "def":
                return f"the function {expr.value}"
        if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float, cst.List, cst.Tuple, cst.Dict)):
            return "a literal"
        return None


def _wrapper_message(what: str) -> str:
    return (f"adapt_mem_func_wrapper() needs a torch.autograd.Function subclass as its first argument, not {what}: "
            "it raises TypeError")


def _int_text(value: str) -> Optional[str]:
    """*value* as ``int()`` reads it, written back (``" 02"`` -> ``"2"``), or None."""
    try:
        return str(int(value))
    except ValueError:
        return None


# the launch rules, in the order of their codes (launch_found)
LAUNCH_RULES = (MindSpeedIncompatibleFlags, MindSpeedUnknownFlag, MindSpeedMissingRequirement)
