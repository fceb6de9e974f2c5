"""The same block with the mistakes npulint catches before the job is queued."""
import torch
import torchair as tng


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(1024, 1024)
        # NPU306 (both): one tag for every Block instance; the second Block() raises ValueError
        self.ready = tng.ops.npu_create_tagged_event(tag="block_ready")
        self.done = tng.ops.npu_create_tagged_event(tag="done")

    def forward(self, x, side):
        h = self.proj(x)
        tng.ops.npu_tagged_event_record(self.ready)
        with tng.scope.npu_stream_switch("side", 1):  # NPU304: stream_priority is reserved
            tng.ops.npu_tagged_event_wait(self.ready)
            s = torch.mm(side, side)
        # NPU301: 'done' is never recorded, so this wait synchronises nothing
        tng.ops.npu_tagged_event_wait(self.done)
        tng.ops.npu_record_tagged_stream(h, "sdie")  # NPU305: typo, a new idle stream
        return h + s


class Decoder(torch.nn.Module):
    def __init__(self, n_layers):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(n_layers)])

    def forward(self, x, side):
        for block in self.blocks:
            x = block(x, side)
        return x


config = tng.CompilerConfig()
config.mode = "reduce_overhead"  # NPU207: torchair raises ValueError (the mode is "reduce-overhead")
config.debug.aclgraph.clone_inputs = False  # NPU206: not a torchair option
backend = tng.get_npu_backend(compiler_config=config)
model = torch.compile(Decoder(4), backend=backend, mode="reduce-overhead")  # NPU208: mode= is ignored
