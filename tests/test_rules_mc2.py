"""NPU401-NPU408 (torch_npu fused communication-compute ops, MC2) and NPU010 for their
signatures (RULES.md "NPU4xx" and NPU010; docs/004; research/npu-api-constraints.md §C).

Positions are computed on the dedented source with :func:`at` (1-based line and column of
the first character of a needle), so a source can be edited without renumbering.
"""

import textwrap

import pytest

from conftest import at, codes, pos

SEL = ["NPU010", "NPU4"]
A3 = '[tool.npulint]\nproduct = "atlas-a3"\n'
A2 = '[tool.npulint]\nproduct = "atlas-a2"\n'

RS = "torch_npu.npu_mm_reduce_scatter_base"
AG = "torch_npu.npu_all_gather_base_mm"
AR = "torch_npu.npu_mm_all_reduce_base"




def mk(body, header="import torch\nimport torch_npu\n"):
    """A module: imports, then *body* (dedented)."""
    return header + textwrap.dedent(body)


# ======================================================================================
# NPU401 fused-comm-world-size
# ======================================================================================

def test_npu401_world_size_16_on_default_a2(lint):
    src = mk("""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 16)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU401"]
    assert pos(found[0]) == at(src, "16)")
    msg = found[0].message
    assert "world_size=16 is not supported on atlas-a2 (2, 4, 8)" in msg
    assert "atlas-a3 allows 16 and 32" in msg and "set product in [tool.npulint]" in msg


@pytest.mark.parametrize("ws", [2, 4, 8])
def test_npu401_clean_twin_supported_sizes(lint, ws):
    src = mk(f"""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, {ws})
        out2, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, {ws})
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu401_all_gather_and_keyword_world_size(lint):
    src = mk("""
        out, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, world_size=32)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU401"]
    assert pos(found[0]) == at(src, "32)")
    assert "world_size=32" in found[0].message and "atlas-a2" in found[0].message


def test_npu401_value_outside_torch_npu_set_names_set_and_product(lint):
    src = mk("""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 6)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU401"]
    msg = found[0].message
    assert "world_size=6" in msg and "atlas-a2" in msg and "2, 4, 8" in msg


def test_npu401_module_constant_used_in_function(lint):
    src = mk("""
        WORLD = 16

        def step(x, w, hcom):
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, WORLD)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU401"]
    assert pos(found[0]) == at(src, "WORLD)")


def test_npu401_function_local_constant(lint):
    src = mk("""
        def step(x, w, hcom):
            ws = 12
            return torch_npu.npu_all_gather_base_mm(x, w, hcom, ws)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU401"]
    assert pos(found[0]) == at(src, "ws)")


def test_npu401_arithmetic(lint):
    src = mk("""
        TP = 2 * 8
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, TP)
        out2 = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 1 << 5)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU401", "NPU401"]
    assert "world_size=16" in found[0].message and "world_size=32" in found[1].message


def test_npu401_arithmetic_clean_twin(lint):
    src = mk("""
        TP = 2 * 4
        PER_NODE = 16 // 2

        def step(x, w, hcom):
            ws = TP // 2
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, TP)
            b, _ = torch_npu.npu_all_gather_base_mm(x, w, hcom, PER_NODE)
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, ws)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu401_augmented_assignment_in_straight_line_code(lint):
    src = mk("""
        def step(x, w, hcom):
            ws = 4
            ws *= 4
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, ws)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU401"]


def test_npu401_parameter_is_unknown(lint):
    src = mk("""
        def step(x, w, hcom, world_size=16):
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, world_size)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu401_name_rebound_under_if_is_unknown(lint):
    src = mk("""
        import os
        WS = 16
        if os.environ.get("A2"):
            WS = 8
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, WS)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu401_environment_and_calls_are_unknown(lint):
    src = mk("""
        import os
        import torch.distributed as dist
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, int(os.environ["WORLD_SIZE"]))
        b = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, dist.get_world_size())
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("ws", [16, 32])
def test_npu401_product_a3_allows_16_and_32(lint, ws):
    src = mk(f"""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, {ws})
        out2, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, {ws})
    """)
    assert codes(lint(src, select=SEL, config=A3)) == []


def test_npu401_product_a3_still_rejects_64(lint):
    src = mk("""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 64)
    """)
    found = lint(src, select=SEL, config=A3)
    assert codes(found) == ["NPU401"]
    msg = found[0].message
    assert "world_size=64" in msg and "atlas-a3" in msg and "2, 4, 8, 16, 32" in msg


def test_npu401_product_a2_explicit_in_config(lint):
    src = mk("""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 16)
    """)
    assert codes(lint(src, select=SEL, config=A2)) == ["NPU401"]


def test_npu401_select_from_config_with_product(lint):
    src = mk("""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 16)
    """)
    config = '[tool.npulint]\nproduct = "atlas-a3"\nselect = ["NPU4"]\n'
    assert codes(lint(src, config=config)) == []
    config = '[tool.npulint]\nselect = ["NPU4"]\n'
    assert codes(lint(src, config=config)) == ["NPU401"]


def test_npu401_all_reduce_has_no_world_size(lint):
    src = mk("""
        out = torch_npu.npu_mm_all_reduce_base(x, w, hcom)
    """)
    assert codes(lint(src, select=SEL)) == []


# -- aliases -----------------------------------------------------------------------------

def test_npu401_from_import_alias(lint):
    src = """
        from torch_npu import npu_mm_reduce_scatter_base as f
        out = f(x, w, hcom, 16)
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU401"]
    assert pos(found[0]) == at(src, "16)")


def test_npu401_module_alias(lint):
    src = """
        import torch_npu as tnpu
        out, g = tnpu.npu_all_gather_base_mm(x, w, hcom, 16)
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU401"]
    assert pos(found[0]) == at(src, "16)")


def test_npu401_torch_ops_npu(lint):
    src = """
        import torch
        out = torch.ops.npu.npu_mm_reduce_scatter_base(x, w, hcom, 16)
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU401"]
    assert pos(found[0]) == at(src, "16)")


def test_npu401_same_name_from_elsewhere_is_not_torch_npu(lint):
    src = """
        from mindspeed.ops import npu_mm_reduce_scatter_base
        import torch_npu

        def npu_all_gather_base_mm(x, w, hcom, world_size):
            return x

        a = npu_mm_reduce_scatter_base(x, w, hcom, 16)
        b = npu_all_gather_base_mm(x, w, hcom, 16)
    """
    assert codes(lint(src, select=SEL)) == []


# ======================================================================================
# NPU402 fused-comm-reduce-op
# ======================================================================================

def test_npu402_reduce_op_max_on_reduce_scatter(lint):
    src = mk("""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, reduce_op="max")
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU402"]
    assert pos(found[0]) == at(src, '"max"')
    assert "'max'" in found[0].message and "sum" in found[0].message


def test_npu402_reduce_op_on_all_reduce_through_constant(lint):
    src = mk("""
        OP = "prod"

        def f(x, w, hcom):
            return torch_npu.npu_mm_all_reduce_base(x, w, hcom, reduce_op=OP)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU402"]
    assert pos(found[0]) == at(src, "OP)")


def test_npu402_clean_twin(lint):
    src = mk("""
        OP = "s" + "um"
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, reduce_op="sum")
        b = torch_npu.npu_mm_all_reduce_base(x, w, hcom, reduce_op=OP)

        def f(x, w, hcom, op):
            return torch_npu.npu_mm_all_reduce_base(x, w, hcom, reduce_op=op)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu402_aliases(lint):
    src = """
        import torch
        import torch_npu as tnpu
        from torch_npu import npu_mm_reduce_scatter_base as f
        a = f(x, w, hcom, 8, reduce_op="max")
        b = tnpu.npu_mm_all_reduce_base(x, w, hcom, reduce_op="min")
        c = torch.ops.npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, reduce_op="avg")
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU402"] * 3
    assert [pos(f) for f in found] == [at(src, '"max"'), at(src, '"min"'), at(src, '"avg"')]


# ======================================================================================
# NPU403 fused-comm-reserved-argument
# ======================================================================================

def test_npu403_comm_turn_and_gather_index(lint):
    src = mk("""
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, comm_turn=1)
        b, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, gather_index=1)
        c = torch_npu.npu_mm_all_reduce_base(x, w, hcom, comm_turn=2)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU403"] * 3
    assert [pos(f) for f in found] == [at(src, "1)"), at(src, "1)", 1), at(src, "2)")]
    assert "comm_turn=1" in found[0].message and "gather_index=1" in found[1].message


def test_npu403_clean_twin(lint):
    src = mk("""
        TURN = 1 - 1
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, comm_turn=0)
        b, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, gather_index=0, comm_turn=TURN)
        c = torch_npu.npu_mm_all_reduce_base(x, w, hcom, comm_turn=TURN)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu403_local_constant_and_alias(lint):
    src = """
        import torch_npu as tnpu

        def f(x, w, hcom):
            idx = 2 - 1
            return tnpu.npu_all_gather_base_mm(x, w, hcom, 8, gather_index=idx)
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU403"]
    assert pos(found[0]) == at(src, "idx)")


def test_npu403_parameter_is_unknown(lint):
    src = mk("""
        def f(x, w, hcom, turn, index):
            return torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, gather_index=index, comm_turn=turn)
    """)
    assert codes(lint(src, select=SEL)) == []


# ======================================================================================
# NPU404 fused-comm-bias
# ======================================================================================

def test_npu404_tensor_bias_on_reduce_scatter_and_all_gather(lint):
    src = mk("""
        b = torch.randn(64, dtype=torch.float16).npu()
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=b)
        c, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, bias=b)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU404", "NPU404"]
    assert pos(found[0]) == at(src, "b)")
    assert pos(found[1]) == at(src, "b)", 1)
    assert "bias" in found[0].message


def test_npu404_clean_twin(lint):
    src = mk("""
        b = torch.randn(64, dtype=torch.float16).npu()
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=None)
        c, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8)
        d = torch_npu.npu_mm_all_reduce_base(x, w, hcom, bias=b)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu404_bias_through_local_name_and_alias(lint):
    src = """
        import torch
        from torch_npu import npu_mm_reduce_scatter_base as mmrs

        def f(x, w, hcom):
            bias = torch.randn(64, dtype=torch.bfloat16)
            return mmrs(x, w, hcom, 8, bias=bias)
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU404"]
    assert pos(found[0]) == at(src, "bias)")


def test_npu404_tensor_of_unknown_shape_and_dtype_is_still_not_none(lint):
    # torch.randn(...) is one of the constructors the resolver knows: its result is a tensor,
    # certainly not None, even when neither its size nor its dtype can be resolved.
    src = mk("""
        def f(x, w, hcom, n, dt):
            b = torch.randn(n, dtype=dt)
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=b)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU404"]


@pytest.mark.parametrize("made", [
    "torch.zeros(64, dtype=torch.float16).npu()",  # the probe's repro
    "torch.zeros([64], dtype=torch.float16).to('npu').half()",
    "torch.full((64,), 0, dtype=torch.float16)", "torch.full((64,), 0.0)", "torch.zeros(64).contiguous()",
])
def test_npu404_an_all_zero_bias_is_supported(lint, made):
    # op-plugin's docs reject only a non-zero bias ("当前版本暂不支持bias输入为非0的场景")
    src = mk(f"""
        def f(x, w, hcom):
            bias = {made}
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=bias)
            c, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, bias={made})
            return a, c
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("made", [
    "torch.ones(64, dtype=torch.float16)", "torch.empty(64, dtype=torch.float16)",
    "torch.full((64,), 0.5)", "torch.full((64,), 1)",
])
def test_npu404_a_bias_not_known_to_be_zero_is_reported(lint, made):
    src = mk(f"""
        def f(x, w, hcom):
            bias = {made}.npu()
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=bias)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU404"]
    assert found[0].message == ("npu_mm_reduce_scatter_base: a bias that may be non-zero is not supported (only an "
                                "all-zero bias is); pass bias=None and add the bias after the op")


@pytest.mark.parametrize("write", [
    "bias.fill_(1.0)", "bias.add_(1)", "bias[0] = 1.0", "torch.nn.init.normal_(bias)", "other = bias",
])
def test_npu404_a_zero_bias_whose_values_may_be_written_is_reported(lint, write):
    src = mk(f"""
        def f(x, w, hcom):
            bias = torch.zeros(64, dtype=torch.float16).npu()
            {write}
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=bias)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU404"]


def test_npu404_a_zero_tensor_written_through_the_name_it_was_made_as_is_reported(lint):
    # bias = z.npu() may be z itself (already on the device): a write to z is a write to bias
    src = mk("""
        def f(x, w, hcom):
            z = torch.zeros(64, dtype=torch.float16)
            bias = z.npu()
            z.uniform_()
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=bias)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU404"]
    assert codes(lint(src.replace("    z.uniform_()\n", ""), select=SEL)) == []


def test_npu404_a_zero_tensor_held_by_an_attribute_is_reported(lint):
    # any method of the class (or another module) may write L.bias's values
    src = mk("""
        class L:
            bias = torch.zeros(64, dtype=torch.float16)

            def forward(self, x, w, hcom):
                return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=self.bias)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU404"]
    assert codes(lint(src.replace("zeros", "randn"), select=SEL)) == ["NPU404"]


def test_npu404_a_zero_module_constant_another_module_changes_is_reported(lint):
    model = mk("""
        BIAS = torch.zeros(64, dtype=torch.float16)

        def step(x, w, hcom):
            return torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, bias=BIAS)
    """)
    assert codes(lint({"model.py": model}, select=SEL)) == []
    other = "import model\nmodel.BIAS.fill_(2.0)\n"
    assert codes(lint({"model.py": model, "other.py": other}, select=SEL)) == ["NPU404"]


def test_npu404_unknown_bias_is_not_reported(lint):
    src = mk("""
        def f(x, w, hcom, bias):
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=bias)
            b = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, bias=make_bias())
            return a, b
    """)
    assert codes(lint(src, select=SEL)) == []


def test_imported_names_are_unknown_values(lint):
    # ``from m import NAME`` names an object whose value this file does not show (the resolver
    # gives a Ref): not a literal, so NPU402/403/404/407/408 say nothing about it.
    src = mk("""
        from myproj.consts import REDUCE_OP, COMM_TURN, GATHER_INDEX, NO_BIAS, AIV

        def f(x, w, s1, s2):
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, "tp", 8, reduce_op=REDUCE_OP, comm_turn=COMM_TURN,
                                                     bias=NO_BIAS)
            b, g = torch_npu.npu_all_gather_base_mm(x, w, "ep", 8, gather_index=GATHER_INDEX, comm_mode=AIV)
            x8 = torch.ones(128, 512, dtype=torch.int8)
            w8 = torch.ones(512, 64, dtype=torch.int8)
            c = torch_npu.npu_mm_reduce_scatter_base(x8, w8, "tp", 8, comm_mode=AIV, x1_scale=s1, x2_scale=s2)
            return a, b, c
    """)
    assert codes(lint(src, select=SEL)) == []


# ======================================================================================
# NPU405 fused-comm-transposed-input
# ======================================================================================

@pytest.mark.parametrize("expr", ["x.t()", "x.T", "x.mT", "x.transpose(0, 1)", "x.permute(1, 0)",
                                  "x.permute((1, 0))", "torch.t(x)", "torch.transpose(x, 0, 1)",
                                  "x.t().npu()"])
def test_npu405_transposed_first_input(lint, expr):
    src = mk(f"""
        def f(x, w, hcom):
            return torch_npu.npu_mm_reduce_scatter_base({expr}, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU405"]
    assert pos(found[0]) == at(src, expr)


def test_npu405_through_a_name(lint):
    src = mk("""
        def f(x, w, hcom):
            xt = x.T
            return torch_npu.npu_all_gather_base_mm(xt, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU405"]
    assert pos(found[0]) == at(src, "xt, w")
    assert "transposed" in found[0].message


def test_npu405_on_all_reduce_and_aliases(lint):
    src = """
        import torch
        import torch_npu as tnpu
        from torch_npu import npu_mm_reduce_scatter_base as f
        a = tnpu.npu_mm_all_reduce_base(x.t(), w, hcom)
        b = f(x.transpose(0, 1), w, hcom, 8)
        c = torch.ops.npu.npu_all_gather_base_mm(x.mT, w, hcom, 8)
        d = tnpu.npu_mm_all_reduce_base(x1=x.T, x2=w, hcom=hcom)
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU405"] * 4
    assert [pos(f) for f in found] == [at(src, "x.t()"), at(src, "x.transpose(0, 1)"), at(src, "x.mT"),
                                       at(src, "x.T")]


def test_npu405_known_tensor_transposed(lint):
    src = mk("""
        x = torch.randn(512, 128, dtype=torch.float16).npu()
        w = torch.randn(512, 64, dtype=torch.float16).npu()
        out = torch_npu.npu_mm_reduce_scatter_base(x.t(), w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU405"]


def test_npu405_clean_twins(lint):
    src = mk("""
        def f(x, w, hcom):
            a = torch_npu.npu_mm_reduce_scatter_base(x.t().contiguous(), w, hcom, 8)
            b = torch_npu.npu_mm_reduce_scatter_base(x, w.t(), hcom, 8)
            c, _ = torch_npu.npu_all_gather_base_mm(x, w.T, hcom, 8)
            d = torch_npu.npu_mm_all_reduce_base(x, w.transpose(0, 1), hcom)
            e = torch_npu.npu_mm_reduce_scatter_base(x.permute(0, 1), w, hcom, 8)
            g = torch_npu.npu_mm_reduce_scatter_base(x.t().t(), w, hcom, 8)
            xc = x.T.contiguous()
            h = torch_npu.npu_mm_reduce_scatter_base(xc, w, hcom, 8)
            return a, b, c, d, e, g, h
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu405_contiguous_copies_are_not_transposed(lint):
    # clone/to with memory_format=torch.contiguous_format return a contiguous tensor, like
    # .contiguous() (plain .clone()/.npu() preserve the strides and stay transposed).
    src = mk("""
        def f(x, w, hcom):
            a = torch_npu.npu_mm_reduce_scatter_base(x.t().clone(memory_format=torch.contiguous_format), w, hcom, 8)
            b = torch_npu.npu_mm_reduce_scatter_base(x.T.to(memory_format=torch.contiguous_format), w, hcom, 8)
            c = torch_npu.npu_mm_reduce_scatter_base(x.t().clone(), w, hcom, 8)
            return a, b, c
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU405"]
    assert pos(found[0]) == at(src, "x.t().clone()")


def test_npu405_name_rebound_conditionally_is_unknown(lint):
    src = mk("""
        def f(x, w, hcom, flag):
            xt = x.t()
            if flag:
                xt = xt.contiguous()
            return torch_npu.npu_mm_reduce_scatter_base(xt, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu405_conditional_expression_is_unknown(lint):
    # MindSpeed te/pytorch/module/ops/mc2_ops.py passes ``x.t() if transpose[0] else x``.
    src = mk("""
        def f(x, w, hcom, transpose):
            return torch_npu.npu_all_gather_base_mm(x.t() if transpose[0] else x, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


# ======================================================================================
# NPU406 fused-comm-shape
# ======================================================================================

def test_npu406_k_differs(lint):
    src = mk("""
        x = torch.randn(128, 512, dtype=torch.float16).npu()
        w = torch.randn(256, 64, dtype=torch.float16).npu()
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU406"]
    assert pos(found[0]) == at(src, RS)
    assert "512" in found[0].message and "256" in found[0].message


def test_npu406_k_below_range(lint):
    src = mk("""
        x = torch.randn(128, 128, dtype=torch.float16).npu()
        w = torch.randn(128, 64, dtype=torch.float16).npu()
        out, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU406"]
    assert pos(found[0]) == at(src, AG)
    assert "k=128" in found[0].message and "[256, 65535)" in found[0].message


def test_npu406_k_upper_bound_is_exclusive(lint):
    src = mk("""
        x = torch.empty(8, 65535, dtype=torch.float16)
        w = torch.empty(65535, 8, dtype=torch.float16)
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
        y = torch.empty(8, 65534, dtype=torch.float16)
        v = torch.empty(65534, 8, dtype=torch.float16)
        out2 = torch_npu.npu_mm_reduce_scatter_base(y, v, hcom, 8)
        z = torch.empty(8, 256, dtype=torch.float16)
        u = torch.empty(256, 8, dtype=torch.float16)
        out3 = torch_npu.npu_mm_reduce_scatter_base(z, u, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU406"]
    assert pos(found[0]) == at(src, RS)


def test_npu406_m_not_divisible_by_world_size(lint):
    src = mk("""
        x = torch.randn(100, 512, dtype=torch.float16)
        w = torch.randn(512, 64, dtype=torch.float16)
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
        out2, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU406"]  # m divisibility is a reduce-scatter constraint only
    assert pos(found[0]) == at(src, RS)
    assert "m=100" in found[0].message and "world_size=8" in found[0].message


def test_npu406_not_2d(lint):
    src = mk("""
        x = torch.randn(2, 64, 512, dtype=torch.float16)
        w = torch.randn(512, 64, dtype=torch.float16)
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU406"]
    assert "2-D" in found[0].message


def test_npu406_all_reduce_accepts_3d_x1_and_small_k(lint):
    src = mk("""
        x = torch.randn(2, 64, 128, dtype=torch.float16)
        w = torch.randn(128, 64, dtype=torch.float16)
        out = torch_npu.npu_mm_all_reduce_base(x, w, hcom)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu406_all_reduce_k_differs_and_4d(lint):
    src = mk("""
        x = torch.randn(2, 64, 128, dtype=torch.float16)
        w = torch.randn(256, 64, dtype=torch.float16)
        a = torch_npu.npu_mm_all_reduce_base(x, w, hcom)
        y = torch.randn(2, 2, 64, 256, dtype=torch.float16)
        b = torch_npu.npu_mm_all_reduce_base(y, w, hcom)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU406", "NPU406"]
    assert pos(found[0]) == at(src, AR)
    assert pos(found[1]) == at(src, AR, 1)


def test_npu406_clean_twin_vendor_shapes(lint):
    src = mk("""
        x = torch.randn([128, 512], dtype=torch.float16).npu()
        w = torch.randn((512, 64), dtype=torch.float16).npu()
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
        y = torch.zeros(size=(16, 512), dtype=torch.float16).npu()
        out2, g = torch_npu.npu_all_gather_base_mm(y, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu406_shapes_through_module_constants_and_arithmetic(lint):
    src = mk("""
        M, K, N = 128, 2 * 64, 64
        SHAPE = [M, K]

        def f(hcom):
            x = torch.randn(SHAPE, dtype=torch.float16).npu()
            w = torch.randn(K, N, dtype=torch.float16).npu()
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU406"]
    assert "k=128" in found[0].message


def test_npu406_shapes_through_local_constants(lint):
    src = mk("""
        def f(hcom):
            m, k, n = 96, 512, 64
            ws = 2 * 32 // 4
            x = torch.ones(m, k, dtype=torch.bfloat16).npu()
            w = torch.ones(k, n, dtype=torch.bfloat16).npu()
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, ws // 2)
    """)
    # world_size 16 // 2 = 8 is fine and m=96 is divisible by 8: clean.
    assert codes(lint(src, select=SEL)) == []
    src2 = src.replace("m, k, n = 96", "m, k, n = 100")
    found = lint(src2, select=SEL)
    assert codes(found) == ["NPU406"]
    assert "m=100" in found[0].message


def test_npu406_transposed_second_input_shape(lint):
    src = mk("""
        x = torch.randn(128, 512, dtype=torch.float16).npu()
        w_ok = torch.randn(64, 512, dtype=torch.float16).npu().t()
        a = torch_npu.npu_mm_reduce_scatter_base(x, w_ok, hcom, 8)
        w_bad = torch.randn(512, 64, dtype=torch.float16).npu().T
        b = torch_npu.npu_mm_reduce_scatter_base(x, w_bad, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU406"]
    assert pos(found[0]) == at(src, RS, 1)


def test_npu406_m_divisibility_uses_the_product_world_size(lint):
    src = mk("""
        x = torch.randn(40, 512, dtype=torch.float16)
        w = torch.randn(512, 64, dtype=torch.float16)
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 16)
    """)
    found = lint(src, select=SEL, config=A3)
    assert codes(found) == ["NPU406"]
    assert "world_size=16" in found[0].message


def test_npu406_unknown_sources_say_nothing(lint):
    src = mk("""
        def f(x, w, hcom, m):
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
            y = load_tensor()
            v = torch.randn(m, 100, dtype=torch.float16)
            b = torch_npu.npu_mm_reduce_scatter_base(y, v, hcom, 8)
            z = x.reshape(100, 100)
            c = torch_npu.npu_mm_reduce_scatter_base(z, w, hcom, 8)
            return a, b, c
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu406_shape_rebound_under_loop_is_unknown(lint):
    src = mk("""
        def f(hcom):
            x = torch.randn(128, 512, dtype=torch.float16)
            for _ in range(3):
                x = torch.randn(100, 100, dtype=torch.float16)
            w = torch.randn(512, 64, dtype=torch.float16)
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("change", ["buf.resize_(128, 512)", "buf.squeeze_(0)", "buf.set_(other)",
                                    "buf.data = buf.data.reshape(128, 512)", "setattr(buf, 'data', other)",
                                    "def g():\n    buf.unsqueeze_(0)", "alias = buf\nalias.squeeze_(0)",
                                    # an out= argument is resized to the call's result
                                    "torch.cat([a, b], dim=0, out=buf)", "torch.max(a, 0, out=(buf, idx))",
                                    # a function of the file that resizes the parameter buf reaches
                                    "def pad(t, m):\n    t.resize_(m, 512)\npad(buf, 128)",
                                    "def pad(t, m):\n    t.resize_(m, 512)\npad(m=128, t=buf)",
                                    "class H:\n    def pad(self, t):\n        t.squeeze_(0)\nH().pad(buf)",
                                    # changed through another reference to it
                                    "holder.buf = buf\nholder.buf.resize_(128, 512)",
                                    "for b in [buf, w]:\n    b.squeeze_(0)",
                                    "bufs.append(buf)\nbufs[0].resize_(128, 512)",
                                    "cache = {'k': (buf, w)}\nfor a, b in cache.values():\n    a.set_(other)"])
def test_npu406_tensor_changed_in_place_is_unknown(lint, change):
    # an in-place method that may change the shape (PyTorch's trailing "_"), or an attribute
    # store: the name no longer holds the constructor's tensor
    src = mk("""
        w = torch.randn(512, 64, dtype=torch.float16)
        buf = torch.empty(1, 128, 512, dtype=torch.float16)
        out = torch_npu.npu_mm_reduce_scatter_base(buf, w, hcom, 8)
    """) + change + "\n"
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("change", ["buf.zero_()", "buf.normal_(0, 1)", "buf.requires_grad_()",
                                    "buf.requires_grad = True", "other.resize_(128, 512)",
                                    "other.data = buf", "torch.cat([buf, w], dim=0, out=other)",
                                    "def pad(t, m):\n    t.resize_(m, 512)\npad(other, buf)",
                                    "def fill(t):\n    t.zero_()\nfill(buf)",
                                    "holder.buf = buf\nholder.buf.zero_()", "for b in [buf, w]:\n    b.zero_()",
                                    "out2 = torch.cat([buf, w])\nother.resize_(128, 512)",
                                    # PyTorch raises: .data/.detach() tensors may not change their sizes
                                    "buf.data.resize_(128, 512)", "buf.detach().squeeze_(0)"])
def test_npu406_value_only_in_place_changes_keep_the_shape(lint, change):
    # the violation twin: writing values, or changing another tensor, keeps what buf is
    src = mk("""
        w = torch.randn(512, 64, dtype=torch.float16)
        buf = torch.empty(1, 128, 512, dtype=torch.float16)
        out = torch_npu.npu_mm_reduce_scatter_base(buf, w, hcom, 8)
    """) + change + "\n"
    assert codes(lint(src, select=SEL)) == ["NPU406"]


LOCAL_BUF = """
def f(hcom):
    buf = torch.empty(100, 512, dtype=torch.float16)
    w = torch.randn(512, 64, dtype=torch.float16)
{change}    return torch_npu.npu_mm_reduce_scatter_base(buf, w, hcom, 8)
"""


@pytest.mark.parametrize("other, found", [
    # another function's `buf` is another variable
    ("def g():\n    buf = torch.empty(0)\n    buf.resize_(10, 10)\n", ["NPU406"]),
    ("def g(buf):\n    buf.squeeze_(0)\n", ["NPU406"]),
    # a function nested in f sees f's own buf
    ("", [])])
def test_npu406_in_place_change_counts_in_the_local_s_own_function(lint, other, found):
    inner = "    def inner():\n        buf.resize_(128, 512)\n    inner()\n" if not other else ""
    src = mk("import torch\nimport torch_npu\n") + other + LOCAL_BUF.format(change=inner)
    assert codes(lint(src, select=SEL)) == found


SHAPE_LIST = """
def f(hcom):
    shape = [100, 512]
{change}    x = torch.randn(shape, dtype=torch.float16)
    w = torch.randn(512, 64, dtype=torch.float16)
    return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
"""


@pytest.mark.parametrize("change", ["shape.pop()", "shape[0] = 128", "shape.extend([1])", "fill(shape)",
                                    "alias = shape"])
def test_npu406_a_shape_list_that_may_change_is_unknown(lint, change):
    src = mk("import torch\nimport torch_npu\n") + SHAPE_LIST.format(change=f"    {change}\n")
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("other", ["", "    print(len(shape), shape[0])\n",
                                   # another function's `shape` is another variable
                                   "def g():\n    shape = []\n    shape.append(1)\n    fill(shape)\n"])
def test_npu406_a_shape_list_read_only_is_known(lint, other):
    body = SHAPE_LIST.format(change="")
    src = mk("import torch\nimport torch_npu\n") + (body.replace("    x = torch.randn", other + "    x = torch.randn")
                                                     if other.startswith("    ") else body + other)
    assert codes(lint(src, select=SEL)) == ["NPU406"]


def test_npu406_class_attribute_tensor_changed_in_place_is_unknown(lint):
    src = mk("""
        class M:
            BUF = torch.empty(1, 128, 512, dtype=torch.float16)
            W = torch.randn(512, 64, dtype=torch.float16)

            def f(self, hcom):
                return torch_npu.npu_mm_reduce_scatter_base(self.BUF, self.W, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU406"]
    assert codes(lint(src + "    def g(self):\n        self.BUF.squeeze_(0)\n", select=SEL)) == []


# ======================================================================================
# NPU407 fused-comm-dtype
# ======================================================================================

def test_npu407_default_float32(lint):
    src = mk("""
        x = torch.randn(128, 512).npu()
        w = torch.randn(512, 64).npu()
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU407"]
    assert pos(found[0]) == at(src, RS)
    assert "float32" in found[0].message


def test_npu407_inputs_differ(lint):
    src = mk("""
        x = torch.randn(128, 512, dtype=torch.float16)
        w = torch.randn(512, 64, dtype=torch.bfloat16)
        out, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU407"]
    assert pos(found[0]) == at(src, AG)
    assert "float16" in found[0].message and "bfloat16" in found[0].message


def test_npu407_clean_twin_half_and_to(lint):
    src = mk("""
        x = torch.randn(128, 512).half().npu()
        w = torch.randn(512, 64).to(torch.float16).npu()
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
        y = torch.rand(128, 512).to(torch.bfloat16)
        v = torch.rand(512, 64).npu().to(dtype=torch.bfloat16)
        b, g = torch_npu.npu_all_gather_base_mm(y, v, hcom, 8)
        z = torch.randn(128, 512).bfloat16()
        c = torch_npu.npu_mm_reduce_scatter_base(z, v, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu407_dtype_methods_that_give_unsupported_types(lint):
    src = mk("""
        x = torch.randn(128, 512, dtype=torch.float16).float()
        w = torch.randn(512, 64).to("npu")
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU407"]
    assert "float32" in found[0].message


def test_npu407_to_unknown_makes_dtype_unknown(lint):
    src = mk("""
        def f(hcom, some_unknown):
            x = torch.randn(128, 512).to(some_unknown)
            w = torch.randn(512, 64, dtype=torch.float16)
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu407_dtype_through_constants(lint):
    src = mk("""
        DT = torch.float32

        def f(hcom):
            x = torch.randn(128, 512, dtype=DT)
            w = torch.randn(512, 64, dtype=DT)
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU407"]
    assert codes(lint(src.replace("torch.float32", "torch.bfloat16"), select=SEL)) == []


def test_npu407_dtype_changed_through_data_is_unknown(lint):
    src = mk("""
        w = torch.randn(512, 64, dtype=torch.float16)
        a = torch.randn(128, 512)
        out = torch_npu.npu_mm_reduce_scatter_base(a, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU407"]
    assert codes(lint(src + "a.data = a.data.half()\n", select=SEL)) == []


@pytest.mark.parametrize("made,found", [
    # transpose(d, d) gives the tensor back unchanged: no transposed view
    ("hidden.transpose(0, 0)", []), ("hidden.transpose(-1, -1)", []), ("torch.transpose(hidden, 1, 1)", []),
    ("hidden.transpose(D, 0)", []), ("torch.randn(128, 512, dtype=torch.float16).transpose(1, 1)", []),
    # the twins: transpose(0, -1) of a 2-D tensor is transpose(0, 1)
    ("hidden.transpose(0, 1)", ["NPU405"]), ("hidden.transpose(0, -1)", ["NPU405"]),
    ("torch.transpose(hidden, 0, 1)", ["NPU405"]), ("hidden.transpose(D, 1)", ["NPU405"]),
    ("hidden.t().transpose(1, 1)", ["NPU405"]),
])
def test_npu405_a_transpose_of_one_dim_with_itself_is_no_view(lint, made, found):
    src = mk(f"""
        D = 0


        def g(hidden, w, hcom):
            x = {made}
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == found


def test_npu405_transposed_in_place_is_unknown(lint):
    # c.t_() undoes a transpose (or makes one): what c is afterwards is not known either way
    src = mk("""
        c = torch.randn(512, 128, dtype=torch.float16).t()
        w = torch.randn(512, 64, dtype=torch.float16)
        out = torch_npu.npu_mm_reduce_scatter_base(c, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU405"]
    assert codes(lint(src + "c.t_()\n", select=SEL)) == []


def test_npu407_dtype_from_parameter_is_unknown(lint):
    src = mk("""
        def f(hcom, dtype):
            x = torch.randn(128, 512, dtype=dtype)
            w = torch.randn(512, 64, dtype=dtype)
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu407_set_default_dtype_changes_the_default(lint):
    # torch.randn(...) without dtype= has the default dtype, which this file sets to float16:
    # the default is not float32 here, so float32 must not be assumed.
    src = mk("""
        torch.set_default_dtype(torch.float16)
        x = torch.randn(128, 512).npu()
        w = torch.randn(512, 64).npu()
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
        y = torch.full((128, 512), 1.0)
        v = torch.full((512, 64), 1.0)
        out2 = torch_npu.npu_mm_reduce_scatter_base(y, v, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


_DEFAULT_MADE = """
    x = torch.randn(128, 512).npu()
    w = torch.randn(512, 64).npu()
    out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
"""


@pytest.mark.parametrize("setter", ["torch.set_default_dtype(torch.float16)",
                                    "torch.set_default_tensor_type(torch.HalfTensor)",
                                    "from torch import set_default_dtype as sdd\nsdd(torch.bfloat16)"])
def test_npu407_another_file_of_the_run_sets_the_default_dtype(lint, setter):
    # conftest_helper.py sets torch's default dtype when imported: the model's torch.randn(m, k)
    # may be float16. Any Python file of the run that names a setter makes the default unknown.
    model = mk("import conftest_helper\n" + textwrap.dedent(_DEFAULT_MADE))
    helper = "import torch\n" + setter + "\n"
    assert codes(lint({"model.py": model, "conftest_helper.py": helper}, select=SEL)) == []
    # the helper in the run, naming no setter: float32
    assert codes(lint({"model.py": model, "conftest_helper.py": "import torch\n"}, select=SEL)) == ["NPU407"]


def test_npu407_a_module_npulint_does_not_read_may_set_the_default_dtype(lint):
    # RULES.md: a module that is not linted is unknown; importing it runs its top level, and
    # its functions may set the default (the probe of binding constructs: m/dtype_default4.py)
    for imp in ("import conftest_helper\n", "from mysetup import init\ninit()\n", "import transformers\n"):
        assert codes(lint({"model.py": mk(imp + textwrap.dedent(_DEFAULT_MADE))}, select=SEL)) == [], imp
    # the standard library, numpy and the NPU packages are read as leaving it alone
    for imp in ("import os, sys, argparse\n", "import numpy as np\n", "from torch_npu.testing import testcase\n"):
        assert codes(lint({"model.py": mk(imp + textwrap.dedent(_DEFAULT_MADE))}, select=SEL)) == ["NPU407"], imp


def test_npu407_a_file_that_only_reads_the_default_dtype_changes_nothing(lint):
    model = mk(_DEFAULT_MADE)
    other = "import torch\nprint(torch.get_default_dtype())\n"
    assert codes(lint({"model.py": model, "other.py": other}, select=SEL)) == ["NPU407"]


def test_npu407_a_cached_result_holds_only_while_no_file_sets_the_default_dtype(tmp_path):
    from test_cache_jobs import _lint, cache_mod

    files = {"model.py": mk(_DEFAULT_MADE), "other.py": "import torch\n"}
    first = _lint(tmp_path, files, jobs=1, cache=cache_mod.Cache(str(tmp_path / "cache")))
    assert [f.code for f in first.findings if f.code == "NPU407"] == ["NPU407"]
    files["other.py"] = "import torch\ntorch.set_default_dtype(torch.float16)\n"
    second = _lint(tmp_path, files, jobs=1, cache=cache_mod.Cache(str(tmp_path / "cache")))
    assert [f.code for f in second.findings if f.code == "NPU407"] == []


@pytest.mark.parametrize("manager", [
    "set_default_torch_dtype(torch.bfloat16)",  # vLLM's helper: it calls torch.set_default_dtype
    "self_made()", "lock", "torch.no_grad(), set_default_torch_dtype(torch.bfloat16)",
    "no_grad()",  # a local function of that name, not torch's
])
def test_npu407_tensors_made_inside_an_unknown_with_have_an_unknown_dtype(lint, manager):
    src = mk(f"""
        from vllm.model_executor.model_loader.utils import set_default_torch_dtype


        def no_grad():
            pass


        def bench(hcom, self_made, lock):
            with {manager}:
                x = torch.randn(128, 512, device="npu")
                w = torch.full((512, 256), 1.0)
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu407_a_function_defined_inside_an_unknown_with_is_unknown_too(lint):
    src = mk("""
        with helper():
            class M:
                def __init__(self):
                    self.x = torch.randn(128, 512)
                    self.w = torch.randn(512, 64)

                def run(self, hcom):
                    return torch_npu.npu_mm_reduce_scatter_base(self.x, self.w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("header,manager", [
    ("", "torch.no_grad()"), ("", "torch.inference_mode()"), ("", "torch.autocast('npu', dtype=torch.float16)"),
    ("from torch import no_grad as ng\n", "ng()"), ("import torch.npu.amp as amp\n", "amp.autocast()"),
    ("", "torch.no_grad(), open('log') as f"), ("", "torch.npu.stream(s)"),
])
def test_npu407_tensors_made_inside_a_known_with_keep_the_default_dtype(lint, header, manager):
    src = mk(f"""
        def bench(hcom, s):
            with {manager}:
                x = torch.randn(128, 512, device="npu")
                w = torch.randn(512, 256, device="npu")
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """, header="import torch\nimport torch_npu\n" + header)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU407"]
    assert "float32" in found[0].message


def test_npu407_a_cached_result_holds_only_while_the_imported_modules_stay_unseen(tmp_path):
    from test_cache_jobs import _lint, cache_mod

    files = {"model.py": mk("import conftest_helper\n" + textwrap.dedent(_DEFAULT_MADE)), "other.py": "import torch\n"}
    first = _lint(tmp_path, files, jobs=1, cache=cache_mod.Cache(str(tmp_path / "cache")))
    assert [f.code for f in first.findings if f.code == "NPU407"] == []  # conftest_helper is not seen
    files["conftest_helper.py"] = "import torch\n"  # now it is, and sets nothing
    second = _lint(tmp_path, files, jobs=1, cache=cache_mod.Cache(str(tmp_path / "cache")))
    assert [f.code for f in second.findings if f.code == "NPU407"] == ["NPU407"]


def test_npu407_tensors_made_before_an_unknown_with_keep_the_default_dtype(lint):
    src = mk("""
        x = torch.randn(128, 512)
        w = torch.randn(512, 256)
        with set_default_torch_dtype(torch.bfloat16):  # (as vLLM's, which sets it)
            out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU407"]


def test_npu407_an_explicit_dtype_inside_an_unknown_with_is_still_known(lint):
    src = mk("""
        with helper():
            x = torch.randn(128, 512, dtype=torch.float32)
            w = torch.randn(512, 256, dtype=torch.float32)
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == ["NPU407"]


@pytest.mark.parametrize("fill,dtype_name", [("1.0", "float32"), ("1", "int64"), ("True", "bool")])
def test_npu407_torch_full_infers_dtype_from_fill(lint, fill, dtype_name):
    src = mk(f"""
        x = torch.full((128, 512), {fill})
        w = torch.full((512, 64), {fill})
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU407"]
    assert dtype_name in found[0].message


def test_npu407_torch_full_explicit_dtype_clean(lint):
    src = mk("""
        x = torch.full((128, 512), 1.0, dtype=torch.float16)
        w = torch.full([512, 64], 0, dtype=torch.float16)
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu407_torch_full_mixed_fill_types_differ(lint):
    src = mk("""
        x = torch.full((128, 512), 2, dtype=torch.float16)
        w = torch.full((512, 64), 0.5).half()
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
        y = torch.full((128, 512), 2)
        v = torch.full((512, 64), 0.5)
        out2 = torch_npu.npu_mm_reduce_scatter_base(y, v, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU407"]
    assert pos(found[0]) == at(src, RS, 1)
    assert "int64" in found[0].message and "float32" in found[0].message


def test_npu407_int8_needs_aiv_and_scales(lint):
    src = mk("""
        x = torch.ones(128, 512, dtype=torch.int8)
        w = torch.ones(512, 64, dtype=torch.int8)
        s1 = torch.ones(128, 1)
        s2 = torch.ones(1, 64)
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
        b = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, comm_mode="aiv")
        c = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, comm_mode="aiv", x1_scale=s1, x2_scale=s2)
        d, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, comm_mode="ai_cpu", x1_scale=s1, x2_scale=s2)
    """)
    found = lint(src, select=["NPU407"])
    assert codes(found) == ["NPU407", "NPU407", "NPU407"]
    assert [pos(f) for f in found] == [at(src, RS), at(src, RS, 1), at(src, AG)]
    assert "aiv" in found[0].message


def test_npu407_int8_perchannel_quant_needs_only_x2_scale(lint):
    # op-plugin docs/zh/custom_APIs/torch_npu/torch_npu-npu_mm_reduce_scatter_base.md, "scale参数组合约束":
    # quantisation with x2_scale alone (perchannel) is supported (x1_scale not passed); op-plugin's own
    # test_mm_reduce_scatter_base.py calls it that way (int8, comm_mode='aiv', x2_scale only).
    src = mk("""
        x = torch.ones(128, 512, dtype=torch.int8)
        w = torch.ones(512, 64, dtype=torch.int8)
        s2 = torch.ones(1, 64)
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, comm_mode="aiv", x2_scale=s2)
        b, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, comm_mode="aiv", x2_scale=s2)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu407_int8_with_unknown_comm_mode_is_not_reported(lint):
    src = mk("""
        def f(hcom, mode, s1, s2):
            x = torch.ones(128, 512, dtype=torch.int8)
            w = torch.ones(512, 64, dtype=torch.int8)
            return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, comm_mode=mode, x1_scale=s1, x2_scale=s2)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu407_all_reduce(lint):
    src = mk("""
        x = torch.randn(128, 512, dtype=torch.float16)
        w8 = torch.ones(512, 64, dtype=torch.int8)
        scale = torch.ones(64, dtype=torch.float16)
        ok = torch_npu.npu_mm_all_reduce_base(x, w8, hcom, antiquant_scale=scale)
        bad = torch_npu.npu_mm_all_reduce_base(x, w8, hcom)
        xf = torch.randn(128, 512)
        bad2 = torch_npu.npu_mm_all_reduce_base(xf, xf.t(), hcom)
        x8 = torch.ones(128, 512, dtype=torch.int8)
        ok2 = torch_npu.npu_mm_all_reduce_base(x8, w8, hcom, dequant_scale=scale)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU407", "NPU407"]
    assert [pos(f) for f in found] == [at(src, AR, 1), at(src, AR, 2)]


def test_npu407_aliases(lint):
    src = """
        import torch
        import torch_npu as tnpu
        from torch_npu import npu_all_gather_base_mm as agmm
        x = torch.randn(128, 512)
        w = torch.randn(512, 64)
        a = tnpu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
        b, g = agmm(x, w, hcom, 8)
        c = torch.ops.npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU407"] * 3
    assert [pos(f) for f in found] == [at(src, "tnpu.npu_mm"), at(src, "agmm(x"), at(src, "torch.ops.npu")]


# ======================================================================================
# NPU408 fused-comm-mixed-domains
# ======================================================================================

def test_npu408_two_literals(lint):
    src = mk("""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, "tp_comm", 8)
        out2, g = torch_npu.npu_all_gather_base_mm(x, w, "ep_comm", 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU408"]
    assert pos(found[0]) == at(src, AG)
    msg = found[0].message
    assert "'ep_comm'" in msg and "'tp_comm'" in msg and f"line {at(src, RS)[0]}" in msg


def test_npu408_same_literal_clean(lint):
    src = mk("""
        HCOM = "tp_comm"
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, "tp_comm", 8)
        out2, g = torch_npu.npu_all_gather_base_mm(x, w, HCOM, 8)
        out3 = torch_npu.npu_mm_all_reduce_base(x, w, "tp_" + "comm")
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu408_literals_through_constants_and_all_reduce(lint):
    src = mk("""
        TP = "tp"
        EP = "ep"

        def f(x, w):
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, TP, 8)
            b = torch_npu.npu_mm_all_reduce_base(x, w, EP)
            return a, b
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU408"]
    assert pos(found[0]) == at(src, AR)



def test_npu4xx_a_nested_call_is_judged_at_its_own_node_after_the_call_around_it(lint):
    # each call is judged by its own record; the outer call is met first, though its hcom comes last
    src = mk("""
        out = torch_npu.npu_mm_all_reduce_base(
            torch_npu.npu_mm_reduce_scatter_base(x, w, "ep", 16), w, "tp")
    """)
    found = lint(src, select=SEL)
    assert sorted((f.code, pos(f)) for f in found) == [("NPU401", at(src, "16)")), ("NPU408", at(src, RS))]
    assert [f.message for f in found if f.code == "NPU408"] == [
        "npu_mm_reduce_scatter_base uses communication domain 'ep' but npu_mm_all_reduce_base at line 4 uses 'tp': "
        "on atlas-a2 the fused communication-compute ops of one model support only one communication domain; "
        "use one process group, or comm_mode='aiv'"]


NEW_GROUPS = """
    import torch
    import torch_npu
    import torch.distributed as dist

    tp_group = dist.new_group([0, 1, 2, 3])
    ep_group = dist.new_group([0, 1, 2, 3])

    def run(x, w, rank):
        tp_name = tp_group._get_backend(torch.device("npu")).get_hccl_comm_name(rank)
        ep_name = ep_group._get_backend(torch.device("npu")).get_hccl_comm_name(rank)
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, tp_name, 4)
        b, g = torch_npu.npu_all_gather_base_mm(x, w, ep_name, 4)
        return a, b
"""


def test_npu408_two_new_group_groups(lint):
    found = lint(NEW_GROUPS, select=SEL)
    assert codes(found) == ["NPU408"]
    assert pos(found[0]) == at(NEW_GROUPS, AG)
    assert "tp_group" in found[0].message and "ep_group" in found[0].message


def test_npu408_same_group_clean(lint):
    src = NEW_GROUPS.replace("ep_name = ep_group.", "ep_name = tp_group.")
    assert codes(lint(src, select=SEL)) == []


def test_npu408_same_group_other_rank_argument_clean(lint):
    src = """
        import torch
        import torch_npu
        import torch.distributed as dist

        group = dist.new_group([0, 1])

        def run(x, w, rank):
            n1 = group.get_hccl_comm_name(rank)
            n2 = group.get_hccl_comm_name(0)
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, n1, 2)
            b, g = torch_npu.npu_all_gather_base_mm(x, w, n2, 2)
            return a, b
    """
    assert codes(lint(src, select=SEL)) == []


def test_npu408_comm_mode_aiv_clean(lint):
    src = NEW_GROUPS.replace("tp_name, 4)", 'tp_name, 4, comm_mode="aiv")').replace(
        "ep_name, 4)", 'ep_name, 4, comm_mode="aiv")')
    assert codes(lint(src, select=SEL)) == []
    src = mk("""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, "tp_comm", 8, comm_mode="aiv")
        out2, g = torch_npu.npu_all_gather_base_mm(x, w, "ep_comm", 8, comm_mode="aiv")
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu408_product_a3_clean(lint):
    assert codes(lint(NEW_GROUPS, select=SEL, config=A3)) == []
    src = mk("""
        out = torch_npu.npu_mm_reduce_scatter_base(x, w, "tp_comm", 8)
        out2, g = torch_npu.npu_all_gather_base_mm(x, w, "ep_comm", 8)
    """)
    assert codes(lint(src, select=SEL, config=A3)) == []


SELF_HCOMM = """
    import torch
    import torch_npu
    import torch.distributed as dist


    class Block(torch.nn.Module):
        def __init__(self, rank):
            super().__init__()
            self.tp_group = dist.new_group([0, 1, 2, 3])
            self.ep_group = dist.new_group([4, 5, 6, 7])
            self.hcomm = self.tp_group._get_backend(torch.device("npu")).get_hccl_comm_name(rank)
            self.ep_hcomm = self.ep_group._get_backend(torch.device("npu")).get_hccl_comm_name(rank)

        def forward(self, x, w):
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, self.hcomm, 4)
            b, g = torch_npu.npu_all_gather_base_mm(x, w, self.ep_hcomm, 4)
            return a, b
"""


def test_npu408_self_attribute_set_once_in_init(lint):
    found = lint(SELF_HCOMM, select=SEL)
    assert codes(found) == ["NPU408"]
    assert pos(found[0]) == at(SELF_HCOMM, AG)


def test_npu408_self_attribute_same_group_clean(lint):
    src = SELF_HCOMM.replace("self.ep_hcomm = self.ep_group.", "self.ep_hcomm = self.tp_group.")
    assert codes(lint(src, select=SEL)) == []


def test_npu408_self_attribute_rebound_elsewhere_is_unknown(lint):
    src = SELF_HCOMM + """
        def reset(self, name):
            self.ep_hcomm = name
    """
    assert codes(lint(src, select=SEL)) == []


def test_npu408_groups_from_parameters_are_unknown(lint):
    src = """
        import torch
        import torch_npu


        class Block(torch.nn.Module):
            def __init__(self, tp_group, ep_group, rank):
                super().__init__()
                self.hcomm = tp_group._get_backend(torch.device("npu")).get_hccl_comm_name(rank)
                self.ep_hcomm = ep_group._get_backend(torch.device("npu")).get_hccl_comm_name(rank)

            def forward(self, x, w):
                a = torch_npu.npu_mm_reduce_scatter_base(x, w, self.hcomm, 4)
                b, g = torch_npu.npu_all_gather_base_mm(x, w, self.ep_hcomm, 4)
                return a, b


        def f(x, w, hcom_a, hcom_b):
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom_a, 4)
            b, g = torch_npu.npu_all_gather_base_mm(x, w, hcom_b, 4)
            return a, b
    """
    assert codes(lint(src, select=SEL)) == []


def test_npu408_default_group_twice_is_one_domain(lint):
    src = """
        import torch
        import torch_npu
        from torch.distributed.distributed_c10d import _get_default_group

        def f(x, w, rank):
            h1 = _get_default_group()._get_backend(torch.device("npu")).get_hccl_comm_name(rank)
            pg = _get_default_group()
            h2 = pg.get_hccl_comm_name(rank)
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, h1, 8)
            b, g = torch_npu.npu_all_gather_base_mm(x, w, h2, 8)
            return a, b
    """
    assert codes(lint(src, select=SEL)) == []


def test_npu408_default_group_spellings_are_one_domain(lint):
    # dist.group.WORLD, dist.GroupMember.WORLD and _get_default_group() are the same
    # default process group (torch.distributed.distributed_c10d: group.WORLD is GroupMember.WORLD).
    src = """
        import torch
        import torch_npu
        import torch.distributed as dist

        def f(x, w, rank):
            h1 = dist.group.WORLD.get_hccl_comm_name(rank)
            h2 = dist.GroupMember.WORLD.get_hccl_comm_name(rank)
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, h1, 8)
            b, g = torch_npu.npu_all_gather_base_mm(x, w, h2, 8)
            return a, b
    """
    assert codes(lint(src, select=SEL)) == []


def test_npu408_groups_returned_by_calls_are_unknown(lint):
    # Two getters that return the same group object: calls are unknown values (RULES.md,
    # "Resolve values, never guess"), so their groups cannot be compared.
    src = """
        import torch
        import torch_npu
        import torch.distributed as dist

        _TP = dist.new_group([0, 1])

        def get_tp_group():
            return _TP

        def get_sequence_parallel_group():
            return _TP

        def f(x, w, rank):
            h1 = get_tp_group().get_hccl_comm_name(rank)
            h2 = get_sequence_parallel_group().get_hccl_comm_name(rank)
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, h1, 2)
            b, g = torch_npu.npu_all_gather_base_mm(x, w, h2, 2)
            return a, b
    """
    assert codes(lint(src, select=SEL)) == []


def test_npu408_inline_get_hccl_comm_name_on_two_new_groups(lint):
    src = """
        import torch
        import torch_npu
        import torch.distributed as dist

        tp = dist.new_group([0, 1])
        ep = dist.new_group([0, 1])

        def f(x, w, rank):
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, tp.get_hccl_comm_name(rank), 2)
            b, g = torch_npu.npu_all_gather_base_mm(x, w, ep.get_hccl_comm_name(rank), 2)
            return a, b
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU408"]
    assert pos(found[0]) == at(src, AG)


def test_npu408_is_per_file(lint):
    files = {
        "a.py": mk("""
            out = torch_npu.npu_mm_reduce_scatter_base(x, w, "tp_comm", 8)
        """),
        "b.py": mk("""
            out2, g = torch_npu.npu_all_gather_base_mm(x, w, "ep_comm", 8)
        """),
    }
    assert codes(lint(files, select=SEL)) == []


def test_npu408_aliases(lint):
    src = """
        import torch
        import torch_npu as tnpu
        from torch_npu import npu_mm_reduce_scatter_base as f
        a = f(x, w, "tp", 8)
        b = tnpu.npu_mm_all_reduce_base(x, w, "ep")
        c = torch.ops.npu.npu_all_gather_base_mm(x, w, "pp", 8)
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU408", "NPU408"]
    assert [pos(f) for f in found] == [at(src, "tnpu.npu_mm_all"), at(src, "torch.ops.npu")]


# ======================================================================================
# NPU010 for the fused ops
# ======================================================================================

def test_npu010_keyword_only_passed_positionally(lint):
    src = mk("""
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, "sum")
        b, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, None)
        c = torch_npu.npu_mm_all_reduce_base(x, w, hcom, "sum")
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU010"] * 3
    assert [pos(f) for f in found] == [at(src, RS), at(src, AG), at(src, AR)]
    assert all("keyword-only" in f.message for f in found)
    assert "reduce_op" in found[0].message and "bias" in found[1].message


def test_npu010_world_size_on_all_reduce(lint):
    src = mk("""
        a = torch_npu.npu_mm_all_reduce_base(x, w, hcom, world_size=8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU010"]
    assert pos(found[0]) == at(src, AR)
    assert "world_size" in found[0].message


def test_npu010_world_size_positionally_on_all_reduce(lint):
    src = mk("""
        a = torch_npu.npu_mm_all_reduce_base(x, w, hcom, 8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU010"]
    assert "keyword-only" in found[0].message


def test_npu010_missing_and_unknown_keywords(lint):
    src = mk("""
        a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom)
        b = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, gather_index=0)
        c, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, reduce_op="sum")
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU010"] * 3
    assert "world_size" in found[0].message
    assert "gather_index" in found[1].message
    assert "reduce_op" in found[2].message


def test_npu010_clean_twins(lint):
    src = mk("""
        def f(x, w, hcom, args, kwargs):
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, reduce_op="sum", bias=None, comm_turn=0,
                                                     x1_scale=None, x2_scale=None, output_dtype=None,
                                                     comm_mode="aiv")
            b = torch_npu.npu_all_gather_base_mm(x, x2=w, hcom=hcom, world_size=8, gather_output=False)
            c = torch_npu.npu_mm_all_reduce_base(x1=x, x2=w, hcom=hcom, reduce_op="sum", x3=None)
            d = torch_npu.npu_mm_reduce_scatter_base(*args, **kwargs)
            e = torch_npu.npu_mm_all_reduce_base(x, w, *args)
            return a, b, c, d, e
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu010_first_parameter_is_named_input_at_run_time(lint):
    # torch_npu registers the op-plugin schema with ``self`` renamed to ``input``
    # (Ascend/pytorch torchnpugen/custom_functions.py RegisterCustomSchema, L235-236:
    # re.sub(r'\bself\b(?=[,\)])', 'input', ...)) and binds torch_npu.<op> = torch.ops.npu.<op>;
    # docs/004's prototype is ``npu_mm_reduce_scatter_base(Tensor input, Tensor x2, ...)``.
    # So ``input=`` binds, and the first input is still checked when passed by keyword.
    src = mk("""
        a = torch_npu.npu_mm_reduce_scatter_base(input=x, x2=w, hcom=hcom, world_size=8)
        b, g = torch_npu.npu_all_gather_base_mm(input=x.t(), x2=w, hcom=hcom, world_size=8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU405"]
    assert pos(found[0]) == at(src, "x.t()")


def test_npu010_self_keyword_does_not_bind(lint):
    src = mk("""
        a = torch_npu.npu_mm_reduce_scatter_base(self=x, x2=w, hcom=hcom, world_size=8)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU010"]
    assert pos(found[0]) == at(src, RS)
    assert "self" in found[0].message


def test_npu010_aliases(lint):
    src = """
        import torch
        import torch_npu as tnpu
        from torch_npu import npu_mm_all_reduce_base as ar
        a = ar(x, w, hcom, world_size=8)
        b = tnpu.npu_mm_reduce_scatter_base(x, w, hcom, 8, "sum")
        c = torch.ops.npu.npu_all_gather_base_mm(x, w, hcom, 8, None)
    """
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU010"] * 3
    assert [pos(f) for f in found] == [at(src, "ar(x"), at(src, "tnpu.npu"), at(src, "torch.ops")]


def test_npu010_call_that_does_not_bind_gets_no_other_findings(lint):
    src = mk("""
        a = torch_npu.npu_mm_reduce_scatter_base(x.t(), w, hcom, 16, "max")
    """)
    assert codes(lint(src, select=SEL)) == ["NPU010"]


# ======================================================================================
# Every rule through every alias, through constants, and under both products
# ======================================================================================

ALIASES = {
    "from-import-as": ("from torch_npu import npu_mm_reduce_scatter_base as f\n", "f"),
    "module-alias": ("import torch_npu as tnpu\n", "tnpu.npu_mm_reduce_scatter_base"),
    "torch-ops-npu": ("", "torch.ops.npu.npu_mm_reduce_scatter_base"),
}

# code -> (body with {f} for the op, needle of the reported node with {f} expanded, product-dependent)
CASES = {
    "NPU401": ("out = {f}(x, w, hcom, 2 * 8)\n", "2 * 8", True),
    "NPU402": ('out = {f}(x, w, hcom, 8, reduce_op="max")\n', '"max"', False),
    "NPU403": ("out = {f}(x, w, hcom, 8, comm_turn=1)\n", "1)", False),
    "NPU404": ("b = torch.randn(64, dtype=torch.float16)\nout = {f}(x, w, hcom, 8, bias=b)\n", "b)", False),
    "NPU405": ("out = {f}(x.t(), w, hcom, 8)\n", "x.t()", False),
    "NPU406": ("x = torch.randn(128, 100, dtype=torch.float16)\nw = torch.randn(100, 64, dtype=torch.float16)\n"
               "out = {f}(x, w, hcom, 8)\n", "{f}(x", False),
    "NPU407": ("x = torch.randn(128, 512)\nw = torch.randn(512, 64)\nout = {f}(x, w, hcom, 8)\n", "{f}(x", False),
    "NPU408": ('a = {f}(x, w, "tp", 8)\nb = {f}(x, w, "ep", 8)\n', "{f}(x, w, \"ep\"", True),
    "NPU010": ('out = {f}(x, w, hcom, 8, "sum")\n', "{f}(x", False),
}


@pytest.mark.parametrize("alias", sorted(ALIASES))
@pytest.mark.parametrize("code", sorted(CASES))
def test_every_rule_through_every_alias(lint, code, alias):
    header, f = ALIASES[alias]
    body, needle, _ = CASES[code]
    src = "import torch\n" + header + body.format(f=f)
    found = lint(src, select=SEL)
    assert codes(found) == [code]
    assert pos(found[0]) == at(src, needle.format(f=f))


@pytest.mark.parametrize("code", sorted(CASES))
def test_every_rule_under_atlas_a3(lint, code):
    # world_size 16 and mixed domains are A2-only limits; the others do not depend on the product.
    body, needle, product_dependent = CASES[code]
    src = "import torch\nimport torch_npu\n" + body.format(f=RS)
    assert codes(lint(src, select=SEL)) == [code]
    assert codes(lint(src, select=SEL, config=A3)) == ([] if product_dependent else [code])


# code -> (module-level or local binding of V, call using V)
CONSTANT_CASES = {
    "NPU401": ("V = 2 * 8", "{f}(x, w, hcom, V)"),
    "NPU402": ('V = "ma" + "x"', "{f}(x, w, hcom, 8, reduce_op=V)"),
    "NPU403": ("V = 3 - 2", "{f}(x, w, hcom, 8, comm_turn=V)"),
    "NPU408": ('V = "e" + "p"', '{f}(x, w, "tp", 8) + {f}(x, w, V, 8)'),
}


@pytest.mark.parametrize("where", ["module", "local"])
@pytest.mark.parametrize("code", ["NPU401", "NPU402", "NPU403", "NPU408"])
def test_scalar_rules_through_module_and_local_constants(lint, code, where):
    binding, call = CONSTANT_CASES[code]
    call = call.format(f=RS)
    if where == "module":
        src = mk(f"""
            {binding}

            def step(x, w, hcom):
                return {call}
        """)
    else:
        src = mk(f"""
            def step(x, w, hcom):
                {binding}
                return {call}
        """)
    found = lint(src, select=SEL)
    assert codes(found) == [code]
    assert found[0].line == at(src, "return")[0]


def test_npu404_bias_through_module_constant(lint):
    src = mk("""
        BIAS = torch.randn(64, dtype=torch.float16).npu()

        def step(x, w, hcom):
            return torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, bias=BIAS)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU404"]
    assert pos(found[0]) == at(src, "BIAS)")


# ======================================================================================
# Vendor examples and whole programs
# ======================================================================================

# docs/004 (torch_npu.npu_mm_reduce_scatter_base), 调用示例, verbatim.
DOC_004_EXAMPLE = '''\
import torch
import torch_npu
import torch.distributed as dist
import torch.multiprocessing as mp
def run_mm_reduce_scatter_base(rank, world_size, master_ip, master_port, x1_shape, x2_shape, dtype):
    torch_npu.npu.set_device(rank)
    init_method = 'tcp://' + master_ip + ':' + master_port
    dist.init_process_group(backend="hccl", rank=rank, world_size=world_size, init_method=init_method)
    from torch.distributed.distributed_c10d import _get_default_group
    default_pg = _get_default_group()
    if torch.__version__ > '2.0.1':
        hcomm_info = default_pg._get_backend(torch.device("npu")).get_hccl_comm_name(rank)
    else:
        hcomm_info = default_pg.get_hccl_comm_name(rank)

    input_ = torch.randn(x1_shape, dtype=dtype).npu()
    weight = torch.randn(x2_shape, dtype=dtype).npu()
    output = torch_npu.npu_mm_reduce_scatter_base(input_, weight, hcomm_info, world_size)

if __name__ == "__main__":
    worksize = 8
    master_ip = '127.0.0.1'
    master_port = '50001'
    x1_shape = [128, 512]
    x2_shape = [512, 64]
    dtype = torch.float16

    mp.spawn(run_mm_reduce_scatter_base, args=(worksize, master_ip, master_port, x1_shape, x2_shape, dtype), nprocs=worksize)
'''


def test_doc_004_example_lints_clean_with_all_rules(lint):
    assert codes(lint(DOC_004_EXAMPLE, select=["ALL"])) == []
    assert codes(lint(DOC_004_EXAMPLE, select=SEL)) == []
    assert codes(lint(DOC_004_EXAMPLE, select=["ALL"], config=A3)) == []


def test_doc_004_example_world_size_through_spawn_is_unknown(lint):
    # The values reach the worker through mp.spawn: even an unsupported size, shape or dtype
    # in the __main__ block is not the function's (unknown) parameter.
    src = (DOC_004_EXAMPLE.replace("worksize = 8", "worksize = 16")
           .replace("x1_shape = [128, 512]", "x1_shape = [100, 100]")
           .replace("dtype = torch.float16", "dtype = torch.float32"))
    assert codes(lint(src, select=["ALL"])) == []


# op-plugin codegen/templates/_op_plugin_docs.py, npu_all_gather_base_mm 单算子模式调用 (verbatim).
ALL_GATHER_DOC_EXAMPLE = '''\
import torch
import torch_npu
import torch.distributed as dist
import torch.multiprocessing as mp
def run_all_gather_base_mm(rank, world_size, master_ip, master_port, x1_shape, x2_shape, dtype):
    torch_npu.npu.set_device(rank)
    init_method = 'tcp://' + master_ip + ':' + master_port
    dist.init_process_group(backend="hccl", rank=rank, world_size=world_size, init_method=init_method)
    from torch.distributed.distributed_c10d import _get_default_group
    default_pg = _get_default_group()
    if torch.__version__ > '2.0.1':
        hcomm_info = default_pg._get_backend(torch.device("npu")).get_hccl_comm_name(rank)
    else:
        hcomm_info = default_pg.get_hccl_comm_name(rank)

    tensor_allgather_shape = x1_shape
    single_shape = [x1_shape[0] // world_size, x1_shape[1]]

    input_ = torch.randn(single_shape, dtype=dtype).npu()
    weight = torch.randn(x2_shape, dtype=dtype).npu()
    output, gather_out = torch_npu.npu_all_gather_base_mm(input_, weight, hcomm_info, world_size)

if __name__ == "__main__":
    worksize = 8
    master_ip = '127.0.0.1'
    master_port = '50001'
    x1_shape = [128, 512]
    x2_shape = [512, 64]
    dtype = torch.float16

    mp.spawn(run_all_gather_base_mm, args=(worksize, master_ip, master_port, x1_shape, x2_shape, dtype), nprocs=worksize)
'''


def test_op_plugin_all_gather_example_lints_clean(lint):
    assert codes(lint(ALL_GATHER_DOC_EXAMPLE, select=["ALL"])) == []


def test_mindspeed_style_linear_function_is_clean(lint):
    # Shape of MindSpeed core/tensor_parallel/mc2_feature/linear_function.py: hcom and
    # world_size come from a helper, x2 is transposed, bias=None.
    src = """
        import torch
        import torch_npu


        def get_hcomm_info_and_world_size(group):
            rank = torch.distributed.get_rank(group)
            hcomm_info = None
            if torch.__version__ > "2.0":
                global_rank = torch.distributed.get_global_rank(group, rank)
                hcomm_info = group._get_backend(torch.device("npu")).get_hccl_comm_name(global_rank)
            else:
                hcomm_info = group.get_hccl_comm_name(rank)
            world_size = torch.distributed.get_world_size(group)
            return hcomm_info, world_size


        class RowSeqParallelLinearFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input_, weight, bias, group):
                hcomm_info, world_size = get_hcomm_info_and_world_size(group)
                x = input_.reshape(input_.shape[0] * input_.shape[1], input_.shape[2])
                output = torch_npu.npu_mm_reduce_scatter_base(
                    x, weight.t(), hcomm_info, world_size, reduce_op="sum", bias=None
                )
                ctx.hcomm_info = hcomm_info
                ctx.world_size = world_size
                return output

            @staticmethod
            def backward(ctx, grad_output):
                hcomm_info = ctx.hcomm_info
                world_size = ctx.world_size
                grad_input, _ = torch_npu.npu_all_gather_base_mm(
                    grad_output, ctx.weight, hcomm_info, world_size, bias=None, gather_index=0
                )
                return grad_input, None, None, None
    """
    assert codes(lint(src, select=["ALL"])) == []


def test_full_program_with_several_findings(lint):
    src = """
        import torch
        import torch_npu
        import torch.distributed as dist

        WS = 2 * 8
        tp = dist.new_group([0, 1])
        ep = dist.new_group([2, 3])


        def main(rank):
            x = torch.randn(128, 100, dtype=torch.float16).npu()
            w = torch.randn(100, 64, dtype=torch.float16).npu()
            h_tp = tp.get_hccl_comm_name(rank)
            h_ep = ep.get_hccl_comm_name(rank)
            a = torch_npu.npu_mm_reduce_scatter_base(x, w, h_tp, WS, reduce_op="max")
            b, g = torch_npu.npu_all_gather_base_mm(x.t(), w, h_ep, 8, comm_turn=3)
            return a, b
    """
    found = lint(src, select=SEL)
    # reduce-scatter: world_size 16, reduce_op, k=100; all-gather: comm_turn, transposed x1
    # (whose known shape (100, 128) then mismatches k), and a second domain.
    assert sorted((f.code, f.line, f.column) for f in found) == sorted([
        ("NPU401",) + at(src, "WS, reduce"),
        ("NPU402",) + at(src, '"max"'),
        ("NPU406",) + at(src, RS),
        ("NPU403",) + at(src, "3)"),
        ("NPU405",) + at(src, "x.t()"),
        ("NPU406",) + at(src, AG),
        ("NPU408",) + at(src, AG),
    ])


def test_npu407_an_import_under_type_checking_or_of_a_test_framework_leaves_the_default_known(lint):
    for imp in ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import mysetup\n",
                "import pytest\nimport expecttest\n"):
        assert codes(lint({"model.py": mk(imp + textwrap.dedent(_DEFAULT_MADE))}, select=SEL)) == ["NPU407"], imp
    # the else arm runs
    imp = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n    import mysetup\n"
    assert codes(lint({"model.py": mk(imp + textwrap.dedent(_DEFAULT_MADE))}, select=SEL)) == []
