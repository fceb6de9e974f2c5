"""A rule is one class (Fixit's ``LintRule`` is the model): its code, name, severity, summary,
explanation (the class docstring), source, how to fix it, its ``VALID``/``INVALID`` examples
(:class:`npulint.rulebase.RuleBase`), the prefilter names it needs, and its
``visit_*``/``leave_*`` hooks over the LibCST tree. It reports with itself,
``self.report(node, message, fix=...)``, so no code string can be misspelled.

A family's shared analysis (the CompilerConfig tracking of NPU2xx, the event table of NPU3xx,
the launch reader of NPU5xx) is an :class:`Analysis`: the rules that need it name it in ``uses``;
the engine makes one instance per file and hands it to them as ``self.ctx.analysis(ThatAnalysis)``.
An analysis reports nothing of its own. It plays the part of a LibCST metadata provider: its
hooks run during the file's one traversal, with the resolver's, and it is complete (its
``finish()`` has run) before any rule's hook runs. A rule's ``visit_*``/``leave_*`` hooks are
then called in the traversal's order, each at the point of the program where the traversal met
its node (``self.ctx.site()``), as LibCST calls a visitor once the metadata it declares is
resolved; the engine records those calls during the one traversal and makes them afterwards
(:meth:`npulint.semantic.Walker.replay`), so nothing is walked twice. A rule can therefore
judge a node in its hook with every binding of the file known ("certain at this point" reads
bindings made after the node, as a function body does); ``finish()`` is for what only the whole
file decides (a pair of calls, a group of graphs), and ``project()`` folds the facts of a run.

Rules are discovered: every concrete subclass of :class:`RuleBase` (one with a ``CODE``) in the
``rules`` package is a rule (``npulint.registry``); those that are not a :class:`LintRule` are
the ones the engine reports itself (``rules/engine.py``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from npulint.checker import Checker
from npulint.model import Fix, Rule
from npulint.rulebase import Invalid, RuleBase, discovered  # noqa: F401 - the rules' API

_MISSING = object()


class Analysis(Checker):
    """A family's shared analysis: hooks and state, no codes of its own. Its ``tokens`` (and
    ``wants``) select the files its rules need; its facts (``self.ctx.fact(type(self), ...)``)
    reach the ``project()`` of the rules that use it."""

    rules: ClassVar[Tuple[Rule, ...]] = ()


class LintRule(RuleBase, Checker):
    """One rule a checker runs over files: the metadata of :class:`RuleBase` and the hooks
    of :class:`Checker`."""

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
        cls.rules = (cls.meta(),)
        # without tokens of its own, a rule wants the files the analyses it reads want
        cls._tokens_from_uses = "tokens" not in cls.__dict__ and bool(cls.uses)
        if cls._tokens_from_uses:
            cls.tokens = tuple(dict.fromkeys(g for a in cls.uses for g in a.tokens))

    @classmethod
    def wants(cls, text: str, path: str = "", present: Optional[Dict[str, bool]] = None) -> bool:
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
        self.report_to(self.ctx, where, message, fix=fix, related=related)


def with_analyses(classes: Sequence[type]) -> List[type]:
    """*classes* and the analyses they use (transitively), analyses first, each after those it
    uses: the order in which their hooks are called for a node and their ``finish()`` runs."""
    out: List[type] = []
    for c in classes:
        _add_uses(c, out)
    rest = [c for c in classes if c not in out]
    return out + rest


def _add_uses(cls: type, out: List[type]) -> None:
    """The analyses *cls* uses, transitively, each after those it uses, onto *out* (once)."""
    for a in getattr(cls, "uses", ()):
        if a not in out:
            _add_uses(a, out)
            out.append(a)
