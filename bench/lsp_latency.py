#!/usr/bin/env python3
"""Latency of ``npulint server``: how long an editor waits for diagnostics.

    python bench/lsp_latency.py                      # 2,000 lines, 10 opens, 30 changes
    python bench/lsp_latency.py --lines 5000 --changes 50 --debounce-ms 0

Starts the server over stdio (``python -m npulint.server``, this Python) in a temporary
folder, as an editor would (JSON-RPC with Content-Length framing), and opens a generated
Python file of about ``--lines`` lines that uses the NPU APIs the rules read (torchair
configs, torch.compile with a torchair backend, prefetch scopes, stream switches and tagged
events, fused communication ops, a launch command with MindSpeed flags), with some findings in
it. Measured, on the client's clock:

* open: ``didOpen`` -> its ``publishDiagnostics`` (each open under a new name and with a
  comment of its own, then closed);
* change: ``didChange`` (one number edited, the whole text sent as full sync does) -> the
  ``publishDiagnostics`` of that version, one change at a time; this includes the debounce
  pause (``--debounce-ms``, default the server's own).

The server's own lint time per run (from its ``$/logTrace``) is reported beside them. Prints
p50/p95/max in milliseconds. Standard library only (the server needs pygls).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HEADER = """\
import subprocess
import torch
import torch_npu
import torchair
import torchair as tng
from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope

MB = 1024 * 1024
"""

BLOCK = """\


# --- block {i}: 模型第{i}段 (graph-mode training step) ---
def build_backend_{i}(model, batches):
    config = torchair.CompilerConfig()
    config.mode = "reduce-overhead"
    config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()
    config.debug.aclgraph.disable_mempool_reuse_in_same_fx = {flag}
    backend = torchair.get_npu_backend(compiler_config=config)
    opt_model = torch.compile(model, backend=backend, dynamic=False)
    outs = []
    for x in batches:
        out = opt_model(x)
        outs.append(out.clone())
    return outs


class Block{i}(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ev = tng.ops.npu_create_tagged_event(tag="ev_{i}")

    def forward(self, x, w, hcom):
        with tng.scope.npu_stream_switch("side_{i}", 0):
            y = torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, 8)
            tng.ops.npu_tagged_event_record(self.ev)
        tng.ops.npu_tagged_event_wait(self.ev)
        with npu_weight_prefetch_scope({pool}, {size} * MB):
            z = torch_npu.npu_all_gather_base_mm(y, w, hcom, 8)
        return z


def launch_{i}():
    cmd = ["torchrun", "--nproc_per_node", "8", "pretrain_gpt.py",
           "--tensor-model-parallel-size", "2", "--micro-batch-size", "{i}"]
    subprocess.run(cmd, check=True)
"""


def generate(lines: int) -> str:
    parts = [HEADER]
    i = 0
    while sum(p.count("\n") for p in parts) < lines:
        # every seventh block sets the overridden option (NPU202) and a pool size of its own (NPU101)
        parts.append(BLOCK.format(i=i, flag="False" if i % 7 == 3 else "True", pool=i % 4,
                                  size=128 if i % 11 != 5 else 64))
        i += 1
    return "".join(parts)


class Server:
    def __init__(self, cwd: Path, env: dict):
        self.proc = subprocess.Popen([sys.executable, "-m", "npulint.server"], cwd=str(cwd),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env={**os.environ, **env})
        self.q: "queue.Queue[tuple]" = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.q.put((time.perf_counter(), json.loads(out.read(length))))

    def send(self, method: str, params=None, request: bool = False) -> float:
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            msg["id"] = self.next_id
        body = json.dumps(msg).encode("utf-8")
        sent = time.perf_counter()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return sent

    def wait(self, pred, timeout: float = 120.0, traces=None):
        deadline = time.monotonic() + timeout
        while True:
            at, msg = self.q.get(timeout=max(0.0, deadline - time.monotonic()))
            if traces is not None and msg.get("method") == "$/logTrace":
                m = re.search(r"in ([0-9.]+) ms", msg["params"]["message"])
                if m:
                    traces.append(float(m.group(1)))
            if pred(msg):
                return at, msg

    def request(self, method: str, params=None):
        self.send(method, params, request=True)
        rid = self.next_id
        return self.wait(lambda m: m.get("id") == rid and "method" not in m)[1]


def pct(values, p: float) -> float:
    s = sorted(values)
    k = max(0, min(len(s) - 1, round(p / 100 * (len(s) - 1))))
    return s[k]


def row(name: str, values) -> str:
    return (f"{name:<22} n={len(values):<3} p50 {pct(values, 50):7.1f} ms   p95 {pct(values, 95):7.1f} ms   "
            f"max {max(values):7.1f} ms   mean {statistics.mean(values):7.1f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--opens", type=int, default=10)
    ap.add_argument("--changes", type=int, default=30)
    ap.add_argument("--debounce-ms", type=int, default=None, help="the server's debounce pause (default: its own)")
    args = ap.parse_args()
    text = generate(args.lines)
    env = {} if args.debounce_ms is None else {"NPULINT_LSP_DEBOUNCE_MS": str(args.debounce_ms)}
    with tempfile.TemporaryDirectory(prefix="npulint-lsp-bench-") as tmp:
        root = Path(tmp)
        srv = Server(root, env)
        srv.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {},
                                   "trace": "verbose"})
        srv.send("initialized", {})
        # one open first: imports and rule loading, not counted
        warm = (root / "warmup.py").as_uri()
        srv.send("textDocument/didOpen", {"textDocument": {"uri": warm, "languageId": "python", "version": 1,
                                                           "text": text}})
        srv.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == warm)
        srv.send("textDocument/didClose", {"textDocument": {"uri": warm}})
        opens, open_lints, n_diags = [], [], 0
        for k in range(args.opens):
            uri = (root / f"train_{k}.py").as_uri()
            # a text of its own each time: nothing in the server may answer from an earlier lint
            unique = text.replace("MB = 1024 * 1024", f"MB = 1024 * 1024  # open {k}", 1)
            sent = srv.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                      "version": 1, "text": unique}})
            at, msg = srv.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                               and m["params"]["uri"] == uri, traces=open_lints)
            opens.append((at - sent) * 1000)
            n_diags = len(msg["params"]["diagnostics"])
            srv.send("textDocument/didClose", {"textDocument": {"uri": uri}})
        uri = (root / "train.py").as_uri()
        srv.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": text}})
        srv.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)
        changes, change_lints = [], []
        current = text
        for v in range(2, args.changes + 2):
            current = current.replace(f'"--micro-batch-size", "{v - 2}"', f'"--micro-batch-size", "{v + 1000}"', 1)
            sent = srv.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                                       "contentChanges": [{"text": current}]})
            at, _ = srv.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                             and m["params"]["uri"] == uri and m["params"].get("version") == v, traces=change_lints)
            changes.append((at - sent) * 1000)
        srv.request("shutdown")
        srv.send("exit")
        srv.proc.wait(timeout=30)
    print(f"file: {text.count(chr(10))} lines, {len(text.encode('utf-8'))} bytes, {n_diags} diagnostics; "
          f"debounce: {args.debounce_ms if args.debounce_ms is not None else 'server default'} ms")
    print(row("didOpen -> publish", opens))
    print(row("  server lint time", open_lints))
    print(row("didChange -> publish", changes))
    print(row("  server lint time", change_lints))
    return 0


if __name__ == "__main__":
    sys.exit(main())
