"""Adding ``# noqa`` directives: where one goes for a finding, and whether it works there. The
language server's "Disable CODE" quick fix (:mod:`npulint.server_features`) and ``npulint
--add-noqa`` both use these, so they place a directive the same way.

Python: on the reported line, merged into the line's ``# noqa: X`` list when it has one, else
appended to the line. Shell: a comment line directly above the statement holding the finding
(the first line of a ``\\``-continued command, :func:`npulint.shell.statement_start`), with its
indentation, or merged into a ``# noqa: X`` comment line already there.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from npulint.model import Edit, Finding, Fix

_BREAK = re.compile(r"\r\n|\r|\n")


def text_lines(text: str) -> List[str]:
    """The lines of *text* without their line breaks (``\\r\\n``, ``\\r``, ``\\n``); a text ending
    in a break has a last empty line."""
    starts = [0] + [m.end() for m in _BREAK.finditer(text)]
    return [text[a:(starts[i + 1] if i + 1 < len(starts) else len(text))].rstrip("\r\n")
            for i, a in enumerate(starts)]


def noqa_edit(text: str, language: str, line: int, column: int, codes: Sequence[str],
              lines: Optional[List[str]] = None, directives=None) -> Optional[Tuple[str, Edit]]:
    """``(title, edit)`` adding ``# noqa: CODES`` for a finding at (*line*, *column*); None when
    none can be added (a blanket ``# noqa`` already there, no statement holds the position)."""
    from npulint.source import SHELL, noqa_directives

    if lines is None:
        lines = text_lines(text)
    if directives is None:
        directives = noqa_directives(text, language)
    listed = ", ".join(codes)

    def line_text(n: int) -> str:
        return lines[n - 1] if 1 <= n <= len(lines) else ""

    if language == SHELL:
        from npulint.shell import statement_start

        try:
            start = statement_start(text, line, column)
        except Exception:
            return None
        if start is None:
            return None
        at, col = start
        title = f"Disable {listed} for this command"
        above = at - 1
        above_text = line_text(above)
        if above >= 1 and above_text.lstrip(" \t").startswith("#"):
            for lineno, _, end, found, _, _ in directives:
                if lineno == above and found is not None and above_text[:above_text.find("#")].strip(" \t") == "":
                    return title, Edit(above, end, above, end, f", {listed}")
        indent = line_text(at)[:col - 1]
        return title, Edit(at, 1, at, 1, f"{indent}# noqa: {listed}\n")
    title = f"Disable {listed} for this line"
    for lineno, _, end, found, _, _ in directives:
        if lineno == line:
            if found is None:
                return None  # a blanket noqa already: nothing to add
            return title, Edit(lineno, end, lineno, end, f", {listed}")
    if line < 1 or line > len(lines):
        return None
    current = line_text(line)
    kept = len(current.rstrip(" \t\f"))
    return title, Edit(line, kept + 1, line, len(current) + 1, f"  # noqa: {listed}")


def noqa_works(text: str, language: str, line: int, codes: Sequence[str], edit: Edit) -> bool:
    """The edited text still parses and holds a real ``# noqa`` comment naming each code where
    it counts (not text inside a string, not after a line continuation)."""
    from npulint.fixes import apply_fixes, parses
    from npulint.source import SHELL, noqa_map, suppressed

    new, applied = apply_fixes(text, [Fix("noqa", (edit,))])
    if not applied or not parses(new, language):
        return False
    if language == SHELL:
        return True  # placed where the shell reader looks (npulint.shell.statement_start)
    noqa = noqa_map(new, language)
    return all(suppressed(noqa, line, code) for code in codes)


def add_noqa(text: str, language: str, findings: Sequence[Finding]) -> Tuple[str, int]:
    """*text* with a ``# noqa`` directive for every finding that can have one (``--add-noqa``):
    one a line (Python) or a statement (shell) naming its codes, each checked with
    :func:`noqa_works`, and the whole text still parsing. Returns the text and the number of
    directives added or extended."""
    from npulint.fixes import apply_fixes, parses
    from npulint.registry import engine_codes
    from npulint.source import noqa_directives

    lines = text_lines(text)
    directives = noqa_directives(text, language)
    # reported by the engine about a whole file (an internal error, a syntax error, an unreadable
    # file, an unused noqa, CRLF line endings, an analysis bound): nothing is added for them
    engine = engine_codes()
    groups: Dict[Tuple[int, int, int, int], Tuple[int, int, List[str]]] = {}
    for f in findings:
        if f.code in engine:
            continue
        one = noqa_edit(text, language, f.line, f.column, [f.code], lines, directives)
        if one is None:
            continue
        e = one[1]
        key = (e.line, e.column, e.end_line, e.end_column)
        line, column, codes = groups.setdefault(key, (f.line, f.column, []))
        if f.code not in codes:
            codes.append(f.code)
    fixes = []
    for line, column, codes in groups.values():
        codes.sort()
        made = noqa_edit(text, language, line, column, codes, lines, directives)
        if made is not None and noqa_works(text, language, line, codes, made[1]):
            fixes.append(Fix("noqa", (made[1],)))
    new, applied = apply_fixes(text, fixes)
    if applied and not parses(new, language):  # each parses alone; keep those that parse together
        kept: List[Fix] = []
        for fix in applied:
            candidate, done = apply_fixes(text, kept + [fix])
            if len(done) == len(kept) + 1 and parses(candidate, language):
                kept.append(fix)
        new, applied = apply_fixes(text, kept)
    return new, len(applied)


__all__ = ["add_noqa", "noqa_edit", "noqa_works", "text_lines"]
