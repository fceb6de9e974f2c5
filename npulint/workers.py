"""Where the per-file analysis runs: in this process, or in forked worker processes (largest
files first, in batches; a batch whose worker died is done again file by file), with the cyclic
collector tuned for the analysis phase."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Dict, List, Optional, Sequence

from npulint.analyse import FileResult, _in_big_stack
from npulint.inputs import RunOptions, _Input
from npulint.model import Span
from npulint.registry import engine


def _task(inp: _Input, text: str, active: Sequence[type]) -> FileResult:
    """One file's step (:func:`npulint.core.analyse_file`, with the checkers the first pass's
    prefilter chose), wherever it runs."""
    import gc

    from npulint.core import analyse_file

    # No cyclic collection while one file is analysed (its tree and tables are freed by
    # reference counting when it is done; collections would only walk them), then one of
    # the youngest generation, which holds what the file left: its result and any cycle.
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        return analyse_file(inp.path, inp.display, inp.language, text, inp.settings, (), inp.enabled, active=active)
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


# Whether _gc_tuned has frozen the heap (a forked worker inherits it): asking the collector
# (``gc.get_freeze_count()``) walks the whole frozen heap, and a worker asked once per share
# (docs/benchmarks.md, session 15).
_FROZEN = False


@contextlib.contextmanager
def _gc_tuned():
    """Rarer collections in the analysis phase (between files: within one, _task turns the
    collector off), and what was allocated before (LibCST's and the rules' modules) frozen out
    of them, which also spares the forked workers copying those pages; undone afterwards."""
    import gc

    global _FROZEN
    old = gc.get_threshold()
    freeze = not _FROZEN
    if freeze:
        gc.freeze()
        _FROZEN = True
    gc.set_threshold(max(old[0], GC_THRESHOLD), old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)
        if freeze:
            gc.unfreeze()
            _FROZEN = False


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
    _FORKED_TASKS and pipeline._FORKED_FIRST_PASS)."""
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
    internal = engine().InternalError
    if internal.enabled_in(inp.enabled):
        r.findings.append(internal.finding(inp.display, Span.at(1, 1),
                                           f"internal error: the worker process analysing this file failed: "
                                           f"{type(exc).__name__}: {exc} (please report this)"))
    return r
