"""NPU401-NPU408: torch_npu fused communication-compute ops (MC2):
``npu_mm_reduce_scatter_base``, ``npu_all_gather_base_mm``, ``npu_mm_all_reduce_base``."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from npulint.checker import FileContext
from npulint.lintrule import Analysis, Invalid, LintRule
from npulint.semantic import Site
from npulint.signatures import Bound
from npulint.values import UNKNOWN, Tensor, is_constant

from .signature import SIGNATURES

RS = "torch_npu.npu_mm_reduce_scatter_base"
AG = "torch_npu.npu_all_gather_base_mm"
AR = "torch_npu.npu_mm_all_reduce_base"
FUSED = {RS, AG, AR}
SHORT = {RS: "npu_mm_reduce_scatter_base", AG: "npu_all_gather_base_mm", AR: "npu_mm_all_reduce_base"}

WORLD_SIZES = {"atlas-a2": (2, 4, 8), "atlas-a3": (2, 4, 8, 16, 32)}
TORCH_NPU_WORLD_SIZES = (2, 4, 8, 16, 32)  # what torch_npu itself accepts (RuntimeError otherwise)
K_MIN, K_MAX = 256, 65535  # k in [256, 65535)
HALF = ("float16", "bfloat16")

_SRC = ("torch_npu's API pages: Ascend/op-plugin@517f2e7d docs/zh/custom_APIs/torch_npu/"
        "torch_npu-npu_all_gather_base_mm.md:45-73, torch_npu-npu_mm_reduce_scatter_base.md:51-82, "
        "torch_npu-npu_mm_all_reduce_base.md:33-80 (same folder)")

_IMPORT = "import torch\nimport torch_npu\n"

_NEW_GROUP = {"torch.distributed.new_group", "torch.distributed.distributed_c10d.new_group"}
_WORLD = {"torch.distributed.distributed_c10d._get_default_group", "torch.distributed.group.WORLD",
          "torch.distributed.distributed_c10d.GroupMember.WORLD", "torch.distributed.GroupMember.WORLD",
          "torch.distributed.distributed_c10d.group.WORLD"}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclasses.dataclass
class FusedCall:
    """A call of a fused op that binds to its signature: the op's qualified name, the call, its
    bound arguments and where it is."""

    q: str
    call: cst.Call
    bound: Bound
    site: Site
    # the first input's expression and the values of the two inputs (MC2Analysis.inputs())
    _inputs: Optional[Tuple[Optional[cst.BaseExpression], Any, Any]] = None

    @property
    def name(self) -> str:
        return SHORT[self.q]


class MC2Analysis(Analysis):
    """The file's calls of the fused ops (``npu_mm_reduce_scatter_base``,
    ``npu_all_gather_base_mm``, ``npu_mm_all_reduce_base``) that bind to their signatures (a call
    that does not is NPU010's; its arguments are not trusted), resolved in ``finish()`` and kept
    by their call node (``fused``: what the rules' ``visit_Call`` asks); and the values of their
    two inputs, evaluated once for the rules that read them."""

    tokens = (("npu_mm_reduce_scatter_base",), ("npu_all_gather_base_mm",), ("npu_mm_all_reduce_base",))

    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        self.calls: List[Tuple[cst.Call, Site]] = []
        self.fused: Dict[cst.Call, FusedCall] = {}  # after finish()

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.ctx.site()))

    def finish(self) -> None:
        ctx = self.ctx
        for call, site in self.calls:
            q = ctx.resolve(call.func, site, FUSED)
            if q is None:
                continue
            bound = ctx.bind(SIGNATURES[q], call)
            if bound.error is not None:
                continue  # NPU010 says why; its arguments are not trusted
            self.fused[call] = FusedCall(q, call, bound, site)

    def inputs(self, f: FusedCall) -> Tuple[Optional[cst.BaseExpression], Any, Any]:
        """The expression of *f*'s first input (None: not passed) and the values of both inputs."""
        if f._inputs is None:
            ctx = self.ctx
            x1e, x2e = f.bound.args.get("x1" if f.q == AR else "input"), f.bound.args.get("x2")
            x1 = ctx.value(x1e, f.site) if x1e is not None else UNKNOWN
            x2 = ctx.value(x2e, f.site) if x2e is not None else UNKNOWN
            f._inputs = (x1e, x1, x2)
        return f._inputs

    def tensors(self, call: cst.Call) -> Optional[Tuple[FusedCall, Tensor, Tensor]]:
        """*call*'s record and its two inputs, when it is a fused call whose inputs are both
        statically known tensors."""
        f = self.fused.get(call)
        if f is None:
            return None
        _, x1, x2 = self.inputs(f)
        if isinstance(x1, Tensor) and isinstance(x2, Tensor):
            return f, x1, x2
        return None


class FusedCommWorldSize(LintRule):
    CODE = "NPU401"
    NAME = "fused-comm-world-size"
    SEVERITY = "error"
    SUMMARY = "A statically known world_size outside the product's supported set."
    EXPLANATION = (
        "`npu_mm_reduce_scatter_base` and `npu_all_gather_base_mm` support world_size 2, 4 or 8 on Atlas A2 "
        "(`product = \"atlas-a2\"`, the default) and 2, 4, 8, 16 or 32 on Atlas A3 (`product = \"atlas-a3\"`). "
        "torch_npu itself raises RuntimeError for anything outside {2, 4, 8, 16, 32}; 16 and 32 on A2 fail in "
        "the communication library. Only statically known values are checked: a world_size that arrives "
        "through a parameter or `mp.spawn` is unknown.")
    SOURCE = (_SRC + "; Ascend/op-plugin@517f2e7d op_plugin/ops/opapi/AllGatherBaseMatmulKernelNpuOpApi.cpp:53-58, "
                     "MatmulReduceScatterBaseKernelNpuOpApi.cpp:33-37 (same folder)")
    INVALID = (
        Invalid(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 16)\n", range=(3, 56, 3, 58),
                message="npu_mm_reduce_scatter_base: world_size=16 is not supported on atlas-a2 (2, 4, 8); atlas-a3 "
                        "allows 16 and 32; set product in [tool.npulint]"),
        Invalid(_IMPORT + "WS = 2 * 3\nout = torch_npu.npu_all_gather_base_mm(x, w, hcom, WS)\n",
                range=(4, 52, 4, 54),
                message="npu_all_gather_base_mm: world_size=6 is not supported: torch_npu raises RuntimeError for "
                        "anything outside (2, 4, 8, 16, 32); atlas-a2 supports 2, 4, 8"),
    )
    VALID = (_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n",
             _IMPORT + "def f(x, w, hcom, world_size):\n"
                       "    return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, world_size)\n")
    HOW_TO_FIX = "Use a supported world_size, or set `product = \"atlas-a3\"` in [tool.npulint] if the job runs on A3."

    uses = (MC2Analysis,)

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        f = ctx.analysis(MC2Analysis).fused.get(node)
        if f is None or f.q not in (RS, AG):
            return
        ws = ctx.arg_value(f.bound, "world_size", f.site)
        product = ctx.settings.product
        allowed = WORLD_SIZES[product]
        if _is_int(ws) and ws not in allowed:
            if ws not in TORCH_NPU_WORLD_SIZES:
                msg = (f"world_size={ws} is not supported: torch_npu raises RuntimeError for anything "
                       f"outside (2, 4, 8, 16, 32); {product} supports {', '.join(map(str, allowed))}")
            else:
                msg = (f"world_size={ws} is not supported on {product} ({', '.join(map(str, allowed))}); "
                       "atlas-a3 allows 16 and 32; set product in [tool.npulint]")
            self.report(f.bound.args.get("world_size", f.call), f"{f.name}: {msg}")


class FusedCommReduceOp(LintRule):
    CODE = "NPU402"
    NAME = "fused-comm-reduce-op"
    SEVERITY = "error"
    SUMMARY = "reduce_op other than 'sum'."
    EXPLANATION = "`npu_mm_reduce_scatter_base` and `npu_mm_all_reduce_base` support only `reduce_op='sum'`."
    SOURCE = _SRC
    INVALID = (
        Invalid(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, reduce_op='max')\n",
                range=(3, 69, 3, 74),
                message="npu_mm_reduce_scatter_base: reduce_op='max' is not supported, only 'sum'; drop reduce_op"),
    )
    VALID = (_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, reduce_op='sum')\n",)
    HOW_TO_FIX = "Drop reduce_op (the default is 'sum')."

    uses = (MC2Analysis,)

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        f = ctx.analysis(MC2Analysis).fused.get(node)
        if f is None or f.q not in (RS, AR):
            return
        op = ctx.arg_value(f.bound, "reduce_op", f.site)
        if is_constant(op) and op != "sum":
            self.report(f.bound.args.get("reduce_op", f.call),
                        f"{f.name}: reduce_op={op!r} is not supported, only 'sum'; drop reduce_op")


class FusedCommReservedArgument(LintRule):
    CODE = "NPU403"
    NAME = "fused-comm-reserved-argument"
    SEVERITY = "error"
    SUMMARY = "comm_turn other than 0, or gather_index other than 0."
    EXPLANATION = ("`comm_turn` (all three ops) and `gather_index` (`npu_all_gather_base_mm`) support only 0 in "
                   "the current version.")
    SOURCE = _SRC
    INVALID = (
        Invalid(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, comm_turn=1)\n",
                range=(3, 69, 3, 70),
                message="npu_mm_reduce_scatter_base: comm_turn=1 is reserved and must be 0 in this version; drop it"),
        Invalid(_IMPORT + "out, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, gather_index=1)\n",
                range=(3, 71, 3, 72),
                message="npu_all_gather_base_mm: gather_index=1 is reserved and must be 0 in this version; drop it"),
    )
    VALID = (_IMPORT + "out, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, gather_index=0, comm_turn=0)\n",)
    HOW_TO_FIX = "Drop the argument (the default is 0)."

    uses = (MC2Analysis,)

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        f = ctx.analysis(MC2Analysis).fused.get(node)
        if f is None:
            return
        for param in ("comm_turn", "gather_index"):
            if SIGNATURES[f.q].param(param) is None:
                continue
            v = ctx.arg_value(f.bound, param, f.site)
            if is_constant(v) and v != 0:
                self.report(f.bound.args.get(param, f.call),
                            f"{f.name}: {param}={v!r} is reserved and must be 0 in this version; drop it")


class FusedCommBias(LintRule):
    CODE = "NPU404"
    NAME = "fused-comm-bias"
    SEVERITY = "error"
    SUMMARY = "A bias that may be non-zero on npu_mm_reduce_scatter_base or npu_all_gather_base_mm."
    EXPLANATION = ("A non-zero bias is not supported by `npu_mm_reduce_scatter_base` and `npu_all_gather_base_mm`. "
                   "Reported when the bias is statically known not to be None (a literal or a tensor made in "
                   "the same scope) and not known to be all zeros: a `torch.zeros(...)` or `torch.full(..., 0)` "
                   "(through `.npu()`, `.to(...)`, `.half()`...) whose values nothing may write afterwards is "
                   "accepted. `npu_mm_all_reduce_base` accepts a bias.")
    SOURCE = ("Ascend/op-plugin@c2447e25 docs/zh/custom_APIs/torch_npu/torch_npu-npu_all_gather_base_mm.md:51, "
              "torch_npu-npu_mm_reduce_scatter_base.md:46 (same folder): \"当前版本暂不支持bias输入为非0的场景\" "
              "(a non-zero bias is not supported in this version); " + _SRC)
    INVALID = (
        Invalid(_IMPORT + "b = torch.randn(64, dtype=torch.float16)\n"
                          "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=b)\n", range=(4, 64, 4, 65),
                message="npu_mm_reduce_scatter_base: a bias that may be non-zero is not supported (only an all-zero "
                        "bias is); pass bias=None and add the bias after the op"),
    )
    VALID = (_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=None)\n",
             _IMPORT + "b = torch.zeros(64, dtype=torch.float16).npu()\n"
                       "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=b)\n",
             _IMPORT + "b = torch.randn(64, dtype=torch.float16)\n"
                       "out = torch_npu.npu_mm_all_reduce_base(x, w, hcom, bias=b)\n")
    HOW_TO_FIX = "Add the bias after the fused op instead."

    uses = (MC2Analysis,)

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        f = ctx.analysis(MC2Analysis).fused.get(node)
        if f is None or f.q not in (RS, AG) or "bias" not in f.bound.args:
            return
        b = ctx.value(f.bound.args["bias"], f.site)
        if (isinstance(b, Tensor) and not b.zero) or (is_constant(b) and b is not None):
            self.report(f.bound.args["bias"],
                        f"{f.name}: a bias that may be non-zero is not supported (only an all-zero bias is); "
                        "pass bias=None and add the bias after the op")


class FusedCommTransposedInput(LintRule):
    CODE = "NPU405"
    NAME = "fused-comm-transposed-input"
    SEVERITY = "error"
    SUMMARY = "The first input is a transposed view."
    EXPLANATION = ("x1 must not be a transposed tensor: `.t()`, `.T`, `.mT`, `.transpose(...)`, `.permute(1, 0)`, "
                   "`torch.t(x)`, `torch.transpose(x, ...)`, or a name bound to one of these in the same scope. "
                   "A transposed second input is allowed.")
    SOURCE = _SRC
    INVALID = (
        Invalid(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x.t(), w, hcom, 8)\n", range=(3, 44, 3, 49),
                message="npu_mm_reduce_scatter_base: the first input is a transposed view, which the fused op does "
                        "not support; pass a contiguous tensor (x.t().contiguous()) or transpose x2 instead"),
        Invalid(_IMPORT + "def f(x, w, hcom):\n    xt = x.transpose(0, 1)\n"
                          "    return torch_npu.npu_all_gather_base_mm(xt, w, hcom, 8)\n", range=(5, 45, 5, 47),
                message="npu_all_gather_base_mm: the first input is a transposed view, which the fused op does not "
                        "support; pass a contiguous tensor (x.t().contiguous()) or transpose x2 instead"),
    )
    VALID = (_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w.t(), hcom, 8)\n",
             _IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x.t().contiguous(), w, hcom, 8)\n")
    HOW_TO_FIX = "Pass a contiguous x1 (`x.t().contiguous()`), or transpose the second input instead."

    uses = (MC2Analysis,)

    def visit_Call(self, node: cst.Call) -> None:
        a = self.ctx.analysis(MC2Analysis)
        f = a.fused.get(node)
        if f is None:
            return
        x1e, x1, _ = a.inputs(f)
        if isinstance(x1, Tensor) and x1.transposed:
            self.report(x1e, f"{f.name}: the first input is a transposed view, which the fused op does not "
                             "support; pass a contiguous tensor (x.t().contiguous()) or transpose x2 instead")


class FusedCommShape(LintRule):
    CODE = "NPU406"
    NAME = "fused-comm-shape"
    SEVERITY = "error"
    SUMMARY = "Statically known input shapes the fused op does not support."
    EXPLANATION = ("With shapes known statically (a tensor made in the same scope by `torch.randn/rand/zeros/ones/"
                   "empty/full` with resolvable dims, optionally followed by `.npu()`/`.to(...)`/`.cuda()`): "
                   "`npu_mm_reduce_scatter_base` and `npu_all_gather_base_mm` need 2-D inputs (m, k) and (k, n) "
                   "with equal k in [256, 65535), and for reduce-scatter m divisible by world_size; "
                   "`npu_mm_all_reduce_base` needs x1 2-D or 3-D, x2 2-D and equal k.")
    SOURCE = (_SRC + "; torch_npu raises RuntimeError for non-2-D inputs, unequal k and m % world_size: "
              "Ascend/op-plugin@517f2e7d op_plugin/ops/opapi/AllGatherBaseMatmulKernelNpuOpApi.cpp:59-72, "
              "MatmulReduceScatterBaseKernelNpuOpApi.cpp:38-54 (same folder)")
    INVALID = (
        Invalid(_IMPORT + "x = torch.randn(128, 128, dtype=torch.float16).npu()\n"
                          "w = torch.randn(128, 64, dtype=torch.float16).npu()\n"
                          "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n", range=(5, 7, 5, 58),
                message="npu_mm_reduce_scatter_base: k=128 is outside the supported range [256, 65535)"),
        Invalid(_IMPORT + "x = torch.randn(100, 512, dtype=torch.float16)\n"
                          "w = torch.randn(512, 64, dtype=torch.float16)\n"
                          "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n", range=(5, 7, 5, 58),
                message="npu_mm_reduce_scatter_base: m=100 is not divisible by world_size=8; torch_npu raises "
                        "RuntimeError"),
    )
    VALID = (_IMPORT + "x = torch.randn([128, 512], dtype=torch.float16).npu()\n"
                       "w = torch.randn([512, 64], dtype=torch.float16).npu()\n"
                       "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n",)
    HOW_TO_FIX = "Reshape the inputs to 2-D (m, k) x (k, n) with 256 <= k < 65535 and m a multiple of world_size."

    uses = (MC2Analysis,)

    def visit_Call(self, node: cst.Call) -> None:
        found = self.ctx.analysis(MC2Analysis).tensors(node)
        if found is not None:
            self._check(*found)

    def _check(self, f: FusedCall, x1: Tensor, x2: Tensor) -> None:
        q, call, name = f.q, f.call, f.name
        s1, s2 = x1.shape, x2.shape
        if s1 is None or s2 is None:
            return
        ok_dims1 = (2, 3) if q == AR else (2,)
        if len(s1) not in ok_dims1 or len(s2) != 2:
            self.report(call, f"{name}: inputs of shape {list(s1)} and {list(s2)} are not supported; x1 must be "
                              f"{' or '.join(f'{d}-D' for d in ok_dims1)} and x2 2-D")
            return
        k1, k2 = s1[-1], s2[0]
        if k1 != k2:
            self.report(call, f"{name}: k differs between x1 {list(s1)} and x2 {list(s2)} ({k1} != {k2}); "
                              "the matmul cannot run")
            return
        if q in (RS, AG) and not (K_MIN <= k1 < K_MAX):
            self.report(call, f"{name}: k={k1} is outside the supported range [{K_MIN}, {K_MAX})")
        if q == RS:
            ws = self.ctx.arg_value(f.bound, "world_size", f.site)
            if _is_int(ws) and ws > 0 and s1[0] % ws:
                self.report(call, f"{name}: m={s1[0]} is not divisible by world_size={ws}; torch_npu raises "
                                  "RuntimeError")


class FusedCommDtype(LintRule):
    CODE = "NPU407"
    NAME = "fused-comm-dtype"
    SEVERITY = "error"
    SUMMARY = "Statically known input dtypes the fused op does not support."
    EXPLANATION = ("`npu_mm_reduce_scatter_base` and `npu_all_gather_base_mm` take float16 or bfloat16 inputs of "
                   "one dtype; int8 only with `comm_mode=\"aiv\"` and `x2_scale` (quantisation). "
                   "`npu_mm_all_reduce_base` takes float16, bfloat16 or int8 (quantised) x1; its inputs may "
                   "differ only with quantisation arguments (`antiquant_scale`, `dequant_scale`). A tensor made "
                   "without `dtype=` has torch's default dtype, taken as float32 only where it is known: not when "
                   "any Python file of the run names `set_default_dtype`/`set_default_tensor_type`, nor in a file that "
                   "imports a module npulint does not read (not of the standard library, torch, torch_npu, torchair, "
                   "numpy, npu_bridge, tensorflow or a test framework, nor a file of the run or of its programs, "
                   "nor under `if TYPE_CHECKING:`: "
                   "`from mysetup import init; init()` may set it), nor inside a "
                   "`with` whose context manager may set it (vLLM's `set_default_torch_dtype`; torch's grad "
                   "modes, autocast, devices, streams and profilers leave it alone).")
    SOURCE = (_SRC + "; Ascend/op-plugin@517f2e7d op_plugin/ops/opapi/AllGatherBaseMatmulKernelNpuOpApi.cpp:105-108, "
              "MatmulReduceScatterBaseKernelNpuOpApi.cpp:79 (no quantisation with comm_mode ai_cpu); torchair's GE "
              "converters: Ascend/torchair@fced8842 python/torchair/_ge_concrete_graph/ge_converter/custom/"
              "all_gather_matmul.py:33-37, matmul_reduce_scatter.py:31-35 (same folder)")
    INVALID = (
        Invalid(_IMPORT + "x = torch.randn(128, 512).npu()\nw = torch.randn(512, 64).npu()\n"
                          "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n", range=(5, 7, 5, 58),
                message="npu_mm_reduce_scatter_base: dtype float32 is not supported; use float16 or bfloat16"),
        Invalid(_IMPORT + "x = torch.randn(128, 512, dtype=torch.float16)\n"
                          "w = torch.randn(512, 64, dtype=torch.bfloat16)\n"
                          "out = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8)\n", range=(5, 7, 5, 54),
                message="npu_all_gather_base_mm: x1 is float16 but x2 is bfloat16; both inputs must have one dtype"),
    )
    VALID = (_IMPORT + "x = torch.randn(128, 512).half().npu()\nw = torch.randn(512, 64).to(torch.float16).npu()\n"
                       "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n",)
    HOW_TO_FIX = "Cast both inputs to float16 or bfloat16 (`.half()`, `.to(torch.bfloat16)`)."

    uses = (MC2Analysis,)

    def visit_Call(self, node: cst.Call) -> None:
        found = self.ctx.analysis(MC2Analysis).tensors(node)
        if found is not None:
            self._check(*found)

    def _check(self, f: FusedCall, x1: Tensor, x2: Tensor) -> None:
        call, bound, name = f.call, f.bound, f.name
        d1, d2 = x1.dtype, x2.dtype
        if d1 is None or d2 is None:
            return
        if f.q == AR:
            quant = any(p in bound.args for p in ("antiquant_scale", "dequant_scale"))
            if d1.name not in HALF + ("int8",):
                self.report(call, f"{name}: x1 dtype {d1.name} is not supported (float16, bfloat16 or int8)")
            elif d1 != d2 and not quant and bound.complete:
                self.report(call, f"{name}: x1 is {d1.name} but x2 is {d2.name}; without quantisation "
                                  "arguments both inputs must have one dtype")
            return
        if d1 != d2:
            self.report(call, f"{name}: x1 is {d1.name} but x2 is {d2.name}; both inputs must have one dtype")
            return
        if d1.name in HALF:
            return
        if d1.name == "int8":
            mode = self.ctx.arg_value(bound, "comm_mode", f.site)
            if not is_constant(mode) or (mode == "aiv" and "x2_scale" in bound.args) or not bound.complete:
                return
            self.report(call, f"{name}: int8 inputs need comm_mode='aiv' and x2_scale (quantisation)")
            return
        self.report(call, f"{name}: dtype {d1.name} is not supported; use float16 or bfloat16")


class FusedCommMixedDomains(LintRule):
    CODE = "NPU408"
    NAME = "fused-comm-mixed-domains"
    SEVERITY = "error"
    SUMMARY = "Fused ops in one file use different communication domains (Atlas A2, comm_mode 'ai_cpu')."
    EXPLANATION = ("On Atlas A2 the fused communication-compute ops of one model (AllGatherMatmul, "
                   "MatmulReduceScatter, MatmulAllReduce) support only one communication domain. Reported when "
                   "two fused calls in one file, both without `comm_mode=\"aiv\"`, pass `hcom` values that are "
                   "different string literals, or names/attributes bound to `get_hccl_comm_name(...)` on "
                   "groups known to differ: distinct `torch.distributed.new_group(...)` calls, or one of them and "
                   "the default group. A group returned by another function, a value that arrives through a "
                   "function parameter, or an imported name is unknown and not compared. Not checked with "
                   "`product = \"atlas-a3\"`.")
    SOURCE = (_SRC + "; the Atlas A2 one-communication-domain constraint: torch_npu-npu_all_gather_base_mm.md:73, "
              "torch_npu-npu_mm_reduce_scatter_base.md:82, torch_npu-npu_mm_all_reduce_base.md:80")
    INVALID = (
        Invalid(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, 'tp_comm', 8)\n"
                          "out2, g = torch_npu.npu_all_gather_base_mm(x, w, 'ep_comm', 8)\n", range=(4, 11, 4, 63),
                message="npu_all_gather_base_mm uses communication domain 'ep_comm' but npu_mm_reduce_scatter_base "
                        "at line 3 uses 'tp_comm': on atlas-a2 the fused communication-compute ops of one model "
                        "support only one communication domain; use one process group, or comm_mode='aiv'"),
    )
    VALID = (_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, 'tp_comm', 8)\n"
                       "out2, g = torch_npu.npu_all_gather_base_mm(x, w, 'tp_comm', 8)\n",
             _IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, 'tp_comm', 8, comm_mode='aiv')\n"
                       "out2, g = torch_npu.npu_all_gather_base_mm(x, w, 'ep_comm', 8, comm_mode='aiv')\n")
    HOW_TO_FIX = "Use one process group for every fused op of the model, or comm_mode='aiv'."

    uses = (MC2Analysis,)

    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        # kind of domain ("lit", "group") -> the first call with a known domain of that kind, its
        # key and description: each later call is compared with it (calls are met in source order)
        self.first: Dict[str, Tuple[FusedCall, tuple, str]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if ctx.settings.product != "atlas-a2":
            return
        f = ctx.analysis(MC2Analysis).fused.get(node)
        found = self._domain(f.bound, f.site) if f is not None else None
        if found is None:
            return
        key, desc = found
        kind = key[0]
        if kind not in self.first:
            self.first[kind] = (f, key, desc)
            return
        ff, fkey, fdesc = self.first[kind]
        if key != fkey:
            line = ctx.line(ff.call)
            self.report(f.call, f"{f.name} uses communication domain {desc} but {ff.name} at line {line} uses "
                                f"{fdesc}: on atlas-a2 the fused communication-compute ops of one model support "
                                "only one communication domain; use one process group, or comm_mode='aiv'")

    def _domain(self, bound: Bound, site: Site) -> Optional[Tuple[tuple, str]]:
        """A comparable key for the call's hcom, with a description; None when unknown or
        when comm_mode is not certainly the default ('ai_cpu')."""
        ctx = self.ctx
        mode = ctx.arg_value(bound, "comm_mode", site)
        if not is_constant(mode) or mode == "aiv":
            return None
        expr = bound.args.get("hcom")
        if expr is None:
            return None
        v = ctx.value(expr, site)
        if isinstance(v, str):
            return ("lit", v), repr(v)
        value, vsite = ctx.sem.bound_expr(expr, site)
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute) or \
                value.func.attr.value != "get_hccl_comm_name":
            return None
        group = value.func.value
        if isinstance(group, cst.Call) and isinstance(group.func, cst.Attribute) and group.func.attr.value == "_get_backend":
            group = group.func.value
        key = self._group_key(group, vsite)
        if key is None:
            return None
        return ("group",) + key, f"get_hccl_comm_name on {ctx.code(group)}"

    def _group_key(self, group, site: Site) -> Optional[tuple]:
        """A key for a process-group expression when its identity is certain: the default
        group, or the group one ``new_group(...)`` call creates. Anything else (a getter's
        result, a parameter, a module attribute) is unknown: two spellings may name one group."""
        ctx = self.ctx
        group, site = ctx.sem.bound_expr(group, site)
        if isinstance(group, (cst.Name, cst.Attribute)):
            return ("world",) if ctx.resolve(group, site, _WORLD) else None
        if isinstance(group, cst.Call):
            if ctx.resolve(group.func, site, _NEW_GROUP):
                return ("new_group", id(group))
            if ctx.resolve(group.func, site, _WORLD):
                return ("world",)
        return None
