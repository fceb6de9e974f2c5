"""NPU401-NPU408: torch_npu fused communication-compute ops (MC2):
``npu_mm_reduce_scatter_base``, ``npu_all_gather_base_mm``, ``npu_mm_all_reduce_base``."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from npulint.checker import Checker, FileContext
from npulint.model import Rule
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

_SRC = ("docs/004 (npu_mm_reduce_scatter_base); research/npu-api-constraints.md §C.2 (op-plugin docs "
        "docs/zh/custom_APIs/torch_npu/torch_npu-npu_{all_gather_base_mm,mm_reduce_scatter_base,"
        "mm_all_reduce_base}.md)")

_IMPORT = "import torch\nimport torch_npu\n"

FUSED_COMM_WORLD_SIZE = Rule(
    code="NPU401", name="fused-comm-world-size", severity="error",
    summary="A statically known world_size outside the product's supported set.",
    explanation=(
        "`npu_mm_reduce_scatter_base` and `npu_all_gather_base_mm` support world_size 2, 4 or 8 on Atlas A2 "
        "(`product = \"atlas-a2\"`, the default) and 2, 4, 8, 16 or 32 on Atlas A3 (`product = \"atlas-a3\"`). "
        "torch_npu itself raises RuntimeError for anything outside {2, 4, 8, 16, 32}; 16 and 32 on A2 fail in "
        "the communication library. Only statically known values are checked: a world_size that arrives "
        "through a parameter or `mp.spawn` is unknown."),
    source=_SRC + "; torch_npu AllGatherBaseMatmulKernelNpuOpApi.cpp L53-58, "
                  "MatmulReduceScatterBaseKernelNpuOpApi.cpp L33-37",
    invalid=(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 16)\n",
             _IMPORT + "WS = 2 * 3\nout = torch_npu.npu_all_gather_base_mm(x, w, hcom, WS)\n"),
    valid=(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n",
           _IMPORT + "def f(x, w, hcom, world_size):\n"
                     "    return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, world_size)\n"),
    fix="Use a supported world_size, or set `product = \"atlas-a3\"` in [tool.npulint] if the job runs on A3.")

FUSED_COMM_REDUCE_OP = Rule(
    code="NPU402", name="fused-comm-reduce-op", severity="error",
    summary="reduce_op other than 'sum'.",
    explanation="`npu_mm_reduce_scatter_base` and `npu_mm_all_reduce_base` support only `reduce_op='sum'`.",
    source=_SRC,
    invalid=(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, reduce_op='max')\n",),
    valid=(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, reduce_op='sum')\n",),
    fix="Drop reduce_op (the default is 'sum').")

FUSED_COMM_RESERVED_ARGUMENT = Rule(
    code="NPU403", name="fused-comm-reserved-argument", severity="error",
    summary="comm_turn other than 0, or gather_index other than 0.",
    explanation=("`comm_turn` (all three ops) and `gather_index` (`npu_all_gather_base_mm`) support only 0 in "
                 "the current version."),
    source=_SRC,
    invalid=(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, comm_turn=1)\n",
             _IMPORT + "out, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, gather_index=1)\n"),
    valid=(_IMPORT + "out, g = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8, gather_index=0, comm_turn=0)\n",),
    fix="Drop the argument (the default is 0).")

FUSED_COMM_BIAS = Rule(
    code="NPU404", name="fused-comm-bias", severity="error",
    summary="A bias that is not None on npu_mm_reduce_scatter_base or npu_all_gather_base_mm.",
    explanation=("Non-zero bias is not supported by `npu_mm_reduce_scatter_base` and `npu_all_gather_base_mm`. "
                 "Reported when the bias is statically known not to be None (a literal or a tensor made in "
                 "the same scope); `npu_mm_all_reduce_base` accepts a bias."),
    source=_SRC,
    invalid=(_IMPORT + "b = torch.randn(64, dtype=torch.float16)\n"
                       "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=b)\n",),
    valid=(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, bias=None)\n",
           _IMPORT + "b = torch.zeros(64, dtype=torch.float16)\n"
                     "out = torch_npu.npu_mm_all_reduce_base(x, w, hcom, bias=b)\n"),
    fix="Add the bias after the fused op instead.")

FUSED_COMM_TRANSPOSED_INPUT = Rule(
    code="NPU405", name="fused-comm-transposed-input", severity="error",
    summary="The first input is a transposed view.",
    explanation=("x1 must not be a transposed tensor: `.t()`, `.T`, `.mT`, `.transpose(...)`, `.permute(1, 0)`, "
                 "`torch.t(x)`, `torch.transpose(x, ...)`, or a name bound to one of these in the same scope. "
                 "A transposed second input is allowed."),
    source=_SRC,
    invalid=(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x.t(), w, hcom, 8)\n",
             _IMPORT + "def f(x, w, hcom):\n    xt = x.transpose(0, 1)\n"
                       "    return torch_npu.npu_all_gather_base_mm(xt, w, hcom, 8)\n"),
    valid=(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w.t(), hcom, 8)\n",
           _IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x.t().contiguous(), w, hcom, 8)\n"),
    fix="Pass a contiguous x1 (`x.t().contiguous()`), or transpose the second input instead.")

FUSED_COMM_SHAPE = Rule(
    code="NPU406", name="fused-comm-shape", severity="error",
    summary="Statically known input shapes the fused op does not support.",
    explanation=("With shapes known statically (a tensor made in the same scope by `torch.randn/rand/zeros/ones/"
                 "empty/full` with resolvable dims, optionally followed by `.npu()`/`.to(...)`/`.cuda()`): "
                 "`npu_mm_reduce_scatter_base` and `npu_all_gather_base_mm` need 2-D inputs (m, k) and (k, n) "
                 "with equal k in [256, 65535), and for reduce-scatter m divisible by world_size; "
                 "`npu_mm_all_reduce_base` needs x1 2-D or 3-D, x2 2-D and equal k."),
    source=_SRC + "; torch_npu checks 2-D and k equality and m % world_size (RuntimeError)",
    invalid=(_IMPORT + "x = torch.randn(128, 128, dtype=torch.float16).npu()\n"
                       "w = torch.randn(128, 64, dtype=torch.float16).npu()\n"
                       "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n",
             _IMPORT + "x = torch.randn(100, 512, dtype=torch.float16)\nw = torch.randn(512, 64, dtype=torch.float16)\n"
                       "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n"),
    valid=(_IMPORT + "x = torch.randn([128, 512], dtype=torch.float16).npu()\n"
                     "w = torch.randn([512, 64], dtype=torch.float16).npu()\n"
                     "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n",),
    fix="Reshape the inputs to 2-D (m, k) x (k, n) with 256 <= k < 65535 and m a multiple of world_size.")

FUSED_COMM_DTYPE = Rule(
    code="NPU407", name="fused-comm-dtype", severity="error",
    summary="Statically known input dtypes the fused op does not support.",
    explanation=("`npu_mm_reduce_scatter_base` and `npu_all_gather_base_mm` take float16 or bfloat16 inputs of "
                 "one dtype; int8 only with `comm_mode=\"aiv\"` and `x2_scale` (quantisation). "
                 "`npu_mm_all_reduce_base` takes float16, bfloat16 or int8 (quantised) x1; its inputs may "
                 "differ only with quantisation arguments (`antiquant_scale`, `dequant_scale`)."),
    source=_SRC + "; torchair GE converters all_gather_matmul.py L33-37, matmul_reduce_scatter.py L31-35",
    invalid=(_IMPORT + "x = torch.randn(128, 512).npu()\nw = torch.randn(512, 64).npu()\n"
                       "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n",
             _IMPORT + "x = torch.randn(128, 512, dtype=torch.float16)\nw = torch.randn(512, 64, dtype=torch.bfloat16)\n"
                       "out = torch_npu.npu_all_gather_base_mm(x, w, hcom, 8)\n"),
    valid=(_IMPORT + "x = torch.randn(128, 512).half().npu()\nw = torch.randn(512, 64).to(torch.float16).npu()\n"
                     "out = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)\n",),
    fix="Cast both inputs to float16 or bfloat16 (`.half()`, `.to(torch.bfloat16)`).")

FUSED_COMM_MIXED_DOMAINS = Rule(
    code="NPU408", name="fused-comm-mixed-domains", severity="error",
    summary="Fused ops in one file use different communication domains (Atlas A2, comm_mode 'ai_cpu').",
    explanation=("On Atlas A2 the fused communication-compute ops of one model (AllGatherMatmul, "
                 "MatmulReduceScatter, MatmulAllReduce) support only one communication domain. Reported when "
                 "two fused calls in one file, both without `comm_mode=\"aiv\"`, pass `hcom` values that are "
                 "different string literals, or names/attributes bound to `get_hccl_comm_name(...)` on "
                 "groups known to differ: distinct `torch.distributed.new_group(...)` calls, or one of them and "
                 "the default group. A group returned by another function, a value that arrives through a "
                 "function parameter, or an imported name is unknown and not compared. Not checked with "
                 "`product = \"atlas-a3\"`."),
    source=_SRC + "; §C.3",
    invalid=(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, 'tp_comm', 8)\n"
                       "out2, g = torch_npu.npu_all_gather_base_mm(x, w, 'ep_comm', 8)\n",),
    valid=(_IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, 'tp_comm', 8)\n"
                     "out2, g = torch_npu.npu_all_gather_base_mm(x, w, 'tp_comm', 8)\n",
           _IMPORT + "out = torch_npu.npu_mm_reduce_scatter_base(x, w, 'tp_comm', 8, comm_mode='aiv')\n"
                     "out2, g = torch_npu.npu_all_gather_base_mm(x, w, 'ep_comm', 8, comm_mode='aiv')\n"),
    fix="Use one process group for every fused op of the model, or comm_mode='aiv'.")

RULES = (FUSED_COMM_WORLD_SIZE, FUSED_COMM_REDUCE_OP, FUSED_COMM_RESERVED_ARGUMENT, FUSED_COMM_BIAS,
         FUSED_COMM_TRANSPOSED_INPUT, FUSED_COMM_SHAPE, FUSED_COMM_DTYPE, FUSED_COMM_MIXED_DOMAINS)

_NEW_GROUP = {"torch.distributed.new_group", "torch.distributed.distributed_c10d.new_group"}
_WORLD = {"torch.distributed.distributed_c10d._get_default_group", "torch.distributed.group.WORLD",
          "torch.distributed.distributed_c10d.GroupMember.WORLD", "torch.distributed.GroupMember.WORLD",
          "torch.distributed.distributed_c10d.group.WORLD"}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class MC2Checker(Checker):
    rules = RULES
    tokens = (("npu_mm_reduce_scatter_base",), ("npu_all_gather_base_mm",), ("npu_mm_all_reduce_base",))

    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        self.calls: List[Tuple[cst.Call, Site]] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.ctx.site()))

    def finish(self) -> None:
        ctx = self.ctx
        domains: List[Tuple[cst.Call, str, tuple, str]] = []
        for call, site in self.calls:
            q = ctx.resolve(call.func, site, FUSED)
            if q is None:
                continue
            bound = ctx.bind(SIGNATURES[q], call)
            if bound.error is not None:
                continue  # NPU010 says why; its arguments are not trusted
            self._check_scalars(q, call, bound, site)
            self._check_tensors(q, call, bound, site)
            key = self._domain(q, bound, site)
            if key is not None:
                domains.append((call, q, key[0], key[1]))
        if ctx.wants("NPU408") and ctx.settings.product == "atlas-a2":
            self._check_domains(domains)

    # -- scalar arguments ------------------------------------------------------------
    def _check_scalars(self, q: str, call: cst.Call, bound: Bound, site: Site) -> None:
        ctx = self.ctx
        name = SHORT[q]
        if q in (RS, AG):
            ws = ctx.arg_value(bound, "world_size", site)
            product = ctx.settings.product
            allowed = WORLD_SIZES[product]
            if _is_int(ws) and ws not in allowed:
                node = bound.args.get("world_size", call)
                if ws not in TORCH_NPU_WORLD_SIZES:
                    msg = (f"world_size={ws} is not supported: torch_npu raises RuntimeError for anything "
                           f"outside (2, 4, 8, 16, 32); {product} supports {', '.join(map(str, allowed))}")
                else:
                    msg = (f"world_size={ws} is not supported on {product} ({', '.join(map(str, allowed))}); "
                           "atlas-a3 allows 16 and 32; set product in [tool.npulint]")
                ctx.report("NPU401", node, f"{name}: {msg}")
        if q in (RS, AR):
            op = ctx.arg_value(bound, "reduce_op", site)
            if is_constant(op) and op != "sum":
                ctx.report("NPU402", bound.args.get("reduce_op", call),
                           f"{name}: reduce_op={op!r} is not supported, only 'sum'; drop reduce_op")
        for param in ("comm_turn", "gather_index"):
            if SIGNATURES[q].param(param) is None:
                continue
            v = ctx.arg_value(bound, param, site)
            if is_constant(v) and v != 0:
                ctx.report("NPU403", bound.args.get(param, call),
                           f"{name}: {param}={v!r} is reserved and must be 0 in this version; drop it")
        if q in (RS, AG) and "bias" in bound.args:
            b = ctx.value(bound.args["bias"], site)
            if isinstance(b, Tensor) or (is_constant(b) and b is not None):
                ctx.report("NPU404", bound.args["bias"],
                           f"{name}: a bias is not supported (non-zero bias is rejected); pass bias=None and add "
                           "the bias after the op")

    # -- tensors -----------------------------------------------------------------------
    def _check_tensors(self, q: str, call: cst.Call, bound: Bound, site: Site) -> None:
        ctx = self.ctx
        name = SHORT[q]
        first = "x1" if q == AR else "input"
        x1e, x2e = bound.args.get(first), bound.args.get("x2")
        x1 = ctx.value(x1e, site) if x1e is not None else UNKNOWN
        x2 = ctx.value(x2e, site) if x2e is not None else UNKNOWN
        if isinstance(x1, Tensor) and x1.transposed:
            ctx.report("NPU405", x1e, f"{name}: the first input is a transposed view, which the fused op does not "
                                      "support; pass a contiguous tensor (x.t().contiguous()) or transpose x2 instead")
        if not (isinstance(x1, Tensor) and isinstance(x2, Tensor)):
            return
        self._check_shapes(q, call, bound, site, x1, x2)
        self._check_dtypes(q, call, bound, site, x1, x2)

    def _check_shapes(self, q, call, bound, site, x1: Tensor, x2: Tensor) -> None:
        ctx = self.ctx
        name = SHORT[q]
        s1, s2 = x1.shape, x2.shape
        if s1 is None or s2 is None:
            return
        ok_dims1 = (2, 3) if q == AR else (2,)
        if len(s1) not in ok_dims1 or len(s2) != 2:
            ctx.report("NPU406", call, f"{name}: inputs of shape {list(s1)} and {list(s2)} are not supported; x1 must be "
                                       f"{' or '.join(f'{d}-D' for d in ok_dims1)} and x2 2-D")
            return
        k1, k2 = s1[-1], s2[0]
        if k1 != k2:
            ctx.report("NPU406", call, f"{name}: k differs between x1 {list(s1)} and x2 {list(s2)} ({k1} != {k2}); "
                                       "the matmul cannot run")
            return
        if q in (RS, AG) and not (K_MIN <= k1 < K_MAX):
            ctx.report("NPU406", call, f"{name}: k={k1} is outside the supported range [{K_MIN}, {K_MAX})")
        if q == RS:
            ws = ctx.arg_value(bound, "world_size", site)
            if _is_int(ws) and ws > 0 and s1[0] % ws:
                ctx.report("NPU406", call, f"{name}: m={s1[0]} is not divisible by world_size={ws}; torch_npu raises "
                                           "RuntimeError")

    def _check_dtypes(self, q, call, bound, site, x1: Tensor, x2: Tensor) -> None:
        ctx = self.ctx
        name = SHORT[q]
        d1, d2 = x1.dtype, x2.dtype
        if d1 is None or d2 is None:
            return
        if q == AR:
            quant = any(p in bound.args for p in ("antiquant_scale", "dequant_scale"))
            if d1.name not in HALF + ("int8",):
                ctx.report("NPU407", call, f"{name}: x1 dtype {d1.name} is not supported (float16, bfloat16 or int8)")
            elif d1 != d2 and not quant and bound.complete:
                ctx.report("NPU407", call, f"{name}: x1 is {d1.name} but x2 is {d2.name}; without quantisation "
                                           "arguments both inputs must have one dtype")
            return
        if d1 != d2:
            ctx.report("NPU407", call, f"{name}: x1 is {d1.name} but x2 is {d2.name}; both inputs must have one dtype")
            return
        if d1.name in HALF:
            return
        if d1.name == "int8":
            mode = ctx.arg_value(bound, "comm_mode", site)
            if not is_constant(mode) or (mode == "aiv" and "x2_scale" in bound.args) or not bound.complete:
                return
            ctx.report("NPU407", call, f"{name}: int8 inputs need comm_mode='aiv' and x2_scale (quantisation)")
            return
        ctx.report("NPU407", call, f"{name}: dtype {d1.name} is not supported; use float16 or bfloat16")

    # -- communication domains --------------------------------------------------------
    def _domain(self, q: str, bound: Bound, site: Site) -> Optional[Tuple[tuple, str]]:
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
        value, vsite = self.ctx.sem.bound_expr(expr, site)
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

    def _check_domains(self, domains) -> None:
        ctx = self.ctx
        first = {}
        for call, q, key, desc in domains:
            kind = key[0]
            if kind not in first:
                first[kind] = (call, q, key, desc)
                continue
            fcall, fq, fkey, fdesc = first[kind]
            if key != fkey:
                line = ctx.line(fcall)
                ctx.report("NPU408", call,
                           f"{SHORT[q]} uses communication domain {desc} but {SHORT[fq]} at line {line} uses {fdesc}: "
                           "on atlas-a2 the fused communication-compute ops of one model support only one "
                           "communication domain; use one process group, or comm_mode='aiv'")
