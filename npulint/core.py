"""The pure core: ``lint_source(path, text, settings) -> findings``, and the per-file step under it.

No file is read or written and nothing is cached: the caller gives the text and the settings
(the configuration it loaded, and the releases it resolved: ``settings.effective_releases``).
The one thing outside the process it may do: a shell script that tree-sitter-bash cannot parse
is given to ``bash -n`` on its standard input (parse only, nothing runs) for a second opinion.

:func:`analyse_file` is one file's step, before the project phase and suppression: the prefilter,
then CPython's check, the LibCST parse and the one traversal with every active rule
(``npulint.analyse``). Every run takes each file through it: the pipeline (``npulint.pipeline``,
which the CLI and the language server run) in this process or in its workers, with reading, the
cache and the phases over many files around it, and :func:`lint_source`, which adds the project
phase and suppression for the one file (Fixit's ``fixit_bytes`` plays its part; the tests use it).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable, List, Optional, Sequence, Set, Tuple

from npulint.config import Settings, enabled_codes
from npulint.model import Finding

if TYPE_CHECKING:  # pragma: no cover
    from npulint.analyse import FileResult


def lint_source(path: str, text: str, settings: Settings, *, language: Optional[str] = None,
                enabled: Optional[Iterable[str]] = None, display: Optional[str] = None,
                module: Optional[Tuple[Optional[str], bool]] = None, whole_program: bool = True) -> List[Finding]:
    """The findings for *text* standing for the file *path*, as a run over that one file
    reports them: its rules, the project phase with it alone, then ``per-file-ignores`` and
    ``# noqa``; but with no I/O, so the other files of its program are not asked what they
    change (:mod:`npulint.program`: a run of the command line asks them). *whole_program*:
    whether the file is all of its program (NPU003 judges a rule's code in a ``# noqa`` only
    then). *language*: "python" or "shell" (default: from the path, else a shebang);
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
    from npulint import modules

    old = modules.activate(None)  # the file alone: no other run's modules resolve its names
    try:
        result = analyse._in_big_stack(lambda: analyse_file(path, display, language, text, settings, checkers,
                                                            enabled, module=module))
    finally:
        modules.activate(old)
    project._project_phase([result], checkers, enabled, settings)
    out = suppress._suppress([result], {path: (settings, enabled)}, enabled, lambda: whole_program)
    return sorted(set(out), key=Finding.sort_key)


def analyse_file(path: str, display: str, language: str, text: str, settings: Settings,
                 checkers: Sequence[type], enabled: Set[str], *, active: Optional[Sequence[type]] = None,
                 module: Optional[Tuple[Optional[str], bool]] = None) -> "FileResult":
    """One file's findings, facts and ``# noqa`` map, before the project phase and suppression.
    *active*: the checkers to run, when the caller's prefilter chose them already (the
    pipeline's first pass does, before its cache and its workers); else the prefilter chooses
    them from *checkers* here. *module*: the file's module name and whether it is a package's
    ``__init__`` (default: from *path* and the folders' ``__init__.py`` files on disk)."""
    from npulint import analyse

    if active is None:
        result, active = analyse._prefilter(path, display, language, text, checkers, enabled)
        if active is None:
            return analyse._with_directives(result, text, enabled)
    else:
        result = analyse.new_result(path, display, language, text)
    return analyse._with_directives(analyse._analyse(result, text, settings, active, enabled, module), text, enabled)
