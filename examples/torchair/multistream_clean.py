"""A decoder block that overlaps a side computation on a second stream, compiled in
reduce-overhead (aclgraph) mode. npulint finds nothing here: every event that is waited on
is recorded first, each tag includes the layer index, and tagged events run in aclgraph mode."""
import torch
import torchair as tng
from torchair.configs.compiler_config import CompilerConfig


class Block(torch.nn.Module):
    def __init__(self, index):
        super().__init__()
        self.proj = torch.nn.Linear(1024, 1024)
        self.ready = tng.ops.npu_create_tagged_event(tag=f"block{index}_ready")

    def forward(self, x, side):
        h = self.proj(x)
        tng.ops.npu_tagged_event_record(self.ready)
        with tng.scope.npu_stream_switch("side"):
            tng.ops.npu_tagged_event_wait(self.ready)
            s = torch.mm(side, side)
        tng.ops.npu_record_tagged_stream(h, "side")
        return h + s


class Decoder(torch.nn.Module):
    def __init__(self, n_layers):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(i) for i in range(n_layers)])

    def forward(self, x, side):
        for block in self.blocks:
            x = block(x, side)
        return x


config = CompilerConfig()
config.mode = "reduce-overhead"
config.debug.aclgraph.disable_mempool_reuse_in_same_fx = True
backend = tng.get_npu_backend(compiler_config=config)
model = torch.compile(Decoder(4), backend=backend, dynamic=False)
