"""Resolution beyond one file's straight-line code (RULES.md "General semantics"): names
and constants imported from the modules of the run (through package ``__init__``
re-exports and star-import chains, honouring ``__all__``), class attributes bound once,
literal dict/tuple lookups, and the body of ``if __name__ == "__main__":`` as straight-line
code. Each case has its violation, its clean twin and the unknown case that stays silent."""

import ast
import pathlib
import textwrap

import pytest

from conftest import probe_values

from npulint.values import UNKNOWN


def d(src):
    return textwrap.dedent(src).lstrip("\n")


def only(found, *wanted):
    return [f for f in found if f.code in wanted]


# ======================================================================================
# 5. ``if __name__ == "__main__":`` is straight-line code
# ======================================================================================

MAIN_201 = d("""
    import torch
    import torchair

    def main():
        pass

    if __name__ == "__main__":
        config = torchair.CompilerConfig()
        config.mode = "max-autotune"
        config.debug.aclgraph.disable_reinplace_inplaceable_ops_pass = True
        backend = torchair.get_npu_backend(compiler_config=config)
        model = torch.compile(torch.nn.Linear(2, 2), backend=backend)
""")


def test_main_guard_body_is_straight_line_npu201(lint):
    found = only(lint({"run.py": MAIN_201}, select=["NPU2"]), "NPU201")
    assert [(f.code, f.line) for f in found] == [("NPU201", 10)]


def test_main_guard_clean_twin_reduce_overhead(lint):
    src = MAIN_201.replace('config.mode = "max-autotune"', 'config.mode = "reduce-overhead"')
    assert only(lint({"run.py": src}, select=["NPU2"]), "NPU201") == []


def test_mode_set_under_if_inside_main_guard_stays_unknown(lint):
    src = MAIN_201.replace('config.mode = "max-autotune"', 'if flag:\n        config.mode = "max-autotune"')
    assert only(lint({"run.py": src}, select=["NPU2"]), "NPU201") == []


MIXED_201 = d("""
    import torch
    import torchair

    config = torchair.CompilerConfig()

    if __name__ == "__main__":
        config.mode = "max-autotune"
        config.debug.aclgraph.disable_reinplace_inplaceable_ops_pass = True
        backend = torchair.get_npu_backend(compiler_config=config)
        model = torch.compile(torch.nn.Linear(2, 2), backend=backend)
""")


def test_main_guard_config_at_module_level_option_in_guard(lint):
    found = only(lint({"run.py": MIXED_201}, select=["NPU2"]), "NPU201")
    assert [(f.code, f.line) for f in found] == [("NPU201", 8)]


def test_main_guard_mode_in_guard_clean_twin(lint):
    src = MIXED_201.replace('config.mode = "max-autotune"', 'config.mode = "npugraph_ex"')
    assert only(lint({"run.py": src}, select=["NPU2"]), "NPU201") == []


def test_other_module_level_if_stays_conditional(lint):
    src = MIXED_201.replace('if __name__ == "__main__":', 'if __name__ == "lib":')
    assert only(lint({"run.py": src}, select=["NPU2"]), "NPU201") == []


def test_main_guard_else_branch_stays_conditional(lint):
    src = MIXED_201.replace('if __name__ == "__main__":\n', 'if __name__ == "__main__":\n    pass\nelse:\n')
    assert only(lint({"run.py": src}, select=["NPU2"]), "NPU201") == []


MAIN_203 = d("""
    import torch
    import torchair

    if '__main__' == __name__:
        config = torchair.CompilerConfig()
        config.mode = "reduce-overhead"
        backend = torchair.get_npu_backend(compiler_config=config)
        a = torch.compile(torch.nn.Linear(2, 2), backend=backend)
        b = torch.compile(torch.nn.Linear(2, 2), backend=backend)
""")


# NPU203 holds on the torchair releases that have a custom pool (7.2.0 on)
TORCHAIR_MASTER = '[tool.npulint.releases]\ntorchair = "master"\n'


def test_main_guard_body_is_straight_line_npu203(lint):
    found = only(lint({"run.py": MAIN_203}, select=["NPU2"], config=TORCHAIR_MASTER), "NPU203")
    assert [(f.code, f.line) for f in found] == [("NPU203", 9)]


def test_main_guard_npu203_clean_twin_shared_pool(lint):
    src = MAIN_203.replace('config.mode = "reduce-overhead"\n',
                           'config.mode = "reduce-overhead"\n    config.aclgraph_config.use_custom_pool = '
                           'torch.npu.graph_pool_handle()\n')
    assert only(lint({"run.py": src}, select=["NPU2"], config=TORCHAIR_MASTER), "NPU203") == []


def test_main_guard_value_resolution():
    src = d("""
        if __name__ == "__main__":
            n = 8
            probe(n)
            if x:
                n = 4
            probe(n)
    """)
    assert _values(src) == [8, UNKNOWN]


def test_main_guard_binding_is_one_possibility_after_the_guard():
    # found by tools/pydiff.py: an imported module skips its guard, so after the body the
    # name holds what it held before (CPython: 0 on import, 8 as the script)
    src = d("""
        n = 0
        if __name__ == "__main__":
            n = 8
            probe(n)
            def inner():
                probe(n)
        probe(n)
        probe(n + 1)
        m = n
        probe(m)
    """)
    assert _values(src) == [8, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN]  # inner(): n is bound twice
    # twins: bound after the guard again, bound only before it, or only in it (a function
    # reading it runs only once it is bound: a NameError otherwise, no value)
    assert _values("n = 0\nif __name__ == '__main__':\n    n = 8\nn = 3\nprobe(n)\n") == [3]
    assert _values("n = 0\nif __name__ == '__main__':\n    pass\nprobe(n)\n") == [0]
    assert _values("def f():\n    probe(n)\nif __name__ == '__main__':\n    n = 8\n    f()\n") == [8]
    # traps: the other guard of the file, and augmented assignments in the guard
    assert _values("n = 0\nif __name__ == '__main__':\n    n = 8\nif __name__ == '__main__':\n"
                   "    probe(n)\n") == [UNKNOWN]
    assert _values("n = 1\nif __name__ == '__main__':\n    n += 1\n    probe(n)\nprobe(n)\n") == [2, UNKNOWN]


# -- helpers ------------------------------------------------------------------------------

_values = probe_values


# ======================================================================================
# 3. class attributes bound once in the class body
# ======================================================================================

def test_class_attribute_bound_once_is_known():
    src = d("""
        class Pool:
            ID = 3
            SIZE = 1 << 20

            def f(self):
                probe(self.ID)
                probe(Pool.SIZE)

        probe(Pool.ID)
        probe(Pool.SIZE * 2)
    """)
    assert _values(src) == [3, 1 << 20, 3, 2 << 20]


def test_class_attribute_assigned_elsewhere_is_unknown():
    src = d("""
        class Pool:
            ID = 3

            def bump(self):
                self.ID = 4

        probe(Pool.ID)
    """)
    assert _values(src) == [UNKNOWN]
    assert _values("class Pool:\n    ID = 3\nPool.ID += 1\nprobe(Pool.ID)\n") == [UNKNOWN]
    assert _values("class Pool:\n    ID = 3\nsetattr(Pool, name, 4)\nprobe(Pool.ID)\n") == [UNKNOWN]
    assert _values("class Pool:\n    ID = 3\nsetattr(other, 'ID', 4)\nprobe(Pool.ID)\n") == [UNKNOWN]
    assert _values("class Pool:\n    ID = 3\ndelattr(Pool, 'ID')\nprobe(Pool.ID)\n") == [UNKNOWN]
    assert _values("import sys\nclass Pool:\n    ID = 3\nsetattr(sys.modules[__name__], 'Pool', P)\n"
                   "probe(Pool.ID)\n") == [UNKNOWN]
    assert _values("class Pool:\n    if x:\n        ID = 3\nprobe(Pool.ID)\n") == [UNKNOWN]
    assert _values("class Pool:\n    ID = 3\n    ID = 4\nprobe(Pool.ID)\n") == [UNKNOWN]


def test_setattr_of_a_literal_name_changes_only_that_attribute():
    # the clean twin of setattr(Pool, name, 4): another attribute, named by a literal
    src = "class Pool:\n    ID = 3\ndef patch(args):\n    setattr(args, 'seq_len', 4096)\n    delattr(args, 'x')\n"
    assert _values(src + "probe(Pool.ID)\n") == [3]


def test_self_attribute_overridden_by_a_subclass_is_unknown():
    src = d("""
        class Pool:
            ID = 3

            def f(self):
                probe(self.ID)

        class Big(Pool):
            ID = 7

        probe(Pool.ID)
    """)
    assert _values(src) == [UNKNOWN, 3]


# ======================================================================================
# 4. literal dict / tuple lookups
# ======================================================================================

def test_literal_dict_and_tuple_lookups():
    src = d("""
        POOLS = {"embed": 1 << 20, "head": 2 << 20, 3: "x"}
        IDS = (0, 1, 2)
        NESTED = {"a": {"b": 8}}
        KEY = "head"
        probe(POOLS["embed"])
        probe(POOLS[KEY])
        probe(POOLS[3])
        probe(IDS[2])
        probe(NESTED["a"]["b"])
        probe(len(POOLS))

        def f():
            probe(POOLS["head"] // 2)
    """)
    assert _values(src) == [1 << 20, 2 << 20, "x", 2, 8, UNKNOWN, 1 << 20]


def test_mutated_dict_is_unknown():
    base = 'POOLS = {"embed": 1}\n'
    for change in ('POOLS["embed"] = 2\n', 'POOLS.update(embed=2)\n', 'POOLS.pop("embed")\n',
                   'del POOLS["embed"]\n', 'configure(POOLS)\n', 'ALIAS = POOLS\n', 'POOLS["embed"] += 1\n',
                   'POOLS |= {"embed": 2}\n', 'def f():\n    POOLS.clear()\n'):
        assert _values(base + change + 'probe(POOLS["embed"])\n') == [UNKNOWN], change


def test_dict_read_only_uses_keep_it_known():
    src = d("""
        POOLS = {"embed": 1}
        for k in POOLS:
            print(k, POOLS.get(k), "embed" in POOLS, len(POOLS))
        probe(POOLS["embed"])
    """)
    assert _values(src) == [1]


def test_nested_container_escaping_is_unknown():
    src = d("""
        CFG = {"a": {"b": 8}}
        inner = CFG["a"]
        inner["b"] = 9
        probe(CFG["a"]["b"])
    """)
    assert _values(src) == [UNKNOWN]


def test_unknown_key_missing_key_and_spread_are_unknown():
    src = d("""
        POOLS = {"embed": 1, **EXTRA}
        SIZES = {"embed": 1}
        probe(POOLS["embed"])
        probe(SIZES[name])
        probe(SIZES["head"])
        if x:
            SIZES2 = {"embed": 1}
        else:
            SIZES2 = {"embed": 2}
        probe(SIZES2["embed"])
    """)
    assert _values(src) == [UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN]


def test_mutated_list_subscript_is_unknown():
    assert _values("L = [4, 8]\nL.append(1)\nprobe(L[0])\n") == [UNKNOWN]
    assert _values("L = [4, 8]\nL[0] = 1\nprobe(L[0])\n") == [UNKNOWN]
    assert _values("L = [4, 8]\nprobe(L[1])\n") == [8]


def test_tuple_items_changed_in_place_are_unknown():
    # a tuple cannot change, but the lists and dicts it holds can
    base = "T = ([6], 4)\n"
    for change in ("T[0][0] = 8\n", "T[0].append(8)\n", "first = T[0]\nfirst[0] = 8\n", "configure(T)\n",
                   "def f():\n    T[0].pop()\n"):
        assert _values(base + change + "probe(T[0][0])\nprobe(T[0])\nprobe(T[1])\n") == [UNKNOWN, UNKNOWN, 4], change
    # the clean twin: its lists' items only read, they stay known
    assert _values(base + "print(T[0][0])\nprobe(T[0][0])\n") == [6]
    # a tuple of constants passed on cannot change
    assert _values("T = (6, (4,))\nconfigure(T)\nprobe(T[0])\nprobe(T[1][0])\n") == [6, 4]


def test_names_rebound_through_the_module_namespace_are_unknown():
    for change in ('globals()["WS"] = 8\n', 'globals().update(WS=8)\n', 'vars()["WS"] = 8\n',
                   'exec(code)\n', 'setattr(sys.modules[__name__], "WS", 8)\n', 'apply(globals())\n',
                   'def f():\n    exec("global WS; WS = 8")\n', 'exec(code, globals())\n',
                   'ns = globals()\nexec(code, ns)\n', 'exec(code, {"g": globals()})\n', 'def f(ns):\n    exec(code, ns)\n',
                   'ns = {}\nns = vars()\nexec(code, ns)\n', 'exec(code, {}, locals())\n'):
        assert _values("import sys\nWS = 6\n" + change + "probe(WS)\n") == [UNKNOWN], change
        src = 'import sys\nCFG = {"ws": 6}\n' + change.replace('"WS"', '"CFG"').replace("WS=", "CFG=")
        assert _values(src + 'probe(CFG["ws"])\n') == [UNKNOWN], change
    for change in ('globals()["CFG"]["ws"] = 8\n', 'cfg = globals()["CFG"]\ncfg["ws"] = 8\n'):
        assert _values('CFG = {"ws": 6}\n' + change + 'probe(CFG["ws"])\n') == [UNKNOWN], change
    # the clean twins: another name stored, or the namespace only read
    for change in ('globals()["OTHER"] = 8\n', 'print(globals()["WS"], "WS" in globals())\n',
                   'import sys\nprint("torch" in sys.modules)\n',
                   # exec with a globals dict of its own binds its names there
                   'exec(code, {})\n', 'def f():\n    ns = {}\n    exec(code, ns)\n', 'exec(code, dict(x=1), {})\n'):
        assert _values('WS = 6\nCFG = {"ws": 6}\n' + change + 'probe(WS)\nprobe(CFG["ws"])\n') == [6, 6], change


TRAIN = "from pkg import a, b\n"  # one program builds both modules' scopes into its graph (NPU101)


def test_imported_constant_rebound_through_its_module_namespace_is_unknown(lint):
    use = SCOPE + "from pkg.sizes import POOL\nwith npu_weight_prefetch_scope(0, POOL):\n    pass\n"
    for change, found in (('globals()["POOL"] = 2\n', []), ('exec(code)\n', []),
                          ('import sys\nsetattr(sys.modules[__name__], "POOL", 2)\n', []),
                          ('globals()["OTHER"] = 2\nprint("POOL" in globals(), globals()["POOL"])\n', [3])):
        files = {"pkg/__init__.py": "", "pkg/sizes.py": "POOL = 1024\n" + change,
                 "pkg/a.py": SCOPE + "with npu_weight_prefetch_scope(0, 536870912):\n    pass\n", "pkg/b.py": use,
                 "pkg/train.py": TRAIN}
        assert [f.line for f in lint(files, select=["NPU101"])] == found, change


def test_sys_modules_read_for_another_module_rebinds_nothing(lint):
    twice = "with npu_weight_prefetch_scope(0, POOL):\n    pass\nwith npu_weight_prefetch_scope(0, 2048):\n    pass\n"
    for change, found in (('m = sys.modules.get("horovod")\n', 1),
                          ('v = getattr(sys.modules["tensorflow"], "__version__", "1")\n', 1),
                          # this module's object, a store into sys.modules, every module object
                          ('setattr(sys.modules.get(__name__), "POOL", 2)\n', 0),
                          ('setattr(sys.modules["__main__"], "POOL", 2)\n', 0),
                          ('setattr(sys.modules["run"], "POOL", 2)\n', 0),
                          ('sys.modules["run"] = stub\n', 0),
                          ('sys.modules["__main__"].POOL = 2\n', 0),
                          # another module's item stored or deleted (a test's stub) binds nothing here
                          ('sys.modules["horovod"] = None\n', 1),
                          ('def restore(s):\n    sys.modules["torch_npu"] = s\n', 1),
                          ('del sys.modules["torch_npu"]\n', 1),
                          ('sys.modules["torch_npu"].npu = None\n', 1),
                          ('for m in sys.modules.values():\n    setattr(m, "POOL", 2)\n', 0)):
        src = SCOPE + "import sys\nPOOL = 1024\n" + change + twice
        assert len(lint({"run.py": src}, select=["NPU101"])) == found, change


def test_imported_name_rebound_through_the_importing_module_namespace_is_unknown(lint):
    # an import binds a module-level name like an assignment does: globals() can rebind it
    for imp in ("from pkg.sizes import POOL\n", "from pkg.sizes import *\n"):
        for change, found in (('globals()["POOL"] = 2\n', []), ('globals().update(load())\n', []),
                              ('exec(code)\n', []), ('globals()["OTHER"] = 2\n', [4]), ("", [3])):
            use = SCOPE + imp + change + "with npu_weight_prefetch_scope(0, POOL):\n    pass\n"
            files = {"pkg/__init__.py": "", "pkg/sizes.py": "POOL = 1024\n",
                     "pkg/a.py": SCOPE + "with npu_weight_prefetch_scope(0, 536870912):\n    pass\n",
                     "pkg/b.py": use, "pkg/train.py": TRAIN}
            assert [f.line for f in lint(files, select=["NPU101"])] == found, (imp, change)


# ======================================================================================
# 1. names across the modules of the run
# ======================================================================================

ENV = "from npu_bridge.hccl import hccl_ops\n"
USE = "from pkg.env import hccl_ops\n\ndef f(w):\n    return hccl_ops.allgather(w)\n"


def npu010(found):
    return [(f.path, f.line) for f in found if f.code == "NPU010"]


def test_imported_api_from_a_module_of_the_run(lint):
    found = lint({"pkg/__init__.py": "", "pkg/env.py": ENV, "pkg/use.py": USE}, select=["NPU010"])
    assert npu010(found) == [("pkg/use.py", 4)]


def test_imported_api_clean_twin(lint):
    use = USE.replace("allgather(w)", "allgather(w, 8)")
    assert npu010(lint({"pkg/__init__.py": "", "pkg/env.py": ENV, "pkg/use.py": use}, select=["NPU010"])) == []


def test_module_outside_the_run_stays_unknown(lint):
    # pkg.env is not linted: its hccl_ops is some object we do not know
    assert npu010(lint({"pkg/__init__.py": "", "pkg/use.py": USE}, select=["NPU010"])) == []


def test_local_def_of_the_same_name_is_not_the_api(lint):
    env = "def hccl_ops():\n    pass\n"
    assert npu010(lint({"pkg/__init__.py": "", "pkg/env.py": env, "pkg/use.py": USE}, select=["NPU010"])) == []


def test_rebinding_under_if_in_the_exporting_module_is_unknown(lint):
    env = ENV + "if flag:\n    hccl_ops = other\n"
    assert npu010(lint({"pkg/__init__.py": "", "pkg/env.py": env, "pkg/use.py": USE}, select=["NPU010"])) == []
    env = "try:\n    from npu_bridge.hccl import hccl_ops\nexcept ImportError:\n    hccl_ops = None\n"
    assert npu010(lint({"pkg/__init__.py": "", "pkg/env.py": env, "pkg/use.py": USE}, select=["NPU010"])) == []


def test_through_a_package_init_reexport_and_relative_imports(lint):
    files = {"pkg/__init__.py": "from .env import hccl_ops\n", "pkg/env.py": ENV,
             "app/__init__.py": "", "app/main.py": "import pkg\n\npkg.hccl_ops.allgather(w)\n",
             "app/two.py": "from pkg import hccl_ops as ops\n\nops.allgather(w)\n",
             "app/three.py": "from pkg import hccl_ops\n\nhccl_ops.allgather(w, rank_size=2)\n"}
    assert npu010(lint(files, select=["NPU010"])) == [("app/main.py", 3), ("app/two.py", 3)]


def test_through_an_alias_assignment(lint):
    env = ENV + "ops = hccl_ops\n"
    use = "from pkg.env import ops\nops.allgather(w)\n"
    assert npu010(lint({"pkg/__init__.py": "", "pkg/env.py": env, "pkg/use.py": use + "# hccl_ops\n"},
                       select=["NPU010"])) == [("pkg/use.py", 2)]


def test_through_star_import_chains_honouring_all(lint):
    files = {"pkg/__init__.py": "", "pkg/env.py": ENV, "pkg/mid.py": "from pkg.env import *\n",
             "pkg/use.py": "from pkg.mid import *\n\nhccl_ops.allgather(w)\n"}
    assert npu010(lint(files, select=["NPU010"])) == [("pkg/use.py", 3)]
    # __all__ leaves it out: the star import does not bind it (a builtin? unknown: silent)
    files["pkg/mid.py"] = "from pkg.env import *\n__all__ = ['other']\nother = 1\n"
    assert npu010(lint(files, select=["NPU010"])) == []
    # __all__ names it
    files["pkg/mid.py"] = "from pkg.env import *\n__all__ = ['hccl_ops']\n"
    assert npu010(lint(files, select=["NPU010"])) == [("pkg/use.py", 3)]
    # a star import of a module outside the run somewhere in the chain: unknown
    files["pkg/mid.py"] = "from pkg.env import *\nfrom elsewhere import *\n"
    assert npu010(lint(files, select=["NPU010"])) == []


def test_star_import_chain_through_npu_init(lint):
    # a linted module star-imports npu_bridge.npu_init: what it binds is npu_init's known exports
    files = {"pkg/__init__.py": "", "pkg/base.py": "from npu_bridge.npu_init import *\n",
             "star.py": "from pkg.base import *\nhccl_ops.allgather(w)\n",
             "named.py": "from pkg.base import hccl_ops\nhccl_ops.allgather(w)\n",
             "attr.py": "import pkg.base as b\nb.hccl_ops.allgather(w)\n",
             "again.py": "from npu_bridge.npu_init import *\nfrom pkg.base import *\nhccl_ops.allgather(w)\n",
             "ok.py": "from pkg.base import *\nhccl_ops.allgather(w, 8)\n"}
    assert npu010(lint(files, select=["NPU010"])) == [("again.py", 3), ("attr.py", 2), ("named.py", 2),
                                                       ("star.py", 2)]
    # a name npu_init does not export: the chain leaves it as it was, or does not bind it (silent)
    files = {"kept.py": "from npu_bridge.hccl import hccl_ops as ops\nfrom pkg.base import *\nops.allgather(w)\n",
             "absent.py": "from pkg.base import ops\nops.allgather(w)\n"}
    assert [f for f in npu010(lint(files, select=["NPU010"])) if f[0] in files] == [("kept.py", 3)]


def test_star_chain_through_a_module_that_may_rebind_its_names(lint):
    use = "from pkg.env import *\nhccl_ops.allgather(w)\n"
    base = "from npu_bridge.npu_init import *\n"
    # what the tree shows cannot rebind env's names: the chain holds
    for tail in ("# see globals() docs\n", "def parse(args):\n    setattr(args, 'rank_size', 8)\n",
                 "print(globals().get('x'), 'torch' in sys.modules)\n", "s = 'exec(code)'\n"):
        files = {"pkg/__init__.py": "", "pkg/env.py": base + tail, "pkg/use.py": use}
        assert npu010(lint(files, select=["NPU010"])) == [("pkg/use.py", 2)], tail
    # what may: unknown
    for tail in ("globals()['hccl_ops'] = shim\n", "globals().update(cfg)\n", "exec(code)\n",
                 "setattr(sys.modules[__name__], 'hccl_ops', shim)\n", "def f(k, v):\n    setattr(o, k, v)\n",
                 "__all__.append('x')\n"):
        files = {"pkg/__init__.py": "", "pkg/env.py": base + tail, "pkg/use.py": use}
        assert npu010(lint(files, select=["NPU010"])) == [], tail


def test_two_files_claiming_one_module_name_are_unknown(lint):
    files = {"a/env.py": ENV, "b/env.py": "def hccl_ops():\n    pass\n",
             "a/use.py": "from env import hccl_ops\nhccl_ops.allgather(w)\n"}
    assert npu010(lint(files, select=["NPU010"])) == []
    # one file of that name (the fixture's earlier files stay: another name)
    files = {"c/env2.py": ENV, "c/use2.py": "from env2 import hccl_ops\nhccl_ops.allgather(w)\n"}
    assert ("c/use2.py", 2) in npu010(lint(files, select=["NPU010"]))


# ======================================================================================
# 2. constants imported from the modules of the run
# ======================================================================================

SCOPE = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"


def test_imported_constant_is_known(lint):
    files = {"pkg/__init__.py": "", "pkg/sizes.py": "MB = 1 << 20\nPOOL_MB = 256 * MB\n",
             "pkg/a.py": SCOPE + "with npu_weight_prefetch_scope(0, 536870912):\n    pass\n",
             "pkg/b.py": SCOPE + "from pkg.sizes import POOL_MB\nwith npu_weight_prefetch_scope(0, POOL_MB):\n"
                                 "    pass\n", "pkg/train.py": TRAIN}
    found = lint(files, select=["NPU101"])
    assert [(f.code, f.path, f.line) for f in found] == [("NPU101", "pkg/b.py", 3)]
    # the clean twin
    files["pkg/sizes.py"] = "MB = 1 << 20\nPOOL_MB = 512 * MB\n"
    assert lint(files, select=["NPU101"]) == []


def test_imported_constant_through_module_attribute_and_reexport(lint):
    files = {"pkg/__init__.py": "from .sizes import POOL_MB\n", "pkg/sizes.py": "POOL_MB = 1024\n",
             "app.py": SCOPE + "import pkg, pkg.sizes as S\nwith npu_weight_prefetch_scope(0, pkg.POOL_MB):\n"
                               "    pass\nwith npu_weight_prefetch_scope(0, S.POOL_MB * 2):\n    pass\n"}
    found = lint(files, select=["NPU101"])
    assert [(f.code, f.line) for f in found] == [("NPU101", 5)]


def test_imported_constant_rebound_or_conditional_is_unknown(lint):
    for sizes in ("POOL_MB = 1024\nPOOL_MB = 2048\n", "POOL_MB = 1024\nif x:\n    POOL_MB = 2\n",
                  "POOL_MB = 1024\ndef f():\n    global POOL_MB\n    POOL_MB = 3\n",
                  "if __name__ == '__main__':\n    POOL_MB = 1024\n", "POOL_MB = [1024][0]\n",
                  "POOL_MB = 1024\nPOOL_MB += 1\n"):
        files = {"pkg/__init__.py": "", "pkg/sizes.py": sizes,
                 "pkg/a.py": SCOPE + "with npu_weight_prefetch_scope(0, 536870912):\n    pass\n",
                 "pkg/b.py": SCOPE + "from pkg.sizes import POOL_MB\nwith npu_weight_prefetch_scope(0, POOL_MB):\n"
                                     "    pass\n"}
        assert lint(files, select=["NPU101"]) == [], sizes


def test_unit_run_modules_table():
    from npulint import modules

    texts = {"/p/pkg/__init__.py": "from .env import *\n",
             "/p/pkg/env.py": "from npu_bridge.hccl import hccl_ops as ops\nN = 4\nM = N * 2\n_P = 1\n"
                              "__all__ = ['ops', 'M']\n"}
    run = modules.RunModules.from_files([("/p/pkg/__init__.py", "pkg", True), ("/p/pkg/env.py", "pkg.env", False)],
                                        texts.get)
    from npulint.semantic import _aliased

    assert run.rewrite("pkg.ops.allgather", _aliased) == "npu_bridge.hccl.hccl_ops.allgather"
    assert run.constant("pkg.env.M", _aliased) == (True, 8)
    assert run.constant("pkg.M", _aliased) == (True, 8)
    assert run.rewrite("pkg.N", _aliased) == "pkg.N"  # not in __all__: the star import does not bind it
    assert run.constant("pkg.N", _aliased) == (False, None)
    deps = run.take_deps()
    # the modules read, whether any file of the run stores `M` and whether one puts another
    # module in pkg.env's place in sys.modules (RunModules.touched)
    assert [m for m, _ in deps] == ["\0touched\0M\0store\0", "\0touched\0pkg.env\0replace\0", "pkg",
                                    "pkg.env"] and all(d for _, d in deps)
    assert run.fresh(deps)
    texts["/p/pkg/env.py"] += "X = 1\n"
    assert not modules.RunModules.from_files([("/p/pkg/__init__.py", "pkg", True),
                                              ("/p/pkg/env.py", "pkg.env", False)], texts.get).fresh(deps)


def test_framework_packages_are_never_resolved_through(lint):
    # linting torchair itself: torchair.scope's re-export keeps its public name
    files = {"torchair/__init__.py": "", "torchair/scope/__init__.py":
             "from torchair.scope._impl import npu_stream_switch\n",
             "torchair/scope/_impl.py": "def npu_stream_switch(tag, stream_priority=0):\n    pass\n",
             "use.py": "from torchair.scope import npu_stream_switch\nwith npu_stream_switch('a', 3):\n    pass\n"}
    found = lint(files, select=["NPU304"])
    assert [(f.code, f.path) for f in found] == [("NPU304", "use.py")]


def test_an_importer_that_names_no_api_token_is_analysed_too(lint):
    # use.py mentions no prefilter token: the follow-up parses it because env.py binds `ops`
    files = {"pkg/__init__.py": "", "pkg/env.py": "from npu_bridge.hccl import hccl_ops as ops\n",
             "pkg/use.py": "from pkg.env import ops\n\nops.allgather(w)\n",
             "pkg/other.py": "from pkg.env import ops\n\nops.allgather(w, 8)\n"}
    assert npu010(lint(files, select=["NPU010"])) == [("pkg/use.py", 3)]


# ======================================================================================
# review fixes: what another module of the run may change, and which file an import reaches
# ======================================================================================

def _lint_paths(tmp_path, monkeypatch, files, paths, select):
    """Lint only *paths* of the tree *files* (as pre-commit passes the changed files)."""
    from conftest import _write

    from npulint import discovery, pipeline, registry
    from npulint.config import Settings, enabled_codes

    _write(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    rules, checkers = registry.load()
    settings = Settings(root=str(tmp_path))
    settings.select = list(select)
    enabled = enabled_codes(rules, settings.select, settings.extend_select, settings.ignore)
    found, missing = discovery.discover([str(tmp_path / p) for p in paths], settings)
    assert not missing
    return pipeline.run(found, settings, checkers, enabled).findings


def test_top_level_module_in_another_folder_is_not_the_import(tmp_path, monkeypatch):
    # /tmp/review/m5: `npulint llama/consts.py gpt/train.py`: gpt/train.py imports gpt/consts.py
    files = {"llama/consts.py": "POOL_SIZE = 0\n", "gpt/consts.py": "POOL_SIZE = 1 << 28\n",
             "gpt/train.py": "from consts import POOL_SIZE\n" + SCOPE +
                             "with npu_weight_prefetch_scope(buffer_pool_id=1, buffer_pool_size=POOL_SIZE):\n"
                             "    pass\n"}
    assert _lint_paths(tmp_path, monkeypatch, files, ["llama/consts.py", "gpt/train.py"], ["NPU103"]) == []
    # `import consts` and a re-export through a module of another folder: unknown too
    files["llama/use.py"] = "import consts\n" + SCOPE + \
        "with npu_weight_prefetch_scope(buffer_pool_id=1, buffer_pool_size=consts.POOL_SIZE):\n    pass\n"
    files["gpt/train.py"] = "import consts\n" + SCOPE + \
        "with npu_weight_prefetch_scope(buffer_pool_id=1, buffer_pool_size=consts.POOL_SIZE):\n    pass\n"
    found = _lint_paths(tmp_path, monkeypatch, files, ["llama/consts.py", "gpt/train.py", "llama/use.py"],
                        ["NPU103"])
    # the clean twin: the module in the importer's own folder resolves
    assert [(f.code, f.path) for f in found] == [("NPU103", "llama/use.py")]
    files["gpt/consts.py"] = "POOL_SIZE = 0\n"
    found = _lint_paths(tmp_path, monkeypatch, files, ["gpt/consts.py", "gpt/train.py"], ["NPU103"])
    assert [(f.code, f.path) for f in found] == [("NPU103", "gpt/train.py")]


def test_top_level_module_beside_a_package_resolves_for_the_package(lint):
    # pkg/x.py runs with the folder above pkg on sys.path: consts.py there is what it imports
    files = {"consts.py": "POOL_SIZE = 0\n", "pkg/__init__.py": "",
             "pkg/x.py": "from consts import POOL_SIZE\n" + SCOPE +
                         "with npu_weight_prefetch_scope(buffer_pool_id=1, buffer_pool_size=POOL_SIZE):\n"
                         "    pass\n"}
    assert [(f.code, f.path) for f in lint(files, select=["NPU103"])] == [("NPU103", "pkg/x.py")]


STREAM_BASE = d("""
    import torch
    import torchair as tng


    class Block(torch.nn.Module):
        STREAM = None  # set by subclasses

        def forward(self, x):
            with tng.scope.npu_stream_switch(self.STREAM):
                return x * 2
""")


def test_self_attribute_overridden_by_a_subclass_in_another_module_is_unknown(lint):
    # /tmp/review/m1
    files = {"pkg/__init__.py": "", "pkg/base.py": STREAM_BASE,
             "pkg/impl.py": "from pkg.base import Block\n\n\nclass SideBlock(Block):\n    STREAM = 'side'\n"}
    assert lint(files, select=["NPU307"]) == []
    # set in a subclass's __init__ instead
    files["pkg/impl.py"] = ("from pkg.base import Block\n\n\nclass SideBlock(Block):\n    def __init__(self):\n"
                            "        self.STREAM = 'side'\n")
    assert lint(files, select=["NPU307"]) == []


def test_self_attribute_with_no_override_in_the_run_is_known(lint):
    files = {"pkg/__init__.py": "", "pkg/base.py": STREAM_BASE,
             "pkg/impl.py": "from pkg.base import Block\n\n\nclass SideBlock(Block):\n    OTHER = 'side'\n"}
    found = lint(files, select=["NPU307"])
    assert [(f.code, f.path) for f in found] == [("NPU307", "pkg/base.py")]


POOL_A = SCOPE + d("""
    class Pool:
        SIZE = 0  # configured by the launcher


    def build():
        with npu_weight_prefetch_scope(buffer_pool_id=0, buffer_pool_size=Pool.SIZE):
            pass
""")


def test_class_attribute_stored_from_another_module_is_unknown(lint):
    # /tmp/review/m2 a.py, b.py
    files = {"a.py": POOL_A, "b.py": "from a import Pool, build\n\nPool.SIZE = 1 << 20\nbuild()\n"}
    assert lint(files, select=["NPU103"]) == []
    files["b.py"] = "from a import Pool, build\n\nsetattr(Pool, 'SIZE', 1 << 20)\nbuild()\n"
    assert lint(files, select=["NPU103"]) == []
    files["b.py"] = "from a import Pool, build\n\nfor k, v in cfg.items():\n    setattr(Pool, k, v)\n"
    assert lint(files, select=["NPU103"]) == []
    # the clean twin: b.py only reads it
    files["b.py"] = "from a import Pool, build\n\nprint(Pool.SIZE)\nbuild()\n"
    assert [(f.code, f.path) for f in lint(files, select=["NPU103"])] == [("NPU103", "a.py")]


def test_module_constant_stored_from_another_module_is_unknown(lint):
    # /tmp/review/m2 sizes.py, model.py, main.py
    files = {"sizes.py": "POOL = 0\n",
             "model.py": "import sizes\n" + SCOPE + "\n\ndef build2():\n    with npu_weight_prefetch_scope("
                         "buffer_pool_id=1, buffer_pool_size=sizes.POOL):\n        pass\n",
             "main.py": "import sizes\nimport model\n\nsizes.POOL = 1 << 20\nmodel.build2()\n"}
    assert lint(files, select=["NPU103"]) == []
    # used in its own module
    files["sizes.py"] = "POOL = 0\n" + SCOPE + "\n\ndef build3():\n    with npu_weight_prefetch_scope(" \
                        "buffer_pool_id=2, buffer_pool_size=POOL):\n        pass\n"
    assert lint(files, select=["NPU103"]) == []
    # the clean twin: main.py stores nothing
    files["main.py"] = "import sizes\nimport model\n\nmodel.build2()\n"
    assert sorted((f.code, f.path) for f in lint(files, select=["NPU103"])) == [
        ("NPU103", "model.py"), ("NPU103", "sizes.py")]


SIZES_A = SCOPE + d("""
    SIZES = {"embed": 0}


    def build():
        with npu_weight_prefetch_scope(buffer_pool_id=0, buffer_pool_size=SIZES["embed"]):
            pass
""")


def test_container_changed_from_another_module_is_unknown(lint):
    # /tmp/review/m3 a.py, b.py
    for b in ('import a\n\na.SIZES["embed"] = 1 << 20\na.build()\n', "import a\n\na.SIZES.update(embed=1)\n",
              'from a import SIZES\n\nSIZES["embed"] = 1\n', "from a import SIZES\n\nconfigure(SIZES)\n",
              'import a\n\ndel a.SIZES["embed"]\n'):
        assert lint({"a.py": SIZES_A, "b.py": b}, select=["NPU103"]) == [], b
    # the clean twin: b.py reads it
    for b in ('import a\n\nprint(a.SIZES["embed"], a.SIZES.get("embed"))\n', "import other\n\nother.SIZES = 3\n"):
        found = lint({"a.py": SIZES_A, "b.py": b}, select=["NPU103"])
        if "other.SIZES = 3" in b:  # a store of that attribute name on any object: unknown (it may be `a`)
            assert found == [], b
        else:
            assert [(f.code, f.path) for f in found] == [("NPU103", "a.py")], b


def test_unit_touches():
    from npulint import modules

    t = modules.touches("import a\nfrom a import L\na.X = 1\na.D['k'] = 2\na.E.update()\nf(a.G)\nprint(a.H['k'])\n"
                        "a.I.get('k')\nclass C(a.B):\n    Y = 1\n    def m(self):\n        pass\nL.append(1)\n"
                        "setattr(a, 'Z', 1)\n")
    assert {"X", "Z"} <= t.stored and "D" not in t.stored and not t.dynamic
    assert {"D", "E", "G", "L"} <= t.mutated and not {"H", "I"} & t.mutated
    assert {"H", "I"} <= t.elements
    assert {"Y", "m"} <= t.class_bound
    assert modules.touches("setattr(o, k, v)\n").dynamic
    # imported under another name: what the module does with it is not tied back by name
    assert "L" in modules.touches("from a import L as other\n").mutated
    assert "L" not in modules.touches("from a import L\nprint(L == 1)\nfrom a import L as L\n").mutated


EVENTS = "import torchair as tng\n\nKV_EVENT = tng.ops.npu_create_tagged_event(tag=\"kv\")\n\n\n" \
         "def wait_kv():\n    tng.ops.npu_tagged_event_wait(KV_EVENT)\n"


@pytest.mark.parametrize("producer, reported", [
    ("from events import KV_EVENT as kv_ev\n\n\ndef produce():\n    tng.ops.npu_tagged_event_record(kv_ev)\n", False),
    ("from events import KV_EVENT\n\n\ndef produce():\n    tng.ops.npu_tagged_event_record(KV_EVENT)\n", False),
    ("from events import wait_kv\n\n\ndef produce():\n    wait_kv()\n", True),  # records nothing
])
def test_an_event_another_module_imports_under_another_name_is_used_there(tmp_path, monkeypatch, producer, reported):
    files = {"events.py": EVENTS, "producer.py": "import torchair as tng\n" + producer}
    found = _lint_paths(tmp_path, monkeypatch, files, ["events.py", "producer.py"], ["NPU301"])
    assert [(f.code, f.path) for f in found] == ([("NPU301", "events.py")] if reported else [])


def test_a_cached_result_follows_what_another_module_changes(cli_run, tmp_path):
    (tmp_path / "a.py").write_text(POOL_A)
    (tmp_path / "b.py").write_text("from a import Pool\n\nprint(Pool.SIZE)\n")
    args = [".", "--select", "NPU103", "--cache-dir", str(tmp_path / "cache")]
    assert "a.py:" in cli_run(args, tmp_path).stdout
    (tmp_path / "b.py").write_text("from a import Pool\n\nPool.SIZE = 1 << 20\n")
    assert "a.py:" not in cli_run(args, tmp_path).stdout  # a.py unchanged, its cached result not reused
    (tmp_path / "b.py").write_text("from a import Pool\n\nprint(Pool.SIZE)\n")
    assert "a.py:" in cli_run(args, tmp_path).stdout


def test_walrus_rebinding_at_the_top_level_is_unknown(lint):
    # /tmp/review/m3 c2.py, d.py
    use = SCOPE + "import c2\nwith npu_weight_prefetch_scope(buffer_pool_id=3, buffer_pool_size=c2.SIZE):\n    pass\n"
    for c2 in ("SIZE = 0\nprint(SIZE := 1 << 20)\n", "SIZE = 0\n(SIZE := 1 << 20)\n",
               "SIZE = 0\nOTHER = (SIZE := 1 << 20)\n", "SIZE = 0\nX = [(SIZE := y) for y in (1, 2)]\n",
               "SIZE = 0\nclass C:\n    Y = (SIZE := 3)\n"):
        assert lint({"c2.py": c2, "d.py": use}, select=["NPU103"]) == [], c2
    # the clean twin: a walrus of that name in a function binds a local
    for c2 in ("SIZE = 0\nprint(1)\n", "SIZE = 0\ndef f():\n    return (SIZE := 2)\n"):
        assert [(f.code, f.path) for f in lint({"c2.py": c2, "d.py": use}, select=["NPU103"])] == [
            ("NPU103", "d.py")], c2


def test_a_name_used_before_its_binding_in_the_exporting_module_is_unknown(lint):
    # /tmp/review/m6: before `POOL_BYTES = 0` runs, the name is the unlinted star import's
    use = "from settings import DEFAULT_POOL\n" + SCOPE + \
          "with npu_weight_prefetch_scope(buffer_pool_id=1, buffer_pool_size=DEFAULT_POOL):\n    pass\n"
    settings = "from site_defaults import *  # not linted: defines POOL_BYTES\n\nDEFAULT_POOL = POOL_BYTES\n" \
               "POOL_BYTES = 0\n"
    assert lint({"settings.py": settings, "train.py": use}, select=["NPU103"]) == []
    assert lint({"settings.py": "DEFAULT_POOL = POOL_BYTES\nPOOL_BYTES = 0\n", "train.py": use},
                select=["NPU103"]) == []
    # the clean twin: bound before the use
    settings = "from site_defaults import *\n\nPOOL_BYTES = 0\nDEFAULT_POOL = POOL_BYTES\n"
    found = lint({"settings.py": settings, "train.py": use}, select=["NPU103"])
    assert [(f.code, f.path) for f in found] == [("NPU103", "train.py")]


STORES = ["x.a = 1", "x.a: int = 1", "x.a: int", "x.a += 1", "x.a //= 2", "x.a @= m", "del x.a", "del x.a  # c",
          "del (x.a)", "del x.a, y", "x.a, y = t", "(x.a, y) = t", "[x.a] = t", "for x.a in t: pass",
          "with f() as x.a: pass", "x . a = 1", "x.\\\na = 1", "x.a\\\n= 1", "(x.  # c\n a) = 1", "*x.a, y = t",
          "[1 for x.a in t]", "b = x.a = 1", "del x.a; y = 1", "x.a = (\n 1)", "(x.  # c\ra) = 1",
          "(x.  # c\r\na) = 1"]


@pytest.mark.parametrize("text", STORES)
def test_text_that_may_store_an_attribute(text):
    from npulint import modules

    tree = ast.parse(text)
    assert any(isinstance(n, ast.Attribute) and n.attr == "a" and not isinstance(n.ctx, ast.Load)
               for n in ast.walk(tree))  # (each is a store of x.a, as CPython reads it)
    assert modules._store_pattern("a").search(text)


@pytest.mark.parametrize("text", ["x.a(1)", "x.a.b = 1", "x.ab = 1", "x.a[0] = 1", "x.a == 1", "x.a <= 1",
                                  "f(x.a + 1)", "x.a.append(1)"])
def test_text_that_cannot_store_an_attribute_is_not_compiled(text):
    from npulint import modules

    assert modules._store_pattern("a").search(text) is None
    run = modules.RunModules.from_files([("/p/m.py", "m", False)], {"/p/m.py": text + "\n"}.get)
    assert not run.touched("a", "store")
    assert run._touches == {}  # decided from the text


def test_every_attribute_this_repository_stores_is_found_by_the_store_text():
    from npulint import modules

    root = pathlib.Path(__file__).resolve().parent.parent
    checked = 0
    for path in sorted(root.glob("*/**/*.py")):
        if ".venv" in path.parts or "build" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                checked += 1
                assert modules._store_pattern(node.attr).search(text), (path, node.attr, node.lineno)
    assert checked > 500


def test_the_search_for_stores_ends_at_the_second_file_found():
    from npulint import modules

    texts = {f"/p/m{i}.py": "def f(x):\n    x.attn = 1\n" for i in range(6)}
    run = modules.RunModules.from_files([(p, p[3:-3], False) for p in sorted(texts)], texts.get)
    assert run.touched("attn", "store", exclude="m0") and len(run._touches) == 2
    assert run.touched("attn", "store", exclude="m1")  # m1 is one of the two: m0 still stores it


@pytest.mark.parametrize("store, reported", [
    ("a.POOL = 3\n", False),
    ("a.\uff30\uff2f\uff2f\uff2c = 3\n", False),  # fullwidth letters: CPython reads POOL (NFKC)
    ("(a.  # c\rPOOL) = 3\n", False),  # a comment ends at a lone carriage return
    ("print(a.POOL)\n", True),
])
def test_a_store_of_a_module_constant_from_another_module_leaves_it_unknown(lint, store, reported):
    files = {"a.py": "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n\nPOOL = -1\n\n\n"
                     "def build(x):\n    with npu_weight_prefetch_scope(buffer_pool_id=POOL):\n        return x\n",
             "b.py": "import a  # sets POOL\n\n" + store}
    assert bool(lint(files, select=["NPU103"])) is reported


# ======================================================================================
# found by differential testing against CPython (tools/pydiff.py)
# ======================================================================================

def run_values(files, which):
    """The ``probe(x)`` values of module file *which* of *files* (relative path -> text),
    resolved with the modules of the run active, as the pipeline resolves them."""
    import libcst as cst

    from conftest import Probe
    from npulint import modules
    from npulint.semantic import Semantic, Walker
    from npulint.values import Evaluator

    entries = []
    for rel in files:
        parts = rel[:-3].split("/")
        is_pkg = parts[-1] == "__init__"
        entries.append(("/p/" + rel, ".".join(parts[:-1] if is_pkg else parts), is_pkg))
    texts = {"/p/" + rel: d(t) for rel, t in files.items()}
    old = modules.activate(modules.RunModules.from_files(entries, texts.get))
    try:
        _, name, is_pkg = next(e for e in entries if e[0] == "/p/" + which)
        module = cst.parse_module(texts["/p/" + which])
        sem = Semantic(module, name, is_pkg)
        probe = Probe(sem)
        Walker(sem, [probe], on_error=lambda *a: (_ for _ in ()).throw(a[1])).walk(module)
        ev = Evaluator(sem)
        return [ev.value(expr, site) for expr, site in probe.sites]
    finally:
        modules.activate(old)


@pytest.mark.parametrize("me", ["import pkg.a as me", "from pkg import a as me", "from . import a as me"])
def test_module_storing_into_itself_through_its_own_import_is_unknown(me):
    # pkg/a.py imports its own module: ``me.Z = 0.5`` rebinds its global Z
    for change in ("me.Z = 0.5\n", "setattr(me, 'Z', 0.5)\n", "me.Z += 1\n"):
        files = {"pkg/__init__.py": "", "pkg/a.py": f"{me}\nZ = 1\n{change}probe(Z)\n"}
        assert run_values(files, "pkg/a.py") == [UNKNOWN], (me, change)
    # containers too: an item stored through the module's own name
    files = {"pkg/__init__.py": "", "pkg/a.py": f"{me}\nD = {{'k': 1}}\nme.D['k'] = 2\nprobe(D['k'])\n"}
    assert run_values(files, "pkg/a.py") == [UNKNOWN]
    # twins: with no import of itself, a store of the attribute is to another object (a
    # config's attribute of the same name); the file imports another module of the run
    for text in ("Z = 1\ncfg.Z = Z\nsetattr(cfg, 'Z', 2)\nprobe(Z)\n", "import pkg.b as other\nZ = 1\nother.Z = 0.5\nprobe(Z)\n"):
        files = {"pkg/__init__.py": "", "pkg/b.py": "", "pkg/a.py": text}
        assert run_values(files, "pkg/a.py") == [1], text


def test_binding_in_a_with_that_swallows_exceptions_is_one_possibility_after_it():
    # CPython: ``raise`` leaves the body of ``with suppress(...)`` and goes on after it, Y = 2
    src = d("""
        import contextlib
        from contextlib import suppress as quiet
        import pytest
        Y = 2
        with contextlib.suppress(Exception):
            Y = 3
            probe(Y)
            raise ValueError
        probe(Y)
        with quiet(ValueError):
            Y = 4
        probe(Y)
        def f():
            n = 1
            with pytest.raises(KeyError):
                n = 2
                probe(n)
            probe(n)
    """)
    assert _values(src) == [3, UNKNOWN, UNKNOWN, 2, UNKNOWN]
    # twins: managers that let exceptions through (the body runs whole, or nothing after it
    # does), and a binding after the suppressing with
    assert _values("import torch\nY = 2\nwith torch.no_grad():\n    Y = 3\nprobe(Y)\n") == [3]
    assert _values("Y = 2\nwith open(p) as f:\n    Y = 3\nprobe(Y)\n") == [3]
    assert _values("import contextlib\nY = 2\nwith contextlib.suppress(E):\n    pass\nY = 5\nprobe(Y)\n") == [5]
    # any other manager may swallow (its ``__exit__`` returns a true value): the review's repros
    # (CPython: Y = 2 after each, the body left at the raise)
    for manager in ("Quiet()", "self.assertRaises(ValueError)", "contextlib.ExitStack()", "lock", "suppress(E)"):
        src = f"import contextlib\nclass Quiet:\n    pass\nY = 2\nwith {manager}:\n    Y = 3\nprobe(Y)\n"
        assert _values(src) == [UNKNOWN], manager
    # traps: nested withs
    assert _values("import contextlib\nY = 2\nwith contextlib.suppress(E):\n    with open(p):\n"
                   "        Y = 3\n    probe(Y)\nprobe(Y)\n") == [3, UNKNOWN]


def test_percent_formats_a_folded_list_as_a_list():
    # a list folds to a tuple for the rules; ``%`` must still see a list (CPython: "[4]", a
    # list is one argument, and "%s" of a list in a tuple is "[4, 5]", not "(4, 5)")
    src = d("""
        L = [4, 5]
        T = (1, [2])
        probe("%s" % [4])
        probe("%s" % (L,))
        probe("%s" % (T,))
        probe("%r|%s" % ((4, 5), [4, 5] * 2))
        probe("%s" % ([1] + [2],))
        probe((1,) + [2])
    """)
    assert _values(src) == ["[4]", "[4, 5]", "(1, [2])", "(4, 5)|[4, 5, 4, 5]", "[1, 2]", UNKNOWN]
    # twins: tuples format as tuples, and a list is still a tuple of its items to the rules
    assert _values("probe('%s-%d' % ('a', 3))\nprobe('%s' % ((4, 5),))\nprobe([4, 5])\n") == \
        ["a-3", "(4, 5)", (4, 5)]


def test_package_name_of_a_submodule_is_not_a_constant():
    # CPython: ``import pkg.a`` anywhere sets the package's ``a`` to the submodule, over its ``a = 5``
    files = {"pkg/__init__.py": "a = 5\nb = 6\n", "pkg/a.py": "X = 1\n",
             "main.py": "import pkg.a\nfrom pkg import a, b\nprobe(a)\nprobe(b)\nprobe(pkg.b)\n"}
    from npulint.values import Ref

    assert run_values(files, "main.py") == [Ref("pkg.a"), 6, 6]  # the submodule, not 5


def constants(files, which):
    """:func:`run_values`, with what is not a constant (a :class:`Ref` to a name) as UNKNOWN."""
    from npulint.values import is_constant

    return [v if is_constant(v) else UNKNOWN for v in run_values(files, which)]


def test_module_replaced_in_sys_modules_is_not_read_for_constants():
    # CPython: ``from pkg.a import X`` after b.py's store reads pkg.c's X (5)
    base = {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "pkg/c.py": "X = 5\n",
            "main.py": "import pkg.b\nfrom pkg.a import X\nprobe(X)\n"}
    for store in ("sys.modules['pkg.a'] = pkg.c\n", "sys.modules.update({'pkg.a': pkg.c})\n",
                  "sys.modules[name] = pkg.c\n", "sys.modules['pkg'] = pkg.c\n", "install(sys.modules)\n"):
        files = dict(base, **{"pkg/b.py": "import sys, pkg.c\n" + store})
        assert constants(files, "main.py") == [UNKNOWN], store
    # twins: reads, removals (the module runs again when imported: the same X) and another key
    for store in ("print(sys.modules['pkg.a'], sys.modules.get('pkg.a'), 'pkg.a' in sys.modules)\n",
                  "del sys.modules['pkg.a']\n", "sys.modules.pop('pkg.a', None)\n",
                  "sys.modules['apex'] = pkg.c\n", "sys.modules['pkg.ab'] = pkg.c\n"):
        files = dict(base, **{"pkg/b.py": "import sys, pkg.c\n" + store})
        assert constants(files, "main.py") == [1], store


def test_module_replaced_through_another_name_of_sys_modules_is_not_read_for_constants():
    # the review's repro: sys under another name, and sys.modules imported by name
    base = {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "pkg/c.py": "X = 5\n",
            "main.py": "import pkg.b\nfrom pkg.a import X\nprobe(X)\n"}
    for head in ("import sys as _s, pkg.c\n_s.modules", "import os, sys as _s, pkg.c\n_s.modules",
                 "from sys import modules\nimport pkg.c\nmodules", "from sys import (path, modules as mods)\nimport pkg.c\nmods"):
        files = dict(base, **{"pkg/b.py": head + "['pkg.a'] = pkg.c\n"})
        assert constants(files, "main.py") == [UNKNOWN], head
    # the twin: only read under the other name
    files = dict(base, **{"pkg/b.py": "import sys as _s, pkg.c\nprint(_s.modules.get('pkg.a'))\n"})
    assert constants(files, "main.py") == [1]


def test_module_dict_changed_by_another_module_is_as_vars():
    base = {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "main.py": "import pkg.b\nfrom pkg.a import X\nprobe(X)\n"}
    for change in ("m.__dict__.update(X=4)\n", "m.__dict__['X'] = 4\n", "d = m.__dict__\nd['X'] = 4\n",
                   "vars(m)['X'] = 4\n"):
        files = dict(base, **{"pkg/b.py": "import pkg.a as m\n" + change})
        assert constants(files, "main.py") == [UNKNOWN], change
    # twin: the namespace only read
    files = dict(base, **{"pkg/b.py": "import pkg.a as m\nprint(m.__dict__['X'], m.__dict__.get('Y'))\n"})
    assert constants(files, "main.py") == [1]


# -- a module a file puts a stand-in in place of (sys.modules) --------------------------------

_SWITCH = 'with torchair.scope.npu_stream_switch("1", 3):\n    pass\n'


@pytest.mark.parametrize("stub, found", [
    # a test's stand-in: the import binds it, not torchair
    ('import sys\nfrom unittest import mock\nsys.modules["torchair"] = mock.MagicMock()\nimport torchair\n', 0),
    ('import sys\nsys.modules["torchair.scope"] = object()\nimport torchair\n', 0),  # a submodule
    ('import sys\nfrom unittest import mock\nwith mock.patch.dict(sys.modules, {"torchair": mock.MagicMock()}):\n'
     '    import torchair\n', 0),
    ('import sys\nsys.modules.update(stubs)\nimport torchair\n', 0),
    ('import sys\nsys.modules[name] = stub\nimport torchair\n', 0),
    ('import sys\nsys.modules["torchair"].scope = stub\nimport torchair\n', 0),
    ('import sys\nsys.modules.setdefault("torchair", stub)\nimport torchair\n', 0),
    ('import sys\nsys.modules.update({"torchair": stub})\nimport torchair\n', 0),
    # the twins: another module's stand-in, and reads of sys.modules
    ('import sys\nsys.modules["torch_npu"] = None\nimport torchair\n', 1),
    ('import sys\nsys.modules.setdefault("amp_C", None)\nsys.modules.update({"apex": None})\nimport torchair\n', 1),
    ('import sys\nsys.modules.pop("torchair", None)\nimport torchair\n', 1),  # removed: imported again
    ('import sys\nsys.modules[__name__].VERSION = 1\nimport torchair\n', 1),  # this module's own item
    # a helper that installs what its caller names may be given any module, also in a test
    ('import sys\ndef install(name, dummy):\n    sys.modules[name] = dummy\nimport torchair\n', 0),
    ('import sys\ndef test_x(monkeypatch):\n    monkeypatch.setitem(sys.modules, "torchair", object())\n'
     'import torchair\n', 0),
    ('import sys\nfrom unittest import mock\nwith mock.patch.dict(sys.modules, torchair=mock.MagicMock()):\n'
     '    import torchair\n', 0),
    ('import sys\ndef test_x(monkeypatch):\n    monkeypatch.setitem(sys.modules, "torch_npu", object())\n'
     'import torchair\n', 1),  # another module's
    ('import sys\ndel sys.modules["torchair"]\nimport torchair\n', 1),  # removed: imported again
    ('import sys\nif "torchair" in sys.modules:\n    pass\nm = sys.modules.get("torchair")\nimport torchair\n', 1),
    ('import sys\nimport torchair\n', 1),
    # the spelling across a line: the text gate (checker._SYS_MODULES) still sees it
    ('import sys\nsys.\\\nmodules["torchair"] = object()\nimport torchair\n', 0),
    ('import sys\n(sys\n .modules)["torchair"] = object()\nimport torchair\n', 0),
])
def test_an_import_of_a_module_the_file_stubs_is_not_the_api(lint, stub, found):
    assert len(lint({"t.py": stub + _SWITCH}, select=["NPU304"])) == found, stub


RUN_401 = "import torch_npu\nfrom pkg import config\nimport pkg.config\n" \
          "torch_npu.npu_mm_reduce_scatter_base(1, 2, 3, config.WS)\n" \
          "torch_npu.npu_mm_reduce_scatter_base(1, 2, 3, pkg.config.WS)\n"


@pytest.mark.parametrize("init, config", [
    # the package binds its submodule's name to the object the submodule makes (after the
    # import set it to the submodule): pkg.config is the object, whose WS is 8
    ("from .config import config\n", "WS = 16\nclass Config:\n    WS = 8\nconfig = Config()\n"),
    ("from pkg.config import config\n", "WS = 16\nclass Config:\n    WS = 8\nconfig = Config()\n"),
    # bound after the package imported the submodule: the object, for good
    ("from . import config as _c\nclass _NS:\n    WS = 8\nconfig = _NS()\n", "WS = 16\n"),
])
def test_a_package_name_bound_over_its_submodule_is_not_the_submodule(lint, init, config):
    files = {"pkg/__init__.py": init, "pkg/config.py": config, "run.py": RUN_401}
    assert only(lint(files), "NPU401") == []


@pytest.mark.parametrize("init", ["", "from .config import WS\n", "from .config import WS\nfrom .config import Config\n",
                                  "from . import config\n"])
def test_a_package_name_bound_over_its_submodule_clean_twin(lint, init):
    # the package leaves the name to the submodule (importing from it twice too): 16, both ways
    files = {"pkg/__init__.py": init, "pkg/config.py": "WS = 16\nclass Config:\n    WS = 8\n",
             "run.py": RUN_401}
    found = only(lint(files), "NPU401")
    assert [(f.path, f.line) for f in found] == [("run.py", 4), ("run.py", 5)]
    assert all("world_size=16" in f.message for f in found)


BASE_WS = ("import torch_npu\nclass Base:\n    WS = 16\n    def __init__(self, cfg, k, v):\n        {init}\n"
           "    def forward(self, x, w, h):\n        return torch_npu.npu_mm_reduce_scatter_base(x, w, h, self.WS)\n")


@pytest.mark.parametrize("init", [
    "self.__dict__.update(cfg)", 'self.__dict__["WS"] = v', "self.__dict__ = dict(cfg)",
    "super().__setattr__(k, v)", "object.__setattr__(self, k, v)", 'object.__setattr__(self, "WS", v)',
    'self.__setattr__("WS", v)', "vars(self).update(cfg)",
])
def test_a_class_attribute_set_through_dict_or_dunder_setattr_is_unknown(lint, init):
    # Python reads the instance's WS (8 from the config), not the class body's 16
    assert only(lint({"base.py": BASE_WS.format(init=init)}), "NPU401") == []


@pytest.mark.parametrize("init", ["self.cfg = cfg", 'object.__setattr__(self, "other", v)', "print(k, v)"])
def test_a_class_attribute_set_through_dict_or_dunder_setattr_clean_twin(lint, init):
    # other attributes, or none: the class body's 16 holds
    found = only(lint({"base.py": BASE_WS.format(init=init)}), "NPU401")
    assert [f.line for f in found] == [7] and "world_size=16" in found[0].message


@pytest.mark.parametrize("store, reported", [('object.__setattr__(m, "WS", 8)', False),
                                             ("object.__setattr__(m, name, 8)", False),
                                             ('object.__setattr__(m, "other", 8)', True)])
def test_a_class_attribute_set_with_dunder_setattr_in_another_module(lint, store, reported):
    files = {"base.py": BASE_WS.format(init="pass"),
             "main.py": f"from base import Base\nname = 'WS'\nm = Base(1, 2, 3)\n{store}\nm.forward(1, 2, 3)\n"}
    assert [f.path for f in only(lint(files), "NPU401")] == (["base.py"] if reported else [])


@pytest.mark.parametrize("all_, reported", [
    ('__all__ = ["Y"]\n__all__ += ["WS"]\n', True),  # += adds WS to what the star import binds
    ('__all__ = ["Y"]\n__all__ += ("WS",)\n', True),
    ('__all__ = ["WS"]\n__all__ += ["Y"]\n', True),
    ('__all__ = ["Y"]\n__all__ += ["Z"]\n', False),  # twin: WS is not exported
    ('__all__ = ["WS"]\n__all__ += names\n', False),  # unknown: what the star import binds is unknown
    ('__all__ = ("Y",)\n__all__ += ("WS",)\n', False),  # (a tuple's: not followed)
    ('__all__ += ["WS"]\n__all__ = ["Y"]\n', False),  # rebound after: only Y
    # the list's own methods at the top level, with literals
    ('__all__ = ["Y"]\n__all__.append("WS")\n', True),
    ('__all__ = ["Y"]\n__all__.extend(["Z", "WS"])\n', True),
    ('__all__ = ["Y"]\n__all__.append("Z")\n', False),  # twin: WS is not exported
    ('__all__ = ["Y"]\n__all__.append("WS")\nif "WS" in __all__:\n    pass\n', True),  # a test reads it
    ('__all__ = ["Y"]\n__all__.append(names[0])\n', False),  # not a literal: unknown
    ('__all__ = ("Y",)\n__all__.append("WS")\n', False),  # a tuple has no append: the import fails
    ('__all__.append("WS")\n__all__ = ["Y"]\n', False),  # before the list: unknown
    ('__all__ = ["Y"]\n__all__.append("WS")\ndef f():\n    __all__.remove("WS")\n', False),  # changed elsewhere
    ('__all__ = ["Y"]\n__all__.append("WS")\nfor n in __all__:\n    pass\n', False),  # (any other use: unknown)
])
def test_all_extended_with_plus_equals(lint, all_, reported):
    files = {"consts.py": "WS = 16\nY = 1\nZ = 2\nnames = ['WS']\n" + all_,
             "run.py": "import torch_npu\nfrom consts import *\n"
                       "torch_npu.npu_mm_reduce_scatter_base(1, 2, 3, WS)\n"}
    assert [f.path for f in only(lint(files), "NPU401")] == (["run.py"] if reported else [])
