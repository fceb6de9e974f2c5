"""npulint's resolver as LibCST metadata providers (npulint/metadata.py): standalone, through
``MetadataWrapper``, and inside the engine through ``LintRule.get_metadata``."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

from npulint.metadata import QualifiedNamesProvider, Resolution, ResolverProvider


def _calls(module: cst.Module):
    out = []

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            out.append(node)

    module.visit(V())
    return out


def _qualnames_of_calls(src: str, cache=None):
    wrapper = MetadataWrapper(cst.parse_module(textwrap.dedent(src)),
                              cache={ResolverProvider: cache} if cache is not None else {})
    names = wrapper.resolve(QualifiedNamesProvider)
    return [(wrapper.module.code_for_node(c.func), names[c]) for c in _calls(wrapper.module)]


def test_names_through_aliases_and_from_imports():
    got = _qualnames_of_calls("""
        import torch_npu as tn
        from torchair import get_npu_backend as backend
        tn.npu_prefetch(w)
        backend()
    """)
    assert got == [("tn.npu_prefetch", frozenset({"torch_npu.npu_prefetch"})),
                   ("backend", frozenset({"torchair.get_npu_backend"}))]


def _libcst_names(metadata, node):
    value = metadata[node]
    return {q.name for q in (value() if callable(value) else value)}  # LibCST's values may be lazy


def test_where_npulint_and_libcst_name_a_call_differently():
    src = textwrap.dedent("""
        import torch
        import torchair
        torch.compile(m)(x)
        backend = torchair.get_npu_backend
        backend()
    """)
    wrapper = MetadataWrapper(cst.parse_module(src))
    ours = wrapper.resolve(QualifiedNamesProvider)
    theirs = wrapper.resolve(QualifiedNameProvider)
    compiled_call, compile_call, backend_call = _calls(wrapper.module)
    # a call of what torch.compile returned is not a call of torch.compile
    assert _libcst_names(theirs, compiled_call.func) == {"torch.compile"}
    assert ours[compiled_call] == frozenset()
    assert ours[compile_call] == frozenset({"torch.compile"})
    # an alias through an assignment is followed
    assert _libcst_names(theirs, backend_call.func) == {"backend"}  # the local name only
    assert ours[backend_call] == frozenset({"torchair.get_npu_backend"})


def test_a_name_rebound_under_if_has_both_names_and_no_certain_one():
    src = textwrap.dedent("""
        from torchair import get_npu_backend as f
        if cond:
            f = print
        f()
    """)
    wrapper = MetadataWrapper(cst.parse_module(src))
    call = _calls(wrapper.module)[0]
    assert wrapper.resolve(QualifiedNamesProvider)[call] == frozenset({"torchair.get_npu_backend", "builtins.print"})
    resolution = wrapper.resolve(ResolverProvider)[call]
    assert resolution.callee() is None
    assert resolution.resolve(None, {"torchair.get_npu_backend"}) is None


def test_certain_at_this_point_differs_before_and_after_a_rebinding():
    src = textwrap.dedent("""
        from torchair import get_npu_backend as f
        f()
        f = print
        f()
    """)
    wrapper = MetadataWrapper(cst.parse_module(src))
    res = wrapper.resolve(ResolverProvider)
    first, second = _calls(wrapper.module)
    assert res[first].callee() == "torchair.get_npu_backend"
    assert res[second].callee() != "torchair.get_npu_backend"


def test_relative_imports_need_the_module_name_from_the_cache():
    src = """
        from .ops import npu_thing
        npu_thing()
    """
    assert _qualnames_of_calls(src, ("pkg.model", False)) == [("npu_thing", frozenset({"pkg.ops.npu_thing"}))]
    assert _qualnames_of_calls(src) == [("npu_thing", frozenset({"<local>"}))]  # the project's own, unnamed


def test_full_repo_manager_names_the_modules(tmp_path):
    from libcst.metadata import FullRepoManager

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text("from .ops import npu_thing\nnpu_thing()\n")
    manager = FullRepoManager(str(tmp_path), ["pkg/model.py"], {ResolverProvider})
    wrapper = manager.get_metadata_wrapper_for_path("pkg/model.py")
    names = wrapper.resolve(QualifiedNamesProvider)
    call = _calls(wrapper.module)[0]
    assert names[call] == frozenset({"pkg.ops.npu_thing"})


def test_every_name_attribute_and_call_has_a_resolution():
    wrapper = MetadataWrapper(cst.parse_module("import torch\nx = torch.ones(1).sum()\n"))
    res = wrapper.resolve(ResolverProvider)
    kinds = sorted({type(n).__name__ for n in res})
    assert kinds == ["Attribute", "Call", "Name"]
    assert all(isinstance(r, Resolution) for r in res.values())


# -- inside the engine -------------------------------------------------------------------------

def _engine_context(text: str):
    from npulint.checker import FileContext
    from npulint.config import Settings
    from npulint.metadata import EngineMetadata
    from npulint.analyse import _cpython_check
    from npulint.semantic import Walker

    lines = []
    assert _cpython_check(text, lines) is None
    module = cst.parse_module(text)
    ctx = FileContext("x.py", "x.py", text, module, Settings(root="."), set(), top_lines=lines)
    ctx.metadata = EngineMetadata(ctx.sem, ctx.span)
    Walker(ctx.sem, [ctx.metadata.recorder()], None).walk(module)
    return module, ctx


SOURCE = textwrap.dedent("""\
    import torch
    import torch_npu
    from torchair import get_npu_backend, CompilerConfig


    class Net(torch.nn.Module):
        def forward(self, x):
            torch_npu.npu_prefetch(x, None, 1024)  # a comment
            return (x
                    + 1)


    config = CompilerConfig()
    if flag:
        config = None
    backend = get_npu_backend(compiler_config=config)
    model = torch.compile(Net(), backend=backend)
""")


def test_the_engine_answers_as_the_standalone_providers():
    module, ctx = _engine_context(SOURCE)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    names = wrapper.resolve(QualifiedNamesProvider)
    positions = wrapper.resolve(PositionProvider)
    assert len(names) == 26  # the expression names, attributes and calls (not a def's or a keyword's name)
    for node, qualnames in names.items():
        assert ctx.metadata.get(QualifiedNamesProvider, node) == qualnames, wrapper.module.code_for_node(node)
        assert ctx.metadata.get(PositionProvider, node) == positions[node], wrapper.module.code_for_node(node)


def test_get_metadata_asks_only_for_declared_providers():
    from npulint.rules.signature import ApiSignatureMismatch

    _, ctx = _engine_context(SOURCE)
    rule = ApiSignatureMismatch(ctx)
    call = next(c for c in _calls(ctx.module) if isinstance(c.func, cst.Name) and c.func.value == "get_npu_backend")
    assert rule.get_metadata(ResolverProvider, call).callee() == "torchair.get_npu_backend"
    with pytest.raises(KeyError, match="does not declare QualifiedNamesProvider"):
        rule.get_metadata(QualifiedNamesProvider, call)
    assert rule.get_metadata(ResolverProvider, ctx.module.body[0], "none") == "none"  # no metadata: the default
