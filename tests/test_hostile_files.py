"""What is not a regular file is never read; file names that are not UTF-8 never break the
output; the linted file's own warnings stay out of the terminal; bad options and configurations
are one line and exit 2 (issue: never hang on what is not a regular file). Through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import IMPORT, TWO_CODES, run_cli

_notes = []


def _main(args, cwd, monkeypatch):
    from npulint import cli

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(cli.click, "echo", lambda message=None, err=False, **kw: _notes.append(str(message)))
    return cli.main(list(args))


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


@needs_fifo
def test_a_fifo_named_on_the_command_line_is_reported_not_opened(cli_run, tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    r = cli_run(["--no-cache", "pipe.py"], tmp_path)  # cli_run times out after 120 s
    assert r.returncode == 1, r.stderr
    assert "pipe.py:1:1: NPU002 [error] cannot read file: not a regular file (a FIFO): not read" in r.stdout


@needs_fifo
def test_a_fifo_named_where_npu002_is_not_selected_is_named_on_stderr(cli_run, tmp_path):
    """As ruff warns "Failed to lint" where E902 is not enabled: never a silent pass."""
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "t.py").write_text(TWO_CODES)
    r = cli_run(["--no-cache", "--select", "NPU101", "pipe.py", "t.py"], tmp_path)
    assert r.returncode == 1 and "pipe.py" not in r.stdout and "t.py:4:6: NPU101" in r.stdout
    assert "npulint: warning: pipe.py: not analysed: cannot read file: not a regular file (a FIFO): not read" \
        in r.stderr
    assert "(1 file checked, 1 file skipped)" in r.stderr
    r = cli_run(["--no-cache", "--select", "NPU101", "-q", "pipe.py"], tmp_path)
    assert r.returncode == 0 and r.stdout == r.stderr == ""


@needs_fifo
def test_a_fifo_met_in_a_walk_is_skipped(cli_run, tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    os.mkfifo(tmp_path / "run.sh")
    (tmp_path / "t.py").write_text(TWO_CODES)
    for args in (["--no-cache", "."], ["."], ["--fix", "."], ["--format", "full", "."]):
        r = cli_run(args, tmp_path)
        assert "pipe.py" not in r.stdout and "Traceback" not in r.stderr
        assert r.returncode == 1 and "t.py:4:6: NPU101" in r.stdout


@needs_fifo
def test_a_fifo_named_gitignore_does_not_hang_the_walk(cli_run, tmp_path):
    """A .gitignore is read only if it is a regular file (opened without blocking): a FIFO of
    that name used to hang the run in the walk."""
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / ".gitignore")
    os.mkfifo(tmp_path / "sub" / ".gitignore")
    (tmp_path / "t.py").write_text(TWO_CODES)
    (tmp_path / "sub" / "u.py").write_text(TWO_CODES)
    for args in (["--no-cache", "."], ["."], ["."]):
        r = cli_run(args, tmp_path, timeout=30)
        assert r.returncode == 1 and "Traceback" not in r.stderr
        assert "t.py:4:6: NPU101" in r.stdout and "u.py:4:6: NPU101" in r.stdout


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_character_device_is_never_read(cli_run, tmp_path):
    r = cli_run(["--no-cache", "--format", "full", "/dev/zero", "--stdin-filename", "x.py"], tmp_path)
    assert "not a regular file (a character device)" in r.stdout
    assert "Traceback" not in r.stderr


def test_a_file_far_over_the_size_limit_is_named_and_not_read(tmp_path, monkeypatch):
    from npulint import inputs, pipeline

    monkeypatch.setattr(inputs, "READ_CAP", 4096)
    (tmp_path / "big.py").write_text("# " + "x" * 5000 + "\n")  # over the cap: named though it names no API
    (tmp_path / "near.py").write_text("# " + "x" * 2000 + "\n")  # over the limit, under the cap, no API: silent
    real = inputs._read
    sizes = []

    def spy(path, limit=0):
        data, error = real(path, limit)
        sizes.append(len(data or b""))
        return data, error

    monkeypatch.setattr(pipeline, "_read", spy)  # the first pass's reader
    code = _main(["--no-cache", "-j", "1", "--max-file-size", "1K", "."], tmp_path, monkeypatch)
    assert code == 0
    assert max(sizes) < 4096  # the big one was never read
    notes = [n for n in _notes]
    assert any("big.py: not analysed: 5 KB is more than --max-file-size (1 KB)" in n for n in notes)
    assert not any("near.py" in n for n in notes)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "1e-9", "0.0001", "-1", "12Q"])
def test_max_file_size_that_is_no_size_is_one_line_and_exit_2(cli_run, tmp_path, value):
    (tmp_path / "t.py").write_text("x = 1\n")
    r = cli_run(["--no-cache", f"--max-file-size={value}", "t.py"], tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("npulint: error:") and "--max-file-size" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("value, limit", [("0", "no limit"), ("1.5K", 1536), ("2M", 2 << 20)])
def test_max_file_size_values_that_are_sizes(value, limit):
    from npulint.cli import _size

    assert _size(value) == (0 if limit == "no limit" else limit)


@pytest.mark.parametrize("pattern", ["[z-a]", "!", "a/[", "**/[!]"])
def test_bad_per_file_ignores_glob_is_one_line_and_exit_2(cli_run, tmp_path, pattern):
    (tmp_path / "pyproject.toml").write_text(f'[tool.npulint.per-file-ignores]\n"{pattern}" = ["NPU101"]\n')
    (tmp_path / "t.py").write_text(TWO_CODES)
    r = cli_run(["--no-cache", "."], tmp_path)
    if r.returncode == 2:
        assert r.stderr.startswith("npulint: error:") and "invalid pattern" in r.stderr
    else:  # a pattern pathspec accepts (it matches nothing): linted as usual
        assert r.returncode == 1
    assert "Traceback" not in r.stderr


def test_bad_exclude_glob_is_one_line_and_exit_2(cli_run, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.npulint]\nexclude = ["[z-a]"]\n')
    (tmp_path / "t.py").write_text("x = 1\n")
    r = cli_run(["--no-cache", "."], tmp_path)
    assert r.returncode == 2 and "invalid pattern '[z-a]'" in r.stderr and "Traceback" not in r.stderr


def test_toml_nested_too_deeply_is_one_line_and_exit_2(cli_run, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.npulint]\nselect = " + "[" * 500 + "]" * 500 + "\n")
    (tmp_path / "t.py").write_text("x = 1\n")
    r = cli_run(["--no-cache", "."], tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("npulint: error:") and "Traceback" not in r.stderr


@needs_fifo
def test_a_fifo_as_configuration_does_not_hang(cli_run, tmp_path):
    os.mkfifo(tmp_path / "conf.toml")
    (tmp_path / "t.py").write_text("x = 1\n")
    r = cli_run(["--no-cache", "--config", "conf.toml", "."], tmp_path)
    assert r.returncode == 2 and "not a regular file" in r.stderr


def test_the_linted_files_syntax_warnings_stay_out_of_the_terminal(tmp_path):
    # a subprocess: the warnings filter is set at start-up, and -j 2's workers write to fd 2
    (tmp_path / "t.py").write_text("import torchair\nconfig = torchair.CompilerConfig()\nz = 0x1for\n"
                                   "y = 1if True else 2\nassert (x, 'never fails')\n")
    # an invalid escape in a literal the rules evaluate (Python 3.12+: SyntaxWarning; 3.11: DeprecationWarning)
    (tmp_path / "u.py").write_text("import torchair\nconfig = torchair.CompilerConfig()\n"
                                   "config.dump_config.dump_layer = 'Add_1\\Add_2'\nconfig.mode = 'reduce_\\overhead'\n")
    for jobs in ("1", "2"):
        r = run_cli(["--no-cache", "-j", jobs, "--select", "ALL", "t.py", "u.py"], tmp_path,
                    env={"PYTHONWARNINGS": "default"})
        assert "Warning" not in r.stderr, r.stderr
        assert "NPU207" in r.stdout  # (the mode's literal was read)


needs_bytes_names = pytest.mark.skipif(sys.platform in ("win32", "darwin"),
                                       reason="file names there must be valid Unicode")


FORMATS = ["text", "full", "json", "github", "sarif", "statistics"]
SEP = "\x1e"  # between the runs' outputs in c_locale_runs


def _bad_name(folder) -> None:
    with open(os.fsencode(str(folder)) + b"/bad\xff.py", "w") as fh:
        fh.write(IMPORT + "with npu_weight_prefetch_scope(-1):\n    pass\n")


def _format_args(fmt):
    return ["--statistics"] if fmt == "statistics" else ["--format", fmt]


@pytest.fixture(scope="module")
def c_locale_runs(tmp_path_factory):
    """Every format's run under ``LC_ALL=C PYTHONUTF8=0`` (ASCII standard streams and file
    names, which the interpreter sets at start-up: a subprocess), all six in ONE child that
    calls ``cli.main`` once per format on its real stdout and stderr, a separator after each:
    ``{fmt: CompletedProcess}`` as ``run_cli`` would have given for each."""
    root = tmp_path_factory.mktemp("c-locale")
    _bad_name(root)
    code = textwrap.dedent(f"""\
        import sys, traceback
        from npulint import cli
        for fmt, args in {[(f, _format_args(f)) for f in FORMATS]!r}:
            try:
                rc = cli.main(["--no-cache"] + args + ["."])
            except BaseException:
                traceback.print_exc()
                rc = 1
            sys.stdout.flush()
            sys.stderr.flush()
            for stream in (sys.stdout, sys.stderr):
                stream.write({SEP!r} + fmt + " " + str(rc) + "\\n")
                stream.flush()
        """)
    env = dict(os.environ, LC_ALL="C", PYTHONUTF8="0")
    env.pop("NO_COLOR", None)
    r = subprocess.run([sys.executable, "-c", code], cwd=str(root), capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    outs, errs = r.stdout.split(SEP), r.stderr.split(SEP)
    runs = {}
    for i, fmt in enumerate(FORMATS):
        out = outs[i] if i == 0 else outs[i].split("\n", 1)[1]
        err = errs[i] if i == 0 else errs[i].split("\n", 1)[1]
        name, rc = outs[i + 1].split("\n", 1)[0].split(" ")
        assert name == fmt
        runs[fmt] = subprocess.CompletedProcess(fmt, int(rc), out, err)
    return runs


@needs_bytes_names
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "utf-8:strict"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}])
def test_names_that_are_not_utf8_give_valid_utf8_output(cli_run, c_locale_runs, tmp_path, fmt, env):
    if "LC_ALL" in env:  # the locale is read at interpreter start-up: one child for the six formats
        r = c_locale_runs[fmt]
    else:  # cli_run sets its stdout up from PYTHONIOENCODING
        _bad_name(tmp_path)
        r = cli_run(["--no-cache"] + _format_args(fmt) + ["."], tmp_path, env=env)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    out = r.stdout  # text mode: decoding it as UTF-8 is the check (both runners decode strictly)
    assert "\udcff" not in out and "\ufffd" not in out
    if fmt in ("text", "full", "github"):
        assert "bad\\xff.py" in out
    if fmt == "json":
        assert json.loads(out)[0]["path"] == "bad\\xff.py"
    if fmt == "sarif":
        uri = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri == "bad%FF.py"
