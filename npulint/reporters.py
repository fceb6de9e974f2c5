"""Output formats. ``text``: ``path:line:col: CODE message`` one finding a line (what editors
parse); ``json``: a list of objects. Summaries go to stderr so stdout stays machine-readable."""

from __future__ import annotations

import json
from collections import Counter
from typing import Dict, List, TextIO

from npulint.model import Finding, Rule

FORMATS = ("text", "json")


def write_text(findings: List[Finding], out: TextIO) -> None:
    for f in findings:
        out.write(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}\n")


def to_json(findings: List[Finding], rules: Dict[str, Rule]) -> List[dict]:
    items = []
    for f in findings:
        rule = rules.get(f.code)
        items.append({
            "path": f.path,
            "line": f.line,
            "column": f.column,
            "end_line": f.end_line or f.line,
            "end_column": f.end_column or f.column,
            "code": f.code,
            "name": rule.name if rule else "",
            "severity": rule.severity if rule else "error",
            "message": f.message,
            "related": [{"path": p, "line": ln, "column": c} for p, ln, c in f.related],
        })
    return items


def write_json(findings: List[Finding], rules: Dict[str, Rule], out: TextIO) -> None:
    json.dump(to_json(findings, rules), out, indent=2, ensure_ascii=False)
    out.write("\n")


def write_statistics(findings: List[Finding], rules: Dict[str, Rule], out: TextIO) -> None:
    counts = Counter(f.code for f in findings)
    width = max((len(str(n)) for n in counts.values()), default=1)
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = rules.get(code)
        out.write(f"{n:>{width}}  {code}  {rule.name if rule else ''}\n")


def summary(findings: List[Finding], files: int) -> str:
    if not findings:
        return f"All checks passed ({files} file{'s' if files != 1 else ''} checked)."
    n_files = len({f.path for f in findings})
    return (f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} in {n_files} "
            f"file{'s' if n_files != 1 else ''} ({files} file{'s' if files != 1 else ''} checked).")


def rule_table(rules: List[Rule]) -> str:
    lines = ["| code | name | severity | default | summary |", "|---|---|---|---|---|"]
    for r in rules:
        lines.append(f"| {r.code} | {r.name} | {r.severity} | {'on' if r.default_enabled else 'off'} | {r.summary} |")
    return "\n".join(lines)


def explain(rule: Rule) -> str:
    parts = [f"{rule.code} ({rule.name}) — {rule.severity}" + ("" if rule.default_enabled else ", off by default"),
             "", rule.summary, "", rule.explanation]
    if rule.fix:
        parts += ["", "Fix: " + rule.fix]
    parts += ["", "Source: " + rule.source]
    if rule.invalid:
        parts += ["", "Example (reported):", ""] + ["    " + ln for ln in rule.invalid[0].rstrip("\n").split("\n")]
    if rule.valid:
        parts += ["", "Example (clean):", ""] + ["    " + ln for ln in rule.valid[0].rstrip("\n").split("\n")]
    return "\n".join(parts) + "\n"
