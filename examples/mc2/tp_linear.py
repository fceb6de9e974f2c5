"""Tensor-parallel linear layers on the torch_npu fused matmul + communication ops (MC2)."""
import torch
import torch.distributed as dist
import torch_npu

WORLD_SIZE = 16
M, K, N = 4096, 8192, 1024


def build(rank):
    tp_group = dist.new_group(list(range(8)))
    ep_group = dist.new_group(list(range(8, 16)))
    tp_hcom = tp_group._get_backend(torch.device("npu")).get_hccl_comm_name(rank)
    ep_hcom = ep_group._get_backend(torch.device("npu")).get_hccl_comm_name(rank)

    x = torch.randn(M, K, dtype=torch.bfloat16).npu()
    w = torch.randn(K, N, dtype=torch.bfloat16).npu()
    # NPU401: world_size 16 needs Atlas A3 (set product = "atlas-a3"); A2 supports 2, 4, 8
    out = torch_npu.npu_mm_reduce_scatter_base(x, w, tp_hcom, WORLD_SIZE)
    # NPU405: the first input is a transposed view
    out_t = torch_npu.npu_mm_reduce_scatter_base(w.t(), x.t(), tp_hcom, 8)
    # NPU408: a second communication domain for the fused ops of one model (Atlas A2, ai_cpu)
    gathered, _ = torch_npu.npu_all_gather_base_mm(x, w, ep_hcom, 8)
    return out, out_t, gathered


def fused_all_reduce(x, w, hcom):
    # clean: world_size is not a parameter of npu_mm_all_reduce_base; values arrive at run time
    return torch_npu.npu_mm_all_reduce_base(x, w, hcom, reduce_op="sum")
