"""NPU501-NPU505: MindSpeed launch flags, read from shell launch scripts and Python launchers,
checked against the catalog in :mod:`mindspeed_catalog`; AMO and ``adapt_mem_func_wrapper``."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

import ast

from npulint.checker import Checker
from npulint.model import Fix, LazySpan, Rule, Span
from npulint.semantic import call_args
from npulint.shell import command_start
from npulint.source import SHELL

from .mindspeed_catalog import DEFAULTS, TRAINING_ENTRIES, catalog_for

_SRC = "RULES.md NPU5xx; docs/003 (adaptive memory optimization); research/mindspeed-flags.md"
AMO_FLAG = "--adaptive-memory-optimization"
# Every TRAINING_ENTRIES name starts with one of these (the prefilter looks for them).
ENTRY_PREFIXES = ("pretrain_", "posttrain_", "finetune_")
WRAPPER_MODULE = "mindspeed.core.memory.adaptive_memory.adaptive_memory_function"
WRAPPER = f"{WRAPPER_MODULE}.adapt_mem_func_wrapper"
FUNCTION_BASES = {"torch.autograd.Function", "torch.autograd.function.Function"}
MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}

INCOMPATIBLE = Rule(
    code="NPU501", name="mindspeed-incompatible-flags", severity="error",
    summary="Two flags MindSpeed rejects together in one launch command.",
    explanation=(
        "MindSpeed's argument validation raises at start-up (after the job has been scheduled) when "
        "these flags are combined, e.g. `--adaptive-memory-optimization` with any `--recompute-granularity` "
        "or `--recompute-method`, `--recompute-activations`, adaptive selective recompute, `--swap-attention`, "
        "`--recompute-in-bubble`, `--recompute-activation-function`, `--ampipe-degree` > 1 or "
        "`--memory-fragmentation`; then the pairwise rules of MindSpeed's feature checks. Flags are read from "
        "launch commands (`torchrun`, `python -m torch.distributed.launch|run`, `msrun`, `python entry.py`) in "
        "shell scripts, through variables, arrays and appends, and from string lists passed to "
        "`subprocess`/`os.exec*` or assigned to `sys.argv`. Branches of `if`/`case` are alternatives: only "
        "flags on one path conflict. Reported once per pair at the flag that comes later. Rules of the older "
        "`mindspeed/arguments.py` validator apply with `mindspeed-stack = \"legacy\"`."),
    source=_SRC + " §1, §1.2, §2A-2C; MS@master mindspeed/arguments.py:728-735",
    invalid=('torchrun --nproc_per_node 8 pretrain_gpt.py --adaptive-memory-optimization '
             '--recompute-granularity full\n',),
    valid=('torchrun --nproc_per_node 8 pretrain_gpt.py --adaptive-memory-optimization --recompute-num-layers 2\n',),
    fix="Drop one of the two flags (for AMO: drop the recompute/swap flags, AMO chooses the strategy itself).",
    example_language="shell",
)

UNKNOWN_FLAG = Rule(
    code="NPU502", name="mindspeed-unknown-flag", severity="error",
    summary="A training flag no MindSpeed/Megatron stack registers, close to one that exists.",
    explanation=(
        "Megatron parses its arguments strictly (`allow_abbrev=False`, no unknown arguments), so a misspelled "
        "flag aborts training at start-up. Reported only when a known flag is within a small edit distance "
        "(the message says which), and only for Megatron-style entry scripts (`pretrain_*.py`, "
        "`posttrain_*.py`, `finetune_*.py`). The known flags are the union of every MindSpeed, "
        "MindSpeed-LLM and Megatron-LM release's parsers (shipped as data)."),
    source=_SRC + " §0.1 item 4, §3; research/mindspeed-known-flags.txt; "
                  "MEG@0.12.1 megatron/training/arguments.py:81-84",
    invalid=("torchrun pretrain_gpt.py --tensor-model-paralel-size 2\n",),
    valid=("torchrun pretrain_gpt.py --tensor-model-parallel-size 2\n",),
    fix="Use the flag's correct spelling.",
    example_language="shell",
)

APPLY_BYPASSES_AMO = Rule(
    code="NPU503", name="autograd-apply-bypasses-amo", severity="warning",
    summary="`X.apply(...)` of a custom autograd Function in a module, while a launch enables AMO.",
    explanation=(
        "A launch command in the run enables `--adaptive-memory-optimization`, and a method of an `nn.Module` "
        "subclass calls `X.apply(...)` where `X` subclasses `torch.autograd.Function` (in the linted files). "
        "Adaptive memory optimization manages only the Functions called through "
        "`adapt_mem_func_wrapper(X, *args)`; this call is invisible to it. The automatic fix rewrites the call "
        "and adds `from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import "
        "adapt_mem_func_wrapper`."),
    source=_SRC + " §5; docs/003 (使用方法); MS@200r08 mindspeed/core/memory/adaptive_memory/"
                  "adaptive_memory_function.py:112-135",
    invalid=("import subprocess\nimport torch\n\n"
             "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
             "class M(torch.nn.Module):\n    def forward(self, x):\n        return F.apply(x)\n\n"
             "subprocess.run(['torchrun', 'pretrain_gpt.py', '--adaptive-memory-optimization'])\n",),
    valid=("import subprocess\nimport torch\n"
           "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper\n\n"
           "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
           "class M(torch.nn.Module):\n    def forward(self, x):\n        return adapt_mem_func_wrapper(F, x)\n\n"
           "subprocess.run(['torchrun', 'pretrain_gpt.py', '--adaptive-memory-optimization'])\n",),
    fix="`X.apply(a, b)` -> `adapt_mem_func_wrapper(X, a, b)` (automatic fix).",
    autofix=True,
)

MISSING_REQUIREMENT = Rule(
    code="NPU504", name="mindspeed-missing-requirement", severity="error",
    summary="A MindSpeed flag whose required companion is absent or has a wrong value.",
    explanation=(
        "From the catalog of MindSpeed's start-up checks, e.g. `--recompute-in-bubble` needs pipeline size > 1 "
        "and a virtual pipeline (`--num-layers-per-virtual-pipeline-stage`); `--fsdp2-config-path` needs "
        "`--use-torch-fsdp2`; `--reuse-fp32-param` needs `--bf16`; `--use-ascend-mc2` needs "
        "`--sequence-parallel` and TP > 1. Absent flags take MindSpeed's defaults (pipeline size 1). Also a "
        "value outside the flag's allowed choices or range. Nothing is reported when part of the command is "
        "unknown (a variable the script does not set may hold the companion)."),
    source=_SRC + " §2A-2D",
    invalid=("torchrun pretrain_gpt.py --reuse-fp32-param --fp16\n",),
    valid=("torchrun pretrain_gpt.py --reuse-fp32-param --bf16\n",
           "torchrun pretrain_gpt.py --reuse-fp32-param $EXTRA_ARGS\n"),
    fix="Add the companion flag, or drop the flag that needs it.",
    example_language="shell",
)

WRAPPER_MISUSE = Rule(
    code="NPU505", name="adapt-mem-wrapper-misuse", severity="error",
    summary="`adapt_mem_func_wrapper` given something other than an autograd Function class, or keywords.",
    explanation=(
        "`adapt_mem_func_wrapper(fc_class, *args)` first checks that `fc_class` is a subclass of "
        "`torch.autograd.Function` and raises `TypeError` otherwise; passing an instance, `X.apply`, a function "
        "or a lambda fails. It takes no keyword arguments."),
    source=_SRC + " §5; MS@200r08 mindspeed/core/memory/adaptive_memory/adaptive_memory_function.py:112-114",
    invalid=("import torch\n"
             "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper\n\n"
             "class F(torch.autograd.Function):\n    pass\n\ny = adapt_mem_func_wrapper(F.apply, x)\n",),
    valid=("import torch\n"
           "from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper\n\n"
           "class F(torch.autograd.Function):\n    pass\n\ny = adapt_mem_func_wrapper(F, x)\n",),
    fix="Pass the Function class itself, then its positional arguments: `adapt_mem_func_wrapper(F, x)`.",
)

RULES = (INCOMPATIBLE, UNKNOWN_FLAG, APPLY_BYPASSES_AMO, MISSING_REQUIREMENT, WRAPPER_MISUSE)


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

    def value(self, flag: str):
        """(known, value, occ): the flag's effective value (the last occurrence, or the default)."""
        occs = self.by_flag.get(flag)
        if not occs:
            if self.splats:
                return False, None, None
            return True, DEFAULTS.get(flag), None
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
        flag = cond[1]
        if kind == "on":
            occs = self.by_flag.get(flag)
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
        if cond[0] in ("all", "any"):
            return any(self.has_unknown_for(c) for c in cond[1:])
        occs = self.by_flag.get(cond[1])
        if occs and (occs[-1].value is not None and not occs[-1].value.known):
            return True
        return False


def _falsy(text: str) -> bool:
    if text == "":
        return True
    try:
        return float(text) == 0
    except ValueError:
        return False


def check_launch(launch: Launch, stack: str) -> List[Tuple[str, Optional[Span], str]]:
    """(code, span, message) for one launch command."""
    if not is_training_entry(launch.entry):
        return []
    cmd = Cmd(launch)
    out: List[Tuple[str, Optional[Span], str]] = []
    if "--yaml-cfg" in cmd.by_flag:
        # Megatron then takes the arguments from the YAML file (MEG@0.12.1
        # megatron/training/arguments.py:87-91): only the spelling of the flags can be checked
        return _unknown_flags(cmd)
    seen_pairs = set()
    for e in catalog_for(stack):
        if e.kind == "range":
            finding = _out_of_range(cmd, e)
            if finding:
                out.append(finding)
            continue
        a, occ_a = cmd.holds(e.a)
        if a is not True or occ_a is None:
            continue
        if e.kind == "conflict":
            b, occ_b = cmd.holds(e.b)
            if b is not True or occ_b is None:
                continue  # a default value never conflicts: only flags written in the command
            pair = frozenset((occ_a.flag, occ_b.flag))
            if pair in seen_pairs:
                continue
            seen_pairs.add(pair)
            later = occ_a if occ_a.index > occ_b.index else occ_b
            other = occ_b if later is occ_a else occ_a
            out.append(("NPU501", later.word.span,
                        f"{later.flag} conflicts with {other.flag}: {e.message}; MindSpeed rejects this "
                        f"combination at start-up ({e.source})"))
        elif e.kind == "requires":
            b, _ = cmd.holds(e.b)
            if b is False and not cmd.has_unknown_for(e.b):
                out.append(("NPU504", occ_a.word.span, f"{occ_a.flag}: {e.message} ({e.source})"))
        elif e.kind == "choices":
            known, value, occ = cmd.value(occ_a.flag)
            if known and occ is not None and occ.value is not None and str(value) not in tuple(map(str, e.b[2])):
                out.append(("NPU504", occ.value.span or occ.word.span,
                            f"{occ.flag} {value}: {e.message} ({e.source})"))
    out.extend(_unknown_flags(cmd))
    return out


def _out_of_range(cmd: Cmd, e) -> Optional[Tuple[str, Optional[Span], str]]:
    """A ``range`` entry: the flag's written value, when known and numeric, against [lo, hi]. Not
    gated by ``("on", flag)``: that condition leaves a zero value unknown (for a switch-like int
    flag 0 means off), but a range compares the literal number, and 0 may be out of range."""
    flag, lo, hi = e.b
    known, value, occ = cmd.value(flag)
    if not known or occ is None or occ.value is None:
        return None
    try:
        num = float(value)
    except (TypeError, ValueError):
        return None
    if (lo is not None and num < lo) or (hi is not None and num > hi):
        return ("NPU504", occ.value.span or occ.word.span, f"{occ.flag} {value}: {e.message} ({e.source})")
    return None





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


def suggestion(flag: str) -> Optional[str]:
    known = known_flags()
    if flag in known:
        return None
    limit = 1 if len(flag) < 10 else 2
    best, best_d = None, limit + 1
    for k in known:
        d = _distance(flag, k, limit)
        if d < best_d or (d == best_d and best is not None and k < best):
            best, best_d = k, d
    return best if best_d <= limit else None


def _unknown_flags(cmd: Cmd):
    out = []
    for o in cmd.occs:
        if "_" in o.flag or "." in o.flag:  # launcher-style or dotted (YAML override) options
            continue
        s = suggestion(o.flag)
        if s is not None:
            out.append(("NPU502", o.word.span, f"unknown flag {o.flag}: did you mean {s}? Megatron rejects unknown "
                                                "arguments at start-up"))
    return out


# ---------------------------------------------------------------------------------------------
# Shell


class ShellLaunchChecker(Checker):
    rules = (INCOMPATIBLE, UNKNOWN_FLAG, MISSING_REQUIREMENT)
    language = SHELL
    # A launch matters when it runs a training entry (check_launch) or enables AMO (the fact):
    # the script then names the entry or the flag (a value from a sourced file is unknown).
    tokens = tuple((launcher, word) for launcher in ("torchrun", "python", "msrun")
                   for word in (*ENTRY_PREFIXES, AMO_FLAG))
    provides = ("mindspeed.amo",)

    def finish(self) -> None:
        from npulint.shell import crlf_lines, parse_script
        from npulint.source import is_bash_script

        ctx = self.ctx
        if not is_bash_script(ctx.text):
            ctx.unjudged = True
            return  # another shell's script (zsh, csh, fish...): not read with bash's grammar
        crlf = crlf_lines(ctx.text)
        if crlf:
            ctx.unjudged = True
            # bash reads the \r as part of the line's last word: the words, and the commands
            # that continuation lines were meant to build, are not what the script shows
            n = len(crlf)
            line, col = crlf[0]
            ctx.report("NPU004", Span(line, col, line, col + 1),
                       f"CRLF (Windows) line endings{f' on {n} lines' if n > 1 else ''}: bash reads the "
                       "carriage return as part of each line's last word (`--bf16` becomes `--bf16\\r`) and "
                       "`\\` before CRLF does not continue the command; convert the file to LF line endings")
            return
        script, error = parse_script(ctx.text)
        if error is not None:
            ctx.unjudged = True
            ctx.report("NPU001", Span(error.line, error.column, error.line, error.column),
                       f"syntax error: {error.message}")
            return
        # past MAX_PATHS branch paths (script.capped) later commands were not recorded: nothing is said
        stack = ctx.settings.mindspeed_stack
        seen = set()
        amo_done = False
        for command in script.commands:
            words = [Word(a.text, a.lazy_span, a.known, a.splat) for a in command.words]
            launch = find_launch(words)
            if launch is None:
                continue
            for code, span, message in check_launch(launch, stack):
                key = (code, span, message, command.noqa_lines)
                if key in seen or span is None:
                    continue
                seen.add(key)
                ctx.report(code, span, _printable(message), noqa_lines=command.noqa_lines)
            if not amo_done:
                amo = amo_occ(launch)
                if amo is not None:
                    amo_done = True
                    ctx.fact("mindspeed.amo", (amo.line, amo.column))


def _printable(message: str) -> str:
    """A message with the bytes of the script that are not UTF-8 shown as ``\\xNN``."""
    if message.isascii():
        return message
    return message.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def amo_occ(launch: Launch) -> Optional[Span]:
    for w in launch.args:
        if w.known and w.text == AMO_FLAG and w.span is not None:
            return w.span
    return None


# ---------------------------------------------------------------------------------------------
# Python

_SUBPROCESS = {f"subprocess.{n}" for n in ("run", "Popen", "call", "check_call", "check_output")}
_EXECV = {f"os.{n}" for n in ("execv", "execve", "execvp", "execvpe")}
_LAUNCH_CALLS = _SUBPROCESS | _EXECV
_ARGV = {"sys.argv"}


@dataclasses.dataclass(frozen=True)
class ApplyCall:
    callee: str  # qualified name of X in X.apply
    span: Span
    fix: Optional[Fix]
    name: str


class PythonMindSpeedChecker(Checker):
    rules = (INCOMPATIBLE, UNKNOWN_FLAG, APPLY_BYPASSES_AMO, MISSING_REQUIREMENT, WRAPPER_MISUSE)
    # Launchers and the wrapper select a file. NPU503's `X.apply(...)` calls and Function
    # classes matter only in a run where some launch enables AMO: they join files parsed
    # anyway (piggyback) and, when a launch enables AMO, the follow-up phase parses the rest.
    #
    # A launch list matters only when it launches a training entry (check_launch) or enables
    # AMO (the "mindspeed.amo" fact), and the resolver knows only this file's string values:
    # so the file's text names the entry or the flag (an entry name assembled from pieces,
    # "pre" + "train_gpt.py", is missed); or, for `sys.argv = [...]` without an entry, the file
    # is itself the entry. Most files that merely mention `subprocess` or
    # `sys.argv` are never parsed for this checker.
    tokens = (*((launcher, word) for launcher in ("subprocess", "execv", "argv")
                for word in (*ENTRY_PREFIXES, AMO_FLAG)),
              ("adapt_mem_func_wrapper",))
    piggyback = (".apply", "autograd")

    @classmethod
    def wants(cls, text: str, path: str = "", present=None) -> bool:
        return super().wants(text, path, present) or (
            "argv" in text and re.fullmatch(TRAINING_ENTRIES, os.path.basename(path)) is not None)

    @classmethod
    def followup(cls, facts, shared=None):
        return cls.piggyback if (shared or {}).get("mindspeed.amo") else ()
    provides = ("mindspeed.amo",)
    consumes = ("mindspeed.amo",)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.calls = []
        self.argv = []
        self.classes = []
        self.mutated = set()

    def visit_Call(self, node: ast.Call) -> None:
        self.calls.append((node, self.ctx.site()))

    def visit_Assign(self, node: ast.Assign) -> None:
        self.argv.append((node, self.ctx.site()))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append((node, self.ctx.site()))

    # names of lists that may change after they are built (then their launch is not fully known)
    def visit_Attribute(self, node: ast.Attribute) -> None:
        if type(node.value) is ast.Name:
            self.mutated.add(node.value.id)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if type(node.target) is ast.Name:
            self.mutated.add(node.target.id)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if type(node.value) is ast.Name:
            self.mutated.add(node.value.id)


    # -- launch lists --------------------------------------------------------------
    def _words(self, expr, site) -> Optional[List[Word]]:
        named = expr.id if type(expr) is ast.Name else None
        expr, site = self.ctx.sem.bound_expr(expr, site)
        if type(expr) is not ast.List and type(expr) is not ast.Tuple:
            return None
        words = []
        for el in expr.elts:
            if type(el) is ast.Starred:
                words.append(Word("\x00", None, False, True))
                continue
            v = self.ctx.value(el, site)
            span = functools.partial(self.ctx.span, el)  # computed when reported
            if isinstance(v, str):
                words.append(Word(v, span))
            else:
                words.append(Word("\x00", span, False, False))
        if named is not None and named in self.mutated:
            # `cmd.append(...)`, `cmd += [...]`, `cmd[i] = ...` somewhere: more words may follow
            words.append(Word("\x00", None, False, True))
        return words

    def _check_words(self, words: List[Word], argv_entry: bool) -> None:
        if argv_entry:
            if not words:
                return
            entry = words[0] if words[0].known and words[0].text.endswith(".py") else \
                Word(os.path.basename(self.ctx.path), None)
            launch = Launch(entry, words[1:])
        else:
            launch = find_launch(words)
            if launch is None:
                return
        for code, span, message in check_launch(launch, self.ctx.settings.mindspeed_stack):
            if span is not None:
                self._report_span(code, span, message)
        amo = amo_occ(launch)
        if amo is not None:
            self.ctx.fact("mindspeed.amo", (amo.line, amo.column))

    def _report_span(self, code, span: Span, message: str) -> None:
        from npulint.model import Finding

        if self.ctx.wants(code):
            self.ctx.findings.append(Finding(self.ctx.display, span.line, span.column, code, message,
                                             span.end_line, span.end_column))

    def finish(self) -> None:
        ctx = self.ctx
        for node, site in self.calls:
            q = ctx.resolve(node.func, site, _LAUNCH_CALLS | {WRAPPER})
            if q in _SUBPROCESS or q in _EXECV:
                index = 0 if q in _SUBPROCESS else 1
                args = call_args(node)
                pos = [a for a in args if a.keyword is None]
                arg = pos[index].value if len(pos) > index and pos[index].star == "" else None
                if arg is None and q in _SUBPROCESS:
                    arg = next((a.value for a in args if a.keyword == "args"), None)
                if arg is not None:
                    words = self._words(arg, site)
                    if words:
                        self._check_words(words, False)
            elif q == WRAPPER:
                self._wrapper(node, site)
        for node, site in self.argv:
            if any(ctx.resolve(t, site, _ARGV) for t in node.targets):
                words = self._words(node.value, site)
                if words is not None:
                    self._check_words(words, True)
        self._classes_and_applies()

    # -- NPU505 ----------------------------------------------------------------------
    def _wrapper(self, node: ast.Call, site) -> None:
        ctx = self.ctx
        args = call_args(node)
        if any(a.keyword is not None for a in args):
            ctx.report("NPU505", node, "adapt_mem_func_wrapper() takes no keyword arguments "
                                       "(signature: adapt_mem_func_wrapper(fc_class, *args)): it raises TypeError")
            return
        if not args or args[0].star:
            return
        first = args[0].value
        what = self._not_a_function_class(first, site)
        if what:
            ctx.report("NPU505", first, f"adapt_mem_func_wrapper() needs a torch.autograd.Function subclass as its "
                                        f"first argument, not {what}: it raises TypeError")

    def _not_a_function_class(self, expr, site) -> Optional[str]:
        ctx = self.ctx
        t = type(expr)
        if t is ast.Lambda:
            return "a lambda"
        if t is ast.Attribute and expr.attr == "apply":
            if self._function_class(expr.value, site):
                return f"{ctx.code(expr)} (pass the class itself)"
            return None
        if t is ast.Call and self._function_class(expr.func, site):
            return "an instance of the Function (pass the class itself)"
        if t is ast.Name:
            cands, exact = ctx.sem.reaching(expr.id, site)
            if exact and cands[0].kind == "def":
                return f"the function {expr.id}"
        if t is ast.List or t is ast.Tuple or t is ast.Dict:
            return "a literal"
        if t is ast.Constant:
            v = type(expr.value)
            if v is int or v is float or ((v is str or v is bytes) and not _concatenated(ctx, expr)):
                return "a literal"  # (LibCST's Integer/Float/SimpleString: not True/None/1j/.../"a" "b")
        return None

    def _function_class(self, expr, site) -> bool:
        """*expr* certainly names a class of this file that subclasses torch.autograd.Function."""
        node = self._local_class(expr, site)
        return node is not None and self._local_subclass(node, FUNCTION_BASES, set())

    def _local_class(self, expr, site):
        if type(expr) is ast.Name:
            cands, exact = self.ctx.sem.reaching(expr.id, site)
            if exact and cands[0].kind == "class":
                return cands[0].node
        return None

    def _bases(self, node: ast.ClassDef) -> List[Optional[str]]:
        site = self.ctx.sem.def_site.get(node)
        out = []
        for b in node.bases:
            if type(b) is ast.Starred:
                continue
            out.append(self.ctx.sem.callee_qualname(b, site) if site is not None else None)
        return out

    def _local_subclass(self, node, roots, seen) -> bool:
        if id(node) in seen:
            return False
        seen.add(id(node))
        site = self.ctx.sem.def_site.get(node)
        for b in node.bases:
            if type(b) is ast.Starred:
                continue
            q = self.ctx.sem.callee_qualname(b, site) if site is not None else None
            if q in roots:
                return True
            local = self._local_class(b, site) if site is not None else None
            if local is not None and self._local_subclass(local, roots, seen):
                return True
        return False

    # -- NPU503 facts ------------------------------------------------------------------
    def _classes_and_applies(self) -> None:
        ctx = self.ctx
        sem = ctx.sem
        classes = {}
        for node, _ in self.classes:
            q = sem.qualname_of_def(node)
            if q is not None:
                classes[q] = [b for b in self._bases(node)]
        applies: List[ApplyCall] = []
        if ".apply" in ctx.text:
            for node, site in self.calls:
                func = node.func
                if not (type(func) is ast.Attribute and func.attr == "apply"):
                    continue
                cls = sem.enclosing_class(site)
                if cls is None or site.scope.enclosing_function() is None:
                    continue
                owner = sem.qualname_of_def(cls.node)
                callee = sem.callee_qualname(func.value, site)
                if callee is None or owner is None:
                    continue
                applies.append(ApplyCall(callee, ctx.span(node), self._fix(node), owner))
        if classes or applies:
            ctx.fact(PythonMindSpeedChecker, {"classes": classes, "applies": applies})

    def _fix(self, node: ast.Call) -> Optional[Fix]:
        ctx = self.ctx
        args = call_args(node)
        if any(a.keyword is not None for a in args) or any(a.star == "**" for a in args):
            return None
        edit_import = ctx.import_edit(WRAPPER_MODULE, "adapt_mem_func_wrapper")
        if edit_import is not None and re.search(r"\badapt_mem_func_wrapper\b", ctx.text):
            return None  # the name is taken by something else here
        # the source as written
        call_span, func_span, x_span = ctx.span(node), ctx.span(node.func), ctx.span(node.func.value)
        x_code = ctx.source(x_span)
        rest = ctx.source(Span(func_span.end_line, func_span.end_column, call_span.end_line, call_span.end_column)).lstrip()
        if not (rest.startswith("(") and rest.endswith(")")) or "\n" in x_code:
            return None
        inner = rest[1:-1]
        if not inner.strip():
            new = f"adapt_mem_func_wrapper({x_code})"
        else:
            lead = inner[:len(inner) - len(inner.lstrip())]
            new = f"adapt_mem_func_wrapper({x_code},{inner}" if "\n" in lead else \
                f"adapt_mem_func_wrapper({x_code}, {inner.lstrip()}"
            new += ")"
        edits = [ctx.replace(node, new)]
        if edit_import is not None:
            edits.insert(0, edit_import)
        return Fix("call through adapt_mem_func_wrapper so adaptive memory optimization manages it", tuple(edits))

    @classmethod
    def project(cls, facts, report, settings, shared=None) -> None:
        amo = (shared or {}).get("mindspeed.amo", [])
        if not amo:
            return
        where = amo[0]
        bases: Dict[str, List[Optional[str]]] = {}
        for _, f in facts:
            bases.update(f["classes"])

        @functools.lru_cache(maxsize=None)
        def subclass(q: str, roots: frozenset, depth: int = 0) -> bool:
            if q in roots:
                return True
            if depth > 20 or q not in bases:
                return False
            return any(b is not None and subclass(b, roots, depth + 1) for b in bases[q])

        fn_roots = frozenset(FUNCTION_BASES)
        mod_roots = frozenset(MODULE_BASES)
        for path, f in facts:
            for call in f["applies"]:
                if call.callee in fn_roots or not subclass(call.callee, fn_roots):
                    continue
                if not subclass(call.name, mod_roots):
                    continue
                x = call.callee.rsplit(".", 1)[-1]
                report.report(path, call.span, "NPU503",
                              f"{x}.apply(...) bypasses adaptive memory optimization, which a launch command "
                              f"enables ({where[0]}:{where[1][0]}:{where[1][1]}): call "
                              f"adapt_mem_func_wrapper({x}, ...) so AMO can manage it",
                              related=((where[0], where[1][0], where[1][1]),), fix=call.fix)


def _concatenated(ctx, expr) -> bool:
    """Whether a string constant is written as an implicit concatenation (``"a" "b"``)."""
    import tokenize

    toks, starts, ends = ctx.tokens()
    s = ctx.span(expr)
    i, j = starts.get((s.line, s.column)), ends.get((s.end_line, s.end_column))
    return i is not None and j is not None and sum(1 for t in toks[i:j + 1] if t[0] == tokenize.STRING) > 1


CHECKERS = [ShellLaunchChecker, PythonMindSpeedChecker]
