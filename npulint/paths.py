"""Path helpers that need no parser (the engine imports them before it knows whether any
file has to be parsed)."""

from __future__ import annotations

import functools
import os
from typing import Dict, List, Optional, Sequence, Tuple


@functools.lru_cache(maxsize=1 << 16)
def module_name(path: str) -> Tuple[Optional[str], bool]:
    """The dotted module name of a file from the packages around it (folders holding an
    ``__init__.py``), and whether it is a package's ``__init__``. Memoized until
    :func:`forget_packages` (a run asks for each file's more than once)."""
    folder, base = os.path.split(os.path.abspath(path))
    stem = base.rsplit(".", 1)[0]
    if not stem.isidentifier():
        return None, False
    parts = [] if stem == "__init__" else [stem]
    package = _package_of(folder)
    if package is None:
        return None, False
    parts = list(package) + parts
    if not parts:
        return None, False
    return ".".join(parts), stem == "__init__"


@functools.lru_cache(maxsize=4096)
def _package_of(folder: str) -> Optional[Tuple[str, ...]]:
    """The dotted package path of *folder* (folders holding an ``__init__.py``); None when
    a package folder's name is not an identifier. Memoized: one ``stat`` per folder per run."""
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return ()
    parent, pkg = os.path.split(folder)
    if not pkg.isidentifier():
        return None
    above = _package_of(parent) if parent != folder else ()
    if above is None:
        return None
    return above + (pkg,)


def forget_packages() -> None:
    """Forget the package folders and module names looked up: each run looks them up afresh
    (an ``__init__.py`` may have come or gone since the last)."""
    _package_of.cache_clear()
    module_name.cache_clear()


def normal_abs(path: str) -> bool:
    """Whether *path* is absolute with no ``.``, ``..`` or empty component (so a string
    prefix test on it is a path test). POSIX only: elsewhere, always False."""
    if os.sep != "/" or not path.startswith("/"):
        return False
    return "//" not in path and "/./" not in path and "/../" not in path and not path.endswith(("/.", "/.."))


def absolute_module(module: Optional[str], level: int, this: Optional[str], is_package: bool) -> Optional[str]:
    """The absolute module a ``from`` import names: *module* (None for ``from . import x``)
    at *level* dots, from the module *this* (a package's ``__init__`` when *is_package*); None
    when that cannot be known (no module name, more dots than packages)."""
    if not level:
        return module
    if not this:
        return None
    parts = this.split(".")
    if not is_package:
        parts = parts[:-1]
    if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
        return None
    base = parts[:len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))



def import_root(path: str, name: Optional[str], is_package: bool) -> str:
    """The folder the module *name* (the file *path*, a package's ``__init__`` when
    *is_package*) is imported from: the ``sys.path`` entry it runs with (a script's folder, the
    folder above a top-level package)."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range((name or "").count(".") + (1 if is_package else 0)):
        folder = os.path.dirname(folder)
    return folder

def reached_from(importer: Optional[str], files: Sequence[str]) -> Optional[str]:
    """Which of *files* (the files of a run that hold one module name: ``model.py`` of two
    folders run as scripts, one package of two clones) an import of that name by the file
    *importer* reaches: *importer* itself when it is one of them, else the only one; of
    several, the one imported from the importer's own :func:`import_root` (the ``sys.path``
    entry it runs with), when exactly one is; else None (a process never loads two files as
    one module, and which one it loads is not known)."""
    if not files:
        return None
    if importer in files:
        return importer
    if len(files) == 1:
        return files[0]
    if importer is None:
        return None
    root = import_root(importer, *module_name(importer))
    hits = [f for f in files if import_root(f, *module_name(f)) == root]
    return hits[0] if len(hits) == 1 else None


# What marks a project's folder (the release inference reads its requirements there; the files
# of a program are those under it: npulint.program). torchair's own tree has its setup.py in
# python/.
PROJECT_MARKERS = (".git", ".hg", "setup.py", "pyproject.toml", "setup.cfg", "requirements.txt",
                   "python/torchair/__init__.py")


def nearest_project(folder: str, memo: Optional[Dict[str, Optional[str]]] = None) -> Optional[str]:
    """The nearest folder at or above *folder* holding a :data:`PROJECT_MARKERS` entry, or None;
    *memo* (folder -> answer) shares the walk between the folders of one tree."""
    memo = {} if memo is None else memo
    seen: List[str] = []
    here = folder
    found: Optional[str] = None
    while True:
        if here in memo:
            found = memo[here]
            break
        seen.append(here)
        if any(os.path.exists(os.path.join(here, m)) for m in PROJECT_MARKERS):
            found = here
            break
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    for f in seen:
        memo[f] = found
    return found
