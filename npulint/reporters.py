"""Output formats. ``text``: ``path:line:col: CODE [severity] message`` one finding a line
(what editors parse); ``full``: the same with the source line and a caret; ``json``: a list of objects;
``json-lines``: one object a line; ``junit``: JUnit XML; ``gitlab``: GitLab Code Quality;
``github``: GitHub Actions workflow commands; ``sarif``: SARIF 2.1.0. Summaries go to stderr
so stdout stays machine-readable."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from typing import Dict, List, Optional, TextIO

from npulint.model import Finding, Rule

# ("concise": ruff's name for the one-line format, which is "text" here)
FORMATS = ("text", "concise", "full", "json", "json-lines", "junit", "gitlab", "github", "sarif")


def _fixable(f: Finding, unsafe: bool) -> bool:
    """The finding's fix is one ``--fix`` applies (an unsafe one only with ``--unsafe-fixes``)."""
    from npulint.fixes import applicable

    return applicable(f.fix, unsafe)


_SEVERITY_COLOUR = {"error": "red", "warning": "yellow"}  # info: cyan


def _header(f: Finding, rules: Dict[str, Rule], unsafe: bool, colour: bool) -> str:
    """``path:line:col: CODE [severity] [*] message``: the rule's severity (what a problem
    matcher tells errors from warnings by), ``[*]`` (ruff's mark) when ``--fix`` would fix it;
    with *colour*, the path bold, the code in its severity's colour, the mark cyan."""
    import click

    def style(text: str, **kw) -> str:
        return click.style(text, **kw) if colour else text

    rule = rules.get(f.code)
    sev = rule.severity if rule else "error"
    fg = _SEVERITY_COLOUR.get(sev, "cyan")
    mark = style("[*]", fg="cyan") + " " if _fixable(f, unsafe) else ""
    return (f"{style(printable(f.path), bold=True)}:{f.line}:{f.column}: {style(f.code, fg=fg, bold=True)} "
            f"{style(f'[{sev}]', fg=fg)} {mark}{printable(f.message)}")


def write_text(findings: List[Finding], out: TextIO, unsafe: bool = False, colour: bool = False,
               rules: Optional[Dict[str, Rule]] = None) -> None:
    """One finding a line, :func:`_header`."""
    for f in findings:
        out.write(_header(f, rules or {}, unsafe, colour) + "\n")


def use_colour(out: TextIO, mode: str = "auto") -> bool:
    """``--color``: ``always``, ``never``, or ``auto``: colour only on a terminal, and never when
    ``NO_COLOR`` is set (https://no-color.org); ``FORCE_COLOR`` turns it on elsewhere."""
    if mode in ("always", "never"):
        return mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


def _source_line(path: str, line: int, cache: Dict[str, Optional[List[str]]],
                 sources: Optional[Dict[str, str]] = None, file: str = "") -> Optional[str]:
    """Line *line* of the finding's displayed *path*: from *sources* (by displayed path: a
    buffer), else read from the *file* the run read (else the displayed path)."""
    if path not in cache:
        text = (sources or {}).get(path)
        if text is None:
            try:
                from npulint.source import decode, detect_language

                from npulint.source import read_regular

                data = read_regular(file or path, 64 << 20)  # never a FIFO or a device, never unbounded
                text = decode(data, detect_language(file or path, data[:256]) or "python")
            except Exception:  # unreadable, binary, gone: the excerpt is only a courtesy
                text = None
        if text is not None:
            from npulint.source import python_lines

            # the lines findings count; a byte that is not UTF-8 (a lone surrogate after
            # decoding) is shown as U+FFFD, one for one, so the caret stays in its column
            text = _SURROGATE.sub("\ufffd", text)
            cache[path] = [ln.rstrip("\r\n") for ln in python_lines(text)]
        else:
            cache[path] = None
    lines = cache[path]
    if lines is None or not 1 <= line <= len(lines):
        return None
    return lines[line - 1]


_SURROGATE = re.compile("[\udc80-\udcff]")


def write_full(findings: List[Finding], rules: Dict[str, Rule], out: TextIO, colour: bool = False,
               sources: Optional[Dict[str, str]] = None, unsafe: bool = False) -> None:
    """``path:line:col: CODE [severity] message``, then the source line with a caret under
    the column (``^~~~`` to the end of a one-line range), and the related locations."""
    import click

    def style(text: str, **kw) -> str:
        return click.style(text, **kw) if colour else text

    cache: Dict[str, Optional[List[str]]] = {}
    for f in findings:
        rule = rules.get(f.code)
        sev_colour = _SEVERITY_COLOUR.get(rule.severity if rule else "error", "cyan")
        out.write(_header(f, rules, unsafe, colour) + "\n")
        src = _source_line(f.path, f.line, cache, sources, f.file)
        if src is not None:
            src = src.expandtabs(1)  # one column a character, as the column counts
            width = len(str(f.line))
            col = max(f.column, 1)
            span = 1
            if f.end_line == f.line and f.end_column > f.column:
                span = min(f.end_column, len(src) + 1) - col
            caret = "^" + "~" * max(span - 1, 0)
            out.write(f" {' ' * width} |\n")
            out.write(f" {style(str(f.line), fg='blue')} | {src}\n")
            out.write(f" {' ' * width} | {' ' * (col - 1)}{style(caret, fg=sev_colour, bold=True)}\n")
        for p, ln, c in f.related:
            out.write(f"  {style('note', fg='cyan')}: related location {printable(p)}:{ln}:{c}\n")
        if f.fix is not None and f.fix.edits:
            how = "npulint --fix" if f.fix.applicability == "safe" else "unsafe: npulint --fix --unsafe-fixes"
            out.write(f"  {style('fix', fg='green')}: {f.fix.description} ({how})\n")
        out.write("\n")


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def write_github(findings: List[Finding], rules: Dict[str, Rule], out: TextIO) -> None:
    """GitHub Actions workflow commands: annotations on the pull request's diff. Errors as
    ``::error``, warnings as ``::warning``, info rules as ``::notice``."""
    for f in findings:
        rule = rules.get(f.code)
        sev = rule.severity if rule else "error"
        command = {"error": "error", "warning": "warning"}.get(sev, "notice")
        props = [f"file={_escape_property(f.path.replace(os.sep, '/'))}", f"line={f.line}", f"col={f.column}"]
        if f.end_line:
            props.append(f"endLine={f.end_line}")
            if f.end_line == f.line and f.end_column:
                props.append(f"endColumn={f.end_column}")
        title = f"{f.code} {rule.name}" if rule else f.code
        props.append(f"title={_escape_property(title)}")
        out.write(f"::{command} {','.join(props)}::{_escape_data(f'{f.code} {f.message}')}\n")


def _json_fix(fix) -> Optional[dict]:
    """ruff's ``fix`` object: message, applicability, edits (content, location, end_location;
    1-based rows and character columns, the end exclusive)."""
    if fix is None or not fix.edits:
        return None
    return {
        "message": fix.description,
        "applicability": fix.applicability,
        "edits": [{"content": e.text, "location": {"row": e.line, "column": e.column},
                   "end_location": {"row": e.end_line, "column": e.end_column}} for e in fix.edits],
    }


def to_json(findings: List[Finding], rules: Dict[str, Rule]) -> List[dict]:
    from npulint.docs import published_url

    items = []
    for f in findings:
        rule = rules.get(f.code)
        items.append({
            "path": f.path,
            "line": f.line,
            "column": f.column,
            "end_line": f.end_line or f.line,
            "end_column": f.end_column or f.column,
            "code": f.code,
            "name": rule.name if rule else "",
            "severity": rule.severity if rule else "error",
            "message": f.message,
            "related": [{"path": p, "line": ln, "column": c} for p, ln, c in f.related],
            "fix": _json_fix(f.fix),
            "url": published_url(f.code),
        })
    return items


def _ascii_only(out: TextIO) -> bool:
    """JSON for a stream that cannot encode all of Unicode (an ASCII or Latin-1 locale) uses
    ``\\uXXXX`` escapes, so it stays valid JSON there."""
    encoding = (getattr(out, "encoding", None) or "utf-8").lower().replace("-", "").replace("_", "")
    return encoding not in ("utf8", "utf16", "utf32")


def write_json(findings: List[Finding], rules: Dict[str, Rule], out: TextIO) -> None:
    json.dump(to_json(findings, rules), out, indent=2, ensure_ascii=_ascii_only(out))
    out.write("\n")


def write_json_lines(findings: List[Finding], rules: Dict[str, Rule], out: TextIO) -> None:
    """One JSON object a line (the objects of ``json``)."""
    for item in to_json(findings, rules):
        out.write(json.dumps(item, ensure_ascii=_ascii_only(out)) + "\n")


def to_junit(findings: List[Finding], rules: Dict[str, Rule]) -> str:
    """JUnit XML as ruff writes it: one ``testsuite`` a file with findings, one ``testcase``
    with a ``failure`` a finding; a passing ``testcase`` when there are none."""
    import xml.etree.ElementTree as ET

    suites = ET.Element("testsuites", name="npulint", tests=str(len(findings) or 1), failures=str(len(findings)),
                        errors="0")
    if not findings:
        suite = ET.SubElement(suites, "testsuite", name="npulint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="No errors found", classname="npulint")
    by_path: Dict[str, List[Finding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    for path, group in by_path.items():
        suite = ET.SubElement(suites, "testsuite", name=_xml_text(path), tests=str(len(group)),
                              failures=str(len(group)), errors="0", disabled="0", package="org.npulint")
        for f in group:
            rule = rules.get(f.code)
            case = ET.SubElement(suite, "testcase", name=f"org.npulint.{f.code}", classname=_xml_text(path),
                                 line=str(f.line), column=str(f.column))
            failure = ET.SubElement(case, "failure", message=_xml_text(f.message),
                                    type=rule.severity if rule else "error")
            failure.text = _xml_text(f"line {f.line}, col {f.column}, {f.code} {f.message}")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_text(s: str) -> str:
    """*s* with the characters XML 1.0 cannot hold shown as ``\\xNN``."""
    return _XML_BAD.sub(lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 256 else "\ufffd", s)


def write_junit(findings: List[Finding], rules: Dict[str, Rule], out: TextIO) -> None:
    out.write(to_junit(findings, rules))


_GITLAB_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def to_gitlab(findings: List[Finding], rules: Dict[str, Rule]) -> List[dict]:
    """GitLab Code Quality (a CodeClimate subset): description, check_name, fingerprint (unique
    a finding, stable across runs), severity, location.path (relative to ``CI_PROJECT_DIR`` when
    set, else to the current folder) and location.lines.begin/end."""
    import hashlib

    base = os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    items, seen = [], set()
    for f in findings:
        rule = rules.get(f.code)
        path = f.path
        if os.path.isabs(path):
            try:
                path = os.path.relpath(path, base)
            except ValueError:
                pass
        elif os.environ.get("CI_PROJECT_DIR"):
            path = os.path.relpath(os.path.abspath(path), base)
        path = path.replace(os.sep, "/")
        key = f"{path}\0{f.code}\0{f.message}"
        n = 0
        while True:  # two identical findings in one file get fingerprints of their own
            fingerprint = hashlib.sha256(f"{key}\0{n}".encode("utf-8", "surrogateescape")).hexdigest()[:32]
            if fingerprint not in seen:
                seen.add(fingerprint)
                break
            n += 1
        items.append({
            "description": f"{f.code} {f.message}",
            "check_name": f.code,
            "fingerprint": fingerprint,
            "severity": _GITLAB_SEVERITY.get(rule.severity if rule else "error", "major"),
            "location": {"path": path, "lines": {"begin": f.line, "end": max(f.end_line or f.line, f.line)}},
        })
    return items


def write_gitlab(findings: List[Finding], rules: Dict[str, Rule], out: TextIO) -> None:
    json.dump(to_gitlab(findings, rules), out, indent=2, ensure_ascii=_ascii_only(out))
    out.write("\n")


def rules_json(rules: List[Rule]) -> List[dict]:
    """``--list-rules --format json``: every rule, as ``--explain`` knows it."""
    from npulint.docs import published_url

    return [{
        "code": r.code, "name": r.name, "severity": r.severity, "default": r.default_enabled,
        "summary": r.summary, "explanation": r.explanation, "how_to_fix": r.fix, "source": r.source,
        "fix": r.fix_applicability if r.autofix else None,
        "url": published_url(r.code),
    } for r in rules]


def write_statistics(findings: List[Finding], rules: Dict[str, Rule], out: TextIO, unsafe: bool = False,
                     output_format: str = "text") -> None:
    """The count per rule, most first; with ruff's column when some finding is fixable: ``[*]``
    for a rule whose findings ``--fix`` would fix (all of them, or ``[*] N of M fixable`` for
    some), ``[ ]`` for the others. With the json format, ruff's JSON list (``code``, ``name``,
    ``count``, ``fixable``, and ``fixable_count``)."""
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if _fixable(f, unsafe))
    if output_format == "json":
        rows = [{"code": code, "name": rules[code].name if code in rules else "", "count": n,
                 "fixable": fixable.get(code, 0) == n and n > 0, "fixable_count": fixable.get(code, 0)}
                for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        json.dump(rows, out, indent=2, ensure_ascii=_ascii_only(out))
        out.write("\n")
        return
    width = max((len(str(n)) for n in counts.values()), default=1)
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = rules.get(code)
        name = rule.name if rule else ""
        if fixable:
            k = fixable.get(code, 0)
            name = ("[ ] " if not k else "[*] ") + name + (f" ({k} of {n} fixable)" if 0 < k < n else "")
        out.write(f"{n:>{width}}  {code}  {name}\n")


def fix_summary(findings: List[Finding], unsafe: bool = False) -> Optional[str]:
    """ruff's line under the summary: how many findings ``--fix`` would fix, and how many more
    ``--unsafe-fixes`` would; None when there are none."""
    from npulint.fixes import applicable

    n = sum(1 for f in findings if applicable(f.fix, unsafe))
    hidden = 0 if unsafe else sum(1 for f in findings if applicable(f.fix, True) and not applicable(f.fix))
    hint = (f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option"
            if hidden else "")
    if n:
        return f"[*] {n} fixable with the `--fix` option" + (f" ({hint})." if hint else ".")
    if hidden:
        return f"No fixes available ({hint})."
    return None


def summary(findings: List[Finding], files: int, not_analysed: int = 0) -> str:
    """The summary line of a run over *files* files, *not_analysed* of which were not analysed
    (over ``--max-file-size``, or unreadable where NPU002 is not enabled: each named on stderr):
    those are counted as skipped, not as checked."""
    checked = files - not_analysed
    counted = f"{checked} file{'s' if checked != 1 else ''} checked"
    if not_analysed:
        counted += f", {not_analysed} file{'s' if not_analysed != 1 else ''} skipped"
    if not findings:
        return f"All checks passed ({counted})."
    n_files = len({f.path for f in findings})
    return (f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} in {n_files} "
            f"file{'s' if n_files != 1 else ''} ({counted}).")


def rule_table(rules: List[Rule]) -> str:
    from npulint.docs import rule_table as table

    return table(rules)


def explain(rule: Rule) -> str:
    """The rule's documentation page (``docs/rules/NPUxxx.md``), as ``--explain`` prints it."""
    from npulint.docs import rule_page

    return rule_page(rule)


# -- SARIF 2.1.0 -----------------------------------------------------------------------------

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _artifact(path: str) -> dict:
    from urllib.parse import quote

    raw = path.encode("utf-8", "surrogateescape")  # a file name's own bytes, percent-encoded
    if os.path.isabs(path):
        return {"uri": "file://" + quote(raw.replace(os.sep.encode(), b"/"), safe="/:")}
    return {"uri": quote(raw.replace(os.sep.encode(), b"/"), safe="/"), "uriBaseId": "%SRCROOT%"}


def _region(line: int, column: int, end_line: int = 0, end_column: int = 0) -> dict:
    region = {"startLine": max(line, 1), "startColumn": max(column, 1)}
    if end_line and (end_line, end_column) > (line, column):
        region["endLine"] = end_line
        region["endColumn"] = max(end_column, 1)
    return region


def to_sarif(findings: List[Finding], rules: Dict[str, Rule], cwd: Optional[str] = None) -> dict:
    """One SARIF run: every rule (with its documentation) and every finding, with related
    locations for cross-file findings and the automatic fix where there is one. Columns
    count Unicode code points (``columnKind``), as npulint's do."""
    from pathlib import Path

    from npulint import __version__
    from npulint.docs import help_uri, rule_page

    ordered = sorted(rules.values(), key=lambda r: r.code)
    index = {r.code: i for i, r in enumerate(ordered)}
    descriptors = []
    for r in ordered:
        d = {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": r.explanation},
            "help": {"text": r.summary + " " + (r.fix or ""), "markdown": rule_page(r)},
            "defaultConfiguration": {"level": _LEVEL[r.severity], "enabled": r.default_enabled},
            "properties": {"source": r.source, "fixable": r.autofix},
        }
        uri = help_uri(r.code)
        if uri:
            d["helpUri"] = uri
        descriptors.append(d)
    results = []
    for f in findings:
        rule = rules.get(f.code)
        res = {
            "ruleId": f.code,
            "level": _LEVEL[rule.severity] if rule else "error",
            "message": {"text": printable(f.message)},
            "locations": [{"physicalLocation": {
                "artifactLocation": _artifact(f.path),
                "region": _region(f.line, f.column, f.end_line, f.end_column)}}],
        }
        if f.code in index:
            res["ruleIndex"] = index[f.code]
        if f.related:
            res["relatedLocations"] = [
                {"id": i, "message": {"text": "related location"},
                 "physicalLocation": {"artifactLocation": _artifact(p), "region": _region(ln, c)}}
                for i, (p, ln, c) in enumerate(f.related, 1)]
        if f.fix is not None and f.fix.edits:
            res["fixes"] = [{
                "description": {"text": f.fix.description},
                "artifactChanges": [{
                    "artifactLocation": _artifact(f.path),
                    "replacements": [{
                        "deletedRegion": {"startLine": e.line, "startColumn": e.column,
                                          "endLine": e.end_line, "endColumn": e.end_column},
                        "insertedContent": {"text": e.text}} for e in f.fix.edits]}]}]
        results.append(res)
    root = Path(cwd or os.getcwd()).resolve().as_uri().rstrip("/") + "/"
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "npulint", "version": __version__, "semanticVersion": __version__,
                                "rules": descriptors}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def write_sarif(findings: List[Finding], rules: Dict[str, Rule], out: TextIO) -> None:
    json.dump(to_sarif(findings, rules), out, indent=2, ensure_ascii=_ascii_only(out))
    out.write("\n")


def printable(text: str) -> str:
    """*text* as valid UTF-8: the bytes of a file name that are not UTF-8 (lone surrogates
    after ``os.fsdecode``) are shown as ``\\xNN``; any other text is unchanged."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _printable_finding(f: Finding) -> Finding:
    import dataclasses

    path, message = printable(f.path), printable(f.message)
    related = tuple((printable(p), ln, c) for p, ln, c in f.related)
    if (path, message, related) == (f.path, f.message, tuple(f.related)):
        return f
    return dataclasses.replace(f, path=path, message=message, related=related)


def write(output_format: str, findings: List[Finding], rules: Dict[str, Rule], out: TextIO,
          sources: Optional[Dict[str, str]] = None, unsafe: bool = False, colour: Optional[bool] = None) -> None:
    """Write *findings* in *output_format* (one of :data:`FORMATS`); *sources* gives the text
    of paths that are not on disk as linted (standard input). Paths and messages are written
    as valid UTF-8 (:func:`printable`); SARIF's URIs percent-encode a path's bytes."""
    if output_format == "sarif":
        write_sarif(findings, rules, out)
        return
    if output_format == "full":
        # the source excerpt is read from the real path; only what is shown is made printable
        write_full(findings, rules, out, colour=use_colour(out) if colour is None else colour, sources=sources,
                   unsafe=unsafe)
        return
    findings = [_printable_finding(f) for f in findings]
    if output_format == "json":
        write_json(findings, rules, out)
    elif output_format == "json-lines":
        write_json_lines(findings, rules, out)
    elif output_format == "junit":
        write_junit(findings, rules, out)
    elif output_format == "gitlab":
        write_gitlab(findings, rules, out)
    elif output_format == "github":
        write_github(findings, rules, out)
    else:
        write_text(findings, out, unsafe, colour=bool(colour) if colour is not None else use_colour(out), rules=rules)


def rules_listing(rules: List[Rule], output_format: str) -> str:
    """``--list-rules``: a JSON list for ``json`` (one object a line for ``json-lines``), else
    the Markdown table."""
    if output_format == "json":
        return json.dumps(rules_json(rules), indent=2)
    if output_format == "json-lines":
        return "\n".join(json.dumps(item) for item in rules_json(rules))
    return rule_table(rules)


def has_summary(output_format: str) -> bool:
    """Formats read by people get the summary line (on stderr)."""
    return output_format in ("text", "full")
