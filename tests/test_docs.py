"""The README's rule table and quick start stay true to the code."""

import re

from conftest import REPO
from npulint import registry, reporters


def test_readme_rule_table_is_generated_from_the_rule_definitions():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- rules-table:start -->\n(.*?)\n<!-- rules-table:end -->", readme, re.S)
    assert m, "README.md lost its rules-table markers"
    expected = reporters.rule_table(registry.load()[0])
    assert m.group(1) == expected, "README rule table is stale: paste `npulint --list-rules` between the markers"


def test_readme_quick_start_has_exactly_two_commands():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    commands = [line for b in blocks for line in b.splitlines() if line.strip()]
    assert len(commands) == 2
    assert "examples/" in commands[0] and "npulint" in commands[0]
    assert "pytest" in commands[1]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci, ".ci/run must run the README's test command"


def test_explain_reads_the_rule_definition():
    for rule in registry.load()[0]:
        text = reporters.explain(rule)
        assert rule.code in text and rule.name in text and rule.summary in text and rule.source in text
