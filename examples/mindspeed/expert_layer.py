"""A model file the AMO launch in pretrain_llama.sh trains: NPU503 flags the custom autograd
Function called with `.apply` inside a module (`npulint --fix` rewrites it to
`adapt_mem_func_wrapper(PipeExpert, ...)`), NPU505 a wrapper call that raises TypeError."""

import torch
from mindspeed.core.memory.adaptive_memory.adaptive_memory_function import adapt_mem_func_wrapper


class PipeExpert(torch.autograd.Function):
    @staticmethod
    def forward(ctx, experts, x):
        return experts(x)

    @staticmethod
    def backward(ctx, grad):
        return None, grad


class MoELayer(torch.nn.Module):
    def __init__(self, experts):
        super().__init__()
        self.experts = experts

    def forward(self, x):
        return PipeExpert.apply(self.experts, x)  # NPU503

    def forward_wrapped(self, x):
        return adapt_mem_func_wrapper(PipeExpert.apply, self.experts, x)  # NPU505: pass the class
