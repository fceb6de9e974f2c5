"""Flags of upstream example launch scripts (a tiny, non-executing reader: simple NAME=value and
NAME="..." assignments, $NAME/${NAME} expansion, the words after the entry script up to a pipe)."""
import os, re, shlex

ASSIGN = re.compile(r'^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\'[^\']*\'|[^\s#]*)', re.M | re.S)
VAR = re.compile(r'\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)')


def expand(text, env, depth=0):
    if depth > 8:
        return text
    def val(m):
        v = env.get(m.group(1) or m.group(2), "UNSET")
        if " " in v.strip() and "--" not in v:  # a placeholder path such as "your tokenizer path"
            return os.path.join(os.environ.get("MSDIFF_WORK", "/tmp/msdiff"), "ph") + "/" + (m.group(1) or m.group(2)).lower()
        return expand(v, env, depth + 1)
    return VAR.sub(val, text)


def launch_argv(path, entries=("pretrain_gpt.py", "posttrain_gpt.py")):
    text = open(path, errors="replace").read().replace("\\\n", " ")
    env = {}
    for m in ASSIGN.finditer(text):
        v = m.group(2)
        if v[:1] in "\"'":
            v = v[1:-1]
        env[m.group(1)] = v
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for e in entries:
            i = line.find(e)
            if i >= 0 and ("torchrun" in line or "python" in line or "launch" in line):
                rest = line[i + len(e):].split("|")[0].split(">")[0]
                try:
                    words = shlex.split(expand(rest, env))
                except ValueError:
                    return None, None
                return e, words
    return None, None


def find(root):
    out = []
    for d, _, files in os.walk(os.path.join(root, "examples")):
        for f in sorted(files):
            if f.endswith(".sh"):
                e, w = launch_argv(os.path.join(d, f))
                if w:
                    out.append((os.path.relpath(os.path.join(d, f), root), e, w))
    return out
