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


# What a user cannot open: our private research notes and contract, the vendor documents as we
# keep them (docs/000-004), their section signs, and the catalog's short refs (MS@master, LLM@2.0.0,
# MEG@0.12.1, MM@...), which only tools/gen_releases.py reads. Rule pages, the README and what
# findings print cite `Owner/Repo@<commit> path:line` or a public address instead.
_PRIVATE = re.compile(r"research/|RULES\.md|docs/00\d|§|(?<![-\w])(?:MS|LLM|MEG|MM)@")


def test_rule_pages_readme_and_messages_cite_only_what_a_user_can_open():
    from npulint.lintrule import Invalid, discovered

    bad = []
    for rule in registry.load()[0]:
        for field in ("summary", "explanation", "fix", "source"):
            m = _PRIVATE.search(getattr(rule, field))
            if m:
                bad.append(f"{rule.code} {field}: {m.group(0)!r}")
    for cls in discovered():
        for ex in cls.INVALID:
            if isinstance(ex, Invalid) and ex.message and _PRIVATE.search(ex.message):
                bad.append(f"{cls.CODE} example message: {_PRIVATE.search(ex.message).group(0)!r}")
    for page in sorted((REPO / "docs" / "rules").glob("*.md")) + [REPO / "README.md"]:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            m = _PRIVATE.search(line)
            if m:
                bad.append(f"{page.relative_to(REPO)}:{n}: {m.group(0)!r}")
    assert bad == [], "\n".join(bad)


def test_the_private_citation_check_catches_each_form():
    for text in ("see research/npu-api-constraints.md", "RULES.md NPU5xx", "docs/003 (使用方法)", "§B.4",
                 "MS@master mindspeed/arguments.py:728", "(LLM@2.0.0 :208)", "MEG@0.12.1 x.py:1"):
        assert _PRIVATE.search(text), text
    for text in ("Ascend/MindSpeed@028de58c mindspeed/arguments.py:728",
                 "Ascend/MindSpeed-LLM@b626d239 mindspeed_llm/training/arguments.py:208",
                 "NVIDIA/Megatron-LM@a845aa7e megatron/training/arguments.py:81-84", "docs/releases.md"):
        assert not _PRIVATE.search(text), text


def test_the_rule_in_internals_is_the_rule_in_rules():
    """docs/internals.md's "Adding a rule" shows NPU402's class as it is."""
    import inspect

    registry.load()
    from npulint.rules.mc2 import FusedCommReduceOp

    text = (REPO / "docs" / "internals.md").read_text(encoding="utf-8")
    section = text[text.index("## Adding a rule"):]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert block == inspect.getsource(FusedCommReduceOp)
