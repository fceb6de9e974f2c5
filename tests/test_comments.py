"""Which ``# noqa`` comments a Python file has: read by a regular-expression scan of its strings
and comments, with the same answer as tokenize (and, where tokenize fails, as the line-based
reading that stands in for it)."""

import pathlib
import sys

import pytest

from npulint import source
from npulint.source import PYTHON, noqa_directives


def _reference(text):
    """The directives as tokenize's comments (or, where it fails, the line-based reading) give them."""
    return source._directives([c for c in source._comments(text, PYTHON) if source._NOQA.search(c[2])], PYTHON)


def _found(text):
    """The directives' (line, 0-based column)."""
    return [(line, start - 1) for line, start, *_ in noqa_directives(text, PYTHON)]


CASES = [
    ('x = "# noqa"\n', []),
    ('s = """\n# noqa\n"""\n', []),
    ("s = '''it''s # noqa'''  # noqa\n", [(1, 24)]),
    ('a = "x\\\n# noqa"\n', []),  # a backslash continues the string onto the next line
    ('x = r"\\""  # noqa\n', [(1, 11)]),  # in a raw string too, a backslash keeps the quote in
    ("b = '#'; c = 1  # noqa: NPU101\n", [(1, 16)]),
    ("x = 'it # noqa\n", [(1, 8)]),  # a quote that starts no string: the rest is read on
    ('f"{x!r:#>4}"  # noqa\n', [(1, 14)]),
    ('"""one""" "two"  # noqa\n# noqa\n', [(1, 17), (2, 0)]),
    ("x = 1  # NOQA:NPU101,NPU102\n", [(1, 7)]),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_noqa_comments_are_the_comments_tokenize_reads(text, expected):
    assert _found(text) == expected
    assert noqa_directives(text, PYTHON) == _reference(text)


@pytest.mark.parametrize("quote", ['"', "'"])
def test_a_string_that_does_not_end_leaves_the_answer_to_tokenize(quote):
    text = f"x = 1  # noqa\ns = {quote * 3} # noqa\n"
    assert source._scan_python_comments(text) is None
    # tokenize fails: the line-based reading finds both
    assert _found(text) == [(1, 7), (2, 8)]
    assert noqa_directives(text, PYTHON) == _reference(text)


def test_where_tokenize_fails_and_the_line_reading_differs_its_answer_stands():
    # an indentation tokenize rejects; the line-based reading takes the first '#' after a blank
    text = 'if x:\n        a = 1\n    b = " #x"  # noqa\n'
    assert source._python_comments(text) is None
    assert source._scan_python_comments(text, source._NOQA) == [(3, 15, "# noqa", '    b = " #x"  ')]
    # the line-based reading's comment is '#x"  # noqa': nothing follows the directive inside
    # it, so its cut takes the blanks before it ('    b = " #x"' is left)
    assert noqa_directives(text, PYTHON) == _reference(text) == [(3, 16, 22, None, 14, 22)]


@pytest.mark.parametrize("text", ["x = 1\ry = 2  # noqa\n", "x = 'a\\\nb  # noqa\n"])
def test_what_the_scan_cannot_be_sure_of_goes_to_tokenize(text):
    assert source._scan_python_comments(text) is None
    assert noqa_directives(text, PYTHON) == _reference(text)


def test_a_lone_carriage_return_ends_a_line_for_the_directives_too():
    # CPython counts a lone CR as a line break; io.StringIO's readline does not split there
    text = "import torch_npu\rout = f(x)  # noqa: NPU401\r"
    assert _found(text) == [(2, 12)]
    assert _found("x = 1\r\ny = 2  # noqa\r\n") == [(2, 7)]


def test_the_lint_of_a_file_with_lone_carriage_returns_keeps_its_directive(lint):
    call = "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 16)"
    used = ("import torch_npu\r" + call + "  # noqa: NPU401\r").encode()
    assert [f.code for f in lint({"t.py": used}, select=["NPU003", "NPU401"])] == []
    # the twin: a directive on the first line suppresses nothing, and the call is reported
    unused = ("import torch_npu  # noqa: NPU401\r" + call + "\r").encode()
    assert [(f.code, f.line) for f in lint({"t.py": unused}, select=["NPU003", "NPU401"])] == \
        [("NPU003", 1), ("NPU401", 2)]


@pytest.mark.parametrize("text,skipped", [
    ("\f# npulint: skip-file\nx = 1\n", True),  # a form feed is a blank to CPython
    ("\f  \t# npulint: skip-file\nx = 1\n", True),
    ("x = 1\n\f# npulint: skip-file\n", True),
    ('x = """\n\f# npulint: skip-file\n"""\n', False),  # inside a string
    ("x = 1  \f# npulint: skip-file\n", False),  # not on a line of its own
])
def test_skip_file_after_a_form_feed(text, skipped):
    assert source.is_skip_file(text) is skipped


def _python_files():
    root = pathlib.Path(__file__).resolve().parent.parent
    for folder in ("npulint", "rules", "tests", "tools", "bench"):
        yield from sorted((root / folder).rglob("*.py"))


def test_the_scan_agrees_with_tokenize_on_this_repository():
    answered = files = 0
    for path in _python_files():
        files += 1
        text = path.read_text(encoding="utf-8")
        scanned = source._scan_python_comments(text)
        if scanned is None:
            continue
        answered += 1
        assert scanned == source._python_comments(text), path
    if sys.version_info < (3, 12):  # from 3.12 on, a file with an f-string goes to tokenize
        assert answered > 0.9 * files > 50  # the scan answers nearly every file itself


def test_a_byte_that_is_not_utf8_in_a_comment():
    # kept as a lone surrogate (source.decode); Python 3.12's tokenize cannot encode it and
    # fails, and the line-based reading answers
    text = 'x = f"{y}"  # noqa \udcd2\n'
    assert _found(text) == [(1, 12)]
