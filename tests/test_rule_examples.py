"""Every rule's own examples hold: each ``invalid`` example produces the rule's code, at the
range and with the message it states (and, for a rule with a fix, the fixed source), each
``valid`` example does not; and every rule is fully described. The rules the engine reports
itself (rules/engine.py) are held to the same, through the pure core."""

import re

import pytest

import sys

from conftest import codes
from npulint import registry
from npulint.config import Settings, apply_table
from npulint.core import lint_source
from npulint.fixes import fix_text
from npulint.rulebase import Invalid, RuleBase, discovered

RULES = registry.load()[0]
RULE_CLASSES = {c.CODE: c for c in discovered()}

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _lint(rule, src):
    """The findings of *rule*'s example *src* through the pure core (no file is written), under
    the rule's example configuration, with the rule (NPU003: every rule) selected."""
    settings = Settings(root="/examples")
    if rule.example_config:
        apply_table(settings, tomllib.loads(rule.example_config)["tool"]["npulint"], "example_config",
                    [r.code for r in RULES])
    settings.select = _select(rule)
    # shell launch scripts (NPU501/502/504) are linted as such
    return lint_source("t.sh" if rule.example_language == "shell" else "t.py", src, settings)


def _examples(kind):
    out = []
    for rule in RULES:
        for i, src in enumerate(getattr(rule, kind)):
            out.append(pytest.param(rule, src, id=f"{rule.code}-{kind}-{i}"))
    return out


def _stated():
    """The INVALID examples of rule classes that state their first finding's range, message or
    fixed source."""
    out = []
    for code, cls in sorted(RULE_CLASSES.items()):
        for i, ex in enumerate(cls.INVALID):
            if isinstance(ex, Invalid) and (ex.range or ex.message is not None or ex.fixed is not None):
                out.append(pytest.param(cls.meta(), ex, id=f"{code}-invalid-{i}"))
    return out


def _every_invalid():
    out = []
    for code, cls in sorted(RULE_CLASSES.items()):
        for i, ex in enumerate(cls.INVALID):
            out.append(pytest.param(code, ex, id=f"{code}-invalid-{i}"))
    return out


def _select(rule):
    # NPU003 judges `# noqa` codes of the rules that are on: its examples run with every rule
    return ["NPU"] if rule.code == "NPU003" else [rule.code]


@pytest.mark.parametrize("rule, src", _examples("invalid"))
def test_invalid_example_produces_the_code(rule, src):
    found = _lint(rule, src)
    assert set(codes(found)) == {rule.code}, f"{rule.code} invalid example gave {codes(found)}:\n{src}"


@pytest.mark.parametrize("code, example", _every_invalid())
def test_every_invalid_example_states_its_range_and_message(code, example):
    assert isinstance(example, Invalid), f"{code}: write the example as Invalid(code, range=..., message=...)"
    assert example.range is not None and example.message is not None, f"{code}: state the range and the message"


@pytest.mark.parametrize("rule, example", _stated())
def test_invalid_example_gives_its_stated_range_message_and_fix(rule, example):
    found = [f for f in _lint(rule, example.code) if f.code == rule.code]
    assert found, f"{rule.code}: no finding"
    first = found[0]
    if example.range is not None:
        assert (first.line, first.column, first.end_line, first.end_column) == example.range
    if example.message is not None:
        assert first.message == example.message
    if example.fixed is not None:
        text = example.code
        for _ in range(10):  # the fix loop, as --fix runs it
            fixes = [f.fix for f in found if f.fix is not None]
            if not fixes:
                break
            text, applied = fix_text(text, fixes, rule.example_language)
            if not applied:
                break
            found = [f for f in _lint(rule, text) if f.code == rule.code]
        assert text == example.fixed


@pytest.mark.parametrize("code", sorted(c for c, cls in RULE_CLASSES.items() if cls.AUTOFIX))
def test_rules_with_a_fix_state_the_fixed_source_of_an_example(code):
    assert any(isinstance(e, Invalid) and e.fixed is not None for e in RULE_CLASSES[code].INVALID), code


@pytest.mark.parametrize("rule, src", _examples("valid"))
def test_valid_example_does_not_produce_the_code(rule, src):
    found = _lint(rule, src)
    assert rule.code not in codes(found), f"{rule.code} valid example gave {found}:\n{src}"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_is_fully_described(rule):
    assert re.fullmatch(r"NPU\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule.name
    assert rule.summary.strip()
    assert rule.explanation.strip()
    assert rule.source.strip()


@pytest.mark.parametrize("rule", [r for r in RULES if r.invalid or r.valid], ids=lambda r: r.code)
def test_examples_are_python_that_parses(rule):
    import libcst as cst

    if rule.example_language == "shell":
        from npulint.shell import parse_script

        for src in rule.valid + rule.invalid:
            assert parse_script(src)[1] is None
        return
    for src in rule.valid:
        cst.parse_module(src)
    if rule.code != "NPU001":  # the syntax-error rule's invalid example is meant not to parse
        for src in rule.invalid:
            cst.parse_module(src)


def test_names_are_unique():
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))


@pytest.fixture
def fresh_registry(monkeypatch):
    """registry.load() over the rules defined from here on alone (the rule modules are imported
    already: loading them again defines nothing)."""
    from npulint import rulebase

    monkeypatch.setattr(rulebase, "_RULES", [])
    monkeypatch.setattr(registry, "_CACHE", {})


def test_the_registry_sorts_the_rules_by_code(fresh_registry):
    for code in ("NPU901", "NPU900", "NPU902"):
        type(f"Rule{code}", (RuleBase,), {"CODE": code, "NAME": code.lower(), "SUMMARY": "s", "SOURCE": "s"})
    rules, checkers = registry.load()
    assert [r.code for r in rules] == ["NPU900", "NPU901", "NPU902"]
    assert checkers == []  # rules that are not LintRule are the engine's: never run over a file


def test_the_registry_refuses_two_rules_with_one_code(fresh_registry):
    for name in ("first", "second"):
        type(name, (RuleBase,), {"CODE": "NPU900", "NAME": name, "SUMMARY": "s", "SOURCE": "s"})
    with pytest.raises(RuntimeError, match="duplicate rule codes: NPU900"):
        registry.load()


def test_the_engine_codes_are_its_rule_classes():
    from npulint.lintrule import LintRule

    engine = {c.CODE for c in discovered() if not issubclass(c, LintRule)}
    assert engine and registry.engine_codes() == engine


def test_every_rule_but_the_internal_and_unreadable_file_ones_has_examples():
    for rule in RULES:
        if rule.code in ("NPU000", "NPU002"):  # engine conditions with no source-level example
            continue
        assert rule.invalid, f"{rule.code} has no invalid example"
        assert rule.valid, f"{rule.code} has no valid example"


def test_rule_codes_match_the_catalog():
    # RULES.md: code -> (name, severity) for the rules implemented so far
    catalog = {
        "NPU000": ("internal-error", "error"),
        "NPU001": ("syntax-error", "error"),
        "NPU002": ("unreadable-file", "error"),
        "NPU010": ("api-signature-mismatch", "error"),
        "NPU101": ("prefetch-pool-size-mismatch", "error"),
        "NPU102": ("prefetch-in-control-flow", "error"),
        "NPU103": ("prefetch-pool-invalid-argument", "error"),
        "NPU104": ("prefetch-multi-io-op", "warning"),
        "NPU105": ("prefetch-pool-too-small", "error"),
    }
    by_code = {r.code: r for r in RULES}
    for code, (name, severity) in catalog.items():
        assert code in by_code, code
        assert (by_code[code].name, by_code[code].severity) == (name, severity), code
