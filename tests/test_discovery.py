"""Which files a run lints: folders walked with the default excludes (VCS folders, virtual
environments, build output, caches), ``.gitignore`` files (nested, with ``!`` negation), the
config's ``exclude``/``extend-exclude``; files named on the command line are always linted.

Every Python file written here reports NPU103 once at 2:6, so the set of reported paths is the
set of linted Python files."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

from npulint import discovery, registry
from npulint.config import ConfigError, Settings, find_config, load_config

IMPORT = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
INVALID_ID = IMPORT + "with npu_weight_prefetch_scope(-1):\n    pass\n"  # NPU103 at 2:6

FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>NPU\d{3}) \S")


@pytest.fixture
def linted(cli_run):
    def linted(root: Path, args=(), cwd: Path = None):
        """Paths reported by ``npulint ARGS`` (run in *cwd*, default *root*), in output order."""
        r = cli_run(list(args), cwd=cwd or root)
        assert r.returncode in (0, 1), r.stderr
        assert "Traceback" not in r.stderr
        out = []
        for line in r.stdout.splitlines():
            m = FINDING.match(line)
            assert m, line
            assert (m["line"], m["col"], m["code"]) == ("2", "6", "NPU103"), line
            out.append(m["path"])
        return out
    return linted


def tree(project, paths, extra=None) -> Path:
    files = {p: INVALID_ID for p in paths}
    files.update(extra or {})
    root = project(files)
    (root / ".git").mkdir(exist_ok=True)  # the project is a git work tree
    return root


def discover_in_process(root: Path, paths=(".",)):
    """``discovery.discover`` as the CLI calls it; returns ``[(relpath, language)]``."""
    rules, _ = registry.load()
    found = find_config(str(root))
    settings = load_config(found, [r.code for r in rules]) if found else Settings(root=str(root))
    files, missing = discovery.discover([str(root / p) for p in paths], settings)
    assert not missing
    return [(os.path.relpath(p, root).replace(os.sep, "/"), lang) for p, lang, _ in files]


# --------------------------------------------------------------------------- default excludes


def test_default_excludes(linted, project):
    root = tree(project, [
        "a.py",
        ".git/hooks/h.py",
        ".venv/lib/m.py",
        "venv/lib/m.py",
        "build/m.py",
        "dist/m.py",
        "__pycache__/m.py",
        "node_modules/pkg/m.py",
        "lib/python3.11/site-packages/pkg/m.py",
        "pkg/build/m.py",
        "pkg/dist/m.py",
        "pkg/__pycache__/m.py",
        "pkg/ok.py",
    ])
    assert linted(root) == ["a.py", "pkg/ok.py"]


def test_folder_with_pyvenv_cfg_is_a_virtualenv(linted, project):
    root = tree(project, ["env312/lib/m.py", "tools/env/bin/m.py", "keep/m.py"],
                {"env312/pyvenv.cfg": "home = /usr/bin\n", "tools/env/pyvenv.cfg": "home = /usr/bin\n"})
    assert linted(root) == ["keep/m.py"]


def test_excludes_match_whole_names_only(linted, project):
    # build.py, dist_utils.py, venv_tools/, my_build/ are ordinary names
    root = tree(project, ["build.py", "dist_utils.py", "venv_tools/m.py", "my_build/m.py", "builder/m.py"])
    assert linted(root) == ["build.py", "builder/m.py", "dist_utils.py", "my_build/m.py", "venv_tools/m.py"]


def test_only_python_and_shell_files(project):
    root = project({
        "a.py": "x = 1\n",
        "run.sh": "#!/bin/bash\necho hi\n",
        "notes.txt": "hccl_ops\n",
        "README.md": "# x\n",
        "setup.cfg": "[x]\n",
        "data.json": "{}\n",
        "pkg/b.py": "y = 2\n",
        "pkg/launch.sh": "torchrun pretrain_gpt.py\n",
    })
    assert discover_in_process(root) == [
        ("a.py", "python"), ("pkg/b.py", "python"), ("pkg/launch.sh", "shell"), ("run.sh", "shell")]


def test_shell_files_found_by_walk_do_not_crash(linted, project):
    root = tree(project, ["a.py"], {"scripts/run.sh": "#!/bin/bash\nexport A=1\npython train.py \"$@\"\n", "x.sh": "exit 0\n"})
    assert linted(root) == ["a.py"]


# --------------------------------------------------------------------------- .gitignore


def test_gitignore_patterns_and_negation(linted, project):
    root = tree(project, ["a.py", "gen_a.py", "gen_keep.py", "out/m.py", "pkg/gen_b.py", "pkg/m.py"],
                {".gitignore": "gen_*.py\n!gen_keep.py\nout/\n"})
    assert linted(root) == ["a.py", "gen_keep.py", "pkg/m.py"]


def test_nested_gitignore(linted, project):
    root = tree(project, ["a.py", "pkg/a.py", "pkg/tmp/m.py", "pkg/x_gen.py", "other/tmp/m.py"],
                {"pkg/.gitignore": "tmp/\n*_gen.py\n"})
    # pkg/.gitignore applies inside pkg only
    assert linted(root) == ["a.py", "other/tmp/m.py", "pkg/a.py"]


def test_nested_gitignore_negation_overrides_parent(linted, project):
    root = tree(project, ["a_gen.py", "sub/a_gen.py", "sub/b_gen.py", "sub/x.py"],
                {".gitignore": "*_gen.py\n", "sub/.gitignore": "!a_gen.py\n"})
    assert linted(root) == ["sub/a_gen.py", "sub/x.py"]


def test_gitignore_anchored_pattern(linted, project):
    root = tree(project, ["gen/m.py", "pkg/gen/m.py", "pkg/x.py"], {".gitignore": "/gen/\n"})
    assert linted(root) == ["pkg/gen/m.py", "pkg/x.py"]


def test_gitignore_cannot_reinclude_file_in_ignored_folder(linted, project):
    # git: "It is not possible to re-include a file if a parent directory of that file is excluded."
    root = tree(project, ["a.py", "ign/keep.py", "ign/m.py"], {".gitignore": "ign/\n!ign/keep.py\n"})
    assert linted(root) == ["a.py"]


def test_parent_gitignore_applies_when_linting_subfolder(linted, project):
    root = tree(project, ["sub/gen/m.py", "sub/x.py", "sub/y_gen.py"], {".gitignore": "gen/\n*_gen.py\n"})
    assert linted(root, ["sub"]) == ["sub/x.py"]
    assert linted(root, ["."], cwd=root / "sub") == ["x.py"]


def test_explicit_file_linted_even_if_gitignored(linted, project):
    root = tree(project, ["a.py", "ign/m.py", "b_gen.py"], {".gitignore": "ign/\n*_gen.py\n"})
    assert linted(root) == ["a.py"]
    assert linted(root, ["ign/m.py", "b_gen.py"]) == ["b_gen.py", "ign/m.py"]


# --------------------------------------------------------------------------- exclude / extend-exclude


def test_extend_exclude(linted, project):
    root = tree(project, [
        "a.py",
        "generated/m.py",
        "pkg/generated/m.py",
        "pkg/skip.py",
        "other/skip.py",
        "msg_pb2.py",
        "pkg/api_pb2.py",
        "build/m.py",
    ], {"pyproject.toml": textwrap.dedent("""\
        [tool.npulint]
        extend-exclude = ["generated", "pkg/skip.py", "*_pb2.py"]
    """)})
    # a bare name matches at any depth; a path with a slash is relative to the config's folder;
    # the default excludes (build) still apply
    assert linted(root) == ["a.py", "other/skip.py"]
    # from a subfolder, patterns stay relative to the config's folder
    assert linted(root, ["."], cwd=root / "pkg") == []
    assert linted(root, ["."], cwd=root / "other") == ["skip.py"]


EXCLUDE_TREE = ["scripts/x.py", "scripts/a/b.py", "tests/t.py", "tests/unit/u.py", "src/tests/s.py", "top.py"]


@pytest.mark.parametrize("patterns, kept", [
    # as ruff 0.17.6 reads extend-exclude (globset: `*` crosses `/`, {a,b} alternatives)
    (["scripts/*.py"], ["src/tests/s.py", "tests/t.py", "tests/unit/u.py", "top.py"]),
    (["{tests,scripts}"], ["top.py"]),
    (["**/tests"], ["scripts/a/b.py", "scripts/x.py", "top.py"]),
    (["src/**"], ["scripts/a/b.py", "scripts/x.py", "tests/t.py", "tests/unit/u.py", "top.py"]),
    (["t?p.py"], ["scripts/a/b.py", "scripts/x.py", "src/tests/s.py", "tests/t.py", "tests/unit/u.py"]),
    # gitignore's reading, as before: "tests/" is any folder named tests (ruff: the top one only)
    (["tests/"], ["scripts/a/b.py", "scripts/x.py", "top.py"]),
    # gitignore's negation, as before: re-included where a later line says so
    (["scripts/*", "!scripts/x.py"], ["scripts/x.py", "src/tests/s.py", "tests/t.py", "tests/unit/u.py", "top.py"]),
    (["{scripts,tests}/*", "!{scripts,tests}/[xt].py"],
     ["scripts/x.py", "src/tests/s.py", "tests/t.py", "top.py"]),
])
def test_exclude_patterns_read_as_ruff_reads_them(linted, project, patterns, kept):
    root = tree(project, EXCLUDE_TREE, {"pyproject.toml": f"[tool.npulint]\nextend-exclude = {patterns!r}\n"})
    assert sorted(linted(root)) == kept
    assert sorted(linted(root, ["--no-cache", "."])) == kept


def test_exclude_options_on_the_command_line(linted, project):
    """ruff's --exclude (replacing the configured exclude and the defaults) and --extend-exclude
    (adding to it): comma-separated, relative to the working folder."""
    root = tree(project, EXCLUDE_TREE + ["build/m.py"], {"pyproject.toml": '[tool.npulint]\nextend-exclude = ["top.py"]\n'})
    assert sorted(linted(root, ["--extend-exclude", "scripts/*.py,**/{tests,x}"])) == []
    assert sorted(linted(root, ["--extend-exclude", "tests", "--extend-exclude", "scripts"])) == []
    # --exclude replaces the configuration's exclude and extend-exclude stays: build/ is linted now
    assert sorted(linted(root, ["--exclude", "scripts,tests"])) == ["build/m.py"]
    # relative to the working folder, whichever folder the configuration is in
    assert sorted(linted(root, ["--extend-exclude", "a/*", "."], cwd=root / "scripts")) == ["x.py"]
    got = linted(root, ["--extend-exclude", "../tests,a", ".."], cwd=root / "scripts")
    assert sorted(os.path.relpath(os.path.join(root / "scripts", p), root) for p in got) == [
        os.path.join("scripts", "x.py"), os.path.join("src", "tests", "s.py")]


@pytest.mark.parametrize("pattern", ["[a", "{tests", "tests}"])
def test_a_bad_exclude_pattern_on_the_command_line_is_a_one_line_error(cli_run, project, pattern):
    root = project({"a.py": INVALID_ID})
    r = cli_run(["--extend-exclude", pattern], cwd=root)
    assert r.returncode == 2 and r.stdout == "" and "'--extend-exclude': invalid pattern" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_exclude(linted, project):
    root = tree(project, ["a.py", "gen/m.py", "pkg/gen/m.py", "pkg/m.py"],
                {"pyproject.toml": '[tool.npulint]\nexclude = ["gen"]\n'})
    assert linted(root) == ["a.py", "pkg/m.py"]


def test_explicit_file_linted_even_if_excluded(linted, project):
    root = tree(project, ["a.py", "generated/m.py", "build/m.py", ".venv/lib/m.py", "x_pb2.py"],
                {"pyproject.toml": '[tool.npulint]\nextend-exclude = ["generated", "*_pb2.py"]\n'})
    assert linted(root) == ["a.py"]
    assert linted(root, ["generated/m.py", "build/m.py", ".venv/lib/m.py", "x_pb2.py"]) == [
        ".venv/lib/m.py", "build/m.py", "generated/m.py", "x_pb2.py"]


def test_explicit_file_with_other_suffix_is_linted_as_python(linted, project):
    root = project({"script": INVALID_ID})
    assert linted(root, ["script"]) == ["script"]


# --------------------------------------------------------------------------- odd trees


def test_symlink_loop_does_not_hang(linted, project):
    root = tree(project, ["a.py", "pkg/m.py"])
    try:
        os.symlink(str(root / "pkg"), str(root / "pkg" / "loop"))
    except (OSError, NotImplementedError):  # pragma: no cover - no symlinks here
        pytest.skip("symlinks not supported")
    got = linted(root)
    assert got[0] == "a.py"
    assert "pkg/m.py" in got
    assert len(got) <= 3  # each real file at most once more through the link, never endlessly


def _link(target: Path, at: Path) -> None:
    try:
        os.symlink(str(target), str(at))
    except (OSError, NotImplementedError):  # pragma: no cover - no symlinks here
        pytest.skip("symlinks not supported")


def test_a_file_reached_through_links_is_linted_once_where_it_is(linted, project):
    # "a" < "pkg" < "z": the links sort before and after the real folder
    root = tree(project, ["pkg/m.py"])
    _link(root / "pkg", root / "a_link")
    _link(root / "pkg" / "m.py", root / "a_file.py")
    _link(root / "pkg", root / "z_link")
    assert linted(root) == ["pkg/m.py"]
    assert discover_in_process(root) == [("pkg/m.py", "python")]


def test_a_link_to_a_folder_outside_the_tree_is_followed(linted, project, tmp_path_factory):
    root = tree(project, ["a.py"])
    outside = tmp_path_factory.mktemp("elsewhere")
    (outside / "o.py").write_text(INVALID_ID)
    _link(outside, root / "shared")
    _link(outside / "o.py", root / "o_link.py")
    # one file, reached through two links: through the folder (links to folders are followed
    # before links to files)
    assert linted(root) == ["a.py", "shared/o.py"]


def test_empty_folder(cli_run, project):
    root = project({})
    r = cli_run([], cwd=root)
    assert (r.returncode, r.stdout) == (0, "")
    assert "Traceback" not in r.stderr


def test_gitignore_fast_check_agrees_with_pathspec():
    """discovery._Spec answers "no pattern matches" with one combined regex; every answer
    must be pathspec's own (negations, anchors, directory-only patterns, globs)."""
    import itertools

    import pathspec

    from npulint.discovery import _Spec

    lines = ["# comment", "", "__pycache__/", "*.py[cod]", "build/", "/dist", "!keep.pyc", "docs/**/*.md",
             "**/tmp", "a/b/", "*.log", "!important.log", "data?/", "[Tt]est*.sh", "\\#hash", "out/*", "!out/k.py",
             "nested/deep/file.py", "*.egg-info/"]
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    fast = _Spec(lines)
    assert fast.any is not None and fast._spec is None  # pathspec's spec: only once a pattern matches
    names = ["x.py", "x.pyc", "keep.pyc", "a.log", "important.log", "README.md", "test_run.sh", "Test.sh", "#hash",
             "k.py", "file.py", "pkg.egg-info", "data1", "dist", "tmp", "__pycache__", "build", "b"]
    folders = ["", "src/", "docs/", "docs/api/", "a/", "a/b/", "out/", "nested/deep/", "build/", "x/tmp/", "dist/"]
    checked = 0
    for folder, name, slash in itertools.product(folders, names, ("", "/")):
        rel = folder + name + slash
        assert fast.check_file(rel) == spec.check_file(rel).include, rel
        assert fast.match_file(rel) == bool(spec.match_file(rel)), rel
        checked += 1
    assert checked > 300


@pytest.mark.parametrize("bad", ["[z-a]", "\\", "a/[z-a]/b"])
def test_a_gitignore_line_nobody_can_match_matches_nothing(cli_run, project, bad):
    """git skips a .gitignore pattern it cannot match (a bad range, a lone backslash); the other
    lines still apply. It used to end the run with a traceback."""
    root = project({"a.py": INVALID_ID, "b.py": INVALID_ID, ".gitignore": f"{bad}\nb.py\n"})
    r = cli_run(["--select", "ALL", "--no-cache", "."], cwd=root)
    assert "Traceback" not in r.stderr and r.returncode == 1, r.stderr
    assert {line.split(":")[0] for line in r.stdout.splitlines()} == {"a.py"}


def test_a_bad_exclude_pattern_is_a_one_line_error(cli_run, project):
    from npulint.config import Settings
    from npulint.discovery import Excluder

    with pytest.raises(ConfigError, match="bad exclude pattern"):
        Excluder(Settings(root=".", extend_exclude=["[z-a]/x"]))
    root = project({"a.py": INVALID_ID, "pyproject.toml": "[tool.npulint]\nextend-exclude = ['[z-a]/x']\n"})
    r = cli_run(["--no-cache", "."], cwd=root)
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
