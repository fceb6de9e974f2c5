"""The ruff conventions a user reaches for, through the real CLI (``cli_run``): fix safety
(``--unsafe-fixes``, ``fixable``/``unfixable``, ``extend-safe-fixes``/``extend-unsafe-fixes``),
what is fixable in the output, ``--exit-non-zero-on-fix``, ``extend``, ``--show-settings``,
``--show-files``, ``--output-file``, ``--color``, the ``json-lines``/``junit``/``gitlab``
formats, ``--list-rules --format json``, ``--explain NAME``, ``--add-noqa`` and severities in
the text output."""

from __future__ import annotations

import pytest

from npulint.model import Edit, Fix

from test_fix_safety import AMO, MODEL
from test_fixes import BOTH, FIXED

NPU503_FIXED = "adapt_mem_func_wrapper(Fn, x,"


def _amo(tmp_path, config=None):
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "run.sh").write_text(AMO, encoding="utf-8")
    if config is not None:
        (tmp_path / "pyproject.toml").write_text("[tool.npulint]\n" + config, encoding="utf-8")
    return tmp_path / "model.py"


# -- 1. fix safety ----------------------------------------------------------------------------

def test_a_fix_is_safe_by_default_and_knows_only_two_applicabilities():
    assert Fix("d", ()).applicability == "safe"
    assert Fix("d", (), "unsafe").applicability == "unsafe"
    with pytest.raises(ValueError):
        Fix("d", (), "display-only")


def test_npu503_fix_is_unsafe_fix_applies_it_only_with_unsafe_fixes(cli_run, tmp_path):
    model = _amo(tmp_path)
    r = cli_run(["--fix", "--no-cache", "."], tmp_path)
    assert r.returncode == 1 and "NPU503" in r.stdout
    assert model.read_text(encoding="utf-8") == MODEL  # not applied
    r = cli_run(["--diff", "--no-cache", "."], tmp_path)
    assert r.returncode == 0 and r.stdout == ""
    r = cli_run(["--fix", "--unsafe-fixes", "--no-cache", "."], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert NPU503_FIXED in model.read_text(encoding="utf-8")


def test_unsafe_fixes_from_the_configuration_and_no_unsafe_fixes_over_it(cli_run, tmp_path):
    model = _amo(tmp_path, "unsafe-fixes = true\n")
    r = cli_run(["--fix", "--no-unsafe-fixes", "--no-cache", "."], tmp_path)
    assert r.returncode == 1 and model.read_text(encoding="utf-8") == MODEL
    r = cli_run(["--fix", "--no-cache", "."], tmp_path)
    assert r.returncode == 0 and NPU503_FIXED in model.read_text(encoding="utf-8")


def test_extend_safe_fixes_promotes_npu503(cli_run, tmp_path):
    model = _amo(tmp_path, 'extend-safe-fixes = ["NPU5"]\n')
    assert cli_run(["--fix", "--no-cache", "."], tmp_path).returncode == 0
    assert NPU503_FIXED in model.read_text(encoding="utf-8")


@pytest.mark.parametrize("config, fixed", [
    ('unfixable = ["NPU2"]\n', BOTH),
    ('fixable = ["NPU208"]\n', BOTH.replace('opt = torch.compile(model, backend=backend, mode="reduce-overhead")',
                                            "opt = torch.compile(model, backend=backend)")),
    ('fixable = []\nextend-fixable = ["NPU202"]\n',
     BOTH.replace("config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False\n", "")),
    ('unfixable = ["NPU2"]\nextend-fixable = ["NPU208", "NPU202"]\n', FIXED),  # the more specific wins
    ('extend-unsafe-fixes = ["NPU202"]\n',
     BOTH.replace('opt = torch.compile(model, backend=backend, mode="reduce-overhead")',
                  "opt = torch.compile(model, backend=backend)")),
])
def test_fixable_unfixable_and_extend_unsafe_fixes(cli_run, tmp_path, config, fixed):
    (tmp_path / "pyproject.toml").write_text("[tool.npulint]\n" + config, encoding="utf-8")
    (tmp_path / "t.py").write_text(BOTH, encoding="utf-8")
    cli_run(["--fix", "--no-cache", "t.py"], tmp_path)
    assert (tmp_path / "t.py").read_text(encoding="utf-8") == fixed


@pytest.mark.parametrize("config", ['unfixable = ["NPU9"]\n', 'fixable = "NPU2"\n', 'extend-safe-fixes = ["X1"]\n',
                                    'unsafe-fixes = "yes"\n'])
def test_bad_fix_settings_are_one_line_errors(cli_run, tmp_path, config):
    (tmp_path / "pyproject.toml").write_text("[tool.npulint]\n" + config, encoding="utf-8")
    (tmp_path / "t.py").write_text("x = 1\n", encoding="utf-8")
    r = cli_run(["--no-cache", "t.py"], tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("npulint: error: ") and r.stderr.count("\n") == 1


# -- 2. what is fixable -------------------------------------------------------------------------

def _both_and_amo(tmp_path):
    _amo(tmp_path)
    (tmp_path / "t.py").write_text(BOTH, encoding="utf-8")


def test_text_marks_fixable_findings_and_the_summary_counts_them(cli_run, tmp_path):
    _both_and_amo(tmp_path)
    r = cli_run(["--no-cache", "."], tmp_path)
    lines = r.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("model.py:12:16: NPU503 ") and "[*]" not in lines[0]  # unsafe: not applicable
    assert lines[1].startswith("t.py:8:1: NPU202 ") and " [*] `config.debug" in lines[1]
    assert " [*] torch.compile passes" in lines[2]
    assert r.stderr.splitlines()[-1] == ("[*] 2 fixable with the `--fix` option "
                                         "(1 hidden fix can be enabled with the `--unsafe-fixes` option).")
    r = cli_run(["--no-cache", "--unsafe-fixes", "."], tmp_path)
    assert all(" [*] " in line for line in r.stdout.splitlines())
    assert r.stderr.splitlines()[-1] == "[*] 3 fixable with the `--fix` option."
    r = cli_run(["--no-cache", "model.py", "run.sh"], tmp_path)
    assert r.stderr.splitlines()[-1] == "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."
    r = cli_run(["--no-cache", "--fix", "."], tmp_path)  # what is left after --fix: the unsafe one
    assert r.stderr.splitlines()[-1] == "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."
    r = cli_run(["--no-cache", "-q", "."], tmp_path)
    assert r.stderr == ""


def test_json_has_ruffs_fix_object_and_the_rule_url(cli_run, tmp_path):
    import json

    _both_and_amo(tmp_path)
    items = json.loads(cli_run(["--no-cache", "--format", "json", "."], tmp_path).stdout)
    by_code = {i["code"]: i for i in items}
    fix = by_code["NPU503"]["fix"]
    assert fix["applicability"] == "unsafe" and fix["message"].startswith("call through adapt_mem_func_wrapper")
    assert {"content", "location", "end_location"} == set(fix["edits"][1])
    assert fix["edits"][1]["location"] == {"row": 12, "column": 16}
    assert fix["edits"][1]["end_location"] == {"row": 13, "column": 31}
    assert fix["edits"][1]["content"].startswith(NPU503_FIXED)
    assert by_code["NPU202"]["fix"]["applicability"] == "safe"
    assert all(i["url"] is None for i in items)  # NPULINT_DOCS_URL unset
    items = json.loads(cli_run(["--no-cache", "--format", "json", "."], tmp_path,
                               env={"NPULINT_DOCS_URL": "https://docs.example/rules/"}).stdout)
    assert {i["url"] for i in items} == {f"https://docs.example/rules/{c}.md" for c in ("NPU202", "NPU208", "NPU503")}
    (tmp_path / "pyproject.toml").write_text('[tool.npulint]\nunfixable = ["NPU202"]\n', encoding="utf-8")
    items = json.loads(cli_run(["--no-cache", "--format", "json", "t.py"], tmp_path).stdout)
    assert [i["fix"] is None for i in items] == [True, False]  # an unfixable rule shows no fix


def test_statistics_have_ruffs_fixable_column(cli_run, tmp_path):
    _both_and_amo(tmp_path)
    r = cli_run(["--no-cache", "--statistics", "."], tmp_path)
    assert r.stdout.splitlines() == ["1  NPU202  [*] custom-pool-overrides-fx-reuse",
                                     "1  NPU208  [*] compile-mode-kwarg-ignored",
                                     "1  NPU503  [ ] autograd-apply-bypasses-amo"]
    assert "[*] 2 fixable" in r.stderr
    r = cli_run(["--no-cache", "--statistics", "model.py", "run.sh"], tmp_path)
    assert r.stdout == "1  NPU503  autograd-apply-bypasses-amo\n"  # nothing fixable: no column


# -- 3. --exit-non-zero-on-fix ---------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["--fix", "--fix-only"])
def test_exit_non_zero_on_fix(cli_run, tmp_path, mode):
    p = tmp_path / "t.py"
    p.write_text(BOTH, encoding="utf-8")
    r = cli_run([mode, "--exit-non-zero-on-fix", "--no-cache", "t.py"], tmp_path)
    assert r.returncode == 1 and p.read_text(encoding="utf-8") == FIXED  # fixed, nothing left, still 1
    assert "Fixed 2 findings in 1 file." in r.stderr
    r = cli_run([mode, "--exit-non-zero-on-fix", "--no-cache", "t.py"], tmp_path)
    assert r.returncode == 0  # nothing fixed this time
    p.write_text(BOTH, encoding="utf-8")
    assert cli_run([mode, "--exit-non-zero-on-fix", "--exit-zero", "--no-cache", "t.py"], tmp_path).returncode == 0
    p.write_text(BOTH, encoding="utf-8")
    assert cli_run([mode, "--no-cache", "t.py"], tmp_path).returncode == 0  # without it: ruff's default
