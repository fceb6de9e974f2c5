"""The pure core: ``lint_source(path, text, settings) -> findings``.

No file is read or written and nothing is cached: the caller gives the text and the settings
(the configuration it loaded, and the releases it resolved: ``settings.effective_releases``).
The CLI and the language server reach the same per-file analysis (``npulint.analyse``) through
the pipeline, which adds reading, the cache, workers and the follow-up phase over many files; the tests use this
function directly (Fixit's ``fixit_bytes`` plays the same part).
"""

from __future__ import annotations

import os
from typing import Iterable, List, Optional, Tuple

from npulint.config import Settings, enabled_codes
from npulint.model import Finding


def lint_source(path: str, text: str, settings: Settings, *, language: Optional[str] = None,
                enabled: Optional[Iterable[str]] = None, display: Optional[str] = None,
                module: Optional[Tuple[Optional[str], bool]] = None) -> List[Finding]:
    """The findings for *text* standing for the file *path*, as a run over that one file
    reports them: its rules, the project phase with it alone, then ``per-file-ignores`` and
    ``# noqa``. *language*: "python" or "shell" (default: from the path, else a shebang);
    *enabled*: the codes on (default: the settings' selection); *display*: the path findings
    name (default: *path*); *module*: its module name and whether it is a package's
    ``__init__`` (for relative imports; default: the file name's stem, not a package: no folder
    is looked at)."""
    from npulint import analyse, project, registry, suppress
    from npulint.releases import effective
    from npulint.source import detect_language

    rules, checkers = registry.load()
    if enabled is None:
        enabled = enabled_codes(rules, settings.select, settings.extend_select, settings.ignore)
    enabled = set(enabled)
    if language is None:
        language = detect_language(path, text[:256].encode("utf-8", "surrogateescape")) or "python"
    effective(settings)  # what is configured, or what the caller resolved: nothing is inferred (no I/O)
    display = display or path
    if module is None:
        stem = os.path.splitext(os.path.basename(path))[0]
        module = (None, True) if stem == "__init__" else (stem if stem.isidentifier() else None, False)
    result = analyse._in_big_stack(lambda: analyse.lint_text(path, display, language, text, settings, checkers,
                                                             enabled, module=module))
    project._project_phase([result], checkers, enabled, settings)
    out = suppress._suppress([result], {path: (settings, enabled)}, enabled)
    return sorted(set(out), key=Finding.sort_key)
