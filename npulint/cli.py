"""The ``npulint`` command."""

from __future__ import annotations

import os
import sys
from typing import List, Optional, Sequence

import click

from npulint import __version__
from npulint.config import ConfigError, ConfigResolver, check_codes
from npulint.reporters import FORMATS

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _checked(values: Sequence[str], option: str, known: Sequence[str]) -> List[str]:
    return check_codes(_codes(values, option), known, option)


def _codes(values: Sequence[str], option: str) -> List[str]:
    """The codes of a repeatable *option*'s values (comma- or space-separated); a value that
    names none (``--select ""``) is an error, as in ruff, not an empty selection."""
    out: List[str] = []
    for v in values:
        codes = [c for c in v.replace(" ", ",").split(",") if c]
        if not codes:
            raise click.BadParameter(f"no rule code in {v!r}", param_hint=f"'{option}'")
        out.extend(codes)
    return out


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, metavar="CODES",
              help="Rule codes or prefixes to enable (comma-separated), replacing the configured selection.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rule codes or prefixes to enable in addition.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rule codes or prefixes to disable.")
@click.option("--fixable", multiple=True, metavar="CODES",
              help="Rules whose fixes may be applied (replacing the configured fixable).")
@click.option("--unfixable", multiple=True, metavar="CODES", help="Rules whose fixes are never applied.")
@click.option("--extend-fixable", multiple=True, metavar="CODES", help="Rules whose fixes may be applied, in addition.")
@click.option("--format", "--output-format", "output_format",
              type=click.Choice(FORMATS),
              default="text", show_default=True, metavar="FORMAT",
              help="Output format: text (path:line:col: CODE message), full (with the source line), json, "
                   "json-lines, junit (JUnit XML), gitlab (Code Quality), github (Actions annotations), "
                   "sarif (SARIF 2.1.0). With --list-rules: json for a JSON list.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), metavar="PATH",
              help="Write the findings (or statistics) to this file instead of standard output.")
@click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the text and full formats (auto: on a terminal, unless NO_COLOR; FORCE_COLOR forces it).")
@click.option("--config", type=click.Path(dir_okay=False), help="Use this configuration file.")
@click.option("--stdin-filename", metavar="PATH",
              help="Lint standard input ('-') as if it were this file (config and per-file-ignores apply).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
@click.option("-q", "--quiet", is_flag=True, help="Do not print the summary line.")
@click.option("--fix", is_flag=True, help="Apply the safe automatic fixes, then report what is left.")
@click.option("--fix-only", is_flag=True, help="Apply the safe automatic fixes and report nothing else.")
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="With --fix or --fix-only: exit 1 when a file was fixed, even if nothing is left.")
@click.option("--unsafe-fixes/--no-unsafe-fixes", "unsafe_fixes", default=None,
              help="Apply (with --fix, --fix-only, --diff) and show as fixable the unsafe fixes too: those that "
                   "may change what the code does (default: the configuration's unsafe-fixes, else no).")
@click.option("--add-noqa", is_flag=True,
              help="Add '# noqa: CODE' directives that suppress every finding (in a shell script a comment "
                   "line above the command), then exit.")
@click.option("--diff", is_flag=True, help="Print the automatic fixes as a unified diff; write nothing.")
@click.option("--jobs", "-j", default="auto", show_default=True, metavar="N|auto",
              help="Worker processes for parsing ('auto': one process for small runs, up to one per CPU "
                   "when there is enough to parse).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(), envvar="NPULINT_CACHE_DIR", show_envvar=True,
              help="Folder of the result cache (default: .npulint_cache/ beside the configuration file, "
                   "else in the current folder).")
@click.option("--max-file-size", default="256K", show_default=True, metavar="SIZE",
              help="Do not analyse files larger than this (bytes, or with K/M suffix; 0: no limit); "
                   "each skipped file is named on standard error.")
@click.option("--exclude", multiple=True, metavar="PATTERNS",
              help="File patterns to leave out of the walk, replacing the configured exclude and its "
                   "defaults (comma-separated; relative to the working folder; as ruff's).")
@click.option("--extend-exclude", multiple=True, metavar="PATTERNS",
              help="File patterns to leave out of the walk, in addition to the configured exclude.")
@click.option("--force-exclude", is_flag=True,
              help="Apply exclude and extend-exclude to files named on the command line too (for pre-commit, "
                   "which names every changed file).")
@click.option("--show-settings", is_flag=True, help="Print the settings that apply to the first PATH and exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be linted and exit.")
@click.option("--list-rules", is_flag=True, help="List every rule (Markdown; JSON with --format json) and exit.")
@click.option("--explain", metavar="CODE|NAME", help="Explain a rule (by code or name) and exit.")
@click.version_option(__version__, prog_name="npulint")
def cli(paths, select, extend_select, ignore, fixable, unfixable, extend_fixable, output_format, output_file, color, config, stdin_filename, exit_zero, statistics, quiet,
        fix, fix_only, exit_non_zero_on_fix, unsafe_fixes, add_noqa, diff, jobs, no_cache, cache_dir, max_file_size, exclude, extend_exclude, force_exclude, show_settings, show_files, list_rules, explain):
    """Lint Ascend NPU model scripts (PATHS: files or folders; default '.'; '-' reads standard input).

    \b
    npulint server   the language server for editors (LSP over standard input/output:
                     diagnostics, quick fixes, hover); it needs pygls:
                     pip install 'npulint[lsp]'
    """
    from npulint import registry, reporters

    if add_noqa and (fix or fix_only or diff):
        raise click.UsageError("--add-noqa cannot be combined with --fix, --fix-only or --diff")
    if add_noqa and ("-" in paths or (not paths and stdin_filename is not None)):
        raise click.UsageError("--add-noqa cannot be used with standard input ('-'): it edits files")
    n_jobs = _jobs(jobs)
    size_limit = _size(max_file_size)
    paths = list(paths) or (["-"] if stdin_filename is not None else ["."])
    cache = None
    if not (no_cache or list_rules or explain is not None or show_settings or show_files):
        cache = _open_cache(cache_dir, config, paths)
    # The rule table comes from the cache when this engine wrote it: a run answered from the
    # cache imports neither LibCST nor the rule modules.
    rules = _cached_rules(cache) if cache is not None else None
    rules_to_cache = rules is None and cache is not None
    if rules is None:
        rules = registry.load()[0]

    def checkers():
        return registry.load()[1]

    by_code = {r.code: r for r in rules}
    known = [r.code for r in rules]
    if list_rules:
        _emit(output_file, reporters.rules_listing(rules, output_format) + "\n")
        return EXIT_OK
    if explain is not None:
        wanted = explain.strip()
        rule = by_code.get(wanted.upper()) or next((r for r in rules if r.name == wanted.lower()), None)
        if rule is None:
            from npulint.config import _did_you_mean

            hint = _did_you_mean(wanted.lower(), [r.name for r in rules])
            raise ConfigError(f"unknown rule code or name '{explain}'{hint} (see --list-rules)")
        _emit(output_file, reporters.explain(rule))
        return EXIT_OK

    resolver = ConfigResolver(
        rules, config,
        select=_checked(select, "--select", known) if select else None,
        extend_select=_checked(extend_select, "--extend-select", known) if extend_select else (),
        ignore=_checked(ignore, "--ignore", known) if ignore else (),
        fixable=_checked(fixable, "--fixable", known) if fixable else None,
        unfixable=_checked(unfixable, "--unfixable", known) if unfixable else (),
        extend_fixable=_checked(extend_fixable, "--extend-fixable", known) if extend_fixable else (),
        exclude=_patterns(exclude) if exclude else None, extend_exclude=_patterns(extend_exclude))

    if show_settings:
        first = paths[0] if paths[0] != "-" else (stdin_filename or ".")
        _emit(output_file, _settings_text(resolver, os.path.abspath(first), rules))
        return EXIT_OK

    from npulint import discovery, pipeline
    from npulint.source import PYTHON, detect_language

    files: List = []
    missing: List[str] = []
    for p in paths:
        if p == "-":
            continue
        found, miss = discovery.discover([p], resolver.for_path(p)[0], force_exclude=force_exclude, cache=cache)
        files.extend(found)
        missing.extend(miss)
    stdin = None
    if "-" in paths:
        data = sys.stdin.buffer.read()
        spath = os.path.abspath(stdin_filename) if stdin_filename else os.path.join(os.getcwd(), "-")
        ssettings = resolver.for_path(spath)[0]
        if stdin_filename and (force_exclude or ssettings.force_exclude) and \
                discovery.Excluder(ssettings).excluded_with_parents(spath, False):
            # an excluded file is not linted (ruff does the same); --fix gives it back unchanged
            if fix or fix_only:
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
            return EXIT_OK
        stdin = (spath, data)
    if show_files:  # ruff's: the absolute path of each file a run would lint (a missing path is none)
        _emit(output_file, "".join(reporters.printable(f) + "\n" for f in sorted({f[0] for f in files})))
        return EXIT_OK
    # a path that is not there is linted as a file that cannot be read (ruff's E902): NPU002
    # where it is enabled, else named on stderr; the other paths are linted all the same
    files.extend((os.path.abspath(p), detect_language(p) or PYTHON, True) for p in missing)
    seen = set()
    files = [f for f in sorted(files) if not (f[0] in seen or seen.add(f[0]))]
    for f in files:
        resolver.for_file(f[0])
    root_settings = resolver.for_path(paths[0] if paths[0] != "-" else (stdin[0] if stdin else "."))[0]
    enabled = resolver.all_enabled()
    if rules_to_cache:  # written only now that every configuration has loaded: a bad one creates nothing
        cache.put("rules", cache.key(("rules",)), tuple(rules))

    def lint(overrides=None, stdin_data=stdin):
        return pipeline.run(files, root_settings, checkers, enabled, stdin_data, settings_for=resolver.for_path,
                            overrides=overrides, options=options)

    options = pipeline.RunOptions(cache=cache, jobs=n_jobs, max_file_size=size_limit,
                                  walked=tuple(os.path.abspath(p) for p in paths if p != "-" and os.path.isdir(p)))
    colour = None if color == "auto" else color == "always"
    policy_for = _policies(resolver)
    unsafe = bool(root_settings.unsafe_fixes) if unsafe_fixes is None else unsafe_fixes

    if add_noqa:
        return _add_noqa_run(lint, files, quiet, size_limit)
    if fix or fix_only or diff:
        return _fix_run(lint, files, stdin, by_code, output_format, statistics, quiet, exit_zero,
                        write=not diff, report=not (fix_only or diff), max_file_size=size_limit,
                        unsafe=unsafe, policy_for=policy_for, exit_non_zero_on_fix=exit_non_zero_on_fix,
                        output_file=output_file, colour=colour)
    from npulint.fixes import resolve_fixes

    result = lint()
    result.findings = resolve_fixes(result.findings, policy_for)
    if not quiet:
        for note in result.notes:
            click.echo(f"npulint: warning: {note}", err=True)

    with _output(output_file, sys.stdout) as out:
        if statistics:
            reporters.write_statistics(result.findings, by_code, out, unsafe, output_format)
        else:
            reporters.write(output_format, result.findings, by_code, out, sources=_stdin_source(stdin),
                            unsafe=unsafe, colour=colour)
    if not quiet and reporters.has_summary(output_format):
        click.echo(reporters.summary(result.findings, result.files, len(result.notes)), err=True)
        fixable = reporters.fix_summary(result.findings, unsafe)
        if fixable:
            click.echo(fixable, err=True)
    if result.findings and not exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


class _output:
    """The stream the report goes to: *default* (flushed at the end), or the ``--output-file``
    (its folder made, written as UTF-8, closed at the end). A file that cannot be written is a
    one-line error."""

    def __init__(self, path: Optional[str], default):
        self.path, self.default, self.stream = path, default, None

    def __enter__(self):
        if self.path is None:
            self.stream = self.default
            return self.stream
        try:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            self.stream = open(self.path, "w", encoding="utf-8", errors="backslashreplace", newline="\n")
        except OSError as exc:
            raise ConfigError(f"cannot write the output file {self.path}: {exc.strerror or exc}")
        return self.stream

    def __exit__(self, *exc):
        if self.stream is self.default:
            self.stream.flush()
            return False
        try:
            self.stream.close()
        except OSError as err:
            if exc[0] is None:
                raise ConfigError(f"cannot write the output file {self.path}: {err.strerror or err}")
        return False


def _emit(output_file: Optional[str], text: str) -> None:
    with _output(output_file, sys.stdout) as out:
        out.write(text)


def _settings_text(resolver, path: str, rules) -> str:
    """``--show-settings``: the settings that govern *path*, one ``key = value`` a line (values
    as TOML/JSON write them), then what they resolve to."""
    import json

    from npulint.config import KEYS
    from npulint.fixes import FixPolicy
    from npulint.model import Fix

    settings, enabled = resolver.for_path(path)
    lines = [f"Resolved settings for: {path}",
             f"Settings path: {settings.config_path or '(none: the defaults)'}"]
    lines += [f"Extends: {ext}" for ext in settings.extends]
    lines += [f"Relative patterns from: {settings.root}", ""]
    for key in KEYS:
        if key == "extend":
            continue
        value = getattr(settings, key.replace("-", "_"))
        if isinstance(value, dict):
            value = {k: list(v) for k, v in value.items()}
        lines.append(f"{key} = {json.dumps(value)}")
    policy = FixPolicy.of(settings)
    fixable = [r for r in rules if r.autofix and policy.is_fixable(r.code)]
    unsafe = [r.code for r in fixable if policy.applicability(r.code, Fix("", (), r.fix_applicability)) == "unsafe"]
    fixable = [r.code for r in fixable]
    lines += ["", "# resolved", f"enabled = {json.dumps(sorted(enabled))}",
              f"fixable-rules = {json.dumps(fixable)}", f"unsafe-fix-rules = {json.dumps(unsafe)}"]
    return "\n".join(lines) + "\n"


def _policies(resolver):
    """*policy_for(displayed path)*: the fix policy of the configuration that governs the path."""
    from npulint.fixes import FixPolicy

    by_settings = {}

    def policy_for(display: str):
        settings = resolver.for_path(os.path.abspath(display))[0]
        policy = by_settings.get(id(settings))
        if policy is None:
            policy = by_settings[id(settings)] = FixPolicy.of(settings)
        return policy

    return policy_for


def _stdin_source(stdin):
    """The text of a standard-input buffer under the path its findings carry (for ``full``,
    which shows the source line: the buffer, not the file on disk)."""
    if stdin is None:
        return None
    from npulint import pipeline
    from npulint.source import PYTHON, Unreadable, decode, detect_language

    try:
        text = decode(stdin[1], detect_language(stdin[0], stdin[1][:256]) or PYTHON)
    except Unreadable:
        return None
    return {pipeline.display_path(stdin[0]): text}


def _add_noqa_run(lint, files, quiet: bool, max_file_size: int = 0) -> int:
    """``--add-noqa`` (ruff's): lint the files' bytes, add a ``# noqa`` directive for every
    finding that can have one (:func:`npulint.noqa.add_noqa`: never where it would not suppress
    it or would break the file, which must still parse) and write each changed file as ``--fix``
    does (atomically, only if it still holds the bytes that were linted). Exit 0; 2 when a file
    could not be written."""
    from npulint import fixes as fx
    from npulint.noqa import add_noqa
    from npulint.source import Unreadable, decode

    limit = max_file_size or (1 << 62)
    linted = {}
    for path, _, _ in files:
        try:
            data = fx.read_for_fix(path, limit)
        except OSError:
            data = None
        if data is not None:
            linted[path] = data
    result = lint(overrides=dict(linted))
    language_of = {p: lang for p, lang, _ in files}
    by_file = {}
    for f in result.findings:  # by the file the run read (a finding's displayed path may differ)
        by_file.setdefault(f.file, []).append(f)
    added, failed = 0, False
    with fx.removing_temps_on_signals():
        for path, found in sorted(by_file.items()):
            data = linted.get(path)
            if data is None:
                continue
            language, display = language_of[path], found[0].path
            try:
                text = decode(data, language)
            except Unreadable:
                continue
            new, n = add_noqa(text, language, found)
            if not n or new == text:
                continue
            try:
                fx.write_fixed(path, fx.encode_like(data, new, language), expected=data)
            except fx.Changed:
                click.echo(f"npulint: error: {display} changed while npulint was editing it; left as it is", err=True)
                failed = True
                continue
            except OSError as exc:
                click.echo(f"npulint: error: cannot write {display}: {exc.strerror or exc}", err=True)
                failed = True
                continue
            added += n
    if not quiet:
        click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''}.", err=True)
    return EXIT_ERROR if failed else EXIT_OK


def _fix_run(lint, files, stdin, by_code, output_format, statistics, quiet, exit_zero, write, report,
             max_file_size=0, unsafe=False, policy_for=None, exit_non_zero_on_fix=False, output_file=None,
             colour=None):
    """``--fix``, ``--fix-only``, ``--diff``: the library's fix loop (:func:`npulint.fixes.fix_loop`),
    then the fixed files written (*write*, :func:`npulint.fixes.write_all`) or shown as a diff,
    and what remains reported. A file left as it was (edited meanwhile, or not writable) is
    named, keeps its first-round findings, and makes the exit status 2."""
    from npulint import fixes as fx
    from npulint import pipeline, reporters

    cwd = os.getcwd()
    loop = fx.fix_loop(lint, files, stdin, max_file_size, unsafe=unsafe, policy_for=policy_for)
    where, originals, current, applied = loop.where, loop.originals, loop.current, loop.applied
    result, first = loop.result, loop.first
    changed = loop.changed
    to_stdin = stdin is not None
    if not write:  # --diff
        for display, (path, _) in sorted(where.items()):
            if path in changed:
                sys.stdout.write(fx.unified_diff(display, originals[path][1], changed[path]))
        sys.stdout.flush()
        if not quiet:
            n = len(changed)
            applied = sum(applied.get(p, 0) for p in changed)
            hidden = reporters.fix_summary(first, unsafe) or ""
            hidden = hidden[hidden.find(" ("):-1] if " (" in hidden else ""
            click.echo(f"{applied} fix{'es' if applied != 1 else ''} would be applied to {n} "
                       f"file{'s' if n != 1 else ''}{hidden}." if applied else f"No fixes available{hidden}.",
                       err=True)
        return EXIT_FINDINGS if changed and not exit_zero else EXIT_OK
    failed = set()  # displayed paths left as they were
    for path, error in fx.write_all(loop, files, skip=stdin[0] if to_stdin else None):
        shown = pipeline.display_path(path, cwd)
        click.echo(f"npulint: error: {shown} {error}" if isinstance(error, str) else
                   f"npulint: error: cannot write the fixed file {shown}: {error.strerror or error}", err=True)
        failed.add(shown)
    if to_stdin:  # the fixed source goes to stdout, findings to stderr (as ruff does)
        if stdin[0] in current:
            sys.stdout.write(current[stdin[0]])
        else:
            sys.stdout.buffer.write(stdin[1])
        sys.stdout.flush()
    # a file left as it was keeps the findings of what is on disk: the first round's
    remaining = [f for f in result.findings if f.path not in failed] + [f for f in first if f.path in failed]
    remaining.sort(key=lambda f: f.sort_key())
    written = {p for p in changed if pipeline.display_path(p, cwd) not in failed and p not in loop.same_as}
    applied_written = sum(applied.get(p, 0) for p in written)
    if report:
        with _output(output_file, sys.stderr if to_stdin else sys.stdout) as out:
            if statistics:
                reporters.write_statistics(remaining, by_code, out, unsafe, output_format)
            else:
                shown_src = _stdin_source(stdin)
                if shown_src and stdin[0] in current:
                    shown_src = {k: current[stdin[0]] for k in shown_src}
                reporters.write(output_format, remaining, by_code, out, sources=shown_src, unsafe=unsafe,
                                colour=colour)
    if not quiet and (reporters.has_summary(output_format) or not report):
        if applied_written:
            n = len(written)
            click.echo(f"Fixed {applied_written} finding{'s' if applied_written != 1 else ''} in {n} "
                       f"file{'s' if n != 1 else ''}.", err=True)
        if report:
            click.echo(reporters.summary(remaining, result.files, len(result.notes)), err=True)
            fixable = reporters.fix_summary(remaining, unsafe)
            if fixable:
                click.echo(fixable, err=True)
    if failed:
        return EXIT_ERROR
    if report and remaining and not exit_zero:
        return EXIT_FINDINGS
    if exit_non_zero_on_fix and applied_written and not exit_zero:  # ruff's: a fixed file fails the run
        return EXIT_FINDINGS
    return EXIT_OK


def _patterns(values: Sequence[str]) -> List[str]:
    """The file patterns of a repeatable option: comma-separated as ruff's, but a comma inside
    ``{a,b}`` belongs to the pattern."""
    out: List[str] = []
    for value in values:
        depth, start = 0, 0
        for i, c in enumerate(value):
            if c == "{":
                depth += 1
            elif c == "}":
                depth = max(depth - 1, 0)
            elif c == "," and depth == 0:
                out.append(value[start:i])
                start = i + 1
        out.append(value[start:])
    return [p.strip() for p in out if p.strip()]


def _jobs(value: str) -> Optional[int]:
    """None for automatic, else the number of worker processes."""
    v = str(value).strip().lower()
    if v in ("auto", "0", ""):
        return None
    try:
        n = int(v)
    except ValueError:
        n = -1
    if n < 1:
        raise click.BadParameter(f"expected a positive number or 'auto', not {value!r}", param_hint="'--jobs'")
    return n


def _size(value: str) -> int:
    v = str(value).strip().upper().rstrip("B")
    scale = 1
    if v.endswith(("K", "M", "G")):
        scale = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}[v[-1]]
        v = v[:-1]
    try:
        n = float(v)
    except ValueError:
        n = -1
    # nan, inf and 1e400 are no size; 1e-9 rounds to 0, which would mean "no limit" (only an
    # explicit 0 means that)
    if not (0 <= n < 2 ** 62) or (n > 0 and int(n * scale) == 0):
        raise click.BadParameter(f"expected a size such as 512K or 2M (0: no limit), not {value!r}",
                                 param_hint="'--max-file-size'")
    return int(n * scale)


def _open_cache(cache_dir: Optional[str], config: Optional[str], paths: Sequence[str]):
    from npulint.cache import Cache, default_folder
    from npulint.config import find_config

    if cache_dir:
        if os.path.exists(cache_dir) and not os.path.isdir(cache_dir):
            # an unusable cache is ignored (README): the run goes on without it
            click.echo(f"npulint: warning: the cache is not used: {cache_dir} is not a folder", err=True)
            return None
        return Cache(cache_dir)
    found = os.path.abspath(config) if config else None
    if found is None:
        first = next((p for p in paths if p != "-"), ".")
        found = find_config(first if os.path.exists(first) else ".")
    return Cache(default_folder(os.path.dirname(found) if found else os.getcwd()))


def _cached_rules(cache):
    rules = cache.get("rules", cache.key(("rules",)))
    if isinstance(rules, tuple) and rules:
        return list(rules)
    return None


def _never_fail_to_encode() -> None:
    """What the terminal's encoding cannot show is escaped, never a UnicodeEncodeError: a
    file name's bytes that are not UTF-8, CJK text under a Latin-1 locale."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):  # not a TextIOWrapper (tests, pipes replaced)
            pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``npulint`` with *argv* (default: ``sys.argv[1:]``) and return its exit status:
    0 clean, 1 findings, 2 a usage or configuration error (one line on stderr), 130
    interrupted. Writes to ``sys.stdout``/``sys.stderr`` and reads ``sys.stdin`` as they are
    (it captures nothing). The console script and ``python -m npulint`` call it through
    :func:`console_main`."""
    args = list(argv) if argv is not None else sys.argv[1:]
    _never_fail_to_encode()
    if args[:1] == ["server"] and not os.path.lexists("server"):  # a path named "server" is linted
        from npulint.server import main as server_main

        return server_main(args[1:])
    try:
        code = cli.main(args=args, prog_name="npulint", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.UsageError as exc:
        click.echo(f"npulint: error: {exc.format_message()}", err=True)
        code = EXIT_ERROR
    except ConfigError as exc:
        click.echo(f"npulint: error: {exc}", err=True)
        code = EXIT_ERROR
    except click.Abort:
        code = 130
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        # the reader went away (``npulint . | head``): not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        code = EXIT_FINDINGS
    return code if isinstance(code, int) else EXIT_OK


def console_main() -> int:
    """:func:`main` for the console script and ``python -m npulint``, whose process ends
    right after: what it allocated is frozen out of the collection the interpreter runs as it
    exits (a full walk of the rules', LibCST's and the run's objects, which the exit frees
    anyway)."""
    code = main()
    import gc

    gc.freeze()
    return code
