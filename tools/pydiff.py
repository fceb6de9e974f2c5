#!/usr/bin/env python3
"""Differential testing of npulint's certain Python values against CPython itself.

Generates small programs (one module, or a package of a few modules and a script) from the
constructs model scripts use around constants, marks probe points ``probe(ID, expr)``, and
compares, at every probe, the value npulint's evaluator calls certain (``Evaluator.value``,
with the run's module table active, as the pipeline drives it) with every value CPython
gives there, running the program with its unknown inputs (environment variables) set every
way. The invariant (RULES.md "General semantics": resolve what is certain, never guess):
where npulint names a value, every execution reaching the point has exactly that value;
UNKNOWN is always acceptable.

    python tools/pydiff.py --seed 1 --count 500          # report discrepancies, exit 1 if any
    python tools/pydiff.py --seed 7 --count 1 --show     # print one generated program
    python tools/pydiff.py --count 2000 --multi 0        # single-module programs only
    python tools/pydiff.py --cases                       # the hand-written programs (CASES)

The generated programs are this tool's own (never user code); they run in a subprocess with
a timeout, in a temporary directory. Values are compared by ``repr`` after turning lists into
tuples (npulint folds a list literal to a tuple). A probe that CPython never reaches
constrains nothing. docs/internals.md ("Differential testing of values") describes it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

ENVS = ("NPD_A", "NPD_B")
NAMES = ("X", "Y", "Z")  # numbers, mostly; T, L, D hold a tuple, a list, a dict
RUNNER = r"""
import builtins, json, os, runpy, sys
rec = {}
def norm(v):
    if isinstance(v, (list, tuple)):
        return tuple(norm(x) for x in v)
    return v
def probe(i, v):
    try:
        r = repr(norm(v))
    except Exception:
        r = "<unrepr>"
    rec.setdefault(str(i), [])
    if r not in rec[str(i)]:
        rec[str(i)].append(r)
    return v
builtins.probe = probe
sys.path.insert(0, sys.argv[1])
try:
    runpy.run_path(os.path.join(sys.argv[1], "main.py"), run_name="__main__")
except BaseException as e:
    rec["!exc"] = [type(e).__name__ + ": " + str(e)[:80]]
sys.stdout.write("\n@@PYDIFF@@" + json.dumps(rec))
"""


class Gen:
    """One random program: files {relative path: text}."""

    def __init__(self, rng: random.Random, multi: bool):
        self.rng = rng
        self.multi = multi
        self.pid = 0
        self.fn = 0
        self.main = True

    # -- expressions ------------------------------------------------------------------
    def const(self, any_type=False):
        r = self.rng
        if not any_type and r.random() < 0.8:  # numbers mostly: a TypeError ends the run, and its probes
            return r.choice(["0", "1", "2", "3", "8", "-1", "2.0", "0.5", "True", "False"])
        return r.choice(["0", "1", "2", "3", "8", "-1", "2.0", "0.5", "True", "False", "None",
                         "'a'", "'b'", "(1, 2)", "[4, 5]", "()"])

    def expr(self, d=0, names=NAMES):
        r = self.rng
        k = r.random()
        if d > 2 or k < 0.3:
            return self.const()
        if k < 0.55:
            return r.choice(names)
        if k < 0.7:
            op = r.choice(["+", "-", "*", "//", "%", "**", "<<", ">>", "|", "&", "/"])
            if r.random() < 0.7:  # numbers mostly: a TypeError ends the run, and its probes
                right = r.choice(["1", "2", "3", "True"]) if op in ("<<", ">>", "**", "//", "%", "/") \
                    else r.choice(["0", "1", "2", "8", "-1", "0.5", "True", r.choice(names)])
                return f"({r.choice(['0', '3', '8', '-1', '2.0', 'False'] + list(names))} {op} {right})"
            return f"({self.expr(d + 1, names)} {op} {self.expr(d + 1, names)})"
        if k < 0.75:
            return f"({r.choice(['-', 'not ', '~'])}{self.expr(d + 1, names)})"
        if k < 0.8:
            return f"({self.expr(d + 1, names)}, {self.expr(d + 1, names)})"
        if k < 0.85:
            return f"{r.choice(['T', 'L'])}[{r.choice(['0', '1', '-1'])}]"
        if k < 0.88:
            return f"{{'k': {self.expr(d + 1, names)}, 1: 2}}[{r.choice(['1', chr(39) + 'k' + chr(39), 'True'])}]"
        if k < 0.89:
            return "os.environ.get('%s')" % r.choice(ENVS)
        if k < 0.91:  # the formats npulint folds (lists and tuples, nested)
            return f"{r.choice(['%s', '%r', '%s-%s', '%d'])!r} % {r.choice(['L', 'T', '(L,)', '(T, X)', '[X]', 'T[0]', '(X, Y)'])}"
        if k < 0.94:
            return f"K.{r.choice(['a', 'b'])}"
        if k < 0.97 and self.multi:
            return f"{r.choice(['ma', 'pkg.a'])}.{r.choice(NAMES)}"
        return "f0()"

    def cond(self):
        r = self.rng
        return r.choice(["os.environ.get('%s')" % r.choice(ENVS), "True", "0", f"{r.choice(NAMES)}",
                         f"{r.choice(NAMES)} == 1", "not os.environ.get('%s')" % r.choice(ENVS)])

    def probe(self, ind, names=NAMES):
        self.pid += 1
        e = self.rng.choice(list(names) + [self.expr(1, names)])
        return f"{ind}probe({self.pid}, {e})"

    # -- statements -------------------------------------------------------------------
    def block(self, ind, d, where, n=None):
        n = n if n is not None else self.rng.randint(1, 3)
        out = []
        for _ in range(n):
            out.extend(self.stmt(ind, d, where))
        return out

    def stmt(self, ind, d, where) -> List[str]:
        r = self.rng
        x = r.choice(NAMES)
        y = r.choice(NAMES)
        k = r.random()
        nxt = ind + "    "
        if k < 0.2:
            return [f"{ind}{x} = {self.expr()}"]
        if k < 0.27:
            return [f"{ind}{x} {r.choice(['+', '-', '*', '//', '|', '<<'])}= {self.expr(1)}"]
        if k < 0.3:
            return [f"{ind}{x}, {y} = {self.expr(1)}, {self.expr(1)}"]
        if k < 0.45:
            return [self.probe(ind)]
        if d >= 2:
            return [f"{ind}{x} = {self.const()}"]
        if k < 0.52:
            out = [f"{ind}if {self.cond()}:"] + self.block(nxt, d + 1, where)
            if r.random() < 0.3:
                out += [f"{ind}elif {self.cond()}:"] + self.block(nxt, d + 1, where)
            if r.random() < 0.5:
                out += [f"{ind}else:"] + self.block(nxt, d + 1, where)
            return out
        if k < 0.55:
            return [f"{ind}for {r.choice(['i', x])} in {r.choice(['range(2)', '()', '[1, 2]', 'T'])}:"] + \
                self.block(nxt, d + 1, where) + ([f"{nxt}break"] if r.random() < 0.3 else [])
        if k < 0.57:
            return [f"{ind}_n = 0", f"{ind}while _n < {r.choice(['0', '2'])}:", f"{nxt}_n += 1"] + \
                self.block(nxt, d + 1, where)
        if k < 0.61:
            body = self.block(nxt, d + 1, where)
            if r.random() < 0.5:
                body.insert(r.choice([0, len(body)]), f"{nxt}{r.choice(['raise ValueError', '1 / 0', 'int(os.environ.get(chr(65)))'])}")
            out = [f"{ind}try:"] + body + [f"{ind}except {r.choice(['Exception', 'ValueError', 'ZeroDivisionError'])}:"] + \
                self.block(nxt, d + 1, where)
            if r.random() < 0.3:
                out += [f"{ind}finally:"] + self.block(nxt, d + 1, where)
            return out
        if k < 0.63:
            return [f"{ind}with {r.choice(['contextlib.nullcontext()', 'contextlib.suppress(Exception)'])}:"] + \
                self.block(nxt, d + 1, where) + \
                ([f"{nxt}raise ValueError"] if r.random() < 0.3 else []) + self.block(nxt, d + 1, where, 1)
        if k < 0.65:
            return [f"{ind}if ({x} := {self.expr(1)}):"] + self.block(nxt, d + 1, where)
        if k < 0.67:
            return [f"{ind}_c = [{x} for {x} in range(3)]", f"{ind}_g = [{y} := {x} for _ in (1,)]" if r.random() < 0.3
                    else f"{ind}_d = {{{x}: 1 for {x} in 'ab'}}"]
        if k < 0.69:
            return [f"{ind}del {x}", f"{ind}{x} = {self.const()}"] if r.random() < 0.7 else \
                [f"{ind}try:", f"{nxt}del {x}", f"{ind}except NameError:", f"{nxt}pass"]
        if k < 0.73 and where == "module":
            self.fn += 1
            n = self.fn - 1
            deco = []
            if r.random() < 0.2:
                deco = [f"{ind}@{r.choice(['functools.lru_cache(None)', 'deco', 'staticmethod'])}"]
            params = r.choice(["", "a=X", "a=Y, *b", "a=1"])
            body = []
            if r.random() < 0.5:
                body.append(f"{nxt}global {', '.join(r.sample(NAMES, r.randint(1, 2)))}")
            body += self.block(nxt, d + 1, "function")
            if "a" in params:
                self.pid += 1
                body.append(f"{nxt}probe({self.pid}, a)")
            if r.random() < 0.3:
                body += [f"{nxt}def inner():", f"{nxt}    nonlocal a" if "a" in params else f"{nxt}    global {x}",
                         f"{nxt}    {'a' if 'a' in params else x} = {self.const()}", f"{nxt}inner()"]
                if "a" in params:
                    self.pid += 1
                    body.append(f"{nxt}probe({self.pid}, a)")
            body.append(f"{nxt}return {self.expr(1)}")
            out = deco + [f"{ind}def f{n}({params}):"] + body
            if r.random() < 0.7:
                out.append(f"{ind}{r.choice(['', '_r = '])}f{n}({r.choice(['', '2', 'X'])})")
            if r.random() < 0.2:
                out += [f"{ind}_p = functools.partial(f{n}, {self.const()})", f"{ind}_r = _p()"] if "a" in params else []
            return out
        if k < 0.75:
            return [f"{ind}K.{r.choice(['a', 'b'])} = {self.expr(1)}"] if r.random() < 0.5 else \
                [f"{ind}_k = K()", f"{ind}_k.a = {self.const()}", self.probe(ind, ("_k.a", "_k.b", "K.a"))]
        if k < 0.78:
            return [f"{ind}L = [{self.const()}, {self.const()}]", f"{ind}{r.choice(['L.append(3)', 'L[0] = 7', 'g(L)', 'L.sort()', 'L += [1]', '_al = L', 'pass', 'T = (L, 1)', 'T[0].append(1)'])}",
                    self.probe(ind, ("L[0]", "L", "T[0]", "T[1]"))]
        if k < 0.8:
            return [f"{ind}D = {{'k': {self.const()}}}", f"{ind}{r.choice(['D[chr(107)] = 9', 'D.update(k=3)', 'pass', 'D.pop(chr(107))', '_al = D', 'D.setdefault(chr(107), 4)'])}",
                    self.probe(ind, ("D['k']", "D"))]
        if k < 0.83:
            return [f"{ind}{r.choice(['globals()[%r] = %s' % (x, self.const()), 'setattr(sys.modules[__name__], %r, %s)' % (x, self.const()), 'exec(%r)' % (x + ' = 11'), 'vars()[%r] = 12' % x])}"]
        if k < 0.86 and self.multi:
            return [f"{ind}" + r.choice([f"{r.choice(['ma', 'pkg.a', 'pkg.b', 'pkg'])}.{x} = {self.const()}",
                                         f"setattr(ma, {x!r}, {self.const()})",
                                         f"sys.modules['pkg.a'].{x} = {self.const()}",
                                         f"vars(ma)[{x!r}] = {self.const()}",
                                         f"ma.__dict__.update({x}={self.const()})",
                                         f"ma.D['k'] = {self.const()}", "ma.L.append(2)",
                                         f"ma.K.a = {self.const()}", "ma.f0()",
                                         f"from pkg.a import {x}", f"from pkg.b import {x}",
                                         f"{x} = ma.{r.choice(NAMES)}"])]
        if k < 0.88 and self.multi and self.main:  # (a module reloading itself: docs/internals.md)
            return [f"{ind}importlib.reload(ma)"]
        if k < 0.9:
            return [f"{ind}{x} = {r.choice(['f0()', 'K.a', 'int(os.environ.get(%r, 1))' % ENVS[0], 'len(L)', 'T[1]', 'D.get(chr(107), 0)'])}"]
        return [f"{ind}{x} = {self.expr()}"]

    # -- modules ------------------------------------------------------------------------
    HEAD = ["import os, sys, contextlib, functools, importlib",
            "def g(v):\n    v.append(1)\n    return v",
            "def deco(fn):\n    fn()\n    return fn"]

    def module(self, imports: List[str], n: int, main: bool = True) -> str:
        self.fn = 0
        self.main = main
        lines = list(self.HEAD) + imports
        lines += [f"{x} = {self.const()}" for x in NAMES]
        lines += [f"T = ({self.const(True)}, {self.const()})", f"L = [{self.const()}, 1]", f"D = {{'k': {self.const()}}}"]
        lines += ["def f0():", "    return X" if self.rng.random() < 0.5 else "    return 1"]
        lines += ["class K:", f"    a = {self.const()}", f"    b = {self.expr(2)}"]
        self.fn = 1
        for _ in range(n):
            lines.extend(self.stmt("", 0, "module"))
        if self.rng.random() < 0.4:
            lines += ["if __name__ == '__main__':"] + self.block("    ", 1, "module")
        lines += [self.probe("") for _ in range(2)]
        return "\n".join(lines) + "\n"

    def program(self) -> Dict[str, str]:
        r = self.rng
        if not self.multi:
            return {"main.py": self.module([], r.randint(3, 10))}
        imp_a = r.choice(["from pkg.b import *", "from pkg import b", "", "", "import pkg.b as mb"])
        files = {
            "pkg/__init__.py": r.choice(["", "from pkg.a import *", "from .a import X, Y", "from . import a",
                                         "from .a import X as Z"]) + "\n",
            "pkg/b.py": "X = 5\nY = X + 1\n" + r.choice(["", "__all__ = ['X']\n", "import pkg.a\npkg.a.X = 13\n",
                                                       "from pkg.a import Y\n"]),
        }
        if r.random() < 0.3:
            imp_a = (imp_a + "\n" if imp_a else "") + r.choice(["__all__ = ['X', 'Z']", "__all__ = ('Y',)"])
        files["pkg/a.py"] = self.module(([imp_a] if imp_a else []) + ["import pkg.a as ma", "import pkg"], r.randint(2, 6), False)
        main_imps = r.sample(["from pkg.a import X, Y", "from pkg.a import *", "import pkg.a as ma",
                              "from pkg import X", "from pkg import *", "import pkg.a", "from pkg.b import X",
                              "from pkg.a import Z as Y", "import pkg.b as mb"], r.randint(1, 3))
        if "import pkg.a as ma" not in main_imps:
            main_imps.append("import pkg.a as ma")
        main = self.module(main_imps + ["import pkg"], r.randint(3, 8))
        files["main.py"] = main.replace("import pkg\n", "import pkg\n" + "\n".join(main_imps) + "\n", 1) \
            if r.random() < 0.3 else main
        return files


# Hand-written programs of the same form: the import system's corners the generator does not
# reach (re-exports, submodules, circular imports, sys.modules, another module's stores)
CASES: Dict[str, Dict[str, str]] = {
    "init_rebinds": {"pkg/__init__.py": "from .a import X\nX = 2\n", "pkg/a.py": "X = 1\n",
                     "main.py": "from pkg import X\nprobe(1, X)\nimport pkg\nprobe(2, pkg.X)\nfrom pkg.a import X as Y\nprobe(3, Y)\n"},
    "init_star_after": {"pkg/__init__.py": "X = 3\nfrom .a import *\n", "pkg/a.py": "X = 1\n",
                        "main.py": "from pkg import X\nprobe(1, X)\nimport pkg\nprobe(2, pkg.X)\n"},
    "init_star_before": {"pkg/__init__.py": "from .a import *\nX = 3\n", "pkg/a.py": "X = 1\n",
                        "main.py": "from pkg import X\nprobe(1, X)\nimport pkg\nprobe(2, pkg.X)\n"},
    "sub_shadow": {"pkg/__init__.py": "a = 5\n", "pkg/a.py": "X = 1\n",
                   "main.py": "from pkg import a\nprobe(1, a)\nimport pkg.a\nfrom pkg import a as b\nprobe(2, b)\nprobe(3, pkg.a)\n"},
    "sub_shadow2": {"pkg/__init__.py": "from .a import X\na = 5\n", "pkg/a.py": "X = 1\n",
                   "main.py": "from pkg import a\nprobe(1, a)\nimport pkg\nprobe(3, pkg.a)\n"},
    "circular": {"pkg/__init__.py": "", "pkg/a.py": "import pkg.b\nX = 1\n", "pkg/b.py": "import pkg.a\nY = getattr(pkg.a, 'X', 2)\nprobe(1, Y)\n",
                 "main.py": "import pkg.a\nfrom pkg.b import Y\nprobe(2, Y)\n"},
    "circular2": {"pkg/__init__.py": "", "pkg/a.py": "X = 1\nimport pkg.b\nX = 7\n", "pkg/b.py": "from pkg.a import X\nprobe(1, X)\n",
                 "main.py": "import pkg.a\nfrom pkg.b import X\nprobe(2, X)\nfrom pkg.a import X\nprobe(3, X)\n"},
    "all_filter": {"pkg/__init__.py": "", "pkg/a.py": "__all__ = ['X']\nX = 1\nY = 2\n",
                   "main.py": "Y = 9\nfrom pkg.a import *\nprobe(1, X)\nprobe(2, Y)\n"},
    "all_dyn": {"pkg/__init__.py": "", "pkg/a.py": "__all__ = ['X']\n__all__ += ['Y']\nX = 1\nY = 2\n",
                   "main.py": "Y = 9\nfrom pkg.a import *\nprobe(1, X)\nprobe(2, Y)\n"},
    "underscore": {"pkg/__init__.py": "", "pkg/a.py": "_P = 1\nX = 2\n",
                   "main.py": "_P = 9\nfrom pkg.a import *\nprobe(1, _P)\n"},
    "monkey_other": {"pkg/__init__.py": "", "pkg/a.py": "X = 1\ndef get():\n    return X\n", "pkg/b.py": "import pkg.a\npkg.a.X = 4\n",
                   "main.py": "import pkg.b\nfrom pkg.a import X\nprobe(1, X)\n"},
    "sysmod": {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "pkg/b.py": "import sys\nsys.modules['pkg.a'].X = 4\n",
                   "main.py": "import pkg.a\nimport pkg.b\nfrom pkg.a import X\nprobe(1, X)\n"},
    "sysmod_replace": {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "pkg/c.py": "X = 5\n", "pkg/b.py": "import sys, pkg.c\nsys.modules['pkg.a'] = pkg.c\n",
                   "main.py": "import pkg.b\nfrom pkg.a import X\nprobe(1, X)\n"},
    "vars_other": {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "pkg/b.py": "import pkg.a as m\nvars(m)['X'] = 4\n",
                   "main.py": "import pkg.b\nfrom pkg.a import X\nprobe(1, X)\n"},
    "dict_other": {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "pkg/b.py": "import pkg.a as m\nm.__dict__.update(X=4)\n",
                   "main.py": "import pkg.b\nfrom pkg.a import X\nprobe(1, X)\n"},
    "globals_fn": {"pkg/__init__.py": "", "pkg/a.py": "X = 1\ndef set_x():\n    global X\n    X = 4\n",
                   "main.py": "import pkg.a\npkg.a.set_x()\nfrom pkg.a import X\nprobe(1, X)\n"},
    "reload_env": {"pkg/__init__.py": "", "pkg/a.py": "import os\nX = 1\n",
                   "main.py": "import pkg.a, importlib\npkg.a.X = 3\nimportlib.reload(pkg.a)\nfrom pkg.a import X\nprobe(1, X)\n"},
    "rel_init": {"pkg/__init__.py": "from .a import X as Y\nfrom . import a\n", "pkg/a.py": "X = 1\n",
                   "main.py": "from pkg import Y\nprobe(1, Y)\nimport pkg\nprobe(2, pkg.a.X)\n"},
    "main_guard_import": {"pkg/__init__.py": "", "pkg/a.py": "X = 1\nif __name__ == '__main__':\n    X = 2\n",
                   "main.py": "from pkg.a import X\nprobe(1, X)\n"},
    "classattr_other": {"pkg/__init__.py": "", "pkg/a.py": "class K:\n    A = 1\n", "pkg/b.py": "from pkg.a import K\nK.A = 2\n",
                   "main.py": "import pkg.b\nfrom pkg.a import K\nprobe(1, K.A)\n"},
    "classattr_sub": {"pkg/__init__.py": "", "pkg/a.py": "class K:\n    A = 1\n    def m(self):\n        probe(1, self.A)\n", "pkg/b.py": "from pkg.a import K\nclass J(K):\n    A = 2\nJ().m()\n",
                   "main.py": "import pkg.b\n"},
    "dict_other_item": {"pkg/__init__.py": "", "pkg/a.py": "D = {'k': 1}\n", "pkg/b.py": "from pkg.a import D as E\nE['k'] = 2\n",
                   "main.py": "import pkg.b\nfrom pkg.a import D\nprobe(1, D['k'])\n"},
    "list_alias": {"pkg/__init__.py": "", "pkg/a.py": "L = [1, 2]\nM = L\n", "pkg/b.py": "from pkg.a import M\nM[0] = 5\n",
                   "main.py": "import pkg.b\nfrom pkg.a import L\nprobe(1, L[0])\n"},
}


# -- the two sides ----------------------------------------------------------------------------------

def npulint_side(files: Dict[str, str], root: str) -> Dict[int, object]:
    """{probe id: value npulint calls certain} (UNKNOWN, Refs, dtypes and tensors left out)."""
    import libcst as cst

    from npulint import modules
    from npulint.semantic import Semantic, Walker
    from npulint.values import Evaluator, is_constant

    entries = []
    for rel in files:
        parts = rel[:-3].split("/")
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        entries.append((os.path.join(root, rel), ".".join(parts), is_pkg))
    texts = {os.path.join(root, rel): t for rel, t in files.items()}
    old = modules.activate(modules.RunModules.from_files(entries, texts.get, None, texts.get))
    out: Dict[int, object] = {}
    try:
        for path, name, is_pkg in entries:
            module = cst.parse_module(texts[path])
            sem = Semantic(module, name, is_pkg)
            sites: List[Tuple[int, object, object]] = []

            class Probe:
                def visit_Call(self, node):
                    if isinstance(node.func, cst.Name) and node.func.value == "probe" and len(node.args) == 2:
                        sites.append((int(node.args[0].value.value), node.args[1].value, sem.site()))

            def boom(*a):
                raise a[1]

            Walker(sem, [Probe()], on_error=boom).walk(module)
            ev = Evaluator(sem)
            for pid, expr, site in sites:
                v = ev.value(expr, site)
                if is_constant(v):
                    out[pid] = v
    finally:
        modules.activate(old)
    return out


def _norm(v):
    if isinstance(v, (list, tuple)):
        return tuple(_norm(x) for x in v)
    return v


def python_side(root: str, timeout: float = 5.0) -> List[Dict[str, List[str]]]:
    """One {probe id: [repr, ...]} per setting of the environment variables."""
    runs = []
    for on in itertools.product((False, True), repeat=len(ENVS)):
        env = {k: v for k, v in os.environ.items() if k not in ENVS}
        env.update({name: "1" for name, o in zip(ENVS, on) if o})
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONHASHSEED"] = "0"
        try:
            p = subprocess.run([sys.executable, "-S", "-c", RUNNER, root], capture_output=True, text=True,
                               timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            continue
        if "@@PYDIFF@@" in p.stdout:
            runs.append(json.loads(p.stdout.rsplit("@@PYDIFF@@", 1)[1]))
    return runs


STATS = {"certain": 0, "reached": 0}


def write(files: Dict[str, str], root: str) -> None:
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)


def compare(certain: Dict[int, object], runs: List[Dict[str, List[str]]]) -> List[Tuple[int, object, List[str]]]:
    """The probes where npulint's certain value differs from one CPython gives: (id,
    npulint's, CPython's). Counts the certain probes, and those CPython reached, in :data:`STATS`."""
    bad = []
    for pid, v in certain.items():
        seen = sorted({r for run in runs for r in run.get(str(pid), [])})
        STATS["certain"] += 1
        STATS["reached"] += bool(seen)
        if any(r != repr(_norm(v)) for r in seen):
            bad.append((pid, v, seen))
    return bad


def check(files: Dict[str, str]) -> List[Tuple[int, object, List[str]]]:
    """:func:`compare` for the program *files*, run in a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="pydiff") as root:
        write(files, root)
        try:
            certain = npulint_side(files, root)
        except RecursionError:
            return []
        if not certain:
            return []
        return compare(certain, python_side(root))


def generate(seed: int, multi: bool) -> Dict[str, str]:
    return Gen(random.Random(seed), multi).program()


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="first seed (each program is one seed)")
    ap.add_argument("--count", type=int, default=200, help="programs to try")
    ap.add_argument("--multi", type=float, default=0.5, help="share of multi-module programs (0..1)")
    ap.add_argument("--show", action="store_true", help="print the programs (with discrepancies, or all with --count 1)")
    ap.add_argument("--cases", action="store_true", help="run the hand-written programs (CASES) instead")
    args = ap.parse_args(argv)
    failures = 0
    if args.cases:
        for name, files in CASES.items():
            bad = check(files)
            if bad:
                failures += 1
                print(f"case {name}: " + "; ".join(f"probe {pid}: npulint {v!r}, python {seen}" for pid, v, seen in bad))
        print(f"{failures} of {len(CASES)} cases with a wrong certain value "
              f"({STATS['certain']} certain probes, {STATS['reached']} of them reached)")
        return 1 if failures else 0
    for seed in range(args.seed, args.seed + args.count):
        multi = random.Random(seed * 7919).random() < args.multi
        files = generate(seed, multi)
        bad = check(files)
        if args.show and args.count == 1:
            for rel, text in files.items():
                print(f"# ---- {rel}\n{text}")
        if bad:
            failures += 1
            print(f"seed {seed} ({'multi' if multi else 'single'}): " +
                  "; ".join(f"probe {pid}: npulint {v!r}, python {seen}" for pid, v, seen in bad), flush=True)
            if args.show and args.count != 1:
                for rel, text in files.items():
                    print(f"# ---- {rel}\n{text}")
    print(f"{failures} of {args.count} programs with a wrong certain value "
          f"({STATS['certain']} certain probes, {STATS['reached']} of them reached)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
