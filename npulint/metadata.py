"""npulint's resolver as LibCST metadata providers.

:class:`ResolverProvider` gives every ``Name``, ``Attribute`` and ``Call`` node that is an
expression a :class:`Resolution` (not the identifier a def, class, parameter, keyword argument,
import alias or an attribute's ``.attr`` is written with: the traversal does not enter those): the file's binding table (:class:`npulint.semantic.Semantic`) and the point
of the program at which the node is evaluated (its :class:`npulint.semantic.Site`: the scope,
the enclosing blocks and how far the straight-line code has got, which is what "certain at this
point" is judged on); its queries tell whether a name is *certainly* one thing there, which
is what the rules act on. :class:`QualifiedNamesProvider` gives the same nodes the qualified
names they can refer to there, by npulint's rules (RULES.md "Resolve names"). They differ from
LibCST's ``QualifiedNameProvider`` where npulint's are right (docs/benchmarks.md, "Resolver
comparison"): a call of a call's result (``torch.compile(m)(x)``) gets no name, not the inner
function's, and aliases through assignments (``backend = torchair.get_npu_backend``) are
followed.

Both are ordinary LibCST providers: ``MetadataWrapper(module).resolve(QualifiedNamesProvider)``
works on any module; the cache value (``MetadataWrapper(module, cache={ResolverProvider:
("pkg.mod", False)})``, or LibCST's ``FullRepoManager`` through ``gen_cache``) names the module
and whether it is a package's ``__init__``, for relative imports. Inside npulint a rule declares them in ``METADATA_DEPENDENCIES`` and asks
``self.get_metadata(ResolverProvider, node)``; the engine answers from the one traversal it
makes anyway (the table is built once per file, shared by every rule), instead of running
LibCST's own traversal per provider.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, FrozenSet, Optional, Tuple

import libcst as cst
from libcst.metadata import BaseMetadataProvider, CodePosition, CodeRange, PositionProvider

from npulint.paths import module_name
from npulint.semantic import Semantic, Site, Walker



class Resolution:
    """A node's place in the file's binding table. The queries resolve the expression they are
    given (by default the node itself; for a ``Call``, its callee) as it stands at that point."""

    __slots__ = ("sem", "site", "node")

    def __init__(self, sem: Semantic, site: Site, node: cst.CSTNode):
        self.sem = sem
        self.site = site
        self.node = node

    def _expr(self, expr: Optional[cst.CSTNode]) -> cst.CSTNode:
        if expr is not None:
            return expr
        return self.node.func if type(self.node) is cst.Call else self.node

    def qualnames(self, expr: Optional[cst.CSTNode] = None) -> FrozenSet[str]:
        """The qualified names *expr* can refer to here (empty: unknown)."""
        return self.sem.qualnames(self._expr(expr), self.site)

    def resolve(self, expr: Optional[cst.CSTNode], names) -> Optional[str]:
        """The one name of *names* (a container of qualified names) that *expr* certainly is."""
        return self.sem.resolve(self._expr(expr), self.site, names)

    def callee(self, expr: Optional[cst.CSTNode] = None) -> Optional[str]:
        """The qualified name a called expression certainly has, or None."""
        return self.sem.callee_qualname(self._expr(expr), self.site)

    def certain_binding(self, expr: Optional[cst.CSTNode] = None):
        """The one binding *expr* (a name) certainly has here, or None."""
        return self.sem.certain_binding(self._expr(expr), self.site)


class _SiteRecorder:
    """Takes the traversal's point at each resolved node (a hook object for the Walker)."""

    def __init__(self, sem: Semantic, out: Dict[cst.CSTNode, Site]):
        self.sem = sem
        self.out = out

    def visit_Name(self, node: cst.CSTNode) -> None:
        self.out[node] = self.sem.site()

    visit_Attribute = visit_Call = visit_Name


def _raise(checker, exc: BaseException, node) -> None:
    raise exc


class ResolverProvider(BaseMetadataProvider[Resolution]):
    """Every ``Name``, ``Attribute`` and ``Call`` node -> its :class:`Resolution`."""

    def __init__(self, cache: Any = None) -> None:
        # LibCST requires a cache of a provider that has gen_cache; here it is optional (a
        # module without a name resolves no relative import)
        super().__init__(cache if isinstance(cache, tuple) else (None, False))
        self._module = self.cache

    @classmethod
    def gen_cache(cls, root_path, paths, timeout=None, **kwargs) -> Dict[str, Tuple[Optional[str], bool]]:
        """For LibCST's ``FullRepoManager``: each file's module name and whether it is a
        package's ``__init__``, from the package folders around it (as npulint's run does)."""
        return {p: module_name(os.path.join(str(root_path), p)) for p in paths}

    def _gen_impl(self, module: cst.Module) -> None:
        sem = Semantic(module, *self._module)
        sites: Dict[cst.CSTNode, Site] = {}
        Walker(sem, [_SiteRecorder(sem, sites)], _raise).walk(module)
        for node, site in sites.items():
            self.set_metadata(node, Resolution(sem, site, node))


class QualifiedNamesProvider(BaseMetadataProvider[FrozenSet[str]]):
    """Every ``Name``, ``Attribute`` and ``Call`` node -> the qualified names it (for a call,
    its callee) can refer to where it stands; empty when unknown."""

    METADATA_DEPENDENCIES = (ResolverProvider,)

    def _gen_impl(self, module: cst.Module) -> None:
        for node, resolution in self.metadata[ResolverProvider].items():
            self.set_metadata(node, resolution.qualnames())


class EngineMetadata:
    """The providers' answers inside npulint's engine, for one file: from the sites its single
    traversal took (:meth:`recorder`), computed when a rule asks. LibCST's ``PositionProvider``
    is answered from the file's positions (``FileContext.span``: the same ranges, generated
    for the statement that holds the node)."""

    def __init__(self, sem: Semantic, span: Callable[[cst.CSTNode], Any]):
        self.sem = sem
        self._span = span
        self.sites: Dict[cst.CSTNode, Site] = {}
        self._resolutions: Dict[cst.CSTNode, Resolution] = {}

    def recorder(self) -> _SiteRecorder:
        return _SiteRecorder(self.sem, self.sites)

    def get(self, key: type, node: cst.CSTNode):
        if key is ResolverProvider:
            r = self._resolutions.get(node)
            if r is None:
                r = self._resolutions[node] = Resolution(self.sem, self.sites[node], node)
            return r
        if key is QualifiedNamesProvider:
            return self.get(ResolverProvider, node).qualnames()
        if key is PositionProvider:
            s = self._span(node)
            return CodeRange(CodePosition(s.line, s.column - 1), CodePosition(s.end_line, s.end_column - 1))
        raise KeyError(f"npulint's engine does not provide {key.__name__}")
