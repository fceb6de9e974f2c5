"""Configuration: ``[tool.npulint]`` in the nearest ``pyproject.toml`` (searched upward from the
linted path), ``npulint.toml`` / ``.npulint.toml`` with top-level keys, ``--config``; the keys
product, mindspeed-stack, select, ignore, extend-select, per-file-ignores; and the one-line
exit-2 errors for anything malformed or unknown."""

from __future__ import annotations


import pytest

from conftest import parse, codes

IMPORT = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
VIOLATION = (IMPORT + "with npu_weight_prefetch_scope():\n    pass\n"
             "with npu_weight_prefetch_scope(0, 1024):\n    pass\n")  # NPU101 at 4:6
TWO_CODES = VIOLATION + "with npu_weight_prefetch_scope(-1):\n    pass\n"  # + NPU103 at 6:6
INVALID_ID = IMPORT + "with npu_weight_prefetch_scope(-1):\n    pass\n"  # NPU103 at 2:6



def assert_config_error(result, *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    msg = result.stderr.strip()
    assert msg and "\n" not in msg, f"expected one line on stderr: {result.stderr!r}"
    for needle in needles:
        assert needle in msg, f"{needle!r} not in {msg!r}"


def pyproject(body: str) -> str:
    return "[project]\nname = \"demo\"\n\n[tool.npulint]\n" + body


# --------------------------------------------------------------------------- finding the file


def test_pyproject_in_project_root(cli_run, project):
    root = project({"a.py": TWO_CODES, "pkg/b.py": TWO_CODES, "pyproject.toml": pyproject('ignore = ["NPU101"]\n')})
    r = cli_run([], cwd=root)
    assert parse(r.stdout) == [("a.py", 6, 6, "NPU103"), ("pkg/b.py", 6, 6, "NPU103")]


def test_pyproject_searched_upward_from_linted_path(cli_run, project):
    root = project({"sub/deeper/x.py": TWO_CODES, "sub/pyproject.toml": pyproject('ignore = ["NPU101"]\n')})
    r = cli_run(["sub/deeper/x.py"], cwd=root)
    assert parse(r.stdout) == [("sub/deeper/x.py", 6, 6, "NPU103")]
    r = cli_run(["sub"], cwd=root)
    assert parse(r.stdout) == [("sub/deeper/x.py", 6, 6, "NPU103")]


def test_config_of_cwd_does_not_apply_to_path_elsewhere(cli_run, project):
    root = project({
        "proj/pyproject.toml": pyproject('ignore = ["NPU101"]\n'),
        "proj/keep.txt": "x",
        "other/x.py": VIOLATION,
    })
    r = cli_run(["../other/x.py"], cwd=root / "proj")
    assert [g[1:] for g in parse(r.stdout)] == [(4, 6, "NPU101")]


def test_pyproject_without_tool_section_is_skipped(cli_run, project):
    root = project({
        "pyproject.toml": pyproject('ignore = ["NPU101"]\n'),
        "sub/pyproject.toml": "[project]\nname = \"sub\"\n\n[tool.black]\nline-length = 100\n",
        "sub/x.py": TWO_CODES,
    })
    r = cli_run(["sub/x.py"], cwd=root)
    assert parse(r.stdout) == [("sub/x.py", 6, 6, "NPU103")]


def test_nearest_config_wins(cli_run, project):
    root = project({
        "pyproject.toml": pyproject('ignore = ["NPU101"]\n'),
        "sub/pyproject.toml": pyproject('ignore = ["NPU103"]\n'),
        "sub/x.py": TWO_CODES,
    })
    r = cli_run(["sub/x.py"], cwd=root)
    assert parse(r.stdout) == [("sub/x.py", 4, 6, "NPU101")]


@pytest.mark.parametrize("name", ["npulint.toml", ".npulint.toml"])
def test_npulint_toml_top_level_keys(cli_run, project, name):
    root = project({"a.py": TWO_CODES, name: 'ignore = ["NPU103"]\nproduct = "atlas-a3"\n'})
    r = cli_run([], cwd=root)
    assert r.returncode == 1
    assert parse(r.stdout) == [("a.py", 4, 6, "NPU101")]


@pytest.mark.parametrize("name", ["npulint.toml", ".npulint.toml"])
def test_npulint_toml_unknown_key(cli_run, project, name):
    root = project({"a.py": VIOLATION, name: 'ignroe = ["NPU103"]\n'})
    assert_config_error(cli_run([], cwd=root), "ignroe")


def test_npulint_toml_with_tool_table_is_unknown_key(cli_run, project):
    # npulint.toml has top-level keys: a [tool.npulint] table there is an unknown key 'tool'
    root = project({"a.py": VIOLATION, "npulint.toml": '[tool.npulint]\nignore = ["NPU101"]\n'})
    assert_config_error(cli_run([], cwd=root), "tool")


def test_explicit_config_option(cli_run, project):
    root = project({
        "a.py": TWO_CODES,
        "pyproject.toml": pyproject('ignore = ["NPU101"]\n'),
        "cfg/custom.toml": 'ignore = ["NPU103"]\n',
        "cfg/pyproject.toml": pyproject('select = ["NPU101"]\n'),
    })
    assert parse(cli_run([], cwd=root).stdout) == [("a.py", 6, 6, "NPU103")]
    assert parse(cli_run(["--config", "cfg/custom.toml"], cwd=root).stdout) == [("a.py", 4, 6, "NPU101")]
    assert parse(cli_run(["--config", "cfg/pyproject.toml"], cwd=root).stdout) == [("a.py", 4, 6, "NPU101")]


def test_explicit_config_errors(cli_run, project):
    root = project({"a.py": VIOLATION, "bad.toml": 'colour = "red"\n'})
    assert_config_error(cli_run(["--config", "bad.toml"], cwd=root), "colour")
    assert_config_error(cli_run(["--config", "missing.toml"], cwd=root), "missing.toml")


# --------------------------------------------------------------------------- keys and values


@pytest.mark.parametrize("product, stack", [("atlas-a2", "current"), ("atlas-a3", "legacy")])
def test_valid_values_accepted(cli_run, project, product, stack):
    root = project({"a.py": VIOLATION, "pyproject.toml": pyproject(
        f'product = "{product}"\n'
        f'mindspeed-stack = "{stack}"\n'
        'select = ["NPU0", "NPU1"]\n'
        'ignore = ["NPU104"]\n'
        'extend-select = ["NPU101"]\n'
        'exclude = ["build"]\n'
        'extend-exclude = ["generated"]\n'
        '[tool.npulint.per-file-ignores]\n'
        '"tests/*.py" = ["NPU1"]\n'
    )})
    r = cli_run([], cwd=root)
    assert r.returncode == 1, r.stderr
    assert parse(r.stdout) == [("a.py", 4, 6, "NPU101")]


def test_empty_tool_section_uses_defaults(cli_run, project):
    root = project({"a.py": VIOLATION, "pyproject.toml": pyproject("")})
    r = cli_run([], cwd=root)
    assert parse(r.stdout) == [("a.py", 4, 6, "NPU101")]


def test_config_select_in_process(lint):
    found = lint({"a.py": TWO_CODES}, config='[tool.npulint]\nselect = ["NPU103"]\n')
    assert codes(found) == ["NPU103"]


def test_config_extend_select(cli_run, project):
    root = project({"a.py": TWO_CODES, "pyproject.toml": pyproject('select = ["NPU103"]\nextend-select = ["NPU101"]\n')})
    assert [g[3] for g in parse(cli_run([], cwd=root).stdout)] == ["NPU101", "NPU103"]


def test_config_more_specific_selector_wins(cli_run, project):
    root = project({"a.py": TWO_CODES, "pyproject.toml": pyproject('select = ["NPU101"]\nignore = ["NPU1"]\n')})
    assert [g[3] for g in parse(cli_run([], cwd=root).stdout)] == ["NPU101"]


def test_cli_ignore_adds_to_config_ignore(cli_run, project):
    root = project({"a.py": TWO_CODES + "with npu_weight_prefetch_scope(0, 1024, 3):\n    pass\n",
                    "pyproject.toml": pyproject('ignore = ["NPU101"]\n')})
    assert parse(cli_run([], cwd=root).stdout) == [("a.py", 6, 6, "NPU103"), ("a.py", 8, 6, "NPU010")]
    r = cli_run(["--ignore", "NPU103"], cwd=root)
    assert parse(r.stdout) == [("a.py", 8, 6, "NPU010")]


def test_per_file_ignores(lint):
    found = lint(
        {"tests/test_a.py": TWO_CODES, "legacy.py": TWO_CODES, "pkg/legacy.py": TWO_CODES, "main.py": INVALID_ID},
        select=["NPU103"],
        config='[tool.npulint]\n[tool.npulint.per-file-ignores]\n"tests/*.py" = ["NPU103"]\n"legacy.py" = ["NPU1"]\n',
    )
    # a pattern without a slash matches the file name at any depth (like ruff and .gitignore)
    assert [(f.path, f.code) for f in found] == [("main.py", "NPU103")]


def test_per_file_ignores_relative_to_config_folder(cli_run, project):
    root = project({
        "pyproject.toml": pyproject('[tool.npulint.per-file-ignores]\n"pkg/gen.py" = ["NPU103"]\n'),
        "pkg/gen.py": INVALID_ID,
        "pkg/other.py": INVALID_ID,
    })
    r = cli_run(["."], cwd=root / "pkg")
    assert parse(r.stdout) == [("other.py", 2, 6, "NPU103")]


# the tree of the ruff comparison: which files keep their NPU103 under each per-file-ignores
# pattern, as ruff 0.17.6 keeps F401 under the same pattern (scripts/a/b.py: `*` crosses `/`)
PFI_TREE = ["scripts/x.py", "scripts/a/b.py", "tests/t.py", "tests/unit/u.py", "src/tests/s.py", "top.py"]


@pytest.mark.parametrize("pattern, kept", [
    ("scripts/*.py", ["src/tests/s.py", "tests/t.py", "tests/unit/u.py", "top.py"]),
    ("**/{tests,scripts}/*", ["top.py"]),
    ("{tests,scripts}/*", ["src/tests/s.py", "top.py"]),
    ("!scripts/*", ["scripts/a/b.py", "scripts/x.py"]),  # negated: every file the rest does not match
    ("!{scripts,tests}/**", ["scripts/a/b.py", "scripts/x.py", "tests/t.py", "tests/unit/u.py"]),
    ("t?p.py", ["scripts/a/b.py", "scripts/x.py", "src/tests/s.py", "tests/t.py", "tests/unit/u.py"]),
    ("[!t]*.py", ["tests/t.py", "top.py"]),
    ("!top.py", ["top.py"]),
    # as before (gitignore): a folder's name covers the files under it, at any depth (ruff: nothing)
    ("tests/*.py", ["scripts/a/b.py", "scripts/x.py", "src/tests/s.py", "top.py"]),
    ("tests", ["scripts/a/b.py", "scripts/x.py", "top.py"]),
])
def test_per_file_ignores_patterns_read_as_ruff_reads_them(cli_run, project, pattern, kept):
    root = project({**{p: INVALID_ID for p in PFI_TREE},
                    "pyproject.toml": pyproject(f'[tool.npulint.per-file-ignores]\n"{pattern}" = ["NPU103"]\n')})
    r = cli_run(["--no-cache", "--select", "NPU103"], cwd=root)
    assert [p for p, _, _, _ in parse(r.stdout)] == kept, r.stderr


@pytest.mark.parametrize("pattern", ["{tests", "tests}", "[a", "x\\\\"])
def test_a_per_file_ignores_pattern_ruff_rejects_is_a_one_line_error(cli_run, project, pattern):
    root = project({"a.py": INVALID_ID,
                    "pyproject.toml": pyproject(f'[tool.npulint.per-file-ignores]\n"{pattern}" = ["NPU103"]\n')})
    r = cli_run(["--no-cache"], cwd=root)
    assert r.returncode == 2 and "invalid pattern" in r.stderr and "Traceback" not in r.stderr


def test_per_file_ignores_prefix_code(cli_run, project):
    root = project({"a.py": TWO_CODES, "pyproject.toml": pyproject('per-file-ignores = { "a.py" = ["NPU10"] }\n')})
    r = cli_run([], cwd=root)
    assert (r.returncode, r.stdout) == (0, "")


# --------------------------------------------------------------------------- errors (exit 2)


@pytest.mark.parametrize("body, needles", [
    ('select = [NPU101\n', ["pyproject.toml"]),
    ('select = ["NPU101"\n', ["pyproject.toml"]),
    ('unknown-key = 1\n', ["unknown-key"]),
    ('line-length = 100\n', ["line-length"]),
    ('[tool.npulint.lint]\nselect = ["NPU1"]\n', ["lint"]),
    ('product = "atlas-a9"\n', ["product", "atlas-a9"]),
    ('product = "Atlas A2"\n', ["product"]),
    ('product = 3\n', ["product"]),
    ('mindspeed-stack = "ancient"\n', ["mindspeed-stack", "ancient"]),
    ('select = ["NPU999"]\n', ["NPU999"]),
    ('select = ["E501"]\n', ["E501"]),
    ('ignore = ["NPU9"]\n', ["NPU9"]),
    ('extend-select = ["FOO1"]\n', ["FOO1"]),
    ('per-file-ignores = { "a.py" = ["NPU777"] }\n', ["NPU777"]),
    ('select = "NPU101"\n', ["select"]),
    ('ignore = [101]\n', ["ignore"]),
    ('per-file-ignores = ["a.py"]\n', ["per-file-ignores"]),
    ('exclude = "build"\n', ["exclude"]),
    ('extend-exclude = 3\n', ["extend-exclude"]),
])
def test_config_errors(cli_run, project, body, needles):
    root = project({"a.py": VIOLATION, "pyproject.toml": pyproject(body)})
    assert_config_error(cli_run([], cwd=root), *needles)


def test_tool_npulint_not_a_table(cli_run, project):
    root = project({"a.py": VIOLATION, "pyproject.toml": "[tool]\nnpulint = 3\n"})
    assert_config_error(cli_run([], cwd=root), "pyproject.toml")


def test_config_error_also_for_explicit_file_and_stdin(cli_run, project):
    root = project({"a.py": VIOLATION, "pyproject.toml": pyproject('product = "atlas-a9"\n')})
    assert_config_error(cli_run(["a.py"], cwd=root), "product")
    assert_config_error(cli_run(["-", "--stdin-filename", "a.py"], cwd=root, stdin=VIOLATION), "product")


def test_config_error_in_parent_folder(cli_run, project):
    root = project({"sub/a.py": VIOLATION, "pyproject.toml": pyproject('select = ["NPU999"]\n')})
    assert_config_error(cli_run(["a.py"], cwd=root / "sub"), "NPU999")


# --------------------------------------------------------------------------- one run, several configs


def test_each_linted_path_uses_its_nearest_config(cli_run, project):
    # `npulint sub/x.py` applies sub/pyproject.toml; naming another path in the same run must not
    # change how sub/x.py is linted (the config is searched upward from each linted path).
    root = project({
        "sub/pyproject.toml": pyproject('ignore = ["NPU103"]\n'),
        "sub/x.py": INVALID_ID,
        "other/y.py": INVALID_ID,
    })
    assert parse(cli_run(["sub/x.py"], cwd=root).stdout) == []
    r = cli_run(["sub/x.py", "other/y.py"], cwd=root)
    assert parse(r.stdout) == [("other/y.py", 2, 6, "NPU103")]


def test_nested_config_applies_to_its_folder_during_walk(cli_run, project):
    # ruff's hierarchical configuration: the nearest config above each file found by the walk
    root = project({
        "sub/pyproject.toml": pyproject('ignore = ["NPU103"]\n'),
        "sub/x.py": INVALID_ID,
        "t.py": INVALID_ID,
    })
    r = cli_run([], cwd=root)
    assert parse(r.stdout) == [("t.py", 2, 6, "NPU103")]
