"""The lint pipeline over many files: read them (bounded, regular files only), look each up in
the cache, run the per-file analysis (``npulint.analyse``) in this process or in forked workers,
then the follow-up and project-wide phases (``npulint.project``), then suppression
(``npulint.suppress``)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from npulint.config import Settings
from npulint.model import Finding
from npulint.paths import module_name, normal_abs
from npulint.source import PYTHON, Unreadable, decode
from npulint.stat_index import StatIndex

from npulint.analyse import (  # noqa: F401 - re-exported: callers and tests name them on pipeline
    MAX_LITERAL_ITEMS, MAX_SYNTAX_NODES, UNUSED_NOQA, FileResult, _analyse, _cpython_check, _in_big_stack,
    _needed_checkers, _parse, _prefilter, _with_directives, lint_text)
from npulint.project import _deps_fresh, _follow_up, _project_phase  # noqa: F401
from npulint.suppress import PerFileIgnores, _suppress  # noqa: F401


# LibCST, the checker context and the resolver are imported only when a file has to be
# parsed: a run whose files all come from the cache, or that the prefilter skips, never
# pays for them. ``pipeline.cst`` still names LibCST (PEP 562).


def __getattr__(name: str):
    if name == "cst":
        import libcst

        return libcst
    raise AttributeError(name)


# Files larger than this (bytes) are not parsed: most are generated (torchair's op table) and
# LibCST's tree and the positions need hundreds of bytes of memory per byte of source, so one
# such file would blow the memory budget of a whole run; almost all hand-written modules are
# smaller (docs/benchmarks.md, "Measurements behind the engine's constants").
DEFAULT_MAX_FILE_SIZE = 256 * 1024


def _human(n: int) -> str:
    return f"{n / 1024 ** 2:.1f} MB" if n >= 1024 ** 2 else f"{n / 1024:.0f} KB"


def _too_big_note(display: str, size: int, limit: int) -> str:
    return (f"{display}: not analysed: {_human(size)} is more than --max-file-size ({_human(limit)}); "
            "no finding is reported for it")


@dataclasses.dataclass
class RunResult:
    findings: List[Finding]
    files: int
    parsed: int
    lines: int
    notes: List[str] = dataclasses.field(default_factory=list)  # for stderr: files not analysed, and why
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


@dataclasses.dataclass
class RunOptions:
    """How to run, not what to find: none of these changes a finding (except that a file
    above *max_file_size* is not analysed)."""

    cache: Optional[Any] = None  # an npulint.cache.Cache, or None for no cache
    jobs: Optional[int] = 1  # worker processes; None or 0: automatic
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes; 0: no limit


def run(files: Sequence[Tuple[str, str, bool]], settings: Settings, checker_classes,
        enabled: Set[str], stdin: Optional[Tuple[str, bytes]] = None,
        settings_for: Optional[Callable[[str], Tuple[Settings, Set[str]]]] = None,
        overrides: Optional[Dict[str, bytes]] = None, options: Optional[RunOptions] = None) -> RunResult:
    """Lint *files* (``(abs_path, language, explicit)``) and optionally one stdin buffer
    (``(abs_path_it_stands_for, bytes)``). *settings_for* gives each file its own settings
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
    if stdin is not None and (_stdin_language(stdin[0], stdin[1]) == PYTHON):
        entries = [e for e in entries if e[0] != stdin[0]] + [(stdin[0], *module_name(stdin[0]))]

    def read(path: str) -> Optional[str]:
        data = texts.get(path)
        if data is None:
            data, _ = _read(path, options.max_file_size)
        if data is None or (options.max_file_size and len(data) > options.max_file_size):
            return None
        try:
            return decode(data, PYTHON)
        except Unreadable:
            return None

    old = modules.activate(modules.RunModules.from_files(entries, read))
    try:
        return _run(files, settings, checker_classes, enabled, stdin, settings_for, overrides, options)
    finally:
        modules.activate(old)


def _stdin_language(path: str, data: bytes) -> Optional[str]:
    from npulint.source import detect_language

    return detect_language(path, data[:256]) or PYTHON


class _Checkers:
    """The checker classes, loaded on first use."""

    def __init__(self, source):
        self._source = source
        self._value: Optional[Tuple[type, ...]] = None

    def get(self) -> Tuple[type, ...]:
        if self._value is None:
            src = self._source
            self._value = tuple(src() if callable(src) and not isinstance(src, (list, tuple)) else src)
        return self._value


@dataclasses.dataclass
class _Input:
    path: str
    display: str
    language: str
    explicit: bool
    settings: Settings
    enabled: Set[str]
    data: Optional[bytes] = None
    error: Optional[str] = None  # why the file could not be read
    cacheable: bool = True
    digest: Optional[str] = None  # of data, for cache keys
    on_disk: bool = True  # data is the file's bytes on disk (not an override, not stdin)


# A file over --max-file-size is still read (up to this) so that the prefilter can say whether
# any rule would look at it: only those are named. Past this it is named without being read.
READ_CAP = 64 << 20


def _read(path: str, limit: int = 0, index=None) -> Tuple[Optional[bytes], Optional[str]]:
    """``(bytes, None)``, or ``(None, why)``: only a regular file is read, by a bounded read
    (:func:`npulint.source.read_regular`); one larger than ``max(limit, READ_CAP)`` (*limit*
    0: no limit) gives ``(None, TOO_BIG + size)``. A file read is recorded in *index* (a
    :class:`npulint.stat_index.StatIndex`) with what ``fstat`` said of it just before."""
    from npulint.source import TooBig, read_regular_stat

    try:
        when = index.now() if index is not None else 0
        data, st = read_regular_stat(path, max(limit, READ_CAP) if limit else 0)
        if index is not None:
            index.record(path, st, when, _digest(data))
        return data, None
    except TooBig as exc:
        return None, f"{TOO_BIG}{exc.size}"
    except OSError as exc:
        return None, exc.strerror or str(exc)


TOO_BIG = "\0too big:"  # an _Input.error that is not an error: the file is over max(--max-file-size, READ_CAP), unread


def _too_big(inp) -> Optional[int]:
    error = inp.error
    return int(error[len(TOO_BIG):]) if error is not None and error.startswith(TOO_BIG) else None


def _digest(data: bytes) -> str:
    from npulint.cache import blake2b

    return blake2b(data, digest_size=20).hexdigest()


def _file_key_parts(inp: _Input, modname: Tuple[Optional[str], bool]) -> Tuple:
    if inp.digest is None:
        inp.digest = _digest(inp.data or b"")
    s = inp.settings
    fp = _FINGERPRINTS.get((id(s), id(inp.enabled)))
    if fp is None or fp[0] is not s or fp[1] is not inp.enabled:
        fp = _FINGERPRINTS[(id(s), id(inp.enabled))] = (s, inp.enabled,
                                                        repr((s.root, s.fingerprint(), tuple(sorted(inp.enabled)))))
    return (inp.path, inp.display, inp.language, inp.explicit, modname, fp[2], inp.error, inp.digest)


_FINGERPRINTS: Dict[Tuple[int, int], Tuple[Settings, Set[str], str]] = {}


def _run(files, settings, checker_classes, enabled, stdin, settings_for, overrides, options: RunOptions) -> RunResult:
    from npulint.source import detect_language

    def config_of(path):
        return settings_for(path) if settings_for is not None else (settings, enabled)

    _FINGERPRINTS.clear()  # (the package folders were looked up afresh by _run_with_modules)
    cwd = os.getcwd()
    checkers = _Checkers(checker_classes)
    cache = options.cache
    configs: Dict[str, Tuple[Settings, Set[str]]] = {}
    inputs: List[_Input] = []
    index = StatIndex(cache) if cache is not None else None
    for path, language, explicit in files:
        fs, fe = configs[path] = config_of(path)
        inp = _Input(path, display_path(path, cwd), language, explicit, fs, fe)
        if path in overrides:
            inp.data = overrides[path]
            inp.on_disk = False
        elif index is not None:  # the run's cache key needs every file's digest first
            inp.digest = index.digest(path)  # unchanged since it was read: its digest, unread
            if inp.digest is None:
                inp.data, inp.error = _read(path, options.max_file_size, index)  # (else the first pass reads it)
                inp.digest = index.recorded(path)
            if _too_big(inp) is not None:  # not read: its size and time stand for its bytes in the key
                try:
                    st = os.stat(path)
                    inp.digest = _digest(b"too big %d %d" % (st.st_size, st.st_mtime_ns))
                except OSError:
                    inp.cacheable = False
        inputs.append(inp)
    if stdin is not None:
        spath, data = stdin
        fs, fe = configs[spath] = config_of(spath)
        language = detect_language(spath, data[:256]) or PYTHON  # a suffix, else a shebang
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

    if index is not None:
        index.save()

    # A run over unchanged files, settings and engine: every file's result at once.
    run_key = None
    modnames: Dict[str, Tuple[Optional[str], bool]] = {}
    if cache is not None:
        for inp in inputs:
            if inp.cacheable:
                modnames[inp.path] = _module_name(inp.path, inp.language)
        if all(inp.cacheable for inp in inputs) and not overrides:
            run_key = cache.key(("run", cwd, options.max_file_size,
                                 tuple(_file_key_parts(i, modnames[i.path]) for i in inputs)))
            cached = cache.get("run", run_key)
            if isinstance(cached, tuple) and len(cached) == 2:
                results, notes = cached
                out = sorted(set(_suppress(results, configs, enabled)), key=Finding.sort_key)
                return RunResult(out, len(results), sum(1 for r in results if r.parsed),
                                 sum(r.lines for r in results), list(notes), cached=True)
        for inp in inputs:  # a miss: the first pass reads each file again when it gets to it
            if inp.on_disk and inp.digest is not None:
                inp.data = None

    notes: List[str] = []
    changed: List[str] = []
    results = _first_pass(inputs, checkers, cache, modnames, options, notes, changed)
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
        # Without the facts: the phases that read them are done, and a fact may be an object of
        # a rule module, whose unpickling would import the rules (and LibCST) on every warm run.
        cache.put("run", run_key, ([dataclasses.replace(r, facts={}) for r in results], tuple(notes)))
    out = _suppress(results, configs, enabled)
    out = sorted(set(out), key=Finding.sort_key)
    return RunResult(out, len(results), sum(1 for r in results if r.parsed), sum(r.lines for r in results), notes)


def _module_name(path: str, language: str) -> Tuple[Optional[str], bool]:
    if language != PYTHON:
        return None, False
    return module_name(path)


def _first_pass(inputs: List[_Input], checkers: _Checkers, cache, modnames, options: RunOptions,
                notes: List[str], changed: Optional[List[str]] = None, split: bool = True,
                isolate: bool = False) -> List[FileResult]:
    """Every file's own result: read and prefilter here; parse (from the cache, here, or in
    worker processes) only what some enabled checker looks at. Files are read one at a
    time, as they come (with a cache, read already once for their digests: *changed*
    receives those that are no longer what the digest says). Over many files, worker
    processes do all of it, each for a share of the files (see :func:`_first_pass_in_pool`),
    unless *split* is False. With *isolate*, the analysis runs in worker processes even
    for one file (a share whose worker died is done again so)."""
    jobs = _first_pass_jobs(len(inputs), options) if split else 1
    if jobs > 1:
        return _first_pass_in_pool(inputs, checkers, cache, modnames, options, notes, changed, jobs)
    results: List[FileResult] = []
    tasks: List[Tuple[_Input, str, List[type], Optional[str]]] = []  # (input, text, active, cache key)
    for inp in inputs:
        result = FileResult(inp.path, inp.display, inp.language)
        if inp.data is None and inp.error is None and inp.on_disk:
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
        if inp.error is not None:
            if "NPU002" in inp.enabled:
                result.findings.append(Finding(inp.display, 1, 1, "NPU002", f"cannot read file: {inp.error}", 1, 1))
            results.append(result)
            continue
        try:
            text = decode(inp.data, inp.language)
        except Unreadable as exc:
            if exc.binary and not inp.explicit:
                result.skipped = True
            elif "NPU002" in inp.enabled:
                result.findings.append(Finding(inp.display, exc.line, exc.column, "NPU002", str(exc),
                                               exc.line, exc.column))
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
FIRST_PASS_SHARES_PER_JOB = 8


def _first_pass_jobs(n_inputs: int, options: RunOptions) -> int:
    if options.jobs == 1 or n_inputs < FIRST_PASS_PARALLEL_FILES or not _can_fork():
        return 1
    return max(1, min(options.jobs or _cpu_count(), n_inputs // (FIRST_PASS_PARALLEL_FILES // 2)))


# The first pass of the run in progress, for the forked workers (inherited, never sent).
_FORKED_FIRST_PASS: Optional[tuple] = None


def _first_pass_share(first: int, step: int):
    """In a worker: the first pass over ``inputs[first::step]``, analysing in this process."""
    inputs, checkers, cache, modnames, options = _FORKED_FIRST_PASS  # type: ignore[misc]
    share = inputs[first::step]
    notes: List[str] = []
    changed: List[str] = []
    one = dataclasses.replace(options, jobs=1)
    results = _in_big_stack(lambda: _first_pass(share, checkers, cache, modnames, one, notes, changed))
    return results, notes, changed, [inp.cacheable for inp in share]


def _first_pass_in_pool(inputs: List[_Input], checkers: _Checkers, cache, modnames, options: RunOptions,
                        notes: List[str], changed: Optional[List[str]], jobs: int) -> List[FileResult]:
    """The first pass in *jobs* worker processes, over interleaved shares of *inputs* (every
    k-th file), merged in share order (the run sorts the results by path). A share whose worker
    failed (a crash in native code) is done again here, file by file where it parses."""
    global _FORKED_FIRST_PASS
    checkers.get()  # loaded once, before the fork
    n = len(inputs)
    k = min(n, jobs * FIRST_PASS_SHARES_PER_JOB)
    results: List[FileResult] = []
    failed: List[int] = []
    pool_notes: List[str] = []
    _FORKED_FIRST_PASS = (inputs, checkers, cache, modnames, options)
    try:
        with _gc_tuned():
            with _forked_pool(jobs) as pool:
                futures = [(first, pool.submit(_first_pass_share, first, k)) for first in range(k)]
                for first, fut in futures:
                    try:
                        share_results, share_notes, share_changed, cacheable = fut.result()
                    except Exception:  # the worker died, or its results would not pickle
                        failed.append(first)
                        continue
                    results.extend(share_results)
                    pool_notes.extend(share_notes)
                    if changed is not None:
                        changed.extend(share_changed)
                    for inp, ok in zip(inputs[first::k], cacheable):
                        inp.cacheable = inp.cacheable and ok
    finally:
        _FORKED_FIRST_PASS = None
    notes.extend(sorted(pool_notes))  # (each names its file first: in the order of the paths, whatever the shares)
    # again with the prefilter here and the analysis in pools that retry a crashing file alone
    for first in failed:
        results.extend(_first_pass(inputs[first::k], checkers, cache, modnames, options, notes, changed, split=False,
                                   isolate=True))
    return results


def _let_go(inp: _Input) -> None:
    """Drop the bytes of a file the first pass does not parse: most of a repository. Held
    until the end of the run, they were a large share of its memory, and every worker
    inherited them (docs/benchmarks.md has the figures). The follow-up phase reads such a file
    again if it has to look at it."""
    if inp.on_disk:
        inp.data = None


def _task(inp: _Input, text: str, active: Sequence[type]) -> FileResult:
    import gc

    result = FileResult(inp.path, inp.display, inp.language,
                        lines=text.count("\n") + (1 if text and not text.endswith("\n") else 0))
    # No cyclic collection while one file is analysed (its tree and tables are freed by
    # reference counting when it is done; collections would only walk them), then one of
    # the youngest generation, which holds what the file left: its result and any cycle.
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        return _with_directives(_analyse(result, text, inp.settings, active, inp.enabled), text, inp.enabled)
    finally:
        if enabled:
            gc.enable()
            gc.collect(0)


# ----------------------------------------------------------------------------- parallelism

# Automatic --jobs: one worker per this many bytes of source to parse (a few tenths of a
# second of work on one core, well above what starting a forked worker costs), up to the number
# of CPUs; below it the run stays in this process and pays no process start-up
# (docs/benchmarks.md, "Measurements behind the engine's constants").
AUTO_JOBS_BYTES = 256 * 1024


def auto_jobs(parse_bytes: int, n_tasks: int, cpus: Optional[int] = None) -> int:
    cpus = cpus or _cpu_count()
    # rounded, not floored: nearly two workers' worth of work gets two (docs/benchmarks.md)
    return max(1, min(cpus, n_tasks, (parse_bytes + AUTO_JOBS_BYTES // 2) // AUTO_JOBS_BYTES))


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _can_fork() -> bool:
    import multiprocessing

    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _execute(tasks, options: RunOptions, isolate: bool = False) -> List[FileResult]:
    """The results of *tasks*, in order: here, or in worker processes (largest files first;
    always there with *isolate*, where a native crash cannot take this process down)."""
    if not tasks:
        return []
    total = sum(len(t[1]) for t in tasks)
    jobs = options.jobs if options.jobs else auto_jobs(total, len(tasks))
    jobs = min(jobs, len(tasks))
    with _gc_tuned():
        if isolate and _can_fork():
            return _execute_in_pool(tasks, max(1, jobs))
        if jobs <= 1 or not _can_fork():
            return [_task(inp, text, active) for inp, text, active, _ in tasks]
        return _execute_in_pool(tasks, jobs)


# The cyclic collector's first threshold during the analysis phase (between files; within
# one file it does not run at all, see _task). At CPython's default a run spends a large share
# of its time in collections, each older-generation one walking the whole live tree of the file
# at hand; the trees are freed by reference counting (no cycle holds them: see Checker.release
# and shell._Source), so fewer collections cost nothing in memory (docs/benchmarks.md,
# "Measurements behind the engine's constants").
GC_THRESHOLD = 50_000


@contextlib.contextmanager
def _gc_tuned():
    """Rarer collections in the analysis phase (between files: within one, _task turns the
    collector off), and what was allocated before (LibCST's and the rules' modules) frozen out
    of them, which also spares the forked workers copying those pages; undone afterwards."""
    import gc

    old = gc.get_threshold()
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    gc.set_threshold(max(old[0], GC_THRESHOLD), old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)
        if freeze:
            gc.unfreeze()


# Work sent to a worker process at once: files are grouped up to this many bytes of source
# (a larger file goes alone), so 400 small launch scripts are some 30 round trips, not 400.
BATCH_BYTES = 64 * 1024


# The tasks of the run in progress, for the forked workers: they inherit this list and are
# sent only indices, never the texts and settings.
_FORKED_TASKS: Optional[list] = None


def _worker(indices: Sequence[int]) -> List[FileResult]:
    tasks = _FORKED_TASKS
    assert tasks is not None
    # the big-stack thread and recursion limit hold in the worker too
    return _in_big_stack(lambda: [_task(tasks[i][0], tasks[i][1], tasks[i][2]) for i in indices])


def _batches(tasks, order: Sequence[int]) -> List[List[int]]:
    out: List[List[int]] = []
    size = 0
    for i in order:
        n = len(tasks[i][1])
        if not out or size + n > BATCH_BYTES:
            out.append([])
            size = 0
        out[-1].append(i)
        size += n
    return out


def _execute_in_pool(tasks, jobs: int) -> List[FileResult]:
    """Largest files first, in batches; a batch whose worker failed is done again one file
    per worker, so a crash (in native code) costs only the file that caused it."""
    global _FORKED_TASKS

    order = sorted(range(len(tasks)), key=lambda i: -len(tasks[i][1]))
    out: List[Optional[FileResult]] = [None] * len(tasks)
    _FORKED_TASKS = tasks
    try:
        pending = _run_batches(_batches(tasks, order), jobs, out)
        while pending:
            # a crash breaks the whole pool and every batch still queued fails with it:
            # again file by file, and if no file gets through, each in a pool of its own
            again = _run_batches([[i] for i in pending], jobs, out)
            if len(again) < len(pending):
                pending = again
                continue
            for i in pending:
                errors: Dict[int, BaseException] = {}
                if _run_batches([[i]], 1, out, errors):
                    out[i] = _worker_failed(tasks[i][0], errors[i])
            break
    finally:
        _FORKED_TASKS = None
    return out  # type: ignore[return-value]


def _run_batches(batches: List[List[int]], jobs: int, out: List[Optional[FileResult]],
                 errors: Optional[Dict[int, BaseException]] = None) -> List[int]:
    """Run *batches* on *jobs* workers into *out*; return the indices of batches that failed
    (recording the error of each in *errors*)."""
    failed: List[int] = []
    with _forked_pool(jobs) as pool:
        futures = [(batch, pool.submit(_worker, batch)) for batch in batches]
        for batch, fut in futures:
            try:
                for i, r in zip(batch, fut.result()):
                    out[i] = r
            except Exception as exc:  # the worker died (a crash in native code) or its result would not pickle
                failed.extend(batch)
                if errors is not None:
                    for i in batch:
                        errors[i] = exc
    return failed


@contextlib.contextmanager
def _forked_pool(jobs: int):
    """A pool of *jobs* forked worker processes (they inherit the run's state: see
    _FORKED_TASKS and _FORKED_FIRST_PASS)."""
    import multiprocessing
    import warnings
    from concurrent.futures import ProcessPoolExecutor

    with warnings.catch_warnings():
        # forking while this thread's parent waits is safe here: the workers only lint
        warnings.simplefilter("ignore", DeprecationWarning)
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            yield pool


def _worker_failed(inp: _Input, exc: BaseException) -> FileResult:
    r = FileResult(inp.path, inp.display, inp.language)
    if "NPU000" in inp.enabled:
        r.findings.append(Finding(inp.display, 1, 1, "NPU000",
                                  f"internal error: the worker process analysing this file failed: "
                                  f"{type(exc).__name__}: {exc} (please report this)", 1, 1))
    return r
