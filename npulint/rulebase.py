"""What every rule class is, whether a checker runs it over files or not: its metadata and
examples, and how its findings are made. A finding's code always comes from its rule class
(``SomeRule.CODE``, through the methods below), so no code string can be misspelled.

:class:`npulint.lintrule.LintRule` adds the checker (hooks over the LibCST tree). The rules the
engine reports itself (``rules/engine.py``: an internal error, a syntax error, an unreadable
file, an unused ``# noqa``, CRLF line endings, an analysis bound) are :class:`RuleBase` alone:
this module imports neither LibCST nor the checkers, so that a run answered from the cache can
report them (NPU003) as cheaply as it reads the cache.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import TYPE_CHECKING, ClassVar, Collection, List, Optional, Sequence, Tuple, Union

from npulint.model import Finding, Fix, Rule, Span

if TYPE_CHECKING:  # pragma: no cover
    from npulint.checker import ProjectReporter

_RULES: List[type] = []


@dataclasses.dataclass(frozen=True)
class Invalid:
    """An ``INVALID`` example with what it must give: the first finding's range
    ``(line, column, end_line, end_column)`` (1-based), its exact message, and (for a rule with a
    fix) the source after ``--fix``. ``None``: not stated."""

    code: str
    range: Optional[Tuple[int, int, int, int]] = None
    message: Optional[str] = None
    fixed: Optional[str] = None


Example = Union[str, Invalid]


def example_text(example: Example) -> str:
    return example.code if isinstance(example, Invalid) else example


class RuleBase:
    """One rule's metadata; ``EXPLANATION`` defaults to the class docstring. Every subclass
    with a ``CODE`` is a rule (:func:`discovered`)."""

    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    SEVERITY: ClassVar[str] = "error"
    SUMMARY: ClassVar[str] = ""
    EXPLANATION: ClassVar[str] = ""
    SOURCE: ClassVar[str] = ""
    HOW_TO_FIX: ClassVar[str] = ""
    AUTOFIX: ClassVar[bool] = False
    # "unsafe": the fixes change run-time behaviour (ruff's applicability), applied only with
    # --unsafe-fixes
    FIX_APPLICABILITY: ClassVar[str] = "safe"
    VALID: ClassVar[Tuple[str, ...]] = ()
    INVALID: ClassVar[Tuple[Example, ...]] = ()
    EXAMPLE_LANGUAGE: ClassVar[str] = "python"
    EXAMPLE_CONFIG: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("CODE"):
            return
        if not cls.__dict__.get("EXPLANATION"):
            cls.EXPLANATION = inspect.cleandoc(cls.__doc__ or "")
        _RULES.append(cls)

    @classmethod
    def meta(cls) -> Rule:
        return Rule(code=cls.CODE, name=cls.NAME, severity=cls.SEVERITY, summary=cls.SUMMARY,
                    explanation=cls.EXPLANATION, source=cls.SOURCE,
                    invalid=tuple(example_text(e) for e in cls.INVALID), valid=tuple(cls.VALID),
                    fix=cls.HOW_TO_FIX, autofix=cls.AUTOFIX, example_language=cls.EXAMPLE_LANGUAGE,
                    example_config=cls.EXAMPLE_CONFIG, fix_applicability=cls.FIX_APPLICABILITY)

    @classmethod
    def enabled_in(cls, enabled: Collection[str]) -> bool:
        """Whether this rule is among the *enabled* codes."""
        return cls.CODE in enabled

    @classmethod
    def finding(cls, path: str, span: Span, message: str, *, fix: Optional[Fix] = None) -> Finding:
        """A finding of this rule in the file displayed as *path* (what the engine reports
        outside any traversal: its caller has checked that the rule is enabled)."""
        return Finding(path, span.line, span.column, cls.CODE, message, span.end_line, span.end_column, (),
                       cls._as_reported(fix))

    @classmethod
    def report_to(cls, ctx, where, message: str, *, fix: Optional[Fix] = None,
                  related: Sequence[Tuple[str, int, int]] = ()) -> None:
        """Report this rule through the file context *ctx* (``FileContext`` or ``ShellContext``,
        which drop it when the rule is not enabled) at *where* (a LibCST node, or a
        :class:`Span`): how a rule reports itself."""
        ctx.report(cls.CODE, where, message, related=related, fix=cls._as_reported(fix))

    @classmethod
    def report_in(cls, report: "ProjectReporter", path: str, span: Span, message: str, *,
                  fix: Optional[Fix] = None, related: Sequence[Tuple[str, int, int]] = (),
                  noqa_lines: Tuple[int, ...] = ()) -> None:
        """Report this rule from the project phase (``project()``), in the file *path*."""
        report.report(path, span, cls.CODE, message, related=related, fix=cls._as_reported(fix),
                      noqa_lines=noqa_lines)

    @classmethod
    def _as_reported(cls, fix: Optional[Fix]) -> Optional[Fix]:
        """*fix* as this rule reports it: unsafe when the rule's fixes are (``FIX_APPLICABILITY``),
        whatever the fix says. The finding carries it (and so does the cache), so that deciding
        what ``--fix`` may apply never needs the rule table."""
        if fix is not None and cls.FIX_APPLICABILITY == "unsafe" and fix.applicability != "unsafe":
            return dataclasses.replace(fix, applicability="unsafe")
        return fix


def discovered() -> List[type]:
    """Every rule class defined so far (import the rule modules first)."""
    return list(_RULES)
