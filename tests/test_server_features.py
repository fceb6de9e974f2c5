"""``npulint server``'s features beyond publishing diagnostics, through a real LSP client
(``Client`` of test_server.py) over a pair of pipes: position encodings, code actions (a
finding's fix, ``# noqa``, fix all), hover, ``codeDescription``, a broken configuration,
debouncing, pull diagnostics, bad requests; and ``npulint --help`` naming the server.

The servers run on threads of this process (``ServerThread``: the server ``npulint server``
builds, serving the pipes); test_server.py speaks to ``npulint server`` as a process of its own
(the console script, standard input and output, the exit status). The tests that need only a
server's defaults (no client capabilities, no trace, no environment of their own) share one
server (``shared``: each in a folder of its own, see ``test_server.View``); the others start
their own (``server``)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import threading
import traceback

import pytest

from conftest import IMPORT, TWO_CODES
from test_server import Client, View, view

CJK = "中文😀"  # two BMP characters (one UTF-16 unit, three UTF-8 bytes each) and an astral one

# NPU101 on line 5 (index 4), its related location on line 3 (index 2); both after CJK text
WIDE = (IMPORT
        + 'x = "中文"\n'
        + f'with open("{CJK}") as f, npu_weight_prefetch_scope():\n'
        + "    pass\n"
        + f'with open("{CJK}") as f, npu_weight_prefetch_scope(0, 1024):\n'
        + "    pass\n")
PREFIX = f'with open("{CJK}") as f, '  # the text before the finding on its line

AMO = """\
import subprocess
import torch

class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

class M(torch.nn.Module):
    def forward(self, x):
        return F.apply(x)

subprocess.run(['torchrun', 'pretrain_gpt.py', '--adaptive-memory-optimization'])
"""

POOL = """\
import torch
import torchair
config = torchair.CompilerConfig()
config.mode = "reduce-overhead"
config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()
config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False
backend = torchair.get_npu_backend(compiler_config=config)
"""

# AMO with a recompute flag: a conflict on the core_r0.8.0-era MindSpeed releases (README "Releases")
AMO_RELEASES = {"pyproject.toml": '[tool.npulint.releases]\nmindspeed = "2.1.0_core_r0.8.0"\n'}
LAUNCH = """\
#!/bin/bash
if true; then
    torchrun --nproc_per_node 8 pretrain_gpt.py \\
        --adaptive-memory-optimization \\
        --recompute-granularity full
fi
"""

UNITS = {"utf-8": lambda s: len(s.encode("utf-8")), "utf-16": lambda s: len(s.encode("utf-16-le")) // 2,
         "utf-32": len}


class ServerThread:
    """``npulint server`` on a thread of this process: the language server
    ``npulint.server.build_server()`` makes, as ``npulint server`` makes it (reading
    NPULINT_LSP_DEBOUNCE_MS then), serving a pair of pipes with pygls's ``start_io``; with what
    :class:`Client` uses of ``subprocess.Popen``.

    What a server process would have of its own, a server thread shares with the test: the
    working folder and NPULINT_DOCS_URL, which the server reads when it lints. The fixtures set
    both, for the test, to what ``npulint server`` started for it would have (the test's folder;
    the test's environment)."""

    def __init__(self):
        pytest.importorskip("pygls", reason="pygls is not installed (pip install -e '.[lsp]')")
        from npulint.server import build_server

        self.ls = build_server()
        server_in, client_out = os.pipe()
        client_in, server_out = os.pipe()
        self.stdin, self.stdout = os.fdopen(client_out, "wb"), os.fdopen(client_in, "rb")
        self.stderr = io.BytesIO()  # read by Client.wait when the server has stopped
        self.returncode = None
        self.thread = threading.Thread(target=self._serve, args=(os.fdopen(server_in, "rb"),
                                                                 os.fdopen(server_out, "wb")),
                                       name="npulint server", daemon=True)
        self.thread.start()

    def _serve(self, stdin, stdout) -> None:
        status = 1
        try:
            self.ls.start_io(stdin, stdout)  # returns after `exit` (start_io takes its SystemExit)
            # the status `npulint server` exits with: pygls's exit handler exits 0 after a
            # shutdown request, 1 without one
            status = 0 if self.ls.protocol._shutdown else 1
        except BaseException:
            self.stderr = io.BytesIO(traceback.format_exc().encode())
        finally:
            for stream in (stdin, stdout):
                stream.close()
            self.returncode = status

    def poll(self):
        return None if self.thread.is_alive() else self.returncode

    def wait(self, timeout=None):
        self.stdin.close()  # as an editor does after `exit`: the server's reader sees the end
        self.thread.join(30 if timeout is None else timeout)
        if self.thread.is_alive():
            raise subprocess.TimeoutExpired("npulint server (a thread)", timeout)
        return self.returncode

    def kill(self):
        self.stdin.close()


def start(root, capabilities=None, trace=None) -> Client:
    c = Client(root, proc=ServerThread())
    params = {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities or {}}
    if trace:
        params["trace"] = trace
    c.init = c.request("initialize", params)["result"]
    c.send("initialized", {})
    c.root = root
    return c


@pytest.fixture
def server(project, monkeypatch):
    """``server(files=None, capabilities=None, env=None, trace=None)``: a server of the test's
    own, working in the test's folder (which holds *files*), with *env* set."""
    clients = []

    def _start(files=None, env=None, **kw) -> Client:
        root = project(dict({"keep.txt": "x"}, **(files or {})))
        monkeypatch.chdir(root)
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        c = start(root, **kw)
        clients.append(c)
        return c

    yield _start
    for c in clients:
        assert c.close() == 0


@pytest.fixture(scope="module")
def default_server(tmp_path_factory):
    """One server with the defaults: no client capabilities, no trace, NPULINT_LSP_DEBOUNCE_MS
    not set when it was built (and NPULINT_DOCS_URL not set while a test uses it: ``shared``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("NPULINT_LSP_DEBOUNCE_MS", raising=False)
        c = start(tmp_path_factory.mktemp("server"))
    yield c
    assert c.close() == 0


@pytest.fixture
def shared(default_server, request, monkeypatch):
    """``shared(files=None)``: this test's :class:`View` of ``default_server``, its folder holding
    *files* (as ``server(files)`` would) and the server working in it."""

    def _view(files=None) -> View:
        v = view(default_server, request, dict({"keep.txt": "x"}, **(files or {})))
        monkeypatch.chdir(v.root)
        monkeypatch.delenv("NPULINT_DOCS_URL", raising=False)
        return v

    return _view


def open_doc(c: Client, rel: str, text: str, version: int = 1, language: str = "python") -> str:
    uri = (c.root / rel).as_uri()
    c.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": version,
                                                     "text": text}})
    return uri


def change(uri: str, version: int, text: str) -> dict:
    return {"method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}}


def apply(text: str, edits, encoding: str = "utf-16") -> str:
    """Apply LSP TextEdits to *text* as an editor would (positions in *encoding*)."""
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(pos):
        if pos["line"] >= len(lines):
            return len(text)
        line = lines[pos["line"]].rstrip("\r\n")
        units = 0
        for i, ch in enumerate(line):
            if units >= pos["character"]:
                return starts[pos["line"]] + i
            units += UNITS[encoding](ch)
        return starts[pos["line"]] + len(line)

    spans = sorted(((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits),
                   reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    return text


def edits_of(action: dict, uri: str) -> list:
    edit = action["edit"]
    if "documentChanges" in edit:
        (dc,) = edit["documentChanges"]
        assert dc["textDocument"]["uri"] == uri
        return dc["edits"]
    return edit["changes"][uri]


def actions(c: Client, uri: str, rng: dict, only=None) -> list:
    context = {"diagnostics": []}
    if only is not None:
        context["only"] = only
    return c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": rng,
                                                 "context": context})["result"] or []


def cli_fix(cli_run, c: Client, rel: str, text: str) -> str:
    r = cli_run(["--fix", "-q", "--stdin-filename", rel, "-"], cwd=c.root, stdin=text)
    return r.stdout


# --- 1. position encodings ------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_positions_in_the_negotiated_encoding(server, encoding):
    c = server(capabilities={"general": {"positionEncodings": [encoding]}})
    assert c.init["capabilities"]["positionEncoding"] == encoding
    uri = open_doc(c, "wide.py", WIDE)
    (d,) = c.diagnostics(uri)["diagnostics"]
    units = UNITS[encoding]
    line4 = WIDE.splitlines()[4]
    start = units(PREFIX)
    end = units(PREFIX + "npu_weight_prefetch_scope(0, 1024)")
    assert d["code"] == "NPU101"
    assert d["range"] == {"start": {"line": 4, "character": start}, "end": {"line": 4, "character": end}}
    (rel,) = d["relatedInformation"]
    assert rel["location"]["range"]["start"] == {"line": 2, "character": start}
    # a code action's edit (the noqa appended at the line's end) in the same units
    acts = actions(c, uri, d["range"], only=["quickfix"])
    (noqa,) = [a for a in acts if "noqa" in a["title"] or "Disable" in a["title"]]
    (e,) = edits_of(noqa, uri)
    assert e["range"]["start"] == {"line": 4, "character": units(line4)} and e["newText"] == "  # noqa: NPU101"
    assert apply(WIDE, [e], encoding).splitlines()[4] == line4 + "  # noqa: NPU101"
    # hover: a position given in the client's units, one unit inside the finding
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                         "position": {"line": 4, "character": start + 1}})["result"]
    assert h["range"] == d["range"] and "NPU101" in h["contents"]["value"]
    # just before the finding: no hover
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                         "position": {"line": 4, "character": start - 1}})
    assert h["result"] is None


# --- 2. code actions ------------------------------------------------------------------------

def test_quick_fix_applies_the_finding_fix(server, cli_run):
    c = server(capabilities={"workspace": {"workspaceEdit": {"documentChanges": True}}})
    (c.root / "pool.py").write_text(POOL, encoding="utf-8")
    uri = open_doc(c, "pool.py", POOL)
    (d,) = c.diagnostics(uri)["diagnostics"]
    assert d["code"] == "NPU202"
    acts = actions(c, uri, d["range"])
    fixes = [a for a in acts if a["title"].startswith("Fix NPU202")]
    assert len(fixes) == 1 and fixes[0]["kind"] == "quickfix" and fixes[0]["isPreferred"] is True
    assert fixes[0]["diagnostics"][0]["code"] == "NPU202"
    assert fixes[0]["edit"]["documentChanges"][0]["textDocument"] == {"uri": uri, "version": 1}
    fixed = apply(POOL, edits_of(fixes[0], uri))
    assert fixed == cli_fix(cli_run, c, "pool.py", POOL) and fixed != POOL
    assert not any(a["kind"] == "source.fixAll.npulint" for a in acts)  # not asked for
    assert (c.root / "pool.py").read_text(encoding="utf-8") == POOL  # the server writes nothing
    # away from the finding: no action
    assert actions(c, uri, {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}) == []


def test_noqa_action_python_appends_or_merges(shared):
    c = shared()
    src = IMPORT + "with npu_weight_prefetch_scope(-1):  # keep\n    pass\n" \
        + "with npu_weight_prefetch_scope(-2):  # noqa: E501\n    pass\n"
    uri = open_doc(c, "n.py", src)
    diags = sorted(c.diagnostics(uri)["diagnostics"], key=lambda d: d["range"]["start"]["line"])
    assert [d["code"] for d in diags] == ["NPU103", "NPU103"]
    edits = []
    for d in diags:
        (a,) = [a for a in actions(c, uri, d["range"]) if a["title"] == "Disable NPU103 for this line"]
        assert a["kind"] == "quickfix"
        edits += edits_of(a, uri)
    new = apply(src, edits)
    assert new.splitlines()[1] == "with npu_weight_prefetch_scope(-1):  # keep  # noqa: NPU103"
    assert new.splitlines()[3] == "with npu_weight_prefetch_scope(-2):  # noqa: E501, NPU103"
    c.send_many([change(uri, 2, new)])
    params = c.diagnostics(uri)
    assert params["version"] == 2 and params["diagnostics"] == []


@pytest.mark.parametrize("rel, language", [("launch.sh", "shellscript"), ("launch", "shellscript")])
def test_noqa_action_shell_goes_above_the_command(shared, rel, language):
    c = shared(AMO_RELEASES)
    uri = open_doc(c, rel, LAUNCH, language=language)  # "launch": a bash shebang, no suffix
    (d,) = c.diagnostics(uri)["diagnostics"]
    assert d["code"] == "NPU501" and d["range"]["start"]["line"] == 4  # the continued command's 3rd line
    (a,) = [a for a in actions(c, uri, d["range"]) if "noqa" in a["title"] or "Disable" in a["title"]]
    assert a["title"] == "Disable NPU501 for this command"
    new = apply(LAUNCH, edits_of(a, uri))
    lines = new.splitlines()
    assert lines[2] == "    # noqa: NPU501" and lines[3].startswith("    torchrun ")
    c.send_many([change(uri, 2, new)])
    assert c.diagnostics(uri)["diagnostics"] == []


def test_noqa_action_shell_merges_into_the_comment_line_above(shared):
    c = shared(AMO_RELEASES)
    src = LAUNCH.replace("    torchrun", "    # noqa: NPU999\n    torchrun")
    uri = open_doc(c, "l.sh", src, language="shellscript")
    (d,) = c.diagnostics(uri)["diagnostics"]
    (a,) = [a for a in actions(c, uri, d["range"]) if a["title"].startswith("Disable")]
    new = apply(src, edits_of(a, uri))
    assert new.splitlines()[2] == "    # noqa: NPU999, NPU501"


def test_fix_all_is_the_cli_fix_on_the_buffer(shared, cli_run):
    c = shared()
    text = AMO + "\n" + POOL.replace("import torch\n", "", 1)
    on_disk = "# the saved file, not the buffer\n"
    (c.root / "all.py").write_text(on_disk, encoding="utf-8")
    uri = open_doc(c, "all.py", text)
    assert sorted(d["code"] for d in c.diagnostics(uri)["diagnostics"]) == ["NPU202", "NPU503"]
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    for only in (["source.fixAll.npulint"], ["source.fixAll"], ["source"]):
        (a,) = actions(c, uri, whole, only=only)
        assert a["kind"] == "source.fixAll.npulint"
        fixed = apply(text, edits_of(a, uri))
        assert fixed == cli_fix(cli_run, c, "all.py", text)
        # safe fixes only (ruff's fix all): NPU503's rewrite is unsafe and stays a quick fix
        assert "adapt_mem_func_wrapper(F, x)" not in fixed and "disable_mempool_reuse_in_same_fx" not in fixed
    assert actions(c, uri, whole, only=["quickfix"]) == []
    assert (c.root / "all.py").read_text(encoding="utf-8") == on_disk  # never written
    clean = open_doc(c, "clean.py", IMPORT)
    c.diagnostics(clean)
    assert actions(c, clean, whole, only=["source.fixAll"]) == []


def test_an_unsafe_fix_is_a_quick_fix_not_preferred_and_left_out_of_fix_all(shared):
    c = shared()
    uri = open_doc(c, "amo.py", AMO)
    (d,) = c.diagnostics(uri)["diagnostics"]
    assert d["code"] == "NPU503"
    (a,) = [a for a in actions(c, uri, d["range"]) if a["title"].startswith("Fix NPU503")]
    assert a["title"].endswith("(unsafe)") and not a.get("isPreferred")
    assert "adapt_mem_func_wrapper(F, x)" in apply(AMO, edits_of(a, uri))
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    assert actions(c, uri, whole, only=["source.fixAll.npulint"]) == []  # nothing safe to apply


def test_extend_safe_fixes_makes_npu503_preferred_and_part_of_fix_all(shared):
    c = shared({"pyproject.toml": '[tool.npulint]\nextend-safe-fixes = ["NPU503"]\n'})
    uri = open_doc(c, "amo.py", AMO)
    (d,) = c.diagnostics(uri)["diagnostics"]
    (a,) = [a for a in actions(c, uri, d["range"]) if a["title"].startswith("Fix NPU503")]
    assert a["isPreferred"] is True and not a["title"].endswith("(unsafe)")
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    (fa,) = actions(c, uri, whole, only=["source.fixAll.npulint"])
    assert "adapt_mem_func_wrapper(F, x)" in apply(AMO, edits_of(fa, uri))


# --- 3. hover and codeDescription -----------------------------------------------------------

def test_hover_shows_the_rule_page(shared):
    from npulint import registry

    rule = {r.code: r for r in registry.load()[0]}["NPU103"]
    c = shared()
    src = IMPORT + "with npu_weight_prefetch_scope(-1):\n    pass\nx = 1  # noqa: E501, NPU101\n"
    uri = open_doc(c, "h.py", src)
    (d,) = c.diagnostics(uri)["diagnostics"]
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": d["range"]["start"]})["result"]
    page = h["contents"]["value"]
    assert h["contents"]["kind"] == "markdown" and h["range"] == d["range"]
    for part in (f"# {rule.code} {rule.name}", rule.summary, rule.explanation[:60], "## How to fix", rule.fix[:40]):
        assert part in page
    col = src.splitlines()[3].index("NPU101")
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                         "position": {"line": 3, "character": col + 3}})["result"]
    assert h["contents"]["value"].startswith("# NPU101 prefetch-pool-size-mismatch")
    assert h["range"] == {"start": {"line": 3, "character": col}, "end": {"line": 3, "character": col + 6}}
    for character in (src.splitlines()[3].index("E501") + 1, 0):  # another tool's code; no code
        assert c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                "position": {"line": 3, "character": character}})["result"] is None


def test_code_description_only_where_configured(server, shared):
    c = shared()  # NPULINT_DOCS_URL not set
    uri = open_doc(c, "t.py", TWO_CODES)
    assert all("codeDescription" not in d for d in c.diagnostics(uri)["diagnostics"])
    c = server(env={"NPULINT_DOCS_URL": "https://lint.example.com/rules/"})
    uri = open_doc(c, "t.py", TWO_CODES)
    diags = c.diagnostics(uri)["diagnostics"]
    assert sorted(d["codeDescription"]["href"] for d in diags) == [
        "https://lint.example.com/rules/NPU101.md", "https://lint.example.com/rules/NPU103.md"]
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": diags[0]["range"]["start"]})
    assert f"(https://lint.example.com/rules/{diags[0]['code']}.md)" in h["result"]["contents"]["value"]


# --- 4. a broken configuration --------------------------------------------------------------

def test_broken_configuration_is_shown(shared):
    c = shared({"pkg/pyproject.toml": '[tool.npulint]\nselect = ["NPU9"]\n'})
    config = str(c.root / "pkg" / "pyproject.toml")
    uri = open_doc(c, "pkg/m.py", f"# {CJK}\n" + TWO_CODES)
    shown = c.wait(lambda m: m.get("method") == "window/showMessage")["params"]
    assert shown["type"] == 1 and config in shown["message"] and "NPU9" in shown["message"]
    (d,) = c.diagnostics(uri)["diagnostics"]
    assert d["severity"] == 1 and d["range"]["start"] == {"line": 0, "character": 0}
    assert d["range"]["end"] == {"line": 0, "character": len(f"# {CJK}".encode("utf-16-le")) // 2}
    assert config in d["message"] and "unknown rule code or prefix 'NPU9'" in d["message"]
    # the next change shows no second message box; fixing the file and saving lints again
    c.send_many([change(uri, 2, TWO_CODES)])
    assert len(c.diagnostics(uri)["diagnostics"]) == 1
    (c.root / "pkg" / "pyproject.toml").write_text('[tool.npulint]\nignore = ["NPU103"]\n', encoding="utf-8")
    c.send("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert [d["code"] for d in c.diagnostics(uri)["diagnostics"]] == ["NPU101"]
    assert [m for m in c.received if m.get("method") == "window/showMessage"] == [{"jsonrpc": "2.0",
                                                                                   "method": "window/showMessage",
                                                                                   "params": shown}]


def test_broken_toml_is_shown(shared):
    c = shared({"npulint.toml": "select = [\n"})
    uri = open_doc(c, "m.py", TWO_CODES)
    shown = c.wait(lambda m: m.get("method") == "window/showMessage")["params"]
    assert shown["type"] == 1 and "invalid TOML" in shown["message"]
    (d,) = c.diagnostics(uri)["diagnostics"]
    assert str(c.root / "npulint.toml") in d["message"] and d["range"]["start"]["line"] == 0


# --- 5. debounce ----------------------------------------------------------------------------

def _lints(c: Client, uri: str) -> list:
    """The versions linted, from the server's $/logTrace (one a lint run)."""
    out = []
    for m in c.received:
        if m.get("method") == "$/logTrace":
            hit = re.match(r"linted (\S+) version (\S+):", m["params"]["message"])
            if hit and hit.group(1) == uri:
                out.append(hit.group(2))
    return out


def test_ten_quick_changes_are_linted_once(server):
    # a wide window: the test does not depend on how fast this machine is
    c = server(env={"NPULINT_LSP_DEBOUNCE_MS": "1000"}, trace="verbose")
    uri = open_doc(c, "d.py", CLEAN_TEXT)
    assert c.diagnostics(uri)["diagnostics"] == []
    texts = [CLEAN_TEXT + f"x = {i}\n" for i in range(9)] + [TWO_CODES]
    c.send_many([change(uri, v, text) for v, text in enumerate(texts, 2)])
    params = c.diagnostics(uri)
    assert params["version"] == 11 and sorted(d["code"] for d in params["diagnostics"]) == ["NPU101", "NPU103"]
    assert _lints(c, uri) == ["1", "11"]


def test_a_document_closed_meanwhile_publishes_nothing_more(server):
    c = server(trace="verbose")
    a = (c.root / "a.py").as_uri()
    b = (c.root / "b.py").as_uri()
    opening = {"method": "textDocument/didOpen",
               "params": {"textDocument": {"uri": a, "languageId": "python", "version": 1, "text": TWO_CODES}}}
    c.send_many([opening, change(a, 2, TWO_CODES + "\n"),
                 {"method": "textDocument/didClose", "params": {"textDocument": {"uri": a}}},
                 dict(opening, params={"textDocument": dict(opening["params"]["textDocument"], uri=b)}),
                 change(b, 2, TWO_CODES + "\n")])
    # b's change was debounced after a's: a's lint, had it not been cancelled, would come first
    c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == b
           and m["params"].get("version") == 2)
    for_a = [m["params"] for m in c.received if m.get("method") == "textDocument/publishDiagnostics"
             and m["params"]["uri"] == a]
    assert for_a[-1]["diagnostics"] == []  # the close's, and nothing after it
    # the open's lint (not debounced) may finish before the change and the close are read, and
    # then publishes for version 1; nothing is ever published for the changed text
    assert all(p["diagnostics"] == [] or p.get("version") == 1 for p in for_a)
    assert "2" not in _lints(c, a)  # the debounced change was never linted


CLEAN_TEXT = IMPORT + "with npu_weight_prefetch_scope(1, 1024):\n    pass\n"


# --- 6. pull diagnostics --------------------------------------------------------------------

def test_pull_diagnostics(server):
    c = server(capabilities={"textDocument": {"diagnostic": {"dynamicRegistration": False}}}, trace="verbose")
    provider = c.init["capabilities"]["diagnosticProvider"]
    assert provider["identifier"] == "npulint" and provider["interFileDependencies"] is False
    uri = open_doc(c, "p.py", TWO_CODES)
    report = c.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})["result"]
    assert report["kind"] == "full" and sorted(d["code"] for d in report["items"]) == ["NPU101", "NPU103"]
    c.send_many([change(uri, 2, CLEAN_TEXT)])
    report = c.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})["result"]
    assert report == {"kind": "full", "items": []}
    # the same text again: answered from the last lint
    c.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    assert _lints(c, uri) == ["1", "2"]
    assert not [m for m in c.received if m.get("method") == "textDocument/publishDiagnostics"]  # no push


def test_pull_diagnostics_of_a_broken_configuration(server):
    c = server({"npulint.toml": 'product = "atlas-a9"\n'},
               capabilities={"textDocument": {"diagnostic": {}}})
    uri = open_doc(c, "m.py", TWO_CODES)
    (d,) = c.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})["result"]["items"]
    assert str(c.root / "npulint.toml") in d["message"] and "atlas-a9" in d["message"]
    # sent before the answer (which request() waited for)
    (shown,) = [m["params"] for m in c.received if m.get("method") == "window/showMessage"]
    assert shown["type"] == 1 and str(c.root / "npulint.toml") in shown["message"]


def test_push_clients_also_see_the_provider(shared):
    c = shared()
    assert c.init["capabilities"]["diagnosticProvider"]["identifier"] == "npulint"
    assert c.init["capabilities"]["codeActionProvider"]["codeActionKinds"] == ["quickfix", "source.fixAll.npulint"]
    assert c.init["capabilities"]["hoverProvider"] is True


# --- bad input ------------------------------------------------------------------------------

def test_bad_requests_get_empty_answers(shared):
    c = shared()
    ghost = (c.root / "never-opened.py").as_uri()
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}
    assert actions(c, ghost, rng) == []
    assert c.request("textDocument/hover", {"textDocument": {"uri": ghost},
                                            "position": {"line": 0, "character": 0}})["result"] is None
    assert c.request("textDocument/diagnostic", {"textDocument": {"uri": ghost}})["result"]["items"] == []
    uri = open_doc(c, "t.py", TWO_CODES)
    c.diagnostics(uri)
    far = {"line": 10_000, "character": 10_000}
    assert c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": far})["result"] is None
    assert actions(c, uri, {"start": far, "end": far}) == []
    c.send("textDocument/didClose", {"textDocument": {"uri": ghost}})  # never opened
    c.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                      "contentChanges": [{"text": "\ud800 lone surrogate\n"}]})
    assert c.diagnostics(uri)["version"] == 2
    assert c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                            "position": {"line": 0, "character": 0}})["result"] is None


# --- 7. which documents are linted, and by which configuration -------------------------------

WHOLE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
EXCLUDING = '[tool.npulint]\nextend-exclude = ["third_party", "gen/*.py"]\n'


def _nothing_for(c: Client, uri: str) -> None:
    """The document (its diagnostics published: none) gets no code action, no hover."""
    everywhere = {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}
    for only in (None, ["quickfix"], ["source.fixAll"]):
        assert actions(c, uri, everywhere, only=only) == []
    for line in range(len(POOL.splitlines())):
        assert c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                "position": {"line": line, "character": 8}})["result"] is None


@pytest.mark.parametrize("force", ["", "force-exclude = true\n", "force-exclude = false\n"])
def test_excluded_files_are_not_linted_whatever_force_exclude_says(shared, force):
    # ruff's server: an editor names every file it opens (astral-sh/ruff#11587, fixed in #11590)
    c = shared({"pyproject.toml": EXCLUDING + force})
    for rel in ("gen/b.py", "third_party/megatron/a.py", "third_party/x/y/z.py",
                ".venv/lib/python3.11/site-packages/somepkg/a.py"):  # the last: a default exclude
        uri = open_doc(c, rel, POOL)
        assert c.diagnostics(uri)["diagnostics"] == []
        _nothing_for(c, uri)
    # the twins: what the patterns do not match is linted, its fixes offered
    for rel in ("c.py", "third_party.py", "gen2/b.py", "venv-notes/a.py"):
        uri = open_doc(c, rel, POOL)
        (d,) = c.diagnostics(uri)["diagnostics"]
        assert d["code"] == "NPU202", rel
        assert [a["kind"] for a in actions(c, uri, WHOLE, only=["source.fixAll"])] == ["source.fixAll.npulint"]


def test_an_exclude_in_a_nearer_configuration_counts(shared):
    c = shared({"pyproject.toml": EXCLUDING, "pkg/pyproject.toml": '[tool.npulint]\nextend-exclude = ["old"]\n'})
    uri = open_doc(c, "pkg/old/m.py", POOL)
    assert c.diagnostics(uri)["diagnostics"] == []
    _nothing_for(c, uri)
    # pkg's configuration governs pkg: the root's patterns are not its own (as on the command line)
    (d,) = c.diagnostics(open_doc(c, "pkg/gen/b.py", POOL))["diagnostics"]
    assert d["code"] == "NPU202"


def _answer_requests(c: Client, method: str) -> list:
    """Answer (null) every request *method* the server sent so far; the requests' params."""
    seen = [m for m in c.received if m.get("method") == method and "id" in m]
    c.send_many([{"id": m["id"], "result": None} for m in seen])
    return [m.get("params") for m in seen]


WATCHING = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}


def _changed(c: Client, *rels: str, kind: int = 2) -> None:
    c.send("workspace/didChangeWatchedFiles",
           {"changes": [{"uri": (c.root / rel).as_uri(), "type": kind} for rel in rels]})


def test_the_configuration_files_are_watched_when_the_client_can(server):
    c = server(capabilities=WATCHING)
    reg = c.wait(lambda m: m.get("method") == "client/registerCapability")
    c.send_many([{"id": reg["id"], "result": None}])
    (r,) = reg["params"]["registrations"]
    assert r["method"] == "workspace/didChangeWatchedFiles"
    globs = sorted(w["globPattern"] for w in r["registerOptions"]["watchers"])
    assert globs == ["**/.npulint.toml", "**/npulint.toml", "**/pyproject.toml"]
    # a client that cannot register dynamically is not asked
    c = server()
    c.diagnostics(open_doc(c, "m.py", TWO_CODES))
    assert not [m for m in c.received if m.get("method") == "client/registerCapability"]


def _published(c: Client, *uris: str) -> dict:
    """The next diagnostics published for each of *uris* (in whatever order they come): codes by URI."""
    out: dict = {}
    while len(out) < len(uris):
        m = c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                   and m["params"]["uri"] in uris and m["params"]["uri"] not in out)
        out[m["params"]["uri"]] = sorted(d.get("code", d["message"]) for d in m["params"]["diagnostics"])
    return out


def test_a_configuration_change_lints_the_open_documents_again(server):
    c = server({"pyproject.toml": "[tool.npulint]\n", "sub/npulint.toml": "\n"}, capabilities=WATCHING)
    uri = open_doc(c, "m.py", TWO_CODES)
    sub = open_doc(c, "sub/s.py", TWO_CODES)
    both = ["NPU101", "NPU103"]
    assert _published(c, uri, sub) == {uri: both, sub: both}
    npu103 = {"start": {"line": 5, "character": 5}, "end": {"line": 5, "character": 6}}
    assert any("NPU103" in a["title"] for a in actions(c, uri, npu103))
    (c.root / "pyproject.toml").write_text('[tool.npulint]\nignore = ["NPU103"]\n', encoding="utf-8")
    _changed(c, "pyproject.toml")
    # every open document is linted again (sub's own configuration governs it: unchanged)
    assert _published(c, uri, sub) == {uri: ["NPU101"], sub: both}
    assert not any("NPU103" in a["title"] for a in actions(c, uri, npu103))  # its actions go too
    # the twin: a change that enables a code makes it appear
    (c.root / "pyproject.toml").write_text("[tool.npulint]\n", encoding="utf-8")
    _changed(c, "pyproject.toml")
    assert _published(c, uri, sub)[uri] == both
    # broken, then repaired: the broken configuration's diagnostic goes when it loads again
    (c.root / "pyproject.toml").write_text('[tool.npulint]\nignore = ["NPU103"\n', encoding="utf-8")
    _changed(c, "pyproject.toml")
    (message,) = _published(c, uri, sub)[uri]
    assert "configuration is broken" in message
    (c.root / "pyproject.toml").write_text('[tool.npulint]\nignore = ["NPU101"]\n', encoding="utf-8")
    _changed(c, "pyproject.toml")
    assert _published(c, uri, sub)[uri] == ["NPU103"]
    # a nearer configuration's new exclude: the diagnostics published are cleared
    (c.root / "sub" / "npulint.toml").write_text('extend-exclude = ["s.py"]\n', encoding="utf-8")
    _changed(c, "sub/npulint.toml", kind=1)
    assert _published(c, uri, sub) == {uri: ["NPU103"], sub: []}
    _nothing_for(c, sub)
    # without a notification, nothing is linted: the document's text has not changed
    assert [m["params"].get("version") for m in c.received
            if m.get("method") == "textDocument/publishDiagnostics"] == [1] * 12


@pytest.mark.parametrize("refresh", [True, False])
def test_a_configuration_change_reaches_pulling_clients(server, refresh):
    caps = {"textDocument": {"diagnostic": {}}, **WATCHING}
    caps["workspace"] = dict(caps["workspace"], diagnostics={"refreshSupport": refresh})
    c = server({"pyproject.toml": "[tool.npulint]\n"}, capabilities=caps)
    uri = open_doc(c, "m.py", TWO_CODES)

    def pull():
        return sorted(d["code"] for d in c.request("textDocument/diagnostic",
                                                   {"textDocument": {"uri": uri}})["result"]["items"])

    assert pull() == ["NPU101", "NPU103"]
    (c.root / "pyproject.toml").write_text('[tool.npulint]\nignore = ["NPU103"]\n', encoding="utf-8")
    _changed(c, "pyproject.toml")
    if refresh:  # asked to pull again (ruff's server asks so too)
        c.wait(lambda m: m.get("method") == "workspace/diagnostic/refresh")
    assert pull() == ["NPU101"]  # no didSave of the document needed
    (c.root / "pyproject.toml").write_text("[tool.npulint]\n", encoding="utf-8")
    _changed(c, "pyproject.toml")
    assert pull() == ["NPU101", "NPU103"]
    _answer_requests(c, "client/registerCapability")
    assert len(_answer_requests(c, "workspace/diagnostic/refresh")) == (2 if refresh else 0)
    assert not [m for m in c.received if m.get("method") == "textDocument/publishDiagnostics"]  # never pushed


def test_a_file_over_the_size_limit_says_so(shared):
    from npulint.inputs import DEFAULT_MAX_FILE_SIZE

    c = shared()
    filler = "".join(f"def f{i}(x):\n    return x * {i}  # 中文\n\n" for i in range(DEFAULT_MAX_FILE_SIZE // 30))
    big = TWO_CODES + filler
    assert len(big.encode("utf-8")) > DEFAULT_MAX_FILE_SIZE
    uri = open_doc(c, "big.py", big)
    (d,) = c.diagnostics(uri)["diagnostics"]
    assert d["severity"] == 3 and "code" not in d  # information: no finding
    assert d["range"] == {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": len(IMPORT) - 1}}
    assert d["message"].startswith("npulint: not analysed: ") and "max-file-size" in d["message"]
    assert "big.py" not in d["message"]  # (the document's own)
    assert actions(c, uri, d["range"]) == []
    # the twin: under the limit, the findings and no note
    c.send_many([change(uri, 2, TWO_CODES + filler[:1000])])
    assert sorted(d["code"] for d in c.diagnostics(uri)["diagnostics"]) == ["NPU101", "NPU103"]
    # a big file that mentions no NPU API has nothing to analyse: no note either (as on the command line)
    assert c.diagnostics(open_doc(c, "plain.py", "x = 1\n" + filler))["diagnostics"] == []


LAUNCH_BODY = LAUNCH.split("\n", 1)[1]  # without its shebang


@pytest.mark.parametrize("rel, language, text, codes", [
    ("run", "shellscript", LAUNCH_BODY, ["NPU501"]),  # no suffix, no shebang: its languageId says shell
    ("run", "sh", LAUNCH_BODY, ["NPU501"]),
    ("run", "bash", LAUNCH_BODY, ["NPU501"]),
    ("notes", "plaintext", TWO_CODES, []),  # neither Python nor shell: not linted
    ("notes", "python", TWO_CODES, ["NPU101", "NPU103"]),
    ("run.sh", "plaintext", LAUNCH_BODY, ["NPU501"]),  # the name says shell: the languageId does not count
])
def test_the_language_id_names_the_language_where_the_name_does_not(shared, rel, language, text, codes):
    c = shared(AMO_RELEASES)
    uri = open_doc(c, rel, text, language=language)
    diags = c.diagnostics(uri)["diagnostics"]
    assert sorted(d["code"] for d in diags) == codes
    if codes == ["NPU501"]:  # its actions are the shell's: the noqa comment above the command
        acts = actions(c, uri, diags[0]["range"])
        assert [a["title"] for a in acts] == ["Disable NPU501 for this command"]


def test_the_fix_loop_keeps_a_buffers_language_in_every_round(tmp_path, monkeypatch):
    # fix all on a buffer whose languageId says shell: each round lints the fixed text as shell
    from npulint.fixes import fix_loop
    from npulint.model import Edit, Finding, Fix
    from npulint.pipeline import RunResult

    monkeypatch.chdir(tmp_path)
    path = str(tmp_path / "run")
    buffer = (path, b"x=1\necho\n", "shell")
    seen = []

    def lint(overrides=None, stdin_data=buffer):  # (as the server's: the first round lints the buffer)
        seen.append(stdin_data)
        if len(seen) > 1:
            return RunResult([], 1, 1, 1)
        fix = Fix("drop it", (Edit(1, 1, 2, 1, ""),))
        return RunResult([Finding("run", 1, 1, "NPU501", "m", fix=fix, file=path)], 1, 1, 1)

    loop = fix_loop(lint, [], buffer)
    assert loop.current[path] == "echo\n"
    assert [s[2:] for s in seen] == [("shell",), ("shell",)]


def test_a_python_name_is_linted_whatever_its_language_id(shared):
    c = shared()
    uri = open_doc(c, "m.py", TWO_CODES, language="plaintext")
    assert sorted(d["code"] for d in c.diagnostics(uri)["diagnostics"]) == ["NPU101", "NPU103"]


def test_an_untitled_buffer_has_the_workspace_folders_configuration(server, tmp_path_factory, monkeypatch):
    c = server({"pyproject.toml": '[tool.npulint]\nignore = ["NPU103"]\n\n[tool.npulint.releases]\n'
                                  'mindspeed = "2.1.0_core_r0.8.0"\n'})
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))  # the server's working folder: not the workspace
    for n, (language, text, codes) in enumerate([("python", TWO_CODES, ["NPU101"]),
                                                 ("shellscript", LAUNCH_BODY, ["NPU501"]),
                                                 ("plaintext", TWO_CODES, [])]):
        uri = f"untitled:Untitled-{n}"
        c.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1,
                                                         "text": text}})
        assert [d["code"] for d in c.diagnostics(uri)["diagnostics"]] == codes, language


# --- 8. a byte order mark -------------------------------------------------------------------

def test_a_byte_order_mark_is_not_a_column(server, cli_run):
    c = server()
    text = "\ufeff" + POOL.replace("import torch\n", "import torch  # noqa: NPU101\n", 1)
    uri = open_doc(c, "bom.py", text)
    (d,) = c.diagnostics(uri)["diagnostics"]
    assert d["code"] == "NPU202"
    acts = actions(c, uri, d["range"])
    assert [a["title"].split(":")[0] for a in acts] == ["Fix NPU202", "Disable NPU202 for this line"]
    fixed = apply(text, edits_of(acts[0], uri))
    assert fixed.startswith("\ufeffimport torch") and fixed != text
    assert fixed[1:] == cli_fix(cli_run, c, "bom.py", text[1:])
    noqa = apply(text, edits_of(acts[1], uri))
    assert noqa.startswith("\ufeff") and "# noqa: NPU202" in noqa
    (fa,) = actions(c, uri, WHOLE, only=["source.fixAll"])
    assert apply(text, edits_of(fa, uri)) == fixed  # the mark stays
    # line 1: the client's columns count the mark, npulint's do not
    col = text.splitlines()[0].index("NPU101")  # (the mark is one UTF-16 unit)
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                         "position": {"line": 0, "character": col}})["result"]
    assert h["range"] == {"start": {"line": 0, "character": col}, "end": {"line": 0, "character": col + 6}}
    assert h["contents"]["value"].startswith("# NPU101 ")
    first = text.splitlines()[0]
    assert c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                            "position": {"line": 0, "character": first.index("# noqa")}})["result"] is None


# --- 9. the command line --------------------------------------------------------------------

def test_help_names_the_server_and_its_extra(cli_run, tmp_path):
    r = cli_run(["--help"], cwd=tmp_path)
    assert r.returncode == 0
    assert "npulint server" in r.stdout and "pip install 'npulint[lsp]'" in r.stdout
