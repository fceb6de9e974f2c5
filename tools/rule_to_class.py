#!/usr/bin/env python3
"""Rewrite ``NAME = Rule(code=..., name=..., ...)`` assignments of a rules module into rule
classes (``class Name(LintRule): CODE = ...``), keeping each value's source text (a LibCST
transform). A migration aid for moving a family to one class per rule; the hooks still have to
be moved into the classes by hand.

    python tools/rule_to_class.py rules/prefetch.py [--base LintRule]

(``--base RuleBase`` for rules the engine reports itself, as in ``rules/engine.py``.)
"""

from __future__ import annotations

import argparse
import sys

import libcst as cst

FIELDS = {"code": "CODE", "name": "NAME", "severity": "SEVERITY", "summary": "SUMMARY",
          "explanation": "EXPLANATION", "source": "SOURCE", "invalid": "INVALID", "valid": "VALID",
          "fix": "HOW_TO_FIX", "autofix": "AUTOFIX", "example_language": "EXAMPLE_LANGUAGE",
          "example_config": "EXAMPLE_CONFIG"}


def class_name(var: str) -> str:
    return "".join(part.capitalize() for part in var.lower().split("_"))


class ToClasses(cst.CSTTransformer):
    def __init__(self, base: str):
        self.base = base
        self.renamed = {}

    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assign):
            return updated
        assign = updated.body[0]
        call = assign.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "Rule"
                and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
            return updated
        var = assign.targets[0].target.value
        name = class_name(var)
        self.renamed[var] = name
        body = []
        for arg in call.args:
            key = arg.keyword.value if arg.keyword else None
            if key not in FIELDS:
                raise SystemExit(f"{var}: unexpected argument {key!r}")
            value = arg.value
            # a value over several lines relied on the call's parentheses: give it its own
            if "\n" in cst.Module([]).code_for_node(value) and not getattr(value, "lpar", None) \
                    and not isinstance(value, (cst.Call, cst.List, cst.Dict, cst.Set, cst.ListComp)):
                value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            body.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(FIELDS[key]))],
                                                            value)]))
        return cst.ClassDef(name=cst.Name(name), bases=[cst.Arg(cst.Name(self.base))],
                            body=cst.IndentedBlock(body), leading_lines=updated.leading_lines)


def _tidy(code: str, classes) -> str:
    """The keyword arguments' continuation lines were indented for ``Rule(`` (one level deeper
    than the class body now needs): dedent them by one level; two blank lines before a class."""
    import re

    out, inside = [], False
    for line in code.split("\n"):
        m = re.match(r"class (\w+)\(", line)
        if m:
            inside = m.group(1) in classes
            while out and out[-1] == "":
                out.pop()
            out += ["", ""]
        elif line and not line.startswith(" "):
            inside = False
        if inside and line.startswith("        ") and not re.match(r"    [A-Z_]+ = ", line):
            line = line[4:]
        out.append(line)
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path")
    ap.add_argument("--base", default="LintRule")
    args = ap.parse_args(argv)
    with open(args.path, encoding="utf-8") as fh:
        module = cst.parse_module(fh.read())
    t = ToClasses(args.base)
    out = module.visit(t)
    with open(args.path, "w", encoding="utf-8") as fh:
        fh.write(_tidy(out.code, set(t.renamed.values())))
    for var, name in t.renamed.items():
        print(f"{var} -> {name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
