"""``npulint server``: a small language server over stdio (LSP, built on pygls).

It lints each open document's current text through the same pipeline as
``npulint --stdin-filename PATH -`` (so the configuration, ``per-file-ignores`` and
``# noqa`` of the document's real path apply). Rules that span files see only the open
document, as with standard input.

* Diagnostics are pushed (``publishDiagnostics``) on open and save, and on change after a
  pause of :data:`DEBOUNCE_SECONDS` (a burst of keystrokes is linted once, its last text);
  a client that can pull them (``textDocument/diagnostic``, LSP 3.17) pulls them instead.
* Code actions: a finding's fix, ``# noqa: CODE``, and fix all (``source.fixAll.npulint``);
  they are WorkspaceEdits: the server never writes a file.
* Hover on a finding, or on a code in a ``# noqa:`` comment: the rule's page.
* Positions are in the encoding negotiated at ``initialize`` (utf-8, utf-16 or utf-32).
* A broken configuration file is shown (``window/showMessage``) and reported on line 1.
* Lints run one at a time on a worker thread, so that messages keep being read meanwhile; a
  result whose document changed or closed in the meantime is dropped. With tracing on
  (``initialize``'s ``trace``, ``$/setTrace``) each lint is reported by ``$/logTrace``.

The computations over one document (positions, diagnostics, actions, hover) are in
:mod:`npulint.server_features`. pygls is an optional dependency (``pip install
'npulint[lsp]'``); without it the command prints one error line and exits 2. Also runnable as
``python -m npulint.server``.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from typing import Dict, List, Optional, Sequence, Tuple

from npulint.config import ConfigError

LSP_EXTRA = "pip install 'npulint[lsp]'"

# The pause after a change before the document is linted: about the gap between two keystrokes
# of fluent typing, so a burst is linted once, its last text, instead of once a key (a lint of a
# large file takes longer than that gap, so linting every key would fall behind); a longer pause
# delays every diagnostic by as much (the figures: docs/benchmarks.md, "Language server
# latency").
# NPULINT_LSP_DEBOUNCE_MS (0-10000) sets another.
DEBOUNCE_SECONDS = 0.150
DEBOUNCE_ENV = "NPULINT_LSP_DEBOUNCE_MS"


class DocumentConfigError(ConfigError):
    """The configuration that applies to a document cannot be loaded."""

    def __init__(self, config: Optional[str], message: str):
        super().__init__(message)
        self.config = config


def _encode(path: str, text: str) -> Tuple[bytes, str]:
    """The bytes the file *path* would hold for *text*, and its language: a Python file's
    coding declaration (PEP 263) is honoured, as the pipeline decodes by it."""
    from npulint.fixes import encode_like
    from npulint.source import PYTHON, detect_language

    try:
        utf8 = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # lone surrogates the editor sent: not text a file can hold
        utf8 = text.encode("utf-8", "replace")
    language = detect_language(path, utf8[:256]) or PYTHON
    try:
        return encode_like(utf8, text, language), language
    except (UnicodeEncodeError, LookupError):
        return utf8, language


def _resolve(path: str):
    from npulint import registry
    from npulint.config import ConfigResolver

    rules, checkers = registry.load()
    resolver = ConfigResolver(rules)  # fresh each time: configuration files may have changed
    try:
        settings, _ = resolver.for_path(path)
    except ConfigError as exc:
        try:
            config = resolver.config_for_dir(os.path.dirname(path))
        except Exception:
            config = None
        raise DocumentConfigError(config, str(exc)) from None
    return rules, checkers, resolver, settings


def _lint(path: str, text: str):
    """Findings (``npulint.model.Finding``) for *text* standing for the file *path*, the rules
    by code, the document's language and its configuration file. Raises
    :class:`DocumentConfigError` when the configuration is broken."""
    from npulint import pipeline

    path = os.path.abspath(path)
    rules, checkers, resolver, settings = _resolve(path)
    data, language = _encode(path, text)
    from npulint.fixes import FixPolicy, resolve_fixes

    result = pipeline.run([], settings, checkers, resolver.all_enabled(), (path, data),
                          settings_for=resolver.for_path)
    policy = FixPolicy.of(settings)
    findings = resolve_fixes([f for f in result.findings if f.file == path], lambda _: policy)
    return (findings, {r.code: r for r in rules}, language,
            settings.config_path)


def fix_all_text(path: str, text: str) -> Optional[str]:
    """*text* after every safe automatic fix, as ``npulint --fix`` would leave the file (the
    library's fix loop, :func:`npulint.fixes.fix_loop`, on the text: nothing is written); None
    when no fix applies."""
    from npulint import pipeline
    from npulint.fixes import fix_loop

    path = os.path.abspath(path)
    rules, checkers, resolver, settings = _resolve(path)
    data, _ = _encode(path, text)

    def lint(overrides=None, stdin_data=(path, data)):
        return pipeline.run([], settings, checkers, resolver.all_enabled(), stdin_data,
                            settings_for=resolver.for_path, overrides=overrides)

    from npulint.fixes import FixPolicy

    policy = FixPolicy.of(settings)
    # safe fixes only, as ruff's fix all: an unsafe one is a quick fix the user picks
    return fix_loop(lint, [], (path, data), policy_for=lambda _: policy).current.get(path)


@dataclasses.dataclass
class Lint:
    """One lint of one text of a document."""

    uri: str
    text: str
    version: Optional[int]
    encoding: str
    diagnostics: List
    document: Optional[object] = None  # a server_features.Document, when it was linted
    config_error: Optional[Tuple[Optional[str], str]] = None  # (configuration file, message)
    config: Optional[str] = None  # the configuration file that applied, when it loaded
    failure: Optional[str] = None  # npulint failed on it (a bug): logged
    seconds: float = 0.0


def _path_of(uri: str) -> str:
    from pygls import uris

    path = uris.to_fs_path(uri) if uri.startswith("file:") else None
    if path is None:  # an untitled buffer: lint it as a Python file in the current folder
        path = os.path.join(os.getcwd(), "untitled.py")
    return os.path.abspath(path)


def compute(uri: str, text: str, version: Optional[int], encoding: str) -> Lint:
    """Lint *text* (the document *uri*) and build its diagnostics; never raises."""
    from npulint import server_features as sf
    from npulint.source import PYTHON

    started = time.perf_counter()
    path = _path_of(uri)
    doc = sf.Text(text, encoding)
    lint = Lint(uri, text, version, encoding, [])
    try:
        findings, rules, language, lint.config = _lint(path, text)
        texts: Dict[str, Optional[sf.Text]] = {path: doc}

        def related_text(p: str) -> Optional[sf.Text]:
            p = os.path.abspath(p)
            if p not in texts:
                texts[p] = _read_text(p, encoding)
            return texts[p]

        lint.diagnostics = [sf.diagnostic(f, doc, rules.get(f.code), related_text) for f in findings]
        lint.document = sf.Document(uri, version, path, language or PYTHON, doc, findings, rules)
    except DocumentConfigError as exc:
        lint.config_error = (exc.config, str(exc))
        lint.diagnostics = [sf.config_error_diagnostic(doc, exc.config, str(exc))]
    except Exception as exc:  # a bug in npulint must not take the editor's server down
        lint.failure = f"npulint failed on {path}: {exc!r}"
    lint.seconds = time.perf_counter() - started
    return lint


def _read_text(path: str, encoding: str):
    from npulint import server_features as sf
    from npulint.source import read_regular

    try:
        return sf.Text(read_regular(path, 16 << 20).decode("utf-8", "surrogateescape"), encoding)
    except Exception:
        return None


def debounce_seconds() -> float:
    raw = os.environ.get(DEBOUNCE_ENV, "").strip()
    try:
        ms = int(raw) if raw else None
    except ValueError:
        ms = None
    return ms / 1000 if ms is not None and 0 <= ms <= 10000 else DEBOUNCE_SECONDS


def build_server():
    from npulint.server_handlers import register

    return register(debounce_seconds())


USAGE = ("usage: npulint server [--stdio]   (a language server speaking LSP over standard input/output; "
         f"needs pygls: {LSP_EXTRA})")


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
