"""``npulint server``: the language server, spoken to over stdio with LSP's JSON-RPC framing."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import npulint_exe
from test_cli import CLEAN, TWO_CODES

pytest.importorskip("pygls", reason="the [lsp] extra is not installed")


class Client:
    def __init__(self, cwd: Path):
        env = dict(os.environ)
        self.proc = subprocess.Popen(npulint_exe() + ["server"], cwd=str(cwd), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.decode("ascii").strip()
                if not line:
                    break
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
            body = out.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def send(self, msg: dict) -> None:
        data = json.dumps(dict(msg, jsonrpc="2.0")).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def request(self, method: str, params) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)

    def notify(self, method: str, params) -> None:
        self.send({"method": method, "params": params})

    def wait(self, pred, timeout: float = 60) -> dict:
        import time

        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "no answer from the server"
            msg = self.messages.get(timeout=left)
            if pred(msg):
                return msg

    def diagnostics(self, uri: str) -> list:
        msg = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)
        return msg["params"]["diagnostics"]


def test_server_publishes_diagnostics_over_stdio(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.npulint]\nignore = ["NPU103"]\n', encoding="utf-8")
    path = tmp_path / "pkg" / "m.py"
    path.parent.mkdir()
    uri = path.as_uri()
    c = Client(tmp_path)
    try:
        init = c.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}})
        assert init["result"]["serverInfo"]["name"] == "npulint"
        assert init["result"]["capabilities"]["textDocumentSync"]["openClose"] is True
        c.notify("initialized", {})
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": TWO_CODES}})
        diags = c.diagnostics(uri)
        assert [(d["code"], d["range"]["start"], d["severity"], d["source"]) for d in diags] == [
            ("NPU101", {"line": 3, "character": 5}, 1, "npulint")]  # NPU103 ignored by the config
        assert diags[0]["range"]["end"] == {"line": 3, "character": 5 + len("npu_weight_prefetch_scope(0, 1024)")}
        assert diags[0]["codeDescription"]["href"].endswith("/NPU101.md")
        assert "prefetch pool 0" in diags[0]["message"]

        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                            "contentChanges": [{"text": CLEAN}]})
        assert c.diagnostics(uri) == []
        c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        assert c.diagnostics(uri) == []

        assert c.request("shutdown", None)["result"] is None
        c.notify("exit", None)
        assert c.proc.wait(timeout=30) == 0
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait()


def test_server_rejects_arguments(tmp_path):
    r = subprocess.run(npulint_exe() + ["server", "--bogus"], cwd=str(tmp_path), capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stderr.startswith("npulint: error:") and r.stderr.count("\n") == 1


def test_server_without_pygls_is_a_one_line_usage_error(monkeypatch, capsys):
    import sys

    from npulint import lsp

    monkeypatch.setitem(sys.modules, "pygls", None)  # import pygls -> ImportError
    assert lsp.serve([]) == 2
    err = capsys.readouterr().err
    assert err == "npulint: error: the language server needs pygls: pip install 'npulint[lsp]'\n"
