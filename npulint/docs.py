"""Rule documentation generated from the rule definitions.

``python -m npulint.docs`` writes ``docs/rules/NPUxxx.md`` (one page a rule),
``docs/rules/README.md`` (the index) and the README's rule table; ``--check`` only says
whether the checked-in files are current (exit 1 when not). ``npulint --explain CODE``
prints the same page, and SARIF's ``helpUri`` points at it.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from npulint.model import Rule

DOCS_URL_ENV = "NPULINT_DOCS_URL"


def rule_page(rule: Rule) -> str:
    """The page of one rule, in Markdown: what, why, examples, fix, source."""
    default = "on" if rule.default_enabled else "off (enable with `--extend-select " + rule.code + "`)"
    lines = [
        f"# {rule.code} {rule.name}",
        "",
        f"**Severity:** {rule.severity} · **Default:** {default} · "
        f"**Automatic fix:** {_fix_text(rule)}",
        "",
        rule.summary,
        "",
        "## What it checks, and why",
        "",
        rule.explanation,
    ]
    fence = "sh" if rule.example_language == "shell" else "python"
    if rule.invalid and rule.example_config:
        lines += ["", "## Example", "", "With this configuration (`pyproject.toml`):", "", "```toml",
                  rule.example_config.rstrip("\n"), "```", "", "Reported:", ""]
        for src in rule.invalid:
            lines += [f"```{fence}", _shown(src), "```", ""]
        lines.pop()
    elif rule.invalid:
        lines += ["", "## Example", "", "Reported:", ""]
        for src in rule.invalid:
            lines += [f"```{fence}", _shown(src), "```", ""]
        lines.pop()
    if rule.valid:
        lines += ["", "Clean:", ""]
        for src in rule.valid:
            lines += [f"```{fence}", _shown(src), "```", ""]
        lines.pop()
    if rule.fix:
        lines += ["", "## How to fix", "", rule.fix]
    lines += ["", "## Source", "", rule.source, ""]
    return "\n".join(lines)


def _fix_text(rule: Rule) -> str:
    if not rule.autofix:
        return "no"
    if rule.fix_applicability == "unsafe":
        return "yes, unsafe: it changes run-time behaviour (`npulint --fix --unsafe-fixes`)"
    return "yes (`npulint --fix`)"


def _shown(src: str) -> str:
    """An example as a page shows it: a carriage return as ``^M`` (as ``cat -v`` does)."""
    return src.rstrip("\n").replace("\r", "^M")


def rule_table(rules: Sequence[Rule], links: bool = False) -> str:
    lines = ["| code | name | severity | default | summary |", "|---|---|---|---|---|"]
    for r in rules:
        code = f"[{r.code}]({r.code}.md)" if links else r.code
        lines.append(f"| {code} | {r.name} | {r.severity} | {'on' if r.default_enabled else 'off'} | {r.summary} |")
    return "\n".join(lines)


def index_page(rules: Sequence[Rule]) -> str:
    return "\n".join([
        "# npulint rules",
        "",
        "Generated from the rule definitions in `rules/` by `python -m npulint.docs`; "
        "`npulint --explain CODE` prints the same pages.",
        "",
        rule_table(rules, links=True),
        "",
    ])


def published_url(code: str) -> Optional[str]:
    """The rule page's address where a team publishes them: ``$NPULINT_DOCS_URL/NPUxxx.md``;
    None when that is not set (JSON's ``url``, the language server's ``codeDescription``)."""
    base = os.environ.get(DOCS_URL_ENV, "").strip()
    return f"{base.rstrip('/')}/{code}.md" if base else None


def help_uri(code: str) -> Optional[str]:
    """Where a rule's page is: ``$NPULINT_DOCS_URL/NPUxxx.md`` when that is set (where a team
    publishes ``docs/rules``), else the page in this source checkout as a ``file:`` URI, else
    None (an installed wheel has no docs folder)."""
    base = os.environ.get(DOCS_URL_ENV)
    if base:
        return f"{base.rstrip('/')}/{code}.md"
    page = Path(__file__).resolve().parent.parent / "docs" / "rules" / f"{code}.md"
    return page.as_uri() if page.is_file() else None


_TABLE = re.compile(r"(<!-- rules-table:start -->\n).*?(\n<!-- rules-table:end -->)", re.S)


def generate(root: Path, rules: Sequence[Rule]) -> Dict[Path, str]:
    """Every generated file under *root* (the repository) and its content."""
    out: Dict[Path, str] = {root / "docs" / "rules" / f"{r.code}.md": rule_page(r) for r in rules}
    out[root / "docs" / "rules" / "README.md"] = index_page(rules)
    readme = root / "README.md"
    if readme.is_file():
        text = readme.read_text(encoding="utf-8")
        out[readme] = _TABLE.sub(lambda m: m.group(1) + rule_table(rules) + m.group(2), text)
    return out


def stale(root: Path, rules: Sequence[Rule]) -> List[Path]:
    """Generated files that are missing or differ, and pages of rules that no longer exist."""
    wanted = generate(root, rules)
    bad = [p for p, text in wanted.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    folder = root / "docs" / "rules"
    if folder.is_dir():
        bad += [p for p in sorted(folder.glob("NPU*.md")) if p not in wanted]
    return bad


def main(argv: Optional[Sequence[str]] = None) -> int:
    from npulint import registry

    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    root = Path(next((a for a in args if not a.startswith("-")), Path(__file__).resolve().parent.parent))
    rules = registry.load()[0]
    if check:
        bad = stale(root, rules)
        for p in bad:
            print(f"stale: {p}", file=sys.stderr)
        return 1 if bad else 0
    folder = root / "docs" / "rules"
    folder.mkdir(parents=True, exist_ok=True)
    wanted = generate(root, rules)
    for p in sorted(folder.glob("NPU*.md")):
        if p not in wanted:
            p.unlink()
    for p, text in wanted.items():
        if not p.is_file() or p.read_text(encoding="utf-8") != text:
            p.write_text(text, encoding="utf-8")
            print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
