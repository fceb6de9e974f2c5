"""``npulint server``: a small Language Server (LSP over stdio) built on pygls.

It lints a Python or shell document when it is opened, changed or saved, through the same
pipeline as ``npulint - --stdin-filename PATH`` (the configuration is found from the
document's path and re-read on every lint, so edits to ``pyproject.toml`` apply at once), and
publishes the findings as diagnostics: code, severity, span, a link to the rule's page,
related locations of cross-file findings. Closing a document clears its diagnostics.

pygls is optional: ``pip install 'npulint[lsp]'``.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

from npulint import __version__

INSTALL_HINT = "the language server needs pygls: pip install 'npulint[lsp]'"


def _uri_path(uri: str) -> Optional[str]:
    from pygls import uris

    return uris.to_fs_path(uri) if uri.startswith("file:") else None


def lint_document(path: str, text: str):
    """Findings for one buffer (``path`` absolute), as ``npulint - --stdin-filename path``."""
    from npulint import pipeline, registry
    from npulint.config import ConfigResolver

    rules, checkers = registry.load()
    resolver = ConfigResolver(rules, None)
    settings = resolver.for_path(path)[0]
    result = pipeline.run([], settings, checkers, resolver.all_enabled(), (path, text.encode("utf-8")),
                          settings_for=resolver.for_path)
    shown = pipeline.display_path(path)
    return [f for f in result.findings if f.path == shown]


def to_diagnostics(findings, path: str) -> List:
    from lsprotocol import types
    from pygls import uris

    from npulint import docs, registry

    by_code = {r.code: r for r in registry.load()[0]}
    severity = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
                "info": types.DiagnosticSeverity.Information}
    out = []
    for f in findings:
        rule = by_code.get(f.code)
        start = types.Position(line=max(f.line - 1, 0), character=max(f.column - 1, 0))
        if f.end_line and (f.end_line, f.end_column) > (f.line, f.column):
            end = types.Position(line=f.end_line - 1, character=max(f.end_column - 1, 0))
        else:
            end = types.Position(line=start.line, character=start.character + 1)
        related = [types.DiagnosticRelatedInformation(
            location=types.Location(
                uri=uris.from_fs_path(os.path.abspath(p)) or p,
                range=types.Range(start=types.Position(line=ln - 1, character=c - 1),
                                  end=types.Position(line=ln - 1, character=c))),
            message="related location") for p, ln, c in f.related]
        out.append(types.Diagnostic(
            range=types.Range(start=start, end=end),
            message=f.message,
            severity=severity.get(rule.severity if rule else "error", types.DiagnosticSeverity.Error),
            code=f.code,
            code_description=types.CodeDescription(href=docs.help_uri(rule.code))
            if rule and docs.help_uri(rule.code) else None,
            source="npulint",
            related_information=related or None,
        ))
    return out


def make_server():
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    from npulint.config import ConfigError
    from npulint.source import language_of

    server = LanguageServer("npulint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)

    def publish(uri: str) -> None:
        path = _uri_path(uri)
        if path is None or language_of(path) is None:
            return
        doc = server.workspace.get_text_document(uri)
        try:
            findings = lint_document(os.path.abspath(path), doc.source)
        except ConfigError as exc:
            server.window_show_message(types.ShowMessageParams(type=types.MessageType.Error,
                                                               message=f"npulint: {exc}"))
            findings = []
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=doc.version, diagnostics=to_diagnostics(findings, path)))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenTextDocumentParams):
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeTextDocumentParams):
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: types.DidSaveTextDocumentParams):
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams):
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    return server


def serve(args: List[str]) -> int:
    """Entry of ``npulint server``; returns the exit status."""
    import click

    if args and args[0] in ("-h", "--help"):
        click.echo("Usage: npulint server\n\n  Run the npulint language server (LSP) over stdio.")
        return 0
    if args:
        click.echo(f"npulint: error: 'npulint server' takes no arguments (got {args[0]!r})", err=True)
        return 2
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        click.echo(f"npulint: error: {INSTALL_HINT}", err=True)
        return 2
    make_server().start_io()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(serve(sys.argv[1:]))
