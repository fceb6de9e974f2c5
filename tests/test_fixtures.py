"""Whole programs too big for a rule's docstring: every file in ``tests/fixtures`` is linted with
every rule on, and what it reports must be exactly what the file's inline comments expect:
``# expect: NPU301`` (or ``# expect: NPU401, NPU402``) at the end of the line a finding starts
on. A fixture without such comments must be clean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from npulint.config import Settings
from npulint.core import lint_source

FIXTURES = Path(__file__).parent / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*(NPU\d{3}(?:\s*,\s*NPU\d{3})*)\s*$")


def expectations(text: str):
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out.extend((number, code.strip()) for code in m.group(1).split(","))
    return sorted(out)


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".py", ".sh")))
def test_a_fixture_reports_what_its_comments_expect(fixture):
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    settings = Settings(root=str(FIXTURES))
    settings.select = ["ALL"]
    found = lint_source(fixture, text, settings)
    assert sorted((f.line, f.code) for f in found) == expectations(text)


def test_the_expectations_are_read_as_written():
    text = "x = 1  # expect: NPU401\ny = 2\nz = 3  # expect: NPU402, NPU404\n# a comment: expect: nothing\n"
    assert expectations(text) == [(1, "NPU401"), (3, "NPU402"), (3, "NPU404")]
