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
        assert rule.explanation in text and rule.fix in text
        for example in rule.invalid + rule.valid:
            assert example.rstrip("\n").replace("\r", "^M") in text  # a carriage return shown as cat -v does


def test_rule_docs_are_generated_and_current():
    """docs/rules/NPUxxx.md, its index and the README table are what ``python -m npulint.docs``
    writes from the rule definitions (run it after changing a rule)."""
    from npulint import docs

    rules = registry.load()[0]
    assert docs.stale(REPO, rules) == [], "run `python -m npulint.docs` to regenerate the rule docs"
    pages = sorted(p.stem for p in (REPO / "docs" / "rules").glob("NPU*.md"))
    assert pages == sorted(r.code for r in rules)


def test_rule_docs_check_finds_a_stale_page(tmp_path):
    from npulint import docs

    rules = registry.load()[0]
    (tmp_path / "README.md").write_text("x\n<!-- rules-table:start -->\nold\n<!-- rules-table:end -->\n")
    assert docs.main([str(tmp_path)]) == 0
    assert docs.main([str(tmp_path), "--check"]) == 0
    assert docs.rule_table(rules) in (tmp_path / "README.md").read_text()
    page = tmp_path / "docs" / "rules" / "NPU101.md"
    page.write_text(page.read_text() + "edited\n")
    (tmp_path / "docs" / "rules" / "NPU999.md").write_text("gone\n")
    assert sorted(p.name for p in docs.stale(tmp_path, rules)) == ["NPU101.md", "NPU999.md"]
    assert docs.main([str(tmp_path), "--check"]) == 1
    docs.main([str(tmp_path)])
    assert docs.stale(tmp_path, rules) == []


def test_explain_prints_the_rule_page(cli_run, tmp_path):
    r = cli_run(["--explain", "npu202"], tmp_path)
    assert r.returncode == 0
    assert r.stdout == (REPO / "docs" / "rules" / "NPU202.md").read_text(encoding="utf-8")
