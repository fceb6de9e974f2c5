"""The phases over the whole run: the follow-up (files the prefilter skipped that the first
pass's facts name, analysed for the rules that asked) and the project-wide phase (each rule's
``project()`` over the facts of every file, in path order)."""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from npulint.config import Settings
from npulint.model import Span
from npulint.paths import module_name
from npulint.registry import engine
from npulint.source import PYTHON, Unreadable, decode

from npulint.analyse import FileResult, _prefilter
from npulint.inputs import RunOptions, _Checkers, _digest, _file_key_parts, _Input, _read, _too_big_note
from npulint.workers import _execute


def _project_phase(results: List[FileResult], checker_classes: Sequence[type], enabled: Set[str],
                   settings: Settings) -> None:
    """The project-wide phase over *results* (in sorted path order): each checker's
    ``project()`` with its facts and the shared topics it reads; its findings join the file
    they are in."""
    project_classes = [cls for cls in checker_classes if cls.codes() & enabled] \
        if any(r.facts for r in results) else []
    if not project_classes:
        return
    from npulint.checker import ProjectReporter

    reporter = ProjectReporter(enabled)
    gather = _fact_gatherer(results)
    for cls in project_classes:
        facts = gather(cls.__name__)
        topics = tuple(cls.consumes) + tuple(u.__name__ for u in cls.uses)  # an analysis's facts reach its rules
        shared = {t: gather(t) for t in topics}
        if facts or any(shared.values()):
            try:
                cls.project(facts, reporter, settings, shared)
            except Exception as exc:
                where = facts[0][0] if facts else next(p for v in shared.values() for p, _ in v)
                engine().InternalError.report_in(reporter, where, Span.at(1, 1),
                                                 f"internal error in {cls.__name__}.project: "
                                                 f"{type(exc).__name__}: {exc} (please report this)")
    by_display = {r.display: r for r in results}
    for f in reporter.findings:
        r = by_display.get(f.path)
        if r is not None:
            r.findings.append(f)


def _fact_gatherer(results: List[FileResult]) -> Callable[[str], List[Tuple[str, Any]]]:
    """The facts of a topic over every file, ``(display, fact)`` in path order, every topic's
    gathered in one pass over the results: the rules that read one topic (an analysis's facts)
    get the same list, so they can compute what they share from it once (memoised on its
    identity). Not to be modified."""
    gathered: Dict[str, List[Tuple[str, Any]]] = {}
    for r in results:  # every topic in one pass (most files have no facts)
        for topic, facts in r.facts.items():
            gathered.setdefault(topic, []).extend((r.display, f) for f in facts)

    def gather(topic: str) -> List[Tuple[str, Any]]:
        return gathered.setdefault(topic, [])

    return gather


def _follow_up(results: List[FileResult], configs, checker_classes, enabled: Set[str],
               overrides: Optional[Dict[str, bytes]] = None, by_path: Optional[Dict[str, _Input]] = None,
               cache=None, modnames=None, options: Optional[RunOptions] = None,
               notes: Optional[List[str]] = None) -> bool:
    """Files the prefilter skipped that contain a token some checker asks for after the
    first pass: parse them once, for those checkers, and merge what they find. True when a
    file read again (see :func:`_let_go`) had changed since the first pass."""
    changed = False
    exported = any(getattr(r, "exports", ()) for r in results)
    if not any(r.facts for r in results) and not exported:
        return changed
    checkers = checker_classes if isinstance(checker_classes, _Checkers) else _Checkers(checker_classes)
    options = options or RunOptions()
    importers = _importer_tokens(results, checkers.get(), enabled) if exported else {}
    wanted = []
    gather = _fact_gatherer(results)
    for cls in checkers.get():
        if cls.codes() & enabled:
            facts = gather(cls.__name__)
            topics = tuple(cls.consumes) + tuple(u.__name__ for u in cls.uses)  # an analysis's facts reach its rules
            shared = {t: gather(t) for t in topics}
            tokens = cls.followup(facts, shared) if facts or any(shared.values()) else ()
            tokens = tuple(t if isinstance(t, str) else tuple(t) for t in tuple(tokens) + tuple(importers.get(cls, ())))
            if tokens:
                wanted.append((cls, tokens))
    if not wanted:
        return changed
    # checkers that share an analysis ask for the same tokens: one matcher per set of tokens,
    # asked once per text, and a text holding none of their first tokens is passed over at once
    matchers = {tokens: _followup_matcher(tokens) for _, tokens in wanted}
    held = _any_substring(t if isinstance(t, str) else t[0] for tokens in matchers for t in tokens if t)
    tasks = []
    for r in results:
        if r.parsed or r.skipped or r.language != PYTHON or r.findings or r.path not in configs:
            continue
        inp = (by_path or {}).get(r.path)
        data = inp.data if inp is not None else (overrides or {}).get(r.path)
        reread = data is None
        if reread:
            data, _ = _read(r.path, options.max_file_size)  # one over the limit was named already
        if data is None:
            continue
        try:
            text = decode(data, r.language)
        except Unreadable:
            continue
        if not held(text):
            continue
        answers = {tokens: matches(text) for tokens, matches in matchers.items()}
        force = [cls for cls, tokens in wanted if answers[tokens]]
        if not force:
            continue
        fs, fe = configs[r.path]
        if inp is None:
            inp = _Input(r.path, r.display, r.language, True, fs, fe, data=data, cacheable=False)
        elif reread:
            if inp.digest is not None and inp.digest != _digest(data):
                inp.cacheable = False
                changed = True
            inp.data = data
        if options.max_file_size and len(data) > options.max_file_size:
            if notes is not None:
                notes.append(_too_big_note(r.display, len(data), options.max_file_size))
            continue
        _, active = _prefilter(r.path, r.display, r.language, text, checkers.get(), fe, force=force)
        if active is None:
            continue
        key = None
        if cache is not None and inp.cacheable:
            key = cache.key(("followup", _file_key_parts(inp, (modnames or {}).get(r.path) or module_name(r.path)),
                             tuple(c.__module__ + "." + c.__qualname__ for c in active)))
            hit = cache.get("file", key)
            if isinstance(hit, FileResult) and _deps_fresh(hit):
                _merge(r, hit)
                continue
        tasks.append((inp, text, active, key, r))
    done = _execute([t[:4] for t in tasks], options)
    for (inp, text, active, key, r), extra in zip(tasks, done):
        if key is not None:
            cache.put("file", key, extra)
        _merge(r, extra)
    return changed


def _importer_tokens(results: List[FileResult], classes: Sequence[type], enabled: Set[str]) -> Dict[type, list]:
    """Per checker: follow-up token groups for the files that import, from a module of the
    run, a name that module binds to an API the checker looks at, under a name the checker's
    prefilter does not know (``pkg/env.py: from npu_bridge.hccl import hccl_ops as ops``, then
    ``from pkg.env import ops``): the module's last name and the imported name, both as words."""
    out: Dict[type, list] = {}
    for r in results:
        if not getattr(r, "exports", ()):
            continue
        name, is_package = module_name(r.path)
        if not name:
            continue
        last = name.split(".")[-1]
        for bound, qualname in r.exports:
            for cls in classes:
                if cls.language == PYTHON and cls.codes() & enabled and cls.wants(qualname) and not cls.wants(bound):
                    out.setdefault(cls, []).append((last, bound))
    return out


def _token_pattern(tokens: Sequence[str]) -> "re.Pattern":
    """A search for any of *tokens*; one that is an identifier matches only as a whole word
    (a class named ``Model`` is wanted in the files that name it, not in every file that
    mentions ``ModelDef``: in torchair's repository that was a 160 KB generated protobuf
    module). A file can name a class or module only with the whole word, in code or in a
    string."""
    import re

    parts = [rf"\b{re.escape(t)}\b" if t.isidentifier() else re.escape(t) for t in tokens]
    return re.compile("|".join(parts))


_FOLLOWUP_SUBSTRING_TESTS = 16


def _any_substring(tokens: Iterable[str]) -> Callable[[str], bool]:
    """Whether a text holds one of *tokens* anywhere (a test every match of
    :func:`_followup_matcher` on those tokens passes first); always true for more tokens than
    plain substring tests are worth."""
    found = sorted(set(tokens))
    if len(found) > _FOLLOWUP_SUBSTRING_TESTS:
        return lambda text: True
    return lambda text: any(t in text for t in found)


def _followup_matcher(tokens: Sequence[Any]) -> Callable[[str], bool]:
    """Whether a text holds one of *tokens* (see :meth:`Checker.followup`): a string, or a
    group of strings that must all occur. Plain substring tests (C speed) and then one
    search find the candidates (a text holding some group's first token as a whole word);
    the groups are then tested whole on those texts only."""
    groups = [(t,) if isinstance(t, str) else tuple(t) for t in tokens]
    groups = [g for g in groups if g]
    if not groups:
        return lambda text: False
    firsts = sorted({g[0] for g in groups})
    anywhere = _token_pattern(firsts)
    # a regular expression of alternatives scans a text an order of magnitude slower than a
    # substring test: most texts hold none of a few tokens, but for many tokens one scan beats
    # many (docs/benchmarks.md, "Measurements behind the engine's constants")
    substrings = firsts if len(firsts) <= _FOLLOWUP_SUBSTRING_TESTS else None

    def candidate(text: str) -> bool:
        if substrings is not None and not any(t in text for t in substrings):
            return False
        return anywhere.search(text) is not None

    if all(len(g) == 1 for g in groups):
        return candidate
    single = {t: _token_pattern([t]) for g in groups for t in g}

    def matches(text: str) -> bool:
        if not candidate(text):
            return False
        found: Dict[str, bool] = {}
        for g in groups:
            for t in g:
                hit = found.get(t)
                if hit is None:
                    hit = found[t] = single[t].search(text) is not None
                if not hit:
                    break
            else:
                return True
        return False

    return matches


def _deps_fresh(hit: FileResult) -> bool:
    """Whether the modules of the run a cached result's resolution read are unchanged."""
    deps = getattr(hit, "deps", ())
    if not deps:
        return True
    from npulint import modules

    run_modules = modules.active()
    return run_modules is not None and run_modules.fresh(deps)


def _merge(r: FileResult, extra: FileResult) -> None:
    r.deps = tuple(sorted(set(getattr(r, "deps", ())) | set(getattr(extra, "deps", ()))))
    r.parsed = extra.parsed
    r.findings.extend(extra.findings)
    for topic, facts in extra.facts.items():
        r.facts.setdefault(topic, []).extend(facts)
    r.noqa = extra.noqa or r.noqa
    r.directives = extra.directives or r.directives
    r.unjudged = r.unjudged or getattr(extra, "unjudged", False)
