"""``npulint server``: a small language server over stdio (LSP, built on pygls).

It lints each open document's current text through the same pipeline as
``npulint --stdin-filename PATH -`` (so the configuration, ``per-file-ignores`` and
``# noqa`` of the document's real path apply). Rules that span files see only the open
document, as with standard input.

* Diagnostics are pushed (``publishDiagnostics``) on open and save, and on change after a
  pause of :data:`DEBOUNCE_SECONDS` (a burst of keystrokes is linted once, its last text);
  a client that can pull them (``textDocument/diagnostic``, LSP 3.17) pulls them instead.
  A change to a configuration file the client watches for the server (``pyproject.toml``,
  ``npulint.toml``, ``.npulint.toml``) lints every open document again.
* A document the configuration excludes, or in a language npulint does not read (its name,
  else its ``languageId``, says which), is not linted: no diagnostic, no action. One npulint
  does not analyse (too large, not decodable) gets an information diagnostic saying why.
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
from npulint.source import PYTHON, SHELL

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


# An editor's languageId for a language npulint reads: what a document is linted as where its
# name says nothing (an untitled buffer; a script without a suffix or a shebang). Other ids
# (plain text, markdown, ...): such a document is not linted, as ruff's server lints only what
# its include settings or the "python" languageId admit (astral-sh/ruff@fca5c7c
# crates/ruff_server/src/resolve.rs:53-85).
LANGUAGE_IDS = {"python": PYTHON, "shellscript": SHELL, "sh": SHELL, "bash": SHELL}


def _encode(path: str, text: str, language_id: Optional[str] = None) -> Tuple[bytes, Optional[str]]:
    """The bytes the file *path* would hold for *text*, and its language: the one its name
    (suffix, else shebang) says, else its *language_id*'s (None: not a language npulint reads;
    no *language_id*: Python). A Python file's coding declaration (PEP 263) is honoured, as the
    pipeline decodes by it."""
    from npulint.fixes import encode_like
    from npulint.source import detect_language

    try:
        utf8 = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # lone surrogates the editor sent: not text a file can hold
        utf8 = text.encode("utf-8", "replace")
    language = detect_language(path, utf8[:256]) or (LANGUAGE_IDS.get(language_id) if language_id else PYTHON)
    try:
        return encode_like(utf8, text, language or PYTHON), language
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


def _excluded(settings, path: str) -> bool:
    """The configuration excludes *path* (``exclude``, ``extend-exclude``, the defaults, as the
    command line judges a walked file, or ``--stdin-filename`` with ``force-exclude``): the
    server lints it never, whatever ``force-exclude`` says, as ruff's server (an editor names
    every file it opens: astral-sh/ruff#11587, fixed in #11590). ``.gitignore`` does not count,
    as for ruff's server (astral-sh/ruff@fca5c7c crates/ruff_workspace/src/resolver.rs:870-904)."""
    from npulint.discovery import Excluder

    return Excluder(settings).excluded_with_parents(path, False)


@dataclasses.dataclass
class Linted:
    """What :func:`_lint` found: *skipped* says why the document was not linted."""

    findings: List
    rules: Dict
    language: Optional[str]
    config: Optional[str]
    notes: List[str]  # why the document was not analysed (too big, undecodable), as the CLI notes it
    skipped: Optional[str] = None


def _lint(path: str, text: str, language_id: Optional[str] = None) -> Linted:
    """Findings (``npulint.model.Finding``) for *text* standing for the file *path*, with the
    rules by code, the document's language, its configuration file and the run's notes.
    Raises :class:`DocumentConfigError` when the configuration is broken."""
    from npulint import pipeline

    path = os.path.abspath(path)
    rules, checkers, resolver, settings = _resolve(path)
    by_code = {r.code: r for r in rules}
    if _excluded(settings, path):
        return Linted([], by_code, None, settings.config_path, [], "excluded by the configuration")
    data, language = _encode(path, text, language_id)
    if language is None:
        return Linted([], by_code, None, settings.config_path, [], f"a {language_id} document")
    from npulint.fixes import FixPolicy, resolve_fixes

    result = pipeline.run([], settings, checkers, resolver.all_enabled(), (path, data, language),
                          settings_for=resolver.for_path)
    policy = FixPolicy.of(settings)
    findings = resolve_fixes([f for f in result.findings if f.file == path], lambda _: policy)
    shown = pipeline.display_path(path, os.getcwd()) + ": "
    notes = [n[len(shown):] if n.startswith(shown) else n for n in result.notes]
    return Linted(findings, by_code, language, settings.config_path, notes)


def fix_all_text(path: str, text: str, language_id: Optional[str] = None) -> Optional[str]:
    """*text* after every safe automatic fix, as ``npulint --fix`` would leave the file (the
    library's fix loop, :func:`npulint.fixes.fix_loop`, on the text: nothing is written), read
    as :func:`_lint` reads it; None when no fix applies."""
    from npulint import pipeline
    from npulint.fixes import fix_loop

    path = os.path.abspath(path)
    rules, checkers, resolver, settings = _resolve(path)
    data, language = _encode(path, text, language_id)

    def lint(overrides=None, stdin_data=(path, data, language)):
        return pipeline.run([], settings, checkers, resolver.all_enabled(), stdin_data,
                            settings_for=resolver.for_path, overrides=overrides)

    from npulint.fixes import FixPolicy

    policy = FixPolicy.of(settings)
    # safe fixes only, as ruff's fix all: an unsafe one is a quick fix the user picks
    return fix_loop(lint, [], (path, data, language), policy_for=lambda _: policy).current.get(path)


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
    skipped: Optional[str] = None  # why it was not linted (excluded, not Python nor shell)
    seconds: float = 0.0


def path_of(uri: str, folder: Optional[str] = None) -> str:
    """The file the document *uri* stands for. An untitled buffer (no file) stands for
    ``untitled`` in the workspace folder *folder* (so that folder's configuration applies, as
    ruff's server gives an untitled buffer its single workspace's settings: astral-sh/ruff@fca5c7c
    crates/ruff_server/src/session/index.rs:216-228), else in the current folder; no suffix: its
    languageId says its language."""
    from pygls import uris

    path = uris.to_fs_path(uri) if uri.startswith("file:") else None
    if path is None:
        path = os.path.join(folder or os.getcwd(), "untitled")
    return os.path.abspath(path)


def compute(uri: str, text: str, version: Optional[int], encoding: str, language_id: Optional[str] = None,
            folder: Optional[str] = None) -> Lint:
    """Lint *text* (the document *uri*, its editor's *language_id*; *folder*: the workspace
    folder, see :func:`path_of`) and build its diagnostics; never raises."""
    from npulint import server_features as sf

    started = time.perf_counter()
    path = path_of(uri, folder)
    doc = sf.Text(text, encoding)
    lint = Lint(uri, text, version, encoding, [])
    try:
        found = _lint(path, text, language_id)
        lint.config, lint.skipped = found.config, found.skipped
        texts: Dict[str, Optional[sf.Text]] = {path: doc}

        def related_text(p: str) -> Optional[sf.Text]:
            p = os.path.abspath(p)
            if p not in texts:
                texts[p] = _read_text(p, encoding)
            return texts[p]

        lint.diagnostics = ([sf.diagnostic(f, doc, found.rules.get(f.code), related_text) for f in found.findings]
                            + [sf.note_diagnostic(doc, note) for note in found.notes])
        if found.language is not None:
            lint.document = sf.Document(uri, version, path, found.language, doc, found.findings, found.rules)
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
