#!/usr/bin/env python3
"""msdiff: a differential oracle for npulint's MindSpeed launch rules (NPU501/NPU502/NPU504).

The oracle runs the real upstream argument parser and validators of a stack release (Megatron-LM +
MindSpeed [+ MindSpeed-LLM]) on an argv, the way a launch does: set sys.argv, import the adaptor
(``mindspeed.megatron_adaptor`` or ``mindspeed_llm.megatron_adaptor``, which read sys.argv to pick
the features and apply their patches), then call the ``initialize_megatron`` the entry's ``pretrain``
calls (``megatron.training.training`` / ``mindspeed_llm.training.training``), and stop at
``set_global_variables`` (right after ``validate_args``, before anything needs a device or
distributed init). torch, torch_npu, apex and every other missing module are stand-ins (stubs.py).
Upstream code is exported at run time from the bare mirrors (MSDIFF_MIRRORS) at the commits
npulint's rules/mindspeed_releases.json names; no user code is executed.

Usage:
  msdiff.py oracle STACK -- ARGV...     one verdict, as JSON (runs in-process; STACK e.g. mindspeed@master)
  msdiff.py run [--stacks a,b] [--out DIR] [--limit N]   generate commands, compare with npulint
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))  # this script and stubs.py
NPULINT_ROOT = os.path.dirname(os.path.dirname(HERE))  # the checkout (its rules/mindspeed_releases.json)
# where the upstream trees are exported and the cases and results written (MSDIFF_WORK), the bare
# mirrors (MSDIFF_MIRRORS), the npulint to compare (MSDIFF_NPULINT) and the Python that runs the
# oracle (MSDIFF_PYTHON: one with CPU torch, numpy, einops, PyYAML installed, or stand-ins are used)
WORK = os.environ.get("MSDIFF_WORK", "/tmp/msdiff")
MIRRORS = os.environ.get("MSDIFF_MIRRORS", "/work/.mirror")
NPULINT = os.environ.get("MSDIFF_NPULINT") or shutil.which("npulint") or "npulint"
PY = os.environ.get("MSDIFF_PYTHON", sys.executable)
SRC = os.path.join(WORK, "src")
REL = json.load(open(os.path.join(NPULINT_ROOT, "rules/mindspeed_releases.json")))

MIRROR_OF = {"Ascend/MindSpeed": "Ascend+MindSpeed", "Ascend/MindSpeed-LLM": "Ascend+MindSpeed-LLM",
             "Ascend/MindSpeed-MM": "Ascend+MindSpeed-MM", "NVIDIA/Megatron-LM": "NVIDIA+Megatron-LM"}


def export(repo, ref):
    sha = REL["repos"][repo][ref]
    d = os.path.join(SRC, "%s@%s" % (MIRROR_OF[repo], sha[:8]))
    if not os.path.isdir(d):
        os.makedirs(d)
        git = subprocess.Popen(["git", "--git-dir", os.path.join(MIRRORS, MIRROR_OF[repo], "repo"),
                                "archive", sha], stdout=subprocess.PIPE)
        subprocess.check_call(["tar", "-x", "-C", d], stdin=git.stdout)
        git.wait()
    return d


def stack_paths(stack):
    """[framework dir, MindSpeed dir, Megatron dir] for a stack release, e.g. mindspeed-llm@2.2.0."""
    fw, rel = stack.split("@")
    paths = []
    ms = stack
    if fw == "mindspeed-llm":
        paths.append(export("Ascend/MindSpeed-LLM", rel))
        ms = REL["pairs"][stack]
    elif fw == "mindspeed-mm":
        paths.append(export("Ascend/MindSpeed-MM", rel))
        ms = REL["pairs"][stack]
    msrel = ms.split("@")[1]
    paths.append(export("Ascend/MindSpeed", msrel))
    meg = "core_v" + REL["versions"][ms]
    paths.append(export("NVIDIA/Megatron-LM", meg))
    return fw, paths


class Stop(Exception):
    pass


def oracle(stack, argv):
    """Run in a fresh process: returns a verdict dict."""
    sys.path.insert(0, HERE)
    import stubs
    stubs.install()
    fw, paths = stack_paths(stack)
    for p in reversed(paths):
        sys.path.insert(0, p)
    entry = "pretrain_gpt.py"
    sys.argv = [entry] + list(argv)
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("LOCAL_RANK", "0")
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    os.environ.setdefault("ASCEND_HOME_PATH", os.path.join(WORK, "no-cann"))  # JIT op builders read it at import
    os.environ.setdefault("WORLD_SIZE", str(world_size(argv)))
    res = {"stack": stack, "argv": argv}
    for w in argv:  # placeholder paths of example scripts: make them exist, with a safetensors file
        if w.startswith(os.path.join(WORK, "ph") + "/"):
            os.makedirs(w, exist_ok=True)
            open(os.path.join(w, "model.safetensors"), "a").close()
    parsers = []
    _orig = argparse.ArgumentParser.parse_args

    def _capture(self, *a, **k):
        parsers.append(self)
        return _orig(self, *a, **k)
    argparse.ArgumentParser.parse_args = _capture
    if os.environ.get("MSDIFF_DUMP"):
        import atexit

        def dump():
            if not parsers:
                return
            big = max(parsers, key=lambda p: len(p._actions))
            out = {}
            for act in big._actions:
                for o in act.option_strings:
                    out[o] = {"nargs": act.nargs if act.nargs is None or isinstance(act.nargs, (int, str)) else str(act.nargs),
                              "switch": act.nargs == 0,
                              "type": getattr(act.type, "__name__", None) if act.type else None,
                              "choices": [c if isinstance(c, (int, float, str)) else str(c) for c in act.choices] if act.choices else None,
                              "default": act.default if isinstance(act.default, (int, float, str, bool, type(None))) else repr(act.default)}
            json.dump(out, open(os.environ["MSDIFF_DUMP"], "w"), indent=0)
        atexit.register(dump)
    phase = "import"
    try:
        import io, contextlib
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            if fw == "mindspeed-llm":
                from mindspeed_llm import megatron_adaptor  # noqa: F401
                import megatron.training.global_vars as gv
                import mindspeed_llm.training.training as tr
            else:
                import mindspeed.megatron_adaptor  # noqa: F401
                import megatron.training.global_vars as gv
                import megatron.training.training as tr

            import builtins
            builtins.MSDIFF_STOP = Stop

            def stop(args, *a, **k):
                # a builtin: the code is swapped into Megatron's function, whose globals are not ours
                raise MSDIFF_STOP(args)  # noqa: F821
            gv.set_global_variables.__code__ = stop.__code__
            phase = "initialize"
            tr.initialize_megatron(extra_args_provider=None,
                                   args_defaults={"tokenizer_type": "GPT2BPETokenizer"})
        res.update(verdict="no-stop", detail="initialize_megatron returned without set_global_variables")
    except Stop as e:
        res.update(verdict="accepted")
        want = os.environ.get("MSDIFF_SHOW")
        if want:
            ns = e.args[0]
            res["show"] = {k: repr(getattr(ns, k, "<absent>")) for k in want.split(",")}
    except SystemExit as e:
        res.update(verdict="rejected" if phase == "initialize" else "oracle-error", kind="argparse",
                   detail=str(e.code), where=_where())
    except BaseException as e:  # noqa: B902
        tb = traceback.extract_tb(sys.exc_info()[2])
        where = _where()
        stubby = "stub" in str(e) or "<stub" in "".join(f.filename for f in tb[-2:])
        verdict = "rejected" if (phase == "initialize" and isinstance(e, (AssertionError, ValueError, NotImplementedError, RuntimeError, KeyError)) and not stubby) else "oracle-error"
        res.update(verdict=verdict, kind=type(e).__name__, detail=str(e)[:400], where=where, phase=phase,
                   tb=["%s:%d %s" % (f.filename.replace(SRC + "/", ""), f.lineno, f.name) for f in tb[-8:]])
    return res


def _where():
    tb = traceback.extract_tb(sys.exc_info()[2])
    own = [f for f in tb if f.filename.startswith(SRC) and not f.filename.endswith("features_manager/feature.py")]
    f = own[-1] if own else (tb[-1] if tb else None)
    if not f:
        return None
    return "%s:%d" % (f.filename[len(SRC) + 1:], f.lineno)


def run_oracle(stack, argv, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    p = subprocess.run([PY, os.path.abspath(__file__), "oracle", stack, "--"] + argv,
                       capture_output=True, text=True, env=env, timeout=300)
    for line in reversed(p.stdout.splitlines() + p.stderr.splitlines()):
        if line.startswith("MSDIFF "):
            return json.loads(line[7:])
    return {"verdict": "oracle-crash", "detail": (p.stderr or p.stdout)[-600:]}


def world_size(argv):
    def val(flag, d=1):
        if flag in argv:
            try:
                return int(argv[argv.index(flag) + 1])
            except (ValueError, IndexError):
                return d
        return d
    tp = val("--tensor-model-parallel-size")
    pp = val("--pipeline-model-parallel-size")
    cp = val("--context-parallel-size")
    ep = val("--expert-model-parallel-size")
    return tp * pp * cp * max(ep, 2)


def npulint(argv, stack=None, workdir=None):
    """npulint's NPU5xx findings on a shell script with this torchrun command."""
    import tempfile
    d = tempfile.mkdtemp(prefix="case-", dir=workdir or os.path.join(WORK, "cases"))
    with open(os.path.join(d, "run.sh"), "w") as f:
        f.write("#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py \\\n    "
                + " \\\n    ".join(shlex.quote(a) if not a.startswith("--") else a for a in argv) + "\n")
    if stack:
        fw, rel = stack.split("@")
        with open(os.path.join(d, "pyproject.toml"), "w") as f:
            f.write('[tool.npulint.releases]\n%s = "%s"\n' % (fw, rel))
    p = subprocess.run([NPULINT, d, "--select", "NPU5", "--output-format", "json"],
                       capture_output=True, text=True, cwd=d)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        return {"error": p.stdout[-400:] + p.stderr[-400:], "dir": d}
    return {"findings": [(x.get("code"), x.get("message")) for x in out], "dir": d}


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd")
    o = sub.add_parser("oracle")
    o.add_argument("stack")
    o.add_argument("argv", nargs=argparse.REMAINDER)
    r = sub.add_parser("run")
    r.add_argument("--stacks", default="mindspeed@master,mindspeed@2.2.0_core_r0.12.1,mindspeed@2.1.0_core_r0.8.0,"
                   "mindspeed-llm@master,mindspeed-llm@2.2.0,mindspeed-llm@2.1.0")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--limit", type=int, default=0)
    r.add_argument("--out", default=os.path.join(WORK, "results"))
    x = sub.add_parser("examples")
    x.add_argument("--stacks", default="mindspeed-llm@master,mindspeed-llm@2.2.0")
    x.add_argument("--jobs", type=int, default=2)
    x.add_argument("--out", default=os.path.join(WORK, "results-examples"))
    a, rest = ap.parse_known_args()
    from collections import Counter
    if a.cmd == "examples":
        from concurrent.futures import ThreadPoolExecutor
        os.makedirs(a.out, exist_ok=True)
        for stack in a.stacks.split(","):
            P = parser_of(stack)
            cases, total = example_cases(stack, P)

            def one(c):
                c["oracle"] = run_oracle(stack, c["argv"])
                c["npulint"] = {"findings": c.get("findings", [])}
                c["class"] = classify(c)
                return c
            with ThreadPoolExecutor(a.jobs) as ex:
                res = list(ex.map(one, cases))
            json.dump(res, open(os.path.join(a.out, stack + ".json"), "w"), indent=1)
            print(stack, "generated", total, "oracle-checked", len(res), Counter(c["class"] for c in res), flush=True)
        return
    if a.cmd == "run":
        os.makedirs(a.out, exist_ok=True)
        for stack in a.stacks.split(","):
            P = parser_of(stack)
            cases = gen_cases(stack, P)
            if a.limit:
                cases = cases[:a.limit]
            res = compare(stack, cases, a.jobs)
            for c in res:
                c["class"] = classify(c)
            json.dump(res, open(os.path.join(a.out, stack + ".json"), "w"), indent=1)
            print(stack, len(res), Counter(c["class"] for c in res), flush=True)
        return
    if a.cmd == "oracle":
        argv = a.argv[1:] if a.argv[:1] == ["--"] else a.argv
        res = oracle(a.stack, argv)
        sys.__stdout__.write("MSDIFF " + json.dumps(res) + "\n")
        sys.__stdout__.flush()
        if os.environ.get("MSDIFF_DUMP"):
            sys.exit(0)
        os._exit(0)



# ---------------------------------------------------------------- case generation and comparison

BASE = ["--num-layers", "8", "--hidden-size", "256", "--ffn-hidden-size", "512", "--num-attention-heads", "8",
        "--seq-length", "128", "--max-position-embeddings", "128", "--micro-batch-size", "1",
        "--global-batch-size", "16", "--train-iters", "10", "--lr", "1e-4", "--bf16", "--use-mcore-models",
        "--tokenizer-type", "NullTokenizer", "--vocab-size", "1000"]


def parser_of(stack):
    p = os.path.join(WORK, "parsers", stack + ".json")
    if not os.path.exists(p):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        env = dict(os.environ, MSDIFF_DUMP=p)
        subprocess.run([PY, os.path.abspath(__file__), "oracle", stack, "--"] + BASE, env=env,
                       capture_output=True, timeout=300)
    return json.load(open(p))


def to_dict(argv):
    d, key = {}, None
    for w in argv:
        if w.startswith("--"):
            key = w
            d[key] = []
        else:
            d[key].append(w)
    return d


def to_argv(d):
    out = []
    for k, v in d.items():
        out.append(k)
        out.extend(v)
    return out


def value_for(flag, P):
    a = P.get(flag)
    if a is None:
        return ["1"]
    if a["switch"]:
        return []
    if a["choices"]:
        return [str(a["choices"][0])]
    if a["type"] == "int":
        return ["2"]
    if a["type"] == "float":
        return ["0.5"]
    if a["nargs"] in ("+", "*"):
        return ["1"]
    return ["1"]


def sat(cond, d, P):
    op = cond[0]
    if op == "on":
        d[cond[1]] = value_for(cond[1], P)
    elif op in ("gt", "le", "lt", "ge"):
        n = cond[2]
        v = {"gt": n + 1, "le": n, "lt": n - 1, "ge": n}[op]
        if isinstance(n, int) and cond[1] in ("--tensor-model-parallel-size", "--pipeline-model-parallel-size",
                                              "--context-parallel-size", "--expert-model-parallel-size") and op == "gt":
            v = max(v, 2)
        d[cond[1]] = [str(v)]
    elif op == "eq":
        if cond[2] is True:
            d[cond[1]] = []
        else:
            d[cond[1]] = [str(cond[2])]
    elif op == "ne":
        ch = (P.get(cond[1]) or {}).get("choices") or []
        other = [c for c in ch if str(c) != str(cond[2])]
        if not other:
            return False
        d[cond[1]] = [str(other[0])]
    elif op == "in":
        d[cond[1]] = [str(cond[2][0])]
    elif op == "notin":
        ch = (P.get(cond[1]) or {}).get("choices") or []
        other = [c for c in ch if str(c) not in map(str, cond[2])]
        if not other:
            return False
        d[cond[1]] = [str(other[0])]
    elif op == "all":
        return all(sat(c, d, P) for c in cond[1:])
    elif op == "any":
        return sat(cond[1], d, P)
    elif op == "not":
        return viol(cond[1], d, P)
    else:
        return False
    return True


def viol(cond, d, P):
    op = cond[0]
    if op == "on":
        d.pop(cond[1], None)
    elif op in ("gt", "le", "lt", "ge"):
        n = cond[2]
        v = {"gt": n, "le": n + 1, "lt": n, "ge": n - 1}[op]
        d[cond[1]] = [str(v)]
    elif op == "eq":
        d.pop(cond[1], None)
    elif op == "in":
        d.pop(cond[1], None)
    elif op == "ne":
        d[cond[1]] = [str(cond[2])]
    elif op == "all":
        return viol(cond[1], d, P)
    elif op == "any":
        return all(viol(c, d, P) for c in cond[1:])
    elif op == "not":
        return sat(cond[1], d, P)
    else:
        return False
    return True


def catalog():
    sys.path.insert(0, NPULINT_ROOT)
    from rules import mindspeed_catalog as c
    return c.CATALOG


def gen_cases(stack, P):
    cases = []
    for e in catalog():
        if e.kind not in ("conflict", "requires"):
            continue
        holds = stack in REL["entries"].get(e.key, {})
        variants = []
        if e.kind == "conflict":
            d = to_dict(BASE)
            if sat(e.a, d, P) and sat(e.b, d, P):
                variants.append(("both", d))
            for side, cond in (("a-only", e.a), ("b-only", e.b)):
                d = to_dict(BASE)
                if sat(cond, d, P):
                    variants.append((side, d))
        else:
            d = to_dict(BASE)
            if sat(e.a, d, P) and viol(e.b, d, P):
                variants.append(("a-not-b", d))
            d = to_dict(BASE)
            if sat(e.a, d, P) and sat(e.b, d, P):
                variants.append(("a-and-b", d))
        for tag, d in variants:
            cases.append({"entry": e.key, "holds": holds, "tag": tag, "message": e.message, "argv": to_argv(d)})
    return cases


def compare(stack, cases, jobs=2):
    from concurrent.futures import ThreadPoolExecutor
    os.makedirs(os.path.join(WORK, "cases"), exist_ok=True)

    def one(c):
        c["npulint"] = npulint(c["argv"], stack)
        fires = [x for x in c["npulint"].get("findings", []) if x[0] in ("NPU501", "NPU504")]
        if fires or (c["holds"] and c["tag"] in ("both", "a-not-b")) or os.environ.get("MSDIFF_ALL"):
            c["oracle"] = run_oracle(stack, c["argv"])
        else:
            c["oracle"] = {"verdict": "not-run"}
        return c
    with ThreadPoolExecutor(jobs) as ex:
        return list(ex.map(one, cases))


def classify(c):
    o = c["oracle"].get("verdict")
    f = [x for x in c["npulint"].get("findings", []) if x[0] in ("NPU501", "NPU504")]
    if o == "accepted" and f:
        return "FP"
    if o == "rejected" and c["oracle"].get("kind") != "argparse" and not f:
        return "FN?"
    if o in ("oracle-error", "oracle-crash", "no-stop"):
        return "ERR"
    return "agree"



def example_cases(stack, P, per_message=3, seed=0):
    """Realistic contexts: each upstream example launch of the stack's own tree (pretrain_gpt.py /
    posttrain_gpt.py), unchanged and with one catalog entry's first condition added; npulint runs
    once on all of them (one directory, one script per case); the oracle then checks up to
    *per_message* cases of each distinct npulint NPU501/NPU504 message."""
    import random
    import examples
    fw, paths = stack_paths(stack)
    exs = examples.find(paths[0])
    root = os.path.join(WORK, "excases", stack)
    if os.path.isdir(root):
        import shutil
        shutil.rmtree(root)
    os.makedirs(root)
    fwname, rel = stack.split("@")
    with open(os.path.join(root, "pyproject.toml"), "w") as f:
        f.write('[tool.npulint.releases]\n%s = "%s"\n' % (fwname, rel))
    cases = {}
    n = 0
    for path, entry, words in exs:
        if any(w.startswith("--") is False and w == "UNSET" for w in words):
            pass
        base = to_dict(words) if words and words[0].startswith("--") else None
        if base is None:
            continue
        variants = [("orig", None, dict(base))]
        for e in catalog():
            if e.kind in ("conflict", "requires") and stack in REL["entries"].get(e.key, {}):
                d = dict(base)
                if sat(e.a, d, P) and d != base:
                    variants.append(("add-a", e.key, d))
        for tag, key, d in variants:
            name = "c%05d.sh" % n
            n += 1
            argv = to_argv(d)
            with open(os.path.join(root, name), "w") as f:
                f.write("#!/bin/bash\n# %s %s %s\ntorchrun --nproc_per_node 8 %s \\\n    " % (path, tag, key, entry)
                        + " \\\n    ".join(shlex.quote(a) for a in argv) + "\n")
            cases[name] = {"example": path, "tag": tag, "entry": key, "argv": argv, "script": os.path.join(root, name)}
    p = subprocess.run([NPULINT, root, "--select", "NPU5", "--output-format", "json"], capture_output=True, text=True, cwd=root)
    out = json.loads(p.stdout)
    for x in out:
        c = cases[os.path.basename(x.get("path") or x.get("filename"))]
        c.setdefault("findings", []).append((x["code"], x["message"]))
    by_msg = {}
    for name, c in sorted(cases.items()):
        for code, msg in c.get("findings", []):
            if code in ("NPU501", "NPU504"):
                by_msg.setdefault(re.sub(r"\(MindSpeed.*", "", msg), []).append(name)
    rnd = random.Random(seed)
    chosen = set(n for n in cases if cases[n]["tag"] == "orig")
    for msg, names in by_msg.items():
        chosen.update(rnd.sample(names, min(per_message, len(names))))
    return [cases[n] for n in sorted(chosen)], len(cases)


if __name__ == "__main__":
    main()
