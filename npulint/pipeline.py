"""The lint pipeline over many files: read them (bounded, regular files only), look each up in
the cache, run the per-file analysis (``npulint.analyse``) in this process or in forked workers,
then the follow-up and project-wide phases (``npulint.project``), then suppression
(``npulint.suppress``)."""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from npulint.analyse import FileResult, _in_big_stack, _prefilter, _with_directives
from npulint.config import Settings
from npulint.inputs import (_FINGERPRINTS, READ_CAP, RunOptions, _Checkers, _digest, _file_key_parts, _Input, _read,
                            _too_big, _too_big_note)
from npulint.model import Finding, Span
from npulint.paths import module_name, normal_abs
from npulint.project import _deps_fresh, _follow_up, _project_phase
from npulint.registry import engine
from npulint.source import PYTHON, SHELL, Unreadable, decode
from npulint.stat_index import StatIndex
from npulint.suppress import _suppress
from npulint.workers import _can_fork, _cpu_count, _execute, _forked_pool, _gc_tuned


# LibCST, the checker context and the resolver are imported only when a file has to be
# parsed: a run whose files all come from the cache, or that the prefilter skips, never
# pays for them. ``pipeline.cst`` still names LibCST (PEP 562).


def __getattr__(name: str):
    if name == "cst":
        import libcst

        return libcst
    raise AttributeError(name)


@dataclasses.dataclass
class RunResult:
    findings: List[Finding]
    files: int
    parsed: int
    lines: int
    notes: List[str] = dataclasses.field(default_factory=list)  # for stderr: one per file not analysed, and why
    cached: bool = False  # answered whole from the cache


def display_path(path: str, cwd: Optional[str] = None) -> str:
    cwd = cwd or os.getcwd()
    prefix = cwd if cwd.endswith(os.sep) else cwd + os.sep
    if path.startswith(prefix) and os.path.isabs(path):
        return path[len(prefix):]
    if normal_abs(path) and normal_abs(cwd) and path != cwd:
        return path  # lexically outside the working folder: relpath would start with ".."
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows
        return path
    if rel.startswith(".." + os.sep) or rel == "..":
        return path
    return rel


def run(files: Sequence[Tuple[str, str, bool]], settings: Settings, checker_classes,
        enabled: Set[str], stdin: Optional[Tuple] = None,
        settings_for: Optional[Callable[[str], Tuple[Settings, Set[str]]]] = None,
        overrides: Optional[Dict[str, bytes]] = None, options: Optional[RunOptions] = None) -> RunResult:
    """Lint *files* (``(abs_path, language, explicit)``) and optionally one stdin buffer
    (``(abs_path_it_stands_for, bytes)``, or with its language third: :func:`stdin_language`).
    *settings_for* gives each file its own settings
    and enabled codes (hierarchical configuration); without it, *settings* and *enabled*
    apply to every file, and in any case *enabled* must cover every file's codes.
    *overrides* maps absolute paths to contents to lint instead of what is on disk (the
    fix loop and ``--diff`` lint fixed text before, or without, writing it).
    *checker_classes* is a sequence, or a callable returning one (called only when some
    file has to be analysed: a run answered from the cache never imports the rules)."""
    return _in_big_stack(lambda: _run_with_modules(files, settings, checker_classes, enabled, stdin, settings_for,
                                                   overrides or {}, options or RunOptions()))


def _run_with_modules(files, settings, checker_classes, enabled, stdin, settings_for, overrides,
                      options: RunOptions) -> RunResult:
    """:func:`_run` with the run's modules (every Python file linted, by dotted name) as the
    resolver's cross-file table (npulint.modules): made here, read lazily, in this process
    and in the forked workers, only for the modules analysed files import."""
    from npulint import modules

    from npulint.paths import forget_packages

    forget_packages()
    texts: Dict[str, bytes] = dict(overrides)
    if stdin is not None:
        texts[stdin[0]] = stdin[1]
    entries = [(p, *module_name(p)) for p, language, _ in files if language == PYTHON]
    if stdin is not None and stdin_language(stdin) == PYTHON:
        entries = [e for e in entries if e[0] != stdin[0]] + [(stdin[0], *module_name(stdin[0]))]

    def read(path: str, limit: int = options.max_file_size) -> Optional[str]:
        data = texts.get(path)
        if data is None:
            data, _ = _read(path, limit)
        if data is None or (limit and len(data) > limit):
            return None
        try:
            return decode(data, PYTHON)
        except Unreadable:
            return None

    def outside() -> Optional[List[str]]:
        from npulint.program import outside_files

        return outside_files([e[0] for e in entries], settings, options.walked)

    def program_of(paths: Sequence[str]) -> Optional[List[str]]:
        from npulint.program import outside_files

        return outside_files(paths, settings, options.walked)

    run_modules = modules.RunModules.from_files(entries, read, outside, lambda path: read(path, READ_CAP))
    run_modules.program_of = program_of
    old = modules.activate(run_modules)
    try:
        return _run(files, settings, checker_classes, enabled, stdin, settings_for, overrides, options)
    finally:
        modules.activate(old)


def stdin_language(stdin: Tuple) -> str:
    """The language of the buffer *stdin*, ``(path, bytes)`` or ``(path, bytes, language)``
    (the language server's, from the editor's languageId): the one given, else its path's
    suffix, else its shebang, else Python."""
    from npulint.source import detect_language

    return stdin[2] if len(stdin) > 2 else detect_language(stdin[0], stdin[1][:256]) or PYTHON


def _run(files, settings, checker_classes, enabled, stdin, settings_for, overrides, options: RunOptions) -> RunResult:
    def config_of(path):
        return settings_for(path) if settings_for is not None else (settings, enabled)

    _FINGERPRINTS.clear()  # (the package folders were looked up afresh by _run_with_modules)
    cwd = os.getcwd()
    checkers = _Checkers(checker_classes)
    cache = options.cache
    configs: Dict[str, Tuple[Settings, Set[str]]] = {}
    inputs: List[_Input] = []
    index = StatIndex(cache) if cache is not None else None
    # a cache that holds no run's result cannot answer this one: the files whose digests the
    # index does not know are then read (and their digests taken) by the first pass, in the
    # worker processes, not all of them here first
    ask_run = cache is not None and cache.has("run")
    for path, language, explicit in files:
        fs, fe = configs[path] = config_of(path)
        inp = _Input(path, display_path(path, cwd), language, explicit, fs, fe)
        if path in overrides:
            inp.data = overrides[path]
            inp.on_disk = False
        elif index is not None:
            inp.digest = index.digest(path)  # unchanged since it was read: its digest, unread
            if inp.digest is None and ask_run:  # the run's cache key needs every file's digest first
                _read_for_key(inp, options, index)  # (else the first pass reads it)
        inputs.append(inp)
    if stdin is not None:
        spath, data = stdin[:2]
        fs, fe = configs[spath] = config_of(spath)
        language = stdin_language(stdin)
        inputs.append(_Input(spath, display_path(spath, cwd), language, True, fs, fe,
                             data=data, cacheable=False, on_disk=False))

    # The framework releases the project runs (configured, else inferred from its tree): one
    # value per configuration, from the files it governs (the run's own settings: from every
    # file, for the project phase), part of each file's settings fingerprint (so of the cache keys).
    from npulint.releases import resolve

    governed: Dict[int, Tuple[Settings, List[str]]] = {}
    for path, (fs, _) in configs.items():
        governed.setdefault(id(fs), (fs, []))[1].append(path)
    for fs, paths in governed.values():  # each configuration from the files it governs, and only those
        fs.effective_releases = resolve(fs, paths)
    if id(settings) not in governed:  # (a fallback only: the project phase judges each file by its own)
        settings.effective_releases = resolve(settings, [p for p, _, _ in files] or
                                              ([stdin[0]] if stdin is not None else []))

    # A run over unchanged files, settings and engine: every file's result at once.
    run_key = None
    modnames: Dict[str, Tuple[Optional[str], bool]] = {}
    if cache is not None:
        for inp in inputs:
            if inp.cacheable:
                modnames[inp.path] = _module_name(inp.path, inp.language)
        if ask_run:
            index.save()
            run_key = _run_key(inputs, modnames, overrides, cwd, options, cache)
        if run_key is not None:
            cached = cache.get("run", run_key)
            if isinstance(cached, tuple) and len(cached) == 2:
                results, notes = cached
                out = sorted(set(_suppress(results, configs, enabled, _whole_programs(inputs, settings, options))),
                             key=Finding.sort_key)
                return RunResult(out, len(results), sum(1 for r in results if r.parsed),
                                 sum(r.lines for r in results), list(notes), cached=True)
        for inp in inputs:  # a miss: the first pass reads each file again when it gets to it
            if inp.on_disk and inp.digest is not None:
                inp.data = None

    notes: List[str] = []
    changed: List[str] = []
    results = _first_pass(inputs, checkers, cache, modnames, options, notes, changed, index=index)
    if index is not None and not ask_run:  # the first pass took the digests: the key of what it read
        index.save()
        run_key = _run_key(inputs, modnames, overrides, cwd, options, cache)
    if changed:
        run_key = None  # a file changed since the run's key was made: its results are not the key's
    results.sort(key=lambda r: r.path)
    by_path = {i.path: i for i in inputs}
    if _follow_up(results, configs, checkers, enabled, overrides, by_path=by_path, cache=cache, modnames=modnames,
                  options=options, notes=notes):
        run_key = None  # a file changed during the run: its results are not the run's

    # the project-wide phase: facts in sorted path order
    _project_phase(results, checkers.get(), enabled, settings)

    if run_key is not None:
        from npulint import modules
        from npulint.program import covered

        run_modules = modules.active()
        asked = run_modules is not None and (run_modules.asked or any(
            modules.asks_program(getattr(r, "deps", ())) for r in results))
        if asked and not covered([i.path for i in inputs if i.language == PYTHON], options.walked):
            # what it found may depend on files of its programs it does not lint (or that are not
            # there yet), which no run key covers
            run_key = None
    if run_key is not None:
        # Without the facts: the phases that read them are done, and a fact may be an object of
        # a rule module, whose unpickling would import the rules (and LibCST) on every warm run.
        cache.put("run", run_key, ([dataclasses.replace(r, facts={}) for r in results], tuple(notes)))
    out = _suppress(results, configs, enabled, _whole_programs(inputs, settings, options))
    out = sorted(set(out), key=Finding.sort_key)
    return RunResult(out, len(results), sum(1 for r in results if r.parsed), sum(r.lines for r in results), notes)


def _whole_programs(inputs: List[_Input], settings: Settings, options: RunOptions) -> Callable[[], bool]:
    """Whether the run holds every file of the programs of its files (asked once, when NPU003
    has a directive to judge that needs it): it was given the folders that hold them whole, or
    their programs have no Python file or launch script it does not lint (:mod:`npulint.program`)."""
    answer: List[bool] = []

    def whole() -> bool:
        if not answer:
            from npulint.program import covered, outside_files

            paths = [i.path for i in inputs]
            # a launch script counts: NPU503 in a Python file needs the program's launches
            answer.append(covered(paths, options.walked) or outside_files(
                paths, settings, options.walked, (PYTHON, SHELL)) == [])
        return answer[0]

    return whole


def _read_for_key(inp: _Input, options: RunOptions, index: StatIndex) -> None:
    """Read *inp* for the cache keys: its bytes, and their digest, recorded in *index*; a file
    over the read cap is not read, and its size and time stand for its bytes."""
    inp.data, inp.error = _read(inp.path, options.max_file_size, index)
    inp.digest = index.recorded(inp.path)
    if _too_big(inp) is not None:
        try:
            st = os.stat(inp.path)
            inp.digest = _digest(b"too big %d %d" % (st.st_size, st.st_mtime_ns))
        except OSError:
            inp.cacheable = False


def _run_key(inputs: List[_Input], modnames, overrides, cwd: str, options: RunOptions, cache) -> Optional[str]:
    """The cache key of the whole run's result: None when a file cannot be cached."""
    if overrides or not all(inp.cacheable for inp in inputs):
        return None
    return cache.key(("run", cwd, options.max_file_size, tuple(_file_key_parts(i, modnames[i.path]) for i in inputs)))


def _module_name(path: str, language: str) -> Tuple[Optional[str], bool]:
    if language != PYTHON:
        return None, False
    return module_name(path)


def _first_pass(inputs: List[_Input], checkers: _Checkers, cache, modnames, options: RunOptions,
                notes: List[str], changed: Optional[List[str]] = None, split: bool = True,
                isolate: bool = False, index: Optional[StatIndex] = None) -> List[FileResult]:
    """Every file's own result: read and prefilter here; parse (from the cache, here, or in
    worker processes) only what some enabled checker looks at. Files are read one at a
    time, as they come (with a cache, read already once for their digests: *changed*
    receives those that are no longer what the digest says). Over many files, worker
    processes do all of it, each for a share of the files (see :func:`_first_pass_in_pool`),
    unless *split* is False. With *isolate*, the analysis runs in worker processes even
    for one file (a share whose worker died is done again so). With *index*, a file whose
    digest is not known yet is read as :func:`_read_for_key` reads it."""
    jobs = _first_pass_jobs(len(inputs), options) if split else 1
    if jobs > 1:
        return _first_pass_in_pool(inputs, checkers, cache, modnames, options, notes, changed, jobs, index)
    results: List[FileResult] = []
    tasks: List[Tuple[_Input, str, List[type], Optional[str]]] = []  # (input, text, active, cache key)
    for inp in inputs:
        result = FileResult(inp.path, inp.display, inp.language)
        if index is not None and inp.digest is None and inp.on_disk and inp.data is None and inp.error is None:
            _read_for_key(inp, options, index)
        elif inp.data is None and inp.error is None and inp.on_disk:
            inp.data, inp.error = _read(inp.path, options.max_file_size)
            if inp.digest is not None and (inp.data is None or _digest(inp.data) != inp.digest):
                inp.cacheable = False
                if changed is not None:
                    changed.append(inp.path)
        size = _too_big(inp)
        if size is not None:  # over the limit: named, not read
            notes.append(_too_big_note(inp.display, size, options.max_file_size))
            result.skipped = True
            results.append(result)
            continue
        unreadable = engine().UnreadableFile
        if inp.error is not None:
            if unreadable.enabled_in(inp.enabled):
                result.findings.append(unreadable.finding(inp.display, Span.at(1, 1), f"cannot read file: {inp.error}"))
            else:  # (ruff's "Failed to lint" warning where E902 is not enabled)
                notes.append(f"{inp.display}: not analysed: cannot read file: {inp.error}")
            results.append(result)
            continue
        try:
            text = decode(inp.data, inp.language)
        except Unreadable as exc:
            if exc.binary and not inp.explicit:
                result.skipped = True
            elif unreadable.enabled_in(inp.enabled):
                result.findings.append(unreadable.finding(inp.display, Span.at(exc.line, exc.column), str(exc)))
            else:
                notes.append(f"{inp.display}: not analysed: {exc}")
            results.append(result)
            continue
        result, active = _prefilter(inp.path, inp.display, inp.language, text, checkers.get(), inp.enabled)
        if active is None:
            results.append(_with_directives(result, text, inp.enabled))
            _let_go(inp)
            continue
        size = len(inp.data)
        if options.max_file_size and size > options.max_file_size:
            notes.append(_too_big_note(inp.display, size, options.max_file_size))
            result.skipped = True
            results.append(result)
            _let_go(inp)
            continue
        key = None
        if cache is not None and inp.cacheable:
            key = cache.key(("file", _file_key_parts(inp, modnames.get(inp.path) or module_name(inp.path)),
                             tuple(c.__module__ + "." + c.__qualname__ for c in active)))
            hit = cache.get("file", key)
            if isinstance(hit, FileResult) and _deps_fresh(hit):
                results.append(hit)
                continue
        tasks.append((inp, text, active, key))
    for (inp, _, _, key), result in zip(tasks, _execute(tasks, options, isolate)):
        if key is not None:
            cache.put("file", key, result)
        results.append(result)
    return results


# From this many files on, the first pass itself (reading, decoding, the prefilter) runs in
# the worker processes, each on a share of the files, and each analysing the files of its share
# that the prefilter selects: over many files that serial part would bound what a second process
# can gain (docs/benchmarks.md, "Measurements behind the engine's constants").
FIRST_PASS_PARALLEL_FILES = 500

# Shares per worker: files are not all alike, so each worker takes several, one after the
# other, and a share is every k-th file of the list, not a run of neighbours: the files that
# cost most cluster in folders, so a run of neighbours can hold most of a tree's work, and its
# worker then runs alone (docs/benchmarks.md, "Figures behind the engine's comments").
FIRST_PASS_SHARES_PER_JOB = 24

# Of those, this many per worker (the last ones) are each cut in FIRST_PASS_TAIL_SPLIT
# interleaved pieces, so that the last pieces handed out are small.
FIRST_PASS_TAIL_SHARES = 2
FIRST_PASS_TAIL_SPLIT = 4


def _first_pass_jobs(n_inputs: int, options: RunOptions) -> int:
    if options.jobs == 1 or n_inputs < FIRST_PASS_PARALLEL_FILES or not _can_fork():
        return 1
    return max(1, min(options.jobs or _cpu_count(), n_inputs // (FIRST_PASS_PARALLEL_FILES // 2)))


# The first pass of the run in progress, for the forked workers (inherited, never sent).
_FORKED_FIRST_PASS: Optional[tuple] = None


def _first_pass_share(first: int, step: int):
    """In a worker: the first pass over ``inputs[first::step]``, analysing in this process."""
    inputs, checkers, cache, modnames, options, index = _FORKED_FIRST_PASS  # type: ignore[misc]
    share = inputs[first::step]
    notes: List[str] = []
    changed: List[str] = []
    one = dataclasses.replace(options, jobs=1)
    results = _in_big_stack(lambda: _first_pass(share, checkers, cache, modnames, one, notes, changed, index=index))
    taken = index.taken(inp.path for inp in share) if index is not None else {}
    return results, notes, changed, [(inp.cacheable, inp.digest) for inp in share], taken


def _shares(n: int, jobs: int) -> List[Tuple[int, int]]:
    """The first pass's shares of *n* inputs, as ``(first, step)`` for ``inputs[first::step]``:
    every k-th input, k shares per worker; the last ones cut again into interleaved pieces
    (the workers then finish closer together). Each input is in exactly one share."""
    k = min(n, jobs * FIRST_PASS_SHARES_PER_JOB)
    tail = min(k - 1, jobs * FIRST_PASS_TAIL_SHARES) if n >= k * FIRST_PASS_TAIL_SPLIT else 0
    return [(first, k) for first in range(k - tail)] + [
        (c + j * k, k * FIRST_PASS_TAIL_SPLIT) for c in range(k - tail, k) for j in range(FIRST_PASS_TAIL_SPLIT)]


def _first_pass_in_pool(inputs: List[_Input], checkers: _Checkers, cache, modnames, options: RunOptions,
                        notes: List[str], changed: Optional[List[str]], jobs: int,
                        index: Optional[StatIndex] = None) -> List[FileResult]:
    """The first pass in *jobs* worker processes, over interleaved shares of *inputs* (see
    :func:`_shares`), merged in share order (the run sorts the results by path). A share whose
    worker failed (a crash in native code) is done again here, file by file where it parses."""
    global _FORKED_FIRST_PASS
    checkers.get()  # loaded once, before the fork
    shares = _shares(len(inputs), jobs)
    results: List[FileResult] = []
    failed: List[Tuple[int, int]] = []
    pool_notes: List[str] = []
    _FORKED_FIRST_PASS = (inputs, checkers, cache, modnames, options, index)
    try:
        with _gc_tuned():
            with _forked_pool(jobs) as pool:
                futures = [((first, step), pool.submit(_first_pass_share, first, step)) for first, step in shares]
                for (first, step), fut in futures:
                    try:
                        share_results, share_notes, share_changed, keys, taken = fut.result()
                    except Exception:  # the worker died, or its results would not pickle
                        failed.append((first, step))
                        continue
                    results.extend(share_results)
                    pool_notes.extend(share_notes)
                    if changed is not None:
                        changed.extend(share_changed)
                    for inp, (ok, digest) in zip(inputs[first::step], keys):
                        inp.cacheable = inp.cacheable and ok
                        inp.digest = digest
                    if index is not None:
                        index.add(taken)
    finally:
        _FORKED_FIRST_PASS = None
    notes.extend(sorted(pool_notes))  # (each names its file first: in the order of the paths, whatever the shares)
    # again with the prefilter here and the analysis in pools that retry a crashing file alone
    for first, step in failed:
        results.extend(_first_pass(inputs[first::step], checkers, cache, modnames, options, notes, changed, split=False,
                                   isolate=True, index=index))
    return results


def _let_go(inp: _Input) -> None:
    """Drop the bytes of a file the first pass does not parse: most of a repository. Held
    until the end of the run, they were a large share of its memory, and every worker
    inherited them (docs/benchmarks.md has the figures). The follow-up phase reads such a file
    again if it has to look at it."""
    if inp.on_disk:
        inp.data = None

