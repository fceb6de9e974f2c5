"""The program a run's files belong to: its other Python files, which the run does not lint but
which may change what the linted modules bind (``Cfg.WS = dist.get_world_size()`` in a module the
run was not given). A run over some of a project's files (a pre-commit hook passes the changed
ones, an editor lints one buffer) must not take a value for certain because the one file that
changes it was left out: :class:`npulint.modules.RunModules` asks these files too whether they
may change a value, never what a name is bound to (a module that is not linted stays unknown
to resolution)."""

from __future__ import annotations

import os
from typing import Collection, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from npulint.paths import import_root, module_name, nearest_project
from npulint.source import PYTHON, detect_language, is_shell_candidate_name, language_of

# Past this many Python files outside the run, nothing the run binds is taken as unchanged by
# them (every question is answered "may change"): reading a monorepo's every file for one
# buffer would cost more than it is worth.
MAX_PROGRAM_FILES = 20_000


def program_root(path: str, memo: Optional[Dict[str, Optional[str]]] = None) -> Optional[str]:
    """The root of the program *path* belongs to: the nearest folder up that holds a project
    marker (:data:`npulint.paths.PROJECT_MARKERS`); None when there is none
    (:func:`_script_folder` then bounds it). *memo*: see :func:`npulint.paths.nearest_project`."""
    return nearest_project(os.path.dirname(path), memo)


def one_program(a: str, b: str, memo: Optional[Dict[str, Optional[str]]] = None) -> bool:
    """Whether the files *a* and *b* may belong to one program: their :func:`program_root` is
    one folder, or one holds the other (a subfolder with its own ``requirements.txt`` is still
    the repository's), or one of them has none (a tree without project markers is one
    program). Two clones side by side in one workspace are two programs. *memo*: see
    :func:`npulint.paths.nearest_project`."""
    ra, rb = program_root(os.path.abspath(a), memo), program_root(os.path.abspath(b), memo)
    if ra is None or rb is None or ra == rb:
        return True
    return ra.startswith(os.path.join(rb, "")) or rb.startswith(os.path.join(ra, ""))


def _script_folder(path: str) -> str:
    """The folder a file's top-level module or package is imported from (without a project
    marker, the modules Python can import beside it are its program)."""
    return import_root(path, *module_name(path))


def _beside(folder: str, limit: int, languages: Collection[str] = (PYTHON,)) -> Optional[List[str]]:
    """The Python modules of *folder* and of the packages under it (folders with an
    ``__init__.py``, as far down as they go), and their files of the other *languages* (a
    launch script); None past *limit* files."""
    out: List[str] = []
    todo = [folder]
    while todo:
        here = todo.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_file() and (e.name.endswith(".py") or (languages != (PYTHON,) and (
                        language_of(e.path) or (is_shell_candidate_name(e.name) and detect_language(e.path)))
                        in languages)):
                    out.append(e.path)
                elif e.is_dir(follow_symlinks=False) and os.path.isfile(os.path.join(e.path, "__init__.py")):
                    todo.append(e.path)
            except OSError:
                continue
        if len(out) > limit:
            return None
    return out


def _roots(paths: Iterable[str]) -> Tuple[Set[str], Set[str]]:
    """The program roots of *paths*, and the folders of those that have none (:func:`_script_folder`)."""
    roots: Set[str] = set()
    folders: Set[str] = set()
    memo: Dict[str, Optional[str]] = {}
    for p in paths:
        root = program_root(p, memo)
        if root is None:
            folders.add(_script_folder(p))
        else:
            roots.add(root)
    return roots, folders


def covered(paths: Iterable[str], walked: Sequence[str]) -> bool:
    """Whether every program *paths* belong to lies in a folder of *walked* (the run was given
    it whole): then the run's files are all of its files the configuration does not exclude,
    now and whenever a file is added, and a run's key covers what its programs hold."""
    inside = tuple(os.path.join(w, "") for w in walked)
    roots, folders = _roots(paths)
    return all(os.path.join(f, "").startswith(inside) for f in roots | folders) if inside else not (roots or folders)


def outside_files(paths: Iterable[str], settings, walked: Sequence[str] = (),
                  languages: Collection[str] = (PYTHON,)) -> Optional[List[str]]:
    """The Python files (and the files of the other *languages*: a launch script) of the
    programs *paths* (the run's files) belong to that are not among them, sorted; None when
    there are more than :data:`MAX_PROGRAM_FILES`. A program root inside a folder of *walked*
    (folders the run was given whole) adds nothing: the run's files are all of its files that
    the configuration does not exclude."""
    from npulint import discovery

    run = set(paths)
    inside = tuple(os.path.join(w, "") for w in walked)
    roots, folders = _roots(run)
    found: Set[str] = set()
    for root in sorted(roots):
        if os.path.join(root, "").startswith(inside):
            continue
        # the walk stops past the bound (a marker in a home folder must not walk the home)
        excluder = discovery.Excluder(settings)
        for f, language, _ in discovery._walk(root, discovery._initial_ignores(root), excluder, True):
            if language in languages and f not in run:
                found.add(f)
                if len(found) > MAX_PROGRAM_FILES:
                    return None
    for folder in sorted(folders):
        if os.path.join(folder, "").startswith(inside):
            continue
        beside = _beside(folder, MAX_PROGRAM_FILES, languages)
        if beside is None:
            return None
        found.update(os.path.abspath(f) for f in beside)
    out = sorted(found - run)
    return None if len(out) > MAX_PROGRAM_FILES else out
