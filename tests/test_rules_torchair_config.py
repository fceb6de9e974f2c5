"""NPU201-NPU208: torchair CompilerConfig, reduce-overhead / npugraph_ex (aclgraph) mode
(RULES.md "NPU2xx"; docs/001; research/npu-api-constraints.md §A).

Positions are computed on the dedented source with :func:`at` (1-based line and column of
the first character of a needle), so a source can be edited without renumbering.
"""

import textwrap

import pytest
from conftest import REPO, at, codes, pos
from npulint.rules import torchair_config as tc

SEL = ["NPU2"]
DOCS = REPO.parent / "shared" / "docs"  # shared/ stands beside the checkout (CI does the same)




HEADER = "import torch\nimport torchair\n"


def mk(body, header=HEADER):
    """A module: imports, then *body* (dedented)."""
    return header + textwrap.dedent(body)


def only(found, code):
    return [f for f in found if f.code == code]


# ======================================================================================
# NPU201 aclgraph-option-ignored
# ======================================================================================

def test_npu201_default_mode_option_ignored(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = False
        backend = torchair.get_npu_backend(compiler_config=config)
        model = torch.compile(model, backend=backend)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU201"]
    assert pos(found[0]) == at(src, "config.debug")
    msg = found[0].message
    assert "`config.debug.aclgraph.clone_input` only applies to aclgraph graphs" in msg
    assert "never set" in msg and "max-autotune" in msg
    assert f"(line {at(src, 'torchair.get_npu_backend')[0]})" in msg
    assert "torchair ignores this setting" in msg and 'config.mode = "reduce-overhead"' in msg


def test_npu201_explicit_max_autotune_and_every_aclgraph_family(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode = "max-autotune"
        config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()
        config.debug.aclgraph.static_capture_size_limit = 8
        config.experimental_config.aclgraph._aclnn_static_shape_kernel = True
        config.experimental_config.frozen_parameter = True
        config.debug.run_eagerly = True
        config.debug.aclgraph.enable_output_clone.value = True
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU201"] * 4
    assert [pos(f) for f in found] == [at(src, "config.aclgraph_config"), at(src, "config.debug.aclgraph.static"),
                                       at(src, "config.experimental_config.aclgraph"),
                                       at(src, "config.debug.aclgraph.enable")]
    assert f'config.mode is "max-autotune" (line {at(src, "config.mode")[0]})' in found[0].message
    assert "`config.debug.aclgraph.enable_output_clone` only applies" in found[3].message


@pytest.mark.parametrize("mode", ["reduce-overhead", "npugraph_ex"])
def test_npu201_clean_twin_aclgraph_modes(lint, mode):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.mode = "{mode}"
        config.debug.aclgraph.clone_input = False
        config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []


# the store rules judge a store in the hook of the statement that makes it: each kind of
# statement that stores to an attribute is one of their hooks
@pytest.mark.parametrize("statement", [
    "config.debug.aclgraph.clone_input: bool = False",
    "config.debug.aclgraph.static_capture_size_limit += 1",
    "for config.debug.aclgraph.clone_input in (True, False):\n    pass",
    "with opener() as config.debug.aclgraph.clone_input:\n    pass",
])
@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_npu201_stores_of_every_statement_kind(lint, statement, mode):
    src = HEADER + "config = torchair.CompilerConfig()\n" + f"config.mode = \"{mode}\"\n" + statement + "\n" + \
        "backend = torchair.get_npu_backend(compiler_config=config)\n"
    found = lint(src, select=SEL)
    if mode == "reduce-overhead":  # the clean twin
        assert codes(found) == []
        return
    assert codes(found) == ["NPU201"]
    assert pos(found[0]) == at(src, "config.debug.aclgraph")


def test_npu201_a_del_sets_nothing(lint):
    src = HEADER + "config = torchair.CompilerConfig()\nconfig.mode = \"max-autotune\"\n" + \
        "{}config.debug.aclgraph.clone_input\nbackend = torchair.get_npu_backend(compiler_config=config)\n"
    assert lint(src.format("del "), select=SEL) == []
    assert codes(lint(src.format("").replace("clone_input\n", "clone_input = False\n"), select=SEL)) == ["NPU201"]



def test_npu201_mode_value_assignment_sets_the_mode(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode.value = "reduce-overhead"
        config.debug.aclgraph.clone_input = False
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []
    found = lint(src.replace('"reduce-overhead"', '"max-autotune"'), select=SEL)
    assert codes(found) == ["NPU201"]


@pytest.mark.parametrize("block", [
    "if use_graph:\n    config.mode = \"reduce-overhead\"\n",
    "if use_graph:\n    pass\nelse:\n    config.mode = \"max-autotune\"\n",
    "for m in modes:\n    config.mode = \"max-autotune\"\n",
    "while not done:\n    config.mode = \"max-autotune\"\n    done = True\n",
    "try:\n    config.mode = \"max-autotune\"\nexcept ValueError:\n    pass\n",
    "with ctx:\n    config.mode = \"max-autotune\"\n",
])
def test_npu201_conditional_mode_is_unknown(lint, block):
    src = mk("config = torchair.CompilerConfig()\n" + block +
             "config.debug.aclgraph.clone_input = False\n"
             "backend = torchair.get_npu_backend(compiler_config=config)\n")
    assert codes(lint(src, select=SEL)) == []


def test_npu201_conditional_mode_even_around_the_backend_call_is_unknown(lint):
    # RULES.md: an assignment under if/for/while/try/with makes the mode unknown
    src = mk("""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = False
        if args.compile:  # (not `if __name__ == "__main__":`, straight-line code)
            config.mode = "max-autotune"
            backend = torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu201_mode_through_constants(lint):
    src = mk("""
        GRAPH_MODE = "reduce-" + "overhead"
        config = torchair.CompilerConfig()
        config.mode = GRAPH_MODE
        config.debug.aclgraph.clone_input = False
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []
    found = lint(src.replace('"reduce-" + "overhead"', '"max-" + "autotune"'), select=SEL)
    assert codes(found) == ["NPU201"]


def test_npu201_mode_from_parameter_or_environment_is_unknown(lint):
    src = mk("""
        import os
        config = torchair.CompilerConfig()
        config.mode = os.environ["MODE"]
        config.debug.aclgraph.clone_input = False
        backend = torchair.get_npu_backend(compiler_config=config)

        def build(mode):
            cfg = torchair.CompilerConfig()
            cfg.mode = mode
            cfg.debug.aclgraph.clone_input = False
            return torchair.get_npu_backend(compiler_config=cfg)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu201_config_from_parameter_is_silent(lint):
    src = mk("""
        def build(config):
            config.debug.aclgraph.clone_input = False
            return torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu201_local_class_named_compiler_config_is_not_torchair(lint):
    src = mk("""
        class CompilerConfig:
            pass

        config = CompilerConfig()
        config.debug.aclgraph.clone_input = False
        config.debug.aclgraph.clone_inputs = "no"
        config.mode = "reduce_overhead"
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu201_mode_after_the_backend_call_is_unknown(lint):
    # torchair reads the config when the compiled model first runs: a later assignment counts
    src = mk("""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = False
        backend = torchair.get_npu_backend(compiler_config=config)
        config.mode = "reduce-overhead"
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu201_mode_in_another_scope_is_unknown(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = False

        def use_aclgraph():
            config.mode = "reduce-overhead"

        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("escape", [
    "configure(config)",
    "setattr(config, 'mode', 'reduce-overhead')",
    "other = config",
    "configure(mode=config.mode)",
    "settings = [config]",
])
def test_npu201_config_passed_on_is_unknown(lint, escape):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = False
        {escape}
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu201_reading_the_config_is_not_an_escape(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = False
        print(config.mode.value, config.debug.aclgraph.clone_input)
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU201"]


COMPILE_UTILS = mk("""
    config = torchair.CompilerConfig()
    config.debug.aclgraph.enable_output_clone = True


    def get_backend():
        return torchair.get_npu_backend(compiler_config=config)
""")


@pytest.mark.parametrize("main", [
    # another module of the run sets the mode of the module-level config
    "from pkg.compile_utils import config, get_backend\nconfig.mode = 'reduce-overhead'\n",
    "from pkg import compile_utils\ncompile_utils.config.mode = 'reduce-overhead'\n"
    "get_backend = compile_utils.get_backend\n",
    "from pkg.compile_utils import config, get_backend\nconfigure(config)\n",
])
def test_npu201_a_module_level_config_another_module_changes_is_unknown(lint, main):
    files = {"pkg/__init__.py": "", "pkg/compile_utils.py": COMPILE_UTILS,
             "pkg/main.py": "import torch\n" + main + "model = torch.compile(net, backend=get_backend())\n"}
    assert codes(lint(files, select=SEL)) == []


@pytest.mark.parametrize("files", [
    # reached through a package that re-exports it by a star import (no file names both)
    {"pkg/__init__.py": "from .compile_utils import *\n",
     "app/main.py": "from pkg import *\nconfig.mode = 'reduce-overhead'\n"},
    # a relative import from a subpackage, naming neither the module nor the package
    {"pkg/__init__.py": "from .compile_utils import config\n",
     "pkg/sub/__init__.py": "", "pkg/sub/tune.py": "from .. import config\nconfig.mode = 'reduce-overhead'\n"},
])
def test_npu201_a_module_level_config_reached_through_re_exports_is_unknown(lint, files):
    files = dict(files, **{"pkg/compile_utils.py": COMPILE_UTILS})
    assert codes(lint(files, select=SEL)) == []


def test_npu201_a_module_level_config_files_that_cannot_reach_it_do_not_count(lint):
    # other files change a `config` of their own: they import nothing that reaches compile_utils
    files = {"pkg/__init__.py": "", "pkg/compile_utils.py": COMPILE_UTILS,
             "tools/other.py": "import torchair\nconfig = make()\nconfig.mode = 'reduce-overhead'\nconfigure(config)\n"}
    line = at(COMPILE_UTILS, "config.debug")[0]
    assert [(f.path, f.line, f.code) for f in lint(files, select=SEL)] == [("pkg/compile_utils.py", line, "NPU201")]


def test_npu201_a_module_level_config_other_modules_only_compile_with_clean_twin(lint):
    files = {"pkg/__init__.py": "", "pkg/compile_utils.py": COMPILE_UTILS,
             "pkg/main.py": "import torch\nfrom pkg.compile_utils import get_backend\n"
                            "model = torch.compile(net, backend=get_backend())\n"}
    found = lint(files, select=SEL)
    line = at(COMPILE_UTILS, "config.debug")[0]
    assert [(f.path, f.line, f.code) for f in found] == [("pkg/compile_utils.py", line, "NPU201")]


def test_npu201_mode_in_a_tuple_target_is_unknown(lint):
    # attribute targets inside tuples are not in the engine's attr_stores; the rule finds them
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode, label = "reduce-overhead", "graph"
        config.debug.aclgraph.clone_input = False
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu201_config_bound_in_two_branches_is_unknown(lint):
    src = mk("""
        if fast:
            config = torchair.CompilerConfig()
        else:
            config = make_config()
        config.debug.aclgraph.clone_input = False
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu201_without_a_backend_call_says_nothing(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = False
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("header, cfg, backend", [
    ("import torch\nimport torchair as tng\n", "tng.CompilerConfig()", "tng.get_npu_backend"),
    ("import torch\nfrom torchair import CompilerConfig, get_npu_backend\n", "CompilerConfig()", "get_npu_backend"),
    ("import torch\nfrom torchair.configs.compiler_config import CompilerConfig\nimport torchair\n",
     "CompilerConfig()", "torchair.get_npu_backend"),
    (("import torch\nfrom torchair.configs.compiler_config import CompilerConfig as CC\n"
      "from torchair.npu_fx_compiler import get_npu_backend as gnb\n"), "CC()", "gnb"),
    ("import torch\nimport torchair.configs.compiler_config\nimport torchair\n",
     "torchair.configs.compiler_config.CompilerConfig()", "torchair.get_npu_backend"),
])
def test_npu201_import_aliases(lint, header, cfg, backend):
    src = mk(f"""
        config = {cfg}
        config.debug.aclgraph.clone_input = False
        npu_backend = {backend}(compiler_config=config)
    """, header=header)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU201"]
    assert pos(found[0]) == at(src, "config.debug")


def test_npu201_positional_config_argument(lint):
    # torchair's get_npu_backend is keyword-only (the call raises TypeError); the config is read anyway
    src = mk("""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = False
        backend = torchair.get_npu_backend(config)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU201"]


def test_npu201_same_named_local_get_npu_backend_is_not_torchair(lint):
    src = mk("""
        def get_npu_backend(compiler_config):
            return compiler_config

        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = False
        backend = get_npu_backend(compiler_config=config)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu201_config_in_a_function(lint):
    src = mk("""
        def build(model):
            config = torchair.CompilerConfig()
            config.debug.aclgraph.enable_output_clone = True
            return torch.compile(model, backend=torchair.get_npu_backend(compiler_config=config))
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU201"]
    assert pos(found[0]) == at(src, "config.debug")


def test_npu201_two_configs_one_name(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode = "reduce-overhead"
        config.debug.aclgraph.clone_input = False
        b1 = torchair.get_npu_backend(compiler_config=config)
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = False
        b2 = torchair.get_npu_backend(compiler_config=config)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU201"]
    assert pos(found[0]) == at(src, "config.debug", nth=1)


# ======================================================================================
# NPU202 custom-pool-overrides-fx-reuse
# ======================================================================================

def test_npu202_false_with_custom_pool(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode = "reduce-overhead"
        config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()
        config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU202"]
    assert pos(found[0]) == at(src, "config.debug")
    msg = found[0].message
    assert "has no effect" in msg and f"use_custom_pool` is set (line {at(src, 'config.aclgraph')[0]})" in msg
    assert "forces disable_mempool_reuse_in_same_fx to True" in msg


def test_npu202_fix_leaves_a_chained_assignment_alone(lint):
    # dropping the line would also drop the binding of ``keep``
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode = "reduce-overhead"
        config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()
        keep = config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False
        backend = torchair.get_npu_backend(compiler_config=config)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU202"] and found[0].fix is None
    found = lint(src.replace("keep = ", ""), select=SEL)
    assert codes(found) == ["NPU202"] and found[0].fix is not None


def test_npu202_pool_through_a_name_and_zero(lint):
    src = mk("""
        pool = torch.npu.graph_pool_handle()
        config = torchair.CompilerConfig()
        config.mode = "npugraph_ex"
        config.debug.aclgraph.disable_mempool_reuse_in_same_fx = 0
        config.aclgraph_config.use_custom_pool = pool
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU202"]
    assert pos(found[0]) == at(src, "config.debug")


P = "config.aclgraph_config.use_custom_pool = "
F = "config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False\n"


@pytest.mark.parametrize("lines", [
    # True is redundant but harmless
    P + "torch.npu.graph_pool_handle()\nconfig.debug.aclgraph.disable_mempool_reuse_in_same_fx = True\n",
    # no pool
    F,
    # pool None
    P + "None\n" + F,
    # pool only under if: not certainly set
    "if shared:\n    " + P + "torch.npu.graph_pool_handle()\n" + F,
    # pool set, then reset to None
    P + "torch.npu.graph_pool_handle()\n" + P + "None\n" + F,
    # pool of unknown value
    P + "pool if shared else None\n" + F,
    # pool set in another function
    "def share():\n    " + P + "torch.npu.graph_pool_handle()\n" + F,
])
def test_npu202_clean_twins(lint, lines):
    src = mk("config = torchair.CompilerConfig()\nconfig.mode = \"reduce-overhead\"\n" + lines +
             "backend = torchair.get_npu_backend(compiler_config=config)\n")
    assert codes(lint(src, select=SEL)) == []


def test_npu202_config_from_parameter_is_silent(lint):
    src = mk("""
        def tune(config):
            config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()
            config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False
    """)
    assert codes(lint(src, select=SEL)) == []


# ======================================================================================
# NPU203 graphs-without-shared-pool
# ======================================================================================

# NPU203 holds on the torchair releases that have a custom pool (7.2.0 on): the tests pin one
TORCHAIR_MASTER = '[tool.npulint.releases]\ntorchair = "master"\n'


def test_npu203_second_and_later_compiles(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode = "reduce-overhead"
        backend = torchair.get_npu_backend(compiler_config=config)
        enc = torch.compile(encoder, backend=backend)
        dec = torch.compile(decoder, backend=backend)
        head = torch.compile(lm_head, backend=backend)
    """)
    found = lint(src, select=SEL, config=TORCHAIR_MASTER)
    assert codes(found) == ["NPU203", "NPU203"]
    assert [pos(f) for f in found] == [at(src, "torch.compile(decoder"), at(src, "torch.compile(lm_head")]
    msg = found[0].message
    assert f"the first is at line {at(src, 'torch.compile')[0]}" in msg and '"reduce-overhead"' in msg
    assert "use_custom_pool" in msg and "graph_pool_handle" in msg


def test_npu203_two_configs_and_a_decorator(lint):
    src = mk("""
        import torchair as tng
        c1 = tng.CompilerConfig()
        c1.mode = "npugraph_ex"
        c2 = tng.CompilerConfig()
        c2.mode = "reduce-overhead"
        enc = torch.compile(encoder, backend=tng.get_npu_backend(compiler_config=c1))

        @torch.compile(backend=tng.get_npu_backend(compiler_config=c2))
        def step(x):
            return x + 1
    """)
    found = lint(src, select=SEL, config=TORCHAIR_MASTER)
    assert codes(found) == ["NPU203"]
    assert pos(found[0]) == at(src, "torch.compile(backend")


@pytest.mark.parametrize("lines", [
    'c1.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()\n',
    'c2.aclgraph_config.use_custom_pool = pool\n',
    'if shared:\n    c1.aclgraph_config.use_custom_pool = pool\n',
    'c2.mode = "max-autotune"\n',
    'c2.mode = get_mode()\n',
    'share(c1)\n',
])
def test_npu203_clean_twins(lint, lines):
    src = mk("c1 = torchair.CompilerConfig()\nc1.mode = \"reduce-overhead\"\n"
             "c2 = torchair.CompilerConfig()\nc2.mode = \"reduce-overhead\"\n" + lines +
             "a = torch.compile(m1, backend=torchair.get_npu_backend(compiler_config=c1))\n"
             "b = torch.compile(m2, backend=torchair.get_npu_backend(compiler_config=c2))\n")
    assert codes(lint(src, select=SEL, config=TORCHAIR_MASTER)) == []


def test_npu203_one_compile_or_default_backends_is_clean(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode = "reduce-overhead"
        a = torch.compile(m1, backend=torchair.get_npu_backend(compiler_config=config))
        b = torch.compile(m2, backend=torchair.get_npu_backend())
        c = torch.compile(m3)
    """)
    assert codes(lint(src, select=SEL, config=TORCHAIR_MASTER)) == []


# ======================================================================================
# NPU204 config-option-type
# ======================================================================================

@pytest.mark.parametrize("value, shown", [
    ('"False"', "'False' (str)"),
    ("None", "None (NoneType)"),
    ("1.5", "1.5 (float)"),
    ("2", "2 (int)"),
    ("[True]", "(True,) (tuple)"),
])
def test_npu204_bool_option_raises(lint, value, shown):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_input = {value}
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU204"]
    assert pos(found[0]) == at(src, "config.debug")
    assert f"is a boolean option but gets {shown}: torchair raises ValueError" in found[0].message


def test_npu204_float_zero_one_is_accepted_by_torchair_but_reported(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.enable_output_clone = 1.0
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU204"]
    assert "torchair accepts it because 1.0 == True" in found[0].message
    assert "treats it as off" in found[0].message


@pytest.mark.parametrize("value", ["True", "False", "0", "1", "flag", "not quiet"])
def test_npu204_bool_option_clean(lint, value):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.experimental_config.frozen_parameter = {value}
        config.debug.aclgraph.clone_input.value = {value}
        config.ge_config.enable_single_stream = {value}
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu204_value_attribute_and_constants(lint):
    src = mk("""
        OFF = "off"
        config = torchair.CompilerConfig()
        config.debug.aclgraph.remove_cat_ops.value = OFF
        config.experimental_config.aclgraph._super_kernel_optimize = OFF
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU204", "NPU204"]
    assert [pos(f) for f in found] == [at(src, "config.debug"), at(src, "config.experimental")]


@pytest.mark.parametrize("value, why", [
    ("0", "outside [1, 2**63-1]"),
    ("-4", "outside [1, 2**63-1]"),
    ("2 ** 63", "outside [1, 2**63-1]"),
    ('"64"', "is not an int"),
    ("64.0", "is not an int"),
    ("False", "outside [1, 2**63-1]"),
])
def test_npu204_static_capture_size_limit(lint, value, why):
    src = mk(f"""
        LIMIT = {value}
        config = torchair.CompilerConfig()
        config.debug.aclgraph.static_capture_size_limit = LIMIT
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU204"]
    assert pos(found[0]) == at(src, "config.debug")
    assert why in found[0].message and "ValueError" in found[0].message


@pytest.mark.parametrize("value", ["1", "64", "2 ** 63 - 1", "True", "limit"])
def test_npu204_static_capture_size_limit_clean(lint, value):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.static_capture_size_limit = {value}
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("value, shown", [
    ("True", "True (bool)"),
    ("1", "1 (int)"),
    ('"pool"', "'pool' (str)"),
    ("[0, 1]", "the list [0, 1]"),
    ("(1, 2)", "the tuple (1, 2)"),
    ("(0, 1, 2)", "the tuple (0, 1, 2)"),
    ("[h for h in handles]", "the list [h for h in handles]"),
])
def test_npu204_use_custom_pool_not_a_handle(lint, value, shown):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.aclgraph_config.use_custom_pool = {value}
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU204"]
    assert pos(found[0]) == at(src, "config.aclgraph_config")
    assert f"gets {shown}, which is not a graph-pool handle" in found[0].message
    assert "TypeError" in found[0].message


@pytest.mark.parametrize("value", ["None", "(0, 1)", "torch.npu.graph_pool_handle()", "pool", "make_pool()"])
def test_npu204_use_custom_pool_clean(lint, value):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.aclgraph_config.use_custom_pool = {value}
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu204_list_through_a_name(lint):
    src = mk("""
        POOL = [0, 7]
        config = torchair.CompilerConfig()
        config.aclgraph_config.use_custom_pool = POOL
    """)
    assert codes(lint(src, select=SEL)) == ["NPU204"]


def test_npu204_traps(lint):
    src = mk("""
        class CompilerConfig:
            pass

        def tune(config):
            config.debug.aclgraph.clone_input = "False"

        local = CompilerConfig()
        local.debug.aclgraph.clone_input = "False"
        cfg = torchair.CompilerConfig()
        cfg.export.export_mode = "yes"          # _ExportConfig stores anything unchecked
        cfg.debug = other_debug
        cfg.debug.aclgraph.clone_input = "False"  # no longer torchair's sub-config
        holder.config.debug.aclgraph.clone_input = "False"
        configs[0].debug.aclgraph.clone_input = "False"
    """)
    assert codes(lint(src, select=SEL)) == []


# the other option classes, as rules/torchair_releases.json ``values`` holds them per release
@pytest.mark.parametrize("option, value, exc, allowed", [
    ("ge_config.oo_level", '"o1"', "ValueError", "'O1', 'O3'"),
    ("ge_config.export_compile_stat", "1", "ValueError", "'0', '1', '2'"),
    ("dump_config.dump_mode", "None", "ValueError", "'input', 'output', 'all'"),
    ("experimental_config.static_model_ops_lower_limit", "-2", "ValueError", "an int in [-1, 2**63-1]"),
    ("experimental_config.static_model_ops_lower_limit", '"5"', "ValueError", "an int in [-1, 2**63-1]"),
    ("experimental_config.aclgraph._aclnn_static_shape_kernel_build_dir", "3", "TypeError", "a str or None"),
    ("experimental_config.aclgraph._aclnn_static_shape_kernel_sym_value_range", '["a"]', "TypeError",
     "a list or tuple of ints, or None"),
    ("experimental_config.aclgraph._aclnn_static_shape_kernel_sym_value_range", "4", "TypeError",
     "a list or tuple of ints, or None"),
    ("experimental_config.aclgraph._super_kernel_optimize_options", '"x"', "TypeError", "a dict or None"),
    ("post_grad_custom_pre_pass", '"my_pass"', "TypeError", "a callable or None"),
    ("dump_config.dump_step", "5", "TypeError", "a str matching"),
    ("dump_config.dump_step", '"a|b"', "ValueError", "a str matching"),
])
def test_npu204_option_classes_reject(lint, option, value, exc, allowed):
    src = mk(f"""
        VALUE = {value}
        config = torchair.CompilerConfig()
        config.{option} = VALUE
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU204"]
    assert pos(found[0]) == at(src, "config.")
    assert found[0].message.startswith(f"`config.{option}` gets ")
    assert f"torchair raises {exc} at this assignment (allowed: {allowed}" in found[0].message


@pytest.mark.parametrize("option, value", [
    ("ge_config.oo_level", '"O1"'),
    ("ge_config.export_compile_stat", '"1"'),
    ("dump_config.dump_mode", '"all"'),
    ("experimental_config.static_model_ops_lower_limit", "-1"),
    ("experimental_config.static_model_ops_lower_limit", "True"),  # bool is an int
    ("experimental_config.aclgraph._aclnn_static_shape_kernel_build_dir", "None"),
    ("experimental_config.aclgraph._aclnn_static_shape_kernel_sym_value_range", "(1, 2)"),
    ("experimental_config.aclgraph._aclnn_static_shape_kernel_sym_value_range", "[n for n in sizes]"),
    ("experimental_config.aclgraph._super_kernel_optimize_options", '{"a": 1}'),
    ("post_grad_custom_pre_pass", "my_pass"),
    ("dump_config.dump_step", '"0|1|2-5"'),
    ("ge_config.aicore_num", '"x"'),  # OptionValue(None, None): anything
    ("dump_config.dump_path", '"/nonexistent"'),  # a path: the machine's
    ("ge_config.oo_level", "level"),
])
def test_npu204_option_classes_clean(lint, option, value):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.{option} = {value}
        config.{option}.value = {value}
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu204_option_classes_traps(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.ge_config.oo_level._value = "o1"      # the raw slot: no check
        config.export.export_mode = "o1"             # _ExportConfig: replaced unchecked
        if flag:
            config.ge_config.oo_level = "O1"
        other = torchair.CompilerConfig()
        other.ge_config = my_ge
        other.ge_config.oo_level = "o1"             # no longer torchair's sub-config
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu204_option_classes_on_the_releases_that_define_the_option(lint):
    # _super_kernel_optimize_options: 26.0.0 and master only; on 7.1.0 the store fails otherwise (NPU206)
    src = mk("""
        config = torchair.CompilerConfig()
        config.experimental_config.aclgraph._super_kernel_optimize_options = "x"
    """)
    assert codes(lint(src, select=SEL, config=TORCHAIR_MASTER)) == ["NPU204"]
    assert "NPU204" not in codes(lint(src, select=SEL, config='[tool.npulint.releases]\ntorchair = "7.1.0"\n'))


def test_npu204_option_classes_where_releases_differ(lint, monkeypatch):
    # no option but the mode differs between the releases today: a release whose class accepts the
    # value keeps it silent unless the code is pinned to the others, which the message names
    real = tc.option_values

    def values(path):
        out = dict(real(path))
        if path == ("ge_config", "oo_level"):
            out["master"] = dict(out["master"], args=["O3", ["O1", "O2", "O3"]])
        return out

    monkeypatch.setattr(tc, "option_values", values)
    src = mk("""
        config = torchair.CompilerConfig()
        config.ge_config.oo_level = "O2"
    """)
    assert codes(lint(src, select=SEL)) == []
    assert codes(lint(src, select=SEL, config=TORCHAIR_MASTER)) == []
    found = lint(src, select=SEL, config='[tool.npulint.releases]\ntorchair = "7.3.0"\n')
    assert codes(found) == ["NPU204"]
    assert "torchair 7.1.0 to 26.0.0 raises ValueError at this assignment (Ascend/torchair@" in found[0].message
    assert "allowed: 'O1', 'O3'; torchair master accept it)" in found[0].message


# ======================================================================================
# NPU205 aclgraph-output-retained
# ======================================================================================

RO = mk("""
    config = torchair.CompilerConfig()
    config.mode = "reduce-overhead"
    npu_backend = torchair.get_npu_backend(compiler_config=config)
    opt_model = torch.compile(model, backend=npu_backend)
""")


def test_npu205_append_in_loop(lint):
    src = RO + textwrap.dedent("""
        outs = []
        for x in batches:
            out = opt_model(x)
            outs.append(out)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU205"]
    assert pos(found[0]) == at(src, "outs.append")
    msg = found[0].message
    assert f"an output of `opt_model` (compiled at line {at(src, 'torch.compile')[0]}" in msg
    assert '"reduce-overhead" mode' in msg
    assert "kept in `outs` across loop iterations" in msg and "overwrites it in place" in msg
    assert ".clone()" in msg and "enable_output_clone = True" in msg


def test_npu205_an_import_from_a_module_named_like_the_config_is_not_a_use_of_it(lint):
    # ``from helpers.config import x`` / ``from config import x`` bind x, not ``config``:
    # the config's mode stays known (the LibCST engine counted the module name as a use)
    for line in ("from config import batches", "from .config import batches"):
        src = RO.replace('npu_backend = ', line + "\nnpu_backend = ") + textwrap.dedent("""
            outs = []
            for x in batches:
                outs.append(opt_model(x))
        """)
        found = lint({"pkg/__init__.py": "", "pkg/t.py": src}, select=SEL)
        assert codes(found) == ["NPU205"], line


@pytest.mark.parametrize("store, needle", [
    ("outs.insert(0, out)", "outs.insert"),
    ("seen.add(out)", "seen.add"),
    ("outs.extend(out)", "outs.extend"),
    ("outs.append(out[0])", "outs.append"),
    ("outs.append(out[:, -1])", "outs.append"),
    ("cache[step] = out", "cache[step]"),
    ("holder.last = out", "holder.last"),
    ("outs.append(opt_model(x))", "outs.append"),
])
def test_npu205_other_ways_of_keeping(lint, store, needle):
    src = RO + textwrap.dedent(f"""
        outs, seen, cache = [], set(), {{}}
        for step, x in enumerate(batches):
            out = opt_model(x)
            {store}
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU205"]
    assert pos(found[0]) == at(src, needle)


@pytest.mark.parametrize("kept, reported", [
    # basic indexing returns a view of the output (PyTorch's Tensor Views page)
    ("logits[:, -1]", True), ("logits[0]", True), ("logits[None, ..., 1:]", True), ("logits[(0, 1)]", True),
    ("logits[:, LAST]", True), ('logits["logits"]', True), ("logits[0][:, -1]", True),
    # advanced indexing returns a new tensor; an index of unknown kind is not followed
    ("logits[torch.arange(bs), seq_lens - 1]", False), ("logits[[0, 1]]", False), ("logits[mask]", False),
    ("logits[idx]", False), ("logits[idx][0]", False), ("logits[0][idx]", False),
])
def test_npu205_only_basic_indexing_is_the_output(lint, kept, reported):
    """The probe's repro (advanced indexing, /tmp/probe-ta/p12/c.py) and its twins."""
    src = RO + textwrap.dedent(f"""
        LAST = -1
        all_logits = []
        for _ in range(steps):
            logits = opt_model(input_ids)
            last = {kept}
            all_logits.append(last)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == (["NPU205"] if reported else [])
    comp = RO + f"LAST = -1\nkept = [opt_model(x){kept[len('logits'):]} for x in batches]\n"
    assert codes(lint(comp, select=SEL)) == (["NPU205"] if reported else [])


@pytest.mark.parametrize("body, reported", [
    # the store's block leaves the loop: the callable is not called again while it is kept
    ("if out.sum() > 0:\n    found.append(out)\n    break", False),
    ("if out.sum() > 0:\n    found.append(out)\n    return found", False),
    ("if out.sum() > 0:\n    found.append(out); break", False),
    ("found.append(out)\nif ok:\n    break\nelif late:\n    return found\nelse:\n    raise ValueError", False),
    ("if out.sum() > 0:\n    found.append(out)\n    log(out)\n    break", False),
    ("with ctx:\n    found.append(out)\n    return found", False),
    # it does not, or not before the next call
    ("found.append(out)\nif ok:\n    break", True),
    ("if out.sum() > 0:\n    found.append(out)\n    continue", True),
    ("found.append(out)\nif ok:\n    break\nelse:\n    continue", True),
    ("if out.sum() > 0:\n    found.append(out)\n    out = opt_model(x)\n    break", True),
    ("for y in ys:\n    found.append(out)\n    break", True),
    ("with ctx:\n    found.append(out)\n    raise ValueError", True),
    ("try:\n    found.append(out)\n    break\nexcept ValueError:\n    pass", True),
])
def test_npu205_a_store_whose_block_leaves_the_loop(lint, body, reported):
    """The probe's repro (/tmp/probe-ta/p12/b.py: ``found.append(out); break``, and ``return``)."""
    src = RO + "def find_first(xs, ys, ok, late, ctx):\n    found = []\n    for x in xs:\n" \
        "        out = opt_model(x)\n" + textwrap.indent(body, " " * 8) + "\n    return found\n"
    found = lint(src, select=SEL)
    assert codes(found) == (["NPU205"] if reported else [])
    if reported:
        assert pos(found[0]) == at(src, "found.append")


def test_npu205_a_break_does_not_leave_the_loop_around(lint):
    """``break`` leaves the inner loop only: the outer one calls the callable again while
    `found` (made before both) holds the output; one made in each outer iteration does not."""
    src = RO + textwrap.dedent("""
        found = []
        for batch in batches:
            for x in batch:
                out = opt_model(x)
                if out.sum() > 0:
                    found.append(out)
                    break
    """)
    assert codes(lint(src, select=SEL)) == ["NPU205"]
    src = src.replace("found = []\nfor batch in batches:\n", "for batch in batches:\n    found = []\n")
    assert codes(lint(src, select=SEL)) == []


def test_npu205_tuple_outputs_while_loop_and_method(lint):
    src = RO + textwrap.dedent("""
        class Runner:
            def run(self, batches):
                i = 0
                while i < len(batches):
                    logits, cache = opt_model(batches[i])
                    self.last_logits = logits
                    i += 1
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU205"]
    assert pos(found[0]) == at(src, "self.last_logits")


@pytest.mark.parametrize("store", [
    "outs.append(out.clone())",
    "outs.append(out.detach().clone())",
    "outs.append(out.cpu())",
    "outs.append(out.tolist())",
    "outs.append(out.item())",
    "outs.append(copy.deepcopy(out))",
    "outs.append(out.argmax(-1))",
    "total = total + out",
])
def test_npu205_copies_are_clean(lint, store):
    src = RO + textwrap.dedent(f"""
        import copy
        outs = []
        for x in batches:
            out = opt_model(x)
            {store}
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu205_clean_twins(lint):
    loop = "outs = []\nfor x in batches:\n    out = opt_model(x)\n    outs.append(out)\n"
    # enable_output_clone on
    src = RO.replace('npu_backend =', 'config.debug.aclgraph.enable_output_clone = True\nnpu_backend =') + loop
    assert codes(lint(src, select=SEL)) == []
    # max-autotune
    assert codes(lint(RO.replace('"reduce-overhead"', '"max-autotune"') + loop, select=SEL)) == []
    # mode unknown
    assert codes(lint(RO.replace('"reduce-overhead"', 'args.mode') + loop, select=SEL)) == []
    # output clone unknown
    src = RO.replace('npu_backend =', 'config.debug.aclgraph.enable_output_clone = args.clone\nnpu_backend =') + loop
    assert codes(lint(src, select=SEL)) == []
    # a container made in each iteration
    assert codes(lint(RO + "for x in batches:\n    outs = []\n    out = opt_model(x)\n    outs.append(out)\n",
                      select=SEL)) == []
    # no loop
    assert codes(lint(RO + "outs = []\nout = opt_model(x)\nouts.append(out)\n", select=SEL)) == []
    # the call is outside the loop
    assert codes(lint(RO + "outs = []\nout = opt_model(x)\nfor i in range(3):\n    outs.append(out)\n",
                      select=SEL)) == []
    # not the compiled callable
    assert codes(lint(RO + "outs = []\nfor x in batches:\n    out = model(x)\n    outs.append(out)\n",
                      select=SEL)) == []


def test_npu205_decorated_function_npugraph_ex(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode = "npugraph_ex"

        @torch.compile(backend=torchair.get_npu_backend(compiler_config=config), dynamic=False)
        def step(x):
            return x * 2

        history = []
        for x in batches:
            history.append(step(x))
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU205"]
    assert pos(found[0]) == at(src, "history.append")
    assert '"npugraph_ex" mode' in found[0].message


def test_npu205_comprehension_collecting_outputs(lint):
    src = RO + textwrap.dedent("""
        logits = [opt_model(x) for x in batches]
        firsts = {i: opt_model(x)[0] for i, x in enumerate(batches)}
        copies = [opt_model(x).clone() for x in batches]
        total = sum(opt_model(x) for x in batches)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU205", "NPU205"]
    assert [pos(f) for f in found] == [at(src, "[opt_model"), at(src, "{i:")]
    assert "a comprehension collects the outputs of `opt_model`" in found[0].message


# ======================================================================================
# NPU206 unknown-config-option
# ======================================================================================

def test_npu206_unknown_option_raises(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.clone_inputs = False
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU206"]
    assert pos(found[0]) == at(src, "config.debug")
    msg = found[0].message
    assert "`config.debug.aclgraph.clone_inputs` is not a torchair config option" in msg
    assert "_AclGraphDebugConfig has no option 'clone_inputs' and raises ValueError" in msg
    assert "did you mean `config.debug.aclgraph.clone_input`?" in msg


@pytest.mark.parametrize("store, error", [
    ("config.debug.graph_dump_typo = 1", "ValueError"),
    ("config.debug.graph_dump_typo, x = 1, 2", "ValueError"),  # a tuple target sets it too
    ("for config.debug.graph_dump_typo in (1, 2):\n    pass", "ValueError"),
    ("with open('f') as config.debug.graph_dump_typo:\n    pass", "ValueError"),
    ("config.debug.graph_dump_typo += 1", "AttributeError"),  # read first
    ("del config.debug.graph_dump_typo", "AttributeError"),
])
def test_npu206_says_which_error_the_store_raises(lint, store, error):
    src = mk("""
        config = torchair.CompilerConfig()
    """) + store + "\n"
    (found,) = lint(src, select=SEL)
    assert found.code == "NPU206"
    if error == "ValueError":
        assert "_DebugConfig has no option 'graph_dump_typo' and raises ValueError at this assignment" in found.message
    else:
        assert "`config.debug` has no attribute 'graph_dump_typo', so Python raises AttributeError" in found.message


def test_npu206_lenient_sub_config_silently_ignores(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.aclgraph_config.use_custom_pools = torch.npu.graph_pool_handle()
        config.npugraphex_config.clone_outputs = True
        config.export.export_nmae = "net"
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU206"] * 3
    assert "silently stored and ignored" in found[0].message
    assert "did you mean `config.aclgraph_config.use_custom_pool`?" in found[0].message
    assert "did you mean `config.npugraphex_config.clone_output`?" in found[1].message
    assert "did you mean `config.export.export_name`?" in found[2].message


@pytest.mark.parametrize("target", ["aclgraph_config", "npugraphex_config"])
def test_npu206_assigning_the_sub_object_raises(lint, target):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.{target} = None
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU206"]
    assert pos(found[0]) == at(src, f"config.{target}")
    assert f"CompilerConfig has no option '{target}'" in found[0].message
    assert "raises ValueError" in found[0].message


def test_npu206_other_shapes(lint):
    src = mk("""
        import torchair as tng
        config = tng.CompilerConfig()
        config.modes = "reduce-overhead"
        config.debug.fx_summary.path = "/tmp"
        config.debug.aclgraphs.clone_input = False
        config.mode.valeu = "reduce-overhead"
        config.mode.default = "reduce-overhead"
        config.debug.aclgraph.static_capture_size_limt += 1
        config.debug.aclgraph.clone_inputs, other = False, 1
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU206"] * 7
    msgs = [f.message for f in found]
    assert "CompilerConfig has no option 'modes'" in msgs[0] and "did you mean `config.mode`?" in msgs[0]
    assert "_FxSummary has no option 'path'" in msgs[1]
    assert "`config.debug` has no attribute 'aclgraphs', so Python raises AttributeError" in msgs[2]
    assert "option value object" in msgs[3] and "did you mean `config.mode.value`?" in msgs[3]
    assert "read-only property" in msgs[4] and "AttributeError" in msgs[4]
    assert "AttributeError" in msgs[5]
    assert pos(found[6]) == at(src, "config.debug.aclgraph.clone_inputs")


def test_npu206_every_torchair_option_is_known(lint):
    lines = "".join(f"config.{p} = None\n" for p in tc.leaf_paths())
    src = mk("config = torchair.CompilerConfig()\n" + lines +
             "config.mode.value = 'npugraph_ex'\nconfig.debug.aclgraph.clone_input.value = True\n"
             "config.debug.graph_dump.path = '/tmp'\nconfig.debug.data_dump.filter = f\n"
             "config.debug = config.debug\nconfig.experimental_config.aclgraph = x\n")
    assert codes(lint(src, select=["NPU206"])) == []


def test_npu206_option_tree_covers_the_research_field_table():
    # research/npu-api-constraints.md §A.3 (every path it names)
    paths = set(tc.leaf_paths())
    for p in ["mode", "aclgraph_config.use_custom_pool", "debug.aclgraph.disable_mempool_reuse_in_same_fx",
              "debug.aclgraph.clone_input", "debug.aclgraph.enable_output_clone",
              "debug.aclgraph.static_capture_size_limit", "debug.aclgraph.disable_reinplace_inplaceable_ops_pass",
              "debug.aclgraph.disable_reinplace_input_mutated_ops_pass", "debug.aclgraph.remove_cat_ops",
              "debug.run_eagerly", "experimental_config.aclgraph._aclnn_static_shape_kernel",
              "experimental_config.aclgraph._aclnn_static_shape_kernel_build_dir",
              "experimental_config.aclgraph._aclnn_static_shape_kernel_sym_value_range",
              "experimental_config.aclgraph._aclnn_static_shape_kernel_sym_index",
              "experimental_config.aclgraph._super_kernel_optimize",
              "experimental_config.aclgraph._super_kernel_optimize_options",
              "experimental_config.aclgraph._super_kernel_debug_options", "experimental_config.frozen_parameter",
              # §A.5 warn lists
              "inference_config.dynamic_gears_merge_policy", "debug.fx_summary.type", "dump_config.enable_dump",
              "ge_config.export_compile_stat", "export.experimental.auto_atc_config_generated",
              "export.experimental.enable_record_nn_module_stack", "ge_config.enable_single_stream",
              "ge_config.oo_level", "ge_config.oo_constant_folding", "ge_config.oo_dead_code_elimination",
              "experimental_config.topology_sorting_strategy", "experimental_config.cc_parallel_enable",
              "experimental_config.enable_ref_data", "experimental_config.tiling_schedule_optimize",
              "experimental_config.enable_view_optimize", "fusion_config.fusion_switch_file",
              "experimental_config.static_model_ops_lower_limit", "ge_config.aicore_num",
              "ge_config.optimization_switch"]:
        assert p in paths, p
    assert tc.walk(("aclgraph_config",)).status == "unassignable"
    assert tc.walk(("debug", "aclgraph", "clone_inputs")).status == "unknown"
    assert tc.walk(("mode", "value")).option_path == ("mode",)
    assert tc.walk(("aclgraph_config", "use_custom_pool", "x")).status == "opaque"


def test_npu206_traps(lint):
    src = mk("""
        class CompilerConfig:
            pass

        def tune(config):
            config.debug.aclgraph.clone_inputs = False

        local = CompilerConfig()
        local.debug.aclgraph.clone_inputs = False
        cfg = torchair.CompilerConfig()
        cfg.debug = MyDebug()
        cfg.debug.anything = 1
        cfg.aclgraph_config.use_custom_pool.whatever = 1
        self_cfg = holder.cfg
        self_cfg.debug.aclgraph.clone_inputs = False
        if flag:
            maybe = torchair.CompilerConfig()
        else:
            maybe = Other()
        maybe.debug.aclgraph.clone_inputs = False
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu206_module_config_changed_in_a_function(lint):
    src = mk("""
        config = torchair.CompilerConfig()

        def tune():
            config.debug.aclgraph.clone_inputs = False
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU206"]
    assert pos(found[0]) == at(src, "config.debug")


# ======================================================================================
# NPU207 invalid-compile-mode
# ======================================================================================

def test_npu207_reduce_overhead_with_underscore(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode = "reduce_overhead"
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU207"]
    assert pos(found[0]) == at(src, "config.mode")
    msg = found[0].message
    assert "'reduce_overhead' is not a torchair compile mode" in msg and "raises ValueError" in msg
    assert "did you mean 'reduce-overhead'?" in msg


@pytest.mark.parametrize("value", ['"reduce-overhead "', '"default"', "None", '"Max-Autotune"', "MODE", '"npugraph-ex"'])
def test_npu207_other_bad_values(lint, value):
    src = mk(f"""
        MODE = "aclgraph"
        config = torchair.CompilerConfig()
        config.mode.value = {value}
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU207"]
    assert pos(found[0]) == at(src, "config.mode")


@pytest.mark.parametrize("value", ['"max-autotune"', '"reduce-overhead"', '"npugraph_ex"', "args.mode", "m"])
def test_npu207_clean(lint, value):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.mode = {value}
        config.mode.value = {value}
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu207_traps(lint):
    src = mk("""
        class CompilerConfig:
            mode = "x"

        def tune(config):
            config.mode = "reduce_overhead"

        local = CompilerConfig()
        local.mode = "reduce_overhead"
        opts.mode = "reduce_overhead"
    """)
    assert codes(lint(src, select=SEL)) == []


def _torchair(*names):
    return "[tool.npulint.releases]\ntorchair = [" + ", ".join(f'"{n}"' for n in names) + "]\n"


# npugraph_ex: CompilerConfig lists it from 26.0.0 on (rules/torchair_releases.json `modes`)
NPUGRAPH_EX = """
    import torchair as tng
    from torchair import CompilerConfig
    GRAPH_MODE = "npugraph_ex"
    config = CompilerConfig()
    config.mode = GRAPH_MODE
    other = tng.CompilerConfig()
    other.mode.value = "npugraph_ex"
"""


def test_npu207_npugraph_ex_where_every_release_lacks_it(lint):
    src = mk(NPUGRAPH_EX)
    found = lint(src, select=SEL, config=_torchair("7.2.0", "7.3.0"))
    assert codes(found) == ["NPU207", "NPU207"]
    assert [pos(f) for f in found] == [at(src, "config.mode"), at(src, "other.mode")]
    assert found[0].message == (
        "'npugraph_ex' is not a torchair compile mode in torchair 7.1.0 to 7.3.0 (Ascend/torchair@9a83e396 "
        "python/torchair/configs/compiler_config.py:39; torchair 26.0.0, master accept it): torchair raises "
        "ValueError at this assignment; use \"max-autotune\" or \"reduce-overhead\"")


@pytest.mark.parametrize("names", [("7.3.0", "26.0.0"), ("master",), ()])
def test_npu207_npugraph_ex_where_a_release_has_it(lint, names):
    # one release the code may run on accepts it; no release configured: every one npulint knows
    config = _torchair(*names) if names else None
    assert codes(lint(mk(NPUGRAPH_EX), select=SEL, config=config)) == []


@pytest.mark.parametrize("pin, npugraph_ex, misspelt", [("torchair==6.0.rc1", 0, 2), ("torchair==7.2.0", 2, 2)])
def test_npu207_a_release_npulint_has_no_data_for(tmp_path, cli_run, pin, npugraph_ex, misspelt):
    # torchair 6.0.rc1 is no release npulint has data for: a mode some release accepts is not
    # reported (its twin: a known release that rejects it); a mode no release accepts always is
    (tmp_path / "requirements.txt").write_text(pin + "\n")
    (tmp_path / "m.py").write_text(mk(NPUGRAPH_EX))
    assert cli_run(["--select", "NPU207", "--no-cache", "."], tmp_path).stdout.count("NPU207") == npugraph_ex
    (tmp_path / "m.py").write_text(mk(NPUGRAPH_EX).replace('"npugraph_ex"\n', '"npugraph-ex"\n'))
    r = cli_run(["--select", "NPU207", "--no-cache", "."], tmp_path)
    assert r.stdout.count("NPU207") == misspelt
    assert "'npugraph-ex' is not a torchair compile mode: torchair raises ValueError" in r.stdout


def test_npu207_a_mode_under_a_version_guard_is_not_judged_by_release(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        if NEW_TORCHAIR:
            config.mode = "npugraph_ex"
        else:
            config.mode = "reduce-overhead"
        try:
            config.mode = "npugraph_ex"
        except ValueError:
            config.mode = "reduce-overhead"
    """)
    assert codes(lint(src, select=SEL, config=_torchair("7.3.0"))) == []
    # the twin: a misspelt mode is wrong on every release, guarded or not
    assert codes(lint(src.replace('"npugraph_ex"', '"npugraph-ex"'), select=SEL, config=_torchair("7.3.0"))) == \
        ["NPU207", "NPU207"]


def test_npu207_release_pinned_in_requirements(tmp_path, cli_run):
    (tmp_path / "requirements.txt").write_text("torchair==7.1.0\n")
    (tmp_path / "m.py").write_text(mk(NPUGRAPH_EX))
    r = cli_run(["--select", "NPU207", "--no-cache", "."], tmp_path)
    assert r.stdout.count("NPU207") == 2 and "torchair 7.1.0 to 7.3.0" in r.stdout, r.stdout
    (tmp_path / "requirements.txt").write_text("torchair==26.0.0\n")  # the twin
    assert cli_run(["--select", "NPU207", "--no-cache", "."], tmp_path).stdout.count("NPU207") == 0


def test_npu207_suggests_only_the_modes_of_the_releases_in_effect(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        config.mode = "npugraph"
    """)
    (pinned,) = lint(src, select=SEL, config=_torchair("7.3.0"))
    assert pinned.message == ("'npugraph' is not a torchair compile mode: torchair raises ValueError at this "
                              "assignment; use \"max-autotune\" or \"reduce-overhead\"")
    (every,) = lint(src, select=SEL, config="[tool.npulint]\n")  # nothing configured: every release
    assert every.message.endswith("use \"max-autotune\", \"reduce-overhead\" or \"npugraph_ex\"; did you mean "
                                  "'npugraph_ex'?")


def test_npu207_options_the_code_sets_contradict_an_inferred_release(tmp_path, cli_run):
    # npugraphex_config's options arrive in 26.0.0: code that sets one before the mode was not
    # written for the inferred 7.3.0, so it is judged on every release (npugraph_ex: accepted)
    (tmp_path / "requirements.txt").write_text("torchair==7.3.0\n")
    body = mk("""
        config = torchair.CompilerConfig()
        config.npugraphex_config.inplace_pass = False
        config.mode = "npugraph_ex"
    """)
    assert tc.option_releases(("npugraphex_config", "inplace_pass")) == {"26.0.0", "master"}
    (tmp_path / "m.py").write_text(body)
    assert cli_run(["--select", "NPU207", "--no-cache", "."], tmp_path).stdout == ""
    # the twin: without that option the inferred release stands
    (tmp_path / "m.py").write_text(body.replace("config.npugraphex_config.inplace_pass = False\n", ""))
    assert cli_run(["--select", "NPU207", "--no-cache", "."], tmp_path).stdout.count("NPU207") == 1


def test_npu207_modes_are_the_generated_data():
    from npulint import releases

    modes = releases.torchair_data()["modes"]
    assert set(modes) == set(tc.MODES) and set(tc.ACLGRAPH_MODES) < set(tc.MODES)
    assert sorted(modes["npugraph_ex"]) == ["26.0.0", "master"]
    assert sorted(modes["reduce-overhead"]) == sorted(modes["max-autotune"]) == sorted(releases.known("torchair"))
    assert modes["max-autotune"]["7.1.0"] == "Ascend/torchair@85e8475e python/torchair/configs/compiler_config.py:34"


# ======================================================================================
# NPU208 compile-mode-kwarg-ignored
# ======================================================================================

def test_npu208_mode_kwarg_with_torchair_backend(lint):
    src = mk("""
        config = torchair.CompilerConfig()
        npu_backend = torchair.get_npu_backend(compiler_config=config)
        model = torch.compile(model, backend=npu_backend, mode="reduce-overhead")
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU208"]
    assert pos(found[0]) == at(src, 'mode="reduce-overhead"')
    msg = found[0].message
    line = at(src, "torchair.get_npu_backend")[0]
    assert f"passes mode='reduce-overhead' to the torchair backend (get_npu_backend at line {line})" in msg
    assert 'the config\'s mode ("max-autotune")' in msg and "set `config.mode`" in msg


def test_npu208_inline_backend_and_default_config(lint):
    src = mk("""
        import torchair as tng
        MODE = "max-autotune-no-cudagraphs"
        model = torch.compile(model, mode=MODE, backend=tng.get_npu_backend())
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU208"]
    assert pos(found[0]) == at(src, "mode=MODE")


@pytest.mark.parametrize("compile_call", [
    "torch.compile(model, backend=npu_backend)",
    "torch.compile(model, backend=npu_backend, mode=None)",
    "torch.compile(model, backend=npu_backend, mode='default')",
    "torch.compile(model, backend=npu_backend, mode=args.mode)",
    "torch.compile(model, mode='reduce-overhead')",
    "torch.compile(model, backend='npugraph_ex', mode='reduce-overhead')",
    "torch.compile(model, backend=other_backend, mode='reduce-overhead')",
])
def test_npu208_clean(lint, compile_call):
    src = mk(f"""
        npu_backend = torchair.get_npu_backend()
        model = {compile_call}
    """)
    assert codes(lint(src, select=SEL)) == []


MODE_KWARG = """
    import torchair as tng
    from torchair import get_npu_backend
    MODE = "reduce-overhead"
    config = tng.CompilerConfig()
    model = torch.compile(model, backend=get_npu_backend(compiler_config=config), mode=MODE)
"""


def test_npu208_where_every_release_ignores_it(lint):
    src = mk(MODE_KWARG)
    (f,) = lint(src, select=SEL, config=_torchair("7.3.0", "master"))
    assert pos(f) == at(src, "mode=MODE")
    line = at(src, "get_npu_backend(compiler")[0]
    assert f.message == (
        f"torch.compile passes mode='reduce-overhead' to the torchair backend (get_npu_backend at line {line}), "
        "which ignores it (torchair 7.3.0 to master: Ascend/torchair@fced8842 python/torchair/npu_fx_compiler.py:865, "
        "python/torchair/configs/npugraphex_config.py:89-122): the graph runs in the config's mode "
        "(\"max-autotune\"); set `config.mode` on the CompilerConfig passed to get_npu_backend and drop `mode=` here")


def test_npu208_where_every_release_raises(lint):
    src = mk(MODE_KWARG)
    (f,) = lint(src, select=SEL, config=_torchair("7.1.0", "7.2.0"))
    assert "ignore" not in f.message
    assert ("which takes no `mode` argument (torchair 7.1.0, 7.2.0: Ascend/torchair@d20f4f9c "
            "python/torchair/npu_fx_compiler.py:586): Python raises TypeError when the model is first compiled; "
            "set `config.mode`") in f.message


def test_npu208_releases_that_differ_are_named_each(lint):
    src = mk(MODE_KWARG)
    (f,) = lint(src, select=SEL, config=_torchair("7.2.0", "26.0.0"))
    assert ": torchair 7.3.0 to master ignore it, and the graph runs in the config's mode (\"max-autotune\"); " \
           "torchair 7.1.0, 7.2.0 take no `mode` argument and raise TypeError" in f.message


def test_npu208_release_pinned_in_requirements(tmp_path, cli_run):
    (tmp_path / "requirements.txt").write_text("torchair==7.2.0\n")
    (tmp_path / "m.py").write_text(mk(MODE_KWARG))
    r = cli_run(["--select", "NPU208", "--no-cache", "."], tmp_path)
    assert r.stdout.count("NPU208") == 1 and "raises TypeError" in r.stdout and "ignores" not in r.stdout, r.stdout
    # a release npulint has no data for: nothing is said
    (tmp_path / "requirements.txt").write_text("torchair==6.0.rc1\n")
    assert cli_run(["--select", "NPU208", "--no-cache", "."], tmp_path).stdout == ""


def test_npu208_effects_are_the_generated_data():
    from npulint import releases

    effects = releases.torchair_data()["mode_kwarg"]
    assert {r: e["effect"] for r, e in effects.items()} == {
        "7.1.0": "raises", "7.2.0": "raises", "7.3.0": "ignores", "26.0.0": "ignores", "master": "ignores"}
    assert effects["7.1.0"]["source"] == "Ascend/torchair@85e8475e python/torchair/npu_fx_compiler.py:432"


# ======================================================================================
# The vendor examples (docs/001, and the torchair part of docs/002)
# ======================================================================================

# docs/001 使用方法 (lines 1-14 of the example, verbatim; the doc itself imports only torch_npu and torchair)
DOC_001_EXAMPLE = """\
import torch_npu, torchair
config = torchair.CompilerConfig()
# 配置图执行模式
config.mode = "reduce-overhead"
# 开启模式一
config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()
# 关闭模式二
config.debug.aclgraph.disable_mempool_reuse_in_same_fx = True
# 关闭模式三
config.debug.aclgraph.clone_input = False
# 主动开启输出内存拷贝
config.debug.aclgraph.enable_output_clone = True
npu_backend = torchair.get_npu_backend(compiler_config=config)
opt_model = torch.compile(model, backend=npu_backend)
"""

# docs/002 (in-graph multi-stream, 48 lines), with its indentation restored
DOC_002_EXAMPLE = (REPO / "tests" / "fixtures" / "doc002_multistream.py").read_text(encoding="utf-8")


def _flat(text):
    return " ".join(text.split())


@pytest.mark.parametrize("name, example", [("001_06edc31463f448ca.txt", DOC_001_EXAMPLE),
                                           ("002_e8652c860bb7e87b.txt", DOC_002_EXAMPLE)])
def test_vendor_examples_are_the_docs_code(name, example):
    doc = DOCS / name
    if not doc.exists():
        pytest.skip("shared docs not available")
    flat = _flat(doc.read_text(encoding="utf-8"))
    for line in example.splitlines():
        if line.strip():
            assert _flat(line) in flat, line


def test_doc_001_example_lints_clean(lint):
    assert codes(lint(DOC_001_EXAMPLE, select=SEL)) == []
    assert codes(lint(DOC_001_EXAMPLE, select=["ALL"])) == []
    # with torch imported (torch.compile then resolves) and the model run in a loop
    src = "import torch\n" + DOC_001_EXAMPLE + "outs = []\nfor x in batches:\n    outs.append(opt_model(x))\n"
    assert codes(lint(src, select=["ALL"])) == []


def test_doc_001_example_variants_are_reported(lint):
    src = "import torch\n" + DOC_001_EXAMPLE
    # mode line dropped: every aclgraph option is ignored in max-autotune
    found = lint(src.replace('config.mode = "reduce-overhead"\n', ""), select=SEL)
    assert codes(found) == ["NPU201"] * 4
    # mode 2 "closed" with False: no effect with a custom pool
    found = lint(src.replace("disable_mempool_reuse_in_same_fx = True", "disable_mempool_reuse_in_same_fx = False"),
                 select=SEL)
    assert codes(found) == ["NPU202"]
    # without the output clone, outputs kept across calls are overwritten
    found = lint(src.replace("enable_output_clone = True", "enable_output_clone = False")
                 + "outs = []\nfor x in batches:\n    outs.append(opt_model(x))\n", select=SEL)
    assert codes(found) == ["NPU205"]


def test_doc_002_example_lints_clean(lint):
    assert codes(lint(DOC_002_EXAMPLE, select=SEL)) == []
    found = lint(DOC_002_EXAMPLE.replace("model = torch.compile(model, backend=npu_backend, dynamic=False",
                                         "model = torch.compile(model, backend=npu_backend, mode='reduce-overhead', "
                                         "dynamic=False"), select=SEL)
    assert codes(found) == ["NPU208"]
    assert '("reduce-overhead")' in found[0].message


# ======================================================================================
# Several rules together
# ======================================================================================

def test_all_rules_in_one_file(lint):
    src = mk("""
        import torchair as tng
        cfg = tng.CompilerConfig()
        cfg.mode = "reduce-overhead"
        cfg.debug.aclgraph.clone_inputs = False
        cfg.debug.aclgraph.clone_input = "False"
        max_cfg = tng.CompilerConfig()
        max_cfg.mode = "reduce_overhead"
        other = tng.CompilerConfig()
        other.debug.aclgraph.enable_output_clone = True
        b = tng.get_npu_backend(compiler_config=cfg)
        b2 = tng.get_npu_backend(compiler_config=other)
        enc = torch.compile(encoder, backend=b)
        dec = torch.compile(decoder, backend=b, mode="max-autotune")
    """)
    found = lint(src, select=SEL)
    assert [(f.code, pos(f)) for f in found] == [
        ("NPU206", at(src, "cfg.debug.aclgraph.clone_inputs")), ("NPU204", at(src, "cfg.debug.aclgraph.clone_input =")),
        ("NPU207", at(src, "max_cfg.mode")), ("NPU201", at(src, "other.debug")),
        ("NPU203", at(src, "torch.compile(decoder")), ("NPU208", at(src, 'mode="max-autotune"'))]


def test_files_without_torchair_are_not_parsed_by_the_rule(lint):
    src = "config.mode = 'reduce_overhead'\nconfig.debug.aclgraph.clone_inputs = 1\n"
    assert codes(lint(src, select=SEL)) == []


def test_imported_constants_are_not_values(lint):
    # an imported name is an object we cannot evaluate: never reported as a wrong value
    src = mk("""
        from settings import MODE, POOL, FLAG, LIMIT
        import settings
        config = torchair.CompilerConfig()
        config.mode = MODE
        config.mode.value = settings.MODE
        config.aclgraph_config.use_custom_pool = POOL
        config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False
        config.debug.aclgraph.clone_input = FLAG
        config.debug.aclgraph.static_capture_size_limit = LIMIT
        backend = torchair.get_npu_backend(compiler_config=config)
        model = torch.compile(model, backend=backend, mode=settings.COMPILE_MODE)
        other = torch.compile(other, backend=backend, mode=torch.float16)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_rule_names_and_severities_match_the_catalog():
    # RULES.md "NPU2xx"
    catalog = {
        "NPU201": ("aclgraph-option-ignored", "warning"),
        "NPU202": ("custom-pool-overrides-fx-reuse", "warning"),
        "NPU203": ("graphs-without-shared-pool", "warning"),
        "NPU204": ("config-option-type", "error"),
        "NPU205": ("aclgraph-output-retained", "warning"),
        "NPU206": ("unknown-config-option", "error"),
        "NPU207": ("invalid-compile-mode", "error"),
        "NPU208": ("compile-mode-kwarg-ignored", "warning"),
    }
    from npulint import registry
    found = {r.code: (r.name, r.severity) for r in registry.load()[0] if r.code.startswith("NPU2")}
    assert found == catalog


NPU203_HEAD = """
import torch
import torchair
"""


def _ro_compile(name, extra=""):
    return (f"    cfg_{name} = torchair.CompilerConfig()\n    cfg_{name}.mode = 'reduce-overhead'\n{extra}"
            f"    {name} = torch.compile(m_{name}, backend=torchair.get_npu_backend(compiler_config=cfg_{name}))\n")


def test_npu203_compiles_in_one_function_are_reported(lint):
    src = NPU203_HEAD + "def build(m_enc, m_dec):\n" + _ro_compile("enc") + _ro_compile("dec")
    assert codes(lint(src, select=["NPU203"], config=TORCHAIR_MASTER)) == ["NPU203"]


def test_npu203_compiles_in_separate_functions_are_not_compared(lint):
    # separate tests or spawned workers: not known to hold their graphs at the same time
    src = (NPU203_HEAD + "def test_a(m_enc):\n" + _ro_compile("enc") + "def test_b(m_dec):\n" + _ro_compile("dec"))
    assert codes(lint(src, select=["NPU203"], config=TORCHAIR_MASTER)) == []


def test_npu203_run_eagerly_captures_no_graph(lint):
    eager = "    cfg_{n}.debug.run_eagerly = True\n"
    src = (NPU203_HEAD + "def build(m_enc, m_dec):\n" + _ro_compile("enc", eager.format(n="enc"))
           + _ro_compile("dec", eager.format(n="dec")))
    assert codes(lint(src, select=["NPU203"], config=TORCHAIR_MASTER)) == []


def test_npu203_compiles_separated_by_dynamo_reset_do_not_coexist(lint):
    # torch._dynamo.reset() forgets the graphs compiled before it (and their pools with them)
    src = (NPU203_HEAD + "from torch._dynamo import reset as forget\n"
           + "def build(m_enc, m_dec, m_x):\n" + _ro_compile("enc") + "    torch._dynamo.reset()\n"
           + _ro_compile("dec") + "    forget()\n" + _ro_compile("x"))
    assert codes(lint(src, select=["NPU203"], config=TORCHAIR_MASTER)) == []
    # the clean twin's trap: two compiles after the same reset still coexist
    src = (NPU203_HEAD + "def build(m_enc, m_dec):\n    torch.compiler.reset()\n" + _ro_compile("enc")
           + _ro_compile("dec"))
    assert codes(lint(src, select=["NPU203"], config=TORCHAIR_MASTER)) == ["NPU203"]


def test_npu203_reset_through_a_helper_of_the_file_separates_too(lint):
    src = (NPU203_HEAD + "def clean():\n    torch._dynamo.reset()\n"
           + "def build(m_enc, m_dec):\n" + _ro_compile("enc") + "    clean()\n" + _ro_compile("dec"))
    assert codes(lint(src, select=["NPU203"], config=TORCHAIR_MASTER)) == []
    # a local function named like torch's, which is not a reset: still reported
    src = (NPU203_HEAD + "def reset():\n    pass\n"
           + "def build(m_enc, m_dec):\n" + _ro_compile("enc") + "    reset()\n" + _ro_compile("dec"))
    assert codes(lint(src, select=["NPU203"], config=TORCHAIR_MASTER)) == ["NPU203"]


BRANCHES = NPU203_HEAD + """
def build(model, use_graph, kind):
    cfg = torchair.CompilerConfig()
    cfg.mode = "reduce-overhead"
    backend = torchair.get_npu_backend(compiler_config=cfg)
{body}
"""


@pytest.mark.parametrize("body", [
    # two arms of one if/elif/else
    "    if use_graph:\n        m = torch.compile(model, backend=backend)\n"
    "    elif kind:\n        m = torch.compile(model.half(), backend=backend)\n"
    "    else:\n        m = torch.compile(model.float(), backend=backend)\n    return m\n",
    # a try and its handlers
    "    try:\n        m = torch.compile(model, backend=backend)\n"
    "    except ValueError:\n        m = torch.compile(model.half(), backend=backend)\n"
    "    except TypeError:\n        m = torch.compile(model.float(), backend=backend)\n    return m\n",
    # two cases of one match
    "    match kind:\n        case 1:\n            m = torch.compile(model, backend=backend)\n"
    "        case _:\n            m = torch.compile(model.half(), backend=backend)\n    return m\n",
    # after a return
    "    m = torch.compile(model.prefill, backend=backend)\n    return m\n"
    "    d = torch.compile(model.decode, backend=backend)\n    return d\n",
    "    if use_graph:\n        m = torch.compile(model, backend=backend)\n        raise SystemExit(m)\n"
    "        d = torch.compile(model.decode, backend=backend)\n",
    # after an if whose body always ends: only when that body did not run
    "    if use_graph:\n        return torch.compile(model.decode, backend=backend)\n"
    "    return torch.compile(model, backend=backend)\n",
    "    if use_graph:\n        if kind:\n            return torch.compile(model, backend=backend)\n"
    "        return torch.compile(model.half(), backend=backend)\n    raise ValueError(kind)\n",
    "    if use_graph:\n        raise ValueError(kind)\n    elif kind:\n"
    "        return torch.compile(model, backend=backend)\n    m = torch.compile(model.half(), backend=backend)\n",
    # after an if/else whose arms all end: never runs
    "    if use_graph:\n        return torch.compile(model, backend=backend)\n    else:\n        raise ValueError(kind)\n"
    "    d = torch.compile(model.decode, backend=backend)\n",
    # the two arms of a conditional expression
    "    m = torch.compile(model, backend=backend) if use_graph else torch.compile(model.half(), backend=backend)\n"
    "    return m\n",
])
def test_npu203_compiles_that_never_both_run_are_not_compared(lint, body):
    src = BRANCHES.format(body=body)
    assert codes(lint(src, select=["NPU203"], config=TORCHAIR_MASTER)) == []


@pytest.mark.parametrize("body, second", [
    # an if after the first compile: both run
    ("    m = torch.compile(model, backend=backend)\n    if use_graph:\n"
     "        d = torch.compile(model.decode, backend=backend)\n", "model.decode"),
    # a try body and its else both run
    ("    try:\n        m = torch.compile(model, backend=backend)\n    except ValueError:\n        raise\n"
     "    else:\n        d = torch.compile(model.decode, backend=backend)\n", "model.decode"),
    # the arms of an if in a loop take turns
    ("    for flag in (True, False):\n        if flag:\n            m = torch.compile(model, backend=backend)\n"
     "        else:\n            d = torch.compile(model.decode, backend=backend)\n", "model.decode"),
    # a return under an if: what follows the if still runs
    ("    m = torch.compile(model, backend=backend)\n    if m is None:\n        return\n"
     "    d = torch.compile(model.decode, backend=backend)\n", "model.decode"),
    # the third compile shares the first's arm: reported against it
    ("    if use_graph:\n        m = torch.compile(model, backend=backend)\n"
     "        d = torch.compile(model.decode, backend=backend)\n    else:\n"
     "        h = torch.compile(model.half(), backend=backend)\n", "model.decode"),
    # an if whose body does not always end: what follows may run after it
    ("    if use_graph:\n        m = torch.compile(model, backend=backend)\n        if kind:\n            return m\n"
     "    d = torch.compile(model.decode, backend=backend)\n", "model.decode"),
    # a raise in a with may be suppressed by its context manager
    ("    if use_graph:\n        with contextlib.suppress(ValueError):\n"
     "            m = torch.compile(model, backend=backend)\n            raise ValueError(m)\n"
     "    d = torch.compile(model.decode, backend=backend)\n", "model.decode"),
    # the operands of or/and are not arms: both run when the first is falsy
    ("    m = torch.compile(model, backend=backend) or torch.compile(model.decode, backend=backend)\n",
     "model.decode"),
    # an early continue in a loop: the next turn may run what follows
    ("    for k in kind:\n        if k:\n            m = torch.compile(model, backend=backend)\n            continue\n"
     "        d = torch.compile(model.decode, backend=backend)\n", "model.decode"),
    # the arms of a conditional expression in a loop take turns
    ("    for k in kind:\n"
     "        m = torch.compile(model, backend=backend) if k else torch.compile(model.decode, backend=backend)\n",
     "model.decode"),
])
def test_npu203_compiles_that_may_both_run_clean_twins(lint, body, second):
    src = BRANCHES.format(body=body)
    found = lint(src, select=["NPU203"], config=TORCHAIR_MASTER)
    assert [pos(f) for f in found] == [at(src, f"torch.compile({second}")]
    assert f"the first is at line {at(src, 'torch.compile(model,')[0]}" in found[0].message


# ======================================================================================
# Found by tools/tadiff.py (torchair's own config classes as the oracle)
# ======================================================================================

# debug.deadlock_check is master's only (rules/torchair_releases.json); 7.1.0 has none of it
@pytest.mark.parametrize("store", ["config.debug.deadlock_check = V", "config.debug.deadlock_check.value = V",
                                   "config.debug.deadlock_check = 1.0"])
def test_npu204_only_on_the_releases_that_define_the_option(lint, store):
    src = mk(f"""
        V = "yes"
        config = torchair.CompilerConfig()
        {store}
    """)
    # torchair 7.1.0: ValueError "has no option" / AttributeError, not the option's check (NPU206 says so)
    found = lint(src, select=["NPU204", "NPU206"], config=_torchair("7.1.0"))
    assert codes(found) == ["NPU206"]
    assert codes(lint(src, select=["NPU204"], config=_torchair("master"))) == ["NPU204"]
    # no pin: the code that sets it runs on a release that has it (master)
    assert codes(lint(src, select=["NPU204"])) == ["NPU204"]


def test_npu204_release_evidence_from_an_earlier_store(lint):
    # static_capture_size_limit is 7.2.0 on; with 7.1.0 and 7.2.0 configured, the store itself
    # says the code runs on 7.2.0
    src = mk("""
        config = torchair.CompilerConfig()
        config.debug.aclgraph.static_capture_size_limit = 0
    """)
    assert codes(lint(src, select=["NPU204"], config=_torchair("7.1.0", "7.2.0"))) == ["NPU204"]
    assert codes(lint(src, select=["NPU204"], config=_torchair("7.1.0"))) == []


@pytest.mark.parametrize("release, path, effect", [
    ("7.3.0", "npugraphex_config.use_graph_pool", "the value is stored and ignored"),  # 26.0.0 on, lenient
    ("7.1.0", "debug.deadlock_check", "torchair raises ValueError at this assignment"),  # master, strict
])
def test_npu206_missing_option_augmented_reads_it_first(lint, release, path, effect):
    src = mk(f"""
        config = torchair.CompilerConfig()
        config.{path} += 1
        del config.{path}
        config.{path} = 1
    """)
    found = lint(src, select=["NPU206"], config=_torchair(release))
    assert codes(found) == ["NPU206"] * 3
    reads = f"reading `config.{path}` raises AttributeError"
    assert reads in found[0].message and reads in found[1].message  # `+=` reads it; `del` finds none
    assert effect in found[2].message and "AttributeError" not in found[2].message


def test_npu206_unassignable_sub_object_augmented_or_deleted(lint):
    # `config.aclgraph_config += 1`: the `+` of _AclGraphConfig and int raises TypeError first;
    # `del` deletes the attribute (NpuBaseConfig has no __delattr__): no ValueError either way
    src = mk("""
        config = torchair.CompilerConfig()
        config.aclgraph_config += 1
        del config.npugraphex_config
        config.aclgraph_config = None
    """)
    found = lint(src, select=["NPU206"])
    assert codes(found) == ["NPU206"] and pos(found[0]) == at(src, "config.aclgraph_config = None")
    assert "raises ValueError at this assignment" in found[0].message


def test_a_store_a_test_expects_to_raise_is_not_reported(lint):
    # torchair's own tests: `with self.assertRaises(ValueError): config.mode = "bad"` tests the
    # raise NPU207 (and NPU204, NPU206) would report
    for manager in ("self.assertRaises(ValueError)", "self.assertRaisesRegex(ValueError, 'mode')",
                    "pytest.raises(ValueError)"):
        src = mk(f"""
            import pytest
            class T:
                def test(self):
                    config = torchair.CompilerConfig()
                    with {manager}:
                        config.mode = "reduce_overhead"
                    with {manager}:
                        config.debug.no_such_option = True
        """)
        assert codes(lint(src, select=SEL)) == [], manager
    # the twins: outside the with, and inside a with that expects nothing
    src = mk("""
        import contextlib
        config = torchair.CompilerConfig()
        config.mode = "reduce_overhead"
        with contextlib.nullcontext():
            config.mode = "default"
    """)
    assert codes(lint(src, select=SEL)) == ["NPU207", "NPU207"]


def test_a_long_value_of_a_regex_option_is_not_matched(lint):
    # the third review's repro: dump_step's pattern backtracks exponentially on a long run of
    # digits (the lint hung); a value past MAX_REGEX_VALUE is not judged, a short one is
    MAX_REGEX_VALUE = tc.MAX_REGEX_VALUE

    long_value = "1" * 30 + "x"
    assert len(long_value) > MAX_REGEX_VALUE
    assert only(lint(mk(f'config = torchair.CompilerConfig()\nconfig.dump_config.dump_step = "{long_value}"\n'),
                     select=SEL), "NPU204") == []
    assert codes(only(lint(mk('config = torchair.CompilerConfig()\nconfig.dump_config.dump_step = "1x"\n'),
                           select=SEL), "NPU204")) == ["NPU204"]


def test_a_pool_stored_in_a_with_that_expects_a_raise_is_still_reported(lint):
    # use_custom_pool is stored unchecked: torchair raises later, not at the assignment, so a
    # `pytest.raises` around the store does not test that raise
    src = mk("""
        import pytest
        config = torchair.CompilerConfig()
        with pytest.raises(TypeError):
            config.aclgraph_config.use_custom_pool = True
    """)
    assert codes(only(lint(src, select=SEL), "NPU204")) == ["NPU204"]


# ======================================================================================
# A config another module of the run makes, imported (``from comp import config``)
# ======================================================================================

COMP = "import torchair\nconfig = torchair.CompilerConfig()\n"
USES = ('config.mode = "fast"\n'  # NPU207
        "config.debug.aclgraph.clone_inputs = False\n"  # NPU206
        'config.debug.aclgraph.clone_input = "False"\n'  # NPU204
        "config.aclgraph_config.use_custom_pool = None\n")  # (a valid store: NPU201 needs the mode, unknown here)


@pytest.mark.parametrize("comp, main, name", [
    (COMP, "from comp import config\n", "config"),
    ("from torchair import CompilerConfig\nconfig = CompilerConfig()\n", "from comp import config\n", "config"),
    ("from torchair.configs.compiler_config import CompilerConfig as CC\nconfig = CC()\n",
     "from comp import config as cfg\n", "cfg"),
    ("from .comp import *\n", "from pkg.comp import config\n", "config"),  # (comp.py is then pkg/comp.py)
])
def test_stores_to_a_config_imported_from_another_module(lint, comp, main, name):
    # torchair validates at the assignment, whoever made the config: the checks that need
    # nothing of the other module's stores apply
    src = main + "".join(f"{name}{line[len('config'):]}\n" for line in USES.splitlines())
    if comp.startswith("from .comp"):
        found = lint({"pkg/__init__.py": comp, "pkg/comp.py": COMP, "main.py": src}, select=SEL)
    else:
        found = lint({"comp.py": comp, "main.py": src}, select=SEL)
    assert [(f.path, f.line, f.code) for f in found] == [
        ("main.py", at(src, f'{name}.mode = "fast"')[0], "NPU207"),
        ("main.py", at(src, f"{name}.debug.aclgraph.clone_inputs")[0], "NPU206"),
        ("main.py", at(src, f"{name}.debug.aclgraph.clone_input =")[0], "NPU204")]


@pytest.mark.parametrize("files", [
    {"comp.py": COMP.replace("config = ", "if FAST:\n    config = ")},  # may not be a config
    {"comp.py": COMP + "config = make()\n"},  # rebound
    {"comp.py": COMP, "other.py": "import comp\ncomp.config = object()\n"},  # replaced from elsewhere
    {"comp.py": "import mylib\nconfig = mylib.CompilerConfig()\n"},  # not torchair's
    {"comp.py": COMP, "other.py": "from comp import config\nconfig.debug = object()\n"},  # sub-configs replaced
])
def test_stores_to_a_config_imported_from_another_module_unknown(lint, files):
    found = lint(dict(files, **{"main.py": "from comp import config\n" + USES.replace('"fast"', '"max-autotune"')}),
                 select=SEL)
    assert [f for f in found if f.path == "main.py"] == []


def test_stores_to_a_config_imported_from_another_module_valid_values_twin(lint):
    valid = ('config.mode = "reduce-overhead"\nconfig.debug.aclgraph.clone_input = False\n')
    assert lint({"comp.py": COMP, "main.py": "from comp import config\n" + valid}, select=SEL) == []


@pytest.mark.parametrize("reach", [
    'globals()["config"].mode = "reduce-overhead"', 'vars()["config"].mode = "reduce-overhead"',
    'exec("config.mode = \'reduce-overhead\'")', 'sys.modules[__name__].config.mode = "reduce-overhead"',
])
def test_npu201_config_reached_through_the_module_namespace_is_unknown(lint, reach):
    src = ("import sys\nimport torchair\nconfig = torchair.CompilerConfig()\n" + reach + "\n"
           "config.debug.aclgraph.clone_input = False\n"
           "backend = torchair.get_npu_backend(compiler_config=config)\n")
    assert only(lint(src, select=SEL), "NPU201") == []
    # twin: a read of the namespace changes nothing; the mode is never set
    twin = src.replace(reach, 'assert "config" in globals()')
    assert [f.code for f in only(lint(twin, select=SEL), "NPU201")] == ["NPU201"]
