"""NPU101-NPU105: TensorFlow weight prefetch buffer pools (RULES.md, NPU1xx).

Every source below starts with a newline, so its first code line is line 2.
"""

import pytest

from conftest import codes

IMPORT_P = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"


# ======================================================================================
# NPU101 prefetch-pool-size-mismatch
# ======================================================================================

def test_npu101_default_scope_vs_explicit_pool0_size(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        with npu_weight_prefetch_scope():
            a = 1
        with npu_weight_prefetch_scope(0, 268435456):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    f = found[0]
    assert (f.path, f.line, f.column) == ("t.py", 5, 6)
    assert "line 3" in f.message


def test_npu101_clean_twin_same_size(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        with npu_weight_prefetch_scope():
            a = 1
        with npu_weight_prefetch_scope(0, 536870912):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_different_ids_are_different_pools(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        with npu_weight_prefetch_scope():
            a = 1
        with npu_weight_prefetch_scope(1, 268435456):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_default_size_with_explicit_id(lint):
    # npu_weight_prefetch_scope(1) is pool 1 of 536870912 bytes
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        with npu_weight_prefetch_scope(1):
            a = 1
        with npu_weight_prefetch_scope(buffer_pool_id=1, buffer_pool_size=1024):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert (found[0].line, found[0].column) == (5, 6)


def test_npu101_default_id_with_keyword_size(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        with npu_weight_prefetch_scope(0, 1024):
            a = 1
        with npu_weight_prefetch_scope(buffer_pool_size=1024):
            b = 2
        with npu_weight_prefetch_scope(buffer_pool_size=2048):
            c = 3
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert found[0].line == 7


def test_npu101_every_scope_differing_from_the_first_is_reported(lint):
    # A(size1), B(size2), C(size2): B and C differ from A, the first one seen
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        with npu_weight_prefetch_scope(2, 1024):
            a = 1
        with npu_weight_prefetch_scope(2, 2048):
            b = 2
        with npu_weight_prefetch_scope(2, 2048):
            c = 3
        with npu_weight_prefetch_scope(2, 1024):
            d = 4
    """, select=["NPU101"])
    assert codes(found) == ["NPU101", "NPU101"]
    assert [(f.line, f.column) for f in found] == [(5, 6), (7, 6)]
    assert all("line 3" in f.message for f in found)


# -- aliased imports -------------------------------------------------------------------

def test_npu101_module_alias(lint):
    found = lint("""
        import npu_bridge.estimator.npu.npu_scope as s
        with s.npu_weight_prefetch_scope(0, 1024):
            a = 1
        with s.npu_weight_prefetch_scope(0, 2048):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert (found[0].line, found[0].column) == (5, 6)


def test_npu101_function_alias(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        with p(0, 1024):
            a = 1
        with p(0, 2048):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert (found[0].line, found[0].column) == (5, 6)


def test_npu101_star_import_of_npu_init(lint):
    found = lint("""
        from npu_bridge.npu_init import *
        with npu_scope.npu_weight_prefetch_scope(0, 1024):
            a = 1
        with npu_scope.npu_weight_prefetch_scope(0, 2048):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert (found[0].line, found[0].column) == (5, 6)


def test_npu101_fully_qualified_attribute_chain(lint):
    found = lint("""
        import npu_bridge.estimator.npu.npu_scope
        with npu_bridge.estimator.npu.npu_scope.npu_weight_prefetch_scope(0, 1024):
            a = 1
        with npu_bridge.estimator.npu.npu_scope.npu_weight_prefetch_scope(0, 2048):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]


def test_npu101_with_several_items(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        with p(0, 1024):
            a = 1
        with tf.name_scope("x"), p(0, 2048):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert (found[0].line, found[0].column) == (6, 26)


def test_npu101_two_scopes_in_one_with_statement(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        with p(0, 1024), p(0, 2048):
            pass
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert (found[0].line, found[0].column) == (3, 18)


# -- traps: not the API ----------------------------------------------------------------

def test_npu101_local_function_with_the_same_name_is_not_the_api(lint):
    found = lint("""
        import contextlib
        @contextlib.contextmanager
        def npu_weight_prefetch_scope(buffer_pool_id=0, buffer_pool_size=1):
            yield
        with npu_weight_prefetch_scope():
            a = 1
        with npu_weight_prefetch_scope(0, 1024):
            b = 2
    """)
    assert codes(found) == []


def test_npu101_local_function_shadowing_the_import_is_not_the_api(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        def npu_weight_prefetch_scope(buffer_pool_id=0, buffer_pool_size=1):
            return open("x")
        with npu_weight_prefetch_scope():
            a = 1
        with npu_weight_prefetch_scope(0, 1024):
            b = 2
    """)
    assert codes(found) == []


def test_npu101_third_party_wrapper_is_not_the_api(lint):
    found = lint("""
        from mylib import npu_weight_prefetch_scope
        from mylib import npu_scope
        with npu_weight_prefetch_scope():
            a = 1
        with npu_weight_prefetch_scope(0, 1024):
            b = 2
        with npu_scope.npu_weight_prefetch_scope(0, 2048):
            c = 3
    """)
    assert codes(found) == []


# -- values ----------------------------------------------------------------------------

def test_npu101_module_constants_and_arithmetic(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        MB = 1024 * 1024
        POOL = 1
        with p(POOL, 256 * MB):
            a = 1
        with p(1, 1 << 28):
            b = 2
        with p(POOL, 2 ** 27):
            c = 3
    """, select=["NPU101"])
    # 256 * MB == 1 << 28 == 268435456; 2 ** 27 differs
    assert codes(found) == ["NPU101"]
    assert (found[0].line, found[0].column) == (9, 6)


def test_npu101_power_constant_equals_literal_is_clean(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 2**28
        with p(1, SIZE):
            a = 1
        with p(1, 268435456):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_augmented_assignment_in_straight_line_code(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 2**27
        SIZE *= 2
        with p(1, SIZE):
            a = 1
        with p(1, 1 << 27):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert found[0].line == 7
    assert "268435456" in found[0].message and "134217728" in found[0].message


def test_npu101_augmented_assignment_clean_twin(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 2**27
        SIZE *= 2
        with p(1, SIZE):
            a = 1
        with p(1, 1 << 28):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_straight_line_rebinding_is_resolved_at_each_use(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 1024
        with p(0, SIZE):
            a = 1
        SIZE = 2048
        with p(0, SIZE):
            b = 2
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert found[0].line == 7


def test_npu101_function_local_constants(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        def build():
            mb = 1024 * 1024
            size = 128 * mb
            with p(3, size):
                pass
        def other():
            with p(3, 1 << 28):
                pass
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert (found[0].line, found[0].column) == (9, 10)


def test_npu101_function_uses_module_constant(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        MB = 1024 * 1024
        def build():
            with p(0, 256 * MB):
                pass
        with p(0, 268435456):
            pass
    """, select=["NPU101"])
    assert codes(found) == []


# -- unknown values are not compared ---------------------------------------------------

def test_npu101_parameter_is_unknown(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        def build(size, pool=0):
            with p(pool, size):
                pass
            with p(0, size):
                pass
        with p(0, 1024):
            pass
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_name_rebound_under_if_is_unknown(lint):
    found = lint("""
        import sys
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 1024
        if len(sys.argv) > 1:
            SIZE = 2048
        with p(0, SIZE):
            pass
        with p(0, 4096):
            pass
    """, select=["NPU101"])
    # the first scope's size is unknown, so only 4096 is known for pool 0: nothing to compare
    assert codes(found) == []


@pytest.mark.parametrize("rebind", [
    "for _ in range(2):\n    SIZE = 2048\n",
    "while cond():\n    SIZE = 2048\n",
    "try:\n    SIZE = 2048\nexcept ImportError:\n    pass\n",
    "try:\n    import foo\nexcept ImportError:\n    SIZE = 2048\n",
])
def test_npu101_name_rebound_under_loop_or_try_is_unknown(lint, rebind):
    src = IMPORT_P + "SIZE = 1024\n" + rebind + (
        "with npu_weight_prefetch_scope(0, SIZE):\n    pass\n"
        "with npu_weight_prefetch_scope(0, 4096):\n    pass\n")
    assert codes(lint(src, select=["NPU101"])) == []


@pytest.mark.parametrize("expr", [
    "cfg.pool_size",
    "get_pool_size()",
    "int(os.environ['POOL_SIZE'])",
    "int(os.environ.get('POOL_SIZE', '1024'))",
    "int(os.getenv('POOL_SIZE'))",
    "sizes[i]",
])
def test_npu101_unknown_expressions_are_not_compared(lint, expr):
    src = "import os\n" + IMPORT_P + (
        f"with npu_weight_prefetch_scope(0, {expr}):\n    pass\n"
        "with npu_weight_prefetch_scope(0, 4096):\n    pass\n")
    assert codes(lint(src, select=["NPU101"])) == []


def test_npu101_loop_variable_is_unknown(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        for size in (1024, 2048):
            with p(0, size):
                pass
        with p(0, 4096):
            pass
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_loop_variable_used_after_the_loop_is_unknown(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        for size in (1024, 2048):
            pass
        with p(0, size):
            pass
        with p(0, 4096):
            pass
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_parameter_shadowing_a_module_constant_is_unknown(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 1024
        def build(SIZE):
            with p(0, SIZE):
                pass
        with p(0, 2048):
            pass
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_function_local_shadowing_a_module_constant(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 1024
        def build():
            SIZE = 2048
            with p(0, SIZE):
                pass
        with p(0, SIZE):
            pass
    """, select=["NPU101"])
    # the function-local SIZE (2048, line 6) is the first scope seen for pool 0; line 8 uses the module SIZE
    assert codes(found) == ["NPU101"]
    assert found[0].line == 8


def test_npu101_module_name_reassigned_through_global_is_unknown(lint):
    # SIZE is bound twice at module level (once through `global` in setup()): its value at
    # the first scope depends on whether setup() ran, so it is unknown there
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 1024
        def setup():
            global SIZE
            SIZE = 4096
        with p(0, SIZE):
            pass
        with p(0, 1024):
            pass
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_augmented_assignment_under_if_is_unknown(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 1024
        if big:
            SIZE *= 2
        with p(0, SIZE):
            pass
        with p(0, 1024):
            pass
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_augmented_assignment_in_loop_is_unknown(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 1024
        for _ in range(3):
            SIZE *= 2
        with p(0, SIZE):
            pass
        with p(0, 1024):
            pass
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_augmented_assignment_between_two_uses(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 1024
        with p(0, SIZE):
            pass
        SIZE *= 2
        with p(0, SIZE):
            pass
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert (found[0].line, found[0].column) == (7, 6)


def test_npu101_tuple_of_constants(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        POOL, SIZE = 1, 1024
        with p(POOL, SIZE):
            pass
        with p(1, 2048):
            pass
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert found[0].line == 6


def test_npu101_spread_arguments_are_unknown(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        with p(0, 1024):
            pass
        with p(*args):
            pass
        with p(0, **kw):
            pass
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_unknown_pool_id_is_not_compared(lint):
    found = lint("""
        import os
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        with p(int(os.environ["POOL"]), 1024):
            pass
        with p(0, 2048):
            pass
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_python_loop_around_scope_same_size_is_clean(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        for i in range(4):
            with p(0, 1024):
                pass
    """, select=["NPU101"])
    assert codes(found) == []


# -- cross-file ------------------------------------------------------------------------

def test_npu101_cross_file_reported_in_later_file_naming_the_first(lint):
    found = lint({
        "a.py": """
            from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
            with npu_weight_prefetch_scope(1, 268435456):
                pass
        """,
        "b.py": """
            import npu_bridge.estimator.npu.npu_scope as s
            x = 1
            with s.npu_weight_prefetch_scope(1, 134217728):
                pass
        """,
        "train.py": 'import a\nimport b\n',
    }, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    f = found[0]
    assert (f.path, f.line, f.column) == ("b.py", 4, 6)
    assert "a.py:3:6" in f.message


def test_npu101_cross_file_clean_twin(lint):
    found = lint({
        "a.py": """
            from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
            with npu_weight_prefetch_scope(1, 268435456):
                pass
        """,
        "pkg/b.py": """
            import npu_bridge.estimator.npu.npu_scope as s
            with s.npu_weight_prefetch_scope(1, 256 * 1024 * 1024):
                pass
        """,
    }, select=["NPU101"])
    assert codes(found) == []


def test_npu101_cross_file_order_is_sorted_path_order_not_insertion(lint):
    found = lint({
        "z.py": """
            from npu_bridge.npu_init import *
            with npu_scope.npu_weight_prefetch_scope():
                pass
        """,
        "a.py": """
            from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
            with p(0, 1024):
                pass
        """,
        "train.py": 'import a\nimport z\n',
    }, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    f = found[0]
    assert (f.path, f.line, f.column) == ("z.py", 3, 6)
    assert "a.py:3:6" in f.message


def test_npu101_cross_file_three_scopes(lint):
    # A(size1) in a.py, B(size2) and C(size2) in b.py: B and C are reported
    found = lint({
        "a.py": IMPORT_P + "with npu_weight_prefetch_scope(4, 1024):\n    pass\n",
        "b.py": IMPORT_P + ("with npu_weight_prefetch_scope(4, 2048):\n    pass\n"
                            "with npu_weight_prefetch_scope(4, 2048):\n    pass\n"
                            "with npu_weight_prefetch_scope(4, 1024):\n    pass\n"),
        "train.py": 'import a\nimport b\n',
    }, select=["NPU101"])
    assert codes(found) == ["NPU101", "NPU101"]
    assert [(f.path, f.line) for f in found] == [("b.py", 2), ("b.py", 4)]
    assert all("a.py:2:6" in f.message for f in found)


def test_npu101_cross_file_mismatch_within_first_file_too(lint):
    found = lint({
        "a.py": IMPORT_P + ("with npu_weight_prefetch_scope(4, 1024):\n    pass\n"
                            "with npu_weight_prefetch_scope(4, 2048):\n    pass\n"),
        "b.py": IMPORT_P + "with npu_weight_prefetch_scope(4, 2048):\n    pass\n",
        "train.py": 'import a\nimport b\n',
    }, select=["NPU101"])
    assert [(f.path, f.line, f.code) for f in found] == [("a.py", 4, "NPU101"), ("b.py", 2, "NPU101")]
    assert "a.py:2:6" in found[1].message


def test_npu101_cross_file_module_constants(lint):
    found = lint({
        "a.py": """
            from npu_bridge.npu_init import *
            MB = 1024 * 1024
            with npu_scope.npu_weight_prefetch_scope(1, 256 * MB):
                pass
            import b  # a.py imports b.py: one program
        """,
        "b.py": """
            from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
            SIZE = 2**27
            with p(1, SIZE):
                pass
        """,
    }, select=["NPU101"])
    assert [(f.path, f.line, f.column) for f in found] == [("b.py", 4, 6)]


# -- only scopes that can meet in one graph ---------------------------------------------

BRANCHES = """
    import tensorflow as tf
    from npu_bridge.npu_init import *


    def model_fn(features, labels, mode, params):
        w = tf.get_variable("w", shape=[4096, 1024], dtype=tf.float16)
        if params["large_pool"]:
            with npu_scope.npu_weight_prefetch_scope(1, 1024 * 1024 * 1024):
                gw = hccl_ops.allgather(w, 8)
        else:
            with npu_scope.npu_weight_prefetch_scope(1, 256 * 1024 * 1024):
                gw = hccl_ops.allgather(w, 8)
        return gw
"""


def test_npu101_scopes_in_the_two_arms_of_one_if_never_meet(lint):
    # only one arm runs per graph build: the two pools never share a graph
    assert codes(lint(BRANCHES, select=["NPU101"])) == []
    assert codes(lint(BRANCHES.replace("else:", "elif mode:"), select=["NPU101"])) == []


@pytest.mark.parametrize("change,line", [
    (("    else:\n", "    if not params['large_pool']:\n"), 12),  # two ifs: both may run
    (("        return gw\n", "        with npu_scope.npu_weight_prefetch_scope(1, 256 * 1024 * 1024):\n"
                               "            gw = hccl_ops.allgather(gw, 8)\n        return gw\n"), 14),  # after the if
])
def test_npu101_scopes_that_may_both_run_are_compared(lint, change, line):
    found = lint(BRANCHES.replace(*change), select=["NPU101"])
    assert [(f.code, f.line) for f in found] == [("NPU101", line)]
    assert "at line 9" in found[0].message


def test_npu101_the_arms_of_an_if_in_a_loop_may_take_turns(lint):
    src = """
        from npu_bridge.npu_init import *
        for large in (True, False):
            if large:
                with npu_scope.npu_weight_prefetch_scope(1, 1024):
                    pass
            else:
                with npu_scope.npu_weight_prefetch_scope(1, 2048):
                    pass
    """
    assert [f.line for f in lint(src, select=["NPU101"])] == [8]


ZOO = {
    "zoo/model_a/train.py": IMPORT_P + "def build(w):\n    with npu_weight_prefetch_scope():\n        return w\n",
    "zoo/model_b/train.py": IMPORT_P + "def build(w):\n    with npu_weight_prefetch_scope(0, 268435456):\n"
                                       "        return w\n",
}


def test_npu101_unrelated_programs_of_one_tree_are_not_compared(lint):
    # a model zoo: two training scripts that no file of the run imports together
    assert codes(lint(ZOO, select=["NPU101"])) == []
    common = {"zoo/common/__init__.py": "", "zoo/common/util.py": "def log(x):\n    print(x)\n"}
    both_use = {path: "from common import util\n" + text for path, text in ZOO.items()}
    assert codes(lint({**both_use, **common}, select=["NPU101"])) == []  # a shared module does not join them


@pytest.mark.parametrize("driver", [
    "zoo/run_all.py", "zoo/bench/run_all.py",
])
def test_npu101_two_modules_one_program_imports_are_compared(lint, driver):
    files = {"zoo/model_a/__init__.py": "", "zoo/model_a/train.py": ZOO["zoo/model_a/train.py"],
             "zoo/model_b/__init__.py": "", "zoo/model_b/train.py": ZOO["zoo/model_b/train.py"]}
    assert codes(lint(files, select=["NPU101"])) == []
    found = lint({**files, driver: "from model_a import train as a\nimport model_b.train\n"}, select=["NPU101"])
    if driver == "zoo/run_all.py":
        assert [(f.path, f.line) for f in found] == [("zoo/model_b/train.py", 3)]
    else:  # bench/run_all.py names model_a from another root folder: some other model_a may be found
        assert [(f.path, f.line) for f in found] in ([], [("zoo/model_b/train.py", 3)])


def test_npu101_a_module_and_what_it_imports_are_compared(lint):
    files = {"pkg/__init__.py": "", "pkg/layers.py": IMPORT_P + "with npu_weight_prefetch_scope(0, 1024):\n    pass\n",
             "pkg/model.py": IMPORT_P + "from . import layers\nwith npu_weight_prefetch_scope(0, 2048):\n    pass\n"}
    assert [(f.path, f.line) for f in lint(files, select=["NPU101"])] == [("pkg/model.py", 3)]
    # through a third module of the run, and through the package's __init__
    files["pkg/model.py"] = IMPORT_P + "import pkg.mid\nwith npu_weight_prefetch_scope(0, 2048):\n    pass\n"
    files["pkg/mid.py"] = "from pkg.layers import *\n"
    assert [(f.path, f.line) for f in lint(files, select=["NPU101"])] == [("pkg/model.py", 3)]
    files["pkg/mid.py"] = "X = 1\n"
    assert codes(lint(files, select=["NPU101"])) == []
    files["pkg/__init__.py"] = "from . import layers\n"  # importing pkg.mid runs pkg/__init__.py first
    assert [(f.path, f.line) for f in lint(files, select=["NPU101"])] == [("pkg/model.py", 3)]


def test_npu101_two_unrelated_scripts_are_not_compared(lint):
    found = lint({"t04.py": IMPORT_P + "with npu_weight_prefetch_scope():\n    pass\n",
                  "t06.py": IMPORT_P + "with npu_weight_prefetch_scope(0, 268435456):\n    pass\n"}, select=["NPU101"])
    assert codes(found) == []


def test_npu101_cross_file_third_party_file_is_ignored(lint):
    found = lint({
        "a.py": IMPORT_P + "with npu_weight_prefetch_scope(0, 1024):\n    pass\n",
        "b.py": "from mylib import npu_weight_prefetch_scope\n"
                "with npu_weight_prefetch_scope(0, 2048):\n    pass\n",
    }, select=["NPU101"])
    assert codes(found) == []


# -- noqa ------------------------------------------------------------------------------

def test_npu101_noqa_on_reported_line_suppresses(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        with p(0, 1024):
            pass
        with p(0, 2048):  # noqa: NPU101
            pass
    """, select=["NPU101"])
    assert codes(found) == []


def test_npu101_noqa_for_another_code_does_not_suppress(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        with p(0, 1024):
            pass
        with p(0, 2048):  # noqa: NPU102
            pass
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]


def test_npu101_noqa_on_first_location_does_not_suppress(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        with p(0, 1024):  # noqa: NPU101
            pass
        with p(0, 2048):
            pass
    """, select=["NPU101"])
    assert codes(found) == ["NPU101"]
    assert found[0].line == 5


def test_npu101_cross_file_noqa_in_later_file(lint):
    found = lint({
        "a.py": IMPORT_P + "with npu_weight_prefetch_scope(0, 1024):\n    pass\n",
        "b.py": IMPORT_P + "with npu_weight_prefetch_scope(0, 2048):  # noqa: NPU101\n    pass\n",
    }, select=["NPU101"])
    assert codes(found) == []


def test_npu101_call_that_does_not_bind_is_not_compared(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        with p(0, 1024):
            pass
        with p(0, 2048, 5):
            pass
    """)
    assert codes(found) == ["NPU010"]


# ======================================================================================
# NPU102 prefetch-in-control-flow
# ======================================================================================

def test_npu102_function_passed_to_tf_cond(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        def branch():
            with npu_scope.npu_weight_prefetch_scope():
                return hccl_ops.allgather(w, 8)
        out = tf.cond(pred, branch, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (5, 10)


def test_npu102_clean_twin_scope_outside_cond(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        def branch():
            return hccl_ops.allgather(w, 8)
        with npu_scope.npu_weight_prefetch_scope():
            g = hccl_ops.allgather(w, 8)
        out = tf.cond(pred, branch, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == []


def test_npu102_function_defined_but_never_passed_is_clean(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        def branch():
            with npu_scope.npu_weight_prefetch_scope():
                return hccl_ops.allgather(w, 8)
        out = tf.cond(pred, lambda: w, lambda: w)
        g = branch()
    """, select=["NPU102"])
    assert codes(found) == []


@pytest.mark.parametrize("if_for_while", [
    "for i in range(4):\n",
    "if use_prefetch:\n",
    "while i < 4:\n",
])
def test_npu102_python_control_flow_is_not_graph_control_flow(lint, if_for_while):
    src = ("from npu_bridge.npu_init import *\n" + if_for_while
           + "    with npu_scope.npu_weight_prefetch_scope():\n"
             "        g = hccl_ops.allgather(w, 8)\n")
    assert codes(lint(src, select=["NPU102"])) == []


def test_npu102_python_loop_inside_graph_building_function_is_clean(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        from npu_bridge.hccl import hccl_ops
        def build(layers):
            outs = []
            for w in layers:
                if w is not None:
                    with npu_weight_prefetch_scope(1, 1 << 28):
                        outs.append(hccl_ops.allgather(w, 8))
            return outs
        build(ws)
    """, select=["NPU102"])
    assert codes(found) == []


@pytest.mark.parametrize("call", [
    "tf.cond(pred, branch, lambda: w)",
    "tf.cond(pred, true_fn=branch, false_fn=lambda: w)",
    "tf.cond(pred, lambda: w, branch)",
    "tf.compat.v1.cond(pred, branch, lambda: w)",
    "tf.while_loop(lambda i: i < 4, branch, [0])",
    "tf.while_loop(cond=lambda i: i < 4, body=branch, loop_vars=[0])",
    "tf.map_fn(branch, elems)",
    "tf.scan(branch, elems)",
    "tf.foldl(branch, elems)",
    "tf.foldr(branch, elems)",
    "tf.case([(p1, branch), (p2, lambda: w)], default=lambda: w)",
    "tf.case([(p1, lambda: w)], default=branch)",
    "tf.switch_case(idx, branch_fns=[branch, lambda: w])",
    "tf.switch_case(idx, [lambda: w, branch])",
    "tf.switch_case(idx, branch_fns={0: branch, 1: lambda: w})",
    "tf.function(branch)",
])
def test_npu102_function_passed_to_graph_control_flow(lint, call):
    src = ("import tensorflow as tf\n"
           "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
           "def branch(*args):\n"
           "    with npu_weight_prefetch_scope():\n"
           "        return w\n"
           f"out = {call}\n")
    found = lint(src, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (4, 10)


def test_npu102_compat_v1_module_alias(lint):
    found = lint("""
        import tensorflow.compat.v1 as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        def body(i):
            with p(1, 1 << 28):
                return i + 1
        r = tf.while_loop(lambda i: i < 4, body, [0])
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (5, 10)


def test_npu102_from_import_of_cond(lint):
    found = lint("""
        from tensorflow import cond as tf_cond
        import npu_bridge.estimator.npu.npu_scope as s
        def branch():
            with s.npu_weight_prefetch_scope():
                return w
        out = tf_cond(pred, branch, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]


def test_npu102_npu_init_binds_tf(lint):
    found = lint("""
        from npu_bridge.npu_init import *
        def branch():
            with npu_scope.npu_weight_prefetch_scope():
                return hccl_ops.allgather(w, 8)
        out = tf.cond(pred, branch, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (4, 10)


def test_npu102_lambda_calling_a_function_with_the_scope(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        def gather():
            with npu_scope.npu_weight_prefetch_scope():
                return hccl_ops.allgather(w, 8)
        out = tf.cond(pred, lambda: gather(), lambda: w)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (5, 10)


def test_npu102_function_called_from_a_branch_function(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        def gather(x):
            with npu_scope.npu_weight_prefetch_scope():
                return hccl_ops.allgather(x, 8)
        def branch():
            return gather(w) + 1
        out = tf.cond(pred, branch, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (5, 10)


def test_npu102_transitive_calls(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        def gather(x):
            with npu_scope.npu_weight_prefetch_scope():
                return hccl_ops.allgather(x, 8)
        def middle(x):
            return gather(x)
        def body(i):
            middle(w)
            return i + 1
        r = tf.while_loop(lambda i: i < 2, body, [0])
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert found[0].line == 5


def test_npu102_function_called_only_from_top_level_is_clean(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        def gather(x):
            with npu_scope.npu_weight_prefetch_scope():
                return hccl_ops.allgather(x, 8)
        def branch():
            return w
        g = gather(w)
        out = tf.cond(pred, branch, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == []


@pytest.mark.parametrize("decorator", [
    "@tf.function",
    "@tf.function(jit_compile=True)",
    "@tf.function()",
    "@function.Defun(tf.float32)",
    "@Defun(tf.float32)",
])
def test_npu102_subgraph_decorators(lint, decorator):
    src = ("import tensorflow as tf\n"
           "from tensorflow.python.framework import function\n"
           "from tensorflow.python.framework.function import Defun\n"
           "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
           f"{decorator}\n"
           "def step(x):\n"
           "    with npu_weight_prefetch_scope():\n"
           "        return x\n")
    found = lint(src, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (7, 10)


def test_npu102_other_decorator_is_clean(lint):
    found = lint("""
        import functools
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        @functools.lru_cache()
        def step(x):
            with npu_weight_prefetch_scope():
                return x
    """, select=["NPU102"])
    assert codes(found) == []


def test_npu102_called_from_tf_function(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        def gather(x):
            with p():
                return x
        @tf.function
        def step(x):
            return gather(x)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (5, 10)


def test_npu102_method_passed_to_cond(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        class Model:
            def branch(self):
                with p():
                    return self.w
            def build(self, pred):
                return tf.cond(pred, self.branch, lambda: self.w)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (6, 14)


def test_npu102_callee_defined_after_the_branch_function(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        def branch():
            return gather(w)
        def gather(x):
            with npu_scope.npu_weight_prefetch_scope():
                return hccl_ops.allgather(x, 8)
        out = tf.cond(pred, branch, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (7, 10)


def test_npu102_method_called_from_tf_function_method(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        class Model:
            def gather(self, x):
                with npu_scope.npu_weight_prefetch_scope():
                    return hccl_ops.allgather(x, 8)
            @tf.function
            def step(self, x):
                return self.gather(x)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (6, 14)


def test_npu102_branch_defined_inside_a_function(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        def build(pred, w):
            def branch():
                with p(1, 1 << 28):
                    return w
            return tf.cond(pred, branch, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (6, 14)


def test_npu102_tf_case_with_dict(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        def branch():
            with p():
                return w
        out = tf.case({p1: branch, p2: lambda: w})
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]


def test_npu102_function_through_a_name(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        def branch():
            with p():
                return w
        fn = branch
        out = tf.cond(pred, fn, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]


def test_npu102_from_import_of_tf_function_decorator(lint):
    found = lint("""
        from tensorflow import function as tf_function
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        @tf_function(autograph=False)
        def step(x):
            with p():
                return x
    """, select=["NPU102"])
    assert codes(found) == ["NPU102"]
    assert (found[0].line, found[0].column) == (6, 10)


# -- traps -----------------------------------------------------------------------------

def test_npu102_local_cond_function_is_not_tf_cond(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        def cond(pred, a, b):
            return a() if pred else b()
        def branch():
            with npu_weight_prefetch_scope():
                return w
        out = cond(pred, branch, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == []


def test_npu102_third_party_tf_is_not_tensorflow(lint):
    found = lint("""
        import mylib as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        def branch():
            with npu_weight_prefetch_scope():
                return w
        out = tf.cond(pred, branch, lambda: w)
        @tf.function
        def step(x):
            with npu_weight_prefetch_scope():
                return x
    """, select=["NPU102"])
    assert codes(found) == []


def test_npu102_local_scope_function_is_not_the_api(lint):
    found = lint("""
        import contextlib
        import tensorflow as tf
        @contextlib.contextmanager
        def npu_weight_prefetch_scope():
            yield
        def branch():
            with npu_weight_prefetch_scope():
                return w
        out = tf.cond(pred, branch, lambda: w)
    """, select=["NPU102"])
    assert codes(found) == []


def test_npu102_noqa(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        @tf.function
        def step(x):
            with npu_weight_prefetch_scope():  # noqa: NPU102
                return x
    """, select=["NPU102"])
    assert codes(found) == []


# ======================================================================================
# NPU103 prefetch-pool-invalid-argument
# ======================================================================================

@pytest.mark.parametrize("args", [
    "0, 5e8",              # float size
    "0, 512.0 * 1024",     # float size through arithmetic
    "0, '512MB'",          # str size
    "0, 0",                # zero size
    "0, -1024",            # negative size
    "0, True",             # bool size
    "-1, 1024",            # negative id
    "1.0, 1024",           # float id
    "'1', 1024",           # str id
    "True, 1024",          # bool id
    "buffer_pool_id=-1",
    "buffer_pool_size=0",
    "buffer_pool_size=(1 << 28) / 2",  # true division gives a float
])
def test_npu103_invalid_literals(lint, args):
    found = lint(IMPORT_P + f"with npu_weight_prefetch_scope({args}):\n    pass\n", select=["NPU103"])
    assert codes(found) == ["NPU103"]
    assert (found[0].line, found[0].column) == (2, 6)


@pytest.mark.parametrize("args", [
    "",
    "0",
    "0, 1",
    "7, 536870912",
    "buffer_pool_id=0, buffer_pool_size=500 * 1024 * 1024",
    "1, 2**28",
    "1, (1 << 29) // 2",
])
def test_npu103_clean_twins(lint, args):
    found = lint(IMPORT_P + f"with npu_weight_prefetch_scope({args}):\n    pass\n", select=["NPU103"])
    assert codes(found) == []


def test_npu103_both_arguments_invalid(lint):
    found = lint(IMPORT_P + "with npu_weight_prefetch_scope(-1, 0):\n    pass\n", select=["NPU103"])
    assert found and set(codes(found)) == {"NPU103"}
    assert all((f.line, f.column) == (2, 6) for f in found)


def test_npu103_first_of_two_scopes_in_one_with_statement(lint):
    found = lint(IMPORT_P + "with npu_weight_prefetch_scope(0, 5e8), npu_weight_prefetch_scope(1, 1024):\n"
                            "    pass\n", select=["NPU103"])
    assert codes(found) == ["NPU103"]
    assert (found[0].line, found[0].column) == (2, 6)


def test_npu103_through_module_constants(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        ID = -1
        SIZE = 2**29
        with p(buffer_pool_id=ID):
            pass
        with p(0, SIZE / 2):
            pass
        with p(0, SIZE // 2):
            pass
    """, select=["NPU103"])
    assert codes(found) == ["NPU103", "NPU103"]
    assert [(f.line, f.column) for f in found] == [(5, 6), (7, 6)]


def test_npu103_unary_minus_of_constant(lint):
    found = lint("""
        from npu_bridge.npu_init import *
        ONE = 1
        with npu_scope.npu_weight_prefetch_scope(-ONE):
            pass
    """, select=["NPU103"])
    assert codes(found) == ["NPU103"]
    assert (found[0].line, found[0].column) == (4, 6)


def test_npu103_function_local_constant(lint):
    found = lint("""
        import npu_bridge.estimator.npu.npu_scope as s
        def build():
            size = 0.5 * 1024 * 1024 * 1024
            with s.npu_weight_prefetch_scope(0, size):
                pass
    """, select=["NPU103"])
    assert codes(found) == ["NPU103"]
    assert (found[0].line, found[0].column) == (5, 10)


def test_npu103_augmented_assignment(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 1024
        SIZE -= 1024
        with p(0, SIZE):
            pass
    """, select=["NPU103"])
    assert codes(found) == ["NPU103"]
    assert "0" in found[0].message


def test_npu103_augmented_assignment_clean_twin(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 1024
        SIZE *= 2
        with p(0, SIZE):
            pass
    """, select=["NPU103"])
    assert codes(found) == []


@pytest.mark.parametrize("expr", [
    "size",                           # parameter
    "cfg.size",                       # attribute of an unknown object
    "get_size()",                     # call
    "int(os.environ['SIZE'])",        # environment read
    "float(os.environ.get('SIZE'))",
    "SIZES[i]",                       # subscript with a non-constant index
])
def test_npu103_unknown_values_say_nothing(lint, expr):
    src = ("import os\n" + IMPORT_P + "SIZES = (0, -1)\n"
           "def build(size, cfg, i):\n"
           f"    with npu_weight_prefetch_scope(0, {expr}):\n        pass\n")
    assert codes(lint(src, select=["NPU103"])) == []


def test_npu103_name_rebound_under_if_is_unknown(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        SIZE = 0
        if big:
            SIZE = 1 << 30
        with p(0, SIZE):
            pass
    """, select=["NPU103"])
    assert codes(found) == []


def test_npu103_loop_variable_is_unknown(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        for pool in (-1, 0):
            with p(pool, 1024):
                pass
    """, select=["NPU103"])
    assert codes(found) == []


def test_npu103_aliases(lint):
    found = lint("""
        import npu_bridge.estimator.npu.npu_scope as s
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        from npu_bridge.npu_init import *
        with s.npu_weight_prefetch_scope(0, 5e8):
            pass
        with p(0, 5e8):
            pass
        with npu_scope.npu_weight_prefetch_scope(0, 5e8):
            pass
    """, select=["NPU103"])
    assert codes(found) == ["NPU103"] * 3
    assert [f.line for f in found] == [5, 7, 9]


def test_npu103_not_the_api(lint):
    found = lint("""
        from mylib import npu_weight_prefetch_scope
        def npu_scope_local(a, b):
            pass
        with npu_weight_prefetch_scope(-1, 5e8):
            pass
    """)
    assert codes(found) == []


def test_npu103_local_definition_is_not_the_api(lint):
    found = lint("""
        import contextlib
        @contextlib.contextmanager
        def npu_weight_prefetch_scope(buffer_pool_id=0, buffer_pool_size=0.5):
            yield
        with npu_weight_prefetch_scope(-1, 5e8):
            pass
    """)
    assert codes(found) == []


def test_npu103_noqa(lint):
    found = lint(IMPORT_P + "with npu_weight_prefetch_scope(0, 5e8):  # noqa: NPU103\n    pass\n",
                 select=["NPU103"])
    assert codes(found) == []


# ======================================================================================
# NPU104 prefetch-multi-io-op
# ======================================================================================

@pytest.mark.parametrize("stmt, col", [
    ("w = tf.concat([a, b], 0)", 9),
    ("w = tf.concat(values=[a, b], axis=0)", 9),
    ("w = tf.add_n([a, b])", 9),
    ("w = tf.math.add_n([a, b, c])", 9),
    ("w = tf.stack((a, b))", 9),
    ("a, b = tf.split(w, 2)", 12),
    ("[a, b] = tf.split(w, 2)", 14),
    ("q, r, s = tf.unstack(w)", 15),
])
def test_npu104_multi_io_ops_in_scope(lint, stmt, col):
    src = ("import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
           "with npu_scope.npu_weight_prefetch_scope():\n"
           f"    {stmt}\n")
    found = lint(src, select=["NPU104"])
    assert codes(found) == ["NPU104"]
    assert (found[0].line, found[0].column) == (4, col)


@pytest.mark.parametrize("with_line", [
    # the scope's own arguments, and those of a context manager entered before it, are
    # evaluated outside the scope
    "with npu_scope.npu_weight_prefetch_scope(1, size_of(tf.concat([w, w], 0))):",
    "with ctx(tf.concat([w, w], 0)), npu_scope.npu_weight_prefetch_scope():",
])
def test_npu104_a_with_is_open_in_its_body_and_later_items(lint, with_line):
    src = ("import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
           f"{with_line}\n    y = tf.matmul(w, w)\n")
    assert lint(src, select=["NPU104"]) == []
    found = lint(src.replace("tf.matmul(w, w)", "tf.concat([w, w], 0)"), select=["NPU104"])
    assert [(f.code, f.line) for f in found] == [("NPU104", 4)]  # the twin: in the body
    one_line = src.replace(":\n    y = ", ": y = ")  # a body on the with's line
    assert one_line != src and lint(one_line, select=["NPU104"]) == []
    assert codes(lint(one_line.replace("tf.matmul(w, w)", "tf.concat([w, w], 0)"), select=["NPU104"])) == ["NPU104"]
    # an item after the scope is entered inside it
    later = src.replace(with_line, "with npu_scope.npu_weight_prefetch_scope(), ctx(tf.concat([w, w], 0)):")
    assert [(f.code, f.line, f.column) for f in lint(later, select=["NPU104"])] == [("NPU104", 3, 49)]


@pytest.mark.parametrize("stmt", [
    "w = tf.concat([a, b], 0)",
    "w = tf.add_n([a, b])",
    "a, b = tf.split(w, 2)",
])
def test_npu104_same_ops_outside_the_scope_are_clean(lint, stmt):
    src = ("import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
           "with npu_scope.npu_weight_prefetch_scope():\n"
           "    g = hccl_ops.allgather(w, 8)\n"
           f"{stmt}\n")
    assert codes(lint(src, select=["NPU104"])) == []


@pytest.mark.parametrize("stmt", [
    "y = tf.reshape(x, [2, 3])",
    "z = tf.zeros([n, m])",
    "z = tf.ones((n, m), dtype=tf.float16)",
    "g = hccl_ops.allgather(w, 8)",
    "w = tf.concat([a], 0)",
    "t = tf.transpose(x, [1, 0])",
    "y = tf.tile(x, [2, 1])",
])
def test_npu104_single_input_single_output_is_clean(lint, stmt):
    src = ("import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
           "with npu_scope.npu_weight_prefetch_scope():\n"
           f"    {stmt}\n")
    assert codes(lint(src, select=["NPU104"])) == []


def test_npu104_tf_bound_by_npu_init_star_import(lint):
    found = lint("""
        from npu_bridge.npu_init import *
        with npu_scope.npu_weight_prefetch_scope(1, 1 << 28):
            w = tf.add_n([a, b])
            c, d = tf.split(w, 2)
    """, select=["NPU104"])
    assert [(f.line, f.column) for f in found] == [(4, 9), (5, 12)]
    assert codes(found) == ["NPU104", "NPU104"]


def test_npu104_op_in_nested_def_is_not_directly_in_scope(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        with npu_scope.npu_weight_prefetch_scope():
            def merge(a, b):
                x, y = tf.split(a, 2)
                return tf.concat([a, b], 0)
            f = lambda: tf.add_n([a, b])
            g = hccl_ops.allgather(w, 8)
    """, select=["NPU104"])
    assert codes(found) == []


def test_npu104_nested_non_prefetch_with_and_python_loop_still_in_scope(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        with p(1, 1 << 28):
            for i in range(2):
                with tf.name_scope("m"):
                    w = tf.concat([a, b], 0)
    """, select=["NPU104"])
    assert codes(found) == ["NPU104"]
    assert (found[0].line, found[0].column) == (7, 17)


def test_npu104_scope_inside_function(lint):
    found = lint("""
        import tensorflow.compat.v1 as tf
        import npu_bridge.estimator.npu.npu_scope as s
        def build(a, b):
            with s.npu_weight_prefetch_scope(1, 1 << 28):
                w = tf.concat([a, b], axis=0)
            return w
    """, select=["NPU104"])
    assert codes(found) == ["NPU104"]
    assert (found[0].line, found[0].column) == (6, 13)


def test_npu104_from_import_of_op(lint):
    found = lint("""
        from tensorflow import concat, split
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        with npu_weight_prefetch_scope():
            w = concat([a, b], 0)
            c, d = split(w, 2)
    """, select=["NPU104"])
    assert codes(found) == ["NPU104", "NPU104"]
    assert [(f.line, f.column) for f in found] == [(5, 9), (6, 12)]


def test_npu104_not_tensorflow(lint):
    found = lint("""
        import mylib as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        def concat(xs, axis):
            return xs
        with npu_weight_prefetch_scope():
            w = tf.concat([a, b], 0)
            v = concat([a, b], 0)
            c, d = tf.split(w, 2)
            e, f = helper(w)
    """, select=["NPU104"])
    assert codes(found) == []


def test_npu104_not_a_prefetch_scope(lint):
    found = lint("""
        import tensorflow as tf
        from mylib import npu_weight_prefetch_scope
        with npu_weight_prefetch_scope():
            w = tf.concat([a, b], 0)
            c, d = tf.split(w, 2)
        with tf.name_scope("x"):
            w = tf.concat([a, b], 0)
    """, select=["NPU104"])
    assert codes(found) == []


def test_npu104_noqa(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        with npu_scope.npu_weight_prefetch_scope():
            w = tf.concat([a, b], 0)  # noqa: NPU104
            c, d = tf.split(w, 2)  # noqa: NPU101
    """, select=["NPU104"])
    assert codes(found) == ["NPU104"]
    assert found[0].line == 6


# ======================================================================================
# NPU105 prefetch-pool-too-small
# ======================================================================================

def test_npu105_float32_8192x8192_rank8_in_128mib(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.get_variable('w', shape=[8192, 8192], dtype=tf.float32)
        with npu_scope.npu_weight_prefetch_scope(1, 128 * 1024 * 1024):
            g = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]
    assert (found[0].line, found[0].column) == (6, 9)
    assert str(8192 * 8192 * 4 * 8 + 1024) in found[0].message


def test_npu105_names_the_pool_only_when_its_id_is_known(lint):
    src = """
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.get_variable('w', shape=[8192, 8192], dtype=tf.float32)
        with npu_scope.npu_weight_prefetch_scope(POOL_ID, 128 * 1024 * 1024):
            g = hccl_ops.allgather(w, 8)
    """
    found = lint(src, select=["NPU105"])
    assert codes(found) == ["NPU105"] and "but the prefetch pool holds 134217728 bytes" in found[0].message
    assert "UNKNOWN" not in found[0].message
    found = lint(src.replace("POOL_ID", "1"), select=["NPU105"])
    assert "but prefetch pool 1 holds 134217728 bytes" in found[0].message


def test_npu105_clean_twin_big_enough_pool(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.get_variable('w', shape=[8192, 8192], dtype=tf.float32)
        with npu_scope.npu_weight_prefetch_scope(1, 2 * 1024 ** 3 + 1024):
            g = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == []


# exact boundary: output bytes rounded up to 512, plus 512 before and after (+1024)
@pytest.mark.parametrize("tensor, rank, need", [
    ("tf.zeros([1024], tf.float16)", 2, 4096 + 1024),      # 4096 bytes, already aligned
    ("tf.zeros([3], tf.int8)", 3, 512 + 1024),             # 9 bytes -> 512
    ("tf.zeros([129], tf.float32)", 1, 1024 + 1024),       # 516 bytes -> 1024
    ("tf.ones([128], dtype=tf.float32)", 1, 512 + 1024),   # 512 bytes, exactly aligned
])
def test_npu105_boundary(lint, tensor, rank, need):
    def src(size):
        return ("import tensorflow as tf\nfrom npu_bridge.hccl import hccl_ops as hcom\n"
                "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p\n"
                f"x = {tensor}\n"
                f"with p(2, {size}):\n"
                f"    g = hcom.allgather(x, {rank})\n")
    assert codes(lint(src(need), select=["NPU105"])) == []


@pytest.mark.parametrize("tensor, rank, need", [
    ("tf.zeros([1024], tf.float16)", 2, 4096 + 1024),
    ("tf.zeros([3], tf.int8)", 3, 512 + 1024),
    ("tf.zeros([129], tf.float32)", 1, 1024 + 1024),
    ("tf.ones([128], dtype=tf.float32)", 1, 512 + 1024),
])
def test_npu105_one_byte_over_the_boundary(lint, tensor, rank, need):
    src = ("import tensorflow as tf\nfrom npu_bridge.hccl import hccl_ops as hcom\n"
           "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p\n"
           f"x = {tensor}\n"
           f"with p(2, {need - 1}):\n"
           f"    g = hcom.allgather(x, {rank})\n")
    found = lint(src, select=["NPU105"])
    assert codes(found) == ["NPU105"]
    assert (found[0].line, found[0].column) == (6, 9)
    assert str(need) in found[0].message


def test_npu105_get_variable_default_dtype_is_float32(lint):
    # 1024*1024*4 bytes x 8 = 32 MiB, + 1024
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.get_variable('w', shape=[1024, 1024])
        with npu_scope.npu_weight_prefetch_scope(1, 32 * 1024 * 1024):
            g = hccl_ops.allgather(w, 8)
        with npu_scope.npu_weight_prefetch_scope(2, 32 * 1024 * 1024 + 1024):
            h = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]
    assert found[0].line == 6


def test_npu105_get_variable_positional_shape(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.get_variable('w', [1024, 1024], tf.float16)
        with npu_scope.npu_weight_prefetch_scope(1, 16 * 1024 * 1024):
            g = hccl_ops.allgather(w, 8)
        with npu_scope.npu_weight_prefetch_scope(2, 16 * 1024 * 1024 + 1024):
            h = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]
    assert found[0].line == 6


def test_npu105_tf_zeros_default_float32(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.zeros([1024, 1024])
        with npu_scope.npu_weight_prefetch_scope(1, 32 * 1024 * 1024):
            g = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]


def test_npu105_dtype_as_string(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.zeros([1024, 1024], dtype="float16")
        with npu_scope.npu_weight_prefetch_scope(1, 16 * 1024 * 1024):
            g = hccl_ops.allgather(w, 8)
        with npu_scope.npu_weight_prefetch_scope(2, 16 * 1024 * 1024 + 1024):
            h = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]
    assert found[0].line == 6


def test_npu105_tf_variable_and_random(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        v = tf.Variable(tf.random.normal([4096, 4096]))
        r = tf.random.uniform([4096, 4096], dtype=tf.float16)
        with npu_scope.npu_weight_prefetch_scope(1, 256 * 1024 * 1024):
            g = hccl_ops.allgather(v, 8)
            h = hccl_ops.allgather(r, 8)
    """, select=["NPU105"])
    # v: 64 MiB x 8 = 512 MiB > 256 MiB; r: 32 MiB x 8 = 256 MiB, + 1024 > 256 MiB
    assert codes(found) == ["NPU105", "NPU105"]
    assert [(f.line, f.column) for f in found] == [(7, 9), (8, 9)]


@pytest.mark.parametrize("ctor", [
    "tf.random.normal([4096, 4096], 0.0, 0.02, {dt})",           # (shape, mean, stddev, dtype)
    "tf.random.uniform([4096, 4096], 0.0, 1.0, {dt})",           # (shape, minval, maxval, dtype)
    "tf.random.truncated_normal([4096, 4096], 0.0, 0.02, {dt})",
    "tf.random.normal([4096, 4096], dtype={dt})",
])
def test_npu105_random_dtype_given_positionally(lint, ctor):
    # float16: 32 MiB x 8 = 256 MiB, + 1024 fits exactly; float32 would not
    def src(dt):
        return ("import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
                f"w = {ctor.format(dt=dt)}\n"
                "with npu_scope.npu_weight_prefetch_scope(1, 256 * 1024 * 1024 + 1024):\n"
                "    g = hccl_ops.allgather(w, 8)\n")
    assert codes(lint(src("tf.float16"), select=["NPU105"])) == []


def test_npu105_random_float32_positional_dtype_is_reported(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.random.normal([4096, 4096], 0.0, 0.02, tf.float32)
        with npu_scope.npu_weight_prefetch_scope(1, 256 * 1024 * 1024 + 1024):
            g = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]


def test_npu105_compat_v1_get_variable_bfloat16(lint):
    found = lint("""
        import tensorflow.compat.v1 as tf
        from npu_bridge.hccl import hccl_ops as hcom
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        w = tf.get_variable('w', shape=[4096, 4096], dtype=tf.bfloat16)
        with p(1, 256 * 1024 * 1024):
            g = hcom.allgather(w, 8)
        with p(2, 256 * 1024 * 1024 + 1024):
            h = hcom.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]
    assert (found[0].line, found[0].column) == (7, 9)


def test_npu105_variable_dtype_keyword_overrides_initial_value(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.hccl import hccl_ops as hcom
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        w = tf.Variable(tf.zeros([4096, 4096]), dtype=tf.float16)
        with p(1, 256 * 1024 * 1024 + 1024):
            g = hcom.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == []


def test_npu105_default_pool_is_512mib(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        big = tf.get_variable('big', shape=[8192, 8192], dtype=tf.float32)
        small = tf.get_variable('small', shape=[8192, 8192], dtype=tf.float16)
        with npu_scope.npu_weight_prefetch_scope():
            g = hccl_ops.allgather(big, 2)
        with npu_scope.npu_weight_prefetch_scope():
            h = hccl_ops.allgather(small, 2)
    """, select=["NPU105"])
    # big: 256 MiB x 2 = 512 MiB + 1024 > 536870912; small: 256 MiB + 1024 fits
    assert codes(found) == ["NPU105"]
    assert (found[0].line, found[0].column) == (7, 9)


def test_npu105_nested_scopes_use_the_innermost_pool(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        from npu_bridge.hccl import hccl_ops
        w = tf.zeros([1024, 1024])
        with p(1, 1 << 30):
            a = hccl_ops.allgather(w, 8)
            with p(2, 1 << 20):
                b = hccl_ops.allgather(w, 8)
            c = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]
    assert (found[0].line, found[0].column) == (9, 13)


@pytest.mark.parametrize("items, fits", [("p(1, 1 << 30), p(2, 1 << 20)", False),
                                         ("p(2, 1 << 20), p(1, 1 << 30)", True)])
def test_npu105_two_scopes_in_one_with_statement_use_the_last(lint, items, fits):
    # float32[1024, 1024] x 8 needs 32 MiB + 1024 bytes: the last item of the with is the pool in force
    found = lint(f"""
        import tensorflow as tf
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        from npu_bridge.hccl import hccl_ops
        w = tf.zeros([1024, 1024])
        with {items}:
            a = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == ([] if fits else ["NPU105"])
    assert all("prefetch pool 2 holds 1048576 bytes" in f.message for f in found)


def test_npu105_tf_bound_by_npu_init_and_module_alias_of_npu_scope(lint):
    found = lint("""
        from npu_bridge.npu_init import *
        import npu_bridge.estimator.npu.npu_scope as s
        SIZE = 2**28
        w = tf.get_variable('w', shape=[8192, 8192], dtype=tf.float32)
        with s.npu_weight_prefetch_scope(3, SIZE):
            g = hccl_ops.allgather(w, 2)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]
    assert (found[0].line, found[0].column) == (7, 9)


def test_npu105_third_party_scope_is_not_a_pool(lint):
    found = lint("""
        import tensorflow as tf
        from mylib import npu_weight_prefetch_scope
        from npu_bridge.hccl import hccl_ops
        w = tf.zeros([8192, 8192])
        with npu_weight_prefetch_scope(1, 1024):
            g = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == []


def test_npu105_values_through_constants(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.hccl import hccl_ops as hcom
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        H = 1 << 13
        SHAPE = [H, H]
        RANK = 8
        MB = 1024 * 1024
        POOL_SIZE = 128 * MB
        def build():
            dt = tf.float32
            w = tf.get_variable('w', shape=SHAPE, dtype=dt)
            with p(1, POOL_SIZE):
                return hcom.allgather(w, RANK)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]
    assert (found[0].line, found[0].column) == (14, 16)


def test_npu105_keyword_arguments(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.hccl.hccl_ops import allgather
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        w = tf.zeros(shape=[8192, 8192], dtype=tf.float32)
        with p(buffer_pool_id=1, buffer_pool_size=1 << 27):
            g = allgather(rank_size=8, tensor=w)
    """, select=["NPU105"])
    assert codes(found) == ["NPU105"]
    assert (found[0].line, found[0].column) == (7, 9)


def test_npu105_augmented_rank(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        RANK = 4
        RANK *= 2
        w = tf.zeros([1024, 1024], tf.float32)
        with npu_scope.npu_weight_prefetch_scope(1, 16 * 1024 * 1024 + 1024):
            g = hccl_ops.allgather(w, RANK)
    """, select=["NPU105"])
    # 4 MiB x 8 = 32 MiB > 16 MiB + 1024 (with RANK = 4 it would fit)
    assert codes(found) == ["NPU105"]


@pytest.mark.parametrize("tensor, rank", [
    ("w_param", "8"),                       # parameter
    ("tf.get_variable('w', shape=[8192, 8192])", "rank_param"),
    ("tf.get_variable('w', shape=[8192, 8192])", "get_rank_size()"),
    ("tf.get_variable('w', shape=[8192, 8192])", "int(os.environ['RANK_SIZE'])"),
    ("tf.get_variable('w', shape=[8192, 8192])", "cfg.rank_size"),
    ("tf.get_variable('w', shape=shape_param)", "8"),
    ("tf.get_variable('w', shape=[8192, 8192], dtype=dt_param)", "8"),
    ("tf.get_variable('w', shape=[8192, 8192], initializer=init)", "8"),
    ("make_weight()", "8"),
    ("cfg.weight", "8"),
])
def test_npu105_unknown_tensor_or_rank_is_clean(lint, tensor, rank):
    src = ("import os\nimport tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
           "def build(w_param, rank_param, shape_param, dt_param, cfg, init):\n"
           f"    x = {tensor}\n"
           "    with npu_scope.npu_weight_prefetch_scope(1, 1024):\n"
           f"        return hccl_ops.allgather(x, {rank})\n")
    assert codes(lint(src, select=["NPU105"])) == []


def test_npu105_tensor_rebound_under_if_is_unknown(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.zeros([16], tf.float16)
        if big:
            w = tf.zeros([8192, 8192])
        with npu_scope.npu_weight_prefetch_scope(1, 2048):
            g = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == []


def test_npu105_unknown_pool_size_is_clean(lint):
    found = lint("""
        import os
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.zeros([8192, 8192])
        with npu_scope.npu_weight_prefetch_scope(1, int(os.environ["POOL"])):
            g = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == []


def test_npu105_allgather_outside_scope_is_clean(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.zeros([8192, 8192])
        with npu_scope.npu_weight_prefetch_scope(1, 1024):
            pass
        g = hccl_ops.allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == []


def test_npu105_not_the_api(lint):
    found = lint("""
        import tensorflow as tf
        from mylib import hccl_ops
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p
        def allgather(x, n):
            return x
        w = tf.zeros([8192, 8192])
        with p(1, 1024):
            g = hccl_ops.allgather(w, 8)
            h = allgather(w, 8)
    """, select=["NPU105"])
    assert codes(found) == []


def test_npu105_noqa(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.zeros([8192, 8192])
        with npu_scope.npu_weight_prefetch_scope(1, 1024):
            g = hccl_ops.allgather(w, 8)  # noqa: NPU105
    """, select=["NPU105"])
    assert codes(found) == []


# ======================================================================================
# several rules together (the vendor example of docs/000 is in test_rules_signature.py)
# ======================================================================================

def test_all_prefetch_rules_together(lint):
    found = lint("""
        import tensorflow as tf
        from npu_bridge.npu_init import *
        w = tf.get_variable('w', shape=[8192, 8192], dtype=tf.float32)
        with npu_scope.npu_weight_prefetch_scope(1, 128 * 1024 * 1024):
            g = hccl_ops.allgather(w, 8)
            x = tf.identity(g)
            y = tf.reshape(x, [2, -1])
            c, d = tf.split(g, 2)
        def branch():
            with npu_scope.npu_weight_prefetch_scope(1, 256 * 1024 * 1024):
                return w
        out = tf.cond(pred, branch, lambda: w)
        with npu_scope.npu_weight_prefetch_scope(2, 5e8):
            pass
    """)
    assert [(f.line, f.code) for f in found] == [
        (6, "NPU105"), (9, "NPU104"), (11, "NPU101"), (11, "NPU102"), (14, "NPU103")]


def test_npu101_a_top_level_module_of_another_folder_is_not_the_one_an_import_finds(lint, tmp_path):
    # a/train.py's `import common` finds a common.py beside it on sys.path, not b/common.py:
    # the two files are not one program (b/common.py is the only common.py of the run)
    files = {"a/train.py": IMPORT_P + "import common\nwith npu_weight_prefetch_scope():\n    common.step()\n",
             "b/common.py": IMPORT_P + "def step():\n    with npu_weight_prefetch_scope(0, 268435456):\n        pass\n"}
    assert codes(lint(files, select=["NPU101"])) == []
    # the twin: the common.py beside the importer is the one it finds
    files["a/common.py"] = files.pop("b/common.py")
    (tmp_path / "b" / "common.py").unlink()
    assert [(f.path, f.line) for f in lint(files, select=["NPU101"])] == [("a/train.py", 3)]
