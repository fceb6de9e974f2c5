"""Plain data shared by the engine, the rules and the reporters."""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

SEVERITIES = ("error", "warning", "info")
# A fix is safe (meaning and run-time behaviour kept: ``--fix`` applies it) or unsafe (it may
# change what the program does: only ``--fix --unsafe-fixes`` applies it), as ruff's fixes are.
APPLICABILITIES = ("safe", "unsafe")


@dataclasses.dataclass(frozen=True)
class Rule:
    """One rule: everything a user, a reporter or a test needs to know about a code.

    A rule is defined once, in ``rules/``; ``--list-rules``, ``--explain``, the README
    table and the tests all read this object.
    """

    code: str
    name: str
    severity: str
    summary: str
    explanation: str
    source: str
    invalid: Tuple[str, ...] = ()  # examples that must produce this code
    valid: Tuple[str, ...] = ()  # examples that must not produce it
    fix: str = ""  # how to fix it, in words
    autofix: bool = False  # findings may carry an automatic fix (``--fix``)
    example_language: str = "python"  # the language of ``invalid``/``valid`` ("python" or "shell")
    # the configuration (pyproject.toml text) the examples hold under, e.g. the releases of a
    # release-dependent rule; "" for the defaults
    example_config: str = ""
    # "unsafe": the rule's fixes change run-time behaviour, applied only with --unsafe-fixes
    fix_applicability: str = "safe"

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"{self.code}: bad severity {self.severity!r}")

    @property
    def default_enabled(self) -> bool:
        return self.severity != "info"


@dataclasses.dataclass(frozen=True)
class Edit:
    """Replace the text from (line, column) up to (end_line, end_column), exclusive, with
    *text*. Positions are 1-based and count characters, as :class:`Span` does; an insertion
    has start == end. Newlines in *text* are written as ``\\n`` and converted to the file's
    newline style when the edit is applied."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


@dataclasses.dataclass(frozen=True)
class Fix:
    """An automatic fix: edits applied together, or not at all. *applicability*: ``"safe"``
    (the default) or ``"unsafe"``; the engine may make a rule's fixes unsafe whatever the rule
    says (:func:`npulint.fixes.resolve_fixes`)."""

    description: str
    edits: Tuple[Edit, ...]
    applicability: str = "safe"

    def __post_init__(self) -> None:
        if self.applicability not in APPLICABILITIES:
            raise ValueError(f"bad fix applicability {self.applicability!r}")


@dataclasses.dataclass(frozen=True, order=True)
class Finding:
    path: str  # as displayed (relative to cwd when under it)
    line: int  # 1-based
    column: int  # 1-based
    code: str
    message: str
    end_line: int = 0
    end_column: int = 0
    related: Tuple[Tuple[str, int, int], ...] = ()  # other locations (path, line, col)
    fix: Optional[Fix] = dataclasses.field(default=None, compare=False)
    # lines of ``# noqa`` comments that apply besides the finding's own line (in a shell
    # script, a comment line directly above the command the finding belongs to)
    noqa_lines: Tuple[int, ...] = dataclasses.field(default=(), compare=False)
    # the file as the run read it (what --fix writes and the reporters quote), set when the
    # run's findings are gathered (suppress._suppress); "" before, and for a finding of no file
    file: str = dataclasses.field(default="", compare=False)

    def sort_key(self) -> Tuple[str, int, int, str, str]:
        # the message too: two findings of one code at one place (two requirements of one
        # flag) come out in the same order on every run, whatever the set they passed through
        return (self.path, self.line, self.column, self.code, self.message)


@dataclasses.dataclass(frozen=True)
class Span:
    """A 1-based source range."""

    line: int
    column: int
    end_line: int
    end_column: int

    @staticmethod
    def at(line: int, column: int) -> "Span":
        return Span(line, column, line, column)


class LazySpan:
    """A ``span`` that may be given as a function computing it, called on first use (launch
    words: most are never reported). Subclasses hold it in a ``_span`` slot."""

    __slots__ = ()

    @property
    def span(self) -> Optional[Span]:
        if callable(self._span):  # type: ignore[attr-defined]
            self._span = self._span()  # type: ignore[attr-defined]
        return self._span  # type: ignore[attr-defined]

    @property
    def lazy_span(self):
        """The span, or the function that computes it (to hand on without computing it)."""
        return self._span  # type: ignore[attr-defined]
