"""The ruff conventions a user reaches for, through the real CLI (``cli_run``): fix safety
(``--unsafe-fixes``, ``fixable``/``unfixable``, ``extend-safe-fixes``/``extend-unsafe-fixes``),
what is fixable in the output, ``--exit-non-zero-on-fix``, ``extend``, ``--show-settings``,
``--show-files``, ``--output-file``, ``--color``, the ``json-lines``/``junit``/``gitlab``
formats, ``--list-rules --format json``, ``--explain NAME``, ``--add-noqa`` and severities in
the text output."""

from __future__ import annotations

import json
import os

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


# -- 4. conventions ---------------------------------------------------------------------------------

def test_extend_reads_the_extended_file_first_then_this_one(cli_run, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.npulint]\nignore = ["NPU208"]\nextend-exclude = ["gen/"]\nproduct = "atlas-a3"\n', encoding="utf-8")
    sub = tmp_path / "sub"
    (sub / "gen").mkdir(parents=True)
    (sub / "npulint.toml").write_text('extend = "../pyproject.toml"\nproduct = "atlas-a2"\nextend-exclude = ["old/"]\n',
                                      encoding="utf-8")
    (sub / "t.py").write_text(BOTH, encoding="utf-8")
    (sub / "gen" / "g.py").write_text(BOTH, encoding="utf-8")
    r = cli_run(["--no-cache", "."], sub)
    assert [ln.split(" ")[1] for ln in r.stdout.splitlines()] == ["NPU202"]  # NPU208 ignored, gen/ excluded
    r = cli_run(["--show-settings", "t.py"], sub)
    assert r.returncode == 0
    out = r.stdout.splitlines()
    assert f"Settings path: {sub / 'npulint.toml'}" in out and f"Extends: {tmp_path / 'pyproject.toml'}" in out
    assert 'product = "atlas-a2"' in out and 'ignore = ["NPU208"]' in out
    assert 'extend-exclude = ["gen/", "old/"]' in out


def test_extend_select_in_the_extending_file_starts_afresh_after_select(cli_run, tmp_path):
    (tmp_path / "base.toml").write_text('ignore = ["NPU208"]\n', encoding="utf-8")
    (tmp_path / "npulint.toml").write_text('extend = "base.toml"\nselect = ["NPU2"]\n', encoding="utf-8")
    (tmp_path / "t.py").write_text(BOTH, encoding="utf-8")
    r = cli_run(["--no-cache", "t.py"], tmp_path)  # select resets the chain (ruff): NPU208 is back
    assert [ln.split(" ")[1] for ln in r.stdout.splitlines()] == ["NPU202", "NPU208"]


@pytest.mark.parametrize("files, message", [
    ({"npulint.toml": 'extend = "b.toml"\n', "b.toml": 'extend = "npulint.toml"\n'}, "'extend' makes a cycle"),
    ({"npulint.toml": 'extend = "npulint.toml"\n'}, "'extend' makes a cycle"),
    ({"npulint.toml": 'extend = "missing.toml"\n'}, "'extend': no configuration file"),
    ({"npulint.toml": 'extend = 3\n'}, "'extend' must be the path of a configuration file"),
    ({"npulint.toml": 'extend = "b.toml"\n', "b.toml": 'selct = []\n'}, "unknown key 'selct'"),
])
def test_extend_errors_are_one_line(cli_run, tmp_path, files, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "t.py").write_text("x = 1\n", encoding="utf-8")
    r = cli_run(["--no-cache", "t.py"], tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr


def test_show_files_lists_what_a_run_would_lint(cli_run, tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "run.sh").write_text("echo\n", encoding="utf-8")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "b.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("x\n", encoding="utf-8")
    r = cli_run(["--show-files", "."], tmp_path)
    assert r.returncode == 0 and r.stdout.splitlines() == [str(tmp_path / "a.py"), str(tmp_path / "run.sh")]
    assert not (tmp_path / ".npulint_cache").exists()


def test_show_settings_without_configuration(cli_run, tmp_path):
    r = cli_run(["--show-settings"], tmp_path)
    assert r.returncode == 0
    assert "Settings path: (none: the defaults)" in r.stdout
    assert 'unsafe-fix-rules = ["NPU503"]' in r.stdout and "select = null" in r.stdout


def test_output_file_holds_the_report_and_the_summary_stays_on_stderr(cli_run, tmp_path):
    import json

    (tmp_path / "t.py").write_text(BOTH, encoding="utf-8")
    r = cli_run(["--no-cache", "--format", "json", "--output-file", "reports/out.json", "t.py"], tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert [i["code"] for i in json.loads((tmp_path / "reports" / "out.json").read_text(encoding="utf-8"))] == \
        ["NPU202", "NPU208"]
    r = cli_run(["--no-cache", "-o", "out.txt", "t.py"], tmp_path)
    assert r.stdout == "" and "Found 2 findings" in r.stderr
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").count("\n") == 2
    (tmp_path / "adir").mkdir()
    r = cli_run(["--no-cache", "-o", "adir", "t.py"], tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("npulint: error: ") and "adir" in r.stderr
    assert r.stderr.count("\n") == 1
    (tmp_path / "ro").write_text("", encoding="utf-8")
    r = cli_run(["--no-cache", "-o", "ro/x.txt", "t.py"], tmp_path)  # its folder is a file
    assert r.returncode == 2 and r.stderr.startswith("npulint: error: cannot write the output file ro/x.txt")
    assert r.stderr.count("\n") == 1


def test_color_always_never_auto(cli_run, tmp_path):
    (tmp_path / "t.py").write_text(BOTH, encoding="utf-8")
    assert "\x1b[" in cli_run(["--no-cache", "--color", "always", "t.py"], tmp_path).stdout
    assert "\x1b[" in cli_run(["--no-cache", "--color", "always", "--format", "full", "t.py"], tmp_path).stdout
    assert "\x1b[" not in cli_run(["--no-cache", "t.py"], tmp_path).stdout  # auto, not a terminal
    # (cli_run's env stays set for the rest of the test)
    assert "\x1b[" in cli_run(["--no-cache", "t.py"], tmp_path, env={"FORCE_COLOR": "1"}).stdout  # kept
    assert "\x1b[" not in cli_run(["--no-cache", "--color", "never", "t.py"], tmp_path).stdout
    assert "\x1b[" not in cli_run(["--no-cache", "t.py"], tmp_path, env={"NO_COLOR": "1"}).stdout
    r = cli_run(["--no-cache", "--color", "sometimes", "t.py"], tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("npulint: error:")


def test_json_lines_is_one_json_object_a_line(cli_run, tmp_path):
    import json

    _both_and_amo(tmp_path)
    whole = json.loads(cli_run(["--no-cache", "--format", "json", "."], tmp_path).stdout)
    r = cli_run(["--no-cache", "--format", "json-lines", "."], tmp_path)
    assert [json.loads(line) for line in r.stdout.splitlines()] == whole
    assert r.stderr == ""  # machine-readable: no summary


# The element/attribute structure of the common JUnit schema (Jenkins' junit-10.xsd), plus the
# line and column attributes ruff's JUnit output puts on a testcase.
JUNIT = {
    "testsuites": ({"name", "time", "tests", "failures", "disabled", "errors"}, set()),
    "testsuite": ({"name", "tests", "failures", "errors", "group", "time", "disabled", "skipped", "timestamp",
                   "hostname", "id", "package", "file", "log", "url", "version"}, {"name", "tests"}),
    "testcase": ({"name", "assertions", "time", "classname", "status", "line", "column"}, {"name", "classname"}),
    "failure": ({"message", "type"}, set()),
}


def _check_junit(xml_text):
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml_text.encode("utf-8"))
    assert root.tag == "testsuites"
    total = 0
    for el in root.iter():
        allowed, required = JUNIT[el.tag]
        assert set(el.attrib) <= allowed and required <= set(el.attrib), (el.tag, el.attrib)
    for suite in root:
        assert suite.tag == "testsuite"
        cases = list(suite)
        assert all(c.tag == "testcase" for c in cases) and int(suite.get("tests")) == len(cases)
        failures = [f for c in cases for f in c]
        assert all(f.tag == "failure" for f in failures) and int(suite.get("failures")) == len(failures)
        total += len(failures)
    assert int(root.get("failures")) == total
    return root


def test_junit_is_valid_junit_xml(cli_run, tmp_path):
    _both_and_amo(tmp_path)
    r = cli_run(["--no-cache", "--format", "junit", "."], tmp_path)
    assert r.returncode == 1 and r.stderr == ""
    root = _check_junit(r.stdout)
    assert [s.get("name") for s in root] == ["model.py", "t.py"]
    case = root[1][0]
    assert (case.get("name"), case.get("classname"), case.get("line"), case.get("column")) == \
        ("org.npulint.NPU202", "t.py", "8", "1")
    assert case[0].text.startswith("line 8, col 1, NPU202 ")
    (tmp_path / "t.py").write_text("x = 1\n", encoding="utf-8")
    r = cli_run(["--no-cache", "--format", "junit", "t.py"], tmp_path)
    assert r.returncode == 0
    root = _check_junit(r.stdout)
    assert root.get("failures") == "0" and root[0][0].get("name") == "No errors found"


# GitLab Code Quality: the fields GitLab documents (a subset of CodeClimate's issue format),
# https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "pattern": "^[^/]"},  # relative to the project
                    "lines": {"type": "object", "required": ["begin"],
                              "properties": {"begin": {"type": "integer", "minimum": 1},
                                             "end": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}


def test_gitlab_is_code_quality_json(cli_run, tmp_path):
    import json

    import jsonschema

    _both_and_amo(tmp_path)
    (tmp_path / "u.py").write_text("import torchair as tng\n" + "with tng.scope.npu_stream_switch('1', 2):\n"
                                   "    pass\n" * 1 + "with tng.scope.npu_stream_switch('1', 2):\n    pass\n",
                                   encoding="utf-8")
    r = cli_run(["--no-cache", "--format", "gitlab", "."], tmp_path)
    items = json.loads(r.stdout)
    jsonschema.validate(items, GITLAB_SCHEMA)
    assert len({i["fingerprint"] for i in items}) == len(items)  # unique, also for two alike findings
    by_code = {i["check_name"]: i for i in items}
    assert by_code["NPU202"]["severity"] == "minor" and by_code["NPU202"]["location"] == \
        {"path": "t.py", "lines": {"begin": 8, "end": 8}}
    again = json.loads(cli_run(["--no-cache", "--format", "gitlab", "."], tmp_path).stdout)
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in items]  # stable
    r = cli_run(["--no-cache", "--format", "gitlab", "."], tmp_path, env={"CI_PROJECT_DIR": str(tmp_path.parent)})
    assert {i["location"]["path"] for i in json.loads(r.stdout)} == {f"{tmp_path.name}/{n}"
                                                                      for n in ("model.py", "t.py", "u.py")}


def test_list_rules_as_json_and_as_markdown(cli_run, tmp_path):
    import json

    from npulint import registry

    rules = registry.load()[0]
    r = cli_run(["--list-rules", "--format", "json"], tmp_path)
    items = json.loads(r.stdout)
    assert [i["code"] for i in items] == [x.code for x in rules]
    by_code = {i["code"]: i for i in items}
    assert by_code["NPU503"]["fix"] == "unsafe" and by_code["NPU003"]["fix"] == "safe"
    assert by_code["NPU101"]["fix"] is None and by_code["NPU003"]["default"] is False
    assert by_code["NPU001"]["name"] == "syntax-error" and by_code["NPU001"]["url"] is None
    r = cli_run(["--list-rules"], tmp_path)
    assert r.stdout.startswith("| code | name | severity | default | summary |")


@pytest.mark.parametrize("what", ["syntax-error", "NPU001", "npu001", "Syntax-Error"])
def test_explain_by_code_or_name(cli_run, tmp_path, what):
    r = cli_run(["--explain", what], tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("# NPU001 syntax-error\n")


def test_explain_an_unknown_name(cli_run, tmp_path):
    r = cli_run(["--explain", "syntax_eror"], tmp_path)
    assert r.returncode == 2
    assert r.stderr == "npulint: error: unknown rule code or name 'syntax_eror' (did you mean 'syntax-error'?) " \
                       "(see --list-rules)\n"


# -- 5. --add-noqa -------------------------------------------------------------------------------------

PREFETCH = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
NOQA_PY = (PREFETCH
           + "with npu_weight_prefetch_scope():\n    pass\n"
           + "with npu_weight_prefetch_scope(0, 1024):  # noqa: E501\n    pass\n"   # NPU101: merged
           + "with npu_weight_prefetch_scope(-1):\n    pass\n"                      # NPU103: appended
           + "with npu_weight_prefetch_scope(-1), \\\n        npu_weight_prefetch_scope(-2):\n    pass\n"
           + 'with npu_weight_prefetch_scope("""a\nb"""):\n    pass\n')             # in a string: nothing
NOQA_SH = ("#!/bin/bash\nif true; then\n    torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
           "        --adaptive-memory-optimization \\\n        --recompute-granularity full\nfi\n")
RELEASES = '[tool.npulint.releases]\nmindspeed = "2.1.0_core_r0.8.0"\n'


def test_add_noqa_python_and_shell(cli_run, tmp_path):
    (tmp_path / "pyproject.toml").write_text(RELEASES, encoding="utf-8")
    (tmp_path / "t.py").write_text(NOQA_PY, encoding="utf-8")
    (tmp_path / "run.sh").write_text(NOQA_SH, encoding="utf-8")
    before = cli_run(["--no-cache", "."], tmp_path)
    assert [ln.split(" ")[1] for ln in before.stdout.splitlines()] == \
        ["NPU501", "NPU101", "NPU103", "NPU103", "NPU103", "NPU103"]
    r = cli_run(["--no-cache", "--add-noqa", "."], tmp_path)
    assert r.returncode == 0 and r.stdout == ""
    assert r.stderr == "Added 4 noqa directives.\n"
    lines = (tmp_path / "t.py").read_text(encoding="utf-8").splitlines()
    assert lines[3] == "with npu_weight_prefetch_scope(0, 1024):  # noqa: E501, NPU101"
    assert lines[5] == "with npu_weight_prefetch_scope(-1):  # noqa: NPU103"
    assert lines[7] == "with npu_weight_prefetch_scope(-1), \\"  # a continued line gets nothing
    assert lines[8] == "        npu_weight_prefetch_scope(-2):  # noqa: NPU103"  # -2's own line
    assert lines[10:12] == ['with npu_weight_prefetch_scope("""a', 'b"""):']  # inside a string: nothing
    compile("\n".join(lines), "t.py", "exec")
    sh = (tmp_path / "run.sh").read_text(encoding="utf-8").splitlines()
    assert sh[2:4] == ["    # noqa: NPU501", "    torchrun --nproc_per_node 8 pretrain_gpt.py \\"]
    after = cli_run(["--no-cache", "."], tmp_path)
    # left: the finding on the continued line and the one on the string's line
    assert [(ln.split(":")[1], ln.split(" ")[1]) for ln in after.stdout.splitlines()] == \
        [("8", "NPU103"), ("11", "NPU103")]
    r = cli_run(["--no-cache", "--add-noqa", "."], tmp_path)  # nothing more to add
    assert r.returncode == 0 and r.stderr == "Added 0 noqa directives.\n"
    assert cli_run(["--no-cache", "-q", "--add-noqa", "."], tmp_path).stderr == ""


def test_add_noqa_merges_codes_of_one_line_and_keeps_crlf(cli_run, tmp_path):
    from test_fixes import HEAD

    text = HEAD + "import torchair as tng\nwith tng.scope.npu_stream_switch(1, 2):\n    pass\n"
    (tmp_path / "t.py").write_bytes(text.replace("\n", "\r\n").encode())
    codes = sorted(ln.split(" ")[1] for ln in cli_run(["--no-cache", "t.py"], tmp_path).stdout.splitlines())
    assert codes == ["NPU304", "NPU307"]  # both on one line
    r = cli_run(["--no-cache", "--add-noqa", "t.py"], tmp_path)
    assert r.returncode == 0 and r.stderr == "Added 1 noqa directive.\n"
    assert b"with tng.scope.npu_stream_switch(1, 2):  # noqa: NPU304, NPU307\r\n" in (tmp_path / "t.py").read_bytes()
    assert cli_run(["--no-cache", "t.py"], tmp_path).returncode == 0


@pytest.mark.parametrize("args", [["--add-noqa", "--fix", "."], ["--add-noqa", "-"],
                                  ["--add-noqa", "--stdin-filename", "t.py"]])
def test_add_noqa_bad_combinations_are_one_line_errors(cli_run, tmp_path, args):
    r = cli_run(["--no-cache", *args], tmp_path, stdin="x = 1\n")
    assert r.returncode == 2 and r.stderr.startswith("npulint: error: --add-noqa") and r.stderr.count("\n") == 1


# -- 6. severities in the text output ---------------------------------------------------------------

def test_text_shows_each_findings_severity_and_github_sarif_agree(cli_run, tmp_path):
    import json

    from conftest import TWO_CODES

    warning = "import torchair as tng\nwith tng.scope.npu_stream_switch('1', 2):\n    pass\n"  # NPU304
    (tmp_path / "e.py").write_text(TWO_CODES, encoding="utf-8")
    (tmp_path / "w.py").write_text(warning, encoding="utf-8")
    (tmp_path / "i.py").write_text("x = 1  # noqa: NPU101\n", encoding="utf-8")  # NPU003, info
    args = ["--no-cache", "--extend-select", "NPU003", "e.py", "i.py", "w.py"]
    lines = cli_run(args, tmp_path).stdout.splitlines()
    assert [ln.split(" ")[1:3] for ln in lines] == [["NPU101", "[error]"], ["NPU103", "[error]"],
                                                    ["NPU003", "[info]"], ["NPU304", "[warning]"]]
    assert lines[2].startswith("i.py:1:8: NPU003 [info] [*] unused `noqa` directive")
    github = cli_run([*args, "--format", "github"], tmp_path).stdout.splitlines()
    assert [g.split(" ")[0] for g in github] == ["::error", "::error", "::notice", "::warning"]
    sarif = json.loads(cli_run([*args, "--format", "sarif"], tmp_path).stdout)
    assert [r["level"] for r in sarif["runs"][0]["results"]] == ["error", "error", "note", "warning"]
    full = cli_run([*args, "--format", "full"], tmp_path).stdout
    assert "w.py:2:39: NPU304 [warning] stream_priority=2" in full


# -- 7. the version, its changelog entry and the README's snippets -----------------------------------

def test_changelog_and_readme_name_the_current_version():
    import re
    import sys

    from conftest import REPO
    from npulint import __version__

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == __version__
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog.startswith("# Changelog\n") and "## [Unreleased]" in changelog
    assert re.search(rf"^## \[{re.escape(__version__)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"^\s*rev: (\S+)$", readme, re.M) == [f"v{__version__}"]  # the pre-commit snippet
    assert f'git+<url of the npulint repository>@v{__version__}"' in readme  # the CI snippet


def test_an_extended_files_patterns_are_relative_to_its_own_folder(cli_run, tmp_path):
    """As in ruff: `sub/gen/` in the parent's configuration is `gen/` for sub's; an anchored
    pattern of the parent that points outside sub matches nothing there; unanchored ones match
    at any depth."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.npulint]\nextend-exclude = ["sub/gen/", "other/x.py", "vendored/"]\n'
        '[tool.npulint.per-file-ignores]\n"sub/keep/*.py" = ["NPU202"]\n', encoding="utf-8")
    sub = tmp_path / "sub"
    for folder in ("gen", "keep", "vendored", "other", "other/gen"):
        (sub / folder).mkdir(parents=True)
        (sub / folder / "x.py").write_text(BOTH, encoding="utf-8")
    (sub / "npulint.toml").write_text('extend = "../pyproject.toml"\nignore = ["NPU208"]\n', encoding="utf-8")
    r = cli_run(["--no-cache", "."], sub)
    found = sorted((ln.split(":")[0], ln.split(" ")[1]) for ln in r.stdout.splitlines())
    # gen/ excluded (anchored: sub/gen/ only, not other/gen/), vendored/ excluded (unanchored),
    # keep/: NPU202 ignored; other/x.py is not the parent's other/x.py (that one is outside sub):
    # still linted
    assert found == [("other/gen/x.py", "NPU202"), ("other/x.py", "NPU202")]
    r = cli_run(["--show-settings", "x.py"], sub / "other")
    # the anchored pattern twice: as a gitignore line of sub's, and as the absolute path ruff's
    # reading takes it for (relative to the parent's folder, where it was written)
    gen = os.path.join(str(tmp_path), "sub/gen/")
    assert f'extend-exclude = ["/gen/", "{gen}", "vendored/"]' in r.stdout.splitlines()


def test_a_brace_pattern_of_another_folder_is_rebased_one_alternative_at_a_time(cli_run, tmp_path):
    # the review's repro: a nested configuration rebases the command line's pattern to its folder
    for name in ("pkg/a1.py", "pkg/gen.py", "pkg/ab/c.py", "pkg/sub/a2.py", "other/gen.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.npulint]\n", encoding="utf-8")
    (tmp_path / "pkg" / "pyproject.toml").write_text("[tool.npulint]\n", encoding="utf-8")

    def listed(*args):
        out = cli_run(["--show-files", *args], tmp_path).stdout.splitlines()
        return sorted(os.path.relpath(p, str(tmp_path)) for p in out)

    # pkg/ab/c.py is not pkg/c.py; pkg/gen.py is one of the alternatives, other/gen.py the other
    assert listed("--extend-exclude", "pkg/{c.py,sub/a2.py}", "pkg") == ["pkg/a1.py", "pkg/ab/c.py", "pkg/gen.py"]
    assert listed("--extend-exclude", "{pkg/gen.py,other/gen.py}", "pkg", "other") == [
        "pkg/a1.py", "pkg/ab/c.py", "pkg/sub/a2.py"]
    # the same pattern, the same files, whichever folder is named (ruff's `*` crosses `/`)
    in_pkg = listed("--extend-exclude", "pkg/a*.py", "pkg")
    assert in_pkg == ["pkg/gen.py", "pkg/sub/a2.py"]
    assert listed("--extend-exclude", "pkg/a*.py", ".") == sorted(in_pkg + ["other/gen.py"])


@pytest.mark.parametrize("args, fixed", [
    (["--unfixable", "NPU208"], BOTH),
    (["--fixable", "NPU208"], BOTH.replace('opt = torch.compile(model, backend=backend, mode="reduce-overhead")',
                                           "opt = torch.compile(model, backend=backend)")),
    (["--fixable", "NPU1", "--extend-fixable", "NPU202"],
     BOTH.replace("config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False\n", "")),
])
def test_fixable_unfixable_extend_fixable_on_the_command_line(cli_run, tmp_path, args, fixed):
    """ruff's options, over the configuration: --fixable replaces, the others add (and the most
    specific selector wins over the configuration's `unfixable = ["NPU2"]`)."""
    (tmp_path / "pyproject.toml").write_text('[tool.npulint]\nunfixable = ["NPU2"]\n', encoding="utf-8")
    (tmp_path / "t.py").write_text(BOTH, encoding="utf-8")
    cli_run(["--fix", "--no-cache", "t.py", *args], tmp_path)
    assert (tmp_path / "t.py").read_text(encoding="utf-8") == fixed


def test_a_bad_fixable_code_on_the_command_line_is_one_line_exit_2(cli_run, tmp_path):
    (tmp_path / "t.py").write_text("x = 1\n", encoding="utf-8")
    r = cli_run(["--fixable", "NPU9Z", "t.py"], tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--fixable" in r.stderr


def test_statistics_as_json(cli_run, tmp_path):
    (tmp_path / "t.py").write_text(BOTH, encoding="utf-8")
    r = cli_run(["--statistics", "--format", "json", "--no-cache", "t.py"], tmp_path)
    rows = json.loads(r.stdout)
    assert [(row["code"], row["count"], row["fixable"], row["fixable_count"]) for row in rows] == [
        ("NPU202", 1, True, 1), ("NPU208", 1, True, 1)]
    assert rows[0]["name"] == "custom-pool-overrides-fx-reuse"


def test_an_extended_pattern_naming_the_extending_folder_covers_all_of_it(cli_run, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.npulint.per-file-ignores]\n"legacy/" = ["NPU2"]\n', encoding="utf-8")
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "a.py").write_text(BOTH, encoding="utf-8")
    (legacy / "pyproject.toml").write_text('[tool.npulint]\nextend = "../pyproject.toml"\n', encoding="utf-8")
    assert cli_run(["--no-cache", "."], legacy).stdout == ""
    assert cli_run(["--no-cache", "."], tmp_path).stdout == ""
