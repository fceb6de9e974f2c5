"""NPU010: calls to catalogued APIs that do not bind to the API's signature."""

from __future__ import annotations

from typing import Dict, List

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

# torchair multi-stream APIs: Ascend/torchair@fced8842 (master) python/torchair/scope/__init__.py
# L5-27, python/torchair/ops/__init__.py L20-39; the legacy NpuStreamSwitch names from torchair's history.
SIGNATURE_TEXT.update({
    "torchair.scope.npu_stream_switch": "npu_stream_switch(stream_tag, stream_priority=0, enable_inner_parallel=True)",
    "torchair.ops.NpuStreamSwitch": "NpuStreamSwitch(stream_tag, stream_priority=0)",
    "torchair.NpuStreamSwitch": "NpuStreamSwitch(stream_tag, stream_priority=0)",
    "torchair.scope.npu_wait_tensor": "npu_wait_tensor(self, dependency)",
    "torchair.ops.npu_wait_tensor": "npu_wait_tensor(self, dependency)",
    "torchair.ops.npu_create_tagged_event": "npu_create_tagged_event(tag)",
    "torchair.ops.npu_tagged_event_record": "npu_tagged_event_record(event)",
    "torchair.ops.npu_tagged_event_wait": "npu_tagged_event_wait(event)",
    "torchair.ops.npu_record_tagged_stream": "npu_record_tagged_stream(input, tagged_stream)",
    # keyword-only in every branch: python/torchair/npu_fx_compiler.py L890 (master fced8842)
    "torchair.get_npu_backend": "get_npu_backend(*, compiler_config=None, custom_decompositions={})",
    "torchair.npu_fx_compiler.get_npu_backend": "get_npu_backend(*, compiler_config=None, custom_decompositions={})",
    "torchair.CompilerConfig": "CompilerConfig()",
    "torchair.configs.compiler_config.CompilerConfig": "CompilerConfig()",
})

# MindSpeed adaptive memory optimization: Ascend/MindSpeed@c721ce33 (2.0.0_core_r0.8.0)
# mindspeed/core/memory/adaptive_memory/adaptive_memory_function.py:112, positional only.
SIGNATURE_TEXT["mindspeed.core.memory.adaptive_memory.adaptive_memory_function.adapt_mem_func_wrapper"] = \
    "adapt_mem_func_wrapper(fc_class, *args)"

SIGNATURES: Dict[str, Signature] = {q: Signature.parse(t) for q, t in SIGNATURE_TEXT.items()}


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
        "`scope.npu_stream_switch(stream_tag, stream_priority=0, enable_inner_parallel=True)` (legacy "
        "`ops.NpuStreamSwitch(stream_tag, stream_priority=0)`), `scope.npu_wait_tensor(self, dependency)`, "
        "`ops.npu_create_tagged_event(tag)`, `ops.npu_tagged_event_record(event)`, "
        "`ops.npu_tagged_event_wait(event)`, `ops.npu_record_tagged_stream(input, tagged_stream)`; MindSpeed's "
        "`adapt_mem_func_wrapper(fc_class, *args)` (no keywords)."
    )
    SOURCE = ("hicann/tensorflow@82957b92 tf_adapter/python/npu_bridge/hccl/hccl_ops.py:31-245 and "
              "tf_adapter/python/npu_bridge/estimator/npu/npu_scope.py:120; Ascend/op-plugin@517f2e7d "
              "op_plugin/config/op_plugin_functions.yaml:5879,6538,6555; Ascend/torchair@fced8842 "
              "python/torchair/scope/__init__.py:5-27, python/torchair/ops/__init__.py:20-39, "
              "python/torchair/npu_fx_compiler.py:890; Ascend/MindSpeed@c721ce33 (2.0.0_core_r0.8.0) "
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
                range=(2, 7, 2, 65)),
        Invalid("import torch_npu\nout = torch_npu.npu_mm_all_reduce_base(x, w, hcom, world_size=8)\n",
                range=(2, 7, 2, 65)),
    )
    VALID = (
        "from npu_bridge.hccl import hccl_ops\nout = hccl_ops.allgather(w, 8)\n",
        "def allgather(x):\n    return x\nout = allgather(w)\n",
        "from npu_bridge.hccl import hccl_ops\nout = hccl_ops.allgather(*args)\n",
    )
    HOW_TO_FIX = "Pass the arguments the signature requires, by the names it defines."
    tokens = (("npu_weight_prefetch_scope",), ("hccl_ops",), ("npu_init",), ("npu_mm_reduce_scatter_base",),
              ("npu_all_gather_base_mm",), ("npu_mm_all_reduce_base",), ("npu_stream_switch",), ("tagged_event",),
              ("npu_record_tagged_stream",), ("npu_wait_tensor",), ("NpuStreamSwitch",), ("get_npu_backend",),
              ("CompilerConfig",), ("adapt_mem_func_wrapper",))

    METADATA_DEPENDENCIES = (ResolverProvider,)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.calls: List[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def finish(self) -> None:
        for call in self.calls:
            q = self.get_metadata(ResolverProvider, call).resolve(None, SIGNATURES)
            if q is None:
                continue
            bound = self.ctx.bind(SIGNATURES[q], call)
            if bound.error is None:
                continue
            name = short_name(q)
            self.report(call, f"{name}() {bound.error}: the call raises TypeError when it runs "
                              f"(signature: {SIGNATURE_TEXT[q]})")
