"""``--fix`` never changes what it did not mean to change (issue: never corrupt a user's file).

Each test goes through the CLI in-process (the ``cli_run`` fixture, or ``cli.main`` directly
where a fault has to be injected; a signal's effect in a subprocess) and checks the bytes
left on disk."""


from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from npulint import cli
from npulint import fixes as fx


from test_rules_mindspeed import MODEL as _MINDSPEED_MODEL

# an nn.Module method calling Fn.apply over two lines, with a comment inside the call
MODEL = _MINDSPEED_MODEL.replace("Fn.apply(x,\n", "Fn.apply(x,  # first\n")
assert "# first" in MODEL
AMO = "torchrun pretrain_gpt.py --adaptive-memory-optimization\n"
WRAPPER = "adapt_mem_func_wrapper(Fn, x,  # first\n"
# NPU003 (unused noqa): NPU304 is not raised on this line, so the fix drops the directive
UNUSED = "longer_name = compute(1, 2)  # noqa: NPU304\n"


def _main(args, cwd, monkeypatch):
    monkeypatch.chdir(cwd)
    return cli.main(list(args))


def test_crlf_file_keeps_crlf_after_multiline_fix(cli_run, tmp_path):
    (tmp_path / "model.py").write_bytes(MODEL.replace("\n", "\r\n").encode())
    (tmp_path / "run.sh").write_text(AMO)
    r = cli_run(["--fix", "--unsafe-fixes", "--select", "NPU503", "--no-cache", "."], tmp_path)
    assert r.returncode == 0, r.stderr
    data = (tmp_path / "model.py").read_bytes()
    assert b"adapt_mem_func_wrapper(Fn," in data
    assert b"\r\r" not in data
    assert data.count(b"\r\n") == data.count(b"\n")  # every line break is still CRLF


def test_apply_fixes_normalises_line_breaks_of_the_fix_text():
    text = "a = 1\r\nb = 2\r\n"
    edit = fx.Edit(1, 1, 2, 1, "a = (1,\r\n     2)\r\n")
    new, applied = fx.apply_fixes(text, [fx.Fix("r", (edit,))])
    assert applied and new == "a = (1,\r\n     2)\r\nb = 2\r\n"


@pytest.mark.parametrize("odd", ["\x0c", "\x0b", "\x1c", "\u2028"])
def test_noqa_fix_edits_the_line_python_counts(cli_run, tmp_path, odd):
    # str.splitlines() breaks at these; Python's tokenizer does not: the directive's line is 3
    src = f'"""doc{odd}string"""\nx = 1\n' + UNUSED
    (tmp_path / "t.py").write_text(src, encoding="utf-8")
    r = cli_run(["--fix", "--select", "NPU003,NPU304", "--no-cache", "t.py"], tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    assert (tmp_path / "t.py").read_text(encoding="utf-8") == \
        f'"""doc{odd}string"""\nx = 1\nlonger_name = compute(1, 2)\n'


def test_noqa_fix_after_a_form_feed_line_keeps_the_statement(cli_run, tmp_path):
    src = "import os\n\x0c\n" + UNUSED + "y = 2\n"
    (tmp_path / "t.py").write_text(src, encoding="utf-8")
    r = cli_run(["--fix", "--select", "NPU003,NPU304", "--no-cache", "t.py"], tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    assert (tmp_path / "t.py").read_text(encoding="utf-8") == "import os\n\x0c\nlonger_name = compute(1, 2)\ny = 2\n"


def test_diff_counts_lines_as_python_does(cli_run, tmp_path):
    src = 'x = "a\x0cb"\n' + UNUSED
    (tmp_path / "t.py").write_text(src, encoding="utf-8")
    r = cli_run(["--diff", "--select", "NPU003,NPU304", "--no-cache", "t.py"], tmp_path)
    assert "-longer_name = compute(1, 2)  # noqa: NPU304\n+longer_name = compute(1, 2)\n" in r.stdout
    assert "No newline" not in r.stdout


def test_fixing_through_a_symlink_keeps_the_link(cli_run, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "model.py").write_text(MODEL)
    proj = tmp_path / "proj"
    proj.mkdir()
    os.symlink(real / "model.py", proj / "model.py")
    (proj / "run.sh").write_text(AMO)
    r = cli_run(["--fix", "--unsafe-fixes", "--select", "NPU503", "--no-cache", "."], proj)
    assert r.returncode == 0, r.stderr
    assert os.path.islink(proj / "model.py")
    assert WRAPPER in (real / "model.py").read_text()
    assert not [n for n in os.listdir(real) if n.endswith(".tmp")]


def test_fixing_a_hard_linked_file_keeps_the_link(cli_run, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    os.link(tmp_path / "model.py", tmp_path / "other_name.txt")
    (tmp_path / "run.sh").write_text(AMO)
    r = cli_run(["--fix", "--unsafe-fixes", "--select", "NPU503", "--no-cache", "."], tmp_path)
    assert r.returncode == 0, r.stderr
    assert os.stat(tmp_path / "model.py").st_nlink == 2
    assert WRAPPER in (tmp_path / "other_name.txt").read_text()


def test_a_read_only_file_is_named_and_left_as_it_is(tmp_path, monkeypatch, capsys):
    # a rename over a read-only file would succeed (the folder is writable) and overrule the
    # user's chmod; os.access answers for the user running npulint (root passes it)
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "run.sh").write_text(AMO)
    real_access = os.access
    monkeypatch.setattr(fx.os, "access", lambda path, mode, **kw: False if str(path).endswith("model.py")
                        and mode == os.W_OK else real_access(path, mode, **kw))
    code = _main(["--fix", "--unsafe-fixes", "--select", "NPU503", "--no-cache", "."], tmp_path, monkeypatch)
    assert code == 2
    assert (tmp_path / "model.py").read_text() == MODEL
    assert "the file is read-only to this user" in capsys.readouterr().err


def test_a_file_whose_owner_a_new_file_cannot_have_is_written_in_place(cli_run, tmp_path, monkeypatch):
    # a group-writable file of another user: a renamed temporary file would be the runner's
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "run.sh").write_text(AMO)
    inode = os.stat(tmp_path / "model.py").st_ino
    real = os.fstat

    def other_owner(fd):
        st = real(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid + 1, st.st_gid)
                              + tuple(st)[6:])

    def refuse(fd, uid, gid):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(fx.os, "fstat", other_owner)
    monkeypatch.setattr(fx.os, "fchown", refuse)
    r = cli_run(["--fix", "--unsafe-fixes", "--select", "NPU503", "--no-cache", "."], tmp_path)
    assert r.returncode == 0, r.stderr
    assert WRAPPER in (tmp_path / "model.py").read_text()
    assert os.stat(tmp_path / "model.py").st_ino == inode  # the same file: owner and group kept
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_a_file_with_extended_attributes_keeps_them(cli_run, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "run.sh").write_text(AMO)
    try:
        os.setxattr(tmp_path / "model.py", "user.npulint-test", b"kept")
    except (AttributeError, OSError):
        pytest.skip("no user extended attributes here")
    r = cli_run(["--fix", "--unsafe-fixes", "--select", "NPU503", "--no-cache", "."], tmp_path)
    assert r.returncode == 0, r.stderr
    assert WRAPPER in (tmp_path / "model.py").read_text()
    assert os.getxattr(tmp_path / "model.py", "user.npulint-test") == b"kept"


def test_one_file_named_twice_is_written_once(cli_run, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    os.symlink(tmp_path / "model.py", tmp_path / "link.py")
    (tmp_path / "run.sh").write_text(AMO)
    r = cli_run(["--fix", "--unsafe-fixes", "--select", "NPU503", "--no-cache", "model.py", "link.py", "run.sh"],
                tmp_path)
    assert r.returncode == 0, r.stderr
    assert "changed while npulint" not in r.stderr
    assert (tmp_path / "model.py").read_text().count("adapt_mem_func_wrapper(Fn,") == 1


def test_a_file_edited_during_the_run_is_not_overwritten(tmp_path, monkeypatch, capsys):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "run.sh").write_text(AMO)
    from npulint import pipeline

    real_run = pipeline.run
    calls = []

    def run_then_edit(*args, **kwargs):
        result = real_run(*args, **kwargs)
        if not calls:  # the user saves the file right after npulint linted it
            (tmp_path / "model.py").write_text(MODEL + "# the user's edit\n")
        calls.append(1)
        return result

    monkeypatch.setattr(pipeline, "run", run_then_edit)
    code = _main(["--fix", "--unsafe-fixes", "--select", "NPU503", "--no-cache", "."], tmp_path, monkeypatch)
    assert code == 2
    assert (tmp_path / "model.py").read_text() == MODEL + "# the user's edit\n"
    err = capsys.readouterr().err
    assert "model.py changed while npulint was fixing it" in err


def test_a_failing_write_is_reported_and_the_other_files_are_fixed(tmp_path, monkeypatch, capsys):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(MODEL)
    (tmp_path / "run.sh").write_text(AMO)
    real_write = fx.write_fixed

    def write(path, data, expected):
        if path.endswith("a.py"):
            raise PermissionError(13, "Permission denied")
        return real_write(path, data, expected)

    monkeypatch.setattr(fx, "write_fixed", write)
    code = _main(["--fix", "--unsafe-fixes", "--select", "NPU503", "--no-cache", "."], tmp_path, monkeypatch)
    assert code == 2
    out = capsys.readouterr()
    assert "cannot write the fixed file a.py: Permission denied" in out.err
    assert (tmp_path / "a.py").read_text() == MODEL
    assert WRAPPER in (tmp_path / "b.py").read_text()
    # a.py was not fixed: its finding is still reported, b.py's is gone
    assert "a.py:" in out.out and "b.py:" not in out.out
    assert "Fixed 1 finding in 1 file." in out.err


def test_stale_temporary_files_of_a_killed_run_are_removed(cli_run, tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".npulint-{dead.pid}-abc123.tmp"
    stale.write_bytes(b"half a file")
    alive = tmp_path / f".npulint-{os.getppid()}-abc123.tmp"  # another live process's: kept
    alive.write_bytes(b"being written")
    own = tmp_path / f".npulint-{os.getpid()}-abc123.tmp"  # this process's (the run is in-process): kept
    own.write_bytes(b"being written")
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "run.sh").write_text(AMO)
    r = cli_run(["--fix", "--unsafe-fixes", "--select", "NPU503", "--no-cache", "."], tmp_path)
    assert r.returncode == 0, r.stderr
    assert not stale.exists()
    assert alive.exists() and own.exists()


def test_a_signal_during_the_write_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "f.py"
    target.write_bytes(b"x = 1\n")
    script = textwrap.dedent(f"""\
        import os, signal
        from npulint import fixes as fx
        real_fsync = os.fsync
        def fsync(fd):
            real_fsync(fd)
            os.kill(os.getpid(), signal.SIGTERM)  # killed between the write and the rename
        os.fsync = fsync
        with fx.removing_temps_on_signals():
            fx.write_fixed({str(target)!r}, b"x = 2\\n", expected=b"x = 1\\n")
        """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == -signal.SIGTERM, r.stderr
    assert os.listdir(tmp_path) == ["f.py"]
    assert target.read_bytes() == b"x = 1\n"


def test_fix_reads_a_fifo_without_hanging(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(tmp_path / "pipe.py")
    assert fx.read_for_fix(str(tmp_path / "pipe.py"), 1 << 20) is None


def test_fix_keeps_bytes_that_are_not_utf8_in_a_python_comment(cli_run, tmp_path):
    # CPython compiles a file whose comment holds bytes that are not UTF-8; --fix keeps them
    src = b"# \xd6\xd0\xce\xc4 (GBK)\nx = 1\n" + UNUSED.encode()
    (tmp_path / "t.py").write_bytes(src)
    r = cli_run(["--fix", "--select", "NPU003,NPU304", "--no-cache", "t.py"], tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    assert (tmp_path / "t.py").read_bytes() == src.replace(b"  # noqa: NPU304", b"")


# A run over some of a program's files (pre-commit, an editor's buffer) does not see what the
# others make a rule report: NPU003 must not call such a directive unused, nor --fix drop it.
LAYERS = ("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
          "def build(x):\n    with npu_weight_prefetch_scope(0, 268435456):\n        return x\n")
TRAIN = ("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\nimport layers\n"
         "with npu_weight_prefetch_scope():  # noqa: NPU101\n    layers.build(1)\n")
APPLY = ("import torch\n\n\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
         "        return x\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
         "        return F.apply(x)  # noqa: NPU503\n")


@pytest.mark.parametrize("files, named", [
    ({"layers.py": LAYERS, "train.py": TRAIN}, "train.py"),
    ({"model.py": APPLY, "pretrain_gpt.py": "from model import M\n", "run.sh": AMO}, "model.py"),
    # the program's only other file is the launch script (the entry is an installed package's),
    # with or without a project marker: an editor's buffer, a pre-commit run over model.py
    ({"model.py": APPLY, "run.sh": AMO}, "model.py"),
    ({"model.py": APPLY, "run.sh": AMO, "pyproject.toml": "[project]\nname = 'm'\n"}, "model.py"),
    ({"model.py": APPLY, "launch": "#!/bin/bash\n" + AMO}, "model.py"),  # a script without a suffix
])
def test_a_run_over_part_of_a_program_keeps_the_directives_the_whole_needs(cli_run, tmp_path, files, named):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert cli_run(["--select", "ALL", "--no-cache", "."], tmp_path).returncode == 0  # the directive is used
    r = cli_run(["--select", "ALL", "--no-cache", "--fix", named], tmp_path)
    assert r.returncode == 0 and "NPU003" not in r.stdout, r.stdout + r.stderr
    assert (tmp_path / named).read_text() == files[named]
    assert cli_run(["--select", "ALL", "--no-cache", "."], tmp_path).returncode == 0


def test_a_run_over_a_whole_program_judges_every_code(cli_run, tmp_path):
    # the twins: the same directive where no file makes NPU503 report (no launch enables AMO),
    # in a run over the folder, and over the file alone when it is all of its program
    (tmp_path / "model.py").write_text(APPLY)
    (tmp_path / "pretrain_gpt.py").write_text("from model import M\n")
    r = cli_run(["--select", "ALL", "--no-cache", "."], tmp_path)
    assert "model.py:12:28: NPU003" in r.stdout, r.stdout
    (tmp_path / "pretrain_gpt.py").unlink()
    r = cli_run(["--select", "ALL", "--no-cache", "model.py"], tmp_path)
    assert "model.py:12:28: NPU003" in r.stdout, r.stdout


def test_a_run_over_part_of_a_program_judges_the_engine_s_own_codes(cli_run, tmp_path):
    # NPU004 (CRLF in a shell script) depends on the file alone
    (tmp_path / "layers.py").write_text(LAYERS)
    (tmp_path / "train.py").write_text(TRAIN.replace("NPU101", "NPU101, NPU004"))
    r = cli_run(["--select", "ALL", "--no-cache", "train.py"], tmp_path)
    assert "unused `noqa` directive: NPU004 suppressed" in r.stdout and "NPU101 suppressed" not in r.stdout, r.stdout


def test_one_file_named_twice_through_a_hard_link_is_written_once_and_counted_once(cli_run, tmp_path):
    (tmp_path / "t.py").write_text(UNUSED)
    os.link(tmp_path / "t.py", tmp_path / "hard.py")
    os.symlink(tmp_path / "t.py", tmp_path / "link.py")
    r = cli_run(["--fix", "--select", "NPU003,NPU304", "--no-cache", "t.py", "hard.py", "link.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "changed while npulint" not in r.stderr and "Fixed 1 finding in 1 file." in r.stderr, r.stderr
    assert (tmp_path / "t.py").read_text() == "longer_name = compute(1, 2)\n"
