"""NPU010 api-signature-mismatch for ``npu_weight_prefetch_scope`` and the
``npu_bridge.hccl.hccl_ops`` collectives (RULES.md NPU010; research §D.1, §D.3).

Every source below starts with a newline, so its first code line is line 2.
"""

import pytest

from conftest import codes

# name -> (a call that binds, a call missing a required argument, a call with too many positionals)
HCCL = {
    "allgather": ("w, 8", "w", "w, 8, 'g', 0, -1, 5"),
    "allreduce": ("w, 'sum'", "w", "w, 'sum', 1, -1, 'g', 5"),
    "broadcast": ("w, 0", "w", "w, 0, 2, 0, 'g', 5"),
    "reduce": ("w, 'sum', 0", "w, 'sum'", "w, 'sum', 0, 0, -1, 'g', 5"),
    "reduce_scatter": ("w, 'sum', 8", "w, 'sum'", "w, 'sum', 8, 'g', 0, -1, 5"),
    "send": ("w, 0, 1", "w, 0", "w, 0, 1, 'g', 5"),
    "receive": ("[2, 3], tf.float32, 0, 1", "[2, 3], tf.float32, 0", "[2, 3], tf.float32, 0, 1, 'g', 5"),
    "all_to_all_v": ("x, sc, sd, rc, rd", "x, sc, sd, rc", "x, sc, sd, rc, rd, 'g', 5"),
    "all_to_all_v_c": ("x, m, 0", "x, m", "x, m, 0, 0, -1, 'g', 5"),
}

# every keyword of each signature, to check that a full keyword call binds
KEYWORDS = {
    "allgather": "tensor=w, rank_size=8, group='g', fusion=2, fusion_id=1",
    "allreduce": "tensor=w, reduction='sum', fusion=1, fusion_id=-1, group='g'",
    "broadcast": "tensor=w, root_rank=0, fusion=2, fusion_id=0, group='g'",
    "reduce": "tensor=w, reduction='max', root_rank=0, fusion=0, fusion_id=-1, group='g'",
    "reduce_scatter": "tensor=w, reduction='sum', rank_size=8, group='g', fusion=0, fusion_id=-1",
    "send": "tensor=w, sr_tag=0, dest_rank=1, group='g'",
    "receive": "shape=[2], data_type=tf.float32, sr_tag=0, src_rank=1, group='g'",
    "all_to_all_v": "send_data=x, send_counts=sc, send_displacements=sd, recv_counts=rc, "
                    "recv_displacements=rd, group='g'",
    "all_to_all_v_c": "send_data=x, send_count_matrix=m, rank=0, fusion=0, fusion_id=-1, group='g'",
}

HEAD = "import tensorflow as tf\nfrom npu_bridge.hccl import hccl_ops\n"


def _src(name, args):
    return HEAD + f"out = hccl_ops.{name}({args})\n"


# -- hccl_ops: each collective ---------------------------------------------------------

@pytest.mark.parametrize("name", sorted(HCCL))
def test_hccl_valid_positional_call_is_clean(lint, name):
    assert codes(lint(_src(name, HCCL[name][0]))) == []


@pytest.mark.parametrize("name", sorted(HCCL))
def test_hccl_valid_keyword_call_is_clean(lint, name):
    assert codes(lint(_src(name, KEYWORDS[name]))) == []


@pytest.mark.parametrize("name", sorted(HCCL))
def test_hccl_missing_required_argument(lint, name):
    found = lint(_src(name, HCCL[name][1]))
    assert codes(found) == ["NPU010"]
    assert (found[0].line, found[0].column) == (3, 7)
    assert name in found[0].message


@pytest.mark.parametrize("name", sorted(HCCL))
def test_hccl_too_many_positionals(lint, name):
    found = lint(_src(name, HCCL[name][2]))
    assert codes(found) == ["NPU010"]
    assert (found[0].line, found[0].column) == (3, 7)


@pytest.mark.parametrize("name", sorted(HCCL))
def test_hccl_unknown_keyword(lint, name):
    found = lint(_src(name, HCCL[name][0] + ", group_name='g'"))
    assert codes(found) == ["NPU010"]
    assert (found[0].line, found[0].column) == (3, 7)
    assert "group_name" in found[0].message


def test_allgather_missing_rank_size_message(lint):
    found = lint("""
        from npu_bridge.hccl import hccl_ops
        out = hccl_ops.allgather(w)
    """)
    assert codes(found) == ["NPU010"]
    assert (found[0].line, found[0].column) == (3, 7)
    assert "rank_size" in found[0].message


def test_allgather_argument_given_twice(lint):
    found = lint("""
        from npu_bridge.hccl import hccl_ops
        out = hccl_ops.allgather(w, 8, rank_size=8)
    """)
    assert codes(found) == ["NPU010"]
    assert (found[0].line, found[0].column) == (3, 7)


def test_allgather_keyword_for_required_argument_is_clean(lint):
    found = lint("""
        from npu_bridge.hccl import hccl_ops
        out = hccl_ops.allgather(w, rank_size=8, fusion=2, fusion_id=3)
    """)
    assert codes(found) == []


def test_position_of_a_multi_line_call(lint):
    found = lint("""
        from npu_bridge.hccl import hccl_ops
        def build(w):
            return [
                hccl_ops.reduce_scatter(
                    w,
                    "sum",
                ),
            ]
    """)
    assert codes(found) == ["NPU010"]
    assert (found[0].line, found[0].column) == (5, 9)


# -- aliased imports -------------------------------------------------------------------

@pytest.mark.parametrize("imp, call", [
    ("from npu_bridge.hccl import hccl_ops as hcom", "hcom.allgather(w)"),
    ("from npu_bridge.hccl import hccl_ops", "hccl_ops.allgather(w)"),
    ("from npu_bridge.npu_init import *", "hccl_ops.allgather(w)"),
    ("from npu_bridge.hccl.hccl_ops import allgather", "allgather(w)"),
    ("from npu_bridge.hccl.hccl_ops import allgather as ag", "ag(w)"),
    ("import npu_bridge.hccl.hccl_ops as ops", "ops.allgather(w)"),
    ("import npu_bridge.hccl.hccl_ops", "npu_bridge.hccl.hccl_ops.allgather(w)"),
    ("import npu_bridge.npu_init as ni", "ni.hccl_ops.allgather(w)"),
    ("from npu_bridge import npu_init", "npu_init.hccl_ops.allgather(w)"),
    ("from npu_bridge.npu_init import hccl_ops", "hccl_ops.allgather(w)"),
    ("from npu_bridge.npu_init import *\nhcom = hccl_ops", "hcom.allgather(w)"),
])
def test_aliases_are_resolved(lint, imp, call):
    found = lint(f"{imp}\nout = {call}\n")
    assert codes(found) == ["NPU010"]
    assert (found[0].line, found[0].column) == (imp.count("\n") + 2, 7)


@pytest.mark.parametrize("imp, call", [
    ("from npu_bridge.hccl import hccl_ops as hcom", "hcom.allgather(w, 8)"),
    ("from npu_bridge.npu_init import *", "hccl_ops.allgather(w, 8)"),
    ("from npu_bridge.hccl.hccl_ops import allgather", "allgather(w, 8)"),
    ("import npu_bridge.hccl.hccl_ops as ops", "ops.allgather(w, rank_size=8)"),
])
def test_aliases_clean_twins(lint, imp, call):
    assert codes(lint(f"{imp}\nout = {call}\n")) == []


# -- traps: not the API ----------------------------------------------------------------

def test_third_party_hccl_ops_is_not_the_api(lint):
    found = lint("""
        from mylib import hccl_ops
        out = hccl_ops.allgather(w)
        red = hccl_ops.allreduce(w)
    """)
    assert codes(found) == []


def test_tf2_npu_device_hccl_ops_is_not_the_tf1_api(lint):
    # npu_device.distribute.hccl_ops.allgather(tensor, rank_size, group) has no fusion args
    found = lint("""
        from npu_device.distribute import hccl_ops
        out = hccl_ops.allgather(w)
    """)
    assert codes(found) == []


def test_local_function_with_the_same_name_is_not_the_api(lint):
    found = lint("""
        from npu_bridge.npu_init import *
        def allgather(x):
            return x
        out = allgather(w)
    """)
    assert codes(found) == []


def test_local_definition_shadowing_the_import_is_not_the_api(lint):
    found = lint("""
        from npu_bridge.hccl.hccl_ops import allgather
        def allgather(x):
            return x
        out = allgather(w)
    """)
    assert codes(found) == []


def test_local_class_named_hccl_ops_is_not_the_api(lint):
    found = lint("""
        class hccl_ops:
            @staticmethod
            def allgather(x):
                return x
        out = hccl_ops.allgather(w)
    """)
    assert codes(found) == []


def test_parameter_named_hccl_ops_is_not_the_api(lint):
    found = lint("""
        from npu_bridge.hccl import hccl_ops
        def build(hccl_ops, w):
            return hccl_ops.allgather(w)
    """)
    assert codes(found) == []


def test_name_bound_to_different_modules_under_if_is_not_resolved(lint):
    found = lint("""
        if USE_NPU:
            from npu_bridge.hccl import hccl_ops
        else:
            from mylib import hccl_ops
        out = hccl_ops.allgather(w)
    """)
    assert codes(found) == []


def test_undefined_hcom_is_not_resolved(lint):
    found = lint("""
        out = hcom.allgather(w)
        out2 = hccl_ops.allgather(w)
    """)
    assert codes(found) == []


def test_uncatalogued_hccl_function_is_not_checked(lint):
    found = lint("""
        from npu_bridge.hccl import hccl_ops
        out = hccl_ops.remote_read(r)
    """)
    assert codes(found) == []


# -- spreads ---------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    "*args",
    "w, *args",
    "**kw",
    "w, **kw",
    "*args, rank_size=8",
])
def test_spreads_that_cannot_be_bound_are_not_reported(lint, args):
    assert codes(lint(f"from npu_bridge.hccl import hccl_ops\nout = hccl_ops.allgather({args})\n")) == []


def test_unknown_keyword_is_reported_even_with_a_spread(lint):
    found = lint("""
        from npu_bridge.hccl import hccl_ops
        out = hccl_ops.allgather(w, 8, group_name='g', **kw)
    """)
    assert codes(found) == ["NPU010"]


# -- npu_weight_prefetch_scope ---------------------------------------------------------

@pytest.mark.parametrize("args", [
    "",
    "1",
    "1, 1024",
    "buffer_pool_id=1",
    "buffer_pool_size=1024",
    "buffer_pool_size=1024, buffer_pool_id=1",
    "1, buffer_pool_size=1024",
    "*args",
    "**kw",
])
def test_prefetch_scope_valid_calls(lint, args):
    src = ("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
           f"with npu_weight_prefetch_scope({args}):\n    pass\n")
    assert codes(lint(src, select=["NPU010"])) == []


@pytest.mark.parametrize("args, word", [
    ("0, 1024, 5", "positional"),
    ("pool_id=1", "pool_id"),
    ("buffer_pool_id=0, size=1024", "size"),
    ("0, buffer_pool_id=1", "buffer_pool_id"),
])
def test_prefetch_scope_invalid_calls(lint, args, word):
    src = ("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
           f"with npu_weight_prefetch_scope({args}):\n    pass\n")
    found = lint(src)
    assert codes(found) == ["NPU010"]
    assert (found[0].line, found[0].column) == (2, 6)
    assert word in found[0].message


@pytest.mark.parametrize("imp, call", [
    ("import npu_bridge.estimator.npu.npu_scope as s", "s.npu_weight_prefetch_scope(0, 1024, 5)"),
    ("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p", "p(0, 1024, 5)"),
    ("from npu_bridge.npu_init import *", "npu_scope.npu_weight_prefetch_scope(0, 1024, 5)"),
    ("from npu_bridge.estimator.npu import npu_scope", "npu_scope.npu_weight_prefetch_scope(pool=1)"),
])
def test_prefetch_scope_aliases(lint, imp, call):
    found = lint(f"{imp}\nwith {call}:\n    pass\n")
    assert codes(found) == ["NPU010"]
    assert (found[0].line, found[0].column) == (2, 6)


def test_prefetch_scope_call_outside_with_is_checked(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        scope = p(0, 1024, 5)
    """)
    assert codes(found) == ["NPU010"]
    assert (found[0].line, found[0].column) == (3, 9)


def test_prefetch_scope_local_function_is_not_the_api(lint):
    found = lint("""
        import contextlib
        @contextlib.contextmanager
        def npu_weight_prefetch_scope(a, b, c):
            yield
        with npu_weight_prefetch_scope(0, 1024, 5):
            pass
    """)
    assert codes(found) == []


def test_prefetch_scope_third_party_is_not_the_api(lint):
    found = lint("""
        from mylib import npu_weight_prefetch_scope
        from mylib import npu_scope
        with npu_weight_prefetch_scope(0, 1024, 5):
            pass
        with npu_scope.npu_weight_prefetch_scope(pool=1):
            pass
    """)
    assert codes(found) == []


# -- the vendor example (docs/000) -----------------------------------------------------

DOC_EXAMPLE_BODY = """
...

with npu_weight_prefetch_scope():
    # The output memory of AllGather uses the default buffer pool.
    global_weight1 = hcom.allgather(local_weight1)

...

with npu_weight_prefetch_scope(1, 268435456): # 256 MB: 256 x 1024 x 1024
    # The output memory of AllGather uses the 256 MB buffer pool indexed 1.
    global_weight2 = hcom.allgather(local_weight2)
"""


def test_doc_example_with_undefined_hcom_is_clean(lint):
    src = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n" + DOC_EXAMPLE_BODY
    assert codes(lint(src)) == []


def test_doc_example_with_hcom_import_reports_the_missing_rank_size(lint):
    src = ("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
           "from npu_bridge.hccl import hccl_ops as hcom\n" + DOC_EXAMPLE_BODY)
    found = lint(src)
    assert codes(found) == ["NPU010", "NPU010"]
    assert [(f.line, f.column) for f in found] == [(8, 22), (14, 22)]
    assert all("rank_size" in f.message for f in found)


def test_doc_example_fixed_is_clean(lint):
    src = ("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
           "from npu_bridge.hccl import hccl_ops as hcom\n"
           + DOC_EXAMPLE_BODY.replace("(local_weight1)", "(local_weight1, 8)")
                             .replace("(local_weight2)", "(local_weight2, 8)"))
    assert codes(lint(src)) == []


# -- noqa ------------------------------------------------------------------------------

def test_noqa_suppresses(lint):
    found = lint("""
        from npu_bridge.hccl import hccl_ops
        out = hccl_ops.allgather(w)  # noqa: NPU010
        out2 = hccl_ops.allgather(w)  # noqa: NPU101
    """)
    assert codes(found) == ["NPU010"]
    assert found[0].line == 4


def test_later_unknown_star_import_may_rebind_the_name(lint):
    # `from mylib import *` runs after the npu_init star import and may rebind hccl_ops:
    # the name no longer certainly refers to npu_bridge.hccl.hccl_ops
    found = lint("""
        from npu_bridge.npu_init import *
        from mylib import *
        out = hccl_ops.allgather(w)
    """)
    assert codes(found) == []


def test_earlier_unknown_star_import_is_overridden(lint):
    found = lint("""
        from mylib import *
        from npu_bridge.npu_init import *
        out = hccl_ops.allgather(w)
    """)
    assert codes(found) == ["NPU010"]


def test_npu010_get_npu_backend_is_keyword_only(lint):
    found = lint("""
        import torchair
        cfg = torchair.CompilerConfig()
        backend = torchair.get_npu_backend(cfg)
        ok = torchair.get_npu_backend(compiler_config=cfg)
    """, select=["NPU010"])
    assert [(f.code, f.line) for f in found] == [("NPU010", 4)]
    assert "keyword-only" in found[0].message or "positional" in found[0].message


def test_npu010_compiler_config_takes_no_arguments(lint):
    found = lint("""
        from torchair.configs.compiler_config import CompilerConfig
        cfg = CompilerConfig(mode="reduce-overhead")
    """, select=["NPU010"])
    assert [(f.code, f.line) for f in found] == [("NPU010", 3)]


SWITCH = """
    from torchair.scope import npu_stream_switch as switch
    with switch("1", 0, enable_inner_parallel=False):
        pass
"""


def _torchair_releases(*names):
    return "[tool.npulint.releases]\ntorchair = [" + ", ".join(f'"{n}"' for n in names) + "]\n"


def test_npu010_torchair_signature_by_release(lint):
    # master's npu_stream_switch takes enable_inner_parallel; 7.1.0 to 26.0.0 do not
    assert lint(SWITCH, select=["NPU010"]) == []  # every release: master accepts it
    assert lint(SWITCH, select=["NPU010"], config=_torchair_releases("master")) == []
    (f,) = lint(SWITCH, select=["NPU010"], config=_torchair_releases("7.2.0", "26.0.0"))
    assert f.message == (
        "scope.npu_stream_switch() got an unexpected keyword argument 'enable_inner_parallel': the call raises "
        "TypeError when it runs (signature: npu_stream_switch(stream_tag, stream_priority=0); torchair 7.1.0 to "
        "26.0.0: Ascend/torchair@7c6c754b python/torchair/scope/__init__.py:22)")
    assert lint(SWITCH, select=["NPU010"], config=_torchair_releases("26.0.0", "master")) == []


def test_npu010_a_call_every_release_rejects_names_them(lint):
    (f,) = lint("import torchair as tng\nb = tng.npu_fx_compiler.get_npu_backend(aot_config=None)\n",
                select=["NPU010"])
    assert f.message.endswith("(signature: get_npu_backend(*, compiler_config=None, custom_decompositions={}); "
                              "torchair 7.1.0 to master: Ascend/torchair@fced8842 python/torchair/npu_fx_compiler.py:890)")


def test_npu010_quotes_an_error_only_for_the_releases_that_give_it(lint):
    # four positionals: master takes at most 3, 7.1.0 to 26.0.0 at most 2
    code = "import torchair\nwith torchair.scope.npu_stream_switch('1', 0, True, 4):\n    pass\n"
    (f,) = lint(code, select=["NPU010"])  # every release
    assert f.message.startswith("scope.npu_stream_switch() takes at most 3 positional arguments")
    assert "; torchair master: Ascend/torchair@fced8842" in f.message
    assert f.message.endswith("; torchair 7.1.0 to 26.0.0 rejects it too (another signature))")
    (f,) = lint(code, select=["NPU010"], config=_torchair_releases("7.3.0"))
    assert f.message.startswith("scope.npu_stream_switch() takes at most 2 positional arguments")
    assert "; torchair 7.1.0 to 26.0.0: Ascend/torchair@" in f.message
    assert f.message.endswith("; torchair master rejects it too (another signature))")


def test_npu010_torchair_signatures_are_each_release_s_own():
    from npulint.rules.signature import TORCHAIR
    from npulint.releases import known

    assert set(TORCHAIR["torchair.get_npu_backend"]) == set(known("torchair"))
    texts = {r: t for r, (_, t, _) in TORCHAIR["torchair.scope.npu_stream_switch"].items()}
    assert texts["master"].endswith("enable_inner_parallel=True)") and "enable_inner" not in texts["7.3.0"]
    assert "7.1.0" not in TORCHAIR["torchair.ops.npu_create_tagged_event"]  # 7.2.0 on
