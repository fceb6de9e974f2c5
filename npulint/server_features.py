"""What ``npulint server`` tells the editor, computed from one document's text and findings:
positions in the negotiated encoding, diagnostics, code actions (a finding's fix, a ``# noqa``
comment, fix all) and hover pages. Pure functions over lsprotocol types; the server's state
(open documents, debouncing, publishing) lives in :mod:`npulint.server`.

Positions: npulint's are 1-based lines and columns counting characters (code points); LSP's
are 0-based, their ``character`` counting units of the encoding the client and server
negotiated at ``initialize`` (``general.positionEncodings``: ``utf-8``, ``utf-16`` (the
default), ``utf-32``). Lines end at ``\\r\\n``, ``\\r`` or ``\\n`` for both. A byte order mark
(U+FEFF) that starts the client's text is not part of npulint's: npulint reads a file without
it, as CPython does (its first line's columns, the text fixes and ``# noqa`` comments are
computed on, start after it); the client's positions count it.
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from lsprotocol import types as t

from npulint.model import Edit, Finding, Fix, Rule

SOURCE = "npulint"
FIX_ALL_KIND = "source.fixAll.npulint"
_BREAK = re.compile(r"\r\n|\r|\n")


def _units_utf8(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


def _units_utf16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


_UNITS: Dict[str, Callable[[str], int]] = {"utf-8": _units_utf8, "utf-16": _units_utf16, "utf-32": len}


class Text:
    """A document's text with its lines, converting positions between npulint's (1-based
    line, character column) and the client's (0-based, units of *encoding*)."""

    def __init__(self, text: str, encoding: str = "utf-16"):
        self.text = text
        self.encoding = encoding if encoding in _UNITS else "utf-16"
        self.units = _UNITS[self.encoding]
        self.starts = [0] + [m.end() for m in _BREAK.finditer(text)]
        self.lines: List[str] = []  # without their line breaks; a text ending in one has a last ""
        for i, a in enumerate(self.starts):
            b = self.starts[i + 1] if i + 1 < len(self.starts) else len(text)
            self.lines.append(text[a:b].rstrip("\r\n"))
        self.bom = 1 if text.startswith("\ufeff") else 0
        self.source = text[self.bom:]  # the text npulint reads: without the byte order mark
        self.source_lines = [self.lines[0][self.bom:]] + self.lines[1:]  # its lines

    def line(self, line0: int) -> str:
        return self.lines[line0] if 0 <= line0 < len(self.lines) else ""

    # npulint -> client
    def offset(self, line: int, column: int) -> int:
        """The character offset of 1-based (line, column), clamped to the text."""
        if line < 1:
            return 0
        if line > len(self.starts):
            return len(self.text)
        return min(len(self.text), self.starts[line - 1] + max(0, column - 1) + (self.bom if line == 1 else 0))

    def position_at(self, offset: int) -> t.Position:
        offset = max(0, min(offset, len(self.text)))
        line0 = bisect.bisect_right(self.starts, offset) - 1
        col0 = offset - self.starts[line0]
        text = self.lines[line0]
        if col0 > len(text):  # inside the line break itself: its start
            col0 = len(text)
        return t.Position(line=line0, character=self.units(text[:col0]))

    def position(self, line: int, column: int) -> t.Position:
        return self.position_at(self.offset(line, column))

    def finding_range(self, f: Finding) -> t.Range:
        start = self.position(f.line, f.column)
        if f.end_line:
            end = self.position(f.end_line, f.end_column)
            if (end.line, end.character) < (start.line, start.character):
                end = start
        else:  # a point: the character there (or one unit past the line's end)
            text = self.line(start.line)
            col0 = self.offset(f.line, f.column) - self.starts[start.line] if f.line <= len(self.starts) else 0
            end = t.Position(line=start.line, character=self.units(text[:col0 + 1]) if col0 < len(text)
                             else start.character + 1)
        return t.Range(start=start, end=end)

    # client -> npulint
    def from_client(self, pos: t.Position) -> Tuple[int, int]:
        """1-based (line, column in characters) of a client position; a character inside a
        multi-unit character counts as that character, one past the line's end as its end."""
        if pos.line >= len(self.lines):  # past the end: the end of the last line
            return len(self.lines), len(self.lines[-1]) + 1
        line0 = max(0, pos.line)
        text = self.lines[line0]
        skip = self.bom if line0 == 0 else 0  # the byte order mark: not a column of npulint's
        units = 0
        for i, ch in enumerate(text):
            if units >= pos.character:
                return line0 + 1, max(1, i + 1 - skip)
            units += self.units(ch)
            if units > pos.character:  # inside this character
                return line0 + 1, max(1, i + 1 - skip)
        return line0 + 1, len(text) + 1 - skip

    def edit(self, e: Edit, newline: str) -> t.TextEdit:
        text = e.text
        if newline != "\n" or "\r" in text:  # as npulint.fixes.apply_fixes writes it
            text = _BREAK.sub(newline, text)
        start = self.position(e.line, e.column)
        end = self.position(e.end_line, e.end_column)
        return t.TextEdit(range=t.Range(start=start, end=end), new_text=text)


def docs_url(code: str) -> Optional[str]:
    """The rule page's address where one is configured: ``$NPULINT_DOCS_URL/NPUxxx.md`` (the
    setting SARIF's ``helpUri`` uses); None otherwise."""
    from npulint.docs import published_url

    return published_url(code)


_SEVERITY = {"error": t.DiagnosticSeverity.Error, "warning": t.DiagnosticSeverity.Warning,
             "info": t.DiagnosticSeverity.Information}


def diagnostic(f: Finding, doc: Text, rule: Optional[Rule],
               related_text: Callable[[str], Optional[Text]]) -> t.Diagnostic:
    """*related_text(path)*: the text of another file a related location points into (to
    place it in the client's units), or None."""
    related = []
    for rp, rl, rc in f.related:
        other = related_text(rp)
        if other is not None:
            where = other.position(rl, rc)
        else:
            where = t.Position(line=max(0, rl - 1), character=max(0, rc - 1))
        related.append(t.DiagnosticRelatedInformation(
            location=t.Location(uri=_uri(rp), range=t.Range(start=where, end=where)),
            message=f"{f.code}: related location"))
    href = docs_url(f.code)
    return t.Diagnostic(
        range=doc.finding_range(f), message=f.message, code=f.code, source=SOURCE,
        severity=_SEVERITY.get(rule.severity if rule else "error", t.DiagnosticSeverity.Error),
        code_description=t.CodeDescription(href=href) if href else None,
        related_information=related or None)


def _uri(path: str) -> str:
    from pygls import uris

    return uris.from_fs_path(os.path.abspath(path)) or ""


def config_error_diagnostic(doc: Text, config: Optional[str], message: str) -> t.Diagnostic:
    """The document is not linted: its configuration is broken. On line 1, naming the file."""
    text = message if config is None or config in message else f"{config}: {message}"
    related = None
    if config is not None:
        related = [t.DiagnosticRelatedInformation(
            location=t.Location(uri=_uri(config), range=t.Range(start=t.Position(line=0, character=0),
                                                                 end=t.Position(line=0, character=0))),
            message="the configuration file")]
    return t.Diagnostic(range=_first_line(doc),
                        message=f"npulint cannot lint this file, its configuration is broken: {text}",
                        source=SOURCE, severity=t.DiagnosticSeverity.Error, related_information=related)


def note_diagnostic(doc: Text, note: str) -> t.Diagnostic:
    """Why npulint did not analyse the document (larger than the size limit, not decodable:
    what the command line notes on stderr, *note*), on line 1 as information: without it, a
    document with no finding would read as one found clean."""
    return t.Diagnostic(range=_first_line(doc), message=f"npulint: {note}", source=SOURCE,
                        severity=t.DiagnosticSeverity.Information)


def _first_line(doc: Text) -> t.Range:
    return t.Range(start=t.Position(line=0, character=0), end=t.Position(line=0, character=doc.units(doc.line(0))))


# --- code actions ---------------------------------------------------------------------------

@dataclasses.dataclass
class Document:
    """One linted text: what code actions and hovers are computed from."""

    uri: str
    version: Optional[int]
    path: str
    language: str
    doc: Text
    findings: List[Finding]
    rules: Dict[str, Rule]

    @property
    def newline(self) -> str:
        from npulint.fixes import newline_of

        return newline_of(self.doc.text)


def _kind_wanted(kind: str, only: Optional[Sequence[str]]) -> bool:
    return not only or any(kind == o or kind.startswith(o + ".") for o in only)


def _overlaps(a: t.Range, b: t.Range) -> bool:
    def key(p: t.Position):
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def workspace_edit(d: Document, edits: List[t.TextEdit], document_changes: bool) -> t.WorkspaceEdit:
    if document_changes:
        return t.WorkspaceEdit(document_changes=[t.TextDocumentEdit(
            text_document=t.OptionalVersionedTextDocumentIdentifier(uri=d.uri, version=d.version),
            edits=edits)])
    return t.WorkspaceEdit(changes={d.uri: edits})


def fix_applies(d: Document, fix: Fix) -> bool:
    """The fix alone applies to the text and leaves it parsable (what ``--fix`` asks)."""
    from npulint.fixes import fix_text

    _, applied = fix_text(d.doc.source, [fix], d.language)
    return bool(applied)


def noqa_edit(d: Document, f: Finding) -> Optional[Tuple[str, Edit]]:
    """``(title, edit)`` adding ``# noqa: CODE`` for the finding; None when none can be added.
    Placed as ``npulint --add-noqa`` places it (:func:`npulint.noqa.noqa_edit`): Python, on the
    reported line (merged into its ``# noqa: X`` list); shell, a comment line directly above the
    statement holding the finding (or merged into one there)."""
    from npulint.noqa import noqa_edit as place

    return place(d.doc.source, d.language, f.line, f.column, [f.code], lines=d.doc.source_lines)


def _noqa_works(d: Document, f: Finding, e: Edit) -> bool:
    from npulint.noqa import noqa_works

    return noqa_works(d.doc.source, d.language, f.line, [f.code], e)


def code_actions(d: Document, request: t.Range, only: Optional[Sequence[str]],
                 document_changes: bool, fix_all: Callable[[], Optional[str]]) -> List[t.CodeAction]:
    """Quick fixes for the findings whose range meets *request*, and fix all
    (``source.fixAll.npulint``) when asked for by kind. *fix_all()* gives the document's text
    after every safe automatic fix (as ``--fix``: ruff's fix all), or None when nothing changes.
    An unsafe fix is a quick fix that is not preferred (and says so in its title)."""
    out: List[t.CodeAction] = []
    if _kind_wanted(t.CodeActionKind.QuickFix, only):
        seen_fix, seen_noqa = set(), set()
        for f in d.findings:
            rng = d.doc.finding_range(f)
            if not _overlaps(rng, request):
                continue
            diag = diagnostic(f, d.doc, d.rules.get(f.code), lambda p: None)
            if f.fix is not None and f.fix.edits and f.fix not in seen_fix and fix_applies(d, f.fix):
                seen_fix.add(f.fix)
                edits = [d.doc.edit(e, d.newline) for e in f.fix.edits]
                safe = f.fix.applicability == "safe"  # an unsafe fix is offered, never preferred
                out.append(t.CodeAction(title=f"Fix {f.code}: {f.fix.description}" + ("" if safe else " (unsafe)"),
                                        kind=t.CodeActionKind.QuickFix, diagnostics=[diag], is_preferred=safe,
                                        edit=workspace_edit(d, edits, document_changes)))
            noqa = noqa_edit(d, f)
            if noqa is not None and (noqa[1], f.code) not in seen_noqa and _noqa_works(d, f, noqa[1]):
                seen_noqa.add((noqa[1], f.code))
                out.append(t.CodeAction(title=noqa[0], kind=t.CodeActionKind.QuickFix, diagnostics=[diag],
                                        edit=workspace_edit(d, [d.doc.edit(noqa[1], d.newline)], document_changes)))
    # fix all only when asked for by kind (a save action, the source-action menu): it lints the
    # document up to ten times, too much for every move of the cursor
    if only and _kind_wanted(FIX_ALL_KIND, only) and any(f.fix is not None and f.fix.applicability == "safe"
                                                          for f in d.findings):
        fixed = fix_all()  # (npulint's text: without the byte order mark, which stays)
        if fixed is not None and fixed != d.doc.source:
            out.append(t.CodeAction(title="npulint: Fix all auto-fixable problems", kind=FIX_ALL_KIND,
                                    edit=workspace_edit(d, [replace_changed(d.doc, d.doc.text[:d.doc.bom] + fixed)],
                                                       document_changes)))
    return out


def replace_changed(doc: Text, new: str) -> t.TextEdit:
    """One edit turning the document into *new*: the part between their common start and end."""
    old = doc.text
    a = 0
    limit = min(len(old), len(new))
    while a < limit and old[a] == new[a]:
        a += 1
    b = 0
    while b < limit - a and old[len(old) - 1 - b] == new[len(new) - 1 - b]:
        b += 1
    # never split a CRLF pair
    while a > 0 and old[a - 1] == "\r" and a < len(old) and old[a] == "\n":
        a -= 1
    while b > 0 and len(old) - b > 0 and old[len(old) - b] == "\n" and old[len(old) - b - 1] == "\r" \
            and len(old) - b > a:
        b -= 1
    return t.TextEdit(range=t.Range(start=doc.position_at(a), end=doc.position_at(len(old) - b)),
                      new_text=new[a:len(new) - b])


# --- hover ----------------------------------------------------------------------------------

_NOQA_CODES = re.compile(r"#\s*noqa:\s*", re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")


def rule_markdown(rule: Rule) -> str:
    """The rule's page, as ``npulint --explain`` prints it, with its address when configured."""
    from npulint.docs import rule_page

    page = rule_page(rule).rstrip("\n")
    href = docs_url(rule.code)
    return page + (f"\n\n[{rule.code} on the rule pages]({href})" if href else "")


def hover(d: Document, pos: t.Position) -> Optional[t.Hover]:
    """The rule pages of the findings under *pos*, or of the code under it in a ``# noqa:``
    comment."""
    from npulint.source import noqa_directives

    line, col = d.doc.from_client(pos)
    for lineno, start, end, codes, _, _ in noqa_directives(d.doc.source, d.language):
        if lineno != line or codes is None or not start <= col < end:
            continue
        text = d.doc.source_lines[line - 1]
        directive = text[start - 1:end - 1]
        m = _NOQA_CODES.match(directive)
        for c in _CODE.finditer(directive, m.end() if m else 0):
            a, b = start + c.start(), start + c.end()
            rule = d.rules.get(c.group(0).upper())
            if a <= col <= b and rule is not None:
                return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=rule_markdown(rule)),
                               range=t.Range(start=d.doc.position(line, a), end=d.doc.position(line, b)))
    found: List[Tuple[Finding, t.Range]] = []
    for f in d.findings:
        rng = d.doc.finding_range(f)
        if _overlaps(rng, t.Range(start=pos, end=pos)) and f.code in d.rules:
            found.append((f, rng))
    if not found:
        return None
    codes = list(dict.fromkeys(f.code for f, _ in found))
    pages = "\n\n---\n\n".join(rule_markdown(d.rules[c]) for c in codes)
    return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=pages), range=found[0][1])


__all__ = ["Text", "Document", "diagnostic", "config_error_diagnostic", "note_diagnostic", "code_actions", "hover",
           "noqa_edit", "replace_changed", "docs_url", "rule_markdown", "FIX_ALL_KIND", "SOURCE"]
