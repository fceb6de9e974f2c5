"""The LSP handlers of ``npulint server`` and the state they share: the last lint of each
open document, the debounce timers, the worker thread lints run on (see :mod:`npulint.server`).

Everything that talks to the client runs on pygls's event loop thread; lints, fixes and
hovers run on one worker thread (``_worker``), one at a time."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Dict, List, Optional, Set, Tuple

from lsprotocol import types as t
from pygls import uris
from pygls.lsp.server import LanguageServer

from npulint import __version__
from npulint.config import CONFIG_NAMES
from npulint import server_features as sf
from npulint.server import Lint, compute, fix_all_text, path_of


class State:
    def __init__(self, ls: LanguageServer, debounce: float):
        self.ls = ls
        self.debounce = debounce
        self.pull = False  # the client pulls diagnostics (textDocument/diagnostic): no push
        self.refresh = False  # it takes workspace/diagnostic/refresh (it pulls again when asked)
        self.watch = False  # it watches files for the server (dynamic didChangeWatchedFiles)
        self.document_changes = False  # the client takes versioned TextDocumentEdits
        self.generation: Dict[str, int] = {}  # bumped by every open, change, save, close
        self.timers: Dict[str, asyncio.TimerHandle] = {}
        self.last: Dict[str, Lint] = {}  # the latest lint of each open document
        self.shown: Set[Tuple[Optional[str], str]] = set()  # configuration errors shown
        self.tasks: Set[asyncio.Task] = set()
        self._worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="npulint-lint")

    @property
    def encoding(self) -> str:
        enc = self.ls.workspace.position_encoding
        return str(getattr(enc, "value", enc) or "utf-16")

    def log(self, message: str, kind=t.MessageType.Log) -> None:
        self.ls.window_log_message(t.LogMessageParams(type=kind, message=message))

    def trace(self, message: str) -> None:
        if self.ls.protocol.trace not in (None, t.TraceValue.Off):
            self.ls.log_trace(t.LogTraceParams(message=message))

    async def in_worker(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._worker, fn, *args)

    def snapshot(self, uri: str) -> Optional[Tuple[str, Optional[int]]]:
        if uri not in self.generation:
            return None  # not open
        doc = self.ls.workspace.get_text_document(uri)
        return doc.source, doc.version

    def folder(self) -> Optional[str]:
        """The workspace folder an untitled buffer belongs to (:func:`npulint.server.path_of`):
        the only one (the root when the client names none); None with several."""
        folders = [f.uri for f in self.ls.workspace.folders.values()] or [self.ls.workspace.root_uri]
        return uris.to_fs_path(folders[0]) if len(folders) == 1 and folders[0] else None

    def path(self, uri: str) -> str:
        return path_of(uri, self.folder())

    def lint(self, uri: str, text: str, version: Optional[int]):
        """Lint the document's *text* on the worker thread."""
        language_id = self.ls.workspace.get_text_document(uri).language_id
        return self.in_worker(compute, uri, text, version, self.encoding, language_id, self.folder())

    def reconfigure(self) -> None:
        """A configuration file was created, changed or deleted: every open document is linted
        afresh, as ruff's server does (astral-sh/ruff@fca5c7c
        crates/ruff_server/src/server/api/notifications/did_change_watched_files.rs:19-34): a
        pulling client that takes it is asked to pull again, a pushed-to one is sent the
        diagnostics. (Ruff pushes to a pulling client that cannot be asked; npulint does not: a
        client shows pushed diagnostics beside pulled ones. Its next pull is linted afresh.)"""
        self.last.clear()
        if self.pull:
            if self.refresh:
                self.ls.workspace_diagnostic_refresh(None)
            return
        for uri in list(self.generation):
            self.schedule(uri, 0)

    # --- linting -----------------------------------------------------------------------------
    async def current(self, uri: str) -> Optional[Lint]:
        """The lint of the document's current text: the last one when the text is the same."""
        snap = self.snapshot(uri)
        if snap is None:
            return None
        text, version = snap
        last = self.last.get(uri)
        if last is not None and last.text == text and last.encoding == self.encoding:
            return last
        lint = await self.lint(uri, text, version)
        self.linted(lint)
        if uri in self.generation and self.snapshot(uri) == (text, version):
            self.last[uri] = lint
        return lint

    def linted(self, lint: Lint) -> None:
        """After every lint: trace it, log a failure, show a configuration error once."""
        self.trace(f"linted {lint.uri} version {lint.version}: {len(lint.diagnostics)} diagnostics "
                   + (f"(not linted: {lint.skipped}) " if lint.skipped else "")
                   + f"in {lint.seconds * 1000:.1f} ms")
        if lint.failure:
            self.log(lint.failure, t.MessageType.Error)
        if lint.config_error is not None:
            if lint.config_error not in self.shown:
                self.shown.add(lint.config_error)
                config, message = lint.config_error
                self.ls.window_show_message(t.ShowMessageParams(
                    type=t.MessageType.Error,
                    message=f"npulint: the configuration {config or ''} is broken, files under it are not "
                            f"linted: {message}".replace("  ", " ")))
        elif lint.failure is None:  # its configuration loads again: show its next breakage
            self.shown = {e for e in self.shown if e[0] != lint.config}

    def schedule(self, uri: str, delay: float) -> None:
        """Lint and publish *uri* after *delay* seconds (a later change restarts the wait)."""
        gen = self.bump(uri)
        if self.pull:
            return
        loop = asyncio.get_running_loop()
        if delay > 0:
            self.timers[uri] = loop.call_later(delay, self._start, uri, gen)
        else:
            self._start(uri, gen)

    def _start(self, uri: str, gen: int) -> None:
        if self.generation.get(uri) != gen:
            return
        self.timers.pop(uri, None)
        task = asyncio.get_running_loop().create_task(self._lint_and_publish(uri, gen))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _lint_and_publish(self, uri: str, gen: int) -> None:
        try:
            snap = self.snapshot(uri)
            if snap is None:
                return
            text, version = snap
            lint = await self.lint(uri, text, version)
            self.linted(lint)
            if self.generation.get(uri) != gen:
                return  # changed (a newer lint is coming) or closed meanwhile
            self.last[uri] = lint
            self.ls.text_document_publish_diagnostics(
                t.PublishDiagnosticsParams(uri=uri, diagnostics=lint.diagnostics, version=version))
        except Exception as exc:  # pragma: no cover - compute never raises; the transport may
            self.log(f"npulint: cannot publish diagnostics of {uri}: {exc!r}", t.MessageType.Error)

    def bump(self, uri: str) -> int:
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        gen = self.generation.get(uri, 0) + 1
        self.generation[uri] = gen
        return gen

    def close(self, uri: str) -> None:
        self.bump(uri)
        del self.generation[uri]
        self.last.pop(uri, None)
        if not self.pull:
            self.ls.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def _supports(caps, *names) -> bool:
    for name in names:
        caps = getattr(caps, name, None)
        if caps is None:
            return False
    return bool(caps)


def register(debounce: float) -> LanguageServer:
    server = LanguageServer("npulint", __version__, text_document_sync_kind=t.TextDocumentSyncKind.Full)
    state = State(server, debounce)
    server.npulint_state = state  # for a debugger

    @server.feature(t.INITIALIZE)
    def initialize(ls, params: t.InitializeParams) -> None:
        caps = params.capabilities
        state.pull = _supports(caps, "text_document", "diagnostic")
        state.refresh = _supports(caps, "workspace", "diagnostics", "refresh_support")
        state.watch = _supports(caps, "workspace", "did_change_watched_files", "dynamic_registration")
        state.document_changes = _supports(caps, "workspace", "workspace_edit", "document_changes")
        if params.trace is not None:
            ls.protocol.trace = params.trace

    @server.feature(t.INITIALIZED)
    def initialized(ls, params: t.InitializedParams) -> None:
        if state.watch:  # the configuration files npulint reads (ruff's server watches its own)
            ls.client_register_capability(t.RegistrationParams(registrations=[t.Registration(
                id="npulint-configuration", method=t.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=t.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[t.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_NAMES]))]))

    @server.feature(t.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls, params: t.DidChangeWatchedFilesParams) -> None:
        if params.changes:
            state.reconfigure()

    @server.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: t.DidOpenTextDocumentParams) -> None:
        state.schedule(params.text_document.uri, 0)

    @server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: t.DidChangeTextDocumentParams) -> None:
        state.schedule(params.text_document.uri, state.debounce)

    @server.feature(t.TEXT_DOCUMENT_DID_SAVE, t.SaveOptions(include_text=False))
    def did_save(ls, params: t.DidSaveTextDocumentParams) -> None:
        state.last.clear()  # a configuration file may have been saved: lint afresh
        if params.text_document.uri in state.generation:
            state.schedule(params.text_document.uri, 0)

    @server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: t.DidCloseTextDocumentParams) -> None:
        if params.text_document.uri in state.generation:
            state.close(params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DIAGNOSTIC,
                    t.DiagnosticOptions(identifier="npulint", inter_file_dependencies=False,
                                        workspace_diagnostics=False))
    async def pull(ls, params: t.DocumentDiagnosticParams):
        try:
            lint = await state.current(params.text_document.uri)
        except Exception as exc:
            state.log(f"npulint: diagnostics of {params.text_document.uri} failed: {exc!r}", t.MessageType.Error)
            lint = None
        return t.RelatedFullDocumentDiagnosticReport(items=lint.diagnostics if lint is not None else [])

    @server.feature(t.TEXT_DOCUMENT_CODE_ACTION,
                    t.CodeActionOptions(code_action_kinds=[t.CodeActionKind.QuickFix, sf.FIX_ALL_KIND]))
    async def code_action(ls, params: t.CodeActionParams) -> List[t.CodeAction]:
        uri = params.text_document.uri
        try:
            lint = await state.current(uri)
            if lint is None or lint.document is None:
                return []
            d = lint.document
            language_id = ls.workspace.get_text_document(uri).language_id
            return await state.in_worker(
                sf.code_actions, d, params.range, params.context.only, state.document_changes,
                lambda: fix_all_text(d.path, d.doc.text, language_id))
        except Exception as exc:
            state.log(f"npulint: code actions on {uri} failed: {exc!r}", t.MessageType.Error)
            return []

    @server.feature(t.TEXT_DOCUMENT_HOVER)
    async def hover(ls, params: t.HoverParams) -> Optional[t.Hover]:
        uri = params.text_document.uri
        try:
            lint = await state.current(uri)
            if lint is None or lint.document is None:
                return None
            return await state.in_worker(sf.hover, lint.document, params.position)
        except Exception as exc:
            state.log(f"npulint: hover on {uri} failed: {exc!r}", t.MessageType.Error)
            return None

    return server
