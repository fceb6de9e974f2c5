"""``npulint server``: the language server, started as a subprocess and spoken to in JSON-RPC
over stdio (``Content-Length`` framing) as an editor would; and its command-line edges
(pygls missing, a path literally named ``server``).

The tests here share one server (``server_of_module``), each in a folder of its own (``View``)."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import IMPORT, TWO_CODES, _write, npulint_exe, parse

CLEAN = IMPORT + "with npu_weight_prefetch_scope(1, 1024):\n    pass\n"


class Client:
    """An LSP client of ``npulint server`` started in *cwd* (with *env* over this environment),
    or of *proc*, a server already started: anything with what the client uses of
    ``subprocess.Popen`` (stdin, stdout, stderr, poll, wait, kill)."""

    def __init__(self, cwd: Path, env=None, proc=None):
        pytest.importorskip("pygls", reason="pygls is not installed (pip install -e '.[lsp]')")
        self.proc = proc or subprocess.Popen(npulint_exe() + ["server"], cwd=str(cwd), stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                             env=None if env is None else {**os.environ, **env})
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.received: list = []  # every message, in order (wait() consumes the queue only)
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
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            msg = json.loads(out.read(length))
            self.received.append(msg)
            self.messages.put(msg)

    def send(self, method: str, params=None, request: bool = False):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if request:
            self.next_id += 1
            msg["id"] = self.next_id
        self.send_many([msg])
        return msg.get("id")

    def send_many(self, messages) -> None:
        """Messages (dicts) in one write: the server reads them as one burst."""
        data = b""
        for msg in messages:
            body = json.dumps(dict(msg, jsonrpc="2.0")).encode("utf-8")
            data += b"Content-Length: %d\r\n\r\n" % len(body) + body
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait(self, pred, timeout: float = 60.0) -> dict:
        import time

        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no matching message from the server; stderr: "
                                     + (self.proc.stderr.read1(65536).decode(errors="replace")
                                        if self.proc.poll() is not None else "(still running)"))
            try:
                msg = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if pred(msg):
                return msg

    def request(self, method: str, params=None) -> dict:
        rid = self.send(method, params, request=True)
        return self.wait(lambda m: m.get("id") == rid and "method" not in m)

    def diagnostics(self, uri: str) -> dict:
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri)["params"]

    def close(self) -> int:
        try:
            self.request("shutdown")
            self.send("exit")
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                stream.close()


class View:
    """One test's share of a language server that the tests of a module share: a folder of its
    own under the server's folder (``client.root``; so its documents, their URIs and the
    configuration files that apply to them are its own: no other test opens or configures
    anything there),
    and the messages received since the test began (``received``). Everything else is the
    server's :class:`Client`.

    Only for tests that leave the server as they found it: they do not change its
    configuration (capabilities, trace, environment) nor shut it down, and every lint they
    start has been answered when they end."""

    def __init__(self, client: Client, root: Path):
        self.client, self.root, self.init = client, root, client.init
        self.first = len(client.received)
        while True:  # what earlier tests left unread is not this test's to wait for
            try:
                client.messages.get_nowait()
            except queue.Empty:
                break

    @property
    def received(self) -> list:
        return self.client.received[self.first:]

    def __getattr__(self, name):
        return getattr(self.client, name)


def view(client: Client, request, files) -> View:
    """A :class:`View` of *client* for the test of *request*, its folder holding *files*."""
    name = re.sub(r"[^\w.-]+", "-", request.node.name)
    if len(name) > 80:  # (pytest 8 puts a long parameter's whole text in the test's name)
        name = name[:60] + "-" + hashlib.blake2b(name.encode(), digest_size=8).hexdigest()
    root = client.root / name
    root.mkdir()  # one view a test
    _write(root, files)
    return View(client, root)


@pytest.fixture(scope="module")
def server_of_module(tmp_path_factory):
    root = tmp_path_factory.mktemp("server")
    c = Client(root)
    init = c.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}})
    caps = init["result"]["capabilities"]
    assert caps["textDocumentSync"]["openClose"] is True
    assert init["result"]["serverInfo"]["name"] == "npulint"
    c.send("initialized", {})
    c.init, c.root = init["result"], root
    yield c
    assert c.close() == 0


@pytest.fixture
def client(server_of_module, request):
    return view(server_of_module, request, {"sub/pyproject.toml": '[tool.npulint]\nignore = ["NPU103"]\n',
                                            "keep.txt": "x"})


def _open(c: Client, rel: str, text: str, version: int = 1) -> str:
    uri = (c.root / rel).as_uri()
    c.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                     "text": text}})
    return uri


def test_publishes_diagnostics_with_code_and_range(cli_run, client):
    uri = _open(client, "train.py", TWO_CODES)
    params = client.diagnostics(uri)
    assert params.get("version") == 1
    diags = sorted(params["diagnostics"], key=lambda d: d["range"]["start"]["line"])
    assert [(d["code"], d["range"]["start"], d["source"]) for d in diags] == [
        ("NPU101", {"line": 3, "character": 5}, "npulint"),
        ("NPU103", {"line": 5, "character": 5}, "npulint"),
    ]
    assert all(d["severity"] == 1 for d in diags)  # both rules are errors
    for d in diags:  # the range closes the reported node on the same line
        assert d["range"]["end"]["line"] == d["range"]["start"]["line"]
        assert d["range"]["end"]["character"] > d["range"]["start"]["character"]
    assert "buffer_pool_id" in diags[0]["message"]
    # the same as the command line on the saved file
    (client.root / "train.py").write_text(TWO_CODES, encoding="utf-8")
    r = cli_run(["-q", "train.py"], cwd=client.root)
    assert [(line - 1, col - 1, code) for _, line, col, code in parse(r.stdout)] == [
        (d["range"]["start"]["line"], d["range"]["start"]["character"], d["code"]) for d in diags]


def test_change_save_close_and_config_of_the_document_path(client):
    uri = _open(client, "sub/m.py", TWO_CODES)  # sub/pyproject.toml ignores NPU103
    assert [d["code"] for d in client.diagnostics(uri)["diagnostics"]] == ["NPU101"]
    client.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                           "contentChanges": [{"text": CLEAN}]})
    params = client.diagnostics(uri)
    assert params["diagnostics"] == [] and params.get("version") == 2
    client.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                           "contentChanges": [{"text": TWO_CODES}]})
    assert [d["code"] for d in client.diagnostics(uri)["diagnostics"]] == ["NPU101"]
    client.send("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert [d["code"] for d in client.diagnostics(uri)["diagnostics"]] == ["NPU101"]
    client.send("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri)["diagnostics"] == []


def test_syntax_error_and_non_ascii_columns(client):
    # npulint's columns count code points; LSP's count UTF-16 units ('𝔘' is two)
    src = IMPORT + "with open('𝔘é') as f, npu_weight_prefetch_scope(-1):\n    pass\n"
    uri = _open(client, "u.py", src)
    (d,) = client.diagnostics(uri)["diagnostics"]
    assert d["code"] == "NPU103"
    assert d["range"] == {"start": {"line": 1, "character": 23}, "end": {"line": 1, "character": 52}}
    uri = _open(client, "broken.py", IMPORT + "def f(:\n")  # parsed: it mentions an NPU API
    assert [d["code"] for d in client.diagnostics(uri)["diagnostics"]] == ["NPU001"]


def test_without_pygls_one_line_error_exit_2(cli_run, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pygls", None)  # in-process: `import pygls` raises ImportError
    r = cli_run(["server"], cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "pygls" in r.stderr and r.stderr.startswith("npulint: error:")


def test_server_bad_argument(cli_run, tmp_path):
    r = cli_run(["server", "--tcp"], cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("npulint: error:") and "--tcp" in r.stderr


def test_a_path_named_server_is_linted(cli_run, project):
    root = project({"server/mod.py": TWO_CODES})
    r = cli_run(["-q", "server"], cwd=root)
    assert r.returncode == 1
    assert [c for *_, c in parse(r.stdout)] == ["NPU101", "NPU103"]
    (root / "server" / "mod.py").unlink()
    (root / "server").rmdir()
    (root / "server").write_text(TWO_CODES, encoding="utf-8")  # a file named server, too
    r = cli_run(["-q", "server"], cwd=root)
    assert r.returncode == 1 and [c for *_, c in parse(r.stdout)] == ["NPU101", "NPU103"]
