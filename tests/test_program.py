"""A run over some of a program's files (a pre-commit hook's changed files, an editor's buffer,
``--stdin-filename``) takes a value for certain only where the program's other files, which it
does not lint, do not change it (RULES.md "Resolve values, never guess": a class attribute
"never assigned elsewhere"; npulint/program.py)."""

import textwrap

import pytest

from npulint import program

LAYER = textwrap.dedent("""\
    import torch_npu


    class Cfg:
        WS = 1


    def layer(x, w, hcom):
        return torch_npu.npu_mm_reduce_scatter_base(x, w, hcom, Cfg.WS)
""")
# another module of the program, not linted: it changes the attribute at start-up
SETUP = "import torch.distributed as dist\nfrom layer import Cfg\n\nCfg.WS = dist.get_world_size()\n"
QUIET = "import layer\n\nprint(layer.Cfg)\n"  # reads it, changes nothing


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _codes(result):
    return [line.split()[1] for line in result.stdout.splitlines() if ": NPU" in line]


@pytest.mark.parametrize("marker", [None, "pyproject.toml", ".git"])
def test_a_file_linted_alone_is_judged_with_the_modules_of_its_program(tmp_path, cli_run, marker):
    """Beside a plain script (no project marker: the modules Python imports beside it), or in a
    project (pyproject.toml, a git work tree): the module that changes ``Cfg.WS`` is not linted,
    and ``world_size`` is unknown; with a module that changes nothing it is 1, and reported."""
    if marker == ".git":
        (tmp_path / ".git").mkdir()
    elif marker:
        (tmp_path / marker).write_text("")
    _write(tmp_path, {"layer.py": LAYER, "setup_dist.py": SETUP})
    assert _codes(cli_run(["layer.py", "--no-cache"], tmp_path)) == []
    (tmp_path / "setup_dist.py").write_text(QUIET)
    assert _codes(cli_run(["layer.py", "--no-cache"], tmp_path)) == ["NPU401"]


def test_a_buffer_on_stdin_is_judged_with_the_modules_of_its_program(tmp_path, cli_run):
    """The language server and ``--stdin-filename`` lint one buffer: the files beside it count."""
    _write(tmp_path, {"layer.py": LAYER, "setup_dist.py": SETUP})
    args = ["-", "--stdin-filename", "layer.py", "--no-cache"]
    assert _codes(cli_run(args, tmp_path, stdin=LAYER)) == []
    (tmp_path / "setup_dist.py").write_text(QUIET)
    assert _codes(cli_run(args, tmp_path, stdin=LAYER)) == ["NPU401"]


def test_a_module_in_another_folder_of_the_project_counts(tmp_path, cli_run):
    """A project's program is its whole tree (from the folder of its pyproject.toml), not the
    folder of the file; a file the configuration excludes is not part of it."""
    (tmp_path / "pyproject.toml").write_text("")
    _write(tmp_path, {"src/layer.py": LAYER, "tools/setup_dist.py": SETUP.replace("from layer", "from src.layer")})
    assert _codes(cli_run(["src", "--no-cache"], tmp_path)) == []
    (tmp_path / "pyproject.toml").write_text('[tool.npulint]\nextend-exclude = ["tools"]\n')
    assert _codes(cli_run(["src", "--no-cache"], tmp_path)) == ["NPU401"]


def test_a_program_too_large_to_read_changes_anything(tmp_path, cli_run, monkeypatch):
    """Past MAX_PROGRAM_FILES files the run does not lint, every value another module could
    change is unknown (reading them all for one buffer would cost more than it is worth)."""
    _write(tmp_path, {"layer.py": LAYER, "setup_dist.py": QUIET, "other.py": QUIET})
    assert _codes(cli_run(["layer.py", "--no-cache"], tmp_path)) == ["NPU401"]
    monkeypatch.setattr(program, "MAX_PROGRAM_FILES", 1)
    assert _codes(cli_run(["layer.py", "--no-cache"], tmp_path)) == []


def test_a_folder_linted_whole_is_not_walked_again(tmp_path, cli_run, monkeypatch):
    """The program of files found by walking a folder is that folder's files: no second walk;
    a file named alone is judged with its program, which is walked."""
    from npulint import discovery

    (tmp_path / "pyproject.toml").write_text("")
    _write(tmp_path, {"layer.py": LAYER, "setup_dist.py": QUIET})
    walks = []
    real = discovery._walk
    monkeypatch.setattr(discovery, "_walk", lambda top, *a, **kw: walks.append(top) or real(top, *a, **kw))
    assert _codes(cli_run([".", "--no-cache"], tmp_path)) == ["NPU401"]
    assert len(walks) == 1
    assert _codes(cli_run(["layer.py", "--no-cache"], tmp_path)) == ["NPU401"]
    assert walks[1:] == [str(tmp_path)]


@pytest.mark.parametrize("change", ["added", "project phase"])
def test_a_run_over_part_of_a_program_is_not_answered_from_a_whole_run_entry(tmp_path, cli_run, change):
    """No run key covers the files of a program the run does not lint, nor one added later: such
    a run stores no whole-run entry once it asked what they change, even in the project phase
    (NPU101 asks which file imports two modules)."""
    (tmp_path / "pyproject.toml").write_text("")
    cache = ["--cache-dir", str(tmp_path / ".cache")]
    if change == "added":
        _write(tmp_path, {"layer.py": LAYER})
        assert _codes(cli_run(["layer.py", *cache], tmp_path)) == ["NPU401"]
        (tmp_path / "setup_dist.py").write_text(SETUP)
        assert _codes(cli_run(["layer.py", *cache], tmp_path)) == []
    else:
        scope = ("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n\n"
                 "with npu_weight_prefetch_scope(buffer_pool_id=0, buffer_pool_size={}):\n    pass\n")
        _write(tmp_path, {"a.py": scope.format(1024), "b.py": scope.format(2048), "train.py": "import a\nimport b\n"})
        assert _codes(cli_run(["a.py", "b.py", *cache], tmp_path)) == ["NPU101"]
        (tmp_path / "train.py").write_text("print(1)\n")
        assert _codes(cli_run(["a.py", "b.py", *cache], tmp_path)) == []


def test_a_file_over_the_size_limit_still_changes_values(tmp_path, cli_run):
    """A file of the program over --max-file-size is not analysed, but what it changes counts."""
    _write(tmp_path, {"layer.py": LAYER, "setup_dist.py": SETUP + "# " + "x" * 300_000 + "\n"})
    assert _codes(cli_run(["layer.py", "--no-cache"], tmp_path)) == []
    assert _codes(cli_run(["layer.py", "setup_dist.py", "--no-cache"], tmp_path)) == []


def test_a_cached_run_that_read_files_it_does_not_lint_is_not_answered_whole(tmp_path, cli_run):
    """A run whose result depends on files outside it stores no whole-run entry (no run key
    covers them): after the module it does not lint changes, the next run sees the change."""
    _write(tmp_path, {"layer.py": LAYER, "setup_dist.py": QUIET})
    cache = ["--cache-dir", str(tmp_path / ".cache")]
    assert _codes(cli_run(["layer.py", *cache], tmp_path)) == ["NPU401"]
    engine, = (d for d in (tmp_path / ".cache").iterdir() if d.is_dir())
    assert (engine / "file").is_dir() and not (engine / "run").exists()
    (tmp_path / "setup_dist.py").write_text(SETUP)
    assert _codes(cli_run(["layer.py", *cache], tmp_path)) == []


def test_program_roots(tmp_path):
    (tmp_path / "proj" / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("")
    for f in ("proj/pkg/__init__.py", "proj/pkg/sub/__init__.py", "proj/pkg/sub/m.py"):
        (tmp_path / f).write_text("")
    assert program.program_root(str(tmp_path / "proj/pkg/sub/m.py")) == str(tmp_path / "proj")
    (tmp_path / "loose" / "pkg").mkdir(parents=True)
    (tmp_path / "loose/pkg/__init__.py").write_text("")
    (tmp_path / "loose/pkg/m.py").write_text("")
    (tmp_path / "loose/script.py").write_text("")
    (tmp_path / "loose/data").mkdir()
    (tmp_path / "loose/data/x.py").write_text("")  # not a package: Python does not import it from there
    found = program.outside_files([str(tmp_path / "loose/pkg/m.py")], None)
    assert found == sorted(str(tmp_path / f) for f in ("loose/pkg/__init__.py", "loose/script.py"))


@pytest.mark.parametrize("script, reported", [
    ("import layer\n\nlayer.WS = 8\n", False),  # stores it by name
    ("WS = 2\nprint(WS)\n", True),  # a name of its own: no attribute stored
    # a computed setattr is not counted in a file the run does not lint (only one that reaches
    # the module could set its attributes, and which files reach it is not searched there)
    ("import json\n\nfor k, v in json.load(open('c.json')).items():\n    setattr(ARGS, k, v)\n", True),
])
def test_a_file_the_run_does_not_lint_counts_where_it_may_store_the_name(tmp_path, cli_run, script, reported):
    """A file of the program the run does not lint is read as the run's files are (a store, a
    change in place of that name), where its text names it."""
    layer = LAYER.replace("class Cfg:\n    WS = 1\n", "WS = 1\n").replace("Cfg.WS", "WS")
    _write(tmp_path, {"layer.py": layer, "other.py": script})
    assert _codes(cli_run(["layer.py", "--no-cache"], tmp_path)) == (["NPU401"] if reported else [])
