"""File patterns as ruff's globset reads them (npulint.globs): each case as ruff 0.17.6 matched
it (its `extend-exclude` and `per-file-ignores` over the same paths), the patterns globset
rejects, and the alternatives given to the gitignore reading."""

from __future__ import annotations

import pytest

from npulint.globs import GlobError, absolute, compile_glob, expand

ROOT = "/r"


@pytest.mark.parametrize("pattern, path, matches", [
    ("scripts/*.py", "/r/scripts/a/b.py", True),  # `*` crosses `/` (globset's literal_separator is off)
    ("scripts/*.py", "/r/x/scripts/a.py", False),  # anchored at the root
    ("**/{tests,scripts}/*", "/r/tests/unit/u.py", True),
    ("**/{tests,scripts}/*", "/r/src/tests/s.py", True),
    ("**/{tests,scripts}/*", "/r/top.py", False),
    ("src/**", "/r/src/a/b.py", True),
    ("src/**", "/r/src", False),  # `/**` at the end: below the folder, not the folder
    ("**/tests", "/r/tests", True),
    ("**/tests", "/r/a/tests", True),
    ("a/**/b", "/r/a/b", True),
    ("a/**/b", "/r/a/x/y/b", True),
    ("./x.py", "/r/x.py", True),  # normalized as ruff's GlobPath::normalize
    ("../o/x.py", "/o/x.py", True),
    ("/abs/*.py", "/abs/q/w.py", True),  # an absolute pattern stays absolute
    ("[!a]b", "/r/cb", True),
    ("[!a]b", "/r/ab", False),
    ("a{b,{c,d}}", "/r/ad", True),  # nested alternatives (ruff 0.17.6 accepts them)
    ("x\\*", "/r/x*", True),
    ("x\\*", "/r/xy", False),
    ("tests/", "/r/tests", True),
    ("{a,b}**", "/r/a/z", True),  # `**` after a group is `*`
])
def test_absolute_patterns(pattern, path, matches):
    assert bool(absolute(pattern, ROOT).fullmatch(path)) is matches


def test_the_root_is_matched_literally():
    assert absolute("x", "/we[ir]d").fullmatch("/we[ir]d/x")
    assert not absolute("x", "/we[ir]d").fullmatch("/wed/x")


@pytest.mark.parametrize("pattern, name, matches", [
    ("*.py", "a.py", True), ("t?p.py", "top.py", True), ("t?p.py", "tp.py", False), ("**", "a/b", True),
])
def test_name_patterns(pattern, name, matches):
    assert bool(compile_glob(pattern).fullmatch(name)) is matches


@pytest.mark.parametrize("pattern", ["a}", "[a", "{a", "x\\", "[z-a]"])
def test_patterns_globset_rejects(pattern):
    with pytest.raises(GlobError):
        compile_glob(pattern)


@pytest.mark.parametrize("pattern, alternatives", [
    ("**/{tests,scripts}/*", ["**/tests/*", "**/scripts/*"]),
    ("a{b,{c,d}}e", ["abe", "ace", "ade"]),
    ("[{]x", ["[{]x"]),  # a brace in a class is no group
    ("\\{x\\}", ["\\{x\\}"]),  # nor an escaped one
    ("plain/name.py", ["plain/name.py"]),
])
def test_expand(pattern, alternatives):
    assert expand(pattern) == alternatives


def test_a_pattern_that_expands_to_too_many_alternatives_is_refused_at_once():
    # `{a,b}` twenty-two times is four million alternatives: refused, not expanded
    from npulint.globs import MAX_ALTERNATIVES

    with pytest.raises(GlobError, match="more than"):
        expand("{a,b}" * 22)
    assert len(expand("{a,b}" * 10)) == 1024 == MAX_ALTERNATIVES
