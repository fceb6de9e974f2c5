"""Resolution beyond one file's straight-line code (RULES.md "General semantics"): names
and constants imported from the modules of the run (through package ``__init__``
re-exports and star-import chains, honouring ``__all__``), class attributes bound once,
literal dict/tuple lookups, and the body of ``if __name__ == "__main__":`` as straight-line
code. Each case has its violation, its clean twin and the unknown case that stays silent."""

import textwrap

import pytest
from conftest import codes

from npulint.semantic import Semantic, Walker
from npulint.values import UNKNOWN, Evaluator


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


def test_main_guard_body_is_straight_line_npu203(lint):
    found = only(lint({"run.py": MAIN_203}, select=["NPU2"]), "NPU203")
    assert [(f.code, f.line) for f in found] == [("NPU203", 9)]


def test_main_guard_npu203_clean_twin_shared_pool(lint):
    src = MAIN_203.replace('config.mode = "reduce-overhead"\n',
                           'config.mode = "reduce-overhead"\n    config.aclgraph_config.use_custom_pool = '
                           'torch.npu.graph_pool_handle()\n')
    assert only(lint({"run.py": src}, select=["NPU2"]), "NPU203") == []


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


# -- helpers ------------------------------------------------------------------------------

class _Probe:
    def __init__(self, sem):
        self.sem = sem
        self.sites = []

    def visit_Call(self, node):
        import libcst as cst

        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            self.sites.append((node.args[0].value, self.sem.site()))


def _analyse(src, module_name=None):
    import libcst as cst

    module = cst.parse_module(src)
    sem = Semantic(module, module_name)
    probe = _Probe(sem)
    Walker(sem, [probe], on_error=lambda *a: (_ for _ in ()).throw(a[1])).walk(module)
    return sem, Evaluator(sem), probe.sites


def _values(src):
    sem, ev, sites = _analyse(src)
    return [ev.value(expr, site) for expr, site in sites]
