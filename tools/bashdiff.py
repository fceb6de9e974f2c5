#!/usr/bin/env python3
"""Differential testing of npulint's reading of bash (npulint/shell.py) against bash itself.

Generates small launch scripts from the constructs real MindSpeed launch scripts use, runs
each with real bash (a stub ``torchrun`` on PATH writes its argv, NUL-separated, to a file)
and compares with the launch commands ``shell.parse_script`` reads. Each ``torchrun`` of a
script carries a marker word (``L0``, ``L1``…) so that a launch bash ran is compared with the
commands npulint records for that same ``torchrun`` as written.

The invariant (docs/internals.md, "Reading bash"): for every launch bash ran, one of npulint's
commands for it matches bash's words, a known word equal to bash's word, a word with unknown
parts matching one word (its known parts in place), a splat (an unquoted unknown expansion)
any number of words. A launch no command matches is a *wrong* discrepancy: npulint holds a
known word bash did not pass (the false-positive mechanism). A launch npulint has no command
for at all is *missing* (a false negative, reported apart). Scripts run in a temporary folder
holding files whose names a glob may match (``a.py``, ``--fp16``…), with no network, stdin
from /dev/null and a timeout; the grammar has no command that writes outside that folder.

Usage: ``python tools/bashdiff.py [--seed N] [--count N] [--show K]``: prints each
discrepancy's script, bash's words and npulint's; exit status 1 when one was found.
``--min`` minimises each discrepancy (drops statements while it persists) before printing.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from npulint import shell  # noqa: E402

VARS = ["A", "B", "ARGS", "PP"]
UNSET = "U"  # never assigned by the grammar: unknown to npulint (set or not in the environment)
FILES = ["a.py", "b.py", "--fp16", "x1", "x2"]  # in the script's folder: what globs can match
WORDS = ["--bf16", "1", "2", "a b", "--tp=2", "*", "*.py", "x?", "--fp*", "[ab].py", "", " ", "a,b",
         "{1,2}", "~", "~/d", "-e", "x y z", "a:b"]
ENVS = [{}, {UNSET: "--u1 --u2"}, {UNSET: ""}]  # bash runs each script once per environment


class Gen:
    """A random script: statements from a small grammar of launch-script constructs."""

    def __init__(self, rnd: random.Random):
        self.r = rnd
        self.launches = 0
        self.funcs: List[str] = []
        self.depth = 0

    def pick(self, seq):
        return self.r.choice(seq)

    # -- words -------------------------------------------------------------------------
    def lit(self) -> str:
        w = self.pick(WORDS)
        style = self.r.randrange(4)
        if style == 0 and w and not any(c in w for c in " '\"$\\"):
            return w if w not in ("",) else "''"
        if style == 1:
            return "'" + w + "'"
        if style == 2:
            return '"' + w + '"'
        return "$'" + w.replace(" ", "\\t") + "'" if self.r.random() < 0.3 else "'" + w + "'"

    def var(self) -> str:
        return self.pick(VARS + [UNSET])

    def expansion(self) -> str:
        v = self.var()
        r = self.r.randrange(14)
        if r == 0:
            return "$" + v
        if r == 1:
            return "${%s}" % v
        if r == 2:
            return "${%s[@]}" % v
        if r == 3:
            return "${%s[*]}" % v
        if r == 4:
            return "${#%s[@]}" % v
        if r == 5:
            return "${%s%s%s}" % (v, self.pick([":-", "-", ":+", "+", ":=", "="]), self.pick(["w", "--x", "$" + self.var(), "'a b'", '"$%s"' % self.var(), ""]))
        if r == 6:
            return "${%s%s}" % (v, self.pick(["#*-", "%%=*", "/a/b", "//-/_", ":1", ":0:2", ",,", "^^", "^", "@Q"]))
        if r == 7:
            return "${#%s}" % v
        if r == 8:
            return "$((%s))" % self.arith()
        if r == 9:
            return self.pick(["$1", "$2", "$@", "$*", "$#", "${1:-d}", "$0"])
        if r == 10:
            return "${%s[%s]}" % (v, self.pick(["0", "1", "-1", "$((1))"]))
        if r == 11:
            return "$(echo %s)" % self.pick(["x", "a b", "--y"])
        return "$" + v

    def arith(self) -> str:
        return self.pick(["1+2", "PP*2", "%s+1" % self.var(), "${#A[@]}", "PP", "2**3", "7/2", "-1", "A"])

    def word(self, quoted_ok=True) -> str:
        n = 1 + (self.r.random() < 0.3)
        parts = []
        for _ in range(n):
            k = self.r.randrange(5)
            if k <= 1:
                parts.append(self.lit())
            elif k == 2 and quoted_ok:
                parts.append('"' + self.expansion() + '"')
            else:
                parts.append(self.expansion())
        return "".join(parts)

    def words(self, lo=0, hi=3) -> str:
        return " ".join(self.word() for _ in range(self.r.randint(lo, hi)))

    # -- statements --------------------------------------------------------------------
    def cond(self) -> str:
        v = self.var()
        return self.pick([
            '[ "$%s" = %s ]' % (v, self.lit()), '[ -n "$%s" ]' % v, '[ -z "$%s" ]' % v,
            '[[ $%s == %s ]]' % (v, self.pick(["a*", "--bf16", "1", "''"])), "(( %s ))" % self.arith(),
            '[ "${%s:-0}" -gt 1 ]' % v, "true", "false", "[ -f a.py ]", "test %s" % self.word(),
            '[[ -n $%s && $%s != x ]]' % (v, v), "! [ -z \"$%s\" ]" % v, "[ $%s ]" % v,
        ])

    def assignment(self) -> str:
        v = self.var() if self.r.random() < 0.9 else self.pick(VARS)
        if v == UNSET:
            v = "A"
        r = self.r.randrange(10)
        if r == 0:
            return "%s=(%s)" % (v, self.words(0, 3))
        if r == 1:
            return "%s+=(%s)" % (v, self.words(1, 2))
        if r == 2:
            return "%s+=%s" % (v, self.word())
        if r == 3:
            return "%s %s=%s" % (self.pick(["export", "declare", "local", "readonly", "typeset", "declare -a",
                                              "declare -i", "declare -x", "declare -g", "declare -l", "declare -u"]),
                                  v, self.word())
        if r == 4:
            return '%s="$%s %s"' % (v, v, self.pick(["--x", "--y 1", "$" + self.var()]))
        if r == 5:
            return "%s[%s]=%s" % (v, self.pick(["0", "1", "3", "$PP"]), self.word())
        return "%s=%s" % (v, self.word())

    def simple(self) -> str:
        r = self.r.randrange(30)
        if r < 9:
            return self.assignment()
        if r == 9:
            return self.pick(["IFS=,", "IFS=:", "IFS=' '", "IFS=", "unset IFS", "local IFS=,", "IFS=$'\\n'"])
        if r == 10:
            return self.pick(["set -f", "set +f", "shopt -s nullglob", "shopt -s failglob", "set -o noglob",
                              "shopt -s extglob", "set -e", "set -u", "set -a"])
        if r == 11:
            return "source ./missing.sh" if self.r.random() < 0.5 else ". ./missing.sh"
        if r == 12:
            return "eval %s" % self.pick(['"%s"' % self.assignment().replace('"', '\\"'), "'%s'" % self.assignment().replace("'", ""),
                                          "%s=x" % self.var(), '"$%s"' % self.var()])
        if r == 13:
            return "printf -v %s %s %s" % (self.pick(VARS), self.pick(["%s", "'%s-%s'", "--", "%d"]), self.word())
        if r == 14:
            return "read %s %s <<< %s" % (self.pick(["", "-r", "-a"]), self.pick(VARS), self.word())
        if r == 15:
            return "set -- %s" % self.words(0, 3)
        if r == 16:
            return self.pick(["shift", "shift 2", "shift $#"])
        if r == 17:
            return "unset %s" % self.pick([self.var(), "'A[0]'", "-v A", "-f f0"])
        if r == 18 and self.funcs:
            pre = self.pick(["", "PP=7 ", "A=z "])
            return "%s%s %s" % (pre, self.pick(self.funcs), self.words(0, 2))
        if r == 19:
            return self.pick(["%s=$((%s))" % (self.pick(VARS), self.arith()), "((PP++))", "let PP=PP+1",
                              "(( A = 3 ))", "PP=$((PP+1))", "let 'A = 2'"])
        if r == 20:
            return "cat <<%s >/dev/null\n$%s x\n%s=1\nEOF" % (self.pick(["EOF", "'EOF'", "\"EOF\""]), self.var(), self.var())
        if r == 21:
            return "%s=%s \\\n  %s" % (self.pick(VARS), self.word(), self.pick(["", "true"]))
        if r == 22:
            return "declare -n R=%s; R=%s" % (self.pick(VARS), self.word())
        if r == 23:
            return "readonly %s" % self.pick(VARS)
        if r == 24:
            return "cd %s" % self.pick(["/", ".", "sub"])
        if r == 25:
            return self.pick(["exit 0", "return 0", "break", "continue", "exec true"]) if self.r.random() < 0.4 else "true"
        if r == 26:
            return "%s=%s %s" % (self.pick(VARS), self.word(), self.pick(["true", ":", "export " + self.pick(VARS)]))
        if r == 27:
            return "mapfile -t %s < /dev/null" % self.pick(VARS)
        return self.launch()

    def launch(self) -> str:
        k = self.launches
        self.launches += 1
        wrapper = self.pick(["", "", "", "nohup ", "env X=1 ", "timeout 10 ", "PP=5 "])
        return "%storchrun L%d pretrain_gpt.py %s" % (wrapper, k, self.words(0, 4))

    def block(self, lo=1, hi=3) -> str:
        return "\n".join(self.stmt() for _ in range(self.r.randint(lo, hi)))

    def stmt(self) -> str:
        if self.depth >= 3 or self.r.random() < 0.55:
            return self.simple()
        self.depth += 1
        try:
            r = self.r.randrange(16)
            if r == 0:
                s = "if %s; then\n%s\n" % (self.cond(), self.block())
                if self.r.random() < 0.4:
                    s += "elif %s; then\n%s\n" % (self.cond(), self.block())
                if self.r.random() < 0.5:
                    s += "else\n%s\n" % self.block()
                return s + "fi"
            if r == 1:
                subj = self.pick(['"$%s"' % self.var(), "$%s" % self.var(), self.lit()])
                arms = []
                for _ in range(self.r.randint(1, 3)):
                    pat = self.pick(["a", "--bf16", "1", "*", "a|b", "x*", "''", '"a b"', "[0-9]"])
                    arms.append("  %s) %s %s" % (pat, self.block(1, 2).replace("\n", "; "), self.pick([";;", ";;", ";&", ";;&"])))
                return "case %s in\n%s\nesac" % (subj, "\n".join(arms))
            if r == 2:
                return "%s %s %s" % (self.cond(), self.pick(["&&", "||"]), self.simple())
            if r == 3:
                return "for %s in %s; do\n%s\ndone" % (self.pick(VARS), self.words(0, 3), self.block())
            if r == 4:
                c = "n%d" % self.r.randrange(1000)
                return "%s=0\nwhile [ $%s -lt %d ]; do\n%s=$((%s+1))\n%s\ndone" % (c, c, self.r.randint(0, 2), c, c, self.block())
            if r == 5:
                c = "n%d" % self.r.randrange(1000)
                return "%s=0\nuntil [ $%s -ge %d ]; do\n%s=$((%s+1))\n%s\ndone" % (c, c, self.r.randint(0, 2), c, c, self.block())
            if r == 6:
                return "( %s )" % self.block().replace("\n", "\n  ")
            if r == 7:
                return "{\n%s\n}" % self.block()
            if r == 8:
                return "%s | cat" % self.simple() if self.r.random() < 0.5 else "echo %s | while read %s; do\n%s\ndone" % (self.word(), self.pick(VARS), self.block())
            if r == 9:
                name = "f%d" % len(self.funcs)
                body = self.block()
                self.funcs.append(name)
                return "%s() {\n%s\n}" % (name, body) if self.r.random() < 0.7 else "function %s {\n%s\n}" % (name, body)
            if r == 10:
                return "for ((i=0; i<%d; i++)); do\n%s\ndone" % (self.r.randint(0, 2), self.block())
            if r == 11:
                return "select %s in %s; do\n%s\nbreak\ndone" % (self.pick(VARS), self.words(1, 2), self.block())
            if r == 12:
                return "%s &\nwait" % self.simple()
            if r == 13:
                return "%s && %s" % (self.simple(), self.simple())
            if r == 14:
                # a known string: a string with unknown parts says nothing on its path, which
                # a run of bash cannot tell from a path npulint got wrong
                return "bash -c %s" % self.pick(["'torchrun L%d pretrain_gpt.py --x'" % self._next(),
                                                  "'X=\"a b\"; torchrun L%d pretrain_gpt.py $X'" % self._next()])
            return self.simple()
        finally:
            self.depth -= 1

    def _next(self) -> int:
        k = self.launches
        self.launches += 1
        return k

    def script(self) -> str:
        out = [self.stmt() for _ in range(self.r.randint(2, 7))]
        out.append(self.launch())
        return "\n".join(out) + "\n"


# -- running -------------------------------------------------------------------------------

STUB = """#!/bin/sh
for a in "$@"; do printf '%s\\0' "$a"; done >> "$BASHDIFF_OUT"
printf '\\n\\0' >> "$BASHDIFF_OUT"
"""


class Runner:
    """A folder with the stub ``torchrun`` and the files globs may match; runs scripts there."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="bashdiff-")
        root = self.tmp.name
        self.bin = os.path.join(root, "bin")
        self.work = os.path.join(root, "work")
        os.makedirs(self.bin)
        os.makedirs(os.path.join(self.work, "sub"))
        stub = os.path.join(self.bin, "torchrun")
        with open(stub, "w") as f:
            f.write(STUB)
        os.chmod(stub, 0o755)
        for name in FILES:
            open(os.path.join(self.work, name), "w").close()
        self.root = root
        self.runs = 0
        self.home = os.path.join(root, "home")
        os.makedirs(self.home)

    def run(self, text: str, extra_env) -> Optional[List[List[str]]]:
        """The argv of every ``torchrun`` bash ran (None: bash timed out). The script runs in
        a process group of its own, killed whole at the timeout, and writes to a file of its
        own (a process it left behind cannot write into the next script's)."""
        path = os.path.join(self.work, "script.sh")
        with open(path, "w") as f:
            f.write(text)
        self.runs += 1
        out = os.path.join(self.root, "argv%d" % self.runs)
        env = {"PATH": self.bin + ":/usr/bin:/bin", "HOME": self.home, "BASHDIFF_OUT": out, "LC_ALL": "C"}
        env.update(extra_env)
        proc = subprocess.Popen(["bash", "script.sh"], cwd=self.work, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None
        try:
            with open(out, "rb") as f:
                data = f.read().decode("utf-8", "surrogateescape")
            os.unlink(out)
        except FileNotFoundError:
            data = ""
        launches = []
        for rec in data.split("\n\0"):
            if rec:
                launches.append(rec.split("\0")[:-1])
        return launches

    def accepts(self, text: str) -> bool:
        """Whether bash parses *text* (``bash -n``)."""
        return subprocess.run(["bash", "-n"], input=text.encode(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0

    def close(self):
        shutil.rmtree(self.tmp.name, ignore_errors=True)


# -- comparing -----------------------------------------------------------------------------

def npulint_launches(text: str):
    """``{marker: [words…]}``: the torchrun commands npulint reads, per marker (None: npulint
    says nothing of the script: a syntax error, an unreadable construct or a bound)."""
    script, err = shell.parse_script(text)
    if script is None or script.limit is not None:
        return None
    out = {}
    for c in script.commands:
        i = shell.command_start(c.words)
        if i is None or i >= len(c.words) or not c.words[i].known or os.path.basename(c.words[i].text) != "torchrun":
            continue
        rest = c.words[i + 1:]
        if rest and rest[0].known and re.fullmatch(r"L\d+", rest[0].text):
            out.setdefault(rest[0].text, []).append(rest[1:])
    return out


def _word_re(text: str) -> "re.Pattern":
    parts = text.split(shell.UNKNOWN)
    return re.compile(".*".join(re.escape(p.replace(shell.MANY, "")) for p in parts), re.S)


def matches(words: Sequence, argv: Sequence[str]) -> bool:
    """Whether npulint's *words* may stand for bash's *argv* (a splat: any number of words)."""
    memo = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(words):
            res = j == len(argv)
        else:
            w = words[i]
            if w.splat:
                res = any(go(i + 1, k) for k in range(j, len(argv) + 1))
            elif j < len(argv) and (w.text == argv[j] if w.known else _word_re(w.text).fullmatch(argv[j]) is not None):
                res = go(i + 1, j + 1)
            else:
                res = False
        memo[key] = res
        return res

    return go(0, 0)


def show(words) -> str:
    return "[" + ", ".join(("*" if w.splat else "") + repr(w.text.replace(shell.UNKNOWN, "?").replace(shell.MANY, ""))
                           for w in words) + "]"


def compare(ours, ran, extra=None) -> List[Tuple[str, str]]:
    """The discrepancies between npulint's launches *ours* (:func:`npulint_launches`) and
    the argv lists bash *ran* (:meth:`Runner.run`, in environment *extra*)."""
    found = []
    for argv in ran:
        if not argv or not re.fullmatch(r"L\d+", argv[0]):
            continue
        marker, rest = argv[0], argv[1:]
        cands = ours.get(marker)
        if not cands:
            found.append(("missing", "%s %r (env %r): npulint has no command" % (marker, rest, extra)))
        elif not any(matches(c, rest) for c in cands):
            found.append(("wrong", "%s bash %r (env %r)\n    npulint: %s" % (
                marker, rest, extra, "\n             ".join(show(c) for c in cands))))
    return found


def check(text: str, runner: Runner) -> List[Tuple[str, str]]:
    """The discrepancies of one script, run by bash in each of :data:`ENVS`: ``(kind,
    detail)``; kind is ``wrong`` or ``missing``."""
    ours = npulint_launches(text)
    if ours is None:
        return []
    found = []
    for extra in ENVS:
        ran = runner.run(text, extra)
        if ran is None:
            return []
        found += compare(ours, ran, extra)
    return found


def minimise(text: str, kind: str, runner: Runner) -> str:
    """Drop lines (and then statements' words) while a discrepancy of *kind* remains."""
    lines = text.splitlines()
    changed = True
    while changed:
        changed = False
        for i in range(len(lines)):
            trial = lines[:i] + lines[i + 1:]
            t = "\n".join(trial) + "\n"
            if runner.accepts(t) and any(k == kind for k, _ in check(t, runner)):
                lines = trial
                changed = True
                break
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--show", type=int, default=20, help="discrepancies printed at most")
    ap.add_argument("--missing", action="store_true", help="also print launches npulint has no command for")
    ap.add_argument("--min", action="store_true", help="minimise each discrepancy before printing it")
    args = ap.parse_args(argv)
    runner = Runner()
    shown = wrong = missing = 0
    try:
        for k in range(args.count):
            text = Gen(random.Random("%d-%d" % (args.seed, k))).script()
            for kind, detail in check(text, runner):
                if kind == "wrong":
                    wrong += 1
                else:
                    missing += 1
                if (kind == "wrong" or args.missing) and shown < args.show:
                    shown += 1
                    if args.min:
                        text = minimise(text, kind, runner)
                        got = [d for kk, d in check(text, runner) if kk == kind]
                        detail = got[0] if got else detail
                    print("=== script %d-%d (%s)\n%s--- %s\n" % (args.seed, k, kind, text, detail))
                    break
    finally:
        runner.close()
    print("%d scripts: %d wrong, %d missing" % (args.count, wrong, missing))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
