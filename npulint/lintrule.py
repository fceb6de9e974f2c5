"""A rule is one class (Fixit's ``LintRule`` is the model): its code, name, severity, summary,
explanation (the class docstring), source, how to fix it, its ``VALID``/``INVALID`` examples,
the prefilter names it needs, and its ``visit_*``/``leave_*`` hooks over the LibCST tree. It
reports with itself, ``self.report(node, message, fix=...)``, so no code string can be
misspelled.

A family's shared analysis (the CompilerConfig tracking of NPU2xx, the event table of NPU3xx,
the launch reader of NPU5xx) is an :class:`Analysis`: the rules that need it name it in ``uses``;
the engine makes one instance per file, walks it in the same single traversal, before the
rules (so its state at a node is up to date when a rule's hook for that node runs), and hands it
to them as ``self.ctx.analysis(ThatAnalysis)``. An analysis reports nothing.

Rules are discovered: every concrete subclass of :class:`LintRule` (one with a ``CODE``) in the
``rules`` package is a rule (``npulint.registry``).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple, Union

from npulint.checker import Checker, ProjectReporter
from npulint.model import Fix, Rule, Span

_RULES: List[type] = []
_MISSING = object()


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


class Analysis(Checker):
    """A family's shared analysis: hooks and state, no codes of its own. Its ``tokens`` (and
    ``wants``) select the files its rules need; its facts (``self.ctx.fact(type(self), ...)``)
    reach the ``project()`` of the rules that use it."""

    rules: ClassVar[Tuple[Rule, ...]] = ()


class LintRule(Checker):
    """One rule. Subclasses set the metadata below; ``EXPLANATION`` defaults to the class
    docstring."""

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
    # Reported by the engine itself (NPU000-NPU005): metadata only, never run over a file.
    ENGINE: ClassVar[bool] = False
    # The shared analyses this rule reads (Analysis subclasses).
    uses: ClassVar[Tuple[type, ...]] = ()
    # LibCST metadata providers the rule reads with get_metadata (npulint.metadata's, and
    # LibCST's PositionProvider)
    METADATA_DEPENDENCIES: ClassVar[Tuple[type, ...]] = ()
    _tokens_from_uses: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("CODE"):
            return
        if not cls.__dict__.get("EXPLANATION"):
            cls.EXPLANATION = inspect.cleandoc(cls.__doc__ or "")
        cls.rules = (cls.meta(),)
        # without tokens of its own, a rule wants the files the analyses it reads want
        cls._tokens_from_uses = "tokens" not in cls.__dict__ and bool(cls.uses)
        if cls._tokens_from_uses:
            cls.tokens = tuple(dict.fromkeys(g for a in cls.uses for g in a.tokens))
        _RULES.append(cls)

    @classmethod
    def meta(cls) -> Rule:
        return Rule(code=cls.CODE, name=cls.NAME, severity=cls.SEVERITY, summary=cls.SUMMARY,
                    explanation=cls.EXPLANATION, source=cls.SOURCE,
                    invalid=tuple(example_text(e) for e in cls.INVALID), valid=tuple(cls.VALID),
                    fix=cls.HOW_TO_FIX, autofix=cls.AUTOFIX, example_language=cls.EXAMPLE_LANGUAGE,
                    example_config=cls.EXAMPLE_CONFIG, fix_applicability=cls.FIX_APPLICABILITY)

    @classmethod
    def wants(cls, text: str, path: str = "", present: Optional[Dict[str, bool]] = None) -> bool:
        if cls.ENGINE:
            return False
        if cls._tokens_from_uses:
            # an analysis serves several rules: its answer for the file is kept in *present*
            # (keyed by the class) and asked once
            if present is None:
                present = {}
            for a in cls.uses:
                hit = present.get(a)  # type: ignore[call-overload]
                if hit is None:
                    hit = present[a] = a.wants(text, path, present)  # type: ignore[index]
                if hit:
                    return True
            return False
        return super().wants(text, path, present)

    def get_metadata(self, key: type, node: Any, default: Any = _MISSING) -> Any:
        """*node*'s metadata from the provider *key* (one of ``METADATA_DEPENDENCIES``), as in
        LibCST's ``MetadataDependent.get_metadata``; *default* when the node has none."""
        if key not in type(self).METADATA_DEPENDENCIES:
            raise KeyError(f"{type(self).__name__} does not declare {key.__name__} in METADATA_DEPENDENCIES")
        try:
            return self.ctx.metadata.get(key, node)
        except KeyError:
            if default is _MISSING:
                raise
            return default

    def report(self, where: Any, message: str, *, fix: Optional[Fix] = None,
               related: Sequence[Tuple[str, int, int]] = ()) -> None:
        """Report this rule at *where* (a LibCST node, or a :class:`Span`)."""
        self.ctx.report(self.CODE, where, message, related=related, fix=fix)

    @classmethod
    def report_in(cls, report: ProjectReporter, path: str, span: Span, message: str, *,
                  fix: Optional[Fix] = None, related: Sequence[Tuple[str, int, int]] = (),
                  noqa_lines: Tuple[int, ...] = ()) -> None:
        """Report this rule from the project phase (``project()``), in the file *path*."""
        report.report(path, span, cls.CODE, message, related=related, fix=fix, noqa_lines=noqa_lines)


def discovered() -> List[type]:
    """Every rule class defined so far (import the rule modules first)."""
    return list(_RULES)


def with_analyses(classes: Sequence[type]) -> List[type]:
    """*classes* and the analyses they use (transitively), analyses first (in order of use), so
    that a traversal calls an analysis's hook for a node before its rules' hooks."""
    out: List[type] = []

    def add(cls: type) -> None:
        if cls in out:
            return
        for a in getattr(cls, "uses", ()):
            add(a)
        out.append(cls)

    for c in classes:
        for a in getattr(c, "uses", ()):
            add(a)
    rest = [c for c in classes if c not in out]
    return out + rest
