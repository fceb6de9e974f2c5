"""The modules of the run: what each linted module binds at its top level, for the modules
that import it (RULES.md "Resolution follows the modules of the run").

``pkg/env.py: from npu_bridge.hccl import hccl_ops`` makes ``pkg.env.hccl_ops`` the same
object as ``npu_bridge.hccl.hccl_ops``; ``pkg/sizes.py: POOL_MB = 64 << 20`` makes
``pkg.sizes.POOL_MB`` the constant. :class:`RunModules` answers such questions lazily: a
module's file is read and compiled (CPython's ``ast``: C speed, top level only) the first
time a qualified name under it is asked about, so only the modules that analysed files
import are ever looked at. What it cannot be sure of stays unknown:

* a module that is not linted, or whose dotted name two linted files share;
* a name bound more than once at the top level, under ``if``/``try``/``for``/``while``/
  ``with`` (including ``if __name__ == "__main__":``, which does not run on import), in
  ``global`` statements of its functions, or deleted;
* a name only a ``from X import *`` of a module we cannot enumerate (neither a module of the
  run nor one of :data:`npulint.semantic.STAR_EXPORTS`) may bind, or a name a
  constant uses before the statement that binds it;
* a name a walrus binds anywhere at the top level;
* a module in no package (a top-level ``consts.py``) imported from another root folder than
  its own (:meth:`RunModules.foreign`: Python finds it on ``sys.path``, some other file);
* a constant, class attribute or module-level container that any file of the run may change
  (:meth:`RunModules.touched`: ``x.NAME = v``, ``setattr``, a class body binding it,
  ``x.NAME[k] = v``, ``x.NAME.update()``...);
* the top-level packages of the frameworks themselves (:data:`FRAMEWORKS`): when the linted
  tree is torch_npu or torchair, their public names stay what the rules know them as.

The pipeline sets the run's table (:func:`activate`) before any file is analysed; forked
workers inherit it. Each file's result records the modules its resolution read
(:meth:`RunModules.take_deps`), so a cached result is used again only while they are
unchanged.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from npulint.cache import blake2b
from npulint.paths import absolute_module, import_root

# Framework packages whose own modules are never resolved through: their public names (the
# ones the rules catalogue) stay as written even when the framework's tree is linted.
FRAMEWORKS = frozenset({"torch", "torch_npu", "torchair", "npu_bridge", "tensorflow", "hccl", "mindspeed",
                        "megatron", "tf_adapter", "npu_device"})

# An entry of a module's table: what the module binds a name to.
QUAL = "q"  # an import (or a plain alias of one): ("q", qualified name)
CONST = "c"  # a constant: ("c", value)
LOCAL_DEF = "l"  # a def, a class, or a value we do not evaluate: the module's own object
UNKNOWN_ENTRY = "u"  # bound, but not certainly once (conditional, rebound, star-shadowed)

Entry = Tuple

_MAX_DEPTH = 24


class ModuleTable:
    """What one module binds at its top level."""

    __slots__ = ("name", "entries", "complete", "all_names", "stars", "made")

    def __init__(self, name: str):
        self.name = name
        self.entries: Dict[str, Entry] = {}
        # a name bound once, unconditionally, to a call of a dotted name (``config =
        # torchair.CompilerConfig()``) -> that dotted name, in the module's own terms
        self.made: Dict[str, str] = {}
        self.complete = True  # every top-level name is in entries (no unknown star import)
        self.all_names: Optional[Tuple[str, ...]] = None  # a literal ``__all__``, when there is one
        self.stars: List[str] = []  # modules star-imported at the top level, in order


class RunModules:
    """The table of the run: dotted module name -> its file, read on demand through *read*
    (path -> text or None)."""

    def __init__(self, paths: Dict[str, Optional[Tuple[str, bool]]], read: Callable[[str], Optional[str]],
                 files: Optional[Iterable[str]] = None,
                 outside: Optional[Callable[[], Optional[Sequence[str]]]] = None,
                 read_any: Optional[Callable[[str], Optional[str]]] = None):
        # module name -> (path, is_package), or None when two files claim the name
        self.paths = paths
        # every Python file of the run (with or without a module name): what they may change
        self.files: Tuple[str, ...] = tuple(sorted(set(files) if files is not None else
                                                   {w[0] for w in paths.values() if w is not None}))
        # the Python files of the programs the run's files belong to that the run does not lint
        # (npulint.program.outside_files; None: too many to read): they may change values too
        self._outside = outside
        # a file's text whatever its size (up to the read cap): one over --max-file-size is not
        # analysed, but what it changes counts all the same (see _asked_text)
        self._read_any = read_any
        self._big: Dict[str, Optional[str]] = {}
        self._program: Optional[Tuple[str, ...]] = None  # see program()
        self._program_names: Optional[FrozenSet[str]] = None  # see program_names()
        self.unbounded = False  # the program's other files are too many to read: anything may change
        self.asked = False  # whether this process asked what the program's files change or hold
        self._touches: Dict[str, Optional["Touches"]] = {}
        self._touched: Dict[Tuple[str, str, Optional[str]], Tuple[str, ...]] = {}
        self._dynamic_text: Dict[str, bool] = {}  # whether a file's text names setattr/delattr/vars
        self._text_facts: Dict[str, Dict[str, Any]] = {}  # see text_facts()
        self._spellings: Dict[str, FrozenSet[str]] = {}  # see _other_spellings
        self._read = read
        self._tables: Dict[str, Optional[ModuleTable]] = {}
        self._digests: Dict[str, Optional[str]] = {}
        self._rewrites: Dict[str, Tuple[str, FrozenSet[str]]] = {}
        self._stars: Dict[str, Tuple[Optional[Dict[str, str]], FrozenSet[str]]] = {}
        self._deps: Set[str] = set()
        self._texts: Dict[str, Optional[str]] = {}
        self._every_text: Optional[List[Tuple[str, str]]] = None  # see _all_texts
        self._holders: Dict[str, FrozenSet[str]] = {}  # see _holding
        self._reach: Dict[str, FrozenSet[str]] = {}  # see _reaching
        self._quoted: Dict[str, Tuple[str, ...]] = {}  # see quoting
        self._words: Dict[str, frozenset] = {}  # see _may_bind
        self._roots: Dict[Tuple[Optional[str], bool], Optional[str]] = {}  # see foreign
        # paths -> the Python files of their programs the run does not lint (None: too many);
        # set by the pipeline (npulint.program.outside_files with the run's settings)
        self.program_of: Optional[Callable[[Sequence[str]], Optional[Sequence[str]]]] = None

    def _text(self, path: str) -> Optional[str]:
        if path not in self._texts:
            self._texts[path] = self._read(path)
        return self._texts[path]

    def _asked_text(self, path: str, keep: bool = True) -> Optional[str]:
        """A file's text for a question of what it changes or holds: as the module table reads
        it (kept, unless *keep* is false and it was not read yet), else whatever its size."""
        if path in self._texts or keep:
            text = self._text(path)
        else:
            text = self._read(path)
        if text is None and self._read_any is not None:
            if path not in self._big:
                self._big[path] = self._read_any(path)
            text = self._big[path]
        return text

    def program(self) -> Tuple[str, ...]:
        """The files that may change what the run's modules bind: the run's Python files and
        those of their programs it does not lint (read on first use; :attr:`unbounded` when
        those are too many)."""
        if self._program is None:
            extra = self._outside() if self._outside is not None else ()
            if extra is None:
                self.unbounded = True
                extra = ()
            self._program = tuple(sorted(set(self.files) | set(extra)))
        return self._program

    def program_names(self) -> FrozenSet[str]:
        """The names an import of a module of the run or of its programs may start with: the
        first part of each of the run's module names, and each program file's name and folders
        (worked out once). A cached result that asked holds while the names are the same."""
        self._deps.add(_PROGRAM_NAMES)
        self.asked = True
        return self._names()

    def _names(self) -> FrozenSet[str]:
        if self._program_names is None:
            seen: Set[str] = {m.split(".", 1)[0] for m in self.paths}
            for path in self.program():
                parts = os.path.normpath(path).split(os.sep)
                seen.update(parts[:-1])
                seen.add(os.path.splitext(parts[-1])[0])
            self._program_names = frozenset(seen)
        return self._program_names

    @classmethod
    def from_files(cls, files: Iterable[Tuple[str, Optional[str], bool]],
                   read: Callable[[str], Optional[str]],
                   outside: Optional[Callable[[], Optional[Sequence[str]]]] = None,
                   read_any: Optional[Callable[[str], Optional[str]]] = None) -> "RunModules":
        """*files*: (path, module name or None, is_package); *outside*, *read_any*: see the
        constructor."""
        paths: Dict[str, Optional[Tuple[str, bool]]] = {}
        every: List[str] = []
        for path, name, is_package in files:
            every.append(path)
            if not name:
                continue
            if name in paths and paths[name] is not None and paths[name][0] != path:
                paths[name] = None  # ambiguous: unknown
            elif name not in paths:
                paths[name] = (path, is_package)
        return cls(paths, read, every, outside, read_any)

    # -- what the modules of the run change in other modules ---------------------------
    def touched(self, name: str, kind: str, exclude: Optional[str] = None) -> bool:
        """Whether a Python file of the run (other than module *exclude*'s, when that names
        one file) may change what *name* is bound to elsewhere, by *kind*:

        * ``"store"``: an attribute *name* is assigned, augmented or deleted (``x.NAME = v``,
          ``del x.NAME``, ``setattr(x, "NAME", v)``), or attributes are set by a name we
          cannot read (``setattr(x, k, v)``, ``delattr``, ``vars(x)``);
        * ``"class"``: a class body binds *name* (a subclass overriding ``self.NAME``), or a
          ``"store"``;
        * ``"container"``: a container reached as ``x.NAME`` or ``NAME`` may be changed in
          place or passed on (anything but an item read or a reading method), or a ``"store"``;
        * ``"element"``: an item of it is read and may escape (``f(x.NAME[k])``);
        * ``"use"``: ``x.NAME`` or ``NAME`` is stored or used other than by an item read, a
          reading method or a comparison (passed to a function, ``x.NAME.record()``...): the
          object bound to it may be used there (a ``setattr`` whose name we cannot read is not
          counted: it replaces a value, it does not use one);
        * ``"replace"``: *name* is a module, and another object may be put in its place in
          ``sys.modules`` (``sys.modules["pkg.a"] = other``, ``.update(...)``, passing it on).

        A file is read and compiled only when *name* occurs in its text (for ``"store"``, in
        text that may store it: :func:`_store_pattern`), and the search ends at the second file
        found (a cached result's dependency is then on those files: see :meth:`digest`)."""
        self._deps.add(f"{_TOUCHED}{name}\0{kind}\0{exclude or ''}")  # a cached result holds while the answer does
        self.asked = True
        return bool(self._touching(name, kind, exclude))

    def text_facts(self, key: str) -> Optional[Dict[str, Any]]:
        """Path -> what the extractor registered under *key* (:func:`register_text_facts`) finds in
        that file's text, for the files of the run's programs where it finds something; None when
        those are too many to read (anything may be found). A cached result that asked holds
        while the answer is the same (a dependency, as for :meth:`touched`)."""
        self._deps.add(_TEXT_FACTS + key)
        self.asked = True
        return self._facts_of_texts(key)

    def quoting(self, word: str) -> Optional[Tuple[str, ...]]:
        """The files of the run's programs whose text holds *word* between quotes (``'word'`` or
        ``"word"``: a string literal, or part of one), sorted; None when they are too many to
        read. A cached result that asked holds while the answer is the same (a dependency)."""
        self._deps.add(_QUOTING + word)
        self.asked = True
        return self._quoting(word)

    def _quoting(self, word: str) -> Optional[Tuple[str, ...]]:
        self.program()
        if self.unbounded:
            return None
        hit = self._quoted.get(word)
        if hit is None:
            single, double = f"'{word}'", f'"{word}"'
            hit = self._quoted[word] = tuple(p for p in self.program() for t in (self._asked_text(p),)
                                             if t is not None and (single in t or double in t))
        return hit

    def _facts_of_texts(self, key: str) -> Optional[Dict[str, Any]]:
        program = self.program()
        if self.unbounded:
            return None
        hit = self._text_facts.get(key)
        if hit is None:
            extract = _EXTRACTORS[key]
            hit = {}
            for path in program:
                # (a text not read yet is not kept: one scan of a large run's files would hold them all)
                text = self._asked_text(path, keep=False)
                if text:
                    found = extract(text)
                    if found:
                        hit[path] = found
            self._text_facts[key] = hit
        return hit

    def _touching(self, name: str, kind: str, exclude: Optional[str]) -> Tuple[str, ...]:
        skip = None
        if exclude:
            where = self.paths.get(exclude)
            skip = where[0] if where is not None else None
        key = (name, kind, exclude if kind == "use" else None)  # (a use is asked of the files that may reach the module)
        hits = self._touched.get(key)
        if hits is None:
            self.program()
            if self.unbounded:  # the files it may be in are too many to read
                hits = self._touched[key] = (_UNBOUNDED,)
        if hits is None:
            found = []
            name = _nfkc(name)  # as CPython reads identifiers (``a.ＰＯＯＬ = 3`` stores ``POOL``)
            for path in (self._may_reach(name, exclude) if kind == "use" else self.files):
                text = self._asked_text(path)
                if text is None:
                    continue
                other = name in self._other_spellings(path, text)  # ``x.ＰＯＯＬ``, as CPython reads it
                if kind == "replace":
                    if "modules" not in text:
                        continue
                    other = True  # (a key we cannot read names any module)
                if name not in text and not other and (kind in ("element", "use") or
                                                       not self._sets_by_name(path, text)):
                    continue
                if kind == "store" and not other and not self._sets_by_name(path, text) and \
                        _store_pattern(name).search(text) is None:
                    continue  # no text that can store the attribute: not compiled
                t = self._touch(path, text)
                if t is not None and _changes(t, name, kind):
                    found.append(path)
                    if len(found) == 2:  # the answer is known: one of two is not the excluded module's
                        break
            if len(found) < 2:
                found.extend(self._outside_touching(name, kind, 2 - len(found), exclude))
            hits = self._touched[key] = tuple(found)
        return tuple(p for p in hits if p != skip)

    def _outside_touching(self, name: str, kind: str, most: int, module: Optional[str]) -> List[str]:
        """Up to *most* files of the run's programs that the run does not lint and that may
        change what *name* is bound to, by *kind* (as :meth:`_touching` asks the run's files):
        a store, a change in place or an item read of that name, read from the file's tree where
        its text names it; for a use (of *module*'s object), naming it and the module's own name
        as words is enough (no compile: a use is anything but a read). Not asked
        of them: which may reach the module (a run over one file of a large project would
        search the whole project for every module), and so not what a computed ``setattr`` may
        set, which only a file that reaches the module can do to its objects."""
        program = self.program()
        if len(program) == len(self.files):
            return []
        run = set(self.files)
        named = re.compile(r"\b%s\b" % re.escape(name))
        stem = module.rsplit(".", 1)[-1] if module else None
        importer = re.compile(r"\b%s\b" % re.escape(stem)) if stem else None
        out: List[str] = []
        for p in program:
            if p in run:
                continue
            text = self._asked_text(p)
            if text is None or name not in text or named.search(text) is None:
                continue
            if kind == "use":
                hit = importer is None or (stem in text and importer.search(text) is not None)
            elif kind == "store" and _store_pattern(name).search(text) is None and "setattr" not in text \
                    and "delattr" not in text:
                continue  # (no store of it by name: a computed one, or vars(), does not count here)
            else:
                t = self._touch(p, text)
                hit = t is not None and _changes(t, name, kind, computed=False)
            if hit:
                out.append(p)
                if len(out) == most:
                    break
        return out

    def _may_reach(self, name: str, module: Optional[str]) -> Iterable[str]:
        """The files of the run whose text names *name* and that may reach *module*'s
        top-level objects (:meth:`_reaching`); every file when *module* names no one file of
        the run."""
        reach = self._reaching(module)
        if reach is None:
            return self.files
        return sorted(p for p, t in self._all_texts() if p in reach and name in t)

    def _reaching(self, module: Optional[str]) -> Optional[FrozenSet[str]]:
        """The files of the run that may reach *module*'s top-level objects: to
        reach them a file imports *module* (``import pkg.m``, ``from pkg.m import name``,
        ``from . import m``: its text holds *module*'s own name as a word), or a module that
        may re-export them (one whose text holds *module*'s name, ``from .m import *``, and so
        on), or, in *module*'s package, imports relatively (``from .. import name``). None when
        *module* names no one file of the run."""
        where = self.paths.get(module) if module else None
        if where is None:
            return None
        hit = self._reach.get(module)  # type: ignore[arg-type]
        if hit is not None:
            return hit
        texts = self._all_texts()
        path, is_package = where
        depth = module.count(".") + (1 if is_package else 0)  # folders from the file up to the package root
        package_root = None
        if depth:
            package_root = path
            for _ in range(depth):  # a/b/c.py (a.b.c) -> a; pkg/__init__.py (pkg) -> pkg
                package_root = os.path.dirname(package_root)
            package_root += os.sep
        reach: Set[str] = set()
        stems: Set[str] = set()
        new = {module.rsplit(".", 1)[-1]}
        first = True
        while new:
            stems |= new
            found = set()
            added = set().union(*(self._holding(stem) for stem in new))
            if first and package_root is not None:
                added.update(p for p, t in texts if p.startswith(package_root) and "from ." in t)
            for p in added - reach:
                reach.add(p)
                stem = os.path.splitext(os.path.basename(p))[0]
                found.add(os.path.basename(os.path.dirname(p)) if stem == "__init__" else stem)
            new, first = found - stems, False
        hit = self._reach[module] = frozenset(reach)  # type: ignore[index]
        return hit

    def _all_texts(self) -> List[Tuple[str, str]]:
        """``(path, text)`` of every Python file of the run that reads (kept: the word questions
        ask them again)."""
        if self._every_text is None:
            self._every_text = [(p, t) for p in self.files for t in (self._asked_text(p),) if t is not None]
        return self._every_text

    def _holding(self, word: str) -> FrozenSet[str]:
        """The files of the run whose text holds *word* as a whole word (asked again for the
        same folder and module names by every :meth:`_reaching`)."""
        found = self._holders.get(word)
        if found is None:
            named = re.compile(r"\b%s\b" % re.escape(word))
            found = self._holders[word] = frozenset(
                p for p, t in self._all_texts() if word in t and named.search(t) is not None)
        return found

    def _other_spellings(self, path: str, text: str) -> FrozenSet[str]:
        """The attribute names *text* writes after a dot in another Unicode form than CPython
        reads them in (``a.ＰＯＯＬ`` is ``a.POOL``: identifiers are NFKC-normalized), as
        CPython reads them: the text tests of :meth:`_touching` look for those too."""
        found = self._spellings.get(path)
        if found is None:
            found = frozenset()
            if not text.isascii():
                runs = {m.group(1) for m in _DOTTED_NON_ASCII.finditer(text)}
                found = frozenset(n for n in map(_nfkc, runs) if n.isascii())
            self._spellings[path] = found
        return found

    def _sets_by_name(self, path: str, text: str) -> bool:
        hit = self._dynamic_text.get(path)
        if hit is None:
            hit = self._dynamic_text[path] = _SETS_BY_NAME.search(text) is not None
        return hit

    def _touch(self, path: str, text: str) -> Optional["Touches"]:
        if path not in self._touches:
            self._touches[path] = touches(text)
        return self._touches[path]

    # -- dependencies (for the cache) --------------------------------------------------
    def take_deps(self) -> Tuple[Tuple[str, Optional[str]], ...]:
        """The modules read since the last call, with their digests (None: not a module of
        the run), and forget them."""
        out = tuple(sorted((m, self.digest(m)) for m in self._deps))
        self._deps = set()
        return out

    def fresh(self, deps: Iterable[Tuple[str, Optional[str]]]) -> bool:
        """Whether every module of *deps* is still what it was (a cached result's)."""
        return all(self.digest(m) == d for m, d in deps)

    def digest(self, module: str) -> Optional[str]:
        if module.startswith(_TEXT_FACTS):  # a dependency on what an extractor finds in the run's texts
            if module not in self._digests:
                key = module[len(_TEXT_FACTS):]
                facts = self._facts_of_texts(key) if key in _EXTRACTORS else None
                self._digests[module] = None if key not in _EXTRACTORS else blake2b(
                    repr(None if facts is None else sorted(facts.items())).encode("utf-8", "surrogateescape"),
                    digest_size=16).hexdigest()
            return self._digests[module]
        if module == _PROGRAM_NAMES:  # a dependency on the names of the run's and its programs' files
            if module not in self._digests:
                self._digests[module] = blake2b("\0".join(sorted(self._names())).encode("utf-8", "surrogateescape"),
                                                digest_size=16).hexdigest()
            return self._digests[module]
        if module.startswith(_QUOTING):  # a dependency on which files hold a word between quotes
            if module not in self._digests:
                hits = self._quoting(module[len(_QUOTING):])
                self._digests[module] = blake2b(repr(hits).encode("utf-8", "surrogateescape"),
                                                digest_size=16).hexdigest()
            return self._digests[module]
        if module.startswith(_TOUCHED):  # a dependency on what the files of the run change (touched)
            if module not in self._digests:
                name, kind, exclude = module[len(_TOUCHED):].split("\0")
                hits = self._touching(name, kind, exclude or None)
                self._digests[module] = blake2b("\0".join(hits).encode("utf-8", "surrogateescape"),
                                                        digest_size=16).hexdigest()
            return self._digests[module]
        if module not in self._digests:
            where = self.paths.get(module)
            text = self._text(where[0]) if where else None
            self._digests[module] = None if text is None else blake2b(
                f"{where[0]}\0{int(where[1])}\0".encode() + text.encode("utf-8", "surrogateescape"),
                digest_size=16).hexdigest()
        return self._digests[module]

    # -- the tables --------------------------------------------------------------------
    def is_module(self, name: str) -> bool:
        return self.paths.get(name) is not None and name.split(".")[0] not in FRAMEWORKS

    def table(self, module: str) -> Optional[ModuleTable]:
        if not self.is_module(module):
            return None
        self._deps.add(module)
        if module not in self._tables:
            self._tables[module] = None  # a cycle while scanning sees no table
            path, is_package = self.paths[module]  # type: ignore[misc]
            text = self._text(path)
            self._tables[module] = None if text is None else scan(
                text, module, is_package, lambda src: self.foreign(src, module, is_package))
        return self._tables[module]

    def source(self, module: str, importer: Optional[str] = None,
               importer_is_package: bool = False) -> Optional[Tuple[str, bool]]:
        """``(text, is_package)`` of *module* as an import of it by *importer* finds it: a
        module of the run (not :meth:`foreign` to the importer) that can be read; else None."""
        if not self.is_module(module) or self.foreign(module, importer, importer_is_package):
            return None
        path, is_package = self.paths[module]  # type: ignore[misc]
        text = self._text(path)
        return None if text is None else (text, is_package)

    def _root(self, importer: Optional[str], is_package: bool) -> Optional[str]:
        """The folder the importer's own dotted name is found from (the ``sys.path`` entry
        it runs with: a script's folder, the folder above a top-level package), or None."""
        key = (importer, is_package)
        if key not in self._roots:
            where = self.paths.get(importer) if importer else None
            self._roots[key] = import_root(where[0], importer, where[1]) if where is not None else None
        return self._roots[key]

    def foreign(self, module: Optional[str], importer: Optional[str], is_package: bool) -> bool:
        """Whether an import of *module* (absolute) by *importer* reaches a module of the
        run that is in no package (a top-level ``consts.py``) only by name: Python finds such
        a module on ``sys.path``, so it is that file only when it sits in the importer's own
        root folder (:meth:`_root`); elsewhere (``gpt/train.py: from consts import X`` with
        ``llama/consts.py`` linted) the import is of some other, unknown module."""
        if not module:
            return False
        top = module.split(".", 1)[0]
        where = self.paths.get(top)
        if where is None or where[1]:
            return False  # not a module of the run (or ambiguous: unknown anyway), or a package
        root = self._root(importer, is_package)
        return root is None or root != os.path.dirname(os.path.abspath(where[0]))

    def _split(self, qualname: str) -> Optional[Tuple[str, str, List[str]]]:
        """The longest prefix of *qualname* that is a module of the run, the name after it,
        and the rest; but where a package of the run binds the name of its submodule to a name
        imported from that submodule (``pkg/__init__.py: from .config import config``), the
        import has set the package's ``config`` to the submodule first and the binding then
        replaces it, for good: ``pkg.config`` is that object, as Python looks it up (the
        package, that name, and the rest). Which of another binding (``b = Namespace()``) and
        the submodule holds the name depends on which came last: ``__init__`` importing the
        submodule before the binding, or a module importing it after (``import pkg.b``); so
        then the name is not known (None)."""
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:cut])
            if self.is_module(prefix):
                for k in range(1, cut):
                    package, name = ".".join(parts[:k]), parts[k]
                    if self.is_module(package):
                        e = self.entry(package, name)
                        if e is None or e == (QUAL, f"{package}.{name}") or e[0] == UNKNOWN_ENTRY:
                            continue  # (unknown: a star import after may rebind it, as before)
                        if e[0] == QUAL and e[1].startswith(f"{package}.{name}."):
                            return package, name, parts[k + 1:]
                        return None
                return prefix, parts[cut], parts[cut + 1:]
        return None

    def rewrite(self, qualname: str, canonical: Callable[[str], str]) -> str:
        """*qualname* with every leading ``<module of the run>.<name imported there>``
        replaced by what that import names, as often as it applies (re-exports, chains)."""
        hit = self._rewrites.get(qualname)
        if hit is not None:
            self._deps.update(hit[1])
            return hit[0]
        outer = self._deps
        self._deps = set()
        q = qualname
        try:
            for _ in range(_MAX_DEPTH):
                split = self._split(q)
                if split is None:
                    break
                module, name, rest = split
                entry = self.entry(module, name)
                if entry is None or entry[0] != QUAL:
                    break
                nq = canonical(".".join([entry[1]] + rest))
                if nq == q:
                    break
                q = nq
        finally:
            used = frozenset(self._deps)
            self._deps = outer | used
        self._rewrites[qualname] = (q, used)
        return q

    def constant(self, qualname: str, canonical: Callable[[str], str]):
        """``(True, value)`` when *qualname* (rewritten) is a constant a module of the run
        binds once; ``(False, None)`` otherwise."""
        q = self.rewrite(qualname, canonical)
        split = self._split(q)
        if split is None or split[2]:
            return False, None
        entry = self.entry(split[0], split[1])
        if entry is not None and entry[0] == CONST and not self.touched(split[1], "store") and \
                not self._rebinds_by_name(split[0], split[1]) and \
                not self.is_module(f"{split[0]}.{split[1]}") and not self.touched(split[0], "replace"):
            # (a submodule of that name replaces the package's binding once imported; a module
            # put in place of this one in sys.modules binds what it binds)
            return True, entry[1]
        return False, None

    def made_by(self, qualname: str, canonical: Callable[[str], str]) -> Optional[str]:
        """The qualified name of what *qualname* (rewritten) was made by, when it is a name a
        module of the run binds once, unconditionally, at its top level to a call of a dotted
        name (``comp.py: config = torchair.CompilerConfig()`` -> ``torchair.CompilerConfig``),
        and nothing rebinds (a store of that attribute in another module, the module's
        namespace, the module replaced in ``sys.modules``); else None."""
        q = self.rewrite(qualname, canonical)
        split = self._split(q)
        if split is None or split[2]:
            return None
        module, name, _ = split
        entry = self.entry(module, name)
        t = self.table(module)
        if entry is None or entry[0] == UNKNOWN_ENTRY or t is None or name not in t.made:
            return None
        if self.touched(name, "store", module) or self._rebinds_by_name(module, name) or \
                self.is_module(f"{module}.{name}") or self.touched(module, "replace"):
            return None
        return self.rewrite(canonical(f"{module}.{t.made[name]}"), canonical)

    def _rebinds_by_name(self, module: str, name: str) -> bool:
        """Whether *module* may rebind its top-level *name* through its namespace
        (:attr:`Touches.rebound`: ``globals()["NAME"] = v``, ``exec``...)."""
        where = self.paths.get(module)
        text = self._text(where[0]) if where else None
        if text is None or not _REBINDS.search(text):
            return False
        t = self._touch(where[0], text)  # type: ignore[index]
        return t is None or None in t.rebound or name in t.rebound

    def _may_bind(self, module: str, name: str) -> bool:
        """Whether *module* may bind *name* to an import or a constant (the only entries that
        resolve anything): the module has a star import, or *name* is a word of one of its
        import statements or the target of a plain assignment. Read from the text with two
        regular expressions, once per module, which spares compiling most of the modules asked
        about (calls of the run's own helper functions)."""
        if module in self._tables:
            return True
        words = self._words.get(module)
        if words is None:
            where = self.paths.get(module)
            text = self._text(where[0]) if where else None
            if text is None:
                words = frozenset()
            elif "*" in text and _STAR.search(text):
                words = _ANY
            else:
                found = set()
                for m in _IMPORT_LINE.finditer(text):
                    found.update(_WORD.findall(m.group(1)))
                found.update(_ASSIGNED.findall(text))
                words = frozenset(found)
            self._words[module] = words
        return words is _ANY or name in words

    def entry(self, module: str, name: str) -> Optional[Entry]:
        """What *module* binds *name* to at its top level (following its star imports of
        other modules of the run), or None when that is not known."""
        if not self.is_module(module):
            return None
        self._deps.add(module)
        if not self._may_bind(module, name):
            return None
        t = self.table(module)
        if t is None:
            return None
        e = t.entries.get(name)
        if e is not None:
            return e
        if not t.complete:
            return None
        found = None  # the last star import that binds it wins
        for star in t.stars:
            exported = self.star_names(star)
            if exported is None:
                return None
            if name in exported:
                found = (QUAL, exported[name])
        return found

    def star_names(self, module: str) -> Optional[Dict[str, str]]:
        """The names ``from <module> import *`` binds, each to its qualified name (``__all__``
        when the module has a literal one, else its public names), or None when that is not
        known."""
        hit = self._stars.get(module)
        if hit is not None:
            self._deps.update(hit[1])
            return hit[0]
        self._stars[module] = (None, frozenset())  # a star-import cycle: unknown
        outer = self._deps
        self._deps = set()
        try:
            result = self._star_names(module)
        finally:
            used = frozenset(self._deps)
            self._deps = outer | used
        self._stars[module] = (result, used)
        return result

    def _star_names(self, module: str) -> Optional[Dict[str, str]]:
        from npulint.semantic import STAR_EXPORTS

        known = STAR_EXPORTS.get(module)  # a framework module whose star import we know (npu_init)
        if known is not None:
            return dict(known)
        t = self.table(module)
        if t is None or not t.complete:
            return None
        names: Dict[str, str] = {}
        for star in t.stars:
            inner = self.star_names(star)
            if inner is None:
                return None
            for n in inner:
                names[n] = f"{module}.{n}"
        for n in t.entries:
            names[n] = f"{module}.{n}"
        if t.all_names is not None:
            return {n: f"{module}.{n}" for n in t.all_names}
        return {n: q for n, q in names.items() if not n.startswith("_")}


# -- what a module changes in others ---------------------------------------------------------

_READING = frozenset({"get", "keys", "values", "items", "copy", "index", "count"})


class Touches:
    """What one module may change of other modules' objects (:meth:`RunModules.touched`)."""

    __slots__ = ("stored", "mutated", "elements", "class_bound", "dynamic", "rebound", "replaced", "all_changes")

    def __init__(self):
        self.stored: Set[str] = set()  # x.NAME stored or deleted, setattr(x, "NAME", v)
        self.mutated: Set[str] = set()  # x.NAME / NAME changed in place, passed on, aliased
        self.elements: Set[str] = set()  # x.NAME[k] / NAME[k] read (its item may escape)
        self.class_bound: Set[str] = set()  # bound in a class body
        self.dynamic = False  # setattr/delattr with a name we cannot read, vars()
        # the module's own top-level names it may rebind by name (None: any): a store through
        # ``globals()`` (``vars()``/``locals()`` with no argument), passing it on, ``exec``, a
        # use of ``sys.modules`` other than ``k in sys.modules``
        self.rebound: Set[Optional[str]] = set()
        # the modules it may put another object in place of in ``sys.modules`` (None: any):
        # ``sys.modules["pkg.a"] = other`` makes ``from pkg.a import X`` read ``other.X``
        self.replaced: Set[Optional[str]] = set()
        # where the module uses ``__all__`` (or another module's) in a way that may change it
        # (line, column of the name): what ``"__all__" in mutated`` stands on
        self.all_changes: Set[Tuple[int, int]] = set()


@functools.lru_cache(maxsize=4)  # a few trees only: each may be tens of MB
def _tree(text: str) -> Optional[ast.Module]:
    """CPython's tree of a module's source, or None when it does not compile; one compile for
    both readers of a module (:func:`touches`, :func:`scan`)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return compile(text.encode("utf-8", "surrogateescape"), "<npulint>", "exec",
                           flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeError):
            return None


def touches(text: str) -> Optional[Touches]:
    """One walk of a module's whole tree; None when it does not compile (what it does is
    then unknown, but CPython would not run it either)."""
    tree = _tree(text)
    if tree is None:
        return None
    t = Touches()
    sys_names, modules_names = _sys_aliases(text)
    parent: Dict[int, ast.AST] = {}
    stack: List[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Call and type(node.func) is ast.Name and (node.func.id == "exec" or (
                node.func.id in ("globals", "locals", "vars") and not node.args and not node.keywords)):
            key = _namespace_store(node, parent) if node.func.id != "exec" else None
            if key != "":
                t.rebound.add(key)
        elif ((kind is ast.Attribute and node.attr == "modules" and type(node.value) is ast.Name
               and node.value.id in sys_names) or (kind is ast.Name and node.id in modules_names
                                                   and isinstance(node.ctx, ast.Load))) and \
                not isinstance(parent.get(id(node)), ast.Compare):
            t.rebound.add(None)  # sys.modules[__name__] may reach setattr
            t.replaced.update(_modules_stored(node, parent))
        if kind is ast.ClassDef:
            for stmt in node.body:
                t.class_bound.update(_names_bound(stmt))
        elif kind is ast.Call and type(node.func) is ast.Name and node.func.id in ("setattr", "delattr", "vars"):
            args = node.args
            if node.func.id != "vars" and len(args) >= 2 and type(args[1]) is ast.Constant and \
                    isinstance(args[1].value, str):
                t.stored.add(args[1].value)
            else:
                t.dynamic = True
        elif kind is ast.Call and type(node.func) is ast.Attribute and node.func.attr in ("__setattr__", "__delattr__"):
            # ``object.__setattr__(m, "WS", v)``, ``super().__setattr__(k, v)``
            names = [a.value for a in node.args[:2] if type(a) is ast.Constant and isinstance(a.value, str)]
            if len(node.args) >= 2 and len(names) == 1 and not node.keywords:
                t.stored.add(names[0])
            else:
                t.dynamic = True
        elif kind is ast.ImportFrom:
            # ``from m import NAME as other``: what the module does with the object goes by another
            # name, which the uses below do not tie back to NAME: it may do anything with it
            t.mutated.update(a.name for a in node.names if a.asname and a.asname != a.name)  # type: ignore[attr-defined]
            if any(a.name == "__all__" and a.asname and a.asname != a.name for a in node.names):  # type: ignore[attr-defined]
                t.all_changes.add((node.lineno, node.col_offset))  # type: ignore[attr-defined]
        elif kind is ast.Attribute or kind is ast.Name:
            name = node.attr if kind is ast.Attribute else node.id  # type: ignore[attr-defined]
            if isinstance(node.ctx, (ast.Store, ast.Del)):  # type: ignore[attr-defined]
                if kind is ast.Attribute:
                    t.stored.add(name)
            else:
                # climb the item reads: NAME[k][j]
                cur, up, depth = node, parent.get(id(node)), 0
                while type(up) is ast.Subscript and up.value is cur:  # type: ignore[union-attr]
                    if not isinstance(up.ctx, ast.Load):  # type: ignore[union-attr]
                        break
                    cur, up, depth = up, parent.get(id(up)), depth + 1
                changed = False
                if type(up) is ast.Subscript and up.value is cur:  # type: ignore[union-attr]
                    changed = True  # an item stored or deleted
                elif type(up) is ast.Attribute and up.value is cur:  # type: ignore[union-attr]
                    if up.attr not in _READING:  # type: ignore[union-attr]
                        changed = True
                    elif depth or up.attr in ("get", "values", "items", "copy"):  # type: ignore[union-attr]
                        t.elements.add(name)
                elif depth:
                    t.elements.add(name)
                elif kind is ast.Attribute or not isinstance(up, (ast.Compare, ast.Expr)):
                    changed = True
                if changed:
                    t.mutated.add(name)
                    if name == "__all__":
                        t.all_changes.add((node.lineno, node.col_offset))  # type: ignore[attr-defined]
        for child in ast.iter_child_nodes(node):
            parent[id(child)] = node
            stack.append(child)
    if "__dict__" in t.mutated:  # ``m.__dict__.update(X=4)``, ``m.__dict__["X"] = 4``: as vars(m)
        t.dynamic = True
    return t


_IMPORT_SYS_AS = re.compile(r"\bsys\s+as\s+(\w+)")  # (import os, sys as _s: any "sys as", which can only widen)
_FROM_SYS_IMPORT = re.compile(r"\bfrom\s+sys\s+import\s+\(?([^)\n;]*)")


def _sys_aliases(text: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The names a module may call ``sys`` by (``import sys as _s``), and those it may call
    ``sys.modules`` by (``from sys import modules as m``)."""
    if "sys" not in text:
        return frozenset({"sys"}), frozenset()
    names = {"sys", *_IMPORT_SYS_AS.findall(text)}
    modules = set()
    for listed in _FROM_SYS_IMPORT.findall(text):
        for item in listed.split(","):
            parts = item.split()
            if parts and parts[0] == "modules":
                modules.add(parts[2] if len(parts) == 3 and parts[1] == "as" else "modules")
    return frozenset(names), frozenset(modules)


def _modules_stored(node: ast.expr, parent: Dict[int, ast.AST]) -> Set[Optional[str]]:
    """The modules a use of ``sys.modules`` (*node*) may put another object in place of: the
    literal key of an item store, None (any) for any other use but an item read or deletion
    and a reading or removing method (``.get``, ``.pop``...), nothing for those (a module
    removed is run again when imported: it binds what it bound)."""
    up = parent.get(id(node))
    if type(up) is ast.Subscript and up.value is node:
        if not isinstance(up.ctx, ast.Store):
            return set()
        key = up.slice
        return {key.value} if type(key) is ast.Constant and isinstance(key.value, str) else {None}
    if type(up) is ast.Attribute and up.value is node and up.attr in MODULES_KEEPING:
        return set()
    return {None}


# The methods of ``sys.modules`` that put no object in place of a module: they read its items or
# remove them (a module removed is run again when imported: it binds what it bound). Also
# Semantic.stubbed's.
MODULES_KEEPING = _READING | frozenset({"pop", "popitem", "clear", "__contains__"})


def _changes(t: Touches, name: str, kind: str, computed: bool = True) -> bool:
    """Whether a module that does *t* may change what *name* is bound to elsewhere, by *kind*
    (:meth:`RunModules.touched`); without *computed*, a ``setattr`` of a computed name does not
    count."""
    if kind == "element":
        return name in t.elements
    if kind == "use":
        return name in t.mutated or name in t.stored
    if kind == "replace":
        return any(k is None and computed or k is not None and (name == k or name.startswith(k + "."))
                   for k in t.replaced)
    return (computed and t.dynamic) or name in t.stored or (kind == "class" and name in t.class_bound) or (
        kind == "container" and name in t.mutated)


def _namespace_store(call: ast.Call, parent: Dict[int, ast.AST]):
    """What a ``globals()`` call (or ``vars()``/``locals()``) may rebind: "" for nothing (an
    item read, ``.get``/``.keys``..., ``k in globals()``), the name of a ``globals()["NAME"]``
    item stored, deleted or changed in place, None for any name."""
    up = parent.get(id(call))
    if type(up) is ast.Subscript and up.value is call:
        s = up.slice
        key = s.value if type(s) is ast.Constant and isinstance(s.value, str) else None
        if not isinstance(up.ctx, ast.Load):
            return key
        above = parent.get(id(up))
        if type(above) is ast.Subscript and above.value is up or type(above) is ast.Attribute and \
                above.attr not in _READING:
            return key  # globals()["CFG"]["k"] = v, globals()["L"].append(v): its object changed
        return ""
    if type(up) is ast.Attribute and up.attr in _READING or isinstance(up, ast.Compare):
        return ""
    return None


# -- the scan of one module --------------------------------------------------------------

def scan(text: str, module: str, is_package: bool,
         foreign: Optional[Callable[[Optional[str]], bool]] = None) -> Optional[ModuleTable]:
    """The top-level bindings of a module's source, or None when it does not compile.
    *foreign*: whether an imported module is one the run cannot vouch for
    (:meth:`RunModules.foreign`): what it binds is unknown."""
    tree = _tree(text)
    if tree is None:
        return None
    t = ModuleTable(module)
    counts: Dict[str, int] = {}
    raw: Dict[str, Entry] = {}
    unsure: Set[str] = set()
    star_seen = False
    after_star: Set[str] = set()  # names bound before a star import (it may rebind them)

    order: Dict[str, int] = {}  # the index of the top-level statement that binds a name
    all_extra: List[Tuple[int, Tuple[str, ...]]] = []  # ``__all__ += [...]`` at the top level, in order
    handled: Set[Tuple[int, int]] = set()  # where those ``__all__.append``/``.extend`` name ``__all__``

    def bind(name: str, entry: Entry) -> None:
        counts[name] = counts.get(name, 0) + 1
        raw[name] = entry
        order[name] = at

    for at, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.asname:
                    bind(a.asname, (UNKNOWN_ENTRY,) if foreign and foreign(a.name) else (QUAL, a.name))
                else:
                    top = a.name.split(".")[0]
                    bind(top, (UNKNOWN_ENTRY,) if foreign and foreign(top) else (QUAL, top))
        elif isinstance(stmt, ast.ImportFrom):
            src = absolute_module(stmt.module, stmt.level or 0, module, is_package)
            if src is not None and foreign and foreign(src):
                src = None
            if is_package and src and src.startswith(module + "."):
                # the import sets the package's name of its submodule (once: another import
                # from it sets the same), unless this statement binds that name itself
                sub = src[len(module) + 1:].split(".")[0]
                if raw.get(sub) != (QUAL, f"{module}.{sub}") and \
                        all((a.asname or a.name) != sub for a in stmt.names):
                    bind(sub, (QUAL, f"{module}.{sub}"))
            if len(stmt.names) == 1 and stmt.names[0].name == "*":
                if src is None:
                    t.complete = False
                else:
                    t.stars.append(src)
                star_seen = True
                after_star |= set(raw)
                continue
            for a in stmt.names:
                bind(a.asname or a.name, (QUAL, f"{src}.{a.name}") if src is not None else (UNKNOWN_ENTRY,))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = stmt.value
            for target in targets:
                if isinstance(target, ast.Name):
                    if value is None:  # a bare annotation binds nothing
                        continue
                    bind(target.id, ("expr", value, at) if len(targets) == 1 else (LOCAL_DEF,))
                else:
                    for n in _names_bound(target):
                        bind(n, (UNKNOWN_ENTRY,))
                        unsure.add(n)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(stmt.name, (LOCAL_DEF,))
        elif isinstance(stmt, ast.Expr):
            grown = _all_grown(stmt.value)
            if grown is not None and "__all__" in raw:
                all_extra.append((at, grown))  # ``__all__.append("X")``, ``__all__.extend([...])``
                handled.add((stmt.value.func.value.lineno, stmt.value.func.value.col_offset))  # type: ignore[attr-defined]
            continue
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == "__all__" \
                and isinstance(stmt.op, ast.Add) and "__all__" in raw and _str_list(stmt.value) is not None:
            all_extra.append((at, _str_list(stmt.value)))  # ``__all__ += ["X"]``: the list grows
        else:  # if/try/for/while/with/match/del/aug-assign...: whatever they bind is unsure
            for n in _names_bound(stmt):
                bind(n, (UNKNOWN_ENTRY,))
                unsure.add(n)
    # ``global x`` in a function (or class) rebinds x at any time; ``globals()``,
    # ``sys.modules[...]``, ``__all__.append(...)`` change the module's names unseen. The text
    # tells which modules may (a walk of the whole tree costs more than the compile); of those,
    # the tree tells which do (:func:`touches`): a mention in a comment or a string, a
    # ``setattr`` of a literal name (an attribute store, like ``args.rank_size = v``) do not.
    dynamic = _DYNAMIC.search(text) is not None and _rebinds_names(text, handled)
    if ":=" in text:  # a walrus rebinds its target in the module (in an expression statement, a value...)
        unsure.update(_walrus_targets(tree))
    if "global" in text:
        for m in _GLOBAL.finditer(text):
            unsure.update(n.strip() for n in m.group(1).split(","))
    for name, entry in raw.items():
        if counts[name] != 1 or name in unsure or (star_seen and name in after_star):
            t.entries[name] = (UNKNOWN_ENTRY,)
        else:
            t.entries[name] = entry
    # values: constants and plain aliases of imports, in the module's own terms
    for name, entry in list(t.entries.items()):
        if entry[0] == "expr":
            if type(entry[1]) is ast.Call and not dynamic:
                func = _chain(entry[1].func)
                if func is not None:
                    t.made[name] = ".".join(func)
            t.entries[name] = _fold(entry[1], t.entries, set(), order, entry[2])
    if "__all__" in raw:
        entry = raw["__all__"]
        node = entry[1] if entry[0] == "expr" and t.entries["__all__"][0] != UNKNOWN_ENTRY else None
        listed = _str_list(node) if node is not None else None
        if listed is not None and not dynamic and (not all_extra or isinstance(node, ast.List)):
            # (and what ``+=`` adds after it; a tuple's += of a list raises, so only a list's)
            t.all_names = listed + tuple(n for at, names in all_extra if at > order["__all__"] for n in names)
        else:
            t.complete = False  # an __all__ we cannot read: what a star import of it binds is unknown
    if dynamic:
        t.complete = False
    return t


def _str_list(node: ast.AST) -> Optional[Tuple[str, ...]]:
    """The strings of a list or tuple display of string literals, else None."""
    if isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(el, ast.Constant) and isinstance(el.value, str) for el in node.elts):
        return tuple(el.value for el in node.elts)
    return None


_TOUCHED = "\0touched\0"  # the dependency key of a RunModules.touched answer
_QUOTING = "\0quoting\0"  # the dependency key of a RunModules.quoting answer
_UNBOUNDED = "\0unbounded"  # a touched answer when the program's files are too many to read
_TEXT_FACTS = "\0text\0"  # the dependency key of a RunModules.text_facts answer
_PROGRAM_NAMES = "\0names\0"  # the dependency key of a RunModules.program_names answer
_EXTRACTORS: Dict[str, Callable[[str], Any]] = {}


def asks_program(deps: Iterable[Tuple[str, Optional[str]]]) -> bool:
    """Whether a result with these dependencies (:meth:`RunModules.take_deps`) asked what the
    files of the run's programs change or hold (:meth:`RunModules.touched`, :meth:`RunModules.text_facts`,
    :meth:`RunModules.quoting`) or which they are (:meth:`RunModules.program_names`)."""
    return any(m.startswith((_TOUCHED, _TEXT_FACTS, _QUOTING, _PROGRAM_NAMES)) for m, _ in deps)


def register_text_facts(key: str, extract: Callable[[str], Any]) -> None:
    """Make *extract* (a file's text -> a value whose ``repr`` is stable from run to run, or a
    false value for nothing) available to :meth:`RunModules.text_facts` under *key*."""
    _EXTRACTORS[key] = extract
_SETS_BY_NAME = re.compile(r"\b(?:setattr|delattr|vars)\b|\b__dict__\b")


# a dot, then a name with a character that is not ASCII (blanks, continuations and comments between)
_DOTTED_NON_ASCII = re.compile(r"\.(?:\s|\\|#[^\r\n]*(?:\r\n?|\n))*(\w*[^\x00-\x7f]\w*)")


def _nfkc(text: str) -> str:
    if text.isascii():
        return text
    import unicodedata

    return unicodedata.normalize("NFKC", text)


@functools.lru_cache(maxsize=256)
def _store_pattern(name: str) -> "re.Pattern[str]":
    """Text that may store or delete the attribute *name*: ``.NAME`` (blanks, line
    continuations and, inside brackets, comments may stand around the dot) followed by what
    may follow a target (``=`` but not ``==``, an augmented ``+=``..., ``,``, ``)``, ``]``,
    ``:``, ``;``, ``in``, a comment, the end of the line or of the text): ``x.NAME = v``,
    ``x.NAME: T = v``, ``x.NAME += 1``, ``del x.NAME``, ``a, x.NAME = t``, ``for x.NAME in t``,
    ``with f() as x.NAME:``. A file without such text stores no attribute of that name (but for
    ``setattr``/``delattr``/``vars``, looked for apart), so it is not compiled to find out:
    names as common as a held submodule's (``attn``, ``layers``) are in the text of most files
    of a large run (docs/benchmarks.md, session 12)."""
    gap = r"(?:\s|\\|#[^\r\n]*(?:\r\n?|\n))*"  # (a comment ends at any line break)
    return re.compile(r"\." + gap + re.escape(name) + r"(?!\w)(?:\s|\\)*"
                      r"(?:=(?!=)|(?:[-+*/%@&|^]|//|\*\*|>>|<<)=|[,)\]:;#\r\n]|in(?!\w)|\Z)")


_STAR = re.compile(r"\bimport\s*\*")
_REBINDS = re.compile(r"\b(?:globals|locals|vars|exec)\s*\(|\bmodules\b")  # see Touches.rebound
# an import statement's names: parenthesized, or up to the end of the line and its backslash continuations
_IMPORT_LINE = re.compile(r"\bimport\b[ \t]*(\([^)]*\)|[^\n]*(?:\\\r?\n[^\n]*)*)")
_ASSIGNED = re.compile(r"^[ \t]*(\w+)[ \t]*(?::[^\n=]*)?=(?!=)", re.MULTILINE)
_WORD = re.compile(r"\w+")
_ANY = frozenset({"*"})
_DYNAMIC = re.compile(r"\b(?:globals|vars|setattr|delattr|exec)\s*\(|\b__all__\s*\.|\bsys\.modules\b")
_GLOBAL = re.compile(r"^[ \t]*global[ \t]+([\w \t,]+)", re.MULTILINE)


def _rebinds_names(text: str, handled: Set[Tuple[int, int]] = frozenset()) -> bool:
    """Whether a module may rebind or add its top-level names unseen, or change its
    ``__all__`` in place: a store through its namespace, ``exec``, a use of ``sys.modules``
    other than ``k in sys.modules`` (:attr:`Touches.rebound`), ``setattr``/``delattr`` of a
    computed name, ``vars(...)`` (:attr:`Touches.dynamic`), a use of ``__all__`` that may change
    it other than the top-level ``__all__.append/extend`` :func:`scan` read (*handled*)."""
    t = touches(text)
    if t is None or t.rebound or t.dynamic:
        return True
    return "__all__" in t.mutated and not t.all_changes <= handled


def _all_grown(call: ast.AST) -> Optional[Tuple[str, ...]]:
    """``__all__.append("X")`` -> ("X",); ``__all__.extend([...])`` of string literals -> them."""
    if not (type(call) is ast.Call and type(call.func) is ast.Attribute and type(call.func.value) is ast.Name
            and call.func.value.id == "__all__" and len(call.args) == 1 and not call.keywords):
        return None
    arg = call.args[0]
    if call.func.attr == "append":
        return (arg.value,) if type(arg) is ast.Constant and isinstance(arg.value, str) else None
    return _str_list(arg) if call.func.attr == "extend" else None


def _walrus_targets(tree: ast.AST) -> Set[str]:
    """The targets of the ``:=`` that bind at the top level: anywhere but in the bodies of
    functions and lambdas (a comprehension's walrus binds in the scope around it)."""
    out: Set[str] = set()
    stack = [tree]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(n.decorator_list)  # evaluated where the def stands
            stack.extend(n.args.defaults)
            stack.extend(d for d in n.args.kw_defaults if d is not None)
            continue
        if isinstance(n, ast.Lambda):
            stack.extend(n.args.defaults)
            stack.extend(d for d in n.args.kw_defaults if d is not None)
            continue
        stack.extend(ast.iter_child_nodes(n))
    return out


def _names_bound(node: ast.AST) -> List[str]:
    """Every name a statement binds anywhere outside nested defs and classes (their own
    names included), at any depth."""
    out: List[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.append(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                out.append((a.asname or a.name).split(".")[0])
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(n.name)
            continue
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.append(n.name)
        elif type(n).__name__ in ("MatchAs", "MatchStar") and getattr(n, "name", None):
            out.append(n.name)
        elif type(n).__name__ == "MatchMapping" and getattr(n, "rest", None):
            out.append(n.rest)
        elif isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for sub in ast.walk(n):  # only walrus targets leak out of these
                if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                    out.append(sub.target.id)
            continue
        stack.extend(ast.iter_child_nodes(n))
    return out


_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}
_BIN = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
        ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "and_",
        ast.BitOr: "or_", ast.BitXor: "xor"}


def _fold(expr: ast.AST, entries: Dict[str, Entry], active: Set[str], order: Optional[Dict[str, int]] = None,
          at: int = 0) -> Entry:
    """The entry of a name bound once to *expr*, in the top-level statement *at*: a constant
    (literals, tuples and lists of them, unary and binary arithmetic, other such names of the
    module bound in an earlier statement), an alias of an import (``ops = hccl_ops``,
    ``f = mod.func``), or the module's own object. A name bound only after *at* (*order*)
    holds something else when the statement runs (a star import's, a builtin): unknown."""

    def before(name: str) -> bool:
        return order is None or order.get(name, at) < at
    import operator

    from npulint.values import UNKNOWN, _safe_binop, fold_unary

    def value(e: ast.AST):
        if isinstance(e, ast.Constant):
            v = e.value
            return v if v is None or isinstance(v, (int, float, str, bytes, bool)) else UNKNOWN
        if isinstance(e, ast.Tuple):  # (a list may be changed in place: not a constant)
            out = []
            for el in e.elts:
                if isinstance(el, ast.Starred):
                    return UNKNOWN
                v = value(el)
                if v is UNKNOWN:
                    return UNKNOWN
                out.append(v)
            return tuple(out)
        if isinstance(e, ast.Name):
            if e.id in active or not before(e.id):
                return UNKNOWN
            entry = entries.get(e.id)
            if entry is None:
                return UNKNOWN
            if entry[0] == "expr":
                active.add(e.id)
                try:
                    entry = entries[e.id] = _fold(entry[1], entries, active, order, entry[2])
                finally:
                    active.discard(e.id)
            return entry[1] if entry[0] == CONST else UNKNOWN
        if isinstance(e, ast.UnaryOp):
            return fold_unary(_UNARY.get(type(e.op), ""), value(e.operand))
        if isinstance(e, ast.BinOp):
            op = _BIN.get(type(e.op))
            if op is None:
                return UNKNOWN
            a = value(e.left)
            if a is UNKNOWN:
                return UNKNOWN
            b = value(e.right)
            if b is UNKNOWN:
                return UNKNOWN
            return _safe_binop(getattr(operator, op), a, b)
        return UNKNOWN

    v = value(expr)
    if v is not UNKNOWN:
        return (CONST, v)
    chain = _chain(expr)
    if chain is not None:
        root, rest = chain[0], chain[1:]
        entry = entries.get(root) if before(root) else None
        if entry is not None and entry[0] == QUAL:
            return (QUAL, ".".join([entry[1]] + rest))
    return (LOCAL_DEF,)


def _chain(e: ast.AST) -> Optional[List[str]]:
    parts = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if isinstance(e, ast.Name):
        parts.append(e.id)
        return list(reversed(parts))
    return None


_EXPORTED_CALLS: Set[str] = set()


def register_exported_calls(qualnames: Iterable[str]) -> None:
    """Make the objects a module of the run binds at its top level to a call of one of
    *qualnames* (an API's qualified names) exports of it (:func:`api_exports`): the follow-up
    parses the files that import them, for the checkers that want those names."""
    _EXPORTED_CALLS.update(qualnames)


def api_exports(sem) -> Tuple[Tuple[str, str], ...]:
    """The names a module of the run binds once, unconditionally, at its top level by an
    import of a framework's API (:data:`FRAMEWORKS`), or to an object a registered API call
    makes (``qualname()``), with their qualified names: the names other modules may import from
    it to reach that API."""
    run = _ACTIVE
    if run is None or not sem.module_name or not run.is_module(sem.module_name):
        return ()
    from npulint.semantic import canonical

    out = []
    for name, bl in sem.module_scope.bindings.items():
        if len(bl) != 1 or bl[0].conditional:
            continue
        b = bl[0]
        if b.kind == "import" and b.qualname:
            q = canonical(b.qualname)
        elif b.kind == "assign" and not b.index and type(b.value).__name__ == "Call" and _EXPORTED_CALLS:
            # an object a checker follows across modules (``config = torchair.CompilerConfig()``:
            # :func:`register_exported_calls`), as the call
            callee = sem.callee_qualname(b.value.func, b.site)
            if callee is None or canonical(callee) not in _EXPORTED_CALLS or \
                    not run.touched(name, "use", sem.module_name):
                continue  # (not a registered call, or no other module uses the name: nothing to follow)
            q = canonical(callee) + "()"
        else:
            continue
        top = q.split(".")[0]
        if top in FRAMEWORKS and "." in q and name != top:
            out.append((name, q))
    return tuple(sorted(out))


# -- the run's table ---------------------------------------------------------------------

_ACTIVE: Optional[RunModules] = None


def active() -> Optional[RunModules]:
    """The table of the run in progress (None outside a run: names stop at the file's edge)."""
    return _ACTIVE


def activate(table: Optional[RunModules]) -> Optional[RunModules]:
    """Make *table* the run's; returns the previous one (to put back)."""
    global _ACTIVE
    old = _ACTIVE
    _ACTIVE = table
    return old
