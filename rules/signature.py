"""NPU010: calls to catalogued APIs that do not bind to the API's signature."""

from __future__ import annotations

from typing import Dict, Tuple

import libcst as cst

from npulint.lintrule import Invalid, LintRule
from npulint.metadata import ResolverProvider
from npulint.signatures import Signature

# The catalogue: canonical qualified name -> signature. Sources: hicann/tensorflow@82957b92
# tf_adapter/python/npu_bridge/hccl/hccl_ops.py:31-245, estimator/npu/npu_scope.py:120.
_HCCL = "npu_bridge.hccl.hccl_ops"
SIGNATURE_TEXT: Dict[str, str] = {
    "npu_bridge.estimator.npu.npu_scope.npu_weight_prefetch_scope":
        "npu_weight_prefetch_scope(buffer_pool_id=0, buffer_pool_size=536870912)",
    f"{_HCCL}.allreduce": "allreduce(tensor, reduction, fusion=1, fusion_id=-1, group='hccl_world_group')",
    f"{_HCCL}.allgather": "allgather(tensor, rank_size, group='hccl_world_group', fusion=0, fusion_id=-1)",
    f"{_HCCL}.broadcast": "broadcast(tensor, root_rank, fusion=2, fusion_id=0, group='hccl_world_group')",
    f"{_HCCL}.reduce": "reduce(tensor, reduction, root_rank, fusion=0, fusion_id=-1, group='hccl_world_group')",
    f"{_HCCL}.reduce_scatter":
        "reduce_scatter(tensor, reduction, rank_size, group='hccl_world_group', fusion=0, fusion_id=-1)",
    f"{_HCCL}.send": "send(tensor, sr_tag, dest_rank, group='hccl_world_group')",
    f"{_HCCL}.receive": "receive(shape, data_type, sr_tag, src_rank, group='hccl_world_group')",
    f"{_HCCL}.all_to_all_v": "all_to_all_v(send_data, send_counts, send_displacements, recv_counts, "
                             "recv_displacements, group='hccl_world_group')",
    f"{_HCCL}.all_to_all_v_c": "all_to_all_v_c(send_data, send_count_matrix, rank, fusion=0, fusion_id=-1, "
                               "group='hccl_world_group')",
}

# torch_npu fused communication-compute ops (MC2): op-plugin
# op_plugin/config/op_plugin_functions.yaml L5879, L6538, L6555 (master 517f2e7d); everything
# after world_size (after hcom for all-reduce, which has no world_size) is keyword-only. The yaml
# names the first parameter ``self``; torch_npu exposes it as ``input`` (Ascend/pytorch
# torchnpugen/custom_functions.py L235-236; docs/004's prototype), so ``input=`` binds.
SIGNATURE_TEXT.update({
    "torch_npu.npu_mm_reduce_scatter_base":
        "npu_mm_reduce_scatter_base(input, x2, hcom, world_size, *, reduce_op='sum', bias=None, x1_scale=None, "
        "x2_scale=None, comm_turn=0, output_dtype=None, comm_mode=None)",
    "torch_npu.npu_all_gather_base_mm":
        "npu_all_gather_base_mm(input, x2, hcom, world_size, *, bias=None, x1_scale=None, x2_scale=None, "
        "gather_index=0, gather_output=True, comm_turn=0, output_dtype=None, comm_mode=None)",
    "torch_npu.npu_mm_all_reduce_base":
        "npu_mm_all_reduce_base(x1, x2, hcom, *, reduce_op='sum', bias=None, antiquant_scale=None, "
        "antiquant_offset=None, x3=None, dequant_scale=None, pertoken_scale=None, comm_quant_scale_1=None, "
        "comm_quant_scale_2=None, antiquant_group_size=0, comm_turn=0, group_sizes=None, y_dtype=None, "
        "x1_dtype=None, x2_dtype=None, dequant_scale_dtype=None, pertoken_scale_dtype=None, comm_quant_mode=0, "
        "comm_mode=None)",
})

# the legacy torchair NpuStreamSwitch / ops.npu_wait_tensor names from torchair's history (no
# release npulint models defines them)
SIGNATURE_TEXT.update({
    "torchair.ops.NpuStreamSwitch": "NpuStreamSwitch(stream_tag, stream_priority=0)",
    "torchair.NpuStreamSwitch": "NpuStreamSwitch(stream_tag, stream_priority=0)",
    "torchair.ops.npu_wait_tensor": "npu_wait_tensor(self, dependency)",
})


def _torchair_signatures() -> Dict[str, Dict[str, Tuple[Signature, str, str]]]:
    """The torchair APIs by release: qualified name -> release -> (signature, its text, where it
    is defined), from rules/torchair_releases.json (tools/gen_torchair_releases.py reads each
    release's definition: npu_stream_switch gains enable_inner_parallel on master)."""
    from npulint.releases import torchair_data

    return {q: {r: (Signature.parse(e["text"]), e["text"], e["source"]) for r, e in by_release.items()}
            for q, by_release in torchair_data()["signatures"].items()}


TORCHAIR = _torchair_signatures()

# MindSpeed adaptive memory optimization: Ascend/MindSpeed@c721ce33 (2.0.0_core_r0.8.0)
# mindspeed/core/memory/adaptive_memory/adaptive_memory_function.py:112, positional only.
SIGNATURE_TEXT["mindspeed.core.memory.adaptive_memory.adaptive_memory_function.adapt_mem_func_wrapper"] = \
    "adapt_mem_func_wrapper(fc_class, *args)"

SIGNATURES: Dict[str, Signature] = {q: Signature.parse(t) for q, t in SIGNATURE_TEXT.items()}



def _newest(by_release: Dict[str, Tuple[Signature, str, str]]) -> Signature:
    from npulint.releases import known

    return by_release[max(by_release, key=known("torchair").index)][0]


# the rules that read a torchair call's arguments by name (NPU304, ...) bind them to the newest release's
SIGNATURES.update({q: _newest(by_release) for q, by_release in TORCHAIR.items()})


_ALLGATHER_SIG = "(signature: allgather(tensor, rank_size, group='hccl_world_group', fusion=0, fusion_id=-1))"


def short_name(qualname: str) -> str:
    parts = qualname.split(".")
    return ".".join(parts[-2:]) if parts[-2] in ("hccl_ops", "ops", "scope") else parts[-1]


class ApiSignatureMismatch(LintRule):
    CODE = "NPU010"
    NAME = "api-signature-mismatch"
    SEVERITY = "error"
    SUMMARY = "A call to a catalogued NPU API does not bind to its signature."
    EXPLANATION = (
        "The call is missing a required argument, passes an unknown keyword, passes too many "
        "positional arguments, or passes a keyword-only parameter positionally. Python raises "
        "TypeError when the line runs, often after the job has been scheduled. Calls are identified "
        "by their fully qualified name after import resolution, so a local function with the same "
        "name is not checked. Calls that spread `*args`/`**kwargs` so that binding cannot be decided "
        "are not reported.\n\nCatalogued so far: `npu_weight_prefetch_scope` and the "
        "`npu_bridge.hccl.hccl_ops` collectives (`allgather(tensor, rank_size, group=..., fusion=..., "
        "fusion_id=...)`, `allreduce`, `broadcast`, `reduce`, `reduce_scatter`, `send`, `receive`, "
        "`all_to_all_v`, `all_to_all_v_c`), and the torch_npu fused communication-compute ops "
        "`npu_mm_reduce_scatter_base(input, x2, hcom, world_size, *, reduce_op='sum', bias=None, ...)`, "
        "`npu_all_gather_base_mm(input, x2, hcom, world_size, *, bias=None, ...)` and "
        "`npu_mm_all_reduce_base(x1, x2, hcom, *, reduce_op='sum', bias=None, ...)`, which has no `world_size`: "
        "every parameter after `world_size` (after `hcom` for all-reduce) is keyword-only; the torchair APIs "
        "`get_npu_backend(*, compiler_config=None, custom_decompositions={})` (keyword-only), `CompilerConfig()`, "
        "`scope.npu_stream_switch(stream_tag, stream_priority=0)` (master adds `enable_inner_parallel=True`; "
        "legacy `ops.NpuStreamSwitch(stream_tag, stream_priority=0)`), `scope.npu_wait_tensor(self, dependency)`, "
        "`ops.npu_create_tagged_event(tag)`, `ops.npu_tagged_event_record(event)`, "
        "`ops.npu_tagged_event_wait(event)`, `ops.npu_record_tagged_stream(input, tagged_stream)`; MindSpeed's "
        "`adapt_mem_func_wrapper(fc_class, *args)` (no keywords).\n\n"
        "torchair's signatures are each release's own (`rules/torchair_releases.json`, generated from every "
        "release npulint models): a call is reported only when every release the project may run (configured "
        "in `[tool.npulint.releases]`, inferred from a pin or the tree itself, else every one; of those, the "
        "releases that define the API) rejects it, and the message names those releases and cites the "
        "signature at the newest. A torchair release npulint has no data for (a pin to 6.0.rc1) makes them "
        "unknown: nothing is said."
    )
    SOURCE = ("hicann/tensorflow@82957b92 tf_adapter/python/npu_bridge/hccl/hccl_ops.py:31-245 and "
              "tf_adapter/python/npu_bridge/estimator/npu/npu_scope.py:120; Ascend/op-plugin@517f2e7d "
              "op_plugin/config/op_plugin_functions.yaml:5879,6538,6555; torchair: each release's definition "
              "(rules/torchair_releases.json `signatures`, e.g. Ascend/torchair@fced8842 "
              "python/torchair/scope/__init__.py:22, python/torchair/npu_fx_compiler.py:890); Ascend/MindSpeed@c721ce33 (2.0.0_core_r0.8.0) "
              "mindspeed/core/memory/adaptive_memory/adaptive_memory_function.py:112")
    INVALID = (
        Invalid("from npu_bridge.hccl import hccl_ops\nout = hccl_ops.allgather(w)\n", range=(2, 7, 2, 28),
                message="hccl_ops.allgather() missing required argument 'rank_size': the call raises TypeError "
                        "when it runs " + _ALLGATHER_SIG),
        Invalid("from npu_bridge.npu_init import *\nout = hccl_ops.allgather(w, 8, group_name='g')\n",
                range=(2, 7, 2, 47),
                message="hccl_ops.allgather() got an unexpected keyword argument 'group_name': the call raises "
                        "TypeError when it runs " + _ALLGATHER_SIG),
        Invalid("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as p\n"
                "with p(0, 1024, 5):\n    pass\n", range=(2, 6, 2, 19),
                message="npu_weight_prefetch_scope() takes at most 2 positional arguments: the call raises TypeError "
                        "when it runs (signature: npu_weight_prefetch_scope(buffer_pool_id=0, "
                        "buffer_pool_size=536870912))"),
        Invalid("import torch_npu\nout = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8, 'sum')\n",
                range=(2, 7, 2, 65),
                message="npu_mm_reduce_scatter_base() takes 4 positional arguments; reduce_op, bias, x1_scale, "
                        "x2_scale, ... are keyword-only: the call raises TypeError when it runs (signature: "
                        + SIGNATURE_TEXT["torch_npu.npu_mm_reduce_scatter_base"] + ")"),
        Invalid("import torch_npu\nout = torch_npu.npu_mm_all_reduce_base(x, w, hcom, world_size=8)\n",
                range=(2, 7, 2, 65),
                message="npu_mm_all_reduce_base() got an unexpected keyword argument 'world_size': the call raises "
                        "TypeError when it runs (signature: " + SIGNATURE_TEXT["torch_npu.npu_mm_all_reduce_base"] + ")"),
        Invalid("import torchair\nbackend = torchair.get_npu_backend(aot_config=aot)\n", range=(2, 11, 2, 51),
                message="get_npu_backend() got an unexpected keyword argument 'aot_config': the call raises "
                        "TypeError when it runs (signature: get_npu_backend(*, compiler_config=None, "
                        "custom_decompositions={}); torchair 7.1.0 to master: Ascend/torchair@fced8842 "
                        "python/torchair/npu_fx_compiler.py:890)"),
    )
    VALID = (
        "from npu_bridge.hccl import hccl_ops\nout = hccl_ops.allgather(w, 8)\n",
        "def allgather(x):\n    return x\nout = allgather(w)\n",
        "from npu_bridge.hccl import hccl_ops\nout = hccl_ops.allgather(*args)\n",
        # master's npu_stream_switch takes enable_inner_parallel; 7.1.0 to 26.0.0 do not: not every release rejects it
        "from torchair.scope import npu_stream_switch\nwith npu_stream_switch('1', 0, enable_inner_parallel=False):\n"
        "    pass\n",
    )
    HOW_TO_FIX = "Pass the arguments the signature requires, by the names it defines."
    tokens = (("npu_weight_prefetch_scope",), ("hccl_ops",), ("npu_init",), ("npu_mm_reduce_scatter_base",),
              ("npu_all_gather_base_mm",), ("npu_mm_all_reduce_base",), ("npu_stream_switch",), ("tagged_event",),
              ("npu_record_tagged_stream",), ("npu_wait_tensor",), ("NpuStreamSwitch",), ("get_npu_backend",),
              ("CompilerConfig",), ("adapt_mem_func_wrapper",))

    METADATA_DEPENDENCIES = (ResolverProvider,)

    def visit_Call(self, node: cst.Call) -> None:
        q = self.get_metadata(ResolverProvider, node).resolve(None, SIGNATURES)
        if q is None:
            return
        name = short_name(q)
        if q in TORCHAIR:
            message = self._torchair(q, node)
            if message is not None:
                self.report(node, f"{name}() {message}")
            return
        bound = self.ctx.bind(SIGNATURES[q], node)
        if bound.error is None:
            return
        self.report(node, f"{name}() {bound.error}: the call raises TypeError when it runs "
                          f"(signature: {SIGNATURE_TEXT[q]})")

    def _torchair(self, q: str, call: cst.Call):
        """RULES.md "Releases": the call is reported when every torchair release it may run on
        (of those the project runs, that define the API) rejects it; the message names the
        releases that reject it and cites the signature at the newest release it may run on."""
        from npulint.releases import describe, effective, holds_on

        by_release = TORCHAIR[q]
        errors = {r: self.ctx.bind(sig, call).error for r, (sig, _, _) in by_release.items()}
        holds = {r: by_release[r][2] for r, e in errors.items() if e is not None}
        releases = effective(self.ctx.settings)
        got = holds_on("torchair", releases.torchair(), (frozenset(by_release),), holds,
                       releases.fallback("torchair"))
        if got is None:
            return None
        _, where = got
        rel = next(r for r, s in holds.items() if s == where)
        # the releases whose definition gives this very error: the message quotes it for them alone
        same = [r for r in holds if errors[r] == errors[rel] and by_release[r][1] == by_release[rel][1]]
        others = [r for r in holds if r not in same]
        also = f"; {describe('torchair@' + r for r in others)} rejects it too (another signature)" if others else ""
        return (f"{errors[rel]}: the call raises TypeError when it runs (signature: {by_release[rel][1]}; "
                f"{describe('torchair@' + r for r in same)}: {where}{also})")
