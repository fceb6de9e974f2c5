"""``npulint server``: a small language server over stdio (LSP, built on pygls).

It lints each open document's current text through the same pipeline as
``npulint --stdin-filename PATH -`` (so the configuration, ``per-file-ignores`` and
``# noqa`` of the document's real path apply) and publishes the findings as diagnostics on
``didOpen``, ``didChange`` and ``didSave``; ``didClose`` clears them. Rules that span files
see only the open document, as with standard input.

pygls is an optional dependency (``pip install 'npulint[lsp]'``); without it the command prints
one error line and exits 2. Also runnable as ``python -m npulint.server``.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional, Sequence

from npulint import __version__

LSP_EXTRA = "pip install 'npulint[lsp]'"


def _utf16_col(line_text: str, col0: int) -> int:
    """A code-point column (0-based) as LSP's default UTF-16 code units."""
    prefix = line_text[:col0]
    return len(prefix.encode("utf-16-le")) // 2 + max(0, col0 - len(prefix))


def lint_document(path: str, text: str):
    """Findings (``npulint.model.Finding``) for *text* standing for the file *path*."""
    from npulint import pipeline, registry
    from npulint.config import ConfigResolver

    rules, checkers = registry.load()
    resolver = ConfigResolver(rules)  # fresh each time: configuration files may have changed
    path = os.path.abspath(path)
    settings, _ = resolver.for_path(path)
    result = pipeline.run([], settings, checkers, resolver.all_enabled(), (path, text.encode("utf-8")),
                          settings_for=resolver.for_path)
    shown = pipeline.display_path(path)
    return [f for f in result.findings if f.path == shown], {r.code: r for r in rules}


def diagnostics(path: str, text: str) -> List:
    from lsprotocol import types as t
    from pygls import uris

    findings, by_code = lint_document(path, text)
    from npulint.source import python_lines

    # lines as LSP and the tokenizer count them (str.splitlines also breaks at \f and \v)
    lines = [ln.rstrip("\r\n") for ln in python_lines(text)] or [""]
    severity = {"error": t.DiagnosticSeverity.Error, "warning": t.DiagnosticSeverity.Warning,
                "info": t.DiagnosticSeverity.Information}

    def position(line: int, col: int) -> "t.Position":
        line0 = max(0, line - 1)
        text_line = lines[line0] if line0 < len(lines) else ""
        return t.Position(line=line0, character=_utf16_col(text_line, max(0, col - 1)))

    out = []
    for f in findings:
        start = position(f.line, f.column)
        if f.end_line:
            end = position(f.end_line, f.end_column)
        else:
            end = t.Position(line=start.line, character=start.character + 1)
        rule = by_code.get(f.code)
        related = [t.DiagnosticRelatedInformation(
            location=t.Location(uri=uris.from_fs_path(os.path.abspath(rp)),
                                range=t.Range(start=t.Position(line=max(0, rl - 1), character=max(0, rc - 1)),
                                              end=t.Position(line=max(0, rl - 1), character=max(0, rc - 1)))),
            message=f"{f.code}: related location") for rp, rl, rc in f.related]
        out.append(t.Diagnostic(
            range=t.Range(start=start, end=end), message=f.message, code=f.code, source="npulint",
            severity=severity.get(rule.severity if rule else "error", t.DiagnosticSeverity.Error),
            related_information=related or None))
    return out


def build_server():
    from lsprotocol import types as t
    from pygls import uris
    from pygls.lsp.server import LanguageServer

    server = LanguageServer("npulint", __version__, text_document_sync_kind=t.TextDocumentSyncKind.Full)

    def publish(ls, uri: str, version: Optional[int]) -> None:
        doc = ls.workspace.get_text_document(uri)
        path = uris.to_fs_path(uri) if uri.startswith("file:") else None
        if path is None:  # an untitled buffer: lint it as a Python file in the current folder
            path = os.path.join(os.getcwd(), "untitled.py")
        try:
            diags = diagnostics(path, doc.source)
        except Exception as exc:  # a bug in npulint must not take the editor's server down
            ls.window_log_message(t.LogMessageParams(type=t.MessageType.Error,
                                                     message=f"npulint failed on {path}: {exc!r}"))
            diags = []
        ls.text_document_publish_diagnostics(
            t.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version))

    @server.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: t.DidOpenTextDocumentParams) -> None:
        publish(ls, params.text_document.uri, params.text_document.version)

    @server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: t.DidChangeTextDocumentParams) -> None:
        publish(ls, params.text_document.uri, params.text_document.version)

    @server.feature(t.TEXT_DOCUMENT_DID_SAVE, t.SaveOptions(include_text=False))
    def did_save(ls, params: t.DidSaveTextDocumentParams) -> None:
        publish(ls, params.text_document.uri, None)

    @server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: t.DidCloseTextDocumentParams) -> None:
        ls.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=params.text_document.uri,
                                                                        diagnostics=[]))

    return server


USAGE = "usage: npulint server [--stdio]   (a language server speaking LSP over standard input/output)"


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        print(USAGE)
        return 0
    unknown = [a for a in args if a != "--stdio"]
    if unknown:
        print(f"npulint: error: npulint server: unknown argument '{unknown[0]}' (only --stdio)", file=sys.stderr)
        return 2
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        print(f"npulint: error: npulint server needs pygls, which is not installed: {LSP_EXTRA}",
              file=sys.stderr)
        return 2
    build_server().start_io()
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through the console script
    sys.exit(main())
