"""Shared test helpers.

* ``lint(files, ...)``: write *files* (``{relative_path: source}`` or one source string for
  ``t.py``) into a temporary project and lint it in-process through the real pipeline;
  returns the findings (``npulint.model.Finding``) sorted by path, line, column, code.
* ``codes(findings)``: their codes, in order.
* ``cli_run`` (fixture): ``cli_run(args, cwd, stdin=None, env=None)`` runs ``npulint.cli.main(args)``
  in this process, as the console script would run (see :func:`cli`); returns a
  ``subprocess.CompletedProcess`` (``returncode``, ``stdout``, ``stderr`` as text).
* ``run_cli(args, cwd, stdin=None, env=None)``: the installed ``npulint`` console script
  in a subprocess, same signature and result; only for what needs a process of its own
  (the console script itself, signals, interpreter start-up settings, a fresh ``sys.modules``).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

import pytest

from npulint import discovery, pipeline, registry
from npulint.config import Settings, enabled_codes, find_config, load_config

REPO = Path(__file__).resolve().parent.parent

# Property-based tests: examples per property in a plain run, and with --slow (the suite's
# earlier default); NPULINT_FUZZ_EXAMPLES, when set, wins over both (tests/test_fuzz.py).
# --slow also runs test_semantic's comparisons with LibCST over every one of npulint's
# sources (a plain run leaves out those whose syntax shapes the others hold: _LEFT_OUT there).
FUZZ_EXAMPLES, FUZZ_EXAMPLES_SLOW = 10, 40


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False,
                     help=f"the long settings: {FUZZ_EXAMPLES_SLOW} examples per property-based test "
                          f"instead of {FUZZ_EXAMPLES}; test_semantic's comparisons with LibCST over "
                          "every one of npulint's sources")


def pytest_configure(config):
    if config.getoption("--slow") and "NPULINT_FUZZ_EXAMPLES" not in os.environ:
        os.environ["NPULINT_FUZZ_EXAMPLES"] = str(FUZZ_EXAMPLES_SLOW)


def pytest_collection(session):
    """Each xdist worker collects every test module, and pytest rewrites each module's asserts
    as it imports it: about 5 s of one CPU per worker, the same work in each. Before collecting,
    each worker rewrites the modules no worker has rewritten yet into pytest's cache, every worker
    starting from its own place in the list (worker k of n at k/n), so that together they rewrite
    each module once; the collection then reads the cache. Only pytest's own functions write
    and read the cache, so a cached module is what pytest would have made; where they are not
    there (another pytest), nothing is done here."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not worker.startswith("gw") or count < 2 or session.config.getoption("assertmode") != "rewrite":
        return None
    try:
        from _pytest.assertion import rewrite as rw

        state = session.config.stash[rw.assertstate_key]
        here = session.config.invocation_params.dir
        asked = [(here / arg.split("::")[0]).resolve() for arg in session.config.args]
        files = [f for f in sorted(Path(__file__).resolve().parent.glob("test_*.py"))
                 if any(f == a or a in f.parents for a in asked)]  # only what this run collects
        start = int(worker[2:]) * len(files) // count
        for fn in files[start:] + files[:start]:
            pyc = rw.get_cache_dir(fn) / (fn.name[:-3] + rw.PYC_TAIL)
            if rw._read_pyc(fn, pyc) is not None or not rw.try_makedirs(pyc.parent):
                continue
            source_hash, co = rw._rewrite_test(fn, session.config)
            rw._write_pyc(state, co, source_hash, pyc)
    except (ImportError, AttributeError, KeyError, TypeError, ValueError, OSError, SyntaxError):
        pass
    return None


def pytest_collection_finish(session):
    # the pre-commit hook's environment takes seconds of pip to build: start it now, in the
    # background, when its tests are among those selected (tests/test_precommit.py)
    if session.config.option.collectonly:
        return
    for item in session.items:
        if item.path.name == "test_precommit.py":
            item.module.start_hook_env_build()
            return


def pytest_sessionfinish(session):
    module = sys.modules.get("test_precommit")
    if module is not None:
        module.stop_hook_env_build()

# A file with two findings of two codes, for output-format, editor and server tests.
IMPORT = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
# NPU101 at 4:6 (a pool size differing from line 2's) and NPU103 at 6:6.
TWO_CODES = (
    IMPORT
    + "with npu_weight_prefetch_scope():\n"
    "    pass\n"
    "with npu_weight_prefetch_scope(0, 1024):\n"
    "    pass\n"
    "with npu_weight_prefetch_scope(-1):\n"
    "    pass\n"
)


def load_tool(name: str):
    """The module of ``tools/<name>.py`` (the tools are scripts, not a package)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "tools" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(root: Path, files: Union[str, Dict[str, str]]) -> None:
    if isinstance(files, str):
        files = {"t.py": files}
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def lint(tmp_path: Path, monkeypatch):
    def _lint(files: Union[str, Dict[str, str]], select: Optional[Sequence[str]] = None,
              config: Optional[str] = None, ignore: Sequence[str] = ()) -> List:
        _write(tmp_path, files)
        if config is not None:
            (tmp_path / "pyproject.toml").write_text(textwrap.dedent(config), encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        rules, checkers = registry.load()
        known = [r.code for r in rules]
        found = find_config(str(tmp_path))
        settings = load_config(found, known) if found else Settings(root=str(tmp_path))
        if select is not None:
            settings.select = list(select)
        settings.ignore = settings.ignore + list(ignore)
        enabled = enabled_codes(rules, settings.select, settings.extend_select, settings.ignore)
        paths, missing = discovery.discover([str(tmp_path)], settings)
        assert not missing
        return pipeline.run(paths, settings, checkers, enabled).findings

    return _lint


def codes(findings) -> List[str]:
    return [f.code for f in findings]


def npulint_exe() -> List[str]:
    exe = shutil.which("npulint", path=os.path.dirname(sys.executable)) or shutil.which("npulint")
    if exe is None:  # pragma: no cover - the suite runs after `pip install .`
        pytest.fail("the npulint console script is not installed (run the README's test command)")
    return [exe]


def run_cli(args: Sequence[str], cwd: Union[str, Path], stdin: Optional[str] = None,
            env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run(npulint_exe() + list(args), cwd=str(cwd), input=stdin, capture_output=True,
                          text=True, env=full_env, timeout=120)


# Environment variables the interpreter reads only at start-up: an in-process run cannot
# honour them (PYTHONIOENCODING excepted: the fixture builds its streams from it).
_STARTUP_ENV = re.compile(r"^(PYTHON(?!IOENCODING$)\w*|LC_\w+|LANG|LANGUAGE)$")


class _Timeout(BaseException):  # not caught by an `except Exception` in the code under test
    pass


@pytest.fixture
def cli_run(monkeypatch):
    """``cli_run(args, cwd, stdin=None, env=None)``: ``npulint.cli.main(args)`` in this process, as
    :func:`run_cli` runs the console script in a subprocess, with the same result:

    * the working folder is *cwd* (``monkeypatch.chdir``) and *env* is set over ``os.environ``
      (``monkeypatch.setenv``; ``NO_COLOR`` removed first, as ``run_cli`` does); both are
      restored when the test ends;
    * stdin holds *stdin* encoded as UTF-8 (empty when None); stdout and stderr are fresh
      buffered text streams over bytes, set up as the interpreter sets up a child's pipes
      under this suite's C.UTF-8 locale (stdout: UTF-8, ``surrogateescape``, block buffered;
      stderr: ``backslashreplace``, line buffered; ``PYTHONIOENCODING`` in *env* sets
      stdin's and stdout's encoding and errors, as at interpreter start-up);
    * what was written is decoded as ``subprocess.run(text=True)`` decodes it (UTF-8, then
      universal newlines);
    * the exit status is what ``main`` returns; an exception that escapes ``main`` fails the
      test (a subprocess would print its traceback and exit 1); a run over *timeout* seconds
      (default 120, ``run_cli``'s) is stopped by SIGALRM and fails the test.
    """

    def _run(args: Sequence[str], cwd: Union[str, Path], stdin: Optional[str] = None,
             env: Optional[Dict[str, str]] = None, timeout: float = 120) -> subprocess.CompletedProcess:
        from npulint import cli as cli_mod

        monkeypatch.chdir(cwd)
        monkeypatch.delenv("NO_COLOR", raising=False)
        encoding, errors = "utf-8", "surrogateescape"
        for key, value in (env or {}).items():
            if _STARTUP_ENV.match(key):
                raise ValueError(f"{key} is read at interpreter start-up: use run_cli (a subprocess)")
            if key == "PYTHONIOENCODING":
                enc, _, err = value.partition(":")
                encoding, errors = enc or encoding, err or errors
            monkeypatch.setenv(key, value)
        data = (stdin or "").encode(encoding, errors)
        in_ = io.TextIOWrapper(io.BytesIO(data), encoding=encoding, errors=errors)
        out = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors=errors, newline="\n")
        err = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="backslashreplace", newline="\n",
                               line_buffering=True)
        saved = sys.stdin, sys.stdout, sys.stderr

        def _alarm(signum, frame):
            raise _Timeout(f"npulint {list(args)} ran for more than {timeout} s")

        old_alarm = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        sys.stdin, sys.stdout, sys.stderr = in_, out, err
        try:
            code = cli_mod.main(list(args))
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_alarm)
            sys.stdin, sys.stdout, sys.stderr = saved
        assert isinstance(code, int), f"main returned {code!r}, not an exit status"

        def text(stream) -> str:
            return stream.buffer.getvalue().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")

        return subprocess.CompletedProcess(["npulint", *args], code, text(out), text(err))

    return _run


@pytest.fixture
def project(tmp_path: Path):
    """Write files into a temporary folder and return its path."""

    def _project(files: Union[str, Dict[str, str]]) -> Path:
        _write(tmp_path, files)
        return tmp_path

    return _project


FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>NPU\d{3}) (?P<msg>\S.*)$")


def parse(stdout: str):
    """``[(path, line, col, code)]`` for every line of text output; every line must be a finding."""
    out = []
    for line in stdout.splitlines():
        m = FINDING.match(line)
        assert m, f"not a finding line: {line!r}"
        out.append((m["path"], int(m["line"]), int(m["col"]), m["code"]))
    return out


def at(src: str, needle: str, nth: int = 0):
    """(line, column) of the nth occurrence of *needle* in the dedented *src*."""
    text = textwrap.dedent(src)
    idx = -1
    for _ in range(nth + 1):
        idx = text.index(needle, idx + 1)
    line = text.count("\n", 0, idx) + 1
    col = idx - (text.rfind("\n", 0, idx) + 1) + 1
    return line, col


def pos(f):
    return f.line, f.column


# -- resolving values at marked places (tests of the resolver) ----------------------------------

class Probe:
    """Records the site of every call to ``probe(...)`` so a test can resolve its argument."""

    def __init__(self, sem):
        self.sem = sem
        self.sites = []

    def visit_Call(self, node):
        import libcst as cst

        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            self.sites.append((node.args[0].value, self.sem.site()))


def probe_analyse(src: str):
    """The binding table, an evaluator and the ``probe(x)`` sites of *src* (``(x, site)``)."""
    import libcst as cst

    from npulint.semantic import Semantic, Walker
    from npulint.values import Evaluator

    module = cst.parse_module(src)
    sem = Semantic(module)
    probe = Probe(sem)
    Walker(sem, [probe], on_error=lambda *a: (_ for _ in ()).throw(a[1])).walk(module)
    return sem, Evaluator(sem), probe.sites


def probe_values(src: str) -> list:
    """The value of every ``probe(x)`` argument of *src*, where it stands."""
    sem, ev, sites = probe_analyse(src)
    return [ev.value(expr, site) for expr, site in sites]
